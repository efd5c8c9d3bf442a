//! Text formats that both the machine probes and the paste importer read:
//! a library's file name, the kernel module's version line. Each parser
//! lives here once, so a ticket that quotes `libcudnn.so.8.9.2` or an
//! `NVRM version:` line is read exactly as the probe reads the machine.

use crate::snapshot::Library;
use crate::version::Ver;

/// What a library's file name says: which library, its soname major, and
/// the full version when the name carries more than a major.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LibraryFile {
    pub library: Library,
    pub major: Option<u64>,
    pub version: Option<Ver>,
}

/// `libcudnn.so.9.1.0` → cudnn, 9, 9.1.0; `libcudart.so.12` → cudart, 12;
/// `libcudnn_ops.so.9` and `libcudart.so.12.debug` are not ours. Windows'
/// names too: `cudart64_12.dll` → cudart, 12; `nvrtc64_120_0.dll` → nvrtc,
/// 12; `cudnn_ops64_9.dll` is not ours.
pub(crate) fn library_file(file: &str) -> Option<LibraryFile> {
    if let Some(stem) = file.strip_suffix(".dll").or_else(|| file.strip_suffix(".DLL")) {
        return dll_file(stem);
    }
    // The longest stem first: libcublasLt.so is not a libcublas.so.
    let library =
        Library::ALL.iter().copied().filter(|l| file.starts_with(l.stem())).max_by_key(|l| l.stem().len())?;
    let rest = &file[library.stem().len()..];
    if !rest.is_empty() && !rest.starts_with('.') {
        return None;
    }
    let numbers = rest.trim_start_matches('.');
    if numbers.is_empty() {
        return Some(LibraryFile { library, major: None, version: None });
    }
    if !numbers.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let major = numbers.split('.').next().and_then(|m| m.parse().ok());
    let version = numbers.contains('.').then(|| Ver::new(numbers));
    Some(LibraryFile { library, major, version })
}

/// A DLL's name without `.dll`: the library's Windows stem, then its major
/// (nvrtc writes 12.0 as `120_0`).
fn dll_file(stem: &str) -> Option<LibraryFile> {
    let library = Library::ALL
        .iter()
        .copied()
        .filter(|l| {
            stem.len() >= l.dll_stem().len() && stem[..l.dll_stem().len()].eq_ignore_ascii_case(l.dll_stem())
        })
        .max_by_key(|l| l.dll_stem().len())?;
    let rest = &stem[library.dll_stem().len()..];
    if rest.is_empty() {
        // `nvcuda`, `nvml`: whole names; `cudart64_` wants its major.
        return (!library.dll_stem().ends_with('_')).then_some(LibraryFile {
            library,
            major: None,
            version: None,
        });
    }
    let digits = rest.split('_').next().unwrap_or(rest);
    if !library.dll_stem().ends_with('_') || digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let major: u64 = digits.parse().ok()?;
    let major = if library == Library::Nvrtc && digits.len() == 3 { major / 10 } else { major };
    Some(LibraryFile { library, major: Some(major), version: None })
}

/// The version in `/proc/driver/nvidia/version`:
/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  <date>` or
/// `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.58.02  Release Build ...`.
pub(crate) fn proc_driver_version(text: &str) -> Option<Ver> {
    let line = text.lines().find(|l| l.contains("Kernel Module"))?;
    let after = &line[line.find("Kernel Module")? + "Kernel Module".len()..];
    after
        .split_whitespace()
        .find(|t| {
            t.contains('.')
                && t.chars().all(|c| c.is_ascii_digit() || c == '.')
                && t.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .map(Ver::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_dll_names_give_library_and_major() {
        let major = |f: &str| library_file(f).map(|l| (l.library, l.major));
        assert_eq!(major("cudart64_12.dll"), Some((Library::Cudart, Some(12))));
        assert_eq!(major("cublasLt64_13.dll"), Some((Library::CublasLt, Some(13))));
        assert_eq!(major("CUBLAS64_12.DLL"), Some((Library::Cublas, Some(12))));
        assert_eq!(major("cudnn64_9.dll"), Some((Library::Cudnn, Some(9))));
        assert_eq!(major("nvrtc64_120_0.dll"), Some((Library::Nvrtc, Some(12))));
        assert_eq!(major("nvinfer_10.dll"), Some((Library::Nvinfer, Some(10))));
        assert_eq!(major("nvcuda.dll"), Some((Library::Cuda, None)));
        assert_eq!(major("nvml.dll"), Some((Library::NvidiaMl, None)));
        for not_ours in
            ["cudnn_ops64_9.dll", "cudart64_.dll", "cudart64_x.dll", "nvinfer_plugin_10.dll", "nvcudax.dll"]
        {
            assert_eq!(library_file(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn library_file_names_give_library_major_and_version() {
        let f = library_file("libcudnn.so.9.1.0").unwrap();
        assert_eq!(
            (f.library, f.major, f.version.unwrap().raw().to_string()),
            (Library::Cudnn, Some(9), "9.1.0".into())
        );
        let f = library_file("libcudart.so.12").unwrap();
        assert_eq!((f.library, f.major), (Library::Cudart, Some(12)));
        assert_eq!(library_file("libcuda.so.535.104.05").unwrap().version.unwrap().raw(), "535.104.05");
        assert_eq!(library_file("libcublasLt.so.12").unwrap().library, Library::CublasLt);
        assert!(library_file("libcudnn_ops.so.9").is_none());
        assert!(library_file("libcudart.so.12.debug").is_none());
    }

    #[test]
    fn both_kernel_module_banners_give_the_version() {
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\nGCC version:  gcc version 12.3.0\n";
        assert_eq!(proc_driver_version(proprietary).unwrap().raw(), "550.90.07");
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.58.02  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jun 25 01:31:02 UTC 2024\n";
        assert_eq!(proc_driver_version(open).unwrap().raw(), "555.58.02");
        assert!(proc_driver_version("garbage\n\0\u{1}").is_none());
    }
}
