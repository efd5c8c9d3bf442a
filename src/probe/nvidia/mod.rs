//! The NVIDIA stack: driver and GPUs (NVML, then the kernel module's
//! version file, then nvidia-smi), CUDA toolkits, every copy of the CUDA,
//! cuDNN and TensorRT libraries, and how the loader would resolve the GPU
//! libraries of the installed Python packages.
//!
//! The machine-wide part runs in parallel with the Python probe; the part
//! that needs the Python environments' site directories (pip `nvidia-*`
//! wheels, onnxruntime's CUDA provider, torch's CUDA library) runs after it,
//! and reads files only.

pub mod driver;
pub mod elf;
pub mod ldcache;
pub mod libraries;
pub mod nvml;
pub mod pe;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::host::{FileKind, Host};
use crate::snapshot::StackPackage;
use crate::snapshot::nvidia::{
    ContainerGpu, Driver, Gpu, LibraryCopy, LinkReport, Nvidia, NvmlState, Toolkit,
};
use crate::snapshot::{Library, Probed, PythonEnv};
use crate::version::Ver;

/// The part of the probe that needs nothing from Python.
pub(crate) fn probe_machine(host: &Host, nvml_lib: Option<OsString>) -> Nvidia {
    // On Windows, NVML by its full path: the driver puts nvml.dll in
    // System32, and a bare name would also be looked for in the working
    // directory, where anyone could have left a DLL of that name.
    let nvml_lib = nvml_lib.or_else(|| host.windows_system_directory().map(|d| d.join("nvml.dll").into()));
    let answer = nvml::probe(nvml_lib, host.timeout());
    let kernel_module = match host.read_system_file("/proc/driver/nvidia/version", FileKind::System) {
        Ok(text) => match crate::formats::proc_driver_version(&text) {
            Some(v) => Probed::Found(v),
            None => Probed::NotEvaluated("/proc/driver/nvidia/version has no version".into()),
        },
        Err(_) => Probed::NotEvaluated(
            "no /proc/driver/nvidia/version (the NVIDIA kernel module is not loaded)".into(),
        ),
    };
    let (driver, gpus, smi_failure) =
        driver_and_gpus(host, answer.driver, answer.gpus, &answer.state, &kernel_module);
    let toolkits = libraries::toolkits(host);
    let (copies, include_dirs) = machine_libraries(host, &toolkits);
    let container = ContainerGpu {
        visible_devices: host.env_str("NVIDIA_VISIBLE_DEVICES"),
        cuda_visible_devices: host.env("CUDA_VISIBLE_DEVICES").map(|v| v.to_string_lossy().into_owned()),
        device_nodes: device_nodes(host),
        driver_capabilities: host.env_str("NVIDIA_DRIVER_CAPABILITIES"),
        compat_libraries: copies
            .iter()
            .filter(|c| c.library == Library::Cuda && c.path.components().any(|p| p.as_os_str() == "compat"))
            .filter(|c| c.origin == "LD_LIBRARY_PATH" || c.origin == "loader cache")
            .map(|c| c.path.clone())
            .collect(),
    };
    Nvidia {
        nvml: answer.state,
        driver,
        kernel_module,
        gpus,
        toolkits,
        libraries: copies,
        headers: libraries::headers(&include_dirs),
        links: Vec::new(),
        container,
        assumed: false,
        smi_failure,
    }
}

/// The `/dev/nvidiaN` nodes a process needs to reach the GPUs (a container
/// started without GPU access has the driver's files but none of these).
fn device_nodes(host: &Host) -> Option<u32> {
    let entries = crate::host::read_dir(host.system_path("/dev")).ok()?;
    let count = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix("nvidia")
                .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
        })
        .count();
    Some(count as u32)
}

/// The driver and GPUs: NVML's answer, else nvidia-smi's query interface,
/// else (the driver only) the kernel module's version; and how an installed
/// nvidia-smi failed, when it did (a hung one is a driver not answering,
/// not a machine without one).
fn driver_and_gpus(
    host: &Host,
    nvml_driver: Option<Driver>,
    nvml_gpus: Option<Vec<Gpu>>,
    state: &NvmlState,
    kernel_module: &Probed<Ver>,
) -> (Probed<Driver>, Probed<Vec<Gpu>>, Option<String>) {
    let mut smi_failure = None;
    let (mut driver, mut gpus) = match nvml_driver {
        Some(d) => (
            Probed::Found(d),
            nvml_gpus
                .map_or_else(|| Probed::NotEvaluated("NVML did not list the GPUs".into()), Probed::Found),
        ),
        None => (Probed::NotEvaluated(state.describe()), Probed::NotEvaluated(state.describe())),
    };
    if driver.found().is_none() {
        match driver::query_nvidia_smi(host) {
            // Success with nothing readable (garbage, a wrapper script):
            // not evidence of a machine without a driver.
            Ok((None, g)) if g.is_empty() => {
                let why = "nvidia-smi answered, but nothing it printed could be read".to_string();
                if let Probed::NotEvaluated(r) = &mut driver {
                    *r = format!("{why}; {r}");
                }
                gpus = Probed::NotEvaluated(why.clone());
                smi_failure = Some(why);
            }
            Ok((d, g)) => {
                if let Some(d) = d {
                    driver = Probed::Found(d);
                }
                gpus = Probed::Found(g);
            }
            Err(why) => {
                if let Probed::NotEvaluated(r) = &mut gpus {
                    r.push_str(&format!("; {why}"));
                }
                if host.which("nvidia-smi").is_some() {
                    // What the installed tool did says more than NVML's absence.
                    if let Probed::NotEvaluated(r) = &mut driver {
                        *r = format!("{why}; {r}");
                    }
                    smi_failure = Some(why);
                }
            }
        }
    }
    if driver.found().is_none()
        && let Probed::Found(v) = kernel_module
    {
        let source = "/proc/driver/nvidia/version".into();
        driver = Probed::Found(Driver { version: v.clone(), max_cuda: None, source });
    }
    (driver, gpus, smi_failure)
}

/// Every copy of the libraries that matter outside Python environments (the
/// loader cache, `LD_LIBRARY_PATH`, CUDA toolkits, TensorRT directories, the
/// active conda environment), and the include directories beside them.
fn machine_libraries(host: &Host, toolkits: &[Toolkit]) -> (Vec<LibraryCopy>, Vec<PathBuf>) {
    let search = search_path(host);
    let mut copies = libraries::Copies::default();
    for (soname, path) in &search.cache {
        if crate::formats::library_file(soname).is_some()
            && let Some(dir) = path.parent()
        {
            copies.scan_dir(dir, "loader cache");
        }
    }
    for dir in &search.ld_library_path {
        copies.scan_dir(dir, "LD_LIBRARY_PATH");
    }
    let mut include_dirs = Vec::new();
    for t in toolkits {
        let origin = format!("CUDA toolkit {}", t.root.display());
        for lib in ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", "compat"] {
            copies.scan_dir(&t.root.join(lib), &origin);
        }
        include_dirs.push(t.root.join("include"));
    }
    for dir in ["/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"] {
        include_dirs.push(host.system_path(dir));
    }
    let tensorrt_dirs = glob_dirs(&host.system_path("/usr/local"), "TensorRT");
    for trt in tensorrt_dirs.into_iter().chain([host.system_path("/opt/tensorrt")]) {
        copies.scan_dir(&trt.join("lib"), &format!("TensorRT {}", trt.display()));
        include_dirs.push(trt.join("include"));
    }
    if let Some(conda) = host.env_str("CONDA_PREFIX") {
        let prefix = PathBuf::from(conda);
        if prefix.join("conda-meta").is_dir() {
            copies.scan_dir(&prefix.join("lib"), &format!("conda environment {}", prefix.display()));
            include_dirs.push(prefix.join("include"));
        }
    }
    (copies.copies, include_dirs)
}

/// Adds what lives inside the Python environments: pip wheels of CUDA,
/// cuDNN and TensorRT, and the loader's view of the GPU libraries of
/// onnxruntime, torch and TensorRT.
pub(crate) fn add_python_envs(
    nvidia: &mut Nvidia,
    host: &Host,
    pythons: &[PythonEnv],
    stack: &[StackPackage],
) {
    let mut wheel_dirs: Vec<PathBuf> = Vec::new();
    let mut include_dirs = Vec::new();
    let mut copies = libraries::Copies::from_found(std::mem::take(&mut nvidia.libraries));
    for env in pythons {
        for site in &env.site_dirs {
            let origin = format!("pip wheel in {}", site.display());
            for dir in wheel_library_dirs(site) {
                copies.scan_dir(&dir, &origin);
                wheel_dirs.push(dir);
            }
            include_dirs.extend(glob_dirs(&site.join("nvidia"), "").into_iter().map(|d| d.join("include")));
        }
    }
    nvidia.headers.extend(libraries::headers(&include_dirs));
    nvidia.libraries = libraries::collapse_symlinks(copies.copies);

    let search = search_path(host);
    let mut elsewhere: Vec<PathBuf> =
        nvidia.libraries.iter().filter_map(|c| c.path.parent().map(Path::to_path_buf)).collect();
    elsewhere.extend(wheel_dirs);
    elsewhere.sort();
    elsewhere.dedup();
    let on_windows = host.windows_system_directory();
    // PATH is Windows' own only on Windows; a Windows tree read from Linux has none.
    let path: Vec<PathBuf> = match (&on_windows, host.env("PATH")) {
        (Some(_), Some(p)) => distinct_dirs(std::env::split_paths(&p).filter(|d| !d.as_os_str().is_empty())),
        _ => Vec::new(),
    };
    let system32 = on_windows.or_else(|| host.mounted_windows_system_directory());
    for env in pythons {
        let dlls = pe::DllSearch {
            app_dirs: interpreter_dirs(env),
            system: system32.clone(),
            path: path.clone(),
            listings: pe::Listings::default(),
        };
        for site in &env.site_dirs {
            for (role, library) in link_targets(site, stack) {
                let walk = if pe::is_pe(&library) {
                    pe::resolve(&library, &dlls).map(|(w, vc)| {
                        let unresolved =
                            elf::unresolved_with_hints(&w, &elsewhere, |d, n| dlls.listings.find(d, n));
                        (w, unresolved, vc)
                    })
                } else {
                    elf::resolve(&library, &search).map(|w| {
                        let find = |d: &Path, n: &str| search.listings.has(d, n).then(|| d.join(n));
                        let unresolved = elf::unresolved_with_hints(&w, &elsewhere, find);
                        (w, unresolved, None)
                    })
                };
                nvidia.links.push(match walk {
                    Ok((walk, unresolved, vc_runtime)) => LinkReport {
                        role: role.clone(),
                        unresolved,
                        resolved: walk.resolved,
                        library,
                        python: Some(env.label()),
                        vc_runtime,
                    },
                    Err(e) => LinkReport {
                        role,
                        library,
                        python: Some(env.label()),
                        vc_runtime: None,
                        resolved: Vec::new(),
                        unresolved: vec![crate::snapshot::nvidia::Unresolved {
                            soname: format!("(unreadable: {e})"),
                            needed_by: PathBuf::new(),
                            available_in: Vec::new(),
                        }],
                    },
                });
            }
        }
    }
}

/// `site-packages/nvidia/<lib>/lib` (CUDA 12 wheels), `nvidia/cu13/lib`
/// (CUDA 13 wheels), `tensorrt_libs`, and torch's own `lib`; on Windows
/// `nvidia/<lib>/bin` and `nvidia/cu13/bin/x86_64`.
fn wheel_library_dirs(site: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = glob_dirs(&site.join("nvidia"), "")
        .into_iter()
        .flat_map(|d| [d.join("lib"), d.join("bin"), d.join("bin").join("x86_64")])
        .collect();
    dirs.push(site.join("tensorrt_libs"));
    dirs.push(site.join("torch/lib"));
    dirs.retain(|d| d.is_dir());
    dirs
}

/// The libraries that decide whether GPU inference works: the stack's
/// `libraries`, each relative to site-packages, a trailing `*` taking the
/// first file (by name) that matches.
fn link_targets(site: &Path, stack: &[StackPackage]) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for lib in stack.iter().flat_map(|p| &p.libraries) {
        let target =
            [Some(&lib.path), lib.dll.as_ref()].into_iter().flatten().find_map(|p| first_match(site, p));
        if let Some(path) = target {
            out.push((lib.role.clone(), path));
        }
    }
    out
}

/// The file at `path` under `site`, or with a trailing `*` the first file
/// (by name) whose name starts with what precedes it.
fn first_match(site: &Path, path: &str) -> Option<PathBuf> {
    let Some(prefix) = path.strip_suffix('*') else {
        return Some(site.join(path)).filter(|p| p.is_file());
    };
    let path = site.join(prefix);
    let (dir, stem) = (path.parent().unwrap_or(site), path.file_name().and_then(|n| n.to_str()));
    let mut matches: Vec<PathBuf> = crate::host::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    stem.is_none_or(|s| name.starts_with(s)) && p.is_file()
                })
                .collect()
        })
        .unwrap_or_default();
    matches.sort();
    matches.into_iter().next()
}

/// The folders Windows' loader treats as the application's for a Python
/// process: the interpreter's own, and for a venv (whose `python.exe`
/// starts its base interpreter) the base's, `home` in `pyvenv.cfg`.
fn interpreter_dirs(env: &PythonEnv) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = env.executable.parent().map(Path::to_path_buf).into_iter().collect();
    if let Some(root) = crate::probe::python::discovery::venv_root(&env.executable) {
        let cfg = crate::host::read_text(&root.join("pyvenv.cfg"), FileKind::System).unwrap_or_default();
        let home = cfg.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "home").then(|| PathBuf::from(v.trim()))
        });
        dirs.extend(home.filter(|h| !h.as_os_str().is_empty()));
    }
    dirs
}

fn glob_dirs(parent: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(rd) = crate::host::read_dir(parent) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    dirs.sort();
    dirs
}

fn is_system_leaf(soname: &str) -> bool {
    ["libc.so", "libm.so", "libdl.so", "librt.so", "libpthread.so", "ld-linux", "libgcc_s.so", "libstdc++.so"]
        .iter()
        .any(|p| soname.starts_with(p))
}

fn search_path(host: &Host) -> elf::SearchPath {
    let cache: BTreeMap<String, PathBuf> =
        crate::host::read_bytes(&host.system_path("/etc/ld.so.cache"), FileKind::LoaderCache)
            .map(|bytes| {
                let mut map = BTreeMap::new();
                for e in ldcache::parse(&bytes) {
                    let rooted = host.system_path(&e.path.to_string_lossy());
                    map.entry(e.soname).or_insert(rooted);
                }
                map
            })
            .unwrap_or_default();
    let ld_library_path = host
        .env_str("LD_LIBRARY_PATH")
        .map(|v| distinct_dirs(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty())))
        .unwrap_or_default();
    let defaults = [
        "/lib",
        "/usr/lib",
        "/lib64",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
    ]
    .iter()
    .map(|d| host.system_path(d))
    .collect();
    elf::SearchPath {
        ld_library_path,
        cache,
        defaults,
        leaf: is_system_leaf,
        listings: elf::Listings::default(),
    }
}

/// The directories in order, each once: a directory named again (as
/// written, or through a symlink) can find nothing the first did not.
fn distinct_dirs(dirs: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut named = std::collections::HashSet::new();
    let mut resolved = std::collections::HashSet::new();
    dirs.filter(|d| named.insert(d.clone()))
        .filter(|d| resolved.insert(crate::host::canonicalize(d).unwrap_or_else(|_| d.clone())))
        .collect()
}
