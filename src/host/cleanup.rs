//! What the doctor leaves behind, removed however it ends: the scratch
//! directories and temporary files, noted here as they are made, and the
//! flag that says a signal (Unix) or a console event (Windows) is ending
//! the run. How children are ended is each platform's own (`unix.rs`,
//! `windows.rs`); both come here to remove what was made.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set as soon as a signal ends the run, before its children are killed:
/// a report written after that could only describe killed probes.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a signal is ending this run.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks the run as ending: nothing new is made or written from now on.
pub(super) fn set_interrupted() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes a scratch directory or temporary file at `path` with `make`, and
/// notes it for removal, under the lock the signal thread takes to remove
/// them: once a signal is ending the run nothing new is made, and what was
/// made is always found.
pub(super) fn make_scratch<T>(path: &Path, make: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut paths = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    if interrupted() {
        return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "the run was interrupted"));
    }
    let made = make()?;
    paths.push(path.to_path_buf());
    Ok(made)
}

/// Removes a scratch directory and what the children wrote into it, or a
/// temporary file.
pub(super) fn remove_scratch(dir: &Path) {
    let mut dirs = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    if dirs.iter().any(|d| d == dir) {
        remove(dir);
        dirs.retain(|d| d != dir);
    }
}

/// Removes every scratch directory and temporary file: the run is ending.
pub(super) fn remove_all_scratch() {
    for path in SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
        remove(&path);
    }
}

fn remove(path: &Path) {
    if std::fs::remove_dir_all(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}
