//! Reading files, bounded: the one place the doctor opens a file to read it.
//!
//! The doctor reads what it finds on strange machines and what strangers
//! hand it, so a "file" may be a FIFO that blocks forever, `/dev/zero`, a
//! 50 GB log or a directory named `model.onnx`. Every read goes through
//! [`open_regular`], which refuses anything that is not a regular file
//! before reading a byte (a FIFO is opened non-blocking, so even opening it
//! cannot hang), and [`read_text`] / [`read_bytes`], which stop at a cap that
//! depends on what kind of file it is.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// What is being read, which decides how much of it the doctor will read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `/etc/os-release`, `/proc/...`, version headers, `pyvenv.cfg`.
    System,
    /// A distribution's METADATA, PKG-INFO or requires.txt.
    Metadata,
    /// `/etc/ld.so.cache`.
    LoaderCache,
    /// A matrix overlay file.
    Matrix,
    /// A saved snapshot or JSON report (`--snapshot`, `fleet`).
    Report,
    /// A shared library searched whole (libc.so.6 for its version banner).
    Library,
    /// Text pasted into `diagnose`.
    Paste,
}

impl FileKind {
    /// The most bytes read of this kind of file.
    pub(crate) fn cap(self) -> u64 {
        const MIB: u64 = 1024 * 1024;
        match self {
            Self::System => 4 * MIB,
            Self::Metadata => 4 * MIB,
            Self::LoaderCache => 64 * MIB,
            Self::Matrix => 16 * MIB,
            Self::Report => 256 * MIB,
            Self::Library => 32 * MIB,
            Self::Paste => 512 * MIB,
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A FIFO, device, socket or directory where a file was expected.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Larger than the doctor reads of this kind of file.
    #[error("it is larger than {} MiB, the most read of such a file", .0 / (1024 * 1024))]
    TooLarge(u64),
}

/// Opens `path` for reading if it is a regular file (after following
/// links). Opening never blocks: a FIFO is opened non-blocking and refused.
#[allow(clippy::disallowed_methods)] // the one place files are opened for reading
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    match not_regular(file.metadata()?.file_type()) {
        None => Ok(file),
        Some(what) => Err(ReadError::NotRegular(what)),
    }
}

/// What a file type is, in words, when it is not a regular file.
#[cfg(unix)]
pub(super) fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if kind.is_file() {
        return None;
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    })
}

/// What a file type is, in words, when it is not a regular file (Windows
/// tells only files, directories and links apart).
#[cfg(windows)]
pub(super) fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    Some(if kind.is_file() {
        return None;
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    })
}

/// Fills as much of `buf` as `file` has from `offset` on, without moving
/// any cursor another reader depends on.
pub fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    use std::os::unix::fs::FileExt;
    #[cfg(windows)]
    use std::os::windows::fs::FileExt;
    let mut filled = 0;
    while filled < buf.len() {
        let at = offset + filled as u64;
        #[cfg(unix)]
        let read = file.read_at(&mut buf[filled..], at);
        #[cfg(windows)]
        let read = file.seek_read(&mut buf[filled..], at);
        match read {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The whole of a regular file, refused when it is larger than its kind's cap.
pub fn read_bytes(path: &Path, kind: FileKind) -> Result<Vec<u8>, ReadError> {
    read_capped(open_regular(path)?, kind.cap())
}

/// A regular file as text (invalid UTF-8 replaced), refused when it is
/// larger than its kind's cap.
pub fn read_text(path: &Path, kind: FileKind) -> Result<String, ReadError> {
    Ok(String::from_utf8_lossy(&read_bytes(path, kind)?).into_owned())
}

/// Reads `r` to its end, or fails once more than `cap` bytes came.
pub fn read_capped(r: impl Read, cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    r.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(ReadError::TooLarge(cap));
    }
    Ok(buf)
}

/// Whether `a` and `b` name the same existing file (through links,
/// `./` or another spelling): `--output` must never be the file read.
#[cfg(unix)]
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (super::tree::metadata(a), super::tree::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Whether `a` and `b` name the same existing file: on Windows, the same
/// path once both are resolved (links, `.\`, case as the volume keeps it).
#[cfg(windows)]
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (super::tree::canonicalize(a), super::tree::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(
            matches!(read_text(&fifo, FileKind::System), Err(ReadError::NotRegular(w)) if w.contains("FIFO"))
        );
    }

    #[test]
    fn devices_and_directories_are_refused_and_big_files_stop_at_the_cap() {
        assert!(matches!(read_bytes(Path::new("/dev/zero"), FileKind::Paste), Err(ReadError::NotRegular(_))));
        assert!(matches!(read_bytes(Path::new("/"), FileKind::System), Err(ReadError::NotRegular(_))));
        assert!(matches!(read_capped(io::repeat(b'x'), 10), Err(ReadError::TooLarge(10))));
        assert_eq!(read_capped(&b"0123456789"[..], 10).unwrap().len(), 10);
    }

    #[test]
    fn proc_files_are_regular_and_readable() {
        assert!(read_text(Path::new("/proc/self/status"), FileKind::System).unwrap().contains("Name:"));
    }
}
