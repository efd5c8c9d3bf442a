//! CUDA toolkits, and every copy of the libraries that matter (CUDA
//! runtime, cuBLAS, cuDNN, TensorRT, the driver's libcuda and NVML), with
//! where each copy came from: the loader cache, `LD_LIBRARY_PATH`, a
//! toolkit, a pip `nvidia-*` or TensorRT wheel in a Python environment, or
//! a conda environment. Versions are also read from the headers that carry
//! them (`cudnn_version.h`, `NvInferVersion.h`, `cuda_runtime_api.h`).

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::formats::{LibraryFile, library_file};
use crate::host::{FileKind, Host, read_text};
use crate::snapshot::nvidia::{HeaderVersion, LibraryCopy, Toolkit};
use crate::snapshot::{Component, Probed};
use crate::version::Ver;

/// The copies of the interesting libraries found so far: each directory
/// is listed once, however often (and under whatever name) the search
/// names it, and each path is kept once, so a search costs what the
/// directories hold, not that times how often they are named.
#[derive(Default)]
pub(crate) struct Copies {
    pub copies: Vec<LibraryCopy>,
    paths: HashSet<PathBuf>,
    /// Directories listed, as named and as resolved.
    named: HashSet<PathBuf>,
    resolved: HashSet<PathBuf>,
}

impl Copies {
    /// Copies already found elsewhere, kept first.
    pub(crate) fn from_found(copies: Vec<LibraryCopy>) -> Self {
        let paths = copies.iter().map(|c| c.path.clone()).collect();
        Self { copies, paths, ..Self::default() }
    }

    /// Lists the interesting libraries in `dir`, unless it was listed
    /// before; a copy keeps the origin it was first found through.
    pub(crate) fn scan_dir(&mut self, dir: &Path, origin: &str) {
        if !self.named.insert(dir.to_path_buf()) {
            return;
        }
        let identity = crate::host::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.resolved.insert(identity) {
            return;
        }
        let Ok(entries) = crate::host::read_dir(dir) else { return };
        let mut names: Vec<String> = entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
        names.sort();
        for file in names {
            if let Some(LibraryFile { library, major, version }) = library_file(&file) {
                let path = dir.join(&file);
                if !self.paths.insert(path.clone()) {
                    continue;
                }
                self.copies.push(LibraryCopy { library, file, path, version, major, origin: origin.into() });
            }
        }
    }
}

/// Keeps one entry per real file: the symlinks `libcudnn.so` →
/// `libcudnn.so.9` → `libcudnn.so.9.1.0` are one copy, named by the most
/// specific name, at the first origin it was seen from.
pub(crate) fn collapse_symlinks(copies: Vec<LibraryCopy>) -> Vec<LibraryCopy> {
    let mut by_target: BTreeMap<PathBuf, LibraryCopy> = BTreeMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    for c in copies {
        let target = crate::host::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone());
        match by_target.get_mut(&target) {
            Some(kept) => {
                if c.file.len() > kept.file.len() {
                    kept.file = c.file;
                    kept.version = c.version.or(kept.version.take());
                    kept.major = c.major.or(kept.major);
                }
                kept.major = kept.major.or(c.major);
            }
            None => {
                order.push(target.clone());
                by_target.insert(target, c);
            }
        }
    }
    order.into_iter().filter_map(|t| by_target.remove(&t)).collect()
}

/// CUDA toolkit directories: `CUDA_HOME`, `CUDA_PATH`, `CUDA_ROOT`, Windows'
/// `CUDA_PATH_V*` and Program Files folder, then `/usr/local/cuda*` and
/// `/opt/cuda` under the root.
pub(crate) fn toolkits(host: &Host) -> Vec<Toolkit> {
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(v) = host.env_str(var) {
            candidates.push((PathBuf::from(v), var.into()));
        }
    }
    // Windows: each installed toolkit sets CUDA_PATH_V12_4 and the like,
    // and lives under Program Files\NVIDIA GPU Computing Toolkit\CUDA.
    let mut versioned: Vec<(String, String)> =
        host.env_pairs().filter(|(k, v)| k.starts_with("CUDA_PATH_V") && !v.is_empty()).collect();
    versioned.sort();
    candidates.extend(versioned.into_iter().map(|(k, v)| (PathBuf::from(v), k)));
    if let Some(program_files) = host.env_str("ProgramFiles") {
        let cuda = Path::new(&program_files).join("NVIDIA GPU Computing Toolkit").join("CUDA");
        if let Ok(rd) = crate::host::read_dir(&cuda) {
            let mut dirs: Vec<PathBuf> =
                rd.filter_map(|e| Some(e.ok()?.path())).filter(|p| p.is_dir()).collect();
            dirs.sort();
            candidates.extend(dirs.into_iter().map(|d| (d, "Program Files".to_string())));
        }
    }
    let local = host.system_path("/usr/local");
    if let Ok(rd) = crate::host::read_dir(&local) {
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n == "cuda" || n.starts_with("cuda-"))
            .collect();
        names.sort();
        for n in names {
            candidates.push((local.join(&n), format!("/usr/local/{n}")));
        }
    }
    candidates.push((host.system_path("/opt/cuda"), "/opt/cuda".into()));

    let mut out: Vec<Toolkit> = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for (root, via) in candidates {
        if !root.is_dir() {
            continue;
        }
        let real = crate::host::canonicalize(&root).unwrap_or_else(|_| root.clone());
        if !seen.insert(real) {
            continue;
        }
        let (version, source) = match toolkit_version(host, &root) {
            Some((v, s)) => (Probed::Found(v), Some(s)),
            None => (
                Probed::NotEvaluated("no version.json, version.txt, cuda_runtime_api.h or nvcc".into()),
                None,
            ),
        };
        out.push(Toolkit { root, version, found_via: via, version_source: source });
    }
    out
}

fn toolkit_version(host: &Host, root: &Path) -> Option<(Ver, String)> {
    if let Ok(text) = read_text(&root.join("version.json"), FileKind::System)
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
    {
        for key in ["cuda", "cuda_cudart"] {
            if let Some(v) = json.get(key).and_then(|c| c.get("version")).and_then(|v| v.as_str()) {
                return Some((Ver::new(v), "version.json".into()));
            }
        }
    }
    if let Ok(text) = read_text(&root.join("version.txt"), FileKind::System)
        && let Some(v) =
            text.split_whitespace().find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
    {
        return Some((Ver::new(v), "version.txt".into()));
    }
    if let Ok(text) = read_text(&root.join("include/cuda_runtime_api.h"), FileKind::System)
        && let Some(n) = define_value(&text, "CUDART_VERSION").and_then(|v| v.parse::<u64>().ok())
    {
        return Some((Ver::from_cuda_int(n), "include/cuda_runtime_api.h".into()));
    }
    for nvcc in [root.join("bin").join("nvcc"), root.join("bin").join("nvcc.exe")] {
        if nvcc.exists() {
            return nvcc_version(host, &nvcc).map(|v| (v, "nvcc --version".into()));
        }
    }
    None
}

/// `Cuda compilation tools, release 12.4, V12.4.131` → 12.4.131.
pub(crate) fn nvcc_version(host: &Host, nvcc: &Path) -> Option<Ver> {
    let out = host.run(nvcc, &[OsString::from("--version")]).ok()?;
    parse_nvcc(&out.stdout_lossy())
}

pub(crate) fn parse_nvcc(text: &str) -> Option<Ver> {
    let line = text.lines().find(|l| l.contains("release"))?;
    let full = line.split_whitespace().find_map(|w| w.strip_prefix('V')).filter(|v| v.contains('.'));
    let short = line.split("release").nth(1)?.split(',').next()?.trim();
    Some(Ver::new(full.unwrap_or(short)))
}

/// The value of `#define NAME value`, following one level of indirection
/// to another macro (`#define NV_TENSORRT_MAJOR TRT_MAJOR_ENTERPRISE`, as
/// TensorRT headers do since 10.11).
pub(crate) fn define_value(text: &str, name: &str) -> Option<String> {
    let lookup = |n: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == "#define" && w.next()? == n).then(|| w.next().map(str::to_string)).flatten()
        })
    };
    let mut value = lookup(name)?;
    for _ in 0..4 {
        let v = value.trim_matches(|c| c == '(' || c == ')').trim_end_matches(['U', 'L', 'u', 'l']);
        if v.chars().all(|c| c.is_ascii_digit()) && !v.is_empty() {
            return Some(v.to_string());
        }
        value = lookup(v)?;
    }
    None
}

/// cuDNN's version from `cudnn_version.h` (8 and later) or `cudnn.h` (7 and
/// earlier): the three defines, never the encoded CUDNN_VERSION (its
/// multiplier changed between 8 and 9).
pub(crate) fn cudnn_header_version(text: &str) -> Option<Ver> {
    let major = define_value(text, "CUDNN_MAJOR")?;
    let minor = define_value(text, "CUDNN_MINOR")?;
    let patch = define_value(text, "CUDNN_PATCHLEVEL")?;
    Some(Ver::new(format!("{major}.{minor}.{patch}")))
}

pub(crate) fn tensorrt_header_version(text: &str) -> Option<Ver> {
    let major = define_value(text, "NV_TENSORRT_MAJOR")?;
    let minor = define_value(text, "NV_TENSORRT_MINOR")?;
    let patch = define_value(text, "NV_TENSORRT_PATCH")?;
    let build = define_value(text, "NV_TENSORRT_BUILD").unwrap_or_else(|| "0".into());
    Some(Ver::new(format!("{major}.{minor}.{patch}.{build}")))
}

/// Reads the version headers found in `include_dirs`, each directory once.
pub(crate) fn headers(include_dirs: &[PathBuf]) -> Vec<HeaderVersion> {
    let mut out = Vec::new();
    let mut read: HashSet<&Path> = HashSet::new();
    for dir in include_dirs {
        if !read.insert(dir) {
            continue;
        }
        let mut found: Vec<Component> = Vec::new();
        for (file, component, parse) in [
            ("cudnn_version.h", Component::CUDNN, cudnn_header_version as fn(&str) -> Option<Ver>),
            ("cudnn.h", Component::CUDNN, cudnn_header_version),
            ("NvInferVersion.h", Component::TENSORRT, tensorrt_header_version),
        ] {
            if found.contains(&component) {
                continue; // cudnn_version.h already read for this directory
            }
            let path = dir.join(file);
            if let Ok(text) = read_text(&path, FileKind::System)
                && let Some(version) = parse(&text)
            {
                found.push(component.clone());
                out.push(HeaderVersion { component, version, path });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cudnn_headers_of_both_eras_are_read_from_their_defines() {
        let v9 = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
        assert_eq!(cudnn_header_version(v9).unwrap().raw(), "9.1.0");
        let v7 = "/* cudnn.h */\n#define CUDNN_MAJOR      7\n#define CUDNN_MINOR      6\n#define CUDNN_PATCHLEVEL 5\n";
        assert_eq!(cudnn_header_version(v7).unwrap().raw(), "7.6.5");
    }

    #[test]
    fn tensorrt_headers_with_enterprise_indirection_are_resolved() {
        let h = "#define TRT_MAJOR_ENTERPRISE 10\n#define TRT_MINOR_ENTERPRISE 11\n#define TRT_PATCH_ENTERPRISE 0\n#define TRT_BUILD_ENTERPRISE 33\n\
                 #define NV_TENSORRT_MAJOR TRT_MAJOR_ENTERPRISE //!< TensorRT major version.\n#define NV_TENSORRT_MINOR TRT_MINOR_ENTERPRISE\n\
                 #define NV_TENSORRT_PATCH TRT_PATCH_ENTERPRISE\n#define NV_TENSORRT_BUILD TRT_BUILD_ENTERPRISE\n";
        assert_eq!(tensorrt_header_version(h).unwrap().raw(), "10.11.0.33");
        let old = "#define NV_TENSORRT_MAJOR 8\n#define NV_TENSORRT_MINOR 6\n#define NV_TENSORRT_PATCH 1\n#define NV_TENSORRT_BUILD 6\n";
        assert_eq!(tensorrt_header_version(old).unwrap().raw(), "8.6.1.6");
        assert!(tensorrt_header_version("#define NV_TENSORRT_MAJOR A\n#define A B\n#define B A\n").is_none());
    }

    #[test]
    fn nvcc_output_gives_the_full_toolkit_version() {
        let out = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0\n";
        assert_eq!(parse_nvcc(out).unwrap().raw(), "12.4.131");
        assert!(parse_nvcc("garbage").is_none());
    }
}
