//! The facts the probes gathered, and nothing else.
//!
//! A snapshot is the whole input of the judgement: rules see only what is in
//! here, so a snapshot saved on a user's machine re-checks to the same report
//! anywhere (`--snapshot FILE`). Unknown is always explicit: a probe that
//! could not look records [`Probed::NotEvaluated`] with its reason, and no
//! field silently defaults to "fine".

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::version::Ver;

pub mod key;
pub mod model;
pub mod nvidia;
pub mod plan;
pub mod saved;
pub mod vocab;

pub use key::{Attr, FactKey, FactRef, MachineFact, ModelFact, PackageFacts, Vocabulary};
pub use nvidia::Nvidia;
pub use plan::{FileFact, StackLibrary, StackPackage};
pub use saved::{SCHEMA_VERSION, looks_saved};
pub use vocab::{Assumption, Component, Expectation, Library, Severity, normalize_name};

/// Either a fact, or the reason it could not be established.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Probed<T> {
    Found(T),
    NotEvaluated(String),
}

impl<T> Probed<T> {
    pub(crate) fn found(&self) -> Option<&T> {
        match self {
            Self::Found(v) => Some(v),
            Self::NotEvaluated(_) => None,
        }
    }

    pub(crate) fn reason(&self) -> Option<&str> {
        match self {
            Self::Found(_) => None,
            Self::NotEvaluated(r) => Some(r),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema_version: u32,
    /// The doctor that gathered these facts ("onnx-doctor 0.1.0").
    pub probed_by: String,
    /// How the facts were gathered.
    pub mode: ProbeMode,
    pub system: Probed<System>,
    pub pythons: Vec<PythonEnv>,
    /// The NVIDIA stack; absent in snapshots from before it was probed.
    #[serde(default = "not_probed")]
    pub nvidia: Probed<Nvidia>,
    /// For a snapshot built from pasted text: where each fact came from,
    /// contradictions, and the error lines found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pasted: Option<Pasted>,
    /// `onnx-doctor model FILE`: the model being checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<model::ModelFacts>,
    /// `--target onnxruntime==1.17.1`: runtimes to judge against instead of
    /// the installed ones (name → version).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub targets: BTreeMap<String, String>,
    /// `--expect`: pins the environment must meet (`torch==2.4.*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<Expectation>,
    /// `--assume`: what was assumed, each with what it replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumed: Vec<String>,
}

impl Snapshot {
    /// Leaves out what no check reads, to make a report shorter:
    /// distributions the matrix does not watch and no watched one requires
    /// (NVIDIA's library wheels stay), the location and installer of the
    /// unwatched ones kept, and requirements that only apply with an extra.
    /// Returns how many distributions were left out.
    pub(crate) fn trim_unwatched(&mut self, watched: &std::collections::BTreeSet<String>) -> usize {
        let mut left_out = 0;
        for env in &mut self.pythons {
            let Probed::Found(dists) = &mut env.distributions else { continue };
            for d in dists.iter_mut() {
                d.requires.retain(|r| !r.contains("extra =="));
            }
            let required: std::collections::BTreeSet<String> = dists
                .iter()
                .filter(|d| watched.contains(&d.name))
                .flat_map(|d| &d.requires)
                .map(|r| {
                    normalize_name(
                        r.split([' ', '<', '>', '=', '!', '~', ';', '[', '(']).next().unwrap_or(""),
                    )
                })
                .collect();
            let before = dists.len();
            dists.retain(|d| {
                watched.contains(&d.name) || required.contains(&d.name) || d.name.starts_with("nvidia-")
            });
            left_out += before - dists.len();
            for d in dists.iter_mut().filter(|d| !watched.contains(&d.name)) {
                d.location = PathBuf::new();
                d.installer = None;
            }
        }
        left_out
    }

    /// A snapshot in which nothing has been probed yet: every part says so.
    pub fn new(probed_by: impl Into<String>, mode: ProbeMode) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            probed_by: probed_by.into(),
            mode,
            system: not_probed(),
            pythons: Vec::new(),
            nvidia: not_probed(),
            pasted: None,
            model: None,
            targets: BTreeMap::new(),
            expectations: Vec::new(),
            assumed: Vec::new(),
        }
    }

    /// Reads a saved snapshot: see [`saved::read_snapshot`].
    pub fn from_saved(text: &str) -> Result<Self, String> {
        saved::read_snapshot(text)
    }

    /// Applies an `--assume`: it replaces what it assumes (the probed driver,
    /// or every probed GPU), and the snapshot records what it replaced.
    pub(crate) fn assume(&mut self, assumption: &Assumption) {
        use nvidia::{Driver, Gpu};
        let n = match &mut self.nvidia {
            Probed::Found(n) => n,
            other => {
                *other = Probed::Found(Nvidia::unprobed("not probed: assumed with --assume"));
                let Probed::Found(n) = other else { unreachable!("just set") };
                n
            }
        };
        n.assumed = true;
        let replaced = match assumption {
            Assumption::Driver(v) => {
                let before = n.driver.found().map(|d| d.version.to_string());
                n.driver =
                    Probed::Found(Driver { version: v.clone(), max_cuda: None, source: "--assume".into() });
                // The host's kernel module is the host's: nothing observed here.
                n.kernel_module =
                    Probed::NotEvaluated("not observed: the driver is assumed with --assume".into());
                if matches!(n.nvml, nvidia::NvmlState::NoLibrary { .. } | nvidia::NvmlState::DriverNotLoaded)
                {
                    n.nvml = nvidia::NvmlState::Error { detail: "not asked: the driver is assumed".into() };
                }
                before.map(|b| format!("the probed driver {b}"))
            }
            Assumption::Gpu(cc) => {
                let before: Vec<String> =
                    n.gpus.found().map(|g| g.iter().map(|g| g.name.clone()).collect()).unwrap_or_default();
                let mut gpus = match std::mem::replace(&mut n.gpus, Probed::Found(Vec::new())) {
                    // Earlier --assume gpu=... add up; probed GPUs are replaced.
                    Probed::Found(g) => g.into_iter().filter(|g| g.name.starts_with("assumed GPU")).collect(),
                    Probed::NotEvaluated(_) => Vec::new(),
                };
                gpus.push(Gpu {
                    index: gpus.len() as u32,
                    name: "assumed GPU".into(),
                    compute_capability: Some(cc.clone()),
                    architecture: None,
                    memory_mib: None,
                    uuid: None,
                });
                n.gpus = Probed::Found(gpus);
                let probed: Vec<String> =
                    before.into_iter().filter(|g| !g.starts_with("assumed GPU")).collect();
                (!probed.is_empty()).then(|| format!("the probed GPUs ({})", probed.join(", ")))
            }
        };
        self.assumed.push(match replaced {
            Some(r) => format!("{assumption} (replaces {r})"),
            None => assumption.to_string(),
        });
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Pasted {
    /// Every fact read, with the line it came from (1-based).
    pub facts: Vec<PastedFact>,
    /// The same fact stated twice with different values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
    /// Lines that match a known error signature.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_lines: Vec<PastedLine>,
    /// How many lines were read.
    pub lines: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PastedFact {
    pub fact: String,
    pub value: String,
    pub line: usize,
    /// Read from a sentence, a path or the like, not from a field: used only
    /// where nothing structured stated the fact.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guessed: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Conflict {
    pub fact: String,
    /// (value, line) for each statement, the one used first.
    pub values: Vec<(String, usize)>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PastedLine {
    pub line: usize,
    pub text: String,
    /// The packages whose files the traceback frames around the line are
    /// in (`onnxruntime` for `.../site-packages/onnxruntime/__init__.py`):
    /// whose failure the line reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub near: Vec<String>,
}

fn not_probed<T>() -> Probed<T> {
    Probed::NotEvaluated("not probed".into())
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProbeMode {
    /// Python interpreters were run and the stack imported.
    Full,
    /// Only package metadata on disk was read (`--fast`).
    Fast,
    /// Built from text someone pasted (`diagnose`).
    Pasted,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct System {
    /// "Ubuntu 22.04.4 LTS", from os-release's PRETTY_NAME.
    pub os: Probed<String>,
    /// os-release ID and VERSION_ID ("ubuntu", "22.04").
    pub distro_id: Option<String>,
    pub distro_version: Option<String>,
    pub kernel: Probed<String>,
    pub arch: String,
    pub glibc: Probed<Ver>,
    /// "docker", "podman", "kubernetes", "container" (unknown engine), or none.
    pub container: Option<String>,
    pub wsl: bool,
    /// A Jetson's L4T release ("32.7.1"), from /etc/nv_tegra_release; in a
    /// container, the image's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l4t: Option<String>,
    /// The host's L4T release, where a paste from a container states it
    /// apart from the image's (`l4t`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_l4t: Option<String>,
}

impl Default for Probed<String> {
    fn default() -> Self {
        Self::NotEvaluated("not probed".into())
    }
}

impl Default for Probed<Ver> {
    fn default() -> Self {
        Self::NotEvaluated("not probed".into())
    }
}

/// Why the doctor looked at an interpreter: a report must say which Python it
/// judged and why that one.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum PythonSource {
    /// `--python PATH`.
    Flag,
    /// The active virtual environment (`VIRTUAL_ENV`).
    VirtualEnv,
    /// The active conda environment (`CONDA_PREFIX`).
    CondaPrefix,
    /// A `.venv` in the current directory.
    DotVenv,
    /// `python3` or `python` on `PATH`.
    SearchPath,
    /// Stated in a pasted report (`diagnose`).
    Pasted,
    /// Listed by Windows' `py` launcher (`py -0p`).
    PyLauncher,
}

impl PythonSource {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Flag => "given with --python",
            Self::VirtualEnv => "active virtual environment (VIRTUAL_ENV)",
            Self::CondaPrefix => "active conda environment (CONDA_PREFIX)",
            Self::DotVenv => ".venv in the current directory",
            Self::SearchPath => "first on PATH",
            Self::Pasted => "stated in the pasted text",
            Self::PyLauncher => "listed by the py launcher (py -0p)",
        }
    }
}

/// One Python environment and what was found in it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PythonEnv {
    pub executable: PathBuf,
    pub source: PythonSource,
    /// Known in both modes: from the interpreter itself, or in `--fast` mode
    /// from `pyvenv.cfg` or the `lib/pythonX.Y` directory.
    pub version: Probed<Ver>,
    pub kind: Option<EnvKind>,
    /// What only running the interpreter can tell.
    pub interpreter: Probed<Interpreter>,
    /// The directories distributions were read from, in import order.
    pub site_dirs: Vec<PathBuf>,
    /// Installed distributions, first on `sys.path` first; sorted by name.
    pub distributions: Probed<Vec<Distribution>>,
    /// One entry per stack package the probe script tried to import.
    /// Empty in `--fast` mode.
    pub imports: Vec<ImportProbe>,
    /// Facts read from packages' files without importing them (package →
    /// fact → value): torch's version.py gives its CUDA even with `--fast`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub file_facts: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Interpreter {
    /// `sys.executable` as the interpreter reports it.
    pub executable: PathBuf,
    /// "cpython", "pypy".
    pub implementation: String,
    /// "linux-x86_64".
    pub platform: String,
    pub prefix: PathBuf,
    pub base_prefix: PathBuf,
    /// The directories searched for packages, in import order.
    pub sys_path: Vec<PathBuf>,
    /// The PEP 508 marker environment, for evaluating `Requires-Dist`.
    pub markers: BTreeMap<String, String>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EnvKind {
    Venv,
    Uv,
    Conda,
    System,
}

impl EnvKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Venv => "venv",
            Self::Uv => "uv venv",
            Self::Conda => "conda",
            Self::System => "system",
        }
    }
}

/// An installed distribution as its metadata on disk describes it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Distribution {
    /// The normalised name (`onnxruntime-gpu`).
    pub name: String,
    pub version: Ver,
    /// The site directory that holds it; empty when a report left it out
    /// (only the watched packages' locations are read by the checks).
    #[serde(default, skip_serializing_if = "is_empty_path")]
    pub location: PathBuf,
    /// Unconditional and marker-guarded `Requires-Dist` lines, verbatim.
    /// Read only for the packages the matrix watches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// Other copies further down `sys.path`, which imports never see.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<ShadowedCopy>,
    /// Who installed it (the dist-info's INSTALLER: `pip`, `uv`, `conda`),
    /// read for the packages the matrix watches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installer: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShadowedCopy {
    pub version: Ver,
    pub location: PathBuf,
}

/// What happened when the probe script imported one package.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ImportProbe {
    /// The doctor's name for the package: torch, onnx, onnxruntime,
    /// protobuf (imported as `google.protobuf`), numpy, ...
    pub package: String,
    pub module: String,
    pub status: ImportStatus,
    /// Wall time of the import, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// The file the module was loaded from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Facts read from the imported module (`cuda`, `ir_version`, `providers`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, serde_json::Value>,
    /// What the import printed, trimmed (the NumPy 1.x/2.x banner lands here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A file or directory in the user's working directory with the module's
    /// name, which `python script.py` run from there would import instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<PathBuf>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ImportStatus {
    Ok,
    NotInstalled,
    Failed {
        error: String,
        message: String,
    },
    /// The import did not finish within the timeout; the process was killed.
    TimedOut {
        seconds: f64,
    },
    /// The interpreter died during the import (a segfault in an extension).
    Crashed {
        detail: String,
    },
    NotEvaluated {
        reason: String,
    },
}

impl ImportProbe {
    /// A probe of `package` (imported as `module`) with nothing but its status.
    pub(crate) fn new(package: &str, module: &str, status: ImportStatus) -> Self {
        Self {
            package: package.into(),
            module: module.into(),
            status,
            seconds: None,
            file: None,
            facts: BTreeMap::new(),
            output: None,
            shadowed_by: None,
        }
    }
}

impl ImportStatus {
    /// The status in one word, as the `import.PACKAGE` fact gives it.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::NotInstalled => "not_installed",
            Self::Failed { .. } => "failed",
            Self::TimedOut { .. } => "timed_out",
            Self::Crashed { .. } => "crashed",
            Self::NotEvaluated { .. } => "not_evaluated",
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Ok => "imported".into(),
            Self::NotInstalled => "not installed".into(),
            Self::Failed { error, message } if message.is_empty() => format!("import failed: {error}"),
            Self::Failed { error, message } => format!("import failed: {error}: {message}"),
            Self::TimedOut { seconds } => format!("import did not finish within {seconds:.1} s"),
            Self::Crashed { detail } => format!("the interpreter crashed during the import ({detail})"),
            Self::NotEvaluated { reason } => format!("not evaluated: {reason}"),
        }
    }
}

impl PythonEnv {
    pub(crate) fn distribution(&self, name: &str) -> Option<&Distribution> {
        self.distributions.found()?.iter().find(|d| d.name == name)
    }

    /// The first of these distributions that is installed: a module such
    /// as `onnxruntime` comes from one of several (the matrix's `stack:`
    /// section says which, preferred first).
    pub(crate) fn first_installed(&self, names: &[&str]) -> Option<&Distribution> {
        names.iter().find_map(|n| self.distribution(n))
    }

    pub(crate) fn import(&self, package: &str) -> Option<&ImportProbe> {
        self.imports.iter().find(|i| i.package == package)
    }

    /// A short label for reports: the executable path.
    pub(crate) fn label(&self) -> String {
        self.executable.display().to_string()
    }
}

fn is_empty_path(p: &std::path::Path) -> bool {
    p.as_os_str().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise_like_pep_503() {
        assert_eq!(normalize_name("onnxruntime_gpu"), "onnxruntime-gpu");
        assert_eq!(normalize_name("Typing.Extensions"), "typing-extensions");
        assert_eq!(normalize_name("nvidia--cudnn__cu12"), "nvidia-cudnn-cu12");
    }

    #[test]
    fn not_evaluated_survives_a_json_round_trip() {
        let p: Probed<String> = Probed::NotEvaluated("python timed out".into());
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"not_evaluated":"python timed out"}"#);
        assert_eq!(serde_json::from_str::<Probed<String>>(&json).unwrap(), p);
    }
}
