//! From the facts a paste stated to the snapshot a probe would have made.
//!
//! Every key is read in one exhaustive `match`, so a fact the reader records
//! but nothing uses cannot compile. Anything not stated stays "not
//! evaluated" with the reason that it was not in the paste.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Collector, Key, is_none_word};
use crate::formats::{LibraryFile, library_file};
use crate::matrix::Matrix;
use crate::snapshot::nvidia::{ContainerGpu, Driver, Gpu, HeaderVersion, LibraryCopy, NvmlState, Toolkit};
use crate::snapshot::{
    Component, Conflict, Distribution, ImportProbe, ImportStatus, Nvidia, Pasted, PastedFact, ProbeMode,
    Probed, PythonEnv, PythonSource, Snapshot, System,
};
use crate::version::Ver;

/// A stated value and the line it came from.
type At<'a> = Option<(&'a str, usize)>;

/// The facts of the paste, by what they are about.
#[derive(Default)]
struct Stated<'a> {
    os: At<'a>,
    arch: At<'a>,
    l4t: At<'a>,
    host_l4t: At<'a>,
    container: At<'a>,
    glibc: At<'a>,
    python: At<'a>,
    torch_version: At<'a>,
    torch_cuda: At<'a>,
    torch_hip: At<'a>,
    torch_cuda_available: At<'a>,
    /// The CUDA of the environment's `cudatoolkit` / `pytorch-cuda` package,
    /// or the one a conda command asked for.
    conda_cuda: At<'a>,
    driver: At<'a>,
    driver_max_cuda: At<'a>,
    kernel_module: At<'a>,
    cuda_toolkit: At<'a>,
    cudnn: At<'a>,
}

fn unstated(what: &str) -> String {
    format!("{what} is not stated in the pasted text")
}

fn from_line(line: usize) -> String {
    format!("line {line} of the pasted text")
}

impl Collector {
    pub(super) fn into_snapshot(self, matrix: &Matrix) -> Snapshot {
        let mut s = Stated::default();
        for (key, (value, line)) in &self.values {
            let at = Some((value.as_str(), *line));
            match key {
                Key::Os => s.os = at,
                Key::Arch => s.arch = at,
                Key::Glibc => s.glibc = at,
                Key::L4t => s.l4t = at,
                Key::HostL4t => s.host_l4t = at,
                // Settled into `L4t` before the snapshot is made.
                Key::ImageL4t => {}
                Key::Container => s.container = at,
                Key::Python => s.python = at,
                Key::TorchVersion => s.torch_version = at,
                Key::TorchCuda => s.torch_cuda = at,
                Key::TorchHip => s.torch_hip = at,
                Key::TorchCudaAvailable => s.torch_cuda_available = at,
                Key::Driver => s.driver = at,
                Key::DriverMaxCuda => s.driver_max_cuda = at,
                Key::DriverKernelModule => s.kernel_module = at,
                Key::CudaToolkit => s.cuda_toolkit = at,
                Key::Cudnn => s.cudnn = at,
                Key::CondaCuda => s.conda_cuda = at,
                // Kept in their own maps, with what else they carry.
                Key::GpuName(_) | Key::Dist(_) => {}
            }
        }
        // A conda torch's CUDA is its `pytorch-cuda` / `cudatoolkit` package.
        s.torch_cuda = s.torch_cuda.or(s.conda_cuda);

        let mut snapshot =
            Snapshot::new(format!("onnx-doctor {} (diagnose)", env!("CARGO_PKG_VERSION")), ProbeMode::Pasted);
        snapshot.system = Probed::Found(system(&s));
        snapshot.pythons = self.python_env(&s).into_iter().collect();
        snapshot.nvidia = self.nvidia(&s, matrix);
        let mut facts = self.facts;
        // How many distributions the paste named beyond those kept.
        if let Some((count, line)) = self.kept.left_out() {
            facts.push(PastedFact {
                fact: super::kept::NOT_KEPT_FACT.into(),
                value: count,
                line,
                guessed: false,
            });
        }
        snapshot.pasted = Some(Pasted {
            facts,
            conflicts: self
                .conflicts
                .into_iter()
                .map(|(key, values)| Conflict { fact: key.name(), values })
                .collect(),
            error_lines: self.error_lines,
            lines: self.lines,
        });
        snapshot
    }

    /// The Python environment the paste describes, if it names any package
    /// or the Python version.
    fn python_env(&self, s: &Stated<'_>) -> Option<PythonEnv> {
        let pasted = |name: &str, version: Ver| Distribution {
            name: name.into(),
            version,
            location: PathBuf::from("(pasted)"),
            requires: self.requires.get(name).cloned().unwrap_or_default(),
            shadowed: Vec::new(),
            // A conda build is made per Python by its channel: what pip's
            // wheels support says nothing of it.
            installer: self.from_conda.contains(name).then(|| "conda".to_string()),
        };
        let mut dists: Vec<Distribution> =
            self.dists.iter().map(|(n, d)| pasted(n, d.version.clone())).collect();
        // collect_env's "PyTorch version" is torch's version even without a pip line.
        if let Some((v, _)) = s.torch_version
            && !dists.iter().any(|d| d.name == "torch")
        {
            dists.push(pasted("torch", Ver::new(v)));
            dists.sort_by(|a, b| a.name.cmp(&b.name));
        } else if self.torch_unversioned && !dists.iter().any(|d| d.name == "torch") {
            // The CPU marker without torch's own line: torch is there, its
            // version unknown, so only what needs no version is judged.
            dists.push(pasted("torch", Ver::new(UNSTATED_VERSION)));
            dists.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if dists.is_empty() && s.python.is_none() && self.shadowed.is_empty() {
            return None;
        }
        Some(PythonEnv {
            executable: PathBuf::from("(pasted environment)"),
            source: PythonSource::Pasted,
            version: s.python.map_or_else(
                || Probed::NotEvaluated(unstated("the Python version")),
                |(p, _)| Probed::Found(Ver::new(p)),
            ),
            kind: None,
            interpreter: Probed::NotEvaluated("the facts come from pasted text".into()),
            file_facts: BTreeMap::new(),
            site_dirs: Vec::new(),
            imports: self.imports(s, &dists),
            distributions: if dists.is_empty() {
                Probed::NotEvaluated(unstated("a package list"))
            } else {
                Probed::Found(dists)
            },
        })
    }

    fn nvidia(&self, s: &Stated<'_>, matrix: &Matrix) -> Probed<Nvidia> {
        let driver = match s.driver.or(s.kernel_module) {
            // A number too long for any version is garbage, never a driver to call "ok".
            Some((v, line)) if Ver::new(v).parsed().is_none() => Probed::NotEvaluated(format!(
                "line {line} states a driver version that is not a version: {}",
                v.chars().take(40).collect::<String>()
            )),
            Some((v, line)) => Probed::Found(Driver {
                version: Ver::new(v),
                max_cuda: s.driver_max_cuda.map(|(c, _)| Ver::new(c)),
                source: from_line(line),
            }),
            None => Probed::NotEvaluated(unstated("the NVIDIA driver")),
        };
        let gpus = if self.gpus.is_empty() {
            Probed::NotEvaluated(unstated("the GPUs"))
        } else {
            Probed::Found(
                self.gpus.iter().map(|(i, (name, uuid))| gpu(matrix, *i, name, uuid.clone())).collect(),
            )
        };
        let toolkits: Vec<Toolkit> = s
            .cuda_toolkit
            .map(|(v, line)| Toolkit {
                root: PathBuf::from("(pasted)"),
                version: Probed::Found(Ver::new(v)),
                found_via: from_line(line),
                version_source: None,
            })
            .into_iter()
            .collect();
        let (libraries, headers) = self.library_versions(s);
        let stated_any = driver.found().is_some()
            || s.driver.is_some()
            || gpus.found().is_some()
            || !toolkits.is_empty()
            || s.kernel_module.is_some()
            || !libraries.is_empty()
            || !headers.is_empty();
        if !stated_any {
            return Probed::NotEvaluated("the pasted text states nothing about the NVIDIA stack".into());
        }
        Probed::Found(Nvidia {
            nvml: NvmlState::Error { detail: "not asked: the facts come from pasted text".into() },
            driver,
            kernel_module: s.kernel_module.map_or_else(
                || Probed::NotEvaluated(unstated("the kernel module")),
                |(v, _)| Probed::Found(Ver::new(v)),
            ),
            gpus,
            toolkits,
            libraries,
            headers,
            links: Vec::new(),
            container: ContainerGpu::default(),
            assumed: false,
            smi_failure: None,
        })
    }

    /// Library copies named by path, and the versions stated outright (a
    /// "cuDNN version: 8.9.2" line), which count like a header's.
    fn library_versions(&self, s: &Stated<'_>) -> (Vec<LibraryCopy>, Vec<HeaderVersion>) {
        let mut paths: Vec<(String, usize)> = self.libraries.clone();
        let mut headers = Vec::new();
        if let Some((value, line)) = s.cudnn.filter(|(v, _)| !is_none_word(v)) {
            if value.contains(".so") {
                paths.push((value.to_string(), line));
            } else if let Some(v) = value.split_whitespace().map(Ver::new).find(|v| v.release().len() >= 2) {
                headers.push(HeaderVersion {
                    component: Component::CUDNN,
                    version: v,
                    path: PathBuf::from(from_line(line)),
                });
            }
        }
        let copies = paths
            .iter()
            .filter_map(|(path, line)| {
                let file = path.rsplit(['/', '\\']).next()?;
                let LibraryFile { library, major, version } = library_file(file)?;
                Some(LibraryCopy {
                    library,
                    file: file.into(),
                    path: PathBuf::from(path),
                    version,
                    major,
                    origin: from_line(*line),
                })
            })
            .collect();
        (copies, headers)
    }
}

fn system(s: &Stated<'_>) -> System {
    System {
        os: s.os.map_or_else(|| Probed::NotEvaluated(unstated("the OS")), |(o, _)| Probed::Found(o.into())),
        kernel: Probed::NotEvaluated(unstated("the kernel")),
        arch: s.arch.map_or("unknown", |(a, _)| a).into(),
        glibc: s
            .glibc
            .map_or_else(|| Probed::NotEvaluated(unstated("glibc")), |(g, _)| Probed::Found(Ver::new(g))),
        l4t: s.l4t.map(|(l, _)| l.to_string()),
        host_l4t: s.host_l4t.map(|(l, _)| l.to_string()),
        container: s.container.map(|(e, _)| e.to_string()),
        ..System::default()
    }
}

/// The version of a distribution the paste shows installed without one.
const UNSTATED_VERSION: &str = "(version not stated)";

/// What collect_env (or a conda build string) says of the imported torch,
/// as the probe would record it.
fn torch_import(s: &Stated<'_>, installed: Option<&Ver>) -> Option<ImportProbe> {
    // A wheel's local tag says what it was built for: `+cu121`, `+cpu`.
    let tagged = installed.and_then(|v| {
        let raw = v.raw();
        let local = raw.split_once('+')?.1.to_ascii_lowercase();
        if local == "cpu" {
            return Some(None);
        }
        let digits =
            local.strip_prefix("cu").filter(|d| d.len() >= 2 && d.bytes().all(|b| b.is_ascii_digit()))?;
        let (major, minor) = digits.split_at(digits.len() - 1);
        Some(Some(format!("{major}.{minor}")))
    });
    let version = match (s.torch_version, installed) {
        (Some((v, _)), _) => v.to_string(),
        (None, Some(v)) if s.torch_cuda.is_some() || tagged.is_some() => v.raw().to_string(),
        _ => return None,
    };
    let mut facts = BTreeMap::new();
    facts.insert("version".to_string(), serde_json::Value::from(version));
    let stated = s.torch_cuda.map(|(c, _)| c.to_string());
    let cuda = match (stated, tagged) {
        (Some(c), _) => Some(c).filter(|c| !is_none_word(c)),
        (None, Some(tag)) => tag,
        (None, None) => None,
    };
    facts.insert("cuda".to_string(), cuda.map_or(serde_json::Value::Null, serde_json::Value::from));
    // Beside a CPU build it says what was asked for (`torch.conda_cuda`).
    if let Some((conda, _)) = s.conda_cuda {
        facts.insert("conda_cuda".to_string(), serde_json::Value::from(conda));
    }
    if let Some((hip, _)) = s.torch_hip {
        facts.insert("hip".to_string(), serde_json::Value::from(hip));
    }
    if let Some((a, _)) = s.torch_cuda_available {
        facts.insert("cuda_available".to_string(), serde_json::Value::from(a.eq_ignore_ascii_case("true")));
    }
    let mut import = ImportProbe::new("torch", "torch", ImportStatus::Ok);
    import.facts = facts;
    Some(import)
}

impl Collector {
    /// The imports the paste shows: torch's facts, and each package a
    /// traceback imported from a source tree that shadows it.
    fn imports(&self, s: &Stated<'_>, dists: &[Distribution]) -> Vec<ImportProbe> {
        let mut imports: Vec<ImportProbe> =
            torch_import(s, dists.iter().find(|d| d.name == "torch").map(|d| &d.version))
                .into_iter()
                .collect();
        for (package, folder) in &self.shadowed {
            let at = match imports.iter().position(|i| i.module == *package) {
                Some(at) => at,
                None => {
                    let status = ImportStatus::NotEvaluated {
                        reason: "the paste shows its traceback, not the import".into(),
                    };
                    imports.push(ImportProbe::new(package, package, status));
                    imports.len() - 1
                }
            };
            imports[at].shadowed_by = Some(PathBuf::from(folder));
        }
        imports
    }
}

/// A GPU named in the paste, with the compute capability its name implies.
fn gpu(matrix: &Matrix, index: u32, name: &str, uuid: Option<String>) -> Gpu {
    let model = matrix.gpu_model(name);
    Gpu {
        index,
        name: name.to_string(),
        compute_capability: model.map(|m| Ver::new(m.compute_capability.as_str())),
        architecture: model.map(|m| m.architecture.clone()),
        memory_mib: None,
        uuid,
    }
}
