//! Which DLL Windows would load for each import of a library, worked out
//! the way its loader searches, without loading anything: the Windows twin
//! of `elf`.
//!
//! A DLL names the DLLs it needs in its import table (and, loaded on first
//! call, its delay-import table). For each, in order: the folder of the
//! library being loaded and of the DLL that imports it, the interpreter's
//! folder (the application's), System32, then `PATH`. `PATH` is searched
//! because onnxruntime loads its providers with the altered search path,
//! which keeps it; Python's own extension imports do not, so this order
//! can call a DLL found that an import would miss, never the reverse: a
//! false alarm costs more than a miss. API sets (`api-ms-win-*`), the DLLs
//! every Windows ships and the Visual C++ runtime are not searched, like
//! the C library on Linux.
//! Only the headers, the import tables and their names are read, so a
//! 200 MB `onnxruntime_providers_cuda.dll` costs a few kilobytes.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::elf::Walk;
use crate::host::read_at_most;
use crate::snapshot::nvidia::{Resolution, VcDll, VcRuntime};
use crate::version::Ver;

/// The most import descriptors read from one table; real DLLs have dozens.
const MAX_DESCRIPTORS: u64 = 4096;
/// The longest DLL name read.
const MAX_NAME: u64 = 256;
/// Windows allows 96 sections.
const MAX_SECTIONS: u64 = 96;
const MAX_OBJECTS: usize = 256;

/// Whether the file starts like a PE image (`MZ`).
pub(crate) fn is_pe(path: &Path) -> bool {
    let Ok(file) = crate::host::open_regular(path) else { return false };
    let mut magic = [0u8; 2];
    read_at_most(&file, &mut magic, 0).is_ok_and(|n| n == 2) && &magic == b"MZ"
}

/// The DLL names a PE file imports, load-time imports first, then delay
/// imports, each once; `Err` for a file that is not a readable PE image.
pub(crate) fn read_imports(path: &Path) -> Result<Vec<String>, String> {
    let image = Image::open(path)?;
    let mut names: Vec<String> = Vec::new();
    let mut push = |name: String| {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
            names.push(name);
        }
    };
    // IMAGE_IMPORT_DESCRIPTOR: 20 bytes, the name's RVA at 12.
    if let Some(rva) = image.directory(1) {
        let at = image.offset_of(rva).ok_or("the import table lies outside every section")?;
        for i in 0..MAX_DESCRIPTORS {
            let Ok(d) = image.read(at + 20 * i, 20) else { break };
            let name = u32_at(&d, 12).unwrap_or(0);
            if name == 0 {
                break;
            }
            push(image.name_at(u64::from(name)).ok_or("an import names no readable DLL")?);
        }
    }
    // ImgDelayDescr: 32 bytes, attributes at 0, the name at 4 (an RVA when
    // bit 0 of the attributes is set, else an address in the image).
    if let Some(at) = image.directory(13).and_then(|rva| image.offset_of(rva)) {
        for i in 0..MAX_DESCRIPTORS {
            let Ok(d) = image.read(at + 32 * i, 32) else { break };
            let (attributes, name) = (u32_at(&d, 0).unwrap_or(0), u64::from(u32_at(&d, 4).unwrap_or(0)));
            if name == 0 {
                break;
            }
            let rva = if attributes & 1 == 1 { name } else { name.wrapping_sub(image.base) };
            if let Some(n) = image.name_at(rva) {
                push(n);
            }
        }
    }
    Ok(names)
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// A PE image's headers: where its data directories point and how its
/// sections map addresses to file offsets. The rest is read on demand.
struct Image {
    file: std::fs::File,
    /// The address the image prefers, which old delay-import tables use.
    base: u64,
    /// The optional header, which holds the data directories.
    optional: Vec<u8>,
    /// Where in `optional` the data directories start.
    directories: usize,
    /// (virtual address, virtual extent, file offset) of each section.
    spans: Vec<(u64, u64, u64)>,
}

impl Image {
    fn open(path: &Path) -> Result<Self, String> {
        let file = crate::host::open_regular(path).map_err(|e| e.to_string())?;
        let mut image = Image { file, base: 0, optional: Vec::new(), directories: 0, spans: Vec::new() };
        let dos = image.read(0, 64)?;
        if &dos[..2] != b"MZ" {
            return Err("not a PE image (no MZ header)".into());
        }
        let pe = u64::from(u32_at(&dos, 0x3c).unwrap_or(0));
        let coff = image.read(pe, 24)?;
        if &coff[..4] != b"PE\0\0" {
            return Err("not a PE image (no PE signature)".into());
        }
        let sections = u64::from(u16_at(&coff, 6).unwrap_or(0)).min(MAX_SECTIONS);
        let optional_size = u64::from(u16_at(&coff, 20).unwrap_or(0));
        image.optional = image.read(pe + 24, optional_size)?;
        (image.base, image.directories) = match u16_at(&image.optional, 0) {
            Some(0x10b) => (u64::from(u32_at(&image.optional, 28).unwrap_or(0)), 96),
            Some(0x20b) => {
                (image.optional.get(24..32).map_or(0, |s| u64::from_le_bytes(s.try_into().expect("8"))), 112)
            }
            _ => return Err("not a PE image (unknown optional header)".into()),
        };
        let table = image.read(pe + 24 + optional_size, 40 * sections)?;
        image.spans = table
            .chunks_exact(40)
            .filter_map(|s| {
                let (vsize, va, raw, ptr) = (u32_at(s, 8)?, u32_at(s, 12)?, u32_at(s, 16)?, u32_at(s, 20)?);
                Some((u64::from(va), u64::from(vsize.max(raw)), u64::from(ptr)))
            })
            .collect();
        Ok(image)
    }

    /// Exactly `len` bytes at `offset`; a file that ends first is an error.
    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let mut buf = vec![0u8; len as usize];
        let n = read_at_most(&self.file, &mut buf, offset).map_err(|e| e.to_string())?;
        if n < buf.len() {
            return Err(format!(
                "the file ends inside its headers or tables (at byte {})",
                offset + n as u64
            ));
        }
        Ok(buf)
    }

    /// The RVA of data directory `index`, when it has one.
    fn directory(&self, index: usize) -> Option<u64> {
        let at = self.directories + 8 * index;
        let (rva, size) = (u32_at(&self.optional, at)?, u32_at(&self.optional, at + 4)?);
        (rva != 0 && size != 0).then_some(u64::from(rva))
    }

    fn offset_of(&self, rva: u64) -> Option<u64> {
        self.spans
            .iter()
            .find(|(va, extent, _)| rva >= *va && rva < va + extent)
            .map(|(va, _, ptr)| rva - va + ptr)
    }

    /// The NUL-terminated name at `rva`.
    fn name_at(&self, rva: u64) -> Option<String> {
        let at = self.offset_of(rva)?;
        let mut buf = vec![0u8; MAX_NAME as usize];
        let n = read_at_most(&self.file, &mut buf, at).ok()?;
        let end = buf[..n].iter().position(|&b| b == 0)?;
        let name = String::from_utf8_lossy(&buf[..end]).into_owned();
        (!name.is_empty()).then_some(name)
    }
}

/// The linker version a PE image was built with (`14.42` for Visual
/// Studio 2022 17.12's toolset): the optional header's bytes 2 and 3.
pub(crate) fn linker_version(path: &Path) -> Option<(u8, u8)> {
    let image = Image::open(path).ok()?;
    Some((*image.optional.get(2)?, *image.optional.get(3)?))
}

/// The most of a resource section read when looking for a version.
const MAX_RESOURCES: u64 = 8 << 20;

/// A DLL's file version, from the `VS_FIXEDFILEINFO` of its version
/// resource (`14.40.33810.0`): the section holding the resource directory
/// is searched for the structure's signature.
pub(crate) fn file_version(path: &Path) -> Option<Ver> {
    const SIGNATURE: [u8; 4] = 0xFEEF_04BDu32.to_le_bytes();
    let image = Image::open(path).ok()?;
    let rva = image.directory(2)?;
    let (va, extent, ptr) = *image.spans.iter().find(|(va, extent, _)| rva >= *va && rva < va + extent)?;
    let mut section = vec![0u8; extent.min(MAX_RESOURCES) as usize];
    let n = read_at_most(&image.file, &mut section, ptr + (rva - va)).ok()?;
    let section = &section[..n];
    // The structure is DWORD-aligned within the resource data.
    let at = (0..section.len().saturating_sub(16)).step_by(4).find(|&i| section[i..i + 4] == SIGNATURE)?;
    let (ms, ls) = (u32_at(section, at + 8)?, u32_at(section, at + 12)?);
    Some(Ver::new(format!("{}.{}.{}.{}", ms >> 16, ms & 0xffff, ls >> 16, ls & 0xffff)))
}

/// Where Windows looks for a DLL besides the importer's own folder.
pub(crate) struct DllSearch {
    /// The interpreter's folder (the application's), then folders a
    /// package registers (`os.add_dll_directory`).
    pub app_dirs: Vec<PathBuf>,
    /// System32, on Windows.
    pub system: Option<PathBuf>,
    pub path: Vec<PathBuf>,
    /// What each folder holds, lowercased, listed once.
    pub listings: Listings,
}

/// DLL names in each folder, lowercased: Windows' file names ignore case.
#[derive(Default)]
pub(crate) struct Listings(RefCell<HashMap<PathBuf, Option<HashMap<String, OsString>>>>);

impl Listings {
    /// The file in `dir` named `name` in any case, if there is one.
    pub(crate) fn find(&self, dir: &Path, name: &str) -> Option<PathBuf> {
        let mut map = self.0.borrow_mut();
        let names = map.entry(dir.to_path_buf()).or_insert_with(|| {
            crate::host::read_dir(dir).ok().map(|rd| {
                rd.filter_map(|e| {
                    let name = e.ok()?.file_name();
                    Some((name.to_string_lossy().to_lowercase(), name))
                })
                .collect()
            })
        });
        let file = names.as_ref()?.get(&name.to_lowercase())?;
        Some(dir.join(file)).filter(|p| p.is_file())
    }
}

/// API sets, resolved by Windows itself, never files on a path.
fn is_api_set(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("api-ms-win-") || n.starts_with("ext-ms-")
}

/// DLLs that every Windows ships in System32 (the loader's KnownDLLs and
/// their kin): not searched, like the C library on Linux.
fn ships_with_windows(name: &str) -> bool {
    const SYSTEM: &[&str] = &[
        "advapi32",
        "bcrypt",
        "bcryptprimitives",
        "cfgmgr32",
        "comctl32",
        "comdlg32",
        "crypt32",
        "d3d11",
        "d3d12",
        "dbghelp",
        "dwmapi",
        "dxgi",
        "gdi32",
        "imagehlp",
        "imm32",
        "iphlpapi",
        "kernel32",
        "kernelbase",
        "msvcrt",
        "ncrypt",
        "netapi32",
        "normaliz",
        "ntdll",
        "ole32",
        "oleaut32",
        "opengl32",
        "powrprof",
        "psapi",
        "rpcrt4",
        "secur32",
        "setupapi",
        "shell32",
        "shlwapi",
        "ucrtbase",
        "user32",
        "userenv",
        "uxtheme",
        "version",
        "winmm",
        "winhttp",
        "wininet",
        "ws2_32",
        "wsock32",
        "wtsapi32",
    ];
    let n = name.to_ascii_lowercase();
    n.strip_suffix(".dll").is_some_and(|stem| SYSTEM.contains(&stem))
}

/// The Visual C++ runtime's DLLs: installed into System32 by Microsoft's
/// redistributable (or shipped beside an application). A missing or old
/// one needs the redistributable, not a wheel: they are gathered apart
/// from the other imports, into a [`VcRuntime`].
fn is_vc_runtime(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["msvcp140", "vcruntime140", "concrt140", "vcomp140"].iter().any(|p| n.starts_with(p))
}

/// Follows the imports of `root` breadth first, as `elf::resolve` does,
/// and gathers what its DLLs need of the Visual C++ runtime.
pub(crate) fn resolve(root: &Path, search: &DllSearch) -> Result<(Walk, Option<VcRuntime>), String> {
    let first = read_imports(root)?;
    let root_dir = root.parent().unwrap_or(Path::new("."));
    let mut walk = Walk { resolved: Vec::new(), unresolved: Vec::new() };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<(PathBuf, Vec<String>)> = VecDeque::from([(root.to_path_buf(), first)]);
    let mut visited = 0;
    // The newest toolset among the DLLs that import the runtime, and the runtime's DLLs.
    let mut newest: Option<((u8, u8), PathBuf)> = None;
    let mut runtime: Vec<VcDll> = Vec::new();
    while let Some((object, imports)) = queue.pop_front() {
        visited += 1;
        let own_dir = object.parent().unwrap_or(Path::new("."));
        let find = |name: &str| {
            let mut dirs = [(root_dir, "the library's folder"), (own_dir, "the importing DLL's folder")]
                .into_iter()
                .map(|(d, via)| (d.to_path_buf(), via))
                .chain(
                    search.app_dirs.iter().map(|d| (d.clone(), "the interpreter's or a registered folder")),
                )
                .chain(search.system.iter().map(|d| (d.clone(), "System32")))
                .chain(search.path.iter().map(|d| (d.clone(), "PATH")));
            dirs.find_map(|(d, via)| search.listings.find(&d, name).map(|p| (p, via)))
        };
        if imports.iter().any(|n| is_vc_runtime(n))
            && let Some(built) = linker_version(&object)
            && newest.as_ref().is_none_or(|(b, _)| built > *b)
        {
            newest = Some((built, object.clone()));
        }
        for name in imports {
            if is_api_set(&name) || ships_with_windows(&name) || !seen.insert(name.to_ascii_lowercase()) {
                continue;
            }
            if is_vc_runtime(&name) {
                let path = find(&name).map(|(p, _)| p);
                let version = path.as_deref().and_then(file_version);
                runtime.push(VcDll { name, path, version });
                continue;
            }
            match find(&name) {
                Some((path, via)) => {
                    if visited + queue.len() < MAX_OBJECTS
                        && let Ok(imports) = read_imports(&path)
                    {
                        queue.push_back((path.clone(), imports));
                    }
                    walk.resolved.push(Resolution { soname: name, path, via: via.into() });
                }
                None => walk.unresolved.push((name, object.clone())),
            }
        }
    }
    // Where System32 is unknown, a runtime not found says nothing.
    let vc = match (newest, search.system.is_some() && !runtime.is_empty()) {
        (Some(((major, minor), built)), true) => {
            Some(VcRuntime { built_with: Ver::new(format!("{major}.{minor}")), built, dlls: runtime })
        }
        _ => None,
    };
    Ok((walk, vc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncated_files_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let mut seed: u32 = 0x1234_5678;
        let mut header = b"MZ".to_vec();
        header.resize(64, 0);
        header[0x3c] = 64;
        header.extend_from_slice(b"PE\0\0");
        header.extend_from_slice(&[0x64, 0x86, 200, 0]); // 200 sections claimed
        header.resize(64 + 24, 0xff); // optional header size 0xffff
        for len in [0, 1, 2, 63, 64, 70, 88, 200, 4096] {
            let mut bytes = header.clone();
            bytes.resize(len.max(2), 0);
            for b in bytes.iter_mut().skip(header.len()) {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                *b = seed as u8;
            }
            let path = dir.path().join(format!("g{len}.dll"));
            std::fs::write(&path, &bytes).unwrap();
            assert!(read_imports(&path).is_err(), "{len} bytes read as a PE");
            assert!(file_version(&path).is_none() && linker_version(&path).is_none());
        }
    }

    #[test]
    fn system_dlls_and_api_sets_are_not_searched() {
        assert!(is_api_set("api-ms-win-crt-runtime-l1-1-0.dll"));
        assert!(ships_with_windows("KERNEL32.dll"));
        assert!(!ships_with_windows("MSVCP140.dll") && is_vc_runtime("MSVCP140_ATOMIC_WAIT.dll"));
        assert!(!ships_with_windows("cublasLt64_12.dll"));
    }
}
