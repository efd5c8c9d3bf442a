//! Reading and validating matrix files.
//!
//! A team editing its own `--matrix` file deserves the errors a compiler
//! gives: every problem is reported with `file:line:column`, all of them at
//! once, and the load fails as a whole (a half-loaded matrix would judge
//! wrongly without saying so). Beyond YAML syntax and unknown keys, the
//! loader checks what serde cannot: specifiers parse, codes are unique and
//! kebab-case, every rule and every table row has a public source, tables are
//! complete for their declared columns, and templated conditions
//! (`"<={row.max_ir}"`) parse for every row of the table they read.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;
use sha2::{Digest, Sha256};

use super::{
    BuiltinCheck, Cause, Clause, Component, Cond, Condition, Matrix, Origin, Row, Rule, RuleKind, Severity,
    StackLibrary, StackPackage, Table,
};
use crate::version::Ver;

/// One problem in one matrix file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixError {
    pub origin: Origin,
    pub message: String,
}

impl fmt::Display for MatrixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    version: Option<Spanned<String>>,
    #[serde(default)]
    packages: Vec<String>,
    #[serde(default)]
    tables: BTreeMap<String, Spanned<RawTable>>,
    #[serde(default)]
    rules: Vec<Spanned<RawRule>>,
    #[serde(default)]
    gpu_models: Option<Spanned<RawGpuModels>>,
    #[serde(default)]
    stack: Vec<Spanned<RawStackPackage>>,
    #[serde(default)]
    library_wheels: Option<Spanned<RawLibraryWheels>>,
    #[serde(default)]
    os_releases: Option<Spanned<RawOsReleases>>,
    #[serde(default)]
    platform_releases: Option<Spanned<RawPlatformReleases>>,
    #[serde(default)]
    operator_kernels: Vec<Spanned<RawProviderKernels>>,
    #[serde(default)]
    operator_functions: Option<Spanned<RawOperatorFunctions>>,
    #[serde(default)]
    operator_initializers: Option<Spanned<RawOperatorInitializers>>,
    #[serde(default)]
    torch_onnx_symbolics: BTreeMap<String, Spanned<RawTorchSymbolic>>,
    #[serde(default)]
    python_apis: BTreeMap<String, Spanned<RawPythonApi>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPythonApi {
    package: String,
    #[serde(default)]
    added: Option<String>,
    #[serde(default)]
    removed: Option<String>,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTorchSymbolic {
    opset: String,
    torch: String,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperatorInitializers {
    sources: Vec<String>,
    /// domain → operators.
    ops: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperatorFunctions {
    /// The onnx release read (`1.19.0`).
    read: String,
    sources: Vec<String>,
    /// domain → operator → since versions with a body, as `13 18`.
    ops: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProviderKernels {
    runtime: String,
    provider: String,
    releases: Vec<super::KernelRelease>,
    /// domain → operator → ranges as `6-12 13@1.17 14+@1.18`.
    ops: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLibraryWheels {
    sources: Vec<String>,
    wheels: Vec<Spanned<RawLibraryWheel>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLibraryWheel {
    soname: String,
    cuda: String,
    package: String,
    #[serde(default)]
    spec: Option<String>,
    dir: String,
    #[serde(default)]
    sources: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStackPackage {
    package: String,
    #[serde(default)]
    module: Option<String>,
    #[serde(default)]
    component: Option<String>,
    #[serde(default)]
    distributions: Vec<String>,
    #[serde(default)]
    conda: Vec<String>,
    #[serde(default)]
    facts: BTreeMap<String, String>,
    #[serde(default)]
    trial: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, RawFileFact>,
    #[serde(default)]
    table_facts: BTreeMap<String, String>,
    #[serde(default)]
    stated: Vec<String>,
    #[serde(default)]
    libraries: Vec<RawStackLibrary>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileFact {
    path: String,
    pattern: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStackLibrary {
    role: String,
    path: String,
    #[serde(default)]
    dll: Option<String>,
    check: String,
    what: String,
    #[serde(default)]
    table: Option<String>,
    #[serde(default)]
    needs: Option<String>,
    #[serde(default)]
    check_without: Option<String>,
    #[serde(default)]
    preloads_wheels: bool,
    #[serde(default)]
    check_in_wheels: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOsReleases {
    sources: Vec<String>,
    releases: Vec<Spanned<RawOsRelease>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOsRelease {
    name: String,
    pattern: String,
    glibc: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatformReleases {
    sources: Vec<String>,
    releases: Vec<Spanned<super::PlatformRelease>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGpuModels {
    sources: Vec<String>,
    models: Vec<Spanned<RawGpuModel>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGpuModel {
    name: String,
    compute_capability: String,
    architecture: String,
    #[serde(default)]
    integrated: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    description: String,
    key: String,
    #[serde(default, rename = "match")]
    matches: BTreeMap<String, String>,
    columns: Vec<String>,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    published: Option<super::WheelPlatform>,
    rows: Vec<Spanned<BTreeMap<String, Spanned<Cell>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    code: Spanned<String>,
    severity: Severity,
    components: Vec<Component>,
    summary: String,
    message: String,
    why: String,
    #[serde(default)]
    fixes: Vec<String>,
    #[serde(default)]
    sources: Vec<Spanned<String>>,
    #[serde(default)]
    since: Option<Spanned<String>>,
    #[serde(default)]
    builtin: bool,
    #[serde(default)]
    when: Clauses,
    #[serde(default)]
    lookup: Option<Spanned<String>>,
    #[serde(default)]
    require: Clauses,
    #[serde(default)]
    unless: Clauses,
    #[serde(default)]
    signature: Option<Spanned<String>>,
    #[serde(default)]
    explained_by: Vec<String>,
    /// The captures (`op|op2`) that name an ATen operator: its row of
    /// `torch_onnx_symbolics` fills `{aten.opset}`, `{aten.torch}` and `{aten.at_opset}`.
    #[serde(default)]
    aten: Option<String>,
    /// The change of a Python API (`python_apis`) the signature's line is
    /// read against: fills `{api}`, `{api.package}`, `{api.added}`,
    /// `{api.removed}` and `{api.here}`.
    #[serde(default)]
    api: Option<super::ApiChange>,
    #[serde(default)]
    supersedes: Vec<String>,
    #[serde(default)]
    cause: Cause,
    /// A symptom's likely causes, most likely first (signature rules).
    #[serde(default)]
    likely: Vec<Spanned<RawLikely>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLikely {
    cause: String,
    #[serde(default)]
    when: Clauses,
    /// Facts that, all stated, make this the cause: the others are dropped.
    #[serde(default)]
    decided_by: Clauses,
    confirm: String,
    fix: String,
    source: String,
}

/// A `when:` or `require:` map, each fact name with its place in the file.
#[derive(Default)]
struct Clauses(Vec<(Spanned<String>, Spanned<String>)>);

impl<'de> Deserialize<'de> for Clauses {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Clauses;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of fact names to conditions")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Clauses, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<Spanned<String>, Spanned<String>>()? {
                    out.push(entry);
                }
                Ok(Clauses(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A table cell: text, or a list of text (a row's `sources`).
enum Cell {
    Text(String),
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cell;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quoted string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Cell, E> {
                Err(E::custom(format!(
                    "the unquoted number {v} is not a version: quote versions (\"12.10\" unquoted reads as 12.1)"
                )))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cell, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(Cell::List(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// Collects errors for one file.
struct Errors<'a> {
    file: &'a str,
    list: Vec<MatrixError>,
}

impl Errors<'_> {
    fn at<T>(&mut self, span: &Spanned<T>, message: impl Into<String>) {
        self.push(span.referenced.line(), span.referenced.column(), message);
    }

    fn push(&mut self, line: u64, column: u64, message: impl Into<String>) {
        self.list.push(MatrixError { origin: self.origin(line, column), message: message.into() });
    }

    fn origin(&self, line: u64, column: u64) -> Origin {
        Origin { file: self.file.to_string(), line, column }
    }

    fn origin_of<T>(&self, span: &Spanned<T>) -> Origin {
        self.origin(span.referenced.line(), span.referenced.column())
    }
}

/// One `--matrix` directory (or overlay texts): its name and its files,
/// read by the caller (the matrix touches no file).
#[derive(Clone, Debug)]
pub struct Overlay {
    pub name: String,
    /// (path, text), in the order they are loaded.
    pub files: Vec<(String, String)>,
}

/// The embedded matrix (pre-parsed by the build script) with `--matrix`
/// layers on top, in order.
pub(super) fn load(prebuilt: &[u8], overlays: &[Overlay]) -> Result<Matrix, Vec<MatrixError>> {
    let mut b = Builder::prebuilt(prebuilt);
    for layer in overlays {
        b.add_layer(true, &layer.files);
    }
    b.finish(overlays.iter().map(|l| l.name.clone()).collect())
}

/// Codes and table names already defined in the current layer: within one
/// layer a name may appear once; a later layer replaces it.
#[derive(Default)]
struct LayerNames {
    rules: BTreeMap<String, Origin>,
    tables: BTreeSet<String>,
}

/// The matrix as its files are read, layer by layer. The build script
/// reads the embedded files into one and stores it (serialised) in the
/// binary; a run picks it up there and adds the `--matrix` layers.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Builder {
    #[serde(skip)]
    errors: Vec<MatrixError>,
    #[serde(skip)]
    hasher: Sha256,
    /// The hash of the embedded files, which overlays' hashes start from.
    embedded_hash: Option<String>,
    version: Option<String>,
    packages: BTreeSet<String>,
    tables: BTreeMap<String, Table>,
    gpu_models: Vec<super::GpuModel>,
    library_wheels: Vec<super::LibraryWheel>,
    os_releases: Vec<super::OsRelease>,
    platform_releases: Vec<super::PlatformRelease>,
    operator_kernels: Vec<super::ProviderKernels>,
    function_ops: super::FunctionOps,
    torch_symbolics: BTreeMap<String, super::TorchSymbolic>,
    python_apis: BTreeMap<String, (super::PythonApi, Origin)>,
    stack: Vec<(StackPackage, Origin)>,
    /// Rules as read: their facts, templates and lookups are compiled once
    /// every table and the whole stack are known.
    pending: Vec<Rule>,
}

// `embedded`, `from_bytes` and `to_bytes` serve build.rs, which compiles this file too.
#[allow(dead_code)]
impl Builder {
    /// Reads the embedded files (at build time): a builder ready to be stored.
    pub(crate) fn embedded(files: &[(String, String)]) -> Result<Self, Vec<MatrixError>> {
        let mut b = Self::default();
        b.add_layer(false, files);
        if !b.errors.is_empty() {
            return Err(std::mem::take(&mut b.errors));
        }
        b.embedded_hash = Some(hex(std::mem::take(&mut b.hasher).finalize().as_slice()));
        Ok(b)
    }

    /// A builder stored by [`Builder::to_bytes`].
    pub(crate) fn from_bytes(bytes: &[u8]) -> Self {
        Self::prebuilt(bytes)
    }

    /// The stored embedded builder; the build script checked it.
    fn prebuilt(bytes: &[u8]) -> Self {
        let mut b: Self = postcard::from_bytes(bytes).expect("the build script stored a valid matrix");
        if let Some(h) = &b.embedded_hash {
            b.hasher.update(h.as_bytes());
        }
        b
    }

    /// The builder stored in the binary.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("a matrix serialises")
    }

    fn add_layer(&mut self, overlay: bool, files: &[(String, String)]) {
        let mut seen = LayerNames::default();
        for (file, text) in files {
            self.add_file(overlay, file, text, &mut seen);
        }
    }

    fn add_file(&mut self, overlay: bool, file: &str, text: &str, seen: &mut LayerNames) {
        for part in [file.as_bytes(), &[0], text.as_bytes(), &[0]] {
            self.hasher.update(part);
        }
        let mut e = Errors { file, list: Vec::new() };
        match serde_saphyr::from_str::<RawFile>(text) {
            Ok(raw) => self.add_raw(&mut e, overlay, raw, seen),
            Err(err) => {
                let (line, col) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
                e.push(line, col, first_line(&err.to_string()));
            }
        }
        self.errors.extend(e.list);
    }

    fn add_raw(&mut self, e: &mut Errors<'_>, overlay: bool, raw: RawFile, seen: &mut LayerNames) {
        if let Some(v) = raw.version {
            if overlay {
                e.at(&v, "only the embedded matrix sets `version`; remove it from this overlay");
            } else if !is_iso_date(&v.value) {
                e.at(&v, format!("`version` {:?} is not a date (YYYY-MM-DD)", v.value));
            } else if self.version.replace(v.value.clone()).is_some() {
                e.at(&v, "`version` is set in more than one file");
            }
        }
        self.packages.extend(raw.packages.iter().map(|p| crate::snapshot::normalize_name(p)));
        if let Some(models) = raw.gpu_models {
            self.add_gpu_models(e, models);
        }
        if let Some(wheels) = raw.library_wheels {
            self.add_library_wheels(e, wheels);
        }
        if let Some(releases) = raw.os_releases {
            self.add_os_releases(e, releases);
        }
        if let Some(releases) = raw.platform_releases {
            self.add_platform_releases(e, releases);
        }
        for kernels in raw.operator_kernels {
            self.add_operator_kernels(e, kernels);
        }
        if let Some(initializers) = raw.operator_initializers {
            require_sources(e, &initializers, &initializers.value.sources, "operator_initializers");
            for (domain, ops) in initializers.value.ops {
                self.function_ops.initializers.entry(domain).or_default().extend(ops);
            }
        }
        if let Some(functions) = raw.operator_functions {
            self.add_operator_functions(e, functions);
        }
        for (op, s) in raw.torch_onnx_symbolics {
            let opset = s.value.opset.parse::<i64>().ok().filter(|o| (1..=99).contains(o));
            let torch = Ver::new(s.value.torch.as_str());
            match (opset, torch.parsed().is_some(), is_url(&s.value.source)) {
                (Some(opset), true, true) => {
                    let symbolic =
                        super::TorchSymbolic { opset, torch: s.value.torch, source: s.value.source };
                    self.torch_symbolics.insert(op, symbolic);
                }
                _ => e.at(&s, format!("{op}: needs an opset number, a torch release and a source URL")),
            }
        }
        for (api, a) in raw.python_apis {
            let origin = e.origin_of(&a);
            let version = |v: &Option<String>| v.as_deref().is_none_or(|v| Ver::new(v).parsed().is_some());
            let named = api.split(['.', '(']).next().is_some_and(|m| !m.is_empty());
            let r = &a.value;
            if crate::snapshot::normalize_name(&r.package).is_empty() {
                e.at(&a, format!("{api}: names no package (any distribution, as pip lists it)"));
            } else if !named
                || (r.added.is_none() && r.removed.is_none())
                || !version(&r.added)
                || !version(&r.removed)
            {
                e.at(&a, format!("{api}: needs a package's release in `added` or `removed`"));
            } else if !is_url(&r.source) {
                e.at(&a, format!("{api}: cites no source URL"));
            } else {
                let a = a.value;
                let package = crate::snapshot::normalize_name(&a.package);
                let entry =
                    super::PythonApi { package, added: a.added, removed: a.removed, source: a.source };
                self.python_apis.insert(api, (entry, origin));
            }
        }
        for p in raw.stack {
            let origin = e.origin_of(&p);
            if let Some(package) = convert_stack_package(e, p) {
                match self.stack.iter_mut().find(|(s, _)| s.package == package.package) {
                    Some(slot) => *slot = (package, origin),
                    None => self.stack.push((package, origin)),
                }
            }
        }
        for (name, t) in raw.tables {
            if !seen.tables.insert(name.clone()) {
                e.at(&t, format!("table `{name}` is defined twice"));
            } else if let Some(table) = convert_table(e, name.clone(), t) {
                self.tables.insert(name, table);
            }
        }
        for r in raw.rules {
            let origin = e.origin_of(&r.value.code);
            let code = r.value.code.value.clone();
            if let Some(first) = seen.rules.get(&code) {
                e.at(&r.value.code, format!("rule code `{code}` is already used at {first}"));
                continue;
            }
            seen.rules.insert(code.clone(), origin.clone());
            if let Some(converted) = convert_rule(e, r, origin) {
                self.pending.retain(|p| p.code != code);
                self.pending.push(converted);
            }
        }
    }

    fn add_gpu_models(&mut self, e: &mut Errors<'_>, models: Spanned<RawGpuModels>) {
        require_sources(e, &models, &models.value.sources, "gpu_models");
        for m in models.value.models {
            if Ver::new(m.value.compute_capability.as_str()).release().len() != 2 {
                e.at(&m, format!("compute capability {:?} is not MAJOR.MINOR", m.value.compute_capability));
            }
            self.gpu_models.retain(|g| g.name != m.value.name);
            self.gpu_models.push(super::GpuModel {
                name: m.value.name,
                compute_capability: m.value.compute_capability,
                architecture: m.value.architecture,
                integrated: m.value.integrated,
            });
        }
    }

    fn add_os_releases(&mut self, e: &mut Errors<'_>, releases: Spanned<RawOsReleases>) {
        require_sources(e, &releases, &releases.value.sources, "os_releases");
        for r in releases.value.releases {
            if let Err(err) = regex::Regex::new(&r.value.pattern) {
                e.at(&r, format!("pattern {:?} is not a regular expression: {err}", r.value.pattern));
            }
            if Ver::new(r.value.glibc.as_str()).release().len() != 2 {
                e.at(&r, format!("glibc {:?} is not MAJOR.MINOR", r.value.glibc));
            }
            self.os_releases.retain(|o| o.name != r.value.name);
            self.os_releases.push(super::OsRelease {
                name: r.value.name,
                pattern: super::LazyRegex::new(&r.value.pattern),
                glibc: r.value.glibc,
            });
        }
    }

    fn add_platform_releases(&mut self, e: &mut Errors<'_>, releases: Spanned<RawPlatformReleases>) {
        require_sources(e, &releases, &releases.value.sources, "platform_releases");
        for r in releases.value.releases {
            if !is_url(&r.value.source) {
                e.at(&r, format!("release {:?} needs a `source` that is a public URL", r.value.release));
            }
            let versions =
                [&r.value.torch, &r.value.cuda, &r.value.cudnn, &r.value.tensorrt, &r.value.python];
            for v in versions.into_iter().flatten() {
                if !v.starts_with(|c: char| c.is_ascii_digit()) || Ver::new(v.as_str()).release().len() < 2 {
                    e.at(&r, format!("{v:?} is not a version"));
                }
            }
            let (platform, release) = (r.value.platform, r.value.release.clone());
            self.platform_releases.retain(|p| !(p.platform == platform && p.release == release));
            self.platform_releases.push(r.value);
        }
    }

    fn add_operator_kernels(&mut self, e: &mut Errors<'_>, raw: Spanned<RawProviderKernels>) {
        let mut lines: Vec<String> = Vec::new();
        for r in &raw.value.releases {
            if !is_url(&r.source) {
                e.at(&raw, format!("release {:?} needs a `source` that is a public URL", r.release));
            }
            if Ver::new(r.release.as_str()).release().len() != 2 {
                e.at(&raw, format!("release {:?} is not a release line such as 1.17", r.release));
            }
            if lines
                .last()
                .is_some_and(|l| Ver::new(l.as_str()).parsed() >= Ver::new(r.release.as_str()).parsed())
            {
                e.at(&raw, format!("`releases` must be oldest first; {:?} is out of order", r.release));
            }
            lines.push(r.release.clone());
        }
        if lines.is_empty() {
            e.at(&raw, "`releases` lists no release");
            return;
        }
        let mut ops = BTreeMap::new();
        for (domain, by_op) in &raw.value.ops {
            let mut parsed = BTreeMap::new();
            for (op, tokens) in by_op {
                let ranges: Result<Vec<_>, String> =
                    tokens.split_whitespace().map(|t| super::KernelRange::parse(t, &lines)).collect();
                match ranges {
                    Ok(r) => {
                        parsed.insert(op.clone(), r);
                    }
                    Err(why) => e.at(&raw, format!("{domain} {op}: {why}")),
                }
            }
            ops.insert(domain.clone(), parsed);
        }
        let RawProviderKernels { runtime, provider, releases, .. } = raw.value;
        self.operator_kernels.retain(|k| !(k.runtime == runtime && k.provider == provider));
        self.operator_kernels.push(super::ProviderKernels { runtime, provider, releases, ops });
    }

    fn add_operator_functions(&mut self, e: &mut Errors<'_>, raw: Spanned<RawOperatorFunctions>) {
        require_sources(e, &raw, &raw.value.sources, "operator_functions");
        if raw.value.read.is_empty() {
            e.at(&raw, "`read` names no onnx release");
        }
        for (domain, by_op) in &raw.value.ops {
            for (op, versions) in by_op {
                let parsed: Option<Vec<i64>> = versions.split_whitespace().map(|v| v.parse().ok()).collect();
                match parsed {
                    Some(v) if !v.is_empty() => {
                        self.function_ops.ops.entry(domain.clone()).or_default().insert(op.clone(), v);
                    }
                    _ => e.at(
                        &raw,
                        format!("{domain} {op}: {versions:?} is not a list of versions such as `13 18`"),
                    ),
                }
            }
        }
    }

    fn add_library_wheels(&mut self, e: &mut Errors<'_>, wheels: Spanned<RawLibraryWheels>) {
        require_sources(e, &wheels, &wheels.value.sources, "library_wheels");
        for w in wheels.value.wheels {
            let raw = &w.value;
            let soname = raw.soname.starts_with("lib") && raw.soname.contains(".so");
            let dll =
                raw.soname.len() > 4 && raw.soname.ends_with(".dll") && !raw.soname.contains(['/', '\\']);
            if !soname && !dll {
                e.at(&w, format!("{:?} is neither a shared library's soname nor a DLL's name", raw.soname));
            }
            if let Some(spec) = &raw.spec
                && let Err(err) = spec.parse::<crate::version::Spec>()
            {
                e.at(&w, format!("invalid version specifier {spec:?}: {err}"));
            }
            if raw.sources.iter().any(|s| !is_url(s)) {
                e.at(&w, "a row's `sources` must be public URLs");
            }
            let w = w.value;
            self.library_wheels.retain(|x| !(x.soname == w.soname && x.cuda == w.cuda));
            self.library_wheels.push(super::LibraryWheel {
                soname: w.soname,
                cuda: w.cuda,
                package: crate::snapshot::normalize_name(&w.package),
                spec: w.spec,
                dir: w.dir,
            });
        }
    }

    /// Checks what needs every file (templates against tables, the
    /// vocabulary, `explained_by`) and builds the matrix.
    pub(crate) fn finish(self, overlays: Vec<String>) -> Result<Matrix, Vec<MatrixError>> {
        self.finish_checking(overlays, false)
    }

    /// [`Builder::finish`], checking that every signature compiles into
    /// the one set a paste is scanned with (the build script's check).
    pub(crate) fn finish_checking(
        mut self,
        overlays: Vec<String>,
        check_signatures: bool,
    ) -> Result<Matrix, Vec<MatrixError>> {
        let vocabulary = super::compile::vocabulary(&self.packages, &self.stack, &self.library_wheels);
        let keys = super::compile::tables(&mut self.errors, &mut self.tables, &vocabulary);
        super::compile::stack(&mut self.errors, &self.stack, &self.tables, &keys, &vocabulary);
        let mut rules: BTreeMap<String, Rule> = BTreeMap::new();
        for mut rule in std::mem::take(&mut self.pending) {
            super::compile::rule(&mut self.errors, &mut rule, &self.tables, &keys, &vocabulary);
            rules.insert(rule.code.clone(), rule);
        }
        check_vocabulary(&mut self.errors, &rules, &self.tables, &self.stack);
        for rule in rules.values() {
            for code in rule.supersedes.iter().filter(|c| !rules.contains_key(*c)) {
                let message = format!("`supersedes` names `{code}`, which is not a rule");
                self.errors.push(MatrixError { origin: rule.origin.clone(), message });
            }
            let RuleKind::Signature { explained_by, .. } = &rule.kind else { continue };
            for code in explained_by.iter().filter(|c| !rules.contains_key(*c)) {
                let message = format!("`explained_by` names `{code}`, which is not a rule");
                self.errors.push(MatrixError { origin: rule.origin.clone(), message });
            }
        }
        // The build script checked the embedded signatures; a run checks
        // them again only when an overlay may have added one (compiling
        // them all costs more than the rest of the load).
        if check_signatures || !overlays.is_empty() {
            check_signature_set(&mut self.errors, &rules);
        }
        if self.version.is_none() && self.errors.is_empty() {
            let message = "no matrix file sets `version`".into();
            self.errors.push(MatrixError { origin: Origin::default(), message });
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        let integrated = self
            .gpu_models
            .iter()
            .filter(|m| m.integrated)
            .filter_map(|m| match Ver::new(m.compute_capability.as_str()).release() {
                [major, minor] => Some((*major, *minor)),
                _ => None,
            })
            .collect();
        Ok(Matrix {
            version: self.version.unwrap_or_default(),
            hash: match (&self.embedded_hash, overlays.is_empty()) {
                (Some(h), true) => h.clone(),
                _ => hex(self.hasher.finalize().as_slice()),
            },
            overlays,
            packages: self.packages,
            stack: self.stack.into_iter().map(|(p, _)| p).collect(),
            tables: self.tables,
            rules: rules.into_values().collect(),
            gpu_models: self.gpu_models,
            library_wheels: self.library_wheels,
            os_releases: self.os_releases,
            platform_releases: self.platform_releases,
            operator_kernels: self.operator_kernels,
            function_ops: self.function_ops,
            torch_symbolics: self.torch_symbolics,
            python_apis: self.python_apis.into_iter().map(|(k, (a, _))| (k, a)).collect(),
            integrated,
            signature_set: std::sync::OnceLock::new(),
        })
    }
}

/// The formats a stack fact's expression may end with (`| split`).
const FACT_FORMATS: &[&str] = &["split", "cudnn", "exists", "dotted", "major"];

/// The trials the probe script implements.
const TRIALS: &[&str] = &["onnxruntime", "torch", "tensorrt"];

fn convert_stack_package(e: &mut Errors<'_>, p: Spanned<RawStackPackage>) -> Option<StackPackage> {
    let before = e.list.len();
    let raw = &p.value;
    if !is_kebab(&raw.package) {
        e.at(&p, format!("stack package {:?} must be a lower-case name", raw.package));
    }
    for (fact, expr) in &raw.facts {
        let (path, format) = match expr.split_once('|') {
            Some((path, format)) => (path.trim(), Some(format.trim())),
            None => (expr.trim(), None),
        };
        let dotted = path.strip_suffix("()").unwrap_or(path);
        let valid_path = !dotted.is_empty()
            && dotted
                .split('.')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !valid_path {
            e.at(&p, format!("fact `{fact}` of `{}`: {path:?} is not a dotted path", raw.package));
        }
        if let Some(f) = format.filter(|f| !FACT_FORMATS.contains(f)) {
            e.at(
                &p,
                format!(
                    "fact `{fact}` of `{}`: unknown format {f:?} ({})",
                    raw.package,
                    FACT_FORMATS.join(", ")
                ),
            );
        }
    }
    if let Some(t) = raw.trial.as_deref().filter(|t| !TRIALS.contains(t)) {
        e.at(
            &p,
            format!("trial `{t}` of `{}` is not one the probe runs ({})", raw.package, TRIALS.join(", ")),
        );
    }
    for (fact, file) in &raw.files {
        if let Err(err) = regex_syntax::Parser::new().parse(&file.pattern) {
            let why = err.to_string().lines().last().unwrap_or("").to_string();
            e.at(&p, format!("file fact `{fact}` of `{}`: invalid pattern: {why}", raw.package));
        }
    }
    let mut table_facts = BTreeMap::new();
    for (fact, at) in &raw.table_facts {
        match at.split_once('.') {
            Some((table, column)) => {
                table_facts.insert(fact.clone(), (table.to_string(), column.to_string()));
            }
            None => {
                e.at(&p, format!("table fact `{fact}` of `{}`: write TABLE.COLUMN, not {at:?}", raw.package))
            }
        }
    }
    let raw = p.value;
    let package = StackPackage {
        trial: raw.trial,
        files: raw
            .files
            .into_iter()
            .map(|(k, f)| (k, super::FileFact { path: f.path, pattern: f.pattern }))
            .collect(),
        table_facts,
        stated: raw.stated,
        module: raw.module.unwrap_or_else(|| raw.package.clone()),
        component: Component::new(raw.component.unwrap_or_else(|| raw.package.clone())),
        distributions: if raw.distributions.is_empty() {
            vec![raw.package.clone()]
        } else {
            raw.distributions.iter().map(|d| crate::snapshot::normalize_name(d)).collect()
        },
        conda: raw.conda,
        facts: raw.facts,
        libraries: raw
            .libraries
            .into_iter()
            .map(|l| StackLibrary {
                role: l.role,
                path: l.path,
                dll: l.dll,
                check: l.check,
                what: l.what,
                table: l.table,
                needs: l.needs.map(Component::new),
                check_without: l.check_without,
                preloads_wheels: l.preloads_wheels,
                check_in_wheels: l.check_in_wheels,
            })
            .collect(),
        package: raw.package,
    };
    (e.list.len() == before).then_some(package)
}

/// Components rules name must be parts of the machine or stack packages;
/// every builtin check has its `builtin` rule, every `builtin` rule a check
/// (one of Rust's, or a stack library's `check`).
fn check_vocabulary(
    errors: &mut Vec<MatrixError>,
    rules: &BTreeMap<String, Rule>,
    tables: &BTreeMap<String, Table>,
    stack: &[(StackPackage, Origin)],
) {
    let known: Vec<&Component> =
        Component::MACHINE.iter().chain(stack.iter().map(|(p, _)| &p.component)).collect();
    for rule in rules.values() {
        for c in rule.components.iter().filter(|c| !known.contains(c)) {
            let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
            errors.push(MatrixError {
                origin: rule.origin.clone(),
                message: format!(
                    "component `{c}` is neither a part of the machine nor a stack package ({})",
                    names.join(", ")
                ),
            });
        }
    }
    let is_builtin = |code: &str| rules.get(code).is_some_and(|r| matches!(r.kind, RuleKind::Builtin));
    for (package, origin) in stack {
        for (fact, (table, column)) in &package.table_facts {
            let known = tables.get(table).is_some_and(|t| t.columns.contains(column));
            if !known {
                errors.push(MatrixError {
                    origin: origin.clone(),
                    message: format!(
                        "table fact `{fact}` of `{}` names {table}.{column}, which no table has",
                        package.package
                    ),
                });
            }
        }
    }
    for (package, origin) in stack {
        for lib in package.libraries.iter().filter(|l| !is_builtin(&l.check)) {
            errors.push(MatrixError {
                origin: origin.clone(),
                message: format!(
                    "library `{}` names `check: {}`, which is not a builtin rule",
                    lib.role, lib.check
                ),
            });
        }
    }
    for check in BuiltinCheck::ALL.iter().filter(|c| !is_builtin(c.code())) {
        errors.push(MatrixError {
            origin: Origin::default(),
            message: format!("no `builtin: true` rule words the builtin check `{}`", check.code()),
        });
    }
    let library_checks: Vec<&str> = stack
        .iter()
        .flat_map(|(p, _)| &p.libraries)
        .flat_map(|l| std::iter::once(&l.check).chain(&l.check_without).chain(&l.check_in_wheels))
        .map(String::as_str)
        .collect();
    for rule in rules.values().filter(|r| matches!(r.kind, RuleKind::Builtin)) {
        let known = BuiltinCheck::ALL.iter().any(|c| c.code() == rule.code)
            || library_checks.contains(&rule.code.as_str());
        if !known {
            errors.push(MatrixError {
                origin: rule.origin.clone(),
                message: format!("`{}` is `builtin: true`, but no builtin check has that code", rule.code),
            });
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn first_line(s: &str) -> String {
    // saphyr renders a snippet after the first line; our prefix carries the
    // location, so keep the message itself.
    let mut line = s.lines().next().unwrap_or(s).trim();
    line = line.strip_prefix("error:").unwrap_or(line).trim_start();
    // "line 10 column 13: message" → "message"
    if let Some(rest) = line.strip_prefix("line ")
        && let Some((_, msg)) = rest.split_once(": ")
    {
        line = msg;
    }
    plain_words(line.split(" at line ").next().unwrap_or(line))
}

/// A YAML library's message in a matrix author's words: what shape the
/// file needs here, not how the parser is built.
fn plain_words(message: &str) -> String {
    const SAID: &[(&str, &str)] = &[
        (
            "externally tagged enum expected scalar or mapping",
            "expected one word or a `key: value` mapping here",
        ),
        ("expected sequence start", "expected a list here (`- item` lines, or `[a, b]`)"),
        ("expected mapping start", "expected `key: value` lines here"),
        ("expected scalar", "expected a single value here, not a list or mapping"),
        ("invalid type: sequence", "a list is not allowed here"),
        ("invalid type: map", "a `key: value` mapping is not allowed here"),
    ];
    match SAID.iter().find(|(theirs, _)| message.starts_with(theirs)) {
        Some((theirs, ours)) => {
            let rest = message[theirs.len()..].trim_start_matches([',', ' ']);
            if rest.is_empty() { (*ours).to_string() } else { format!("{ours} ({rest})") }
        }
        None => message.to_string(),
    }
}

fn is_kebab(code: &str) -> bool {
    !code.is_empty()
        && !code.starts_with('-')
        && !code.ends_with('-')
        && !code.contains("--")
        && code.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `YYYY-MM-DD` with a real month and day.
pub(crate) fn is_iso_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else { return false };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// A data section (GPU models, OS releases, ...) cites where it was read.
fn require_sources<T>(e: &mut Errors<'_>, section: &Spanned<T>, sources: &[String], name: &str) {
    if sources.is_empty() || !sources.iter().all(|s| is_url(s)) {
        e.at(section, format!("{name} needs `sources` with public URLs"));
    }
}

fn is_url(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://"))
        && !s.contains(char::is_whitespace)
        && s.len() > 10
}

fn convert_table(e: &mut Errors<'_>, name: String, t: Spanned<RawTable>) -> Option<Table> {
    let origin = e.origin_of(&t);
    let raw = t.value;
    let before = e.list.len();
    let columns: BTreeSet<&str> = raw.columns.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    for row in raw.rows {
        let row_origin = e.origin_of(&row);
        let mut versions = None;
        let mut sources: Vec<String> = raw.sources.clone();
        let mut values = BTreeMap::new();
        for (col, cell) in &row.value {
            match (col.as_str(), &cell.value) {
                ("versions", Cell::Text(v)) => match v.parse::<crate::version::Spec>() {
                    Ok(spec) => versions = Some((v.clone(), spec)),
                    Err(err) => e.at(cell, format!("invalid version specifier {v:?}: {err}")),
                },
                ("sources", Cell::List(list)) => {
                    for s in list.iter().filter(|s| !is_url(s)) {
                        e.at(cell, format!("source {s:?} is not a URL"));
                    }
                    sources.extend(list.iter().cloned());
                }
                (c, Cell::Text(v)) if columns.contains(c) => {
                    values.insert(c.to_string(), v.clone());
                }
                (c, Cell::Text(_)) => e.at(
                    cell,
                    format!(
                        "column `{c}` is not declared in table `{name}` (columns: {})",
                        raw.columns.join(", ")
                    ),
                ),
                (c, Cell::List(_)) => e.at(cell, format!("column `{c}` must be a single value")),
            }
        }
        for missing in columns.iter().filter(|c| !values.contains_key(**c)) {
            e.at(&row, format!("row has no `{missing}`: every row of `{name}` needs every declared column"));
        }
        if sources.is_empty() {
            e.at(&row, "row has no source: give the row or its table `sources` with a public URL");
        }
        match versions {
            Some((text, spec)) => rows.push(Row {
                versions: text,
                spec,
                values,
                conditions: Vec::new(),
                sources,
                origin: row_origin,
            }),
            None if row.value.contains_key("versions") => {}
            None => e.at(&row, format!("row has no `versions` (the {} releases it describes)", raw.key)),
        }
    }
    let mut matches = Vec::new();
    for (fact, column) in &raw.matches {
        match fact.parse::<crate::snapshot::FactRef>() {
            Ok(f) => matches.push((f, column.clone())),
            Err(why) => e.push(origin.line, origin.column, format!("table `{name}`: {why}")),
        }
        if !columns.contains(column.as_str()) {
            e.push(
                origin.line,
                origin.column,
                format!("table `{name}` matches {fact} against undeclared column `{column}`"),
            );
        }
    }
    for row in &rows {
        for column in raw.matches.values() {
            if let Some(v) = row.values.get(column)
                && let Err(msg) = Condition::parse(v)
            {
                e.push(row.origin.line, row.origin.column, format!("column `{column}`: {msg}"));
            }
        }
    }
    (e.list.len() == before).then_some(Table {
        name,
        description: raw.description,
        key: raw.key,
        key_fact: None,
        matches,
        columns: raw.columns,
        rows,
        published: raw.published,
        origin,
    })
}

fn convert_rule(e: &mut Errors<'_>, r: Spanned<RawRule>, origin: Origin) -> Option<Rule> {
    let raw = r.value;
    let before = e.list.len();
    let code = raw.code.value.clone();
    if !is_kebab(&code) {
        e.at(&raw.code, format!("rule code {code:?} must be kebab-case (lower-case words joined by '-')"));
    }
    if raw.sources.is_empty() {
        e.at(&raw.code, format!("rule `{code}` has no sources: every rule cites at least one public URL"));
    }
    for s in raw.sources.iter().filter(|s| !is_url(&s.value)) {
        e.at(s, format!("source {:?} is not a URL", s.value));
    }
    if raw.components.is_empty() {
        e.at(&raw.code, format!("rule `{code}` names no components"));
    }
    if let Some(since) = &raw.since
        && !is_iso_date(&since.value)
    {
        e.at(since, format!("`since` {:?} is not a date (YYYY-MM-DD)", since.value));
    }
    let when = clauses(e, raw.when);
    let require = clauses(e, raw.require);
    let unless = clauses(e, raw.unless);
    let lookup = |e: &mut Errors<'_>, l: Spanned<String>| super::Lookup {
        origin: e.origin_of(&l),
        ..super::Lookup::parse(&l.value)
    };
    let kind = if let Some(sig) = raw.signature {
        if raw.builtin || !when.is_empty() || !require.is_empty() || !unless.is_empty() {
            e.at(
                &raw.code,
                format!("signature rule `{code}` cannot also have `builtin`, `when`, `require` or `unless`"),
            );
        }
        let lookup = raw.lookup.map(|l| lookup(e, l));
        let texts = SignatureTexts { message: &raw.message, why: &raw.why, fixes: &raw.fixes };
        let likely = likely(e, &code, raw.severity, raw.likely);
        let readers = Readers { lookup, aten: raw.aten, api: raw.api };
        match signature_kind(e, &code, &sig, texts, raw.explained_by, readers) {
            RuleKind::Signature { regex, explained_by, lookup, aten, api, .. } => {
                RuleKind::Signature { regex, explained_by, lookup, aten, api, likely }
            }
            other => other,
        }
    } else if !raw.explained_by.is_empty() {
        e.at(
            &raw.code,
            format!("`explained_by` belongs to signature rules; rule `{code}` has no `signature`"),
        );
        RuleKind::Builtin
    } else if raw.builtin {
        if !when.is_empty() || !require.is_empty() || !unless.is_empty() || raw.lookup.is_some() {
            e.at(
                &raw.code,
                format!("builtin rule `{code}` cannot have `when`, `lookup`, `require` or `unless`"),
            );
        }
        RuleKind::Builtin
    } else {
        if when.is_empty() && require.is_empty() {
            e.at(&raw.code, format!("rule `{code}` has neither `when` nor `require`"));
        }
        let lookup = raw.lookup.map(|l| lookup(e, l));
        RuleKind::Facts { when, lookup, require, unless, texts: super::Texts::default() }
    };
    let rule = Rule {
        code,
        severity: raw.severity,
        components: raw.components,
        summary: raw.summary,
        message: raw.message,
        why: raw.why,
        fixes: raw.fixes,
        sources: raw.sources.into_iter().map(|s| s.value).collect(),
        since: raw.since.map(|s| s.value),
        supersedes: raw.supersedes,
        cause: raw.cause,
        kind,
        origin,
    };
    (e.list.len() == before).then_some(rule)
}

/// A `when:` or `require:` map as clauses, in the order of their facts'
/// names. What needs the whole matrix (which facts exist, which rows a
/// template reads) is checked when it is compiled.
fn clauses(e: &mut Errors<'_>, raw: Clauses) -> Vec<Clause> {
    let mut out: Vec<Clause> = Vec::new();
    for (fact, cond) in raw.0 {
        let origin = e.origin_of(&fact);
        if out.iter().any(|c| c.fact.to_string() == fact.value.trim()) {
            e.at(&fact, format!("fact `{}` is named twice", fact.value));
            continue;
        }
        let parsed = fact.value.parse::<crate::snapshot::FactRef>();
        let condition = Cond::parse(&cond.value);
        match (parsed, condition) {
            (Ok(fact), Ok(condition)) => out.push(Clause { fact, condition, origin }),
            (Err(msg), _) => e.at(&fact, msg),
            (_, Err(msg)) => e.at(&cond, msg),
        }
    }
    out.sort_by_key(|c| c.fact.to_string());
    out
}

/// A symptom's likely causes. A symptom is no verdict: its rule is a note
/// (`info`), and each cause cites the source that shows it. An error's
/// causes are ones the facts decide (`decided_by`): the error stands as it
/// is where none is decided, so a cause that only might apply has no place.
fn likely(
    e: &mut Errors<'_>,
    code: &str,
    severity: Severity,
    raw: Vec<Spanned<RawLikely>>,
) -> Vec<super::Likely> {
    let mut out = Vec::new();
    for l in raw {
        if severity != Severity::Info && l.value.decided_by.0.is_empty() {
            let why = "an error's causes must be decided by the facts (`decided_by`); undecided ones belong to a note";
            e.at(&l, format!("a likely cause of `{code}` has no `decided_by`: {why}"));
        }
        if !is_url(&l.value.source) {
            e.at(&l, format!("a likely cause of `{code}` cites no URL: {:?}", l.value.source));
        }
        let l = l.value;
        let when = clauses(e, l.when);
        let decided_by = clauses(e, l.decided_by);
        out.push(super::Likely {
            cause: l.cause,
            when,
            decided_by,
            confirm: l.confirm,
            fix: l.fix,
            source: l.source,
        });
    }
    out
}

/// The texts of a signature rule, whose placeholders its groups fill.
struct SignatureTexts<'a> {
    message: &'a String,
    why: &'a String,
    fixes: &'a [String],
}

/// What fills a signature's texts beside its groups: a table row, the
/// exporter history of an ATen operator, the history of a Python API.
struct Readers {
    lookup: Option<super::Lookup>,
    aten: Option<String>,
    api: Option<super::ApiChange>,
}

/// The groups an `api` signature names its API with: a module (`No module
/// named`), a name and the module it was imported from (`from`, `name`)
/// or looked up in (`of`, `attr`), a function and the keyword argument
/// it refused (`func`, `kwarg`), or the class a pickle names and the
/// module it looked in (`pickled`, `pickled_in`).
const API_GROUPS: &[&str] = &["module", "from", "of", "func", "pickled_in"];

/// A signature rule's kind. The pattern is compiled here, with the limits
/// a paste is matched under, so a pattern too big to compile is this
/// file's error and not a silent loss of every signature when the set is
/// built; and each `{placeholder}` of its texts must be a named group.
fn signature_kind(
    e: &mut Errors<'_>,
    code: &str,
    sig: &Spanned<String>,
    texts: SignatureTexts<'_>,
    explained_by: Vec<String>,
    readers: Readers,
) -> RuleKind {
    let Readers { lookup, aten, api } = readers;
    match regex::Regex::new(&sig.value) {
        Ok(regex) => {
            let group = |name: &str| regex.capture_names().flatten().any(|c| c == name);
            if let Some(a) = aten.as_deref().filter(|a| !a.split('|').all(group)) {
                e.at(sig, format!("`aten: {a}` in rule `{code}` names no group of its signature"));
            }
            if api.is_some() && !API_GROUPS.iter().any(|g| group(g)) {
                let groups = API_GROUPS.join(", ");
                e.at(sig, format!("`api` in rule `{code}` needs a signature group named one of {groups}"));
            }
            let texts = std::iter::once(texts.message).chain([texts.why]).chain(texts.fixes);
            let names: std::collections::BTreeSet<String> = texts.flat_map(|t| placeholders(t)).collect();
            // `{a|b}`: the first of two groups that captured; `{row.c}`: a
            // column of the looked-up table (checked with the tables).
            let filled = |part: &str| {
                group(part)
                    || (lookup.is_some() && part.starts_with("row."))
                    || (aten.is_some() && ["aten.opset", "aten.torch", "aten.at_opset"].contains(&part))
                    || (api.is_some()
                        && ["api", "api.package", "api.added", "api.removed", "api.here"].contains(&part))
            };
            for name in names {
                if !name.split('|').all(filled) {
                    e.at(
                        sig,
                        format!("`{{{name}}}` in rule `{code}` is filled by no named group of its signature"),
                    );
                }
            }
            RuleKind::Signature {
                regex: super::LazyRegex::new(&sig.value),
                explained_by,
                lookup,
                aten,
                api,
                likely: Vec::new(),
            }
        }
        Err(err) => {
            let why = match err {
                regex::Error::CompiledTooBig(limit) => {
                    format!("it compiles past the regex size limit ({limit} bytes); simplify it")
                }
                other => other.to_string().lines().last().unwrap_or("").to_string(),
            };
            e.at(sig, format!("invalid signature regex: {why}"));
            RuleKind::Builtin
        }
    }
}

/// Every signature compiles alone (checked per rule); the set a paste is
/// scanned with must compile too, or `diagnose` would match nothing.
fn check_signature_set(errors: &mut Vec<MatrixError>, rules: &BTreeMap<String, Rule>) {
    let signatures: Vec<&Rule> =
        rules.values().filter(|r| matches!(r.kind, RuleKind::Signature { .. })).collect();
    let pattern = |r: &Rule| match &r.kind {
        RuleKind::Signature { regex, .. } => regex.as_str().to_string(),
        _ => String::new(),
    };
    if let Err(err) = regex::RegexSet::new(signatures.iter().map(|r| pattern(r))) {
        let Some(largest) = signatures.iter().max_by_key(|r| pattern(r).len()) else { return };
        let why = err.to_string().lines().last().unwrap_or("").to_string();
        let message = format!(
            "the {} signatures together do not compile ({why}); the largest is rule `{}`'s",
            signatures.len(),
            largest.code
        );
        errors.push(MatrixError { origin: largest.origin.clone(), message });
    }
}

/// Every `{name}` a text asks to be filled.
fn placeholders(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    super::template::render(text, None, |name| {
        names.push(name.to_string());
        String::new()
    });
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_shape_errors_are_said_in_a_matrix_authors_words() {
        let load = |text: &str| {
            let mut b = Builder::default();
            b.add_file(true, "team/policy.yaml", text, &mut LayerNames::default());
            b.errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
        };
        let errors = [load("rules: 5\n"), load("\t- a\n"), load("rules:\n  - code: x\n    severity: [1\n")];
        for e in &errors {
            assert!(
                !e.contains("sequence start")
                    && !e.contains("mapping start")
                    && !e.contains("externally tagged"),
                "{e}"
            );
        }
        assert!(
            errors[0].contains("team/policy.yaml:1:") && errors[0].contains("expected a list here"),
            "{}",
            errors[0]
        );
    }

    const VERSION: &str = "version: \"2000-01-01\"\n";

    fn load_one(text: &str) -> Result<Matrix, Vec<MatrixError>> {
        // The stack and the builtin checks' wording every matrix needs.
        let needed = super::super::EMBEDDED
            .iter()
            .filter(|(p, _)| {
                [
                    "/stack.yaml",
                    "/builtin.yaml",
                    "/onnx.yaml",
                    "/onnxruntime.yaml",
                    "/torch.yaml",
                    "/cuda.yaml",
                ]
                .iter()
                .any(|f| p.ends_with(f))
            })
            .map(|(p, c)| (p.to_string(), c.to_string()));
        let mut files: Vec<(String, String)> = needed.collect();
        // The distributions those files' rules name beside the stack's:
        // the matrix's own list, without its version (the test sets one).
        let (_, packages) = super::super::EMBEDDED.iter().find(|(p, _)| p.ends_with("/matrix.yaml")).unwrap();
        let packages: String =
            packages.lines().filter(|l| !l.starts_with("version:")).map(|l| format!("{l}\n")).collect();
        files.push(("packages.yaml".into(), packages));
        files.push(("t.yaml".into(), format!("{VERSION}{text}")));
        let mut b = Builder::default();
        b.add_layer(false, &files);
        b.finish_checking(Vec::new(), true)
    }

    fn err(text: &str) -> String {
        load_one(text).unwrap_err().iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    }

    const RULE: &str = r#"rules:
  - code: onnx-needs-new-protobuf
    severity: error
    components: [onnx, protobuf]
    summary: s
    message: m
    why: w
    fixes: ["pip install x"]
    sources: ["https://example.org/issue/1"]
    when:
      onnx: ">=1.13"
    require:
      protobuf: ">=3.20"
"#;

    #[test]
    fn a_valid_rule_loads() {
        let m = load_one(RULE).unwrap();
        assert!(m.rule("onnx-needs-new-protobuf").is_some());
        assert_eq!(m.version, "2000-01-01");
    }

    #[test]
    fn a_misspelled_key_is_reported_with_its_line_and_column() {
        let e = err(&RULE.replace("severity:", "sevrity:"));
        assert!(e.starts_with("t.yaml:4:"), "{e}");
        assert!(e.contains("sevrity"), "{e}");
    }

    #[test]
    fn an_unparsable_specifier_points_at_the_value() {
        let e = err(&RULE.replace("\">=3.20\"", "\"=>3.20\""));
        assert!(e.starts_with("t.yaml:14:17:"), "{e}");
        assert!(e.contains("invalid version specifier"), "{e}");
    }

    #[test]
    fn a_rule_without_sources_is_rejected() {
        let e = err(&RULE.replace("    sources: [\"https://example.org/issue/1\"]\n", ""));
        assert!(e.contains("has no sources"), "{e}");
        assert!(e.starts_with("t.yaml:3:"), "{e}");
    }

    #[test]
    fn duplicate_codes_name_the_first_place() {
        let twice = format!("{RULE}{}", RULE.trim_start_matches("rules:\n"));
        let e = err(&twice);
        assert!(e.contains("already used at t.yaml:3:"), "{e}");
    }

    #[test]
    fn syntax_errors_carry_a_location() {
        let e = err("rules: [\n  - code: x\n");
        assert!(e.starts_with("t.yaml:"), "{e}");
        assert!(!e.starts_with("t.yaml:0:0"), "{e}");
    }

    #[test]
    fn unquoted_float_versions_are_refused() {
        let e = err(
            "tables:\n  t:\n    description: d\n    key: onnx\n    columns: [ir]\n    sources: [\"https://example.org/a\"]\n    rows:\n      - versions: \">=1\"\n        ir: 12.10\n",
        );
        assert_eq!(
            e,
            "t.yaml:10:13: the unquoted number 12.1 is not a version: quote versions (\"12.10\" unquoted reads as 12.1)"
        );
    }

    #[test]
    fn incomplete_rows_and_bad_templates_are_reported() {
        let table = "tables:\n  ort:\n    description: d\n    key: onnxruntime\n    columns: [max_ir]\n    sources: [\"https://example.org/a\"]\n    rows:\n      - versions: \">=1\"\n";
        let e = err(table);
        assert!(e.contains("row has no `max_ir`"), "{e}");
        let rule = RULE.replace("protobuf: \">=3.20\"", "protobuf: \"<={row.nope}\"");
        let e = err(&rule);
        assert!(e.contains("has no `lookup`"), "{e}");
    }
}
