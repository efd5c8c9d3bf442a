//! The verdict by component that the text and Markdown reports share: the
//! system, the NVIDIA stack, a model, then each Python environment with its
//! interpreter and stack packages, each line ok / warning / error / n/e / -.

use super::Report;
use crate::matrix::{Component, Matrix, Severity};
use crate::snapshot::{ImportStatus, Library, ProbeMode, Probed, PythonEnv};

/// The status of one verdict line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Absent,
    Ok,
    NotEvaluated,
    Info,
    Warning,
    Error,
}

impl Status {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Self::Absent => "-",
            Self::Ok => "ok",
            Self::NotEvaluated => "n/e",
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }

    fn of(s: Severity) -> Self {
        match s {
            Severity::Info => Self::Info,
            Severity::Warning => Self::Warning,
            Severity::Error => Self::Error,
        }
    }
}

pub struct Line {
    pub status: Status,
    pub label: String,
    pub detail: String,
    /// What a short report does with the line when it is ok or absent.
    pub fold: Fold,
}

/// How a short report may shorten an ok or absent line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fold {
    /// Always shown as it is.
    Never,
    /// Left out, whatever its status: what only the long report gives, or
    /// what the findings under the section say better.
    Hide,
    /// Joined with its neighbours of the same status into one line, as this.
    Into(String),
}

impl Line {
    fn new(status: Status, label: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { status, label: label.into(), detail: detail.into(), fold: Fold::Never }
    }

    /// Folds into one line with its neighbours, as `short`, when ok or absent.
    fn folding(mut self, short: impl Into<String>) -> Self {
        self.fold = Fold::Into(short.into());
        self
    }

    fn hidden_when_short(mut self) -> Self {
        self.fold = Fold::Hide;
        self
    }
}

pub struct Section {
    pub title: String,
    /// The Python environment it is about (findings name it the same way).
    pub subject: Option<String>,
    pub lines: Vec<Line>,
}

/// The verdict grouped by component: the system, then each Python
/// environment with its interpreter and stack packages.
pub fn overview(report: &Report, matrix: &Matrix) -> Vec<Section> {
    let snap = &report.snapshot;
    let worst = |subject: Option<&str>, component: Component| {
        report
            .findings
            .iter()
            .filter(|f| f.subject.as_deref() == subject && f.parts().any(|c| *c == component))
            .map(|f| Status::of(f.severity))
            .max()
    };
    let mut sections = Vec::new();

    let system_line = match &snap.system {
        Probed::Found(s) => {
            let mut parts = vec![s.os.found().cloned().unwrap_or_else(|| "unknown OS".into())];
            parts.push(s.arch.clone());
            match &s.glibc {
                Probed::Found(v) => parts.push(format!("glibc {v}")),
                Probed::NotEvaluated(_) if s.distro_id.as_deref() == Some("windows") => {}
                Probed::NotEvaluated(_) => parts.push("glibc unknown".into()),
            }
            if let Some(c) = &s.container {
                parts.push(format!("{c} container"));
            }
            if s.wsl {
                parts.push("WSL".into());
            }
            let kernel = match s.kernel.found() {
                Some(k) if k.starts_with("Windows") => k.clone(),
                Some(k) => format!("kernel {k}"),
                None => String::new(),
            };
            Line::new(worst(None, Component::SYSTEM).unwrap_or(Status::Ok), parts.join(" · "), kernel)
        }
        Probed::NotEvaluated(r) => Line::new(Status::NotEvaluated, "system", r.clone()),
    };
    let model_only = snap.model.is_some() && !snap.targets.is_empty() && snap.pythons.is_empty();
    if !model_only {
        sections.push(Section { title: "System".into(), subject: None, lines: vec![system_line] });
    }
    if let Some(m) = &snap.model {
        let mut section = model_section(m, &snap.targets, &report.model_needs, &|c| worst(None, c));
        section.lines.extend(model_trials(snap));
        sections.push(section);
    }
    if let Probed::Found(n) = &snap.nvidia {
        sections.push(nvidia_section(report, n, &|c| worst(None, c)));
    }

    if snap.pythons.is_empty() && !model_only {
        sections.push(Section {
            title: "Python".into(),
            subject: None,
            lines: vec![Line::new(
                worst(None, Component::PYTHON).unwrap_or(Status::NotEvaluated),
                if snap.pasted.is_some() {
                    "the text names no Python"
                } else {
                    "no Python interpreter found"
                },
                String::new(),
            )],
        });
    }
    for env in &snap.pythons {
        sections.push(python_section(report, matrix, env, &worst));
    }
    sections
}

fn nvidia_section(
    report: &Report,
    n: &crate::snapshot::Nvidia,
    worst: &dyn Fn(Component) -> Option<Status>,
) -> Section {
    let mut lines = driver_and_gpu_lines(n, worst);
    lines.extend(library_lines(n, worst));
    lines.extend(n.links.iter().filter(|l| l.python.is_none()).map(|l| link_line(report, l)));
    Section { title: "NVIDIA".into(), subject: None, lines }
}

/// Whether the loader finds what one GPU library needs. Its status is the
/// worst finding that names the library: what is missing may be loaded at
/// run time from the package's own wheels or the host's driver.
fn link_line(report: &Report, link: &crate::snapshot::nvidia::LinkReport) -> Line {
    let label = format!("loads {}", link.role);
    if link.unresolved.is_empty() {
        let detail = format!("all {} dependencies resolve", link.resolved.len());
        return Line::new(Status::Ok, label, detail).hidden_when_short();
    }
    let names: Vec<&str> = link.unresolved.iter().map(|u| u.soname.as_str()).collect();
    // The findings about it name what needs the missing libraries.
    let needers: Vec<String> = link.unresolved.iter().map(|u| u.needed_by.display().to_string()).collect();
    let status = report
        .findings
        .iter()
        .filter(|f| f.subject == link.python)
        .filter(|f| f.evidence.iter().any(|e| needers.iter().any(|n| e.contains(n.as_str()))))
        .map(|f| Status::of(f.severity))
        .max();
    // The findings say it in the short report.
    match status {
        Some(status) => Line::new(status, label, format!("missing {}", names.join(", "))),
        None => Line::new(
            Status::Ok,
            label,
            format!("needs {} at run time, from its own wheels or the driver", names.join(", ")),
        ),
    }
    .hidden_when_short()
}

/// The driver, then one line per GPU (none when there is no driver).
fn driver_and_gpu_lines(
    n: &crate::snapshot::Nvidia,
    worst: &dyn Fn(Component) -> Option<Status>,
) -> Vec<Line> {
    let driver = match &n.driver {
        Probed::Found(d) => {
            let cuda = d.max_cuda.as_ref().map(|c| format!(" · supports CUDA up to {c}")).unwrap_or_default();
            Line::new(
                worst(Component::DRIVER).unwrap_or(Status::Ok),
                format!("driver {}{cuda}", d.version),
                format!("via {}", d.source),
            )
        }
        Probed::NotEvaluated(r) => {
            let absent = n.driver_absent();
            let status = worst(Component::DRIVER).unwrap_or(if absent {
                Status::Absent
            } else {
                Status::NotEvaluated
            });
            Line::new(status, "driver", if absent { "no NVIDIA driver".into() } else { r.clone() })
                .folding("NVIDIA driver")
        }
    };
    let no_driver = driver.status == Status::Absent;
    let mut lines = vec![driver];
    match &n.gpus {
        Probed::Found(gpus) => {
            for g in gpus {
                let cc = g
                    .compute_capability
                    .as_ref()
                    .map(|c| format!(" · compute capability {c}"))
                    .unwrap_or_default();
                let mem = g.memory_mib.map(|m| format!(" · {} GiB", (m + 512) / 1024)).unwrap_or_default();
                lines.push(Line::new(
                    worst(Component::GPU).unwrap_or(Status::Ok),
                    format!("GPU {} {}{cc}{mem}", g.index, g.name),
                    match g.name.starts_with("assumed GPU") {
                        true => "via --assume".into(),
                        false => g.architecture.clone().unwrap_or_default(),
                    },
                ));
            }
        }
        Probed::NotEvaluated(_) if no_driver => {}
        Probed::NotEvaluated(r) => lines.push(Line::new(Status::NotEvaluated, "GPUs", r.clone())),
    }
    lines
}

/// CUDA (toolkits and runtimes), cuDNN and TensorRT: every version found.
fn library_lines(n: &crate::snapshot::Nvidia, worst: &dyn Fn(Component) -> Option<Status>) -> Vec<Line> {
    let versions = |lib: Library| {
        let mut v: Vec<String> = n
            .libraries
            .iter()
            .filter(|c| c.library == lib)
            .map(|c| {
                c.version
                    .as_ref()
                    .map_or_else(|| c.major.map(|m| m.to_string()).unwrap_or_default(), |v| v.to_string())
            })
            .filter(|v| !v.is_empty())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let mut cuda: Vec<String> = n
        .toolkits
        .iter()
        .map(|t| {
            let version = t.version.found().map_or("?".into(), |v| v.to_string());
            // A pasted toolkit's root is already written in parentheses.
            match t.root.display().to_string() {
                root if root.starts_with('(') => format!("toolkit {version} {root}"),
                root => format!("toolkit {version} ({root})"),
            }
        })
        .collect();
    let cudart = versions(Library::Cudart);
    if !cudart.is_empty() {
        cuda.push(format!("runtime {}", cudart.join(", ")));
    }
    let with_headers = |component: Component, lib: Library| {
        let mut found: Vec<String> =
            n.headers.iter().filter(|h| h.component == component).map(|h| h.version.to_string()).collect();
        // "9" from libcudnn.so.9 adds nothing next to the header's "9.26.0".
        for l in versions(lib) {
            if !found.iter().any(|f| f == &l || f.starts_with(&format!("{l}."))) {
                found.push(l);
            }
        }
        found
    };
    vec![
        component_line("CUDA", cuda, worst(Component::CUDA)),
        component_line("cuDNN", with_headers(Component::CUDNN, Library::Cudnn), worst(Component::CUDNN)),
        component_line(
            "TensorRT",
            with_headers(Component::TENSORRT, Library::Nvinfer),
            worst(Component::TENSORRT),
        ),
    ]
}

fn model_section(
    m: &crate::snapshot::model::ModelFacts,
    targets: &std::collections::BTreeMap<String, String>,
    needs: &[crate::check::needs::Need],
    worst: &dyn Fn(Component) -> Option<Status>,
) -> Section {
    let opsets: Vec<String> = m.opsets.iter().map(|(d, v)| format!("{d} {v}")).collect();
    let mut lines = vec![Line::new(
        worst(Component::new("onnx")).unwrap_or(Status::Ok),
        format!("IR {} · opsets {}", m.ir_version, opsets.join(", ")),
        m.producer.clone(),
    )];
    for (domain, ops) in &m.ops {
        let total: u64 = ops.values().sum();
        let mut top: Vec<(&String, &u64)> = ops.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let names: Vec<String> = top.iter().take(8).map(|(o, n)| format!("{o}×{n}")).collect();
        lines.push(Line::new(Status::Ok, format!("{domain}: {total} nodes"), names.join(" ")));
    }
    let mb = m.initializer_bytes as f64 / (1024.0 * 1024.0);
    let external = if m.external_data.is_empty() {
        String::new()
    } else {
        format!(
            " · external data in {}",
            m.external_data.iter().map(|e| e.location.as_str()).collect::<Vec<_>>().join(", ")
        )
    };
    lines.push(Line::new(
        Status::Ok,
        format!("{} initializers, {mb:.1} MiB{external}", m.initializers),
        format!("{} subgraphs, {} functions", m.subgraphs, m.functions),
    ));
    let dynamic = crate::check::profile::describe(m);
    if !dynamic.is_empty() {
        lines.push(Line::new(Status::Ok, "dynamic inputs", dynamic.join(" ")));
    }
    let run_time = crate::check::profile::runtime_shape_nodes(m);
    if !run_time.is_empty() {
        lines.push(Line::new(Status::Ok, "run-time shape operands", run_time.join(", ")));
    }
    for n in needs {
        lines.push(match &n.at_least {
            Some(v) => Line::new(Status::Ok, format!("needs {} >= {v}", n.package), n.because.clone()),
            // No release the matrix knows takes it: the doctor cannot name
            // one, which is not a finding of its own (the rule that knows
            // why says so).
            None => Line::new(
                Status::NotEvaluated,
                format!("needs {}: no release known", n.package),
                n.because.clone(),
            ),
        });
    }
    for (name, version) in targets {
        lines.push(Line::new(Status::Ok, format!("target {name} {version}"), String::new()));
    }
    Section { title: format!("Model {}", m.path.display()), subject: None, lines }
}

/// What each installed onnxruntime answered when it was asked to load the
/// model: the answer the JSON report holds, said in the text too.
fn model_trials(snap: &crate::snapshot::Snapshot) -> Vec<Line> {
    let mut lines = Vec::new();
    for env in &snap.pythons {
        let Some(import) = env.import("onnxruntime") else { continue };
        let Some(said) = import.facts.get("trial_model").and_then(|v| v.as_str()) else { continue };
        let status = if said == "loads" {
            Status::Ok
        } else if said.starts_with("skipped") {
            Status::NotEvaluated
        } else {
            Status::Error
        };
        let providers: Vec<&str> = import
            .facts
            .get("trial_model_providers")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|p| p.as_str()).collect())
            .unwrap_or_default();
        let version = env
            .distributions
            .found()
            .and_then(|d| d.iter().find(|d| d.name.starts_with("onnxruntime")))
            .map(|d| format!(" {}", d.version))
            .unwrap_or_default();
        let what = if said == "loads" { "loads it (CPU)".to_string() } else { said.to_string() };
        lines.push(Line::new(
            status,
            format!("tried: onnxruntime{version} {what}"),
            format!("{} {}", env.label(), providers.join(", ")).trim().to_string(),
        ));
    }
    lines
}

fn component_line(name: &str, found: Vec<String>, worst: Option<Status>) -> Line {
    if found.is_empty() {
        Line::new(worst.unwrap_or(Status::Absent), name, "not found").folding(name)
    } else {
        Line::new(worst.unwrap_or(Status::Ok), format!("{name} {}", found.join(" · ")), String::new())
    }
}

fn python_section(
    report: &Report,
    matrix: &Matrix,
    env: &PythonEnv,
    worst: &dyn Fn(Option<&str>, Component) -> Option<Status>,
) -> Section {
    let label = env.label();
    let worst_here = |c: Component| worst(Some(label.as_str()), c);
    let mut lines = vec![interpreter_line(report, env, &worst_here)];
    let facts = crate::check::facts::Facts::for_env(&report.snapshot, Some(env), matrix);
    for package in &matrix.stack {
        let line = package_line(report, matrix, env, package, &facts, &worst_here);
        // What torch was built for and which providers onnxruntime offers
        // is worth a line of its own, even when all is well.
        let gpu_facts =
            matches!(package.package.as_str(), "torch" | "onnxruntime") && !line.detail.is_empty();
        // No package list (a paste without one): the interpreter's line
        // says so once, instead of every package saying it again.
        if line.status == Status::NotEvaluated
            && env.distributions.found().is_none()
            && env.import(&package.package).is_none()
        {
            continue;
        }
        let line = match line.status {
            Status::Absent => line.folding(package.package.clone()),
            Status::Ok if !gpu_facts => {
                let short = line.label.clone();
                line.folding(short)
            }
            _ => line,
        };
        lines.push(line);
    }
    if let Probed::Found(n) = &report.snapshot.nvidia {
        let mine = n.links.iter().filter(|l| l.python.as_deref() == Some(label.as_str()));
        lines.extend(mine.map(|l| link_line(report, l)));
    }
    Section {
        title: format!("Python {} ({})", env.label(), env.source.describe()),
        subject: Some(label),
        lines,
    }
}

/// The interpreter: implementation, version and kind, or why it is unknown.
fn interpreter_line(report: &Report, env: &PythonEnv, worst: &dyn Fn(Component) -> Option<Status>) -> Line {
    let python = worst(Component::PYTHON);
    match (&env.version, &env.interpreter) {
        (Probed::Found(v), Probed::Found(i)) => {
            let implementation = match i.implementation.as_str() {
                "cpython" => "CPython".to_string(),
                "pypy" => "PyPy".to_string(),
                other => other.to_string(),
            };
            let kind = env.kind.map(|k| k.as_str()).unwrap_or("unknown kind");
            Line::new(python.unwrap_or(Status::Ok), format!("{implementation} {v} · {kind}"), String::new())
                .folding(format!("{implementation} {v} ({kind})"))
        }
        (version, Probed::NotEvaluated(reason)) => {
            let label = match version {
                Probed::Found(v) => format!("Python {v}"),
                Probed::NotEvaluated(_) => "Python".into(),
            };
            // --fast and pastes never run the interpreter: that is no gap.
            let status = if report.snapshot.mode != ProbeMode::Full && env.distributions.found().is_some() {
                python.unwrap_or(Status::Ok)
            } else {
                python.unwrap_or(Status::NotEvaluated).max(Status::NotEvaluated)
            };
            let detail = match &env.distributions {
                Probed::NotEvaluated(why) => why.clone(),
                Probed::Found(_) => reason.clone(),
            };
            Line::new(status, label, detail)
        }
        (Probed::NotEvaluated(r), Probed::Found(_)) => Line::new(Status::NotEvaluated, "Python", r.clone()),
    }
}

/// One stack package: its version and what its import showed.
fn package_line(
    report: &Report,
    matrix: &Matrix,
    env: &PythonEnv,
    package: &crate::matrix::StackPackage,
    facts: &crate::check::facts::Facts<'_>,
    worst: &dyn Fn(Component) -> Option<Status>,
) -> Line {
    let key = package.package.as_str();
    let installed = env.first_installed(&matrix.distributions_of(key));
    let import = env.import(key);
    let found = worst(package.component.clone());
    let (status, detail) = match import.map(|i| &i.status) {
        _ if installed.is_none() && env.distributions.found().is_none() => {
            let why =
                import.map_or_else(|| "package metadata could not be read".into(), |i| i.status.describe());
            (found.unwrap_or(Status::NotEvaluated).max(Status::NotEvaluated), why)
        }
        Some(ImportStatus::Ok) => (found.unwrap_or(Status::Ok), facts_summary(key, facts)),
        Some(ImportStatus::NotInstalled) | None if installed.is_none() => {
            if import.is_none()
                && report.snapshot.mode == ProbeMode::Full
                && env.interpreter.found().is_none()
            {
                (Status::NotEvaluated, String::new())
            } else {
                (Status::Absent, "not installed".into())
            }
        }
        Some(ImportStatus::NotInstalled) | None => (found.unwrap_or(Status::Ok), String::new()),
        Some(ImportStatus::NotEvaluated { .. })
            if installed.is_none() && env.distributions.found().is_some() =>
        {
            (Status::Absent, "not installed".into())
        }
        Some(s @ ImportStatus::NotEvaluated { .. }) => {
            (found.unwrap_or(Status::NotEvaluated).max(Status::NotEvaluated), s.describe())
        }
        Some(s) => (found.unwrap_or(Status::Error).max(Status::Error), s.describe()),
    };
    let label = match installed {
        Some(d) => format!("{} {}", d.name, d.version),
        None => key.to_string(),
    };
    let subject = env.label();
    let gap = report
        .summary
        .matrix_gaps
        .iter()
        .find(|g| g.subject.as_deref() == Some(subject.as_str()) && g.package.as_deref() == Some(key));
    let Some(gap) = gap else { return Line::new(status, label, detail) };
    // A release the matrix does not know: say so on its line.
    let known = if gap.newer { "newer than this matrix" } else { "not in this matrix" };
    let checks =
        if gap.checks.len() == 1 { "1 check".to_string() } else { format!("{} checks", gap.checks.len()) };
    let (status, said) = if gap.covered_by_trial {
        (
            status,
            format!("{known} ({}): {checks} not evaluated; the trial answered them", report.matrix.version),
        )
    } else {
        (
            status.max(Status::NotEvaluated),
            format!("{known} ({}): {checks} not evaluated", report.matrix.version),
        )
    };
    let detail = if detail.is_empty() { said } else { format!("{detail} · {said}") };
    Line::new(status, label, detail)
}

fn facts_summary(key: &str, facts: &crate::check::facts::Facts<'_>) -> String {
    use crate::check::facts::Fact;
    use crate::snapshot::{Attr, FactKey};
    let get = |k: &str| match facts.key(&FactKey::Of(key.into(), Attr::Declared(k.into()))) {
        Fact::Text(t) => Some(t),
        Fact::List(l) => Some(l.join(", ")),
        _ => None,
    };
    let mut parts = Vec::new();
    match key {
        "torch" => {
            parts.push(get("cuda").map_or("CPU build".into(), |c| format!("CUDA {c}")));
            if let Some(c) = get("cudnn_version").or_else(|| get("cudnn")) {
                parts.push(format!("cuDNN {c}"));
            }
            if let Some(a) = get("cuda_available") {
                parts.push(format!("CUDA available: {a}"));
            }
        }
        "onnx" => {
            if let Some(ir) = get("ir_version") {
                parts.push(format!("IR {ir}"));
            }
            if let Some(o) = get("max_opset") {
                parts.push(format!("opset {o}"));
            }
        }
        "onnxruntime" => {
            if let Some(p) = get("providers") {
                parts.push(p);
            }
        }
        "protobuf" => {
            if let Some(b) = get("backend") {
                parts.push(format!("{b} backend"));
            }
        }
        _ => {}
    }
    parts.join(" · ")
}
