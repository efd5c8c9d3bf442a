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
use crate::snapshot::{
    Attr, Component, FactKey, FactRef, ImportStatus, Library, MachineFact, ModelFact, Nvidia, Probed,
    PythonEnv, Snapshot, System,
};
use crate::version::Ver;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fact {
    Absent,
    Unknown(String),
    Text(String),
    List(Vec<String>),
}

impl Fact {
    pub(crate) fn display(&self) -> String {
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
pub(crate) struct Facts<'a> {
    pub matrix: &'a Matrix,
    pub snapshot: Option<&'a Snapshot>,
    pub system: Option<&'a System>,
    pub system_reason: Option<&'a str>,
    pub nvidia: &'a Probed<Nvidia>,
    pub env: Option<&'a PythonEnv>,
}

impl<'a> Facts<'a> {
    pub(crate) fn for_env(snapshot: &'a Snapshot, env: Option<&'a PythonEnv>, matrix: &'a Matrix) -> Self {
        Self {
            matrix,
            snapshot: Some(snapshot),
            system: snapshot.system.found(),
            system_reason: snapshot.system.reason(),
            nvidia: &snapshot.nvidia,
            env,
        }
    }

    /// The first of the alternatives that is present; else the last
    /// reason one is unknown, else absent.
    pub(crate) fn get(&self, fact: &FactRef) -> Fact {
        let mut last = Fact::Absent;
        for key in fact.keys() {
            match self.key(key) {
                Fact::Absent => {}
                Fact::Unknown(r) => last = Fact::Unknown(r),
                found => return found,
            }
        }
        last
    }

    /// One fact.
    pub(crate) fn key(&self, key: &FactKey) -> Fact {
        match key {
            FactKey::Machine(m) if m.is_system() => self.system_fact(*m),
            FactKey::Machine(m) => self.nvidia_fact(*m),
            FactKey::Model(m) => self.model_fact(*m),
            FactKey::Runtime(name) => self.runtime(name),
            FactKey::Python => match self.env {
                Some(env) => probed_version(&env.version),
                None => not_of_machine(key),
            },
            FactKey::Import(pkg) => match self.env {
                Some(env) => match env.import(pkg) {
                    Some(i) => Fact::Text(i.status.word().into()),
                    None => Fact::Unknown(format!("{pkg} was not imported by the probe")),
                },
                None => not_of_machine(key),
            },
            FactKey::Version(name) => match self.env {
                Some(env) => {
                    distribution_version(env, name).map_or_else(|f| f, |v| Fact::Text(v.raw().to_string()))
                }
                None => not_of_machine(key),
            },
            FactKey::Of(name, attr) => match self.env {
                Some(env) => self.package_fact(env, name, attr),
                None => not_of_machine(key),
            },
        }
    }

    fn system_fact(&self, key: MachineFact) -> Fact {
        let Some(s) = self.system else {
            return Fact::Unknown(self.system_reason.unwrap_or("the system was not probed").to_string());
        };
        match key {
            MachineFact::Os => probed_text(&s.os),
            MachineFact::Arch => Fact::Text(s.arch.clone()),
            MachineFact::Glibc => probed_version(&s.glibc),
            MachineFact::Kernel => probed_text(&s.kernel),
            MachineFact::Container => s.container.clone().map_or(Fact::Absent, Fact::Text),
            MachineFact::L4t => s.l4t.clone().map_or(Fact::Absent, Fact::Text),
            MachineFact::HostL4t => s.host_l4t.clone().map_or(Fact::Absent, Fact::Text),
            other => Fact::Unknown(format!("`{}` is not a fact of the system probe", other.name())),
        }
    }

    /// The model's operators that the onnxruntime it is judged against has
    /// no `provider` kernel for (for a provider other than the CPU's, only
    /// those the CPU runs: the others fail whatever the provider).
    fn kernel_gaps(&self, m: &crate::snapshot::model::ModelFacts, provider: &str) -> Fact {
        use crate::check::needs::{CPU, lacking};
        let Fact::Text(release) = self.runtime("onnxruntime") else { return Fact::Absent };
        let release = Ver::new(release.as_str());
        let mut gaps = lacking(m, self.matrix, "onnxruntime", provider, &release);
        if provider != CPU {
            let cpu = lacking(m, self.matrix, "onnxruntime", CPU, &release);
            gaps.retain(|g| !cpu.contains(g));
        }
        if gaps.is_empty() { Fact::Absent } else { Fact::List(gaps) }
    }

    /// `runtime.<name>`: the release a model is judged against (a
    /// `--target`, else the installed one, else the machine's TensorRT).
    fn runtime(&self, name: &str) -> Fact {
        let Some(snap) = self.snapshot else { return Fact::Unknown("nothing was probed".into()) };
        if let Some(v) = snap.targets.get(name) {
            return Fact::Text(v.clone());
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
        installed.or(header).map_or(Fact::Absent, Fact::Text)
    }

    /// `model.*`: facts of the model being checked (absent without one).
    fn model_fact(&self, key: ModelFact) -> Fact {
        let Some(snap) = self.snapshot else { return Fact::Unknown("nothing was probed".into()) };
        let Some(m) = &snap.model else { return Fact::Absent };
        const STANDARD: &[&str] = &[
            "ai.onnx",
            "ai.onnx.ml",
            "com.microsoft",
            "org.pytorch.aten",
            "ai.onnx.training",
            "ai.onnx.preview.training",
        ];
        let list = |items: Vec<String>| if items.is_empty() { Fact::Absent } else { Fact::List(items) };
        match key {
            ModelFact::IrVersion => Fact::Text(m.ir_version.to_string()),
            // Whole MiB of the .onnx file itself (weights stored outside it not counted).
            ModelFact::FileMib => Fact::Text((m.file_bytes >> 20).to_string()),
            ModelFact::Opset => m.opsets.get("ai.onnx").map_or(Fact::Absent, |v| Fact::Text(v.to_string())),
            ModelFact::Domains => list(m.ops.keys().chain(m.opsets.keys()).cloned().collect()),
            ModelFact::CustomDomains => {
                let mut d: Vec<String> =
                    m.ops.keys().filter(|d| !STANDARD.contains(&d.as_str())).cloned().collect();
                d.dedup();
                list(d)
            }
            ModelFact::Ops => list(m.ops.values().flat_map(|ops| ops.keys().cloned()).collect()),
            ModelFact::AtenOps => {
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
            ModelFact::AtenOperators => list(m.aten_operators.clone()),
            ModelFact::LinearResizes => Fact::Text(m.linear_resizes.to_string()),
            ModelFact::ShapeGathers => Fact::Text(m.shape_gathers.to_string()),
            ModelFact::Int64Initializers => Fact::Text(m.int64_initializers.to_string()),
            ModelFact::ExternalMissing => external(m, &[ExternalProblem::Missing]),
            ModelFact::ExternalOutside => external(
                m,
                &[ExternalProblem::Absolute, ExternalProblem::OutsideFolder, ExternalProblem::LinkOutside],
            ),
            ModelFact::ExternalUnusable => external(m, &[ExternalProblem::Empty, ExternalProblem::NotAFile]),
            ModelFact::File => Fact::Text(m.path.display().to_string()),
            ModelFact::OpsWithoutKernel => self.kernel_gaps(m, crate::check::needs::CPU),
            ModelFact::OpsWithoutCudaKernel => self.kernel_gaps(m, CUDA),
            // The first release with CUDA kernels for all of those.
            ModelFact::CudaKernelsFrom => match self.kernel_gaps(m, CUDA) {
                Fact::List(gaps) => {
                    crate::check::needs::first_running(m, self.matrix, "onnxruntime", CUDA, &gaps)
                        .map_or(Fact::Absent, Fact::Text)
                }
                _ => Fact::Absent,
            },
            ModelFact::DynamicInputs => list(crate::check::profile::describe(m)),
            // Shape operands not held as constants: `Resize.scales`.
            ModelFact::RuntimeShapeOperands => {
                list(m.shape_operands.iter().map(|o| o.operand.clone()).collect())
            }
            ModelFact::RuntimeShapeNodes => list(crate::check::profile::runtime_shape_nodes(m)),
            ModelFact::ShapeTensorInputs => list(crate::check::profile::shape_tensor_inputs(m)),
            ModelFact::ShapeInputProfile => Fact::Text(crate::check::profile::shape_input_profile(m)),
            ModelFact::TrtexecShapes => Fact::Text(crate::check::profile::trtexec_flags(m)),
            ModelFact::TensorrtProfile => Fact::Text(crate::check::profile::python_profile(m)),
            // The oldest onnxruntime that loads the model (see `needs`).
            ModelFact::OnnxruntimeFloor => crate::check::needs::needs(m, self.matrix)
                .into_iter()
                .find(|n| n.package == "onnxruntime")
                .and_then(|n| n.at_least)
                .map_or(Fact::Absent, Fact::Text),
        }
    }

    fn nvidia_fact(&self, key: MachineFact) -> Fact {
        let n = match self.nvidia {
            Probed::Found(n) => n,
            Probed::NotEvaluated(r) => return Fact::Unknown(r.clone()),
        };
        let no_driver = driver_missing(n);
        let list = |gpus: &Probed<Vec<Gpu>>, f: fn(&Gpu) -> Option<String>| match gpus {
            Probed::Found(g) if g.is_empty() => Fact::Absent,
            Probed::Found(g) => Fact::List(g.iter().filter_map(f).collect()),
            // Without a driver no GPU is visible: that is a fact, not a gap.
            Probed::NotEvaluated(_) if no_driver => Fact::Absent,
            Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
        };
        match key {
            MachineFact::Nvml => Fact::Text(n.nvml.word().into()),
            MachineFact::Driver => match &n.driver {
                Probed::Found(d) => Fact::Text(d.version.raw().into()),
                // No driver anywhere is a fact ("absent"); a driver that
                // could not be read is not.
                Probed::NotEvaluated(r) if driver_missing(n) => {
                    let _ = r;
                    Fact::Absent
                }
                Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
            },
            MachineFact::DriverMaxCuda => match &n.driver {
                Probed::Found(d) => d.max_cuda.as_ref().map_or(Fact::Absent, |v| Fact::Text(v.raw().into())),
                Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
            },
            MachineFact::DriverSource => {
                n.driver.found().map_or(Fact::Absent, |d| Fact::Text(d.source.clone()))
            }
            MachineFact::DriverKernelModule => match &n.kernel_module {
                Probed::Found(v) => Fact::Text(v.raw().into()),
                Probed::NotEvaluated(_) => Fact::Absent,
            },
            MachineFact::GpuComputeCapability => match &n.gpus {
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
            MachineFact::GpuName => list(&n.gpus, |g| Some(g.name.clone())),
            MachineFact::GpuArchitecture => list(&n.gpus, |g| g.architecture.clone()),
            MachineFact::GpuCount => match &n.gpus {
                Probed::Found(g) => Fact::Text(g.len().to_string()),
                Probed::NotEvaluated(r) => Fact::Unknown(r.clone()),
            },
            MachineFact::CudaToolkit => n
                .toolkits
                .iter()
                .find_map(|t| t.version.found())
                .map_or(Fact::Absent, |v| Fact::Text(v.raw().into())),
            // The machine's own cuDNN and TensorRT: the header, else the
            // newest library file that carries a full version.
            MachineFact::CudaCudnn => machine_library(n, Library::Cudnn),
            MachineFact::CudaTensorrt => machine_library(n, Library::Nvinfer),
            MachineFact::CudaVisibleDevices => {
                n.container.cuda_visible_devices.clone().map_or(Fact::Absent, Fact::Text)
            }
            // Whether CUDA_VISIBLE_DEVICES leaves no GPU for CUDA: empty,
            // -1, or naming only devices that do not exist.
            MachineFact::CudaVisibleDevicesHideAll => match (&n.container.cuda_visible_devices, &n.gpus) {
                (None, _) => Fact::Text("false".into()),
                (Some(v), gpus) => Fact::Text(hides_all(v, gpus.found().map(Vec::as_slice)).to_string()),
            },
            MachineFact::HostAssumed => Fact::Text(n.assumed.to_string()),
            MachineFact::GpuDeviceNodes => {
                n.container.device_nodes.map_or(Fact::Absent, |c| Fact::Text(c.to_string()))
            }
            MachineFact::ContainerVisibleDevices => {
                n.container.visible_devices.clone().map_or(Fact::Absent, Fact::Text)
            }
            MachineFact::ContainerCompat => {
                if n.container.compat_libraries.is_empty() {
                    Fact::Absent
                } else {
                    Fact::List(n.container.compat_libraries.iter().map(|p| p.display().to_string()).collect())
                }
            }
            MachineFact::Os
            | MachineFact::L4t
            | MachineFact::HostL4t
            | MachineFact::Arch
            | MachineFact::Glibc
            | MachineFact::Kernel
            | MachineFact::Container => self.system_fact(key),
        }
    }

    fn package_fact(&self, env: &PythonEnv, name: &str, attr: &Attr) -> Fact {
        let installed = || env.first_installed(&self.matrix.distributions_of(name));
        let attr = match attr {
            // Facts of the distribution's version string.
            Attr::Local | Attr::Release => {
                return match distribution_version(env, name) {
                    Ok(v) if *attr == Attr::Local => v.local().map_or(Fact::Absent, Fact::Text),
                    Ok(v) => Fact::Text(match v.parsed() {
                        Some(p) => p.clone().without_local().to_string(),
                        None => v.raw().to_string(),
                    }),
                    Err(f) => f,
                };
            }
            Attr::CudaForDriver => return self.torch_cuda_for_driver(env),
            Attr::CudaForGpu => return self.torch_cuda_for_gpu(env),
            Attr::Next => return self.next_release(env, name),
            // Which distribution provides the module: fixes must name the one
            // installed (`onnxruntime-gpu`), or pip adds a second copy.
            Attr::Distribution => return installed().map_or(Fact::Absent, |d| Fact::Text(d.name.clone())),
            // Who installed it: pip's wheels and conda's builds support
            // different Pythons.
            Attr::Installer => {
                return installed().and_then(|d| d.installer.clone()).map_or(Fact::Absent, Fact::Text);
            }
            // A trial that did not run (no import, --no-trials, --fast, a paste)
            // is simply not there: rules that need one stay quiet.
            Attr::Trial(t) => {
                return match env.import(name) {
                    Some(i) if i.status == ImportStatus::Ok => i.facts.get(t).map_or(Fact::Absent, json_fact),
                    _ => Fact::Absent,
                };
            }
            Attr::Declared(d) => d.as_str(),
        };
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
                // What the probe did not read may be in the package's files or
                // a table row for its version (`onnxruntime.max_opset`).
                Some(i) if i.status == ImportStatus::Ok => match i.facts.get(attr) {
                    Some(v) => json_fact(v),
                    None => self.fallback(env, name, attr).unwrap_or(Fact::Absent),
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
            let version = match self.get(table.key_fact.as_ref()?) {
                Fact::Text(v) => v,
                // Several GPUs: one row only when they agree.
                Fact::List(l) if l.iter().all(|v| *v == l[0]) => l.first()?.clone(),
                _ => return None,
            };
            let (_, row) = super::select_row(table, &Ver::new(version), self, self.matrix).ok()?;
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

/// What an environment's fact is when judged for the machine alone.
fn not_of_machine(key: &FactKey) -> Fact {
    Fact::Unknown(format!("`{key}` is a fact of a Python environment"))
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
        let driver = match self.nvidia_fact(MachineFact::Driver) {
            Fact::Text(d) => Ver::new(&d),
            other => return other,
        };
        self.torch_cuda_build(env, Some(&driver), None)
    }

    /// The wheel label of the newest CUDA build of the installed torch
    /// release whose architecture list (`torch-cuda-arch`) runs on every
    /// GPU of the machine, among the CUDA releases its driver runs when the
    /// driver is known. Absent when no build of this release has kernels
    /// for the GPUs (only another release helps then).
    fn torch_cuda_for_gpu(&self, env: &PythonEnv) -> Fact {
        let ccs: Vec<(u64, u64)> = match self.nvidia_fact(MachineFact::GpuComputeCapability) {
            Fact::List(l) => l
                .iter()
                .filter_map(|cc| match Ver::new(cc.as_str()).release() {
                    [major, minor, ..] => Some((*major, *minor)),
                    _ => None,
                })
                .collect(),
            Fact::Text(_) | Fact::Absent => return Fact::Absent,
            unknown @ Fact::Unknown(_) => return unknown,
        };
        if ccs.is_empty() {
            return Fact::Absent;
        }
        let driver = match self.nvidia_fact(MachineFact::Driver) {
            Fact::Text(d) => Some(Ver::new(&d)),
            _ => None,
        };
        self.torch_cuda_build(env, driver.as_ref(), Some(&ccs))
    }

    /// The newest CUDA release of `cuda-releases` that a `torch-cuda-arch`
    /// row of the installed torch release builds, that `driver` runs (when
    /// given) and whose architectures run on every one of `gpus` (when
    /// given), as a wheel label.
    fn torch_cuda_build(&self, env: &PythonEnv, driver: Option<&Ver>, gpus: Option<&[(u64, u64)]>) -> Fact {
        let torch = match distribution_version(env, "torch") {
            Ok(v) => v.parsed().map(|p| Ver::new(p.clone().without_local().to_string())),
            Err(f) => return f,
        };
        let (Some(torch), Some(cuda), Some(arch)) =
            (torch, self.matrix.tables.get("cuda-releases"), self.matrix.tables.get("torch-cuda-arch"))
        else {
            return Fact::Absent;
        };
        let integrated = self.matrix.integrated_compute_capabilities();
        let covers = |row: &crate::matrix::Row| match gpus {
            None => true,
            Some(gpus) => {
                row.values.get("arch_list").and_then(|l| crate::matrix::Arch::parse_list(l).ok()).is_some_and(
                    |archs| {
                        gpus.iter().all(|&(major, minor)| {
                            let tegra = integrated.contains(&(major, minor));
                            archs.iter().any(|a| a.runs_on(major, minor, tegra))
                        })
                    },
                )
            }
        };
        let builds: Vec<crate::version::Spec> = arch
            .rows
            .iter()
            .filter(|r| r.spec.contains(&torch) && covers(r))
            .filter_map(|r| r.values.get("cuda")?.parse().ok())
            .collect();
        let driver = driver.and_then(Ver::parsed);
        let mut runnable: Vec<crate::version::Version> = cuda
            .rows
            .iter()
            .filter(|r| {
                let Some(driver) = driver else { return true };
                r.values
                    .get("min_driver")
                    .and_then(|m| Ver::new(m).parsed().cloned())
                    .is_some_and(|m| &m <= driver)
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

impl Facts<'_> {
    /// The oldest release newer than the installed `name` that a row of a
    /// table keyed by `name` starts at: absent when the installed release
    /// is the newest the matrix knows (an upgrade pip could not resolve).
    fn next_release(&self, env: &PythonEnv, name: &str) -> Fact {
        let installed = match distribution_version(env, name) {
            Ok(v) => match v.parsed() {
                Some(p) => p.clone().without_local(),
                None => return Fact::Unknown(format!("{name} {v} is not a version")),
            },
            Err(f) => return f,
        };
        // Tables of this distribution first of all: onnxruntime's releases
        // name some that onnxruntime-gpu never had.
        // The list of published releases says where nothing changes too.
        let keyed = |t: &&crate::matrix::Table| {
            t.published.is_none()
                && t.key_fact
                    .as_ref()
                    .and_then(|k| k.keys().first())
                    .is_some_and(|k| k.distribution() == Some(name))
        };
        self.matrix
            .tables
            .values()
            .filter(keyed)
            .flat_map(|t| t.rows.iter().flat_map(|r| r.spec.floors()))
            .filter(|v| *v > installed)
            .min()
            .map_or(Fact::Absent, |v| Fact::Text(v.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `.next` says after the installed release of a distribution.
    fn next(paste: &str, dist: &str) -> Fact {
        let matrix = Matrix::load(&[]).unwrap();
        let snapshot = crate::import::import(paste, &matrix);
        let env = snapshot.pythons.first().expect("a pasted environment");
        Facts::for_env(&snapshot, Some(env), &matrix).key(&FactKey::Of(dist.into(), Attr::Next))
    }

    #[test]
    fn the_next_release_is_one_a_row_starts_at_and_never_an_upper_bound() {
        // onnxruntime-releases starts rows at 1.25 and 1.32; `<1.32` is no release.
        let Fact::Text(v) = next("onnxruntime==1.30.0\n", "onnxruntime") else { panic!("no next release") };
        assert!(Ver::new(v.as_str()).parsed() > Ver::new("1.30.0").parsed(), "{v}");
        // onnxruntime-gpu's own table decides: its builds stop before 1.32.
        assert_eq!(next("onnxruntime-gpu==1.31.1\n", "onnxruntime-gpu"), Fact::Absent);
        assert_eq!(next("numpy==2.1.0\n", "onnxruntime"), Fact::Absent);
    }
}
