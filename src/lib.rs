//! onnx-doctor: probes a machine's PyTorch → ONNX → ONNX Runtime / TensorRT
//! stack, judges it against a sourced compatibility matrix, and says what is
//! wrong, why, and the commands that fix it.
//!
//! The pipeline is one direction only:
//!
//! ```text
//! Host ─▶ probe ─▶ Snapshot ─▶ check(Snapshot, Matrix) ─▶ Report ─▶ text | json | markdown
//! ```
//!
//! Probes gather facts and never judge ([`probe`]); rules judge and never
//! probe ([`check`]); knowledge is data ([`matrix`]); every external call
//! goes through [`host`], bounded in time.

pub mod app;
pub mod check;
pub mod cli;
pub mod escape;
pub mod exit;
pub mod fleet;
pub mod formats;
pub mod host;
pub mod import;
pub mod matrix;
pub mod model;
pub mod probe;
pub mod report;
pub mod snapshot;
pub mod version;
