//! The report: one data model, several renderers.
//!
//! [`Report`] holds everything a run produced (the doctor and matrix that
//! judged, the snapshot, the findings, every rule's outcome, a summary) and
//! is what `--format json` prints. The text and Markdown renderers only
//! format it; [`overview`] computes the per-component verdict lines they
//! share, so the terminal and a ticket never disagree.

pub mod catalog;
pub mod ci;
pub mod markdown;
pub mod redact;
pub mod text;

use serde::{Deserialize, Serialize};

use crate::check::{Finding, FixPlan, Judgement, Outcome, RuleOutcome};
use crate::matrix::{Component, Matrix, Severity};
use crate::snapshot::{ImportStatus, Library, ProbeMode, Probed, PythonEnv, Snapshot};

/// The renderings of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// For a person at a terminal.
    Text,
    /// One JSON document, for machines.
    Json,
    /// For a GitHub issue or a ticket.
    Markdown,
    /// GitHub Actions workflow annotations.
    Github,
    /// JUnit XML.
    Junit,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// "onnx-doctor 0.1.0".
    pub doctor: String,
    pub matrix: MatrixInfo,
    pub summary: Summary,
    pub findings: Vec<Finding>,
    /// Every finding's chosen fix, merged per environment: one consistent
    /// set of commands (see `check::plan`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fix_plan: Vec<FixPlan>,
    pub outcomes: Vec<RuleOutcome>,
    pub snapshot: Snapshot,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MatrixInfo {
    pub version: String,
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// The worst severity found: "error", "warning", "info" or "ok";
    /// "not_evaluated" when nothing could be probed.
    pub verdict: String,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Rule evaluations that could not be made (missing facts).
    pub not_evaluated: usize,
    pub python_environments: usize,
}

impl Report {
    pub fn new(snapshot: Snapshot, matrix: &Matrix, judgement: Judgement) -> Self {
        let count = |s: Severity| judgement.findings.iter().filter(|f| f.severity == s).count();
        let (errors, warnings, infos) =
            (count(Severity::Error), count(Severity::Warning), count(Severity::Info));
        let verdict = if !snapshot_has_facts(&snapshot) {
            "not_evaluated"
        } else if errors > 0 {
            "error"
        } else if warnings > 0 {
            "warning"
        } else if infos > 0 {
            "info"
        } else {
            "ok"
        };
        let not_evaluated =
            judgement.outcomes.iter().filter(|o| matches!(o.outcome, Outcome::NotEvaluated { .. })).count();
        Self {
            doctor: format!("onnx-doctor {}", env!("CARGO_PKG_VERSION")),
            matrix: MatrixInfo {
                version: matrix.version.clone(),
                sha256: matrix.hash.clone(),
                overlays: matrix.overlays.clone(),
            },
            summary: Summary {
                verdict: verdict.into(),
                errors,
                warnings,
                infos,
                not_evaluated,
                python_environments: snapshot.pythons.len(),
            },
            findings: judgement.findings,
            fix_plan: judgement.plans,
            outcomes: judgement.outcomes,
            snapshot,
        }
    }

    /// 0: nothing at or above `fail_on`; 1: findings at or above it;
    /// 3: nothing could be probed, so nothing was judged.
    pub fn exit_code(&self, fail_on: Severity) -> u8 {
        if self.summary.verdict == "not_evaluated" {
            3
        } else if self.findings.iter().any(|f| f.severity >= fail_on) {
            1
        } else {
            0
        }
    }

    pub fn matrix_line(&self) -> String {
        let mut s = format!(
            "matrix {} (sha256 {})",
            self.matrix.version,
            &self.matrix.sha256[..12.min(self.matrix.sha256.len())]
        );
        for o in &self.matrix.overlays {
            s.push_str(&format!(" + {o}"));
        }
        s
    }
}

/// Whether any probe besides the system one produced facts.
fn snapshot_has_facts(s: &Snapshot) -> bool {
    s.pythons.iter().any(|p| p.interpreter.found().is_some() || p.distributions.found().is_some())
        || s.nvidia
            .found()
            .is_some_and(|n| n.driver.found().is_some() || n.gpus.found().is_some_and(|g| !g.is_empty()))
        || s.pasted.as_ref().is_some_and(|p| !p.error_lines.is_empty() || !p.facts.is_empty())
        || s.model.is_some()
}

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
    pub fn word(self) -> &'static str {
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
}

pub struct Section {
    pub title: String,
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
            .filter(|f| f.subject.as_deref() == subject && f.components.contains(&component))
            .map(|f| Status::of(f.severity))
            .max()
    };
    let mut sections = Vec::new();

    let system_line = match &snap.system {
        Probed::Found(s) => {
            let mut parts = vec![s.os.found().cloned().unwrap_or_else(|| "unknown OS".into())];
            if let Some(k) = s.kernel.found() {
                parts.push(format!("kernel {k}"));
            }
            parts.push(s.arch.clone());
            parts.push(match &s.glibc {
                Probed::Found(v) => format!("glibc {v}"),
                Probed::NotEvaluated(_) => "glibc unknown".into(),
            });
            if let Some(c) = &s.container {
                parts.push(format!("container: {c}"));
            }
            if s.wsl {
                parts.push("WSL".into());
            }
            Line {
                status: worst(None, Component::SYSTEM).unwrap_or(Status::Ok),
                label: parts.join(" · "),
                detail: String::new(),
            }
        }
        Probed::NotEvaluated(r) => {
            Line { status: Status::NotEvaluated, label: "system".into(), detail: r.clone() }
        }
    };
    let model_only = snap.model.is_some() && !snap.targets.is_empty() && snap.pythons.is_empty();
    if !model_only {
        sections.push(Section { title: "System".into(), lines: vec![system_line] });
    }
    if let Some(m) = &snap.model {
        sections.push(model_section(m, &snap.targets, &|c| worst(None, c)));
    }
    if let Probed::Found(n) = &snap.nvidia {
        sections.push(nvidia_section(n, &|c| worst(None, c)));
    }

    if snap.pythons.is_empty() && !model_only {
        sections.push(Section {
            title: "Python".into(),
            lines: vec![Line {
                status: worst(None, Component::PYTHON).unwrap_or(Status::NotEvaluated),
                label: "no Python interpreter found".into(),
                detail: String::new(),
            }],
        });
    }
    for env in &snap.pythons {
        sections.push(python_section(report, matrix, env, &worst));
    }
    sections
}

fn nvidia_section(n: &crate::snapshot::Nvidia, worst: &dyn Fn(Component) -> Option<Status>) -> Section {
    use crate::snapshot::nvidia::NvmlState;
    let mut lines = Vec::new();
    let (status, label, detail) = match &n.driver {
        Probed::Found(d) => {
            let cuda = d.max_cuda.as_ref().map(|c| format!(" · supports CUDA up to {c}")).unwrap_or_default();
            (
                worst(Component::DRIVER).unwrap_or(Status::Ok),
                format!("driver {}{cuda}", d.version),
                format!("via {}", d.source),
            )
        }
        Probed::NotEvaluated(r) => {
            let absent = matches!(n.nvml, NvmlState::NoLibrary { .. } | NvmlState::DriverNotLoaded)
                && n.kernel_module.found().is_none();
            let st = worst(Component::DRIVER).unwrap_or(if absent {
                Status::Absent
            } else {
                Status::NotEvaluated
            });
            (st, "driver".to_string(), if absent { "no NVIDIA driver".to_string() } else { r.clone() })
        }
    };
    lines.push(Line { status, label, detail });
    match &n.gpus {
        Probed::Found(gpus) => {
            for g in gpus {
                let cc = g
                    .compute_capability
                    .as_ref()
                    .map(|c| format!(" · compute capability {c}"))
                    .unwrap_or_default();
                let mem = g.memory_mib.map(|m| format!(" · {} GiB", (m + 512) / 1024)).unwrap_or_default();
                lines.push(Line {
                    status: worst(Component::GPU).unwrap_or(Status::Ok),
                    label: format!("GPU {} {}{cc}{mem}", g.index, g.name),
                    detail: g.architecture.clone().unwrap_or_default(),
                });
            }
        }
        Probed::NotEvaluated(_) if lines[0].status == Status::Absent => {}
        Probed::NotEvaluated(r) => {
            lines.push(Line { status: Status::NotEvaluated, label: "GPUs".into(), detail: r.clone() })
        }
    }
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
    let toolkits: Vec<String> = n
        .toolkits
        .iter()
        .map(|t| {
            format!(
                "toolkit {} ({})",
                t.version.found().map_or("?".into(), |v| v.to_string()),
                t.root.display()
            )
        })
        .collect();
    let mut cuda = toolkits;
    let cudart = versions(Library::Cudart);
    if !cudart.is_empty() {
        cuda.push(format!("runtime {}", cudart.join(", ")));
    }
    lines.push(component_line("CUDA", cuda, worst(Component::CUDA)));
    let merge = |mut found: Vec<String>, libs: Vec<String>| {
        // "9" from libcudnn.so.9 adds nothing next to the header's "9.26.0".
        for l in libs {
            if !found.iter().any(|f| f == &l || f.starts_with(&format!("{l}."))) {
                found.push(l);
            }
        }
        found
    };
    let cudnn = merge(
        n.headers.iter().filter(|h| h.component == Component::CUDNN).map(|h| h.version.to_string()).collect(),
        versions(Library::Cudnn),
    );
    lines.push(component_line("cuDNN", cudnn, worst(Component::CUDNN)));
    let trt = merge(
        n.headers
            .iter()
            .filter(|h| h.component == Component::TENSORRT)
            .map(|h| h.version.to_string())
            .collect(),
        versions(Library::Nvinfer),
    );
    lines.push(component_line("TensorRT", trt, worst(Component::TENSORRT)));
    for link in &n.links {
        let (status, detail) = if link.unresolved.is_empty() {
            (Status::Ok, format!("all {} dependencies resolve", link.resolved.len()))
        } else {
            let names: Vec<&str> = link.unresolved.iter().map(|u| u.soname.as_str()).collect();
            (Status::Error, format!("missing {}", names.join(", ")))
        };
        lines.push(Line { status, label: format!("loads {}", link.role), detail });
    }
    Section { title: "NVIDIA".into(), lines }
}

fn model_section(
    m: &crate::snapshot::model::ModelFacts,
    targets: &std::collections::BTreeMap<String, String>,
    worst: &dyn Fn(Component) -> Option<Status>,
) -> Section {
    let opsets: Vec<String> = m.opsets.iter().map(|(d, v)| format!("{d} {v}")).collect();
    let mut lines = vec![Line {
        status: worst(Component::new("onnx")).unwrap_or(Status::Ok),
        label: format!("IR {} · opsets {}", m.ir_version, opsets.join(", ")),
        detail: m.producer.clone(),
    }];
    for (domain, ops) in &m.ops {
        let total: u64 = ops.values().sum();
        let mut top: Vec<(&String, &u64)> = ops.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let names: Vec<String> = top.iter().take(8).map(|(o, n)| format!("{o}×{n}")).collect();
        lines.push(Line {
            status: Status::Ok,
            label: format!("{domain}: {total} nodes"),
            detail: names.join(" "),
        });
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
    lines.push(Line {
        status: Status::Ok,
        label: format!("{} initializers, {mb:.1} MiB{external}", m.initializers),
        detail: format!("{} subgraphs, {} functions", m.subgraphs, m.functions),
    });
    for (name, version) in targets {
        lines.push(Line {
            status: Status::Ok,
            label: format!("target {name} {version}"),
            detail: String::new(),
        });
    }
    Section { title: format!("Model {}", m.path.display()), lines }
}

fn component_line(name: &str, found: Vec<String>, worst: Option<Status>) -> Line {
    if found.is_empty() {
        Line { status: worst.unwrap_or(Status::Absent), label: name.into(), detail: "not found".into() }
    } else {
        Line {
            status: worst.unwrap_or(Status::Ok),
            label: format!("{name} {}", found.join(" · ")),
            detail: String::new(),
        }
    }
}

fn python_section(
    report: &Report,
    matrix: &Matrix,
    env: &PythonEnv,
    worst: &dyn Fn(Option<&str>, Component) -> Option<Status>,
) -> Section {
    let subject = env.label();
    let subject = Some(subject.as_str());
    let mut lines = Vec::new();
    let interp = match (&env.version, &env.interpreter) {
        (Probed::Found(v), Probed::Found(i)) => {
            let implementation = match i.implementation.as_str() {
                "cpython" => "CPython".to_string(),
                "pypy" => "PyPy".to_string(),
                other => other.to_string(),
            };
            let kind = env.kind.map(|k| k.as_str()).unwrap_or("unknown kind");
            Line {
                status: worst(subject, Component::PYTHON).unwrap_or(Status::Ok),
                label: format!("{implementation} {v} · {kind}"),
                detail: String::new(),
            }
        }
        (version, Probed::NotEvaluated(reason)) => {
            let label = match version {
                Probed::Found(v) => format!("Python {v}"),
                Probed::NotEvaluated(_) => "Python".into(),
            };
            let status = if report.snapshot.mode != ProbeMode::Full && env.distributions.found().is_some() {
                worst(subject, Component::PYTHON).unwrap_or(Status::Ok)
            } else {
                worst(subject, Component::PYTHON).unwrap_or(Status::NotEvaluated).max(Status::NotEvaluated)
            };
            let detail = match &env.distributions {
                Probed::NotEvaluated(why) => why.clone(),
                Probed::Found(_) => reason.clone(),
            };
            Line { status, label, detail }
        }
        (Probed::NotEvaluated(r), Probed::Found(_)) => {
            Line { status: Status::NotEvaluated, label: "Python".into(), detail: r.clone() }
        }
    };
    lines.push(interp);

    for package in &matrix.stack {
        let key = package.package.as_str();
        let component = package.component.clone();
        let dist = crate::check::facts::Facts::for_env(&report.snapshot, Some(env), matrix);
        let installed = env.first_installed(&matrix.distributions_of(key));
        let import = env.import(key);
        let status_from_findings = worst(subject, component.clone());
        let (status, detail) = match import.map(|i| &i.status) {
            _ if installed.is_none() && env.distributions.found().is_none() => {
                let why = import
                    .map_or_else(|| "package metadata could not be read".into(), |i| i.status.describe());
                (status_from_findings.unwrap_or(Status::NotEvaluated).max(Status::NotEvaluated), why)
            }
            Some(ImportStatus::Ok) => (status_from_findings.unwrap_or(Status::Ok), facts_summary(key, &dist)),
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
            Some(ImportStatus::NotInstalled) | None => {
                (status_from_findings.unwrap_or(Status::Ok), String::new())
            }
            Some(s @ ImportStatus::NotEvaluated { .. }) => {
                if installed.is_none() && env.distributions.found().is_some() {
                    (Status::Absent, "not installed".into())
                } else {
                    (
                        status_from_findings.unwrap_or(Status::NotEvaluated).max(Status::NotEvaluated),
                        s.describe(),
                    )
                }
            }
            Some(s) => (status_from_findings.unwrap_or(Status::Error).max(Status::Error), s.describe()),
        };
        let label = match installed {
            Some(d) => format!("{} {}", d.name, d.version),
            None => key.to_string(),
        };
        lines.push(Line { status, label, detail });
    }
    Section { title: format!("Python {} ({})", env.label(), env.source.describe()), lines }
}

fn facts_summary(key: &str, facts: &crate::check::facts::Facts<'_>) -> String {
    use crate::check::facts::Fact;
    let get = |k: &str| match facts.get(&format!("{key}.{k}")) {
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
