//! The names of facts: what a rule's clause, a table's key, a lookup and a
//! `{placeholder}` can speak of, as one typed key.
//!
//! The matrix loader parses every name it meets into a [`FactKey`] once,
//! against the [`Vocabulary`] its stack declares, and refuses one it does
//! not know with the nearest name it does. The checks then read facts by
//! key: no fact name is parsed or looked up by string while a rule runs.
//!
//! The grammar:
//!
//! - a machine fact (`os`, `driver`, `gpu.compute_capability`, ...);
//! - `model.<fact>`: the model being checked;
//! - `runtime.<package>`: the release a model is judged against;
//! - `python`: the interpreter's version;
//! - `import.<package>`: how the probe's import of a stack package went;
//! - `<distribution>`: its installed version;
//! - `<distribution>.local` / `.release`: its local label and the version
//!   without it;
//! - `<package>.<fact>`: a fact of a stack package (what the probe read
//!   from the module, a trial's answer, its distribution, its installer);
//! - `a|b`: the first of several that is present.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// An enum of fixed names, each variant with the name rules write.
macro_rules! named {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            pub(crate) const ALL: &[(Self, &str)] = &[$((Self::$variant, $text),)*];

            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }

            fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().find(|(_, n)| *n == name).map(|(f, _)| *f)
            }
        }
    };
}

named! {
    /// A fact of the machine.
    MachineFact {
        Os = "os",
        Arch = "arch",
        Glibc = "glibc",
        Kernel = "kernel",
        Container = "container",
        L4t = "l4t",
        HostL4t = "host.l4t",
        Nvml = "nvml",
        Driver = "driver",
        DriverMaxCuda = "driver.max_cuda",
        DriverSource = "driver.source",
        DriverKernelModule = "driver.kernel_module",
        GpuComputeCapability = "gpu.compute_capability",
        GpuName = "gpu.name",
        GpuArchitecture = "gpu.architecture",
        GpuCount = "gpu.count",
        GpuDeviceNodes = "gpu.device_nodes",
        CudaToolkit = "cuda.toolkit",
        CudaCudnn = "cuda.cudnn",
        CudaTensorrt = "cuda.tensorrt",
        CudaVisibleDevices = "cuda.visible_devices",
        CudaVisibleDevicesHideAll = "cuda.visible_devices_hide_all",
        HostAssumed = "host.assumed",
        ContainerVisibleDevices = "container.visible_devices",
        ContainerCompat = "container.compat",
    }
}

impl MachineFact {
    /// Facts of the system probe (the others are the NVIDIA stack's).
    pub(crate) fn is_system(self) -> bool {
        matches!(
            self,
            Self::Os | Self::Arch | Self::Glibc | Self::Kernel | Self::Container | Self::L4t | Self::HostL4t
        )
    }
}

named! {
    /// A fact of the model being checked (`model.<name>`).
    ModelFact {
        IrVersion = "ir_version",
        FileMib = "file_mib",
        Opset = "opset",
        Domains = "domains",
        CustomDomains = "custom_domains",
        Ops = "ops",
        AtenOps = "aten_ops",
        AtenOperators = "aten_operators",
        LinearResizes = "linear_resizes",
        ShapeGathers = "shape_gathers",
        Int64Initializers = "int64_initializers",
        ExternalMissing = "external_missing",
        ExternalOutside = "external_outside",
        ExternalUnusable = "external_unusable",
        File = "file",
        OpsWithoutKernel = "ops_without_kernel",
        OpsWithoutCudaKernel = "ops_without_cuda_kernel",
        CudaKernelsFrom = "cuda_kernels_from",
        DynamicInputs = "dynamic_inputs",
        RuntimeShapeOperands = "runtime_shape_operands",
        RuntimeShapeNodes = "runtime_shape_nodes",
        ShapeTensorInputs = "shape_tensor_inputs",
        ShapeInputProfile = "shape_input_profile",
        TrtexecShapes = "trtexec_shapes",
        TensorrtProfile = "tensorrt_profile",
        OnnxruntimeFloor = "onnxruntime_floor",
    }
}

/// What `<name>.<attr>` asks of a distribution or a stack package.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Attr {
    /// The local label of the installed version (`cu121`).
    Local,
    /// The installed version without its local label.
    Release,
    /// The first release newer than the installed one that the matrix's
    /// tables name: a release that exists, for an upgrade.
    Next,
    /// Which of the package's distributions is installed.
    Distribution,
    /// Who installed it (`pip`, `conda`).
    Installer,
    /// torch's wheel label for the newest CUDA build this driver runs.
    CudaForDriver,
    /// torch's wheel label for the newest CUDA build of the installed
    /// release with kernels for every GPU (and that the driver runs).
    CudaForGpu,
    /// An answer of the package's trial (`trial_model`).
    Trial(String),
    /// A fact the stack entry declares: read by the probe from the module,
    /// from the package's files, or from a table row.
    Declared(String),
}

impl Attr {
    fn name(&self) -> &str {
        match self {
            Self::Local => "local",
            Self::Release => "release",
            Self::Next => "next",
            Self::Distribution => "distribution",
            Self::Installer => "installer",
            Self::CudaForDriver => "cuda_for_driver",
            Self::CudaForGpu => "cuda_for_gpu",
            Self::Trial(n) | Self::Declared(n) => n,
        }
    }
}

/// One fact a rule can name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FactKey {
    Machine(MachineFact),
    Model(ModelFact),
    /// The release of a stack package a model is judged against.
    Runtime(String),
    Python,
    /// How the probe's import of a stack package went.
    Import(String),
    /// A distribution's installed version.
    Version(String),
    /// A fact of a distribution or stack package.
    Of(String, Attr),
}

impl FactKey {
    /// Facts of the machine (and of the model, which is checked once) rather
    /// than of one Python environment: a rule naming only these is judged once.
    pub(crate) fn is_machine(&self) -> bool {
        matches!(self, Self::Machine(_) | Self::Model(_) | Self::Runtime(_))
    }

    /// Facts of the model and the runtime it is judged against.
    pub(crate) fn is_model(&self) -> bool {
        matches!(self, Self::Model(_) | Self::Runtime(_))
    }

    /// The distribution whose version this is, for a bare distribution name.
    pub(crate) fn distribution(&self) -> Option<&str> {
        match self {
            Self::Version(d) => Some(d),
            _ => None,
        }
    }

    /// A key for a name the doctor itself builds (not the matrix's): a
    /// machine or model fact by name, else a distribution's version, else
    /// a declared fact of a package (`torch.cuda`). Nothing is refused.
    pub(crate) fn lenient(name: &str) -> Self {
        if let Some(m) = MachineFact::from_name(name) {
            return Self::Machine(m);
        }
        if name == "python" {
            return Self::Python;
        }
        match name.split_once('.') {
            Some(("model", m)) => {
                ModelFact::from_name(m).map_or_else(|| Self::Version(name.into()), Self::Model)
            }
            Some(("runtime", p)) => Self::Runtime(p.into()),
            Some(("import", p)) => Self::Import(p.into()),
            Some((p, a)) => Self::Of(p.into(), attr_of(a)),
            None => Self::Version(name.into()),
        }
    }
}

fn attr_of(a: &str) -> Attr {
    match a {
        "local" => Attr::Local,
        "release" => Attr::Release,
        "next" => Attr::Next,
        "distribution" => Attr::Distribution,
        "installer" => Attr::Installer,
        "cuda_for_driver" => Attr::CudaForDriver,
        "cuda_for_gpu" => Attr::CudaForGpu,
        t if t.starts_with("trial_") => Attr::Trial(t.into()),
        d => Attr::Declared(d.into()),
    }
}

impl fmt::Display for FactKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Machine(m) => f.write_str(m.name()),
            Self::Model(m) => write!(f, "model.{}", m.name()),
            Self::Runtime(p) => write!(f, "runtime.{p}"),
            Self::Python => f.write_str("python"),
            Self::Import(p) => write!(f, "import.{p}"),
            Self::Version(d) => f.write_str(d),
            Self::Of(p, a) => write!(f, "{p}.{}", a.name()),
        }
    }
}

/// `a|b|c`: the first of these facts that is present.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FactRef(pub Vec<FactKey>);

impl FactRef {
    pub(crate) fn one(key: FactKey) -> Self {
        Self(vec![key])
    }

    pub(crate) fn keys(&self) -> &[FactKey] {
        &self.0
    }
}

impl fmt::Display for FactRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("|")?;
            }
            write!(f, "{k}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for FactRef {
    type Err = String;

    /// Reads a name the way [`FactKey::lenient`] does; the loader checks
    /// the keys against its [`Vocabulary`].
    fn from_str(text: &str) -> Result<Self, String> {
        if text.split('|').any(|p| p.trim().is_empty()) {
            return Err(format!("{text:?} is not a fact name"));
        }
        Ok(Self(text.split('|').map(|p| FactKey::lenient(p.trim())).collect()))
    }
}

impl serde::Serialize for FactRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for FactRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// What a stack package declares: its facts and whether it runs a trial.
#[derive(Clone, Debug, Default)]
pub struct PackageFacts {
    pub declared: BTreeSet<String>,
    pub trial: bool,
}

/// The names a matrix gives facts: its stack packages and the facts each
/// declares, and the distributions it knows.
#[derive(Clone, Debug, Default)]
pub struct Vocabulary {
    pub packages: BTreeMap<String, PackageFacts>,
    pub distributions: BTreeSet<String>,
}

impl Vocabulary {
    /// Parses `a|b`, each alternative a fact this vocabulary knows; the
    /// error names the unknown part and the nearest known name.
    pub(crate) fn parse(&self, text: &str) -> Result<FactRef, String> {
        let keys = text.split('|').map(|part| self.key(part.trim())).collect::<Result<Vec<_>, _>>()?;
        Ok(FactRef(keys))
    }

    /// [`Vocabulary::parse`] without the reason: `None` for a name it does
    /// not know.
    pub(crate) fn parse_quietly(&self, text: &str) -> Option<FactRef> {
        text.split('|').map(|part| self.known(part.trim())).collect::<Option<Vec<_>>>().map(FactRef)
    }

    /// Checks a key read leniently: the same key, or why it is unknown.
    pub(crate) fn check(&self, key: &FactRef) -> Result<(), String> {
        for k in key.keys() {
            let name = k.to_string();
            if self.known(&name).as_ref() != Some(k) {
                return Err(self.unknown(&name));
            }
        }
        Ok(())
    }

    /// One fact name.
    pub(crate) fn key(&self, name: &str) -> Result<FactKey, String> {
        self.known(name).ok_or_else(|| self.unknown(name))
    }

    fn known(&self, name: &str) -> Option<FactKey> {
        if let Some(m) = MachineFact::from_name(name) {
            return Some(FactKey::Machine(m));
        }
        if name == "python" {
            return Some(FactKey::Python);
        }
        if self.distributions.contains(name) {
            return Some(FactKey::Version(name.into()));
        }
        let (prefix, attr) = name.split_once('.')?;
        match prefix {
            "model" => return ModelFact::from_name(attr).map(FactKey::Model),
            "runtime" => return self.packages.contains_key(attr).then(|| FactKey::Runtime(attr.into())),
            "import" => return self.packages.contains_key(attr).then(|| FactKey::Import(attr.into())),
            _ => {}
        }
        let attr = attr_of(attr);
        let package = self.packages.get(prefix);
        let ok = match &attr {
            Attr::Local | Attr::Release | Attr::Next => self.distributions.contains(prefix),
            Attr::Distribution | Attr::Installer => package.is_some(),
            Attr::CudaForDriver | Attr::CudaForGpu => prefix == "torch" && package.is_some(),
            Attr::Trial(_) => package.is_some_and(|p| p.trial),
            Attr::Declared(d) => package.is_some_and(|p| p.declared.contains(d)),
        };
        ok.then(|| FactKey::Of(prefix.into(), attr))
    }

    /// Every name this vocabulary knows (trials as `trial_*`).
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = MachineFact::ALL.iter().map(|(_, n)| n.to_string()).collect();
        names.extend(ModelFact::ALL.iter().map(|(_, n)| format!("model.{n}")));
        names.push("python".into());
        for d in &self.distributions {
            names.extend([d.clone(), format!("{d}.local"), format!("{d}.release"), format!("{d}.next")]);
        }
        for (p, facts) in &self.packages {
            names.extend(["runtime", "import"].map(|w| format!("{w}.{p}")));
            names.extend(["distribution", "installer"].map(|a| format!("{p}.{a}")));
            names.extend(facts.declared.iter().map(|d| format!("{p}.{d}")));
        }
        names.extend(["torch.cuda_for_driver", "torch.cuda_for_gpu"].map(String::from));
        names
    }

    fn unknown(&self, name: &str) -> String {
        let what = if name.contains('.') {
            "no fact the matrix knows (a machine or model fact, or a fact its `stack:` declares)"
        } else {
            "no fact the matrix knows (a distribution a rule names must be listed in `packages:`)"
        };
        match nearest(name, &self.names()) {
            Some(n) => format!("`{name}` is {what}; did you mean `{n}`?"),
            None => format!("`{name}` is {what}"),
        }
    }
}

/// The known name closest to `name` by edit distance (a swap of two
/// neighbours counts once), if it is close enough to be a typo.
pub(crate) fn nearest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    let (best, d) =
        known.iter().map(|k| (k.as_str(), distance(name, k))).min_by_key(|(k, d)| (*d, k.len()))?;
    let limit = (name.chars().count() / 3).clamp(1, 3);
    (d <= limit).then_some(best)
}

/// Optimal string alignment distance.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocabulary {
        let mut v = Vocabulary::default();
        v.distributions.extend(["torch", "onnx", "onnxruntime-gpu"].map(String::from));
        let torch = PackageFacts { declared: ["cuda".to_string()].into(), trial: true };
        v.packages.insert("torch".into(), torch);
        v
    }

    #[test]
    fn every_shape_of_name_parses_and_prints_back() {
        let v = vocab();
        for name in [
            "os",
            "gpu.compute_capability",
            "model.opset",
            "runtime.torch",
            "import.torch",
            "python",
            "torch",
            "onnxruntime-gpu.local",
            "torch.release",
            "torch.cuda",
            "torch.trial_cuda",
            "torch.installer",
            "torch.cuda_for_driver",
            "torch.cuda_for_gpu",
            "onnx|torch",
        ] {
            assert_eq!(v.parse(name).map(|k| k.to_string()), Ok(name.to_string()));
        }
    }

    #[test]
    fn a_typo_is_refused_with_the_nearest_name() {
        let v = vocab();
        assert!(v.parse("torhc").unwrap_err().contains("did you mean `torch`?"));
        assert!(v.parse("gpu.compute_capabilty").unwrap_err().contains("`gpu.compute_capability`"));
        assert!(v.parse("onnx.ir_version").is_err(), "onnx declares no facts here");
        assert!(v.parse("model.nothing").is_err());
        assert!(v.parse("import.onnx").is_err(), "onnx is no stack package here");
        assert!(!v.parse("zzzzzzzz").unwrap_err().contains("did you mean"));
    }

    #[test]
    fn the_distance_counts_a_swap_once() {
        assert_eq!(distance("torhc", "torch"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("numpy", "numpy"), 0);
    }
}
