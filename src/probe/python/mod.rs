//! The Python probe: what each interpreter has installed, and what happens
//! when it imports the stack.
//!
//! Each interpreter runs one embedded, standard-library-only script
//! (`probe.py`) once. We do not pass `-I`: the point is to see what the
//! user's `python` imports, and that includes `PYTHONPATH` and the user site
//! directory; `-B` keeps it from writing bytecode (the doctor changes
//! nothing), and the working directory is an empty scratch directory, while
//! the user's real directory is passed in so the script can report a local
//! `onnx.py` that would shadow the package.
//!
//! The script streams one JSON event per line and flushes each, so a package
//! whose import hangs or kills the interpreter costs us only that package:
//! the host kills the process group at the timeout, we record which import
//! was running, and probe the remaining packages in a fresh process.
//!
//! Installed distributions are read by Rust from the site directories the
//! interpreter reports (or, with `--fast` or a broken interpreter, the ones
//! [`layout`] works out), so both modes share one reader.

pub mod discovery;
pub mod layout;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use serde::Deserialize;

use crate::host::{CommandOutput, Exit, Host, RunError};
use crate::probe::ProbeOptions;
use crate::probe::dists::read_distributions;
use crate::snapshot::StackPackage;
use crate::snapshot::{EnvKind, ImportProbe, ImportStatus, Interpreter, Probed, PythonEnv};
use crate::version::Ver;

use discovery::Candidate;

const PROBE_SCRIPT: &str = include_str!("probe.py");
const MARK: &str = "@@onnx-doctor@@ ";

#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    Interpreter(InterpreterEvent),
    Start { package: String },
    Import(ImportProbe),
    TrialStart { package: String },
    Trial { package: String, facts: BTreeMap<String, serde_json::Value> },
    Done,
    Error { kind: String, message: String },
}

#[derive(Deserialize)]
struct InterpreterEvent {
    version: String,
    implementation: String,
    platform: String,
    prefix: PathBuf,
    base_prefix: PathBuf,
    kind: EnvKind,
    sys_path: Vec<PathBuf>,
    markers: BTreeMap<String, String>,
    executable: PathBuf,
}

/// Everything one run of the script told us.
#[derive(Default)]
struct Run {
    interpreter: Option<InterpreterEvent>,
    imports: Vec<ImportProbe>,
    /// Trial results: package → facts.
    trials: Vec<(String, BTreeMap<String, serde_json::Value>)>,
    /// A trial that started and did not report.
    trial_started: Option<String>,
    started: Option<String>,
    done: bool,
    error: Option<String>,
}

fn parse_events(stdout: &[u8]) -> Run {
    let mut run = Run::default();
    for line in String::from_utf8_lossy(stdout).lines() {
        // Anything else on stdout (a sitecustomize that prints) is ignored.
        let Some(at) = line.find(MARK) else { continue };
        let Ok(event) = serde_json::from_str::<Event>(&line[at + MARK.len()..]) else { continue };
        match event {
            Event::Interpreter(i) => run.interpreter = Some(i),
            Event::Start { package } => run.started = Some(package),
            Event::Import(probe) => {
                if run.started.as_deref() == Some(probe.package.as_str()) {
                    run.started = None;
                }
                run.imports.push(probe);
            }
            Event::TrialStart { package } => run.trial_started = Some(package),
            Event::Trial { package, facts } => {
                run.trial_started = None;
                run.trials.push((package, facts));
            }
            Event::Done => run.done = true,
            Event::Error { kind, message } => run.error = Some(format!("{message} ({kind})")),
        }
    }
    run
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Probes one interpreter: runs the script (more than once only when an
/// import hangs or crashes), then reads its distributions.
pub(crate) fn probe(host: &Host, candidate: &Candidate, options: &ProbeOptions) -> PythonEnv {
    let session = run_script(host, candidate, options);
    let Some(i) = session.interpreter else {
        let reason = session.failure.unwrap_or_else(|| "the interpreter gave no answer".into());
        // A broken interpreter still has packages on disk worth reading.
        return from_layout(host, candidate, options, Probed::NotEvaluated(reason));
    };
    let site_dirs = distinct_dirs(i.sys_path.iter().filter(|p| p.is_dir()).cloned());
    PythonEnv {
        file_facts: file_facts(&site_dirs, &options.stack),
        executable: candidate.executable.clone(),
        source: candidate.source,
        version: Probed::Found(Ver::new(i.version)),
        kind: Some(i.kind),
        distributions: Probed::Found(read_distributions(&site_dirs, &options.watched)),
        site_dirs,
        interpreter: Probed::Found(Interpreter {
            executable: i.executable,
            implementation: i.implementation,
            platform: i.platform,
            prefix: i.prefix,
            base_prefix: i.base_prefix,
            sys_path: i.sys_path,
            markers: i.markers,
        }),
        imports: session.imports,
    }
}

/// The stack's file facts, read from the first site directory that has the
/// file: what a package says of itself without being imported.
pub(crate) fn file_facts(
    site_dirs: &[PathBuf],
    stack: &[StackPackage],
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for package in stack {
        for (fact, file) in &package.files {
            let Some(text) = site_dirs.iter().find_map(|d| {
                crate::host::read_text(&d.join(&file.path), crate::host::FileKind::System).ok()
            }) else {
                continue;
            };
            let Ok(re) = regex::Regex::new(&file.pattern) else { continue };
            if let Some(value) = re.captures(&text).and_then(|c| c.get(1)) {
                out.entry(package.package.clone())
                    .or_default()
                    .insert(fact.clone(), value.as_str().to_string());
            }
        }
    }
    out
}

/// What the runs of the probe script found out about one interpreter.
#[derive(Default)]
struct Session {
    interpreter: Option<InterpreterEvent>,
    imports: Vec<ImportProbe>,
    /// Why the interpreter gave no answer, when it did not.
    failure: Option<String>,
}

impl Session {
    /// Trial results join the facts of the package they tried.
    fn add_trials(&mut self, trials: Vec<(String, BTreeMap<String, serde_json::Value>)>) {
        for (package, facts) in trials {
            if let Some(import) = self.imports.iter_mut().find(|i| i.package == package) {
                import.facts.extend(facts);
            }
        }
    }
}

/// Runs the script until every package has an answer. Each run either
/// finishes or removes the import it died in, so this is bounded by the
/// stack; the counter guards against an interpreter that reports imports it
/// was never asked for.
fn run_script(host: &Host, candidate: &Candidate, options: &ProbeOptions) -> Session {
    let stack = &options.stack;
    let mut session = Session::default();
    let mut remaining: Vec<&StackPackage> = stack.iter().collect();
    let mut runs = 0;
    while !remaining.is_empty() && runs <= stack.len() {
        runs += 1;
        // A private HOME: importing a framework writes caches and configs
        // there, not in the user's home.
        let args = script_args(host, &remaining, options);
        let out = match host.run_with_env(&candidate.executable, &args, host.timeout(), &host.private_home())
        {
            Ok(out) => out,
            Err(e) => {
                let why = match e {
                    RunError::NotFound { .. } => format!("{} does not exist", candidate.executable.display()),
                    other => other.to_string(),
                };
                // Once the interpreter has answered, what is left was not
                // asked (the run's deadline passed): each import says why.
                match session.interpreter {
                    Some(_) => {
                        session.imports.extend(remaining.drain(..).map(|p| not_evaluated(p, why.clone())))
                    }
                    None => session.failure = Some(why),
                }
                break;
            }
        };
        let run = parse_events(&out.stdout);
        if let Some(err) = run.error {
            session.failure = Some(err);
            break;
        }
        if session.interpreter.is_none() {
            if run.interpreter.is_none() {
                session.failure = Some(no_answer(candidate, &out));
                break;
            }
            session.interpreter = run.interpreter;
        }
        remaining.retain(|p| !run.imports.iter().any(|i| i.package == p.package));
        session.imports.extend(run.imports);
        session.add_trials(run.trials);
        if let Some(package) = run.trial_started.filter(|_| !run.done) {
            let why = format!("did not finish: the probe {}", out.describe_exit());
            session.add_trials(vec![(package, BTreeMap::from([("trial_error".into(), why.into())]))]);
        }
        if run.done {
            break;
        }
        // The process ended early. Blame the import that was running, if any,
        // and go on with the rest in a fresh process.
        let Some(culprit) = run.started.and_then(|c| remaining.iter().position(|p| p.package == c)) else {
            let why = format!("the probe {}", out.describe_exit());
            session.imports.extend(remaining.drain(..).map(|p| not_evaluated(p, why.clone())));
            break;
        };
        let culprit = remaining.remove(culprit);
        session.imports.push(ImportProbe::new(&culprit.package, &culprit.module, ended_early(&out)));
    }
    // Keep the report in the stack's order whatever order the runs gave.
    session.imports.sort_by_key(|i| stack.iter().position(|p| p.package == i.package).unwrap_or(usize::MAX));
    session
}

/// `-B -c SCRIPT CWD STACK_JSON [--no-trials] [--model PATH]`: the user's
/// directory (to spot a local `onnx.py`), the packages still to import, and
/// the model `onnx-doctor model` tries in the installed onnxruntime.
fn script_args(host: &Host, packages: &[&StackPackage], options: &ProbeOptions) -> Vec<OsString> {
    let specs: Vec<serde_json::Value> = packages
        .iter()
        .map(|p| serde_json::json!({"package": p.package, "module": p.module, "facts": p.facts, "trial": p.trial}))
        .collect();
    let mut args = vec![
        "-B".into(),
        "-c".into(),
        PROBE_SCRIPT.into(),
        host.cwd().as_os_str().to_owned(),
        serde_json::Value::Array(specs).to_string().into(),
    ];
    if !options.trials {
        args.push("--no-trials".into());
    }
    if let Some(model) = &options.model {
        args.push("--model".into());
        args.push(host.cwd().join(model).into_os_string());
    }
    args
}

/// Why an interpreter that ran gave no answer, in its own words if it said any.
fn no_answer(candidate: &Candidate, out: &CommandOutput) -> String {
    let exe = candidate.executable.display();
    let stderr = tail(&out.stderr_lossy(), 3);
    let said = if stderr.is_empty() { tail(&out.stdout_lossy(), 1) } else { stderr };
    if discovery::is_store_alias(&candidate.executable)
        && (out.exit == Exit::Code(9009) || said.contains("Microsoft Store"))
    {
        // Windows' App Execution Alias stands in for a Python that is not
        // installed: running it only points at the Microsoft Store.
        return format!(
            "{exe} is the Microsoft Store's placeholder, not a Python: no Python is installed behind it \
             (install one from python.org or the Store, or turn the alias off under Settings > Apps > \
             Advanced app settings > App execution aliases)"
        );
    }
    if said.is_empty() {
        format!("{exe} gave no probe output ({})", out.describe_exit())
    } else if out.success() {
        format!("{exe} gave no probe output ({}): {}", out.describe_exit(), truncate(&said, 300))
    } else {
        format!("{exe} {}: {}", out.describe_exit(), truncate(&said, 300))
    }
}

/// How the import that was running when the process ended went.
fn ended_early(out: &CommandOutput) -> ImportStatus {
    match out.exit {
        Exit::TimedOut(d) => ImportStatus::TimedOut { seconds: d.as_secs_f64() },
        _ => ImportStatus::Crashed {
            detail: format!("{}; {}", out.describe_exit(), truncate(&tail(&out.stderr_lossy(), 2), 300)),
        },
    }
}

/// The `--fast` probe: metadata on disk only, no process.
pub(crate) fn probe_fast(host: &Host, candidate: &Candidate, options: &ProbeOptions) -> PythonEnv {
    let reason = "--fast: the interpreter was not run".to_string();
    let mut env = from_layout(host, candidate, options, Probed::NotEvaluated(reason));
    env.imports.clear();
    env
}

fn from_layout(
    host: &Host,
    candidate: &Candidate,
    options: &ProbeOptions,
    interpreter: Probed<Interpreter>,
) -> PythonEnv {
    let why = interpreter.reason().unwrap_or_default().to_string();
    let (version, kind, site_dirs, distributions) = match layout::guess(host, &candidate.executable) {
        Ok(l) => {
            let version = match l.version {
                Some(v) => Probed::Found(v),
                None => Probed::NotEvaluated("the Python version is not recorded on disk".into()),
            };
            let dists = Probed::Found(read_distributions(&l.site_dirs, &options.watched));
            (version, Some(l.kind), l.site_dirs, dists)
        }
        Err(e) => {
            // Running the interpreter is the remedy only when --fast kept it from running.
            let e = if options.fast { format!("{e}, or run without --fast") } else { e };
            (Probed::NotEvaluated(why.clone()), None, Vec::new(), Probed::NotEvaluated(e))
        }
    };
    let imports = options.stack.iter().map(|p| not_evaluated(p, why.clone())).collect();
    let file_facts = file_facts(&site_dirs, &options.stack);
    PythonEnv {
        file_facts,
        executable: candidate.executable.clone(),
        source: candidate.source,
        version,
        kind,
        interpreter,
        site_dirs,
        distributions,
        imports,
    }
}

/// Directories in order, each real directory once (a venv's `lib64` is a
/// symlink to `lib`).
pub(crate) fn distinct_dirs(dirs: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    dirs.into_iter()
        .filter(|d| {
            let real = crate::host::canonicalize(d).unwrap_or_else(|_| d.clone());
            if seen.contains(&real) {
                false
            } else {
                seen.push(real);
                true
            }
        })
        .collect()
}

fn not_evaluated(package: &StackPackage, reason: String) -> ImportProbe {
    ImportProbe::new(&package.package, &package.module, ImportStatus::NotEvaluated { reason })
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_found_behind_noise_and_an_unfinished_import_is_remembered() {
        let out = format!(
            "sitecustomize says hi\n{MARK}{{\"event\":\"start\",\"package\":\"numpy\"}}\n\
             {MARK}{{\"event\":\"import\",\"package\":\"numpy\",\"module\":\"numpy\",\"status\":{{\"state\":\"ok\"}}}}\n\
             garbage{MARK}{{\"event\":\"start\",\"package\":\"torch\"}}\n{MARK}{{not json\n"
        );
        let run = parse_events(out.as_bytes());
        assert_eq!(run.imports.len(), 1);
        assert_eq!(run.started.as_deref(), Some("torch"));
        assert!(!run.done);
    }

    #[test]
    fn failed_imports_keep_the_exception_type_and_text() {
        let out = format!(
            "{MARK}{{\"event\":\"import\",\"package\":\"onnx\",\"module\":\"onnx\",\
             \"status\":{{\"state\":\"failed\",\"error\":\"TypeError\",\"message\":\"Descriptors cannot be created directly.\"}}}}\n"
        );
        let run = parse_events(out.as_bytes());
        assert_eq!(
            run.imports[0].status,
            ImportStatus::Failed {
                error: "TypeError".into(),
                message: "Descriptors cannot be created directly.".into()
            }
        );
    }
}
