//! The facts rules can name, read out of a snapshot.
//!
//! A rule says `onnxruntime`, `numpy`, `onnx.ir_version`, `torch.local`,
//! `python`; this module says what each name means:
//!
//! - `python`: the interpreter's version;
//! - `os`, `arch`, `glibc`, `kernel`, `container`: the machine;
//! - `<distribution>`: the installed version of a distribution (any name,
//!   normalised: `onnxruntime-gpu`);
//! - `<distribution>.local` / `.release`: the local label (`cu118`) and the
//!   version without it;
//! - `<package>.<fact>`: what the probe script read from the imported module
//!   (`torch.cuda`, `onnx.ir_version`, `protobuf.backend`); for `torch.cuda`
//!   the wheel's local label stands in when torch cannot be imported;
//! - `import.<package>`: how the import went (`ok`, `failed`, ...);
//! - `a|b`: the first of `a` and `b` that is present.
//!
//! A fact is present, absent (the package is not installed), or unknown with
//! a reason (its probe did not run or failed). Rules treat unknown as "could
//! not evaluate", never as a pass.

use crate::check::needs::CUDA;
use crate::matrix::Matrix;
use crate::snapshot::model::ExternalProblem;
use crate::snapshot::nvidia::Gpu;
use crate::snapshot::{Component, ImportStatus, Library, Nvidia, Probed, PythonEnv, Snapshot, System};
use crate::version::Ver;

#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    Absent,
    Unknown(String),
    Text(String),
    List(Vec<String>),
}

impl Fact {
    pub fn display(&self) -> String {
        match self {
            Self::Absent => "(none)".into(),
            Self::Unknown(_) => "(unknown)".into(),
            Self::Text(t) => t.clone(),
            Self::List(l) => l.join(", "),
        }
    }
}

/// The facts of one Python environment on one machine (or of the machine
/// alone, when `env` is `None`).
pub struct Facts<'a> {
    pub matrix: &'a Matrix,
    pub snapshot: Option<&'a Snapshot>,
    pub system: Option<&'a System>,
    pub system_reason: Option<&'a str>,
    pub nvidia: &'a Probed<Nvidia>,
    pub env: Option<&'a PythonEnv>,
}

/// Facts of the machine rather than of one Python environment: a rule
/// that names only these is judged once.
pub fn is_machine_fact(key: &str) -> bool {
    matches!(key, "os" | "arch" | "glibc" | "kernel" | "container" | "driver" | "nvml")
        || ["driver.", "gpu.", "cuda.", "container.", "model.", "runtime.", "host."]
            .iter()
            .any(|p| key.starts_with(p))
}

impl<'a> Facts<'a> {
    pub fn for_env(snapshot: &'a Snapshot, env: Option<&'a PythonEnv>, matrix: &'a Matrix) -> Self {
        Self {
            matrix,
            snapshot: Some(snapshot),
            system: snapshot.system.found(),
            system_reason: snapshot.system.reason(),
            nvidia: &snapshot.nvidia,
            env,
        }
    }

    pub fn get(&self, key: &str) -> Fact {
        if key.contains('|') {
            let mut last = Fact::Absent;
            for alt in key.split('|') {
                match self.get(alt.trim()) {
                    Fact::Absent => {}
                    Fact::Unknown(r) => last = Fact::Unknown(r),
                    found => return found,
                }
            }
            return last;
        }
        if let Some(f) = self.system_fact(key) {
            return f;
        }
        if let Some(f) = self.nvidia_fact(key) {
            return f;
        }
        let Some(env) = self.env else {
            return Fact::Unknown(format!("`{key}` is a fact of a Python environment"));
        };
        if key == "python" {
            return probed_version(&env.version);
        }
        if let Some(pkg) = key.strip_prefix("import.") {
            return match env.import(pkg) {
                Some(i) => Fact::Text(i.status.word().into()),
                None => Fact::Unknown(format!("{pkg} was not imported by the probe")),
            };
        }
        if let Some((name, attr)) = key.split_once('.') {
            return self.package_fact(env, name, attr);
        }
        distribution_version(env, key).map_or_else(|f| f, |v| Fact::Text(v.raw().to_string()))
    }

    fn system_fact(&self, key: &str) -> Option<Fact> {
        let pick = |f: fn(&System) -> Fact| match self.system {
            Some(s) => f(s),
            None => Fact::Unknown(self.system_reason.unwrap_or("the system was not probed").to_string()),
        };
        Some(match key {
            "os" => pick(|s| probed_text(&s.os)),
            "arch" => pick(|s| Fact::Text(s.arch.clone())),
            "glibc" => pick(|s| probed_version(&s.glibc)),
            "kernel" => pick(|s| probed_text(&s.kernel)),
            "container" => pick(|s| s.container.clone().map_or(Fact::Absent, Fact::Text)),
            _ => return None,
        })
    }

    /// The model's operators that the onnxruntime it is judged against has
    /// no `provider` kernel for (for a provider other than the CPU's, only
    /// those the CPU runs: the others fail whatever the provider).
    fn kernel_gaps(&self, m: &crate::snapshot::model::ModelFacts, provider: &str) -> Fact {
        use crate::check::needs::{CPU, lacking};
        let Some(Fact::Text(release)) = self.model_fact("runtime.onnxruntime") else { return Fact::Absent };
        let release = Ver::new(release.as_str());
        let mut gaps = lacking(m, self.matrix, "onnxruntime", provider, &release);
        if provider != CPU {
            let cpu = lacking(m, self.matrix, "onnxruntime", CPU, &release);
            gaps.retain(|g| !cpu.contains(g));
        }
        if gaps.is_empty() { Fact::Absent } else { Fact::List(gaps) }
    }

    /// `model.*` facts of the model being checked, and `runtime.*`: the
    /// runtime it is judged against (a `--target`, else the installed one).
    fn model_fact(&self, key: &str) -> Option<Fact> {
        let snap = self.snapshot?;
        if let Some(name) = key.strip_prefix("runtime.") {
            if let Some(v) = snap.targets.get(name) {
                return Some(Fact::Text(v.clone()));
            }
            let installed = snap
                .pythons
                .iter()
                .find_map(|p| p.first_installed(&self.matrix.distributions_of(name)))
                .map(|d| d.version.raw().to_string());
            let header = match (name, &snap.nvidia) {
                ("tensorrt", Probed::Found(n)) => n
                    .headers
                    .iter()
                    .find(|h| h.component == Component::TENSORRT)
                    .map(|h| h.version.raw().to_string()),
                _ => None,
            };
            return Some(installed.or(header).map_or(Fact::Absent, Fact::Text));
        }
        let rest = key.strip_prefix("model.")?;
        let Some(m) = &snap.model else { return Some(Fact::Absent) };
        const STANDARD: &[&str] = &[
            "ai.onnx",
            "ai.onnx.ml",
            "com.microsoft",
            "org.pytorch.aten",
            "ai.onnx.training",
            "ai.onnx.preview.training",
        ];
        let list = |items: Vec<String>| if items.is_empty() { Fact::Absent } else { Fact::List(items) };
        Some(match rest {
            "ir_version" => Fact::Text(m.ir_version.to_string()),
            // Whole MiB of the .onnx file itself (weights stored outside it not counted).
            "file_mib" => Fact::Text((m.file_bytes >> 20).to_string()),
            "opset" => m.opsets.get("ai.onnx").map_or(Fact::Absent, |v| Fact::Text(v.to_string())),
            "domains" => list(m.ops.keys().chain(m.opsets.keys()).cloned().collect()),
            "custom_domains" => {
                let mut d: Vec<String> =
                    m.ops.keys().filter(|d| !STANDARD.contains(&d.as_str())).cloned().collect();
                d.dedup();
                list(d)
            }
            "ops" => list(m.ops.values().flat_map(|ops| ops.keys().cloned()).collect()),
            "aten_ops" => {
                let n: u64 = m
                    .ops
                    .iter()
                    .map(|(d, ops)| {
                        if d == "org.pytorch.aten" {
                            ops.values().sum()
                        } else {
                            ops.get("ATen").copied().unwrap_or(0)
                        }
                    })
                    .sum();
                Fact::Text(n.to_string())
            }
            "int64_initializers" => Fact::Text(m.int64_initializers.to_string()),
            "external_missing" => external(m, &[ExternalProblem::Missing]),
            "external_outside" => external(
                m,
                &[ExternalProblem::Absolute, ExternalProblem::OutsideFolder, ExternalProblem::LinkOutside],
            ),
            "external_unusable" => external(m, &[ExternalProblem::Empty, ExternalProblem::NotAFile]),
            "file" => Fact::Text(m.path.display().to_string()),
            "ops_without_kernel" => self.kernel_gaps(m, crate::check::needs::CPU),
            "ops_without_cuda_kernel" => self.kernel_gaps(m, CUDA),
            // The first release with CUDA kernels for all of those.
            "cuda_kernels_from" => match self.kernel_gaps(m, CUDA) {
                Fact::List(gaps) => {
                    crate::check::needs::first_running(m, self.matrix, "onnxruntime", CUDA, &gaps)
                        .map_or(Fact::Absent, Fact::Text)
                }
                _ => Fact::Absent,
            },
            "dynamic_inputs" => list(crate::check::profile::describe(m)),
            // Shape operands not held as constants: `Resize.scales`.
            "runtime_shape_operands" => list(m.shape_operands.iter().map(|o| o.operand.clone()).collect()),
            "runtime_shape_nodes" => list(crate::check::profile::runtime_shape_nodes(m)),
            "shape_tensor_inputs" => list(crate::check::profile::shape_tensor_inputs(m)),
            "shape_input_profile" => Fact::Text(crate::check::profile::shape_input_profile(m)),
            "trtexec_shapes" => Fact::Text(crate::check::profile::trtexec_flags(m)),
            "tensorrt_profile" => Fact::Text(crate::check::profile::python_profile(m)),
            // The oldest onnxruntime that loads the model (see `needs`).
            "onnxruntime_floor" => crate::check::needs::needs(m, self.matrix)
                .into_iter()
                .find(|n| n.package == "onnxruntime")
                .and_then(|n| n.at_least)
                .map_or(Fact::Absent, Fact::Text),
            other => Fact::Unknown(format!("no model fact is called `{other}`")),
        })
    }

    fn nvidia_fact(&self, key: &str) -> Option<Fact> {
        if let Some(f) = self.model_fact(key) {
            return Some(f);
        }
        if !is_machine_fact(key) {
            return None;
        }
        let n = match self.nvidia {
            Probed::Found(n) => n,
            Probed::NotEvaluated(r) => return Some(Fact::Unknown(r.clone())),
        };
        let no_driver = driver_missing(n);
        let list = |gpus: &Probed<Vec<Gpu>>, f: fn(&Gpu) -> Option<String>| match gpus {
            Probed::Found(g) if g.is_empty() => Fact::Absent,
            Probed::Found(g) => Fact::List(g.iter().filter_map(f).collect()),
            // Without a driver no GPU is visible: that is a fact, not a gap.
            Probed::NotEvaluated(_) if no_driver => Fact::Absent,
            Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
        };
        Some(match key {
            "nvml" => Fact::Text(n.nvml.word().into()),
            "driver" => match &n.driver {
                Probed::Found(d) => Fact::Text(d.version.raw().into()),
                // No driver anywhere is a fact ("absent"); a driver that
                // could not be read is not.
                Probed::NotEvaluated(r) if driver_missing(n) => {
                    let _ = r;
                    Fact::Absent
                }
                Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
            },
            "driver.max_cuda" => match &n.driver {
                Probed::Found(d) => d.max_cuda.as_ref().map_or(Fact::Absent, |v| Fact::Text(v.raw().into())),
                Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
            },
            "driver.source" => n.driver.found().map_or(Fact::Absent, |d| Fact::Text(d.source.clone())),
            "driver.kernel_module" => match &n.kernel_module {
                Probed::Found(v) => Fact::Text(v.raw().into()),
                Probed::NotEvaluated(_) => Fact::Absent,
            },
            "gpu.compute_capability" => match &n.gpus {
                // A GPU whose name the matrix does not know has no compute
                // capability: rules about it cannot be judged.
                Probed::Found(g) if g.iter().any(|g| g.compute_capability.is_none()) => {
                    let unknown: Vec<&str> = g
                        .iter()
                        .filter(|g| g.compute_capability.is_none())
                        .map(|g| g.name.as_str())
                        .collect();
                    Fact::Unknown(format!("the compute capability of {} is not known", unknown.join(", ")))
                }
                _ => list(&n.gpus, |g| g.compute_capability.as_ref().map(|v| v.raw().to_string())),
            },
            "gpu.name" => list(&n.gpus, |g| Some(g.name.clone())),
            "gpu.architecture" => list(&n.gpus, |g| g.architecture.clone()),
            "gpu.count" => match &n.gpus {
                Probed::Found(g) => Fact::Text(g.len().to_string()),
                Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
            },
            "cuda.toolkit" => n
                .toolkits
                .iter()
                .find_map(|t| t.version.found())
                .map_or(Fact::Absent, |v| Fact::Text(v.raw().into())),
            // The machine's own cuDNN and TensorRT: the header, else the
            // newest library file that carries a full version.
            "cuda.cudnn" => machine_library(n, Library::Cudnn),
            "cuda.tensorrt" => machine_library(n, Library::Nvinfer),
            "cuda.visible_devices" => {
                n.container.cuda_visible_devices.clone().map_or(Fact::Absent, Fact::Text)
            }
            // Whether CUDA_VISIBLE_DEVICES leaves no GPU for CUDA: empty,
            // -1, or naming only devices that do not exist.
            "cuda.visible_devices_hide_all" => match (&n.container.cuda_visible_devices, &n.gpus) {
                (None, _) => Fact::Text("false".into()),
                (Some(v), gpus) => Fact::Text(hides_all(v, gpus.found().map(Vec::as_slice)).to_string()),
            },
            "host.assumed" => Fact::Text(n.assumed.to_string()),
            "gpu.device_nodes" => {
                n.container.device_nodes.map_or(Fact::Absent, |c| Fact::Text(c.to_string()))
            }
            "container.visible_devices" => {
                n.container.visible_devices.clone().map_or(Fact::Absent, Fact::Text)
            }
            "container.compat" => {
                if n.container.compat_libraries.is_empty() {
                    Fact::Absent
                } else {
                    Fact::List(n.container.compat_libraries.iter().map(|p| p.display().to_string()).collect())
                }
            }
            other => Fact::Unknown(format!("no NVIDIA fact is called `{other}`")),
        })
    }

    fn package_fact(&self, env: &PythonEnv, name: &str, attr: &str) -> Fact {
        // Facts of the distribution's version string.
        if attr == "local" || attr == "release" {
            return match distribution_version(env, name) {
                Ok(v) if attr == "local" => v.local().map_or(Fact::Absent, Fact::Text),
                Ok(v) => Fact::Text(match v.parsed() {
                    Some(p) => p.clone().without_local().to_string(),
                    None => v.raw().to_string(),
                }),
                Err(f) => f,
            };
        }
        if name == "torch" && attr == "cuda_for_driver" {
            return self.torch_cuda_for_driver(env);
        }
        // Which distribution provides the module: fixes must name the one
        // installed (`onnxruntime-gpu`), or pip adds a second copy.
        if attr == "distribution" {
            return env
                .first_installed(&self.matrix.distributions_of(name))
                .map_or(Fact::Absent, |d| Fact::Text(d.name.clone()));
        }
        // Who installed it: pip's wheels and conda's builds support
        // different Pythons.
        if attr == "installer" {
            return env
                .first_installed(&self.matrix.distributions_of(name))
                .and_then(|d| d.installer.clone())
                .map_or(Fact::Absent, Fact::Text);
        }
        // A trial that did not run (no import, --no-trials, --fast, a paste)
        // is simply not there: rules that need one stay quiet.
        if attr.starts_with("trial_") {
            return match env.import(name) {
                Some(i) if i.status == ImportStatus::Ok => i.facts.get(attr).map_or(Fact::Absent, json_fact),
                _ => Fact::Absent,
            };
        }
        // A package that is not installed has no facts at all.
        if env.distributions.found().is_some()
            && env.first_installed(&self.matrix.distributions_of(name)).is_none()
            && self.matrix.stack_package(name).is_some()
        {
            return Fact::Absent;
        }
        // Facts the probe script read from the imported module.
        if self.matrix.stack_package(name).is_some() {
            return match env.import(name) {
                Some(i) if i.status == ImportStatus::Ok => match i.facts.get(attr) {
                    Some(v) => json_fact(v),
                    None => Fact::Absent,
                },
                Some(i) if i.status == ImportStatus::NotInstalled => Fact::Absent,
                Some(i) => {
                    self.fallback(env, name, attr).unwrap_or_else(|| Fact::Unknown(i.status.describe()))
                }
                None => self
                    .fallback(env, name, attr)
                    .unwrap_or_else(|| Fact::Unknown(format!("{name} was not imported by the probe"))),
            };
        }
        Fact::Unknown(format!("no fact `{attr}` is known for {name}"))
    }

    /// What is known without the import: the package's own files (torch's
    /// version.py), a matrix table's row for the installed version (onnx's
    /// IR version), or the wheel's local label (`+cu121`).
    fn fallback(&self, env: &PythonEnv, name: &str, attr: &str) -> Option<Fact> {
        if let Some(v) = env.file_facts.get(name).and_then(|f| f.get(attr)) {
            return Some(Fact::Text(v.clone()));
        }
        let package = self.matrix.stack_package(name)?;
        if let Some((table, column)) = package.table_facts.get(attr) {
            let table = self.matrix.tables.get(table)?;
            let version = distribution_version(env, &table.key).ok()?;
            let row = super::select_row(table, version, self, self.matrix).ok()?;
            return row.values.get(column).map(|v| Fact::Text(v.clone()));
        }
        if name == "torch" && attr == "cuda" {
            let v = distribution_version(env, "torch").ok()?;
            let local = v.local()?;
            if local == "cpu" {
                return Some(Fact::Absent);
            }
            let digits = local.strip_prefix("cu")?;
            if digits.len() < 3 || !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (major, minor) = digits.split_at(digits.len() - 1);
            return Some(Fact::Text(format!("{major}.{minor}")));
        }
        None
    }
}

/// Whether a CUDA_VISIBLE_DEVICES value leaves CUDA no GPU: CUDA stops at
/// the first entry it cannot match to a device (an index out of range, a
/// UUID no GPU has, `-1`), and an empty value hides all.
/// With the GPUs unknown, only what hides every GPU anywhere counts.
fn hides_all(value: &str, gpus: Option<&[Gpu]>) -> bool {
    let Some(first) = value.split(',').map(str::trim).next().filter(|f| !f.is_empty()) else { return true };
    if let Ok(i) = first.parse::<i64>() {
        return i < 0 || gpus.is_some_and(|g| i as usize >= g.len());
    }
    if ["none", "void", "nodevfiles"].contains(&first.to_ascii_lowercase().as_str()) {
        return true;
    }
    // A UUID (GPU-..., MIG-...) or a prefix of one.
    gpus.is_some_and(|g| !g.iter().any(|g| g.uuid.as_deref().is_some_and(|u| u.starts_with(first))))
}

fn machine_library(n: &Nvidia, library: Library) -> Fact {
    n.headers
        .iter()
        .find(|h| h.component == library.component())
        .map(|h| h.version.raw().to_string())
        .or_else(|| {
            n.libraries
                .iter()
                .filter(|l| l.library == library)
                .filter_map(|l| l.version.as_ref())
                .max_by(|a, b| a.release().cmp(b.release()))
                .map(|v| v.raw().to_string())
        })
        .map_or(Fact::Absent, Fact::Text)
}

/// No NVML library and no kernel module: there is no driver on this
/// machine (or none visible in this container), which rules can judge.
fn driver_missing(n: &Nvidia) -> bool {
    n.driver_absent()
}

impl Facts<'_> {
    /// The wheel label (`cu113`) of the newest CUDA build of the installed
    /// torch release that this machine's driver runs: the CUDA releases of
    /// `cuda-releases` whose minimum driver the driver meets, newest first,
    /// the first that a `torch-cuda-arch` row of this torch release builds.
    /// Absent when none does (only a driver upgrade helps then).
    fn torch_cuda_for_driver(&self, env: &PythonEnv) -> Fact {
        let torch = match distribution_version(env, "torch") {
            Ok(v) => v.parsed().map(|p| Ver::new(p.clone().without_local().to_string())),
            Err(f) => return f,
        };
        let driver = match self.get("driver") {
            Fact::Text(d) => Ver::new(&d),
            other => return other,
        };
        let (Some(torch), Some(driver_v), Some(cuda), Some(arch)) = (
            torch,
            driver.parsed(),
            self.matrix.tables.get("cuda-releases"),
            self.matrix.tables.get("torch-cuda-arch"),
        ) else {
            return Fact::Absent;
        };
        let builds: Vec<crate::version::Spec> = arch
            .rows
            .iter()
            .filter(|r| r.spec.contains(&torch))
            .filter_map(|r| r.values.get("cuda")?.parse().ok())
            .collect();
        let mut runnable: Vec<crate::version::Version> = cuda
            .rows
            .iter()
            .filter(|r| {
                r.values
                    .get("min_driver")
                    .and_then(|m| Ver::new(m).parsed().cloned())
                    .is_some_and(|m| &m <= driver_v)
            })
            .flat_map(|r| r.spec.versions())
            .collect();
        runnable.sort();
        runnable
            .iter()
            .rev()
            .find(|v| builds.iter().any(|b| b.contains(&Ver::new(v.to_string()))))
            .and_then(|v| {
                let r = v.release();
                Some(Fact::Text(format!("cu{}{}", r.first()?, r.get(1)?)))
            })
            .unwrap_or(Fact::Absent)
    }
}

fn distribution_version<'e>(env: &'e PythonEnv, name: &str) -> Result<&'e Ver, Fact> {
    match &env.distributions {
        Probed::NotEvaluated(r) => Err(Fact::Unknown(r.clone())),
        Probed::Found(list) => list.iter().find(|d| d.name == name).map(|d| &d.version).ok_or(Fact::Absent),
    }
}

fn probed_text(p: &Probed<String>) -> Fact {
    match p {
        Probed::Found(t) => Fact::Text(t.clone()),
        Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
    }
}

fn probed_version(p: &Probed<Ver>) -> Fact {
    match p {
        Probed::Found(v) => Fact::Text(v.raw().to_string()),
        Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
    }
}

fn json_fact(v: &serde_json::Value) -> Fact {
    match v {
        serde_json::Value::Null => Fact::Absent,
        serde_json::Value::String(s) => Fact::Text(s.clone()),
        serde_json::Value::Array(a) => {
            Fact::List(a.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string)).collect())
        }
        other => Fact::Text(other.to_string()),
    }
}

/// The external-data locations of `m` with one of these problems, each
/// with what is wrong where the location alone does not say it. A file
/// recorded missing before problems were told apart counts as missing.
fn external(m: &crate::snapshot::model::ModelFacts, kinds: &[ExternalProblem]) -> Fact {
    let found: Vec<String> = m
        .external_data
        .iter()
        .filter(|e| !e.exists && kinds.contains(&e.problem.unwrap_or(ExternalProblem::Missing)))
        .map(|e| match e.problem {
            Some(p) if p != ExternalProblem::Missing => format!("{} ({})", e.location, p.describe()),
            _ => e.location.clone(),
        })
        .collect();
    if found.is_empty() { Fact::Absent } else { Fact::List(found) }
}
