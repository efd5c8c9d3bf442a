//! Snapshots from text people paste into support tickets.
//!
//! A ticket mixes PyTorch's `collect_env` (of any era since 2018), `pip
//! list` / `pip freeze` / `conda list`, the `nvidia-smi` banner or `-L`,
//! `nvcc --version`, `/proc/driver/nvidia/version`, tracebacks, the doctor's
//! own reports, and prose, quoted and fenced, with Windows line endings. The
//! importer reads it line by line, once (linear in the size of the paste),
//! recognises the lines it knows, and builds the same [`Snapshot`] a probe
//! would have: every fact remembers the line it came from, anything not
//! stated stays "not evaluated", and a fact stated twice with different
//! values is reported as a conflict rather than silently picked.

mod lines;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::formats::{LibraryFile, library_file};
use crate::matrix::Matrix;
use crate::snapshot::nvidia::{ContainerGpu, Driver, Gpu, LibraryCopy, NvmlState, Toolkit};
use crate::snapshot::{
    Conflict, Distribution, ImportProbe, ImportStatus, Nvidia, Pasted, PastedFact, PastedLine, ProbeMode,
    Probed, PythonEnv, PythonSource, Snapshot, System, normalize_name,
};
use crate::version::Ver;

/// The longest line we look at; the rest of a longer one is ignored.
const MAX_LINE: usize = 4096;
/// Error lines kept in the snapshot.
const MAX_ERROR_LINES: usize = 200;

/// Builds a snapshot from pasted text. A doctor report (JSON, or Markdown
/// with its snapshot block) is taken as it is.
pub fn import(text: &str, matrix: &Matrix) -> Snapshot {
    // The doctor's own report (JSON, or Markdown with its snapshot block).
    if let Ok(s) = Snapshot::from_saved(text) {
        return s;
    }
    let set = matrix.signature_set();
    let mut c = Collector::default();
    let mut mode = lines::Mode::Prose;
    for (i, raw) in text.split('\n').enumerate() {
        c.lines = i + 1;
        let line = lines::clean(raw, MAX_LINE);
        if line.is_empty() {
            mode = lines::Mode::Prose;
            continue;
        }
        if c.error_lines.len() < MAX_ERROR_LINES && set.is_match(line) {
            c.error_lines.push(PastedLine { line: i + 1, text: line.to_string() });
        }
        mode = lines::read(line, mode, &mut c);
    }
    c.build(matrix)
}

/// Facts as they are read, first statement wins.
#[derive(Default)]
pub(crate) struct Collector {
    pub lines: usize,
    facts: Vec<PastedFact>,
    values: BTreeMap<String, (String, usize)>,
    conflicts: BTreeMap<String, Vec<(String, usize)>>,
    dists: BTreeMap<String, (Ver, usize)>,
    gpus: BTreeMap<u32, (String, Option<String>)>,
    libraries: Vec<(String, usize)>,
    error_lines: Vec<PastedLine>,
}

impl Collector {
    /// Records `fact = value` from the current line.
    pub(crate) fn fact(&mut self, fact: &str, value: &str) {
        let value = value.trim();
        if value.is_empty() {
            return;
        }
        let line = self.lines;
        match self.values.get(fact) {
            None => {
                self.facts.push(PastedFact { fact: fact.into(), value: value.into(), line });
                self.values.insert(fact.into(), (value.into(), line));
            }
            Some((first, first_line)) if !same_value(first, value) => {
                let entry =
                    self.conflicts.entry(fact.into()).or_insert_with(|| vec![(first.clone(), *first_line)]);
                if !entry.iter().any(|(v, _)| same_value(v, value)) {
                    self.facts.push(PastedFact { fact: fact.into(), value: value.into(), line });
                    entry.push((value.into(), line));
                }
            }
            Some(_) => {}
        }
    }

    /// Records an installed distribution.
    pub(crate) fn dist(&mut self, name: &str, version: &str) {
        let name = normalize_name(name);
        let v = Ver::new(version.trim());
        if name.is_empty() || v.parsed().is_none() {
            return;
        }
        self.fact(&name, version);
        self.dists.entry(name).or_insert((v, self.lines));
    }

    pub(crate) fn gpu(&mut self, index: u32, name: &str, uuid: Option<&str>) {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        self.fact(&format!("gpu.{index}.name"), name);
        let e = self.gpus.entry(index).or_insert_with(|| (name.to_string(), None));
        if e.1.is_none() {
            e.1 = uuid.map(str::to_string);
        }
    }

    pub(crate) fn library(&mut self, path: &str) {
        self.libraries.push((path.trim().to_string(), self.lines));
    }

    fn get(&self, fact: &str) -> Option<&str> {
        self.values.get(fact).map(|(v, _)| v.as_str())
    }

    fn build(self, matrix: &Matrix) -> Snapshot {
        let from = |fact: &str| self.values.get(fact).map(|(_, l)| format!("line {l} of the pasted text"));
        let unstated = |what: &str| format!("{what} is not stated in the pasted text");

        let system = {
            let mut s = System {
                os: self
                    .get("os")
                    .map_or_else(|| Probed::NotEvaluated(unstated("the OS")), |o| Probed::Found(o.into())),
                kernel: Probed::NotEvaluated(unstated("the kernel")),
                arch: String::new(),
                glibc: self
                    .get("glibc")
                    .map_or_else(|| Probed::NotEvaluated(unstated("glibc")), |g| Probed::Found(Ver::new(g))),
                ..System::default()
            };
            s.arch = self.get("arch").unwrap_or("unknown").into();
            s
        };

        let mut dists: Vec<Distribution> = self
            .dists
            .iter()
            .map(|(name, (v, _))| Distribution {
                name: name.clone(),
                version: v.clone(),
                location: PathBuf::from("(pasted)"),
                requires: Vec::new(),
                shadowed: Vec::new(),
            })
            .collect();
        // collect_env's "PyTorch version" is torch's version even without a pip line.
        if let Some(v) = self.get("torch.version")
            && !dists.iter().any(|d| d.name == "torch")
        {
            dists.push(Distribution {
                name: "torch".into(),
                version: Ver::new(v),
                location: PathBuf::from("(pasted)"),
                requires: Vec::new(),
                shadowed: Vec::new(),
            });
            dists.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let mut imports = Vec::new();
        if self.get("torch.version").is_some() {
            let mut facts = BTreeMap::new();
            facts.insert("version".to_string(), serde_json::Value::from(self.get("torch.version")));
            let cuda = self.get("torch.cuda").filter(|c| !is_none_word(c));
            facts.insert("cuda".to_string(), cuda.map_or(serde_json::Value::Null, serde_json::Value::from));
            if let Some(a) = self.get("torch.cuda_available") {
                facts.insert(
                    "cuda_available".to_string(),
                    serde_json::Value::from(a.eq_ignore_ascii_case("true")),
                );
            }
            imports.push(ImportProbe {
                package: "torch".into(),
                module: "torch".into(),
                status: ImportStatus::Ok,
                seconds: None,
                file: None,
                facts,
                output: None,
                shadowed_by: None,
            });
        }
        let pythons = if dists.is_empty() && self.get("python").is_none() {
            Vec::new()
        } else {
            vec![PythonEnv {
                executable: PathBuf::from("(pasted environment)"),
                source: PythonSource::Pasted,
                version: self.get("python").map_or_else(
                    || Probed::NotEvaluated(unstated("the Python version")),
                    |p| Probed::Found(Ver::new(p)),
                ),
                kind: None,
                interpreter: Probed::NotEvaluated("the facts come from pasted text".into()),
                site_dirs: Vec::new(),
                distributions: if dists.is_empty() {
                    Probed::NotEvaluated(unstated("no package list"))
                } else {
                    Probed::Found(dists)
                },
                imports,
            }]
        };

        let driver = match self.get("driver").or_else(|| self.get("driver.kernel_module")) {
            Some(v) => Probed::Found(Driver {
                version: Ver::new(v),
                max_cuda: self.get("driver.max_cuda").map(Ver::new),
                source: from("driver").or_else(|| from("driver.kernel_module")).unwrap_or_default(),
            }),
            None => Probed::NotEvaluated(unstated("the NVIDIA driver")),
        };
        let gpus = if self.gpus.is_empty() {
            Probed::NotEvaluated(unstated("the GPUs"))
        } else {
            Probed::Found(
                self.gpus
                    .iter()
                    .map(|(i, (name, uuid))| {
                        let model = matrix.gpu_model(name);
                        Gpu {
                            index: *i,
                            name: name.clone(),
                            compute_capability: model.map(|m| Ver::new(m.compute_capability.as_str())),
                            architecture: model.map(|m| m.architecture.clone()),
                            memory_mib: None,
                            uuid: uuid.clone(),
                        }
                    })
                    .collect(),
            )
        };
        let toolkits = self
            .get("cuda.toolkit")
            .map(|v| {
                vec![Toolkit {
                    root: PathBuf::from("(pasted)"),
                    version: Probed::Found(Ver::new(v)),
                    found_via: from("cuda.toolkit").unwrap_or_default(),
                    version_source: None,
                }]
            })
            .unwrap_or_default();
        let library_copies: Vec<LibraryCopy> = self
            .libraries
            .iter()
            .filter_map(|(path, line)| {
                let file = path.rsplit('/').next()?;
                let LibraryFile { library, major, version } = library_file(file)?;
                Some(LibraryCopy {
                    library,
                    file: file.into(),
                    path: PathBuf::from(path),
                    version,
                    major,
                    origin: format!("line {line} of the pasted text"),
                })
            })
            .collect();
        let any_nvidia = driver.found().is_some() || gpus.found().is_some() || !toolkits.is_empty();
        let nvidia = if any_nvidia || self.get("driver.kernel_module").is_some() {
            Probed::Found(Nvidia {
                nvml: NvmlState::Error { detail: "not asked: the facts come from pasted text".into() },
                driver,
                kernel_module: self.get("driver.kernel_module").map_or_else(
                    || Probed::NotEvaluated(unstated("the kernel module")),
                    |v| Probed::Found(Ver::new(v)),
                ),
                gpus,
                toolkits,
                libraries: library_copies,
                headers: Vec::new(),
                links: Vec::new(),
                container: ContainerGpu::default(),
            })
        } else {
            Probed::NotEvaluated(unstated("nothing about the NVIDIA stack"))
        };

        let mut snapshot =
            Snapshot::new(format!("onnx-doctor {} (diagnose)", env!("CARGO_PKG_VERSION")), ProbeMode::Pasted);
        snapshot.system = Probed::Found(system);
        snapshot.pythons = pythons;
        snapshot.nvidia = nvidia;
        snapshot.pasted = Some(Pasted {
            facts: self.facts,
            conflicts: self.conflicts.into_iter().map(|(fact, values)| Conflict { fact, values }).collect(),
            error_lines: self.error_lines,
            lines: self.lines,
        });
        snapshot
    }
}

/// "2.1.0" and "2.1.0+cu121" from two sources are one statement; "12.1"
/// and "12.1.105" too (collect_env's CUDA line vs nvcc's).
fn same_value(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (va, vb) = (Ver::new(a), Ver::new(b));
    match (va.parsed(), vb.parsed()) {
        (Some(x), Some(y)) => {
            let (x, y) = (x.clone().without_local(), y.clone().without_local());
            let (rx, ry) = (x.release(), y.release());
            let n = rx.len().min(ry.len());
            rx[..n] == ry[..n]
        }
        _ => a.eq_ignore_ascii_case(b),
    }
}

pub(crate) fn is_none_word(v: &str) -> bool {
    let v = v.trim();
    v.is_empty()
        || v.eq_ignore_ascii_case("none")
        || v.eq_ignore_ascii_case("n/a")
        || v.eq_ignore_ascii_case("could not collect")
        || v.eq_ignore_ascii_case("no cuda")
        || v.eq_ignore_ascii_case("no cudnn")
}
