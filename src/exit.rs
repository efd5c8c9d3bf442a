//! The exit codes containers and CI read: the one place they are defined.

/// Nothing at or above the fail level.
pub const OK: u8 = 0;
/// Findings at or above the fail level (`--fail-on`).
pub(crate) const FINDINGS: u8 = 1;
/// A usage error: a bad flag or argument, or output that cannot be written.
pub const USAGE: u8 = 2;
/// Nothing could be evaluated: an invalid matrix, an unreadable snapshot or
/// input, or nothing that could be probed.
pub(crate) const NOT_EVALUATED: u8 = 3;
