//! What the matrix holds once loaded: rules, tables, the stack, GPU models,
//! and the conditions rules are written in.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::template::Template;
use super::{FunctionOps, ProviderKernels};
use crate::snapshot::{Component, FactRef};
pub use crate::snapshot::{FileFact, Severity, StackLibrary, StackPackage};
use crate::version::Spec;

/// The checks Rust performs itself. Each is worded by the matrix rule of
/// the same code (`builtin: true`), which gives it its severity, texts and
/// sources; the loader refuses a matrix that lacks one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuiltinCheck {
    ImportFailed,
    ImportTimedOut,
    ImportCrashed,
    DeclaredRequirementUnmet,
    DeclaredRequirementMissing,
    DistributionShadowed,
    ModuleShadowedByLocalFile,
    PythonNotEvaluated,
    NoPythonFound,
    TensorrtSeveralVersions,
    PastedFactsConflict,
    ExpectationNotMet,
    VcRuntimeMissing,
    VcRuntimeOlderThanBuild,
    PipOlderThanWheelTags,
}

impl BuiltinCheck {
    pub(crate) const ALL: &[Self] = &[
        Self::ImportFailed,
        Self::ImportTimedOut,
        Self::ImportCrashed,
        Self::DeclaredRequirementUnmet,
        Self::DeclaredRequirementMissing,
        Self::DistributionShadowed,
        Self::ModuleShadowedByLocalFile,
        Self::PythonNotEvaluated,
        Self::NoPythonFound,
        Self::TensorrtSeveralVersions,
        Self::PastedFactsConflict,
        Self::ExpectationNotMet,
        Self::VcRuntimeMissing,
        Self::VcRuntimeOlderThanBuild,
        Self::PipOlderThanWheelTags,
    ];

    pub(crate) fn code(self) -> &'static str {
        match self {
            Self::ImportFailed => "import-failed",
            Self::ImportTimedOut => "import-timed-out",
            Self::ImportCrashed => "import-crashed",
            Self::DeclaredRequirementUnmet => "declared-requirement-unmet",
            Self::DeclaredRequirementMissing => "declared-requirement-missing",
            Self::DistributionShadowed => "distribution-shadowed",
            Self::ModuleShadowedByLocalFile => "module-shadowed-by-local-file",
            Self::PythonNotEvaluated => "python-not-evaluated",
            Self::NoPythonFound => "no-python-found",
            Self::TensorrtSeveralVersions => "tensorrt-several-versions",
            Self::PastedFactsConflict => "pasted-facts-conflict",
            Self::ExpectationNotMet => "expectation-not-met",
            Self::VcRuntimeMissing => "vc-runtime-missing",
            Self::VcRuntimeOlderThanBuild => "vc-runtime-older-than-build",
            Self::PipOlderThanWheelTags => "pip-older-than-wheel-tags",
        }
    }
}

/// What a fact must look like for a condition to hold.
#[derive(Clone, Debug)]
pub enum Condition {
    /// The fact exists (a package is installed, a value is known).
    Present,
    /// The fact does not exist (a package is not installed).
    Absent,
    /// The fact's text equals this (case-insensitive), or a list contains it.
    Is(String),
    /// The negation of [`Condition::Is`].
    IsNot(String),
    /// The fact's text (or some list element) contains this, case-insensitively.
    Contains(String),
    /// The fact is a version inside this specifier set (for a list: some
    /// element is).
    Version(Spec),
    /// Every compute capability in the fact can run code compiled for this
    /// CUDA architecture list (`sm_80 sm_86 compute_90`, `7.5;8.0;9.0+PTX`):
    /// a cubin runs on its own major at an equal or higher minor, PTX on
    /// anything at or above its version.
    RunsOn(Vec<Arch>),
    /// No value of the fact (a text, or any list element) is one of these
    /// words, case-insensitively: `none of TopK NonZero`.
    NoneOf(Vec<String>),
    /// Some value of the fact is one of these words: `one of void none`.
    OneOf(Vec<String>),
}

/// One entry of a CUDA architecture list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arch {
    pub major: u64,
    pub minor: u64,
    pub ptx: bool,
}

impl Arch {
    /// Reads `sm_86`, `compute_90`, `8.6`, `9.0+PTX`, `sm_90a`, `sm_100f`.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        let mut out = Vec::new();
        for token in text.split(|c: char| c.is_whitespace() || c == ';' || c == ',').filter(|t| !t.is_empty())
        {
            let (body, ptx_suffix) = match token.strip_suffix("+PTX") {
                Some(b) => (b, true),
                None => (token, false),
            };
            let (digits, ptx) = if let Some(d) = body.strip_prefix("sm_") {
                (d, ptx_suffix)
            } else if let Some(d) = body.strip_prefix("compute_") {
                (d, true)
            } else {
                (body, ptx_suffix)
            };
            let digits = digits.trim_end_matches(['a', 'f']);
            let bad = || format!("{token:?} is not a CUDA architecture");
            let (major, minor) = match digits.split_once('.') {
                Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
                None if digits.len() >= 2 && digits.chars().all(|c| c.is_ascii_digit()) => {
                    let (a, b) = digits.split_at(digits.len() - 1);
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?)
                }
                None => return Err(bad()),
            };
            out.push(Arch { major, minor, ptx });
            if ptx_suffix && !body.starts_with("compute_") {
                // "9.0+PTX" is both the cubin and the PTX.
                out.push(Arch { major, minor, ptx: false });
            }
        }
        if out.is_empty() {
            return Err("an empty CUDA architecture list".into());
        }
        Ok(out)
    }

    /// Whether a GPU of compute capability `major.minor` can run this code.
    /// A cubin runs on later minors of its major, except on integrated
    /// (Tegra) GPUs, which run only cubins built for exactly their compute
    /// capability; PTX is compiled for anything at least as new.
    pub(crate) fn runs_on(&self, major: u64, minor: u64, integrated: bool) -> bool {
        if self.ptx {
            (major, minor) >= (self.major, self.minor)
        } else if integrated {
            (major, minor) == (self.major, self.minor)
        } else {
            major == self.major && minor >= self.minor
        }
    }
}

impl Condition {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        Ok(match t {
            "present" => Self::Present,
            "absent" => Self::Absent,
            // A table cell listing nothing (`none of {row.unsupported}` for
            // a release that supports everything): holds for any value.
            "none of" => Self::NoneOf(Vec::new()),
            _ => {
                if let Some(rest) = t.strip_prefix("none of ") {
                    Self::NoneOf(rest.split_whitespace().map(str::to_string).collect())
                } else if let Some(rest) = t.strip_prefix("one of ") {
                    let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
                    if words.is_empty() {
                        return Err("`one of` needs at least one word".into());
                    }
                    Self::OneOf(words)
                } else if let Some(rest) = t.strip_prefix("contains ") {
                    Self::Contains(rest.trim().to_string())
                } else if let Some(rest) = t.strip_prefix("runs on ") {
                    Self::RunsOn(Arch::parse_list(rest)?)
                } else if let Some(rest) = t.strip_prefix("is not ") {
                    Self::IsNot(rest.trim().to_string())
                } else if let Some(rest) = t.strip_prefix("is ") {
                    Self::Is(rest.trim().to_string())
                } else {
                    Self::Version(t.parse().map_err(|e| format!("invalid version specifier {t:?}: {e}"))?)
                }
            }
        })
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Present => f.write_str("present"),
            Self::Absent => f.write_str("absent"),
            Self::Is(t) => write!(f, "is {t}"),
            Self::IsNot(t) => write!(f, "is not {t}"),
            Self::Contains(t) => write!(f, "contains {t}"),
            Self::Version(s) => write!(f, "{s}"),
            Self::NoneOf(words) => write!(f, "none of {}", words.join(" ")),
            Self::OneOf(words) => write!(f, "one of {}", words.join(" ")),
            Self::RunsOn(list) => {
                let names: Vec<String> = list
                    .iter()
                    .map(|a| format!("{}_{}{}", if a.ptx { "compute" } else { "sm" }, a.major, a.minor))
                    .collect();
                write!(f, "runs on {}", names.join(" "))
            }
        }
    }
}

/// A condition on one fact. One written in terms of a table row
/// (`"<={row.max_ir}"`) is compiled for every row of the rule's table when
/// the matrix loads, so evaluation cannot meet a bad specifier; one naming
/// another fact (`"is {torch.local}"`) is filled with that fact's value
/// when the rule runs.
#[derive(Clone, Debug)]
pub enum Cond {
    Fixed(Condition),
    Template {
        template: Template,
        /// The condition for each row of the rule's table, by row index,
        /// when the template names only row columns (set by the loader).
        per_row: Vec<Condition>,
    },
}

impl Cond {
    /// A condition as written: fixed, or a template whose syntax is
    /// checked once its placeholders are known.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text.contains('{') {
            let template = Template::parse(text);
            if template.slots().next().is_some() {
                return Ok(Self::Template { template, per_row: Vec::new() });
            }
        }
        Condition::parse(text).map(Self::Fixed)
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(c) => write!(f, "{c}"),
            Self::Template { template, .. } => write!(f, "{template}"),
        }
    }
}

/// A clause of a rule: a fact and what it must look like.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Clause {
    pub fact: FactRef,
    #[serde(with = "as_text")]
    pub condition: Cond,
    /// Where the clause was written.
    pub origin: Origin,
}

/// `lookup: TABLE` picks a row of TABLE by the table's key fact;
/// `lookup: TABLE by FACT` picks it by another fact (one CUDA table serves
/// torch's and onnxruntime's CUDA versions), or, in a signature, by one of
/// its named groups.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lookup {
    pub table: String,
    pub by: Option<String>,
    /// The fact the row is chosen by (`by`, else the table's key), as the
    /// loader compiled it; `None` when `by` names a signature's group.
    #[serde(skip)]
    pub fact: Option<FactRef>,
    /// Where the lookup was written.
    pub origin: Origin,
}

impl Lookup {
    pub(crate) fn parse(text: &str) -> Self {
        let (table, by) = match text.split_once(" by ") {
            Some((t, f)) => (t.trim().into(), Some(f.trim().into())),
            None => (text.trim().into(), None),
        };
        Self { table, by, fact: None, origin: Origin::default() }
    }
}

/// The texts of a data rule, compiled: every `{placeholder}` a fact or a
/// column of the rule's table (set by the loader).
#[derive(Clone, Debug, Default)]
pub struct Texts {
    pub message: Template,
    pub why: Template,
    pub fixes: Vec<Template>,
}

/// Serialises a value as the text it was parsed from.
mod as_text {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub(crate) fn deserialize<'de, T: FromStr<Err = String>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<T, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for Cond {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s)
    }
}

/// Where something in the matrix was written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub file: String,
    pub line: u64,
    pub column: u64,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// How a rule is judged.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// When the `when` clauses hold (after an optional table lookup), the
    /// `require` clauses must hold too; with no `require`, `when` alone fires.
    Facts {
        when: Vec<Clause>,
        lookup: Option<Lookup>,
        require: Vec<Clause>,
        /// Clauses that, every one true, keep the rule quiet; one whose
        /// fact is unknown does not.
        unless: Vec<Clause>,
        #[serde(skip)]
        texts: Texts,
    },
    /// A check Rust performs itself (import failures, declared requirements);
    /// the matrix supplies its text, severity and sources.
    Builtin,
    /// An error message users meet (a regex over one line of pasted text,
    /// named captures usable as `{name}` in the texts). When a rule listed
    /// in `explained_by` fires on the facts, the line becomes that
    /// finding's evidence instead of a finding of its own.
    Signature {
        #[serde(rename = "pattern")]
        regex: LazyRegex,
        explained_by: Vec<String>,
        /// A table row to name in the texts (`{row.max_opset}`), chosen by
        /// the paste's facts (the torch it shows) when the line matches.
        lookup: Option<Lookup>,
        /// The captures naming an ATen operator (`op|op2`), looked up in
        /// the matrix's `torch_symbolics` for `{aten.opset}`, `{aten.torch}`, `{aten.at_opset}`.
        aten: Option<String>,
        /// Which change of a Python API the line is read against
        /// (`python_apis`): `added` (the code is newer than the package) or
        /// `removed` (the package is newer than the code).
        api: Option<ApiChange>,
        /// A symptom's likely causes, most likely first: the line shows
        /// what went wrong but not which of these caused it.
        likely: Vec<Likely>,
    },
}

/// One likely cause of a symptom: when it applies (clauses over the
/// paste's facts; a clause no fact decides keeps it), the command that
/// confirms or rules it out, and its fix.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Likely {
    pub cause: String,
    pub when: Vec<Clause>,
    /// Clauses that, every one true of the paste's facts, decide that this
    /// is the cause (empty: no facts decide it).
    #[serde(default)]
    pub decided_by: Vec<Clause>,
    pub confirm: String,
    pub fix: String,
    pub source: String,
}

/// When a Python API of a stack package appeared or went away: a module,
/// a module's attribute, or a function's keyword argument
/// (`torch.onnx.export(example_outputs)`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PythonApi {
    pub package: String,
    pub added: Option<String>,
    pub removed: Option<String>,
    pub source: String,
}

/// The change of an API a signature rule explains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiChange {
    Added,
    Removed,
    /// Added by one release and removed by a later one, where the paste
    /// does not say which release is installed: either side of the window.
    Window,
}

/// When torch's TorchScript exporter learnt an ATen operator: the first
/// torch release that registers a symbolic for it, and the lowest opset.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TorchSymbolic {
    pub opset: i64,
    pub torch: String,
    pub source: String,
}

impl super::Matrix {
    /// The oldest torch release the exporter history was read from: an
    /// operator first seen there is exported by every release.
    pub(crate) fn torch_symbolics_oldest(&self) -> Option<crate::version::Version> {
        self.torch_symbolics
            .values()
            .filter_map(|s| crate::version::Ver::new(s.torch.as_str()).parsed().cloned())
            .min()
    }
}

impl RuleKind {
    /// The table lookup of a data or signature rule.
    pub(crate) fn lookup(&self) -> Option<&Lookup> {
        match self {
            Self::Facts { lookup, .. } | Self::Signature { lookup, .. } => lookup.as_ref(),
            Self::Builtin => None,
        }
    }
}

/// A signature's regex, compiled the first time a paste is read: compiling
/// every signature costs more than loading the rest of the matrix, and only
/// `diagnose` needs them. The loader has already checked the syntax.
#[derive(Clone, Debug)]
pub struct LazyRegex {
    pattern: String,
    compiled: std::sync::OnceLock<Option<regex::Regex>>,
}

impl LazyRegex {
    pub(crate) fn new(pattern: &str) -> Self {
        Self { pattern: pattern.to_string(), compiled: std::sync::OnceLock::new() }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The compiled regex; `None` only for a pattern over the regex size
    /// limits, which then matches nothing.
    pub(crate) fn get(&self) -> Option<&regex::Regex> {
        self.compiled.get_or_init(|| regex::Regex::new(&self.pattern).ok()).as_ref()
    }
}

impl Serialize for LazyRegex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.pattern)
    }
}

impl<'de> Deserialize<'de> for LazyRegex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::new(&String::deserialize(d)?))
    }
}

/// A GPU model the matrix knows, to tell a compute capability from a name
/// (pasted reports and old nvidia-smi say only the name).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GpuModel {
    /// A case-insensitive substring of the marketing name ("RTX 5090").
    pub name: String,
    pub compute_capability: String,
    pub architecture: String,
    /// An integrated (Tegra, Jetson) GPU: no binary compatibility with
    /// other compute capabilities.
    pub integrated: bool,
}

/// A Linux release and the glibc it ships, to tell the glibc from the OS
/// name a paste gives ("CentOS Linux release 7.6.1810").
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OsRelease {
    pub name: String,
    /// Matches the OS names people write for this release.
    pub pattern: LazyRegex,
    pub glibc: String,
}

/// A platform whose release number fixes the versions of the stack it
/// ships: an NGC container release (`nvcr.io/nvidia/pytorch:24.01-py3`) or
/// a JetPack release (its L4T release too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Ngc,
    Jetpack,
}

/// What one platform release ships, from its release notes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformRelease {
    pub platform: Platform,
    /// `24.01` (NGC), `5.1.2` (JetPack).
    pub release: String,
    /// The L4T release of a JetPack release (`35.4.1`).
    pub l4t: Option<String>,
    /// The torch of the NGC PyTorch container (`2.2.0a0+81ea7a4`).
    pub torch: Option<String>,
    pub cuda: Option<String>,
    pub cudnn: Option<String>,
    pub tensorrt: Option<String>,
    pub python: Option<String>,
    /// `Ubuntu 22.04`.
    pub os: Option<String>,
    pub source: String,
}

/// A pip package that ships a shared library, for one CUDA major: what a
/// fix installs when the loader cannot find that library anywhere.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LibraryWheel {
    /// The exact soname (`libcurand.so.10`).
    pub soname: String,
    /// The CUDA major the wheel is built for; empty when not tied to one.
    pub cuda: String,
    pub package: String,
    /// A specifier when the package's newest release no longer ships the
    /// soname (`<9` for cuDNN 8).
    pub spec: Option<String>,
    /// Where the file lands, relative to site-packages.
    pub dir: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rule {
    pub code: String,
    pub severity: Severity,
    pub components: Vec<Component>,
    /// One line for `onnx-doctor rules`.
    pub summary: String,
    /// The finding's message; `{fact}` and `{row.column}` are filled in.
    pub message: String,
    pub why: String,
    /// Commands, best first.
    pub fixes: Vec<String>,
    pub sources: Vec<String>,
    /// When the fact behind the rule became true: the release or report
    /// date of its first source (`YYYY-MM-DD`).
    pub since: Option<String>,
    /// Rules whose findings this rule's finding replaces: a runtime's own
    /// answer (a trial) over the matrix's prediction of it.
    pub supersedes: Vec<String>,
    /// Where the problem a finding names lies: the installation (the
    /// default) or the model and the code around it.
    pub cause: Cause,
    pub kind: RuleKind,
    pub origin: Origin,
}

/// What a rule's finding blames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A version, a build, a missing library, the driver: what is installed.
    #[default]
    Environment,
    /// The model, or the code that exports or runs it: what the installation
    /// is not at fault for, though a newer release may accept it.
    Model,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The releases of the table's key this row describes.
    pub versions: String,
    pub spec: Spec,
    pub values: BTreeMap<String, String>,
    /// The table's `matches` columns of this row, compiled (set by the loader).
    #[serde(skip)]
    pub conditions: Vec<Condition>,
    pub sources: Vec<String>,
    pub origin: Origin,
}

/// A platform the package index serves wheels for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WheelPlatform {
    #[serde(rename = "linux-x86_64")]
    LinuxX86_64,
    #[serde(rename = "linux-aarch64")]
    LinuxAarch64,
    #[serde(rename = "windows-x86_64")]
    WindowsX86_64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    pub name: String,
    pub description: String,
    /// The fact whose version selects a row (`onnxruntime`), as written.
    pub key: String,
    /// The key as the loader compiled it; `None` for a table only
    /// signatures look up by a group of their own.
    #[serde(skip)]
    pub key_fact: Option<FactRef>,
    /// Extra facts a row must match, each against a column holding a
    /// condition (`torch.cuda` against the `cuda` column: `"==12.6.*"`).
    pub matches: Vec<(FactRef, String)>,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// The rows are every release the package index serves for this
    /// platform (`matrix/published.yaml`): a release outside them does not
    /// exist for pip there, and a row's `python` says which CPythons have
    /// its wheels.
    pub published: Option<WheelPlatform>,
    pub origin: Origin,
}

/// The loaded, validated matrix.
#[derive(Clone, Debug)]
pub struct Matrix {
    /// The embedded matrix's date ("2026-11-22").
    pub version: String,
    /// SHA-256 over every file that was loaded, in load order.
    pub hash: String,
    /// Directories layered on top with `--matrix`.
    pub overlays: Vec<String>,
    /// Distributions whose metadata the doctor reads in full.
    pub packages: BTreeSet<String>,
    /// The Python packages the probe imports, in import order.
    pub stack: Vec<StackPackage>,
    pub tables: BTreeMap<String, Table>,
    /// Sorted by code.
    pub rules: Vec<Rule>,
    pub gpu_models: Vec<GpuModel>,
    /// Which pip package ships each CUDA, cuDNN and TensorRT library.
    pub library_wheels: Vec<LibraryWheel>,
    /// The glibc of each Linux release, by name.
    pub os_releases: Vec<OsRelease>,
    /// NGC container and JetPack releases, and what each ships.
    pub platform_releases: Vec<PlatformRelease>,
    /// The operator kernels of each onnxruntime execution provider, per release.
    pub operator_kernels: Vec<ProviderKernels>,
    pub function_ops: FunctionOps,
    /// ATen operator → when torch's TorchScript exporter learnt it.
    pub torch_symbolics: BTreeMap<String, TorchSymbolic>,
    /// Python API → the release of its package that added or removed it.
    pub python_apis: BTreeMap<String, PythonApi>,
    /// The compute capabilities of the `integrated` GPU models.
    pub integrated: Vec<(u64, u64)>,
    /// Every signature rule's pattern, to find error lines in one pass
    /// (compiled on first use, like the signatures themselves).
    pub signature_set: std::sync::OnceLock<regex::RegexSet>,
}

/// `pattern` with every Unicode word boundary (`\b`, `\B` and their
/// start/end forms) made an ASCII one; None when it does not parse.
///
/// regex's lazy DFA cannot decide a Unicode word boundary next to a
/// non-ASCII byte: on such a line (an emoji in an issue template, a curly
/// quote) it gives up and the set falls back to the PikeVM, a hundred
/// times slower for a set this large. The signatures are pip's, Python's
/// and NVIDIA's English messages, whose words are ASCII, so the two
/// boundaries agree on every line they could match. The signatures
/// themselves, run on the lines the set picked, keep their own.
pub(crate) fn ascii_word_boundaries(pattern: &str) -> Option<String> {
    use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};
    fn ascii(h: &Hir) -> Hir {
        match h.kind() {
            HirKind::Look(look) => Hir::look(match look {
                Look::WordUnicode => Look::WordAscii,
                Look::WordUnicodeNegate => Look::WordAsciiNegate,
                Look::WordStartUnicode => Look::WordStartAscii,
                Look::WordEndUnicode => Look::WordEndAscii,
                Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
                Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
                other => *other,
            }),
            HirKind::Repetition(r) => {
                Hir::repetition(Repetition { sub: Box::new(ascii(&r.sub)), ..r.clone() })
            }
            HirKind::Capture(c) => Hir::capture(Capture { sub: Box::new(ascii(&c.sub)), ..c.clone() }),
            HirKind::Concat(subs) => Hir::concat(subs.iter().map(ascii).collect()),
            HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(ascii).collect()),
            _ => h.clone(),
        }
    }
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    Some(ascii(&hir).to_string())
}

impl Matrix {
    /// The since versions of `op` of `domain` whose schema has a function body.
    pub(crate) fn function_versions(&self, domain: &str, op: &str) -> &[i64] {
        self.function_ops.ops.get(domain).and_then(|ops| ops.get(op)).map_or(&[], Vec::as_slice)
    }

    /// Whether onnxruntime loads every `op` node of `domain` as an initializer.
    pub(crate) fn is_initializer_op(&self, domain: &str, op: &str) -> bool {
        self.function_ops.initializers.get(domain).is_some_and(|ops| ops.contains(op))
    }

    /// Whether `op` of `domain` at since version `since` has a function body.
    pub(crate) fn is_function_op(&self, domain: &str, op: &str, since: i64) -> bool {
        self.function_versions(domain, op).contains(&since)
    }

    /// All signature patterns as one set, compiled on first use.
    pub(crate) fn signature_set(&self) -> &regex::RegexSet {
        const SIGNATURE_DFA_CACHE: usize = 64 << 20;
        self.signature_set.get_or_init(|| {
            let patterns = self.rules.iter().filter_map(|r| match &r.kind {
                RuleKind::Signature { regex, .. } => {
                    Some(ascii_word_boundaries(regex.as_str()).unwrap_or_else(|| regex.as_str().to_string()))
                }
                _ => None,
            });
            // The lazy DFA of a set this large outgrows regex's default
            // cache on varied text and falls back to the PikeVM, several
            // times slower per line; a larger cache keeps it a DFA. The
            // cache grows only as states are needed.
            regex::RegexSetBuilder::new(patterns)
                .dfa_size_limit(SIGNATURE_DFA_CACHE)
                .build()
                .unwrap_or_else(|_| regex::RegexSet::empty())
        })
    }

    /// The codes of the signatures some of `lines` match, found in one pass
    /// over each line; None when the set could not be built (then every
    /// signature is tried on its own).
    pub(crate) fn signatures_matching<'a>(
        &self,
        lines: impl Iterator<Item = &'a str>,
    ) -> Option<BTreeSet<&str>> {
        let set = self.signature_set();
        if set.is_empty() {
            return None;
        }
        let mut matched = vec![false; set.len()];
        for line in lines {
            for i in set.matches(line).iter() {
                matched[i] = true;
            }
        }
        let codes = self.rules.iter().filter(|r| matches!(r.kind, RuleKind::Signature { .. }));
        Some(codes.zip(matched).filter(|(_, m)| *m).map(|(r, _)| r.code.as_str()).collect())
    }

    /// The compute capabilities of integrated GPUs, for `runs on`.
    pub(crate) fn integrated_compute_capabilities(&self) -> &[(u64, u64)] {
        &self.integrated
    }

    /// The stack entry with this package name.
    pub(crate) fn stack_package(&self, package: &str) -> Option<&StackPackage> {
        self.stack.iter().find(|p| p.package == package)
    }

    /// The component a distribution belongs to (`onnxruntime-gpu` →
    /// onnxruntime, `tensorrt-cu12` → tensorrt); a distribution no stack
    /// entry provides is part of the Python environment.
    pub(crate) fn component_of(&self, distribution: &str) -> Component {
        self.stack
            .iter()
            .find(|p| p.package == distribution || p.distributions.iter().any(|d| d == distribution))
            .map_or(Component::PYTHON, |p| p.component.clone())
    }

    /// The distributions that provide a stack package, preferred first; a
    /// name that is not a stack package is its own distribution.
    pub(crate) fn distributions_of<'a>(&'a self, package: &'a str) -> Vec<&'a str> {
        match self.stack_package(package) {
            Some(p) => p.distributions.iter().map(String::as_str).collect(),
            None => vec![package],
        }
    }

    /// The rule that words a builtin check (the loader made sure it exists).
    pub(crate) fn builtin(&self, check: BuiltinCheck) -> &Rule {
        self.rule(check.code()).expect("the loader checks that every builtin check has its rule")
    }

    pub fn rule(&self, code: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.code == code)
    }

    /// The model whose name is the longest match inside `gpu_name`.
    pub(crate) fn gpu_model(&self, gpu_name: &str) -> Option<&GpuModel> {
        let lower = gpu_name.to_lowercase();
        let longest = |name: &str, key: fn(&str) -> String| {
            self.gpu_models.iter().filter(|m| name.contains(&key(&m.name))).max_by_key(|m| m.name.len())
        };
        // As written first; then run together as people type them
        // ("RTX1080ti", "2080ti"), which the spaced names would miss.
        longest(&lower, str::to_lowercase).or_else(|| longest(&squeezed(&lower), squeezed))
    }

    /// The glibc of the Linux release an OS name names, if the matrix
    /// knows it.
    pub(crate) fn glibc_of_os(&self, os: &str) -> Option<&str> {
        self.os_releases
            .iter()
            .find(|r| r.pattern.get().is_some_and(|p| p.is_match(os)))
            .map(|r| r.glibc.as_str())
    }

    /// The release of `platform` a paste names: `24.01` (NGC), `5.1.2`
    /// (JetPack), or an L4T release (`35.4.1`, `R32.7.1`) for JetPack.
    pub(crate) fn platform_release(&self, platform: Platform, release: &str) -> Option<&PlatformRelease> {
        let release = release.trim_start_matches(['r', 'R']);
        let mine = || self.platform_releases.iter().filter(move |r| r.platform == platform);
        // An image tag's "r32.5.0" is L4T 32.5.
        let l4t = |r: &&PlatformRelease| {
            r.l4t.as_deref().is_some_and(|l| l == release || release.strip_suffix(".0") == Some(l))
        };
        mine().find(|r| r.release == release).or_else(|| mine().find(l4t))
    }

    /// The pip requirement that ships `soname` for a CUDA major
    /// (`nvidia-curand-cu12`, `nvidia-cudnn-cu12<9`).
    pub(crate) fn wheel_for(&self, soname: &str, cuda_major: Option<&str>) -> Option<String> {
        // Windows' DLL names ignore case; sonames do not.
        let same = |w: &str| {
            if soname.ends_with(".so") || soname.contains(".so.") {
                w == soname
            } else {
                w.eq_ignore_ascii_case(soname)
            }
        };
        let rows = self.library_wheels.iter().filter(|w| same(&w.soname));
        let row = rows
            .clone()
            .find(|w| cuda_major.is_some_and(|c| w.cuda == c))
            .or_else(|| rows.clone().find(|w| w.cuda.is_empty()))
            .or_else(|| if cuda_major.is_none() { rows.clone().next_back() } else { None })?;
        Some(format!("{}{}", row.package, row.spec.as_deref().unwrap_or("")))
    }

    /// "2026-11-22, sha256 1a2b3c4d5e6f".
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("{}, sha256 {}", self.version, &self.hash[..12]);
        for o in &self.overlays {
            s.push_str(&format!(" + {o}"));
        }
        s
    }
}

/// A GPU name lowercased without spaces, hyphens and brand words.
fn squeezed(name: &str) -> String {
    name.to_lowercase()
        .replace("geforce", "")
        .replace("nvidia", "")
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::ascii_word_boundaries;

    #[test]
    fn word_boundaries_become_ascii_and_nothing_else_changes() {
        let p = ascii_word_boundaries(r"(?i)\bno module named\s+'(?P<m>\w+)'\B|\b[a-z]+\b").unwrap();
        assert!(!p.contains(r"\b") || p.contains(r"(?-u:\b)"), "{p}");
        let re = regex::Regex::new(&p).unwrap();
        assert!(re.is_match("🐛 No module named 'onnx'."));
        assert_eq!(&re.captures("no module named 'onnx'. 🐛").unwrap()["m"], "onnx", "named groups are kept");
        assert!(!regex::Regex::new(&ascii_word_boundaries(r"\bfoo\b").unwrap()).unwrap().is_match("xfoo"));
        assert!(ascii_word_boundaries("(unclosed").is_none());
    }
}
