//! Looking at the file tree: listing a directory and asking what a path
//! is, in the one layer that touches the machine.
//!
//! A directory the doctor lists may be a `site-packages` of a hundred
//! thousand entries or `/dev` in a container; a listing stops at
//! [`DIR_ENTRIES_CAP`] entries, so neither memory nor time grows with
//! what a stranger's machine holds.

#![allow(clippy::disallowed_methods)]

use std::fs::{self, Metadata, ReadDir};
use std::io;
use std::iter::Take;
use std::path::{Path, PathBuf};

/// The most entries read of one directory.
pub const DIR_ENTRIES_CAP: usize = 100_000;

/// The entries of a directory, at most [`DIR_ENTRIES_CAP`] of them, in the
/// order the file system gives them.
pub fn read_dir(dir: impl AsRef<Path>) -> io::Result<Take<ReadDir>> {
    fs::read_dir(dir).map(|entries| entries.take(DIR_ENTRIES_CAP))
}

/// What a path is, through links.
pub fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    fs::metadata(path)
}

/// What a path is, the link itself when it is one.
pub fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    fs::symlink_metadata(path)
}

/// The path with every link and `..` resolved.
pub fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    fs::canonicalize(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_stops_at_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "").unwrap();
        assert_eq!(read_dir(dir.path()).unwrap().count(), 1);
        assert!(read_dir(dir.path().join("missing")).is_err());
        assert_eq!(read_dir(dir.path()).unwrap().size_hint().1, Some(DIR_ENTRIES_CAP));
    }
}
