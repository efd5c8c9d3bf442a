//! What the command line means: each subcommand, run, with its exit code.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::check::check;
use crate::cli::{Cli, ColorChoice, Command, FailOn, Format, GlobalArgs};
use crate::host::Host;
use crate::matrix::{Matrix, RuleKind, Severity};
use crate::probe::{ProbeOptions, probe};
use crate::report::{Report, markdown, text};
use crate::snapshot::{SCHEMA_VERSION, Snapshot};
use crate::version::Ver;

/// Exit codes (containers and CI read these).
pub mod exit {
    pub const OK: u8 = 0;
    pub const FINDINGS: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const NOT_EVALUATED: u8 = 3;
}

/// An error that ends the run, with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    CannotEvaluate(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl AppError {
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => exit::USAGE,
            Self::CannotEvaluate(_) => exit::NOT_EVALUATED,
            Self::Io(_) => exit::USAGE,
        }
    }
}

pub fn run(cli: Cli) -> Result<u8, AppError> {
    let g = &cli.global;
    let matrix = load_matrix(&g.matrix)?;
    // Usage errors before any work.
    for a in &g.assume {
        parse_assumption(a)?;
    }
    for e in &g.expect {
        parse_expectation(e)?;
    }
    if g.version {
        emit(g, &format!("onnx-doctor {} (matrix {})\n", env!("CARGO_PKG_VERSION"), matrix.describe()))?;
        return Ok(exit::OK);
    }
    match &cli.command {
        None | Some(Command::Check) => run_check(g, &matrix, None, g.format),
        Some(Command::Report) => run_check(g, &matrix, None, Format::Markdown),
        Some(Command::Model { file, targets }) => {
            let model = crate::model::read(file).map_err(|e| AppError::CannotEvaluate(e.to_string()))?;
            let mut parsed = std::collections::BTreeMap::new();
            for t in targets {
                let Some((name, version)) = t.split_once("==") else {
                    return Err(AppError::Usage(format!(
                        "--target {t:?}: write it as NAME==VERSION, e.g. onnxruntime==1.17.1"
                    )));
                };
                let name = crate::snapshot::normalize_name(name);
                if !["onnxruntime", "tensorrt"].contains(&name.as_str())
                    || Ver::new(version).parsed().is_none()
                {
                    return Err(AppError::Usage(format!(
                        "--target {t:?}: the targets are onnxruntime==VERSION and tensorrt==VERSION"
                    )));
                }
                parsed.insert(name, version.trim().to_string());
            }
            let host = Host::from_process(g.root.clone(), Duration::from_secs_f64(g.timeout));
            // The installed runtimes' versions are all the model check needs
            // from the machine: the fast probe, unless a snapshot is given.
            let mut snapshot = match &g.snapshot {
                Some(path) => read_snapshot(path)?,
                // With every runtime given as a target, this machine is beside the point.
                None if !parsed.is_empty() => Snapshot {
                    schema_version: SCHEMA_VERSION,
                    probed_by: format!("onnx-doctor {} (model)", env!("CARGO_PKG_VERSION")),
                    mode: crate::snapshot::ProbeMode::Fast,
                    system: crate::snapshot::Probed::NotEvaluated(
                        "not probed: judging against --target".into(),
                    ),
                    pythons: Vec::new(),
                    nvidia: crate::snapshot::Probed::NotEvaluated(
                        "not probed: judging against --target".into(),
                    ),
                    pasted: None,
                    model: None,
                    targets: Default::default(),
                    expectations: Vec::new(),
                },
                None => probe(
                    &host,
                    &ProbeOptions {
                        pythons: g.python.clone(),
                        fast: true,
                        watched: matrix.packages.clone(),
                        stack: matrix.stack.clone(),
                        nvml_lib: g.nvml_lib.clone().map(Into::into),
                    },
                ),
            };
            snapshot.model = Some(model);
            snapshot.targets = parsed;
            run_check(g, &matrix, Some(snapshot), g.format)
        }
        Some(Command::Diagnose { input }) => {
            let text = read_input(input.as_deref())?;
            let snapshot = crate::import::import(&text, &matrix);
            run_check(g, &matrix, Some(snapshot), g.format)
        }
        Some(Command::Rules) => run_rules(g, &matrix),
        Some(Command::Fleet { reports }) => {
            let fleet = crate::fleet::aggregate(reports);
            let rendered = match g.format {
                Format::Json => serde_json::to_string_pretty(&fleet).expect("a fleet serialises") + "\n",
                Format::Markdown => crate::fleet::render_markdown(&fleet),
                _ => crate::fleet::render_text(&fleet),
            };
            emit(g, &rendered)?;
            let fail_on = match g.fail_on {
                FailOn::Error => "error",
                FailOn::Warning => "warning",
            };
            let failing = fleet.findings.iter().any(|f| f.severity == "error" || f.severity == fail_on);
            Ok(if fleet.nodes == 0 {
                exit::NOT_EVALUATED
            } else if failing {
                exit::FINDINGS
            } else {
                exit::OK
            })
        }
        Some(Command::Explain { code }) => run_explain(g, &matrix, code),
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut cmd, "onnx-doctor", &mut buf);
            emit(g, &String::from_utf8_lossy(&buf))?;
            Ok(exit::OK)
        }
    }
}

fn load_matrix(dirs: &[PathBuf]) -> Result<Matrix, AppError> {
    let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    Matrix::load(&dirs).map_err(|errors| {
        let mut msg = String::from("the compatibility matrix is invalid:");
        for e in &errors {
            msg.push_str(&format!("\n  {e}"));
        }
        AppError::CannotEvaluate(msg)
    })
}

/// Reads a paste from a file or standard input, as bytes: a paste may hold
/// anything, and what is not UTF-8 is replaced, not refused.
fn read_input(path: Option<&Path>) -> Result<String, AppError> {
    let bytes = match path {
        Some(p) if p != Path::new("-") => std::fs::read(p)
            .map_err(|e| AppError::CannotEvaluate(format!("cannot read {}: {e}", p.display())))?,
        _ => {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut buf)?;
            buf
        }
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn run_check(
    g: &GlobalArgs,
    matrix: &Matrix,
    pasted: Option<Snapshot>,
    format: Format,
) -> Result<u8, AppError> {
    let host = Host::from_process(g.root.clone(), Duration::from_secs_f64(g.timeout));
    let snapshot = match (pasted, &g.snapshot) {
        (Some(s), _) => s,
        (None, Some(path)) => read_snapshot(path)?,
        (None, None) => {
            let options = ProbeOptions {
                pythons: g.python.clone(),
                fast: g.fast,
                watched: matrix.packages.clone(),
                stack: matrix.stack.clone(),
                nvml_lib: g.nvml_lib.clone().map(Into::into),
            };
            let _progress = Progress::start(g.fast);
            probe(&host, &options)
        }
    };
    let mut snapshot = snapshot;
    apply_assumptions(&mut snapshot, &g.assume)?;
    for e in &g.expect {
        parse_expectation(e)?;
        snapshot.expectations.push(e.trim().to_string());
    }
    let redact = !g.no_redact && (g.redact || format == Format::Markdown);
    let redactor = redact.then(|| crate::report::redact::Redactor::new(&host, &snapshot));
    let judgement = check(&snapshot, matrix);
    let report = Report::new(snapshot, matrix, judgement);
    let fail_on = match g.fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
    };
    let code = report.exit_code(fail_on);
    let rendered = match format {
        Format::Json => serde_json::to_string_pretty(&report).expect("a report serialises") + "\n",
        Format::Markdown => markdown::render(&report, matrix, code),
        Format::Github => crate::report::ci::github(&report),
        Format::Junit => crate::report::ci::junit(&report),
        Format::Text => text::render(&report, matrix, text::Paint(use_color(g)), code),
    };
    let rendered = match &redactor {
        Some(r) => r.apply(&rendered),
        None => rendered,
    };
    emit(g, &rendered)?;
    Ok(code)
}

/// `--expect "torch==2.4.*"`: a name and a PEP 440 specifier.
pub fn parse_expectation(text: &str) -> Result<(String, crate::version::Spec), AppError> {
    let at = text.find(['<', '>', '=', '!', '~']).ok_or_else(|| {
        AppError::Usage(format!(
            "--expect {text:?}: write NAME and a version specifier, e.g. \"torch==2.4.*\""
        ))
    })?;
    let (name, spec) = text.split_at(at);
    let spec = spec.parse().map_err(|e| AppError::Usage(format!("--expect {text:?}: {e}")))?;
    Ok((crate::snapshot::normalize_name(name), spec))
}

/// What `--assume` says about the host.
enum Assumption {
    Driver(Ver),
    Gpu(String),
}

fn parse_assumption(a: &str) -> Result<Assumption, AppError> {
    let Some((what, value)) = a.split_once('=') else {
        return Err(AppError::Usage(format!(
            "--assume {a:?}: write COMPONENT=VERSION, e.g. driver=535.104.05"
        )));
    };
    match what.trim() {
        "driver" => {
            let v = Ver::new(value.trim());
            if v.parsed().is_none() {
                return Err(AppError::Usage(format!("--assume {a:?}: {value:?} is not a driver version")));
            }
            Ok(Assumption::Driver(v))
        }
        "gpu" => {
            let cc = value.trim().trim_start_matches("sm_");
            let cc = if cc.contains('.') {
                cc.to_string()
            } else if cc.len() >= 2 && cc.is_char_boundary(cc.len() - 1) {
                format!("{}.{}", &cc[..cc.len() - 1], &cc[cc.len() - 1..])
            } else {
                String::new()
            };
            if Ver::new(cc.as_str()).release().len() != 2 {
                return Err(AppError::Usage(format!("--assume {a:?}: write gpu=sm_80 or gpu=8.0")));
            }
            Ok(Assumption::Gpu(cc))
        }
        other => Err(AppError::Usage(format!(
            "--assume {other:?}: the components that can be assumed are driver and gpu"
        ))),
    }
}

/// `--assume driver=535.104.05 --assume gpu=sm_80`: facts of a host the
/// doctor cannot see (a container build has no GPU).
fn apply_assumptions(snapshot: &mut Snapshot, assume: &[String]) -> Result<(), AppError> {
    use crate::snapshot::Probed;
    use crate::snapshot::nvidia::{ContainerGpu, Driver, Gpu, Nvidia, NvmlState};
    for a in assume {
        let assumption = parse_assumption(a)?;
        if !matches!(snapshot.nvidia, Probed::Found(_)) {
            snapshot.nvidia = Probed::Found(Nvidia {
                nvml: NvmlState::Error { detail: "not asked".into() },
                driver: Probed::NotEvaluated("not probed".into()),
                kernel_module: Probed::NotEvaluated("not probed".into()),
                gpus: Probed::NotEvaluated("not probed".into()),
                toolkits: Vec::new(),
                libraries: Vec::new(),
                headers: Vec::new(),
                links: Vec::new(),
                container: ContainerGpu::default(),
            });
        }
        let Probed::Found(n) = &mut snapshot.nvidia else { unreachable!() };
        match assumption {
            Assumption::Driver(v) => {
                n.driver =
                    Probed::Found(Driver { version: v.clone(), max_cuda: None, source: "--assume".into() });
                // The host's kernel module is the assumed driver too.
                n.kernel_module = Probed::Found(v);
                if matches!(n.nvml, NvmlState::NoLibrary { .. } | NvmlState::DriverNotLoaded) {
                    n.nvml = NvmlState::Error { detail: "not asked: the driver is assumed".into() };
                }
            }
            Assumption::Gpu(cc) => {
                let mut gpus = match std::mem::replace(&mut n.gpus, Probed::Found(Vec::new())) {
                    Probed::Found(g) => g,
                    Probed::NotEvaluated(_) => Vec::new(),
                };
                gpus.push(Gpu {
                    index: gpus.len() as u32,
                    name: format!("assumed GPU (compute capability {cc})"),
                    compute_capability: Some(Ver::new(cc.as_str())),
                    architecture: None,
                    memory_mib: None,
                    uuid: None,
                });
                n.gpus = Probed::Found(gpus);
            }
        }
    }
    Ok(())
}

/// Reads a saved snapshot, or the snapshot inside a saved JSON report.
fn read_snapshot(path: &Path) -> Result<Snapshot, AppError> {
    let unreadable =
        |why: String| AppError::CannotEvaluate(format!("cannot read snapshot {}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(format!("not JSON ({e})")))?;
    let value = match value.get("snapshot") {
        Some(inner) if value.get("findings").is_some() => inner.clone(),
        _ => value,
    };
    let version = value.get("schema_version").and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(SCHEMA_VERSION)) {
        return Err(unreadable(format!(
            "schema version {} is not {SCHEMA_VERSION}, the one this doctor reads",
            version.map_or("missing".into(), |v| v.to_string())
        )));
    }
    serde_json::from_value(value).map_err(|e| unreadable(format!("not an onnx-doctor snapshot ({e})")))
}

fn run_rules(g: &GlobalArgs, matrix: &Matrix) -> Result<u8, AppError> {
    let rendered = match g.format {
        Format::Json => serde_json::to_string_pretty(&matrix.rules).expect("rules serialise") + "\n",
        Format::Markdown => {
            let mut s = String::from("| code | severity | summary |\n|---|---|---|\n");
            for r in &matrix.rules {
                s.push_str(&format!("| `{}` | {} | {} |\n", r.code, r.severity, r.summary));
            }
            s
        }
        Format::Text | Format::Github | Format::Junit => {
            let width = matrix.rules.iter().map(|r| r.code.len()).max().unwrap_or(0);
            let mut s = String::new();
            for r in &matrix.rules {
                s.push_str(&format!("{:<width$}  {:<7}  {}\n", r.code, r.severity.as_str(), r.summary));
            }
            s.push_str(&format!("\n{} rules · matrix {}\n", matrix.rules.len(), matrix.describe()));
            s
        }
    };
    emit(g, &rendered)?;
    Ok(exit::OK)
}

fn run_explain(g: &GlobalArgs, matrix: &Matrix, code: &str) -> Result<u8, AppError> {
    let Some(rule) = matrix.rule(code) else {
        let near: Vec<&str> = matrix
            .rules
            .iter()
            .map(|r| r.code.as_str())
            .filter(|c| code.split('-').filter(|w| w.len() > 2).any(|w| c.contains(w)))
            .take(5)
            .collect();
        let hint =
            if near.is_empty() { String::new() } else { format!("; did you mean {}?", near.join(", ")) };
        return Err(AppError::Usage(format!(
            "no rule has the code {code:?}{hint} (`onnx-doctor rules` lists them all)"
        )));
    };
    let rendered = match g.format {
        Format::Json => serde_json::to_string_pretty(rule).expect("a rule serialises") + "\n",
        _ => {
            let mut s = format!("{} ({})\n\n{}\n\n", rule.code, rule.severity, rule.summary);
            s.push_str(&format!(
                "Involves: {}\n\n",
                rule.components.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
            ));
            s.push_str(&format!("Why:\n  {}\n\n", text::wrap(&rule.why, 88, 2)));
            if let RuleKind::Facts { when, lookup, require } = &rule.kind {
                s.push_str("Fires when:\n");
                for c in when {
                    s.push_str(&format!("  {} {}\n", c.fact, c.condition));
                }
                if let Some(t) = lookup {
                    let by = t.by.as_deref().map(|b| format!(" by {b}")).unwrap_or_default();
                    s.push_str(&format!("  (looking up table {}{by})\n", t.table));
                }
                if !require.is_empty() {
                    s.push_str("and any of these does not hold:\n");
                    for c in require {
                        s.push_str(&format!("  {} {}\n", c.fact, c.condition));
                    }
                }
                s.push('\n');
            }
            if !rule.fixes.is_empty() {
                s.push_str("Fixes, best first:\n");
                for f in &rule.fixes {
                    s.push_str(&format!("  {f}\n"));
                }
                s.push('\n');
            }
            s.push_str("Sources:\n");
            for src in &rule.sources {
                s.push_str(&format!("  {src}\n"));
            }
            if let Some(since) = &rule.since {
                s.push_str(&format!("Known since {since}\n"));
            }
            s.push_str(&format!("\nDefined at {}\n", rule.origin));
            s
        }
    };
    emit(g, &rendered)?;
    Ok(exit::OK)
}

fn use_color(g: &GlobalArgs) -> bool {
    match g.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            g.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
        }
    }
}

/// Writes to `--output` or standard output.
fn emit(g: &GlobalArgs, text: &str) -> Result<(), AppError> {
    match &g.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| AppError::Usage(format!("cannot write the report to {}: {e}", path.display()))),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

/// "probing… 2.4 s" on stderr while the probe imports the stack, for a
/// person at a terminal: `import torch` alone can take seconds. Nothing is
/// written when stderr is not a terminal (pipes, CI logs) or with `--fast`,
/// and the line is erased before the report is printed.
struct Progress {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(fast: bool) -> Option<Self> {
        if fast || !std::io::stderr().is_terminal() || std::env::var_os("CI").is_some() {
            return None;
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            use std::io::Write as _;
            use std::sync::atomic::Ordering;
            let started = std::time::Instant::now();
            let mut shown = false;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let elapsed = started.elapsed();
                // Quick runs finish before anything is shown.
                if elapsed < Duration::from_millis(400) || flag.load(Ordering::Relaxed) {
                    continue;
                }
                let _ = write!(
                    std::io::stderr(),
                    "\r\x1b[2Konnx-doctor: importing the Python stack to probe it… {:.1} s",
                    elapsed.as_secs_f64()
                );
                shown = true;
            }
            if shown {
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
        });
        Some(Self { stop, thread: Some(thread) })
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
