//! Writing reports: the one place the doctor writes a file.
//!
//! `--output`, `--json` and GitHub's job summary name paths a user, a CI
//! system or an attacker chose. [`write_whole`] and [`append_regular`] refuse
//! what is not a regular file before opening it (a FIFO would block forever),
//! and a report appears whole or not at all: a full disk or a signal
//! part-way leaves the file as it was, and a run that was interrupted writes
//! nothing.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::cleanup;
use super::files::{not_regular, same_file};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A FIFO, device, socket or directory: writing could block forever or
    /// feed something that is not a file.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// The run was interrupted: what it would write is incomplete.
    #[error("the run was interrupted; nothing was written")]
    Interrupted,
}

/// What kind of thing a path names, when it is not a regular file
/// (following links; `None` for a regular file or nothing at all).
fn special_kind(path: &Path) -> Option<&'static str> {
    not_regular(super::tree::metadata(path).ok()?.file_type())
}

/// Whether `path` is the null device: `-o /dev/null` (`-o NUL` on
/// Windows) keeps only the exit code.
fn is_null_device(path: &Path) -> bool {
    if cfg!(windows) {
        return path
            .to_str()
            .is_some_and(|p| p.eq_ignore_ascii_case("NUL") || p.eq_ignore_ascii_case(r"\\.\NUL"));
    }
    same_file(path, Path::new("/dev/null"))
}

/// Writes `bytes` to `path` whole or not at all: into a new file beside it,
/// then renamed over it, so a full disk or a kill part-way leaves the old
/// file (or none), never half a report. A link is written through to what
/// it names. Refuses FIFOs, devices (but `/dev/null`), sockets and
/// directories without opening them, and writes nothing once the run was
/// interrupted.
#[allow(clippy::disallowed_methods)] // the one place reports are written
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    if is_null_device(path) {
        return Ok(());
    }
    if let Some(kind) = special_kind(path) {
        return Err(WriteError::NotRegular(kind));
    }
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().map_or_else(|| "report".into(), |n| n.to_string_lossy().into_owned());
    let (temp, mut file) = new_temp_beside(&dir, &name)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_data());
    drop(file);
    let result = match written {
        Err(e) => Err(WriteError::Io(e)),
        Ok(()) if cleanup::interrupted() => Err(WriteError::Interrupted),
        Ok(()) => {
            // The new file gets the old one's permissions, as an editor's save would.
            if let Ok(meta) = super::tree::metadata(&target) {
                let _ = std::fs::set_permissions(&temp, meta.permissions());
            }
            std::fs::rename(&temp, &target).map_err(WriteError::Io)
        }
    };
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    cleanup::remove_scratch(&temp);
    result
}

/// A new, empty file in `dir` named after `name`, made exclusively.
#[allow(clippy::disallowed_methods)] // part of write_whole
fn new_temp_beside(dir: &Path, name: &str) -> Result<(PathBuf, File), WriteError> {
    let mut last = None;
    for attempt in 0..16u32 {
        let temp = dir.join(format!(".{name}.onnx-doctor-{}-{attempt}.tmp", std::process::id()));
        let open = || {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
            options.open(&temp)
        };
        match cleanup::make_scratch(&temp, open) {
            Ok(f) => return Ok((temp, f)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(WriteError::Interrupted),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file could be made")).into())
}

/// Appends `bytes` to `path` (made if missing): for files other programs
/// read as they grow, such as GitHub's job summary. Opening never blocks
/// and anything but a regular file is refused.
#[allow(clippy::disallowed_methods)] // the one place files are appended to
pub fn append_regular(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    if cleanup::interrupted() {
        return Err(WriteError::Interrupted);
    }
    if let Some(kind) = special_kind(path) {
        return Err(WriteError::NotRegular(kind));
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK).mode(0o644);
    }
    let mut file = options.open(path)?;
    // It may have become something else between the look and the open.
    if let Some(what) = not_regular(file.metadata()?.file_type()) {
        return Err(WriteError::NotRegular(what));
    }
    file.write_all(bytes)?;
    Ok(())
}
