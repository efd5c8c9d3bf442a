//! The compatibility matrix: what the doctor knows, as data.
//!
//! No third-party version number lives in Rust. `matrix/*.yaml` holds
//! **tables** (one row per release, each row with its public source) and
//! **rules** over the facts of a snapshot. Rust implements the few kinds of
//! rule once (in the `check` module); the YAML says which facts, which tables
//! and which numbers. `matrix/README.md` documents the schema.
//!
//! The default matrix is embedded in the binary at build time, so the doctor
//! works offline on a fresh machine. `--matrix DIR` layers a team's own files
//! on top: a rule with an existing code replaces it, a table with an existing
//! name replaces it, everything else is added.

mod load;
pub mod template;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::version::Spec;

pub use crate::snapshot::Component;
pub use load::MatrixError;

/// The matrix files compiled into the binary: (path, contents), sorted.
pub const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_matrix.rs"));

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The checks Rust performs itself. Each is worded by the matrix rule of
/// the same code (`builtin: true`), which gives it its severity, texts and
/// sources; the loader refuses a matrix that lacks one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinCheck {
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
}

impl BuiltinCheck {
    pub const ALL: &[Self] = &[
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
    ];

    pub fn code(self) -> &'static str {
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
    pub fn runs_on(&self, major: u64, minor: u64, integrated: bool) -> bool {
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
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        Ok(match t {
            "present" => Self::Present,
            "absent" => Self::Absent,
            _ => {
                if let Some(rest) = t.strip_prefix("none of ") {
                    let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
                    if words.is_empty() {
                        return Err("`none of` needs at least one word".into());
                    }
                    Self::NoneOf(words)
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

/// A condition on one fact, possibly written in terms of a table row
/// (`"<={row.max_ir}"`); such templates are checked against every row at
/// load time, so evaluation cannot meet a bad specifier.
#[derive(Clone, Debug, Serialize)]
pub struct Clause {
    pub fact: String,
    pub condition: String,
}

/// `lookup: TABLE` picks a row of TABLE by the table's key fact;
/// `lookup: TABLE by FACT` picks it by another fact (one CUDA table serves
/// torch's and onnxruntime's CUDA versions).
#[derive(Clone, Debug, Serialize)]
pub struct Lookup {
    pub table: String,
    pub by: Option<String>,
}

impl Lookup {
    pub fn parse(text: &str) -> Self {
        match text.split_once(" by ") {
            Some((t, f)) => Self { table: t.trim().into(), by: Some(f.trim().into()) },
            None => Self { table: text.trim().into(), by: None },
        }
    }
}

/// Where something in the matrix was written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// When the `when` clauses hold (after an optional table lookup), the
    /// `require` clauses must hold too; with no `require`, `when` alone fires.
    Facts { when: Vec<Clause>, lookup: Option<Lookup>, require: Vec<Clause> },
    /// A check Rust performs itself (import failures, declared requirements);
    /// the matrix supplies its text, severity and sources.
    Builtin,
    /// An error message users meet (a regex over one line of pasted text,
    /// named captures usable as `{name}` in the texts). When a rule listed
    /// in `explained_by` fires on the facts, the line becomes that
    /// finding's evidence instead of a finding of its own.
    Signature {
        pattern: String,
        #[serde(skip)]
        regex: LazyRegex,
        explained_by: Vec<String>,
    },
}

/// A signature's regex, compiled the first time a paste is read: compiling
/// every signature costs more than loading the rest of the matrix, and only
/// `diagnose` needs them. The loader has already checked the syntax.
#[derive(Clone, Debug, Default)]
pub struct LazyRegex {
    pattern: String,
    compiled: std::sync::OnceLock<Option<regex::Regex>>,
}

impl LazyRegex {
    pub fn new(pattern: &str) -> Self {
        Self { pattern: pattern.to_string(), compiled: std::sync::OnceLock::new() }
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The compiled regex; `None` only for a pattern over the regex size
    /// limits, which then matches nothing.
    pub fn get(&self) -> Option<&regex::Regex> {
        self.compiled.get_or_init(|| regex::Regex::new(&self.pattern).ok()).as_ref()
    }
}

/// A GPU model the matrix knows, to tell a compute capability from a name
/// (pasted reports and old nvidia-smi say only the name).
#[derive(Clone, Debug, Serialize)]
pub struct GpuModel {
    /// A case-insensitive substring of the marketing name ("RTX 5090").
    pub name: String,
    pub compute_capability: String,
    pub architecture: String,
    /// An integrated (Tegra, Jetson) GPU: no binary compatibility with
    /// other compute capabilities.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub integrated: bool,
}

/// A Python package the doctor imports and reports on (`stack:` in the
/// matrix): how to import it, which distributions provide it, which runtime
/// facts to read from it, and which of its shared libraries to resolve.
#[derive(Clone, Debug, Serialize)]
pub struct StackPackage {
    /// The doctor's name (`protobuf`): the prefix of its facts.
    pub package: String,
    /// What the probe imports (`google.protobuf`).
    pub module: String,
    pub component: Component,
    /// Distributions that provide the module, preferred first.
    pub distributions: Vec<String>,
    /// Names `conda list` gives it (`pytorch`).
    pub conda: Vec<String>,
    /// Fact name → probe expression (`torch.version.cuda`).
    pub facts: BTreeMap<String, String>,
    pub libraries: Vec<StackLibrary>,
}

/// A shared library inside a package whose dependencies the doctor resolves.
#[derive(Clone, Debug, Serialize)]
pub struct StackLibrary {
    /// A stable name for reports (`onnxruntime-cuda-provider`).
    pub role: String,
    /// Relative to site-packages; a trailing `*` takes the first match.
    pub path: String,
    /// The builtin rule that words a library that cannot load.
    pub check: String,
    /// How that text names the library ("onnxruntime-gpu's CUDA provider").
    pub what: String,
}

#[derive(Clone, Debug, Serialize)]
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
    pub kind: RuleKind,
    pub origin: Origin,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The releases of the table's key this row describes.
    pub versions: String,
    #[serde(skip)]
    pub spec: Spec,
    pub values: BTreeMap<String, String>,
    pub sources: Vec<String>,
    pub origin: Origin,
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub name: String,
    pub description: String,
    /// The fact whose version selects a row (`onnxruntime`).
    pub key: String,
    /// Extra facts a row must match, each against a column holding a
    /// condition (`torch.cuda` against the `cuda` column: `"==12.6.*"`).
    pub matches: Vec<(String, String)>,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
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
    /// The compute capabilities of the `integrated` GPU models.
    pub integrated: Vec<(u64, u64)>,
    /// Every signature rule's pattern, to find error lines in one pass
    /// (compiled on first use, like the signatures themselves).
    pub signature_set: std::sync::OnceLock<regex::RegexSet>,
}

impl Matrix {
    /// All signature patterns as one set, compiled on first use.
    pub fn signature_set(&self) -> &regex::RegexSet {
        self.signature_set.get_or_init(|| {
            let patterns = self.rules.iter().filter_map(|r| match &r.kind {
                RuleKind::Signature { regex, .. } => Some(regex.as_str()),
                _ => None,
            });
            regex::RegexSet::new(patterns).unwrap_or_else(|_| regex::RegexSet::empty())
        })
    }

    /// The compute capabilities of integrated GPUs, for `runs on`.
    pub fn integrated_compute_capabilities(&self) -> &[(u64, u64)] {
        &self.integrated
    }

    /// The embedded matrix, plus any `--matrix` directories in order.
    pub fn load(overlays: &[&Path]) -> Result<Self, Vec<MatrixError>> {
        load::load(overlays)
    }

    /// The embedded matrix with one overlay file given as text (`name` is
    /// what errors call it): the loader without a directory, for fuzzing
    /// and for tools that hold a matrix file in memory.
    pub fn load_with_overlay_text(name: &str, text: &str) -> Result<Self, Vec<MatrixError>> {
        load::load_with_texts(&[(name.to_string(), text.to_string())])
    }

    /// The stack entry with this package name.
    pub fn stack_package(&self, package: &str) -> Option<&StackPackage> {
        self.stack.iter().find(|p| p.package == package)
    }

    /// The component a distribution belongs to (`onnxruntime-gpu` →
    /// onnxruntime, `tensorrt-cu12` → tensorrt); a distribution no stack
    /// entry provides is part of the Python environment.
    pub fn component_of(&self, distribution: &str) -> Component {
        self.stack
            .iter()
            .find(|p| p.package == distribution || p.distributions.iter().any(|d| d == distribution))
            .map_or(Component::PYTHON, |p| p.component.clone())
    }

    /// The distributions that provide a stack package, preferred first; a
    /// name that is not a stack package is its own distribution.
    pub fn distributions_of<'a>(&'a self, package: &'a str) -> Vec<&'a str> {
        match self.stack_package(package) {
            Some(p) => p.distributions.iter().map(String::as_str).collect(),
            None => vec![package],
        }
    }

    /// The rule that words a builtin check (the loader made sure it exists).
    pub fn builtin(&self, check: BuiltinCheck) -> &Rule {
        self.rule(check.code()).expect("the loader checks that every builtin check has its rule")
    }

    pub fn rule(&self, code: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.code == code)
    }

    /// The model whose name is the longest match inside `gpu_name`.
    pub fn gpu_model(&self, gpu_name: &str) -> Option<&GpuModel> {
        let lower = gpu_name.to_lowercase();
        self.gpu_models.iter().filter(|m| lower.contains(&m.name.to_lowercase())).max_by_key(|m| m.name.len())
    }

    /// "2026-11-22, sha256 1a2b3c4d5e6f".
    pub fn describe(&self) -> String {
        let mut s = format!("{}, sha256 {}", self.version, &self.hash[..12]);
        for o in &self.overlays {
            s.push_str(&format!(" + {o}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_map_to_their_component() {
        let m = Matrix::load(&[]).unwrap();
        assert_eq!(m.component_of("onnxruntime-gpu"), Component::new("onnxruntime"));
        assert_eq!(m.component_of("tensorrt-cu12"), Component::TENSORRT);
        assert_eq!(m.component_of("torch"), Component::new("torch"));
        assert_eq!(m.component_of("opencv-python"), Component::PYTHON);
        assert_eq!(m.component_of("onnxscript"), Component::new("onnx"));
    }

    #[test]
    fn conditions_read_words_and_specifiers() {
        assert!(matches!(Condition::parse("present"), Ok(Condition::Present)));
        assert!(matches!(Condition::parse("is not upb"), Ok(Condition::IsNot(t)) if t == "upb"));
        assert!(matches!(Condition::parse(">=2, <3"), Ok(Condition::Version(_))));
        assert!(Condition::parse("=>2").is_err());
        assert!(
            matches!(Condition::parse("runs on sm_80 compute_90"), Ok(Condition::RunsOn(l)) if l.len() == 2)
        );
        assert!(Condition::parse("runs on sm_x").is_err());
    }

    #[test]
    fn cuda_binary_compatibility_follows_major_and_minor() {
        let torch_cu126 = Arch::parse_list("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90").unwrap();
        let runs = |list: &[Arch], cc: (u64, u64)| list.iter().any(|a| a.runs_on(cc.0, cc.1, false));
        assert!(runs(&torch_cu126, (8, 9)), "sm_86 cubins run on an Ada 8.9");
        assert!(!runs(&torch_cu126, (12, 0)), "nothing runs on an RTX 5090");
        let cu128 = Arch::parse_list("7.5;8.0;8.6;9.0;10.0;12.0+PTX").unwrap();
        assert!(runs(&cu128, (12, 0)));
        assert!(runs(&cu128, (12, 1)), "PTX JITs forward");
        assert!(!runs(&cu128, (6, 1)), "a Pascal card has nothing");
        let on_orin = |list: &[Arch]| list.iter().any(|a| a.runs_on(8, 7, true));
        assert!(!on_orin(&cu128), "sm_80/sm_86 cubins do not run on an integrated 8.7");
        assert!(on_orin(&Arch::parse_list("8.7").unwrap()));
        assert!(on_orin(&Arch::parse_list("8.0+PTX").unwrap()), "PTX still JITs");
    }

    #[test]
    fn an_overlay_given_as_text_is_checked_like_a_file() {
        let errors = Matrix::load_with_overlay_text("team.yaml", "rules:\n  - code: Bad_Code\n").unwrap_err();
        assert!(errors.iter().any(|e| e.to_string().starts_with("team.yaml:")), "{errors:?}");
        let ok = "gpu_models:\n  sources: [https://developer.nvidia.com/cuda-gpus]\n  models:\n    - { name: \"Team GPU\", compute_capability: \"8.9\", architecture: \"Ada\" }\n";
        let m = Matrix::load_with_overlay_text("team.yaml", ok).unwrap();
        assert_eq!(m.gpu_model("Team GPU 48GB").unwrap().compute_capability, "8.9");
    }

    #[test]
    fn the_embedded_matrix_loads() {
        let m = Matrix::load(&[])
            .unwrap_or_else(|e| panic!("{}", e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")));
        assert!(!m.rules.is_empty());
        assert_eq!(m.hash.len(), 64);
    }
}
