//! What each subcommand does, from settings to an exit code.
//!
//! The command line is parsed in `cli` (what the user typed) and given its
//! meaning in [`settings`] (every usage error, before any work); the
//! terminal side (output file, progress line) is in [`terminal`].

pub mod settings;
mod terminal;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::check::check;
use crate::cli::{CatalogFormat, Cli, Command, FleetFormat, Format};
use crate::exit;
use crate::host::{self, FileKind, Host};
use crate::matrix::{Matrix, Overlay};
use crate::probe::{ProbeOptions, probe};
use crate::report::{Report, catalog, ci, markdown, redact::Redactor, reply, text};
use crate::snapshot::{ProbeMode, Snapshot, normalize_name};
use crate::version::Ver;

use settings::Settings;
use terminal::{Progress, emit};

/// An error that ends the run, with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The command line asks for what cannot be done.
    #[error("{0}")]
    Usage(String),
    /// The `--matrix` layers could not be read, or do not load.
    #[error("the compatibility matrix is invalid:{}", .0.iter().map(|e| format!("\n  {e}")).collect::<String>())]
    Matrix(Vec<String>),
    /// An input could not be read (`what` names it).
    #[error("cannot read {what}: {source}")]
    Read {
        what: String,
        #[source]
        source: host::ReadError,
    },
    /// An input was read and is not what it should be.
    #[error("cannot read {what}: {why}")]
    Unreadable { what: String, why: String },
    /// The model file could not be read as a model.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// A report could not be redacted, so none was written.
    #[error("the report could not be redacted ({0}); nothing was written (--no-redact writes it as it is)")]
    Redaction(String),
    /// A report could not be written (`what` says which, and where).
    #[error("cannot write {what}: {source}")]
    Write {
        what: String,
        #[source]
        source: host::WriteError,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl AppError {
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) | Self::Write { .. } | Self::Io(_) => exit::USAGE,
            Self::Matrix(_)
            | Self::Read { .. }
            | Self::Unreadable { .. }
            | Self::Model(_)
            | Self::Redaction(_) => exit::NOT_EVALUATED,
        }
    }
}

pub fn run(cli: Cli) -> Result<u8, AppError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let settings = Settings::from_args(&cli.options(), &cwd)?;
    let matrix = load_matrix(&settings.matrix_dirs)?;
    if settings.version {
        let line = format!("onnx-doctor {} (matrix {})\n", env!("CARGO_PKG_VERSION"), matrix.describe());
        emit(settings.output.as_deref(), &line)?;
        return Ok(exit::OK);
    }
    let s = &settings;
    refuse_output_over_input(s, &cli.command)?;
    match &cli.command {
        None | Some(Command::Check(_)) => judge(s, &matrix, Given::Nothing, s.format),
        Some(Command::Report { .. }) => judge(s, &matrix, Given::Nothing, Format::Markdown),
        Some(Command::Model { file, targets, .. }) => model(s, &matrix, file, targets),
        Some(Command::Diagnose { input, .. }) => {
            let text = read_input(input.as_deref())?;
            if crate::snapshot::looks_saved(&text) {
                let name = input.as_deref().map_or("standard input".into(), |p| p.display().to_string());
                let snapshot = crate::snapshot::Snapshot::from_saved(&text).map_err(|why| {
                    AppError::Unreadable { what: format!("the doctor report in {name}"), why }
                })?;
                return judge(s, &matrix, Given::Saved(snapshot), s.format);
            }
            // JUnit holds one report; several environments are judged as one there.
            let envs = match s.format {
                Format::Junit | Format::Reply => Vec::new(),
                _ => crate::import::import_environments(&text, &matrix),
            };
            if envs.len() > 1 {
                return judge_environments(s, &matrix, envs);
            }
            judge(s, &matrix, Given::Saved(crate::import::import(&text, &matrix)), s.format)
        }
        Some(Command::Rules { format, .. }) => {
            let rendered = match format {
                CatalogFormat::Json => catalog::rules_json(&matrix),
                CatalogFormat::Markdown => catalog::rules_markdown(&matrix),
                CatalogFormat::Text => catalog::rules_text(&matrix),
            };
            emit(s.output.as_deref(), &rendered)?;
            Ok(exit::OK)
        }
        Some(Command::Explain { code, format, .. }) => {
            let rule =
                matrix.rule(code).ok_or_else(|| AppError::Usage(catalog::unknown_code(&matrix, code)))?;
            let rendered = if *format == CatalogFormat::Json {
                catalog::explain_json(rule)
            } else {
                catalog::explain(rule)
            };
            emit(s.output.as_deref(), &rendered)?;
            Ok(exit::OK)
        }
        Some(Command::Fleet { reports, format, .. }) => fleet(s, &matrix, reports, *format),
        Some(Command::Completions { shell }) => {
            let mut cmd = crate::cli::command();
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut cmd, "onnx-doctor", &mut buf);
            emit(s.output.as_deref(), &String::from_utf8_lossy(&buf))?;
            Ok(exit::OK)
        }
    }
}

/// Today, in days since 1970: `SOURCE_DATE_EPOCH` when set (reproducible
/// reports, https://reproducible-builds.org/specs/source-date-epoch/), else the clock.
fn today() -> i64 {
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    seconds.div_euclid(86_400)
}

fn load_matrix(dirs: &[PathBuf]) -> Result<Matrix, AppError> {
    let (overlays, unreadable): (Vec<_>, Vec<_>) =
        dirs.iter().map(|d| read_overlay(d)).partition(Result::is_ok);
    if !unreadable.is_empty() {
        return Err(AppError::Matrix(unreadable.into_iter().filter_map(Result::err).collect()));
    }
    let overlays: Vec<Overlay> = overlays.into_iter().filter_map(Result::ok).collect();
    Matrix::load(&overlays)
        .map_err(|errors| AppError::Matrix(errors.iter().map(ToString::to_string).collect()))
}

/// The `.yaml` files of one `--matrix` directory, sorted by name.
fn read_overlay(dir: &Path) -> Result<Overlay, String> {
    let name = dir.display().to_string();
    let entries =
        host::read_dir(dir).map_err(|e| format!("{name}:0:0: cannot read matrix directory: {e}"))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!("{name}:0:0: no .yaml files in this matrix directory"));
    }
    let files = paths
        .into_iter()
        .map(|p| {
            let text = host::read_text(&p, host::FileKind::Matrix)
                .map_err(|e| format!("{0}:0:0: {0}: cannot read it: {e}", p.display()))?;
            Ok((p.display().to_string(), text))
        })
        .collect::<Result<_, String>>()?;
    Ok(Overlay { name, files })
}

fn machine(s: &Settings) -> Host {
    Host::from_process(s.root.clone(), s.timeout).with_deadline(s.timeout * host::DEADLINE_TIMEOUTS)
}

fn probe_options(s: &Settings, matrix: &Matrix, fast: bool) -> ProbeOptions {
    ProbeOptions {
        pythons: s.pythons.clone(),
        fast,
        trials: s.trials,
        watched: matrix.packages.clone(),
        stack: matrix.stack.clone(),
        nvml_lib: s.nvml_lib.clone().map(Into::into),
        model: None,
    }
}

/// `model FILE [--target onnxruntime==1.17.1]`: the model's facts beside the
/// installed runtimes (read with the fast probe), or the targets alone.
fn model(s: &Settings, matrix: &Matrix, file: &Path, targets: &[String]) -> Result<u8, AppError> {
    let facts = crate::model::read(file)?;
    let mut parsed = BTreeMap::new();
    for t in targets {
        let (name, version) = parse_target(t)?;
        parsed.insert(name, version);
    }
    let mut snapshot = match &s.snapshot {
        Some(path) => read_snapshot(path)?,
        // With every runtime given as a target, this machine is beside the point.
        None if !parsed.is_empty() => {
            let mut snap =
                Snapshot::new(format!("onnx-doctor {} (model)", env!("CARGO_PKG_VERSION")), ProbeMode::Fast);
            snap.system =
                crate::snapshot::Probed::NotEvaluated("not probed: judging against --target".into());
            snap.nvidia =
                crate::snapshot::Probed::NotEvaluated("not probed: judging against --target".into());
            snap
        }
        // The installed runtimes are asked to load the model (a trial) unless
        // --fast or --no-trials: then their versions are read from disk.
        None => {
            let quick = s.fast || !s.trials;
            let options = ProbeOptions {
                model: (!quick).then(|| file.to_path_buf()),
                ..probe_options(s, matrix, quick)
            };
            let _progress = Progress::start(quick);
            probe(&machine(s), &options)
        }
    };
    snapshot.model = Some(facts);
    snapshot.targets = parsed;
    judge(s, matrix, Given::ProbedHere(snapshot), s.format)
}

/// `--target NAME==VERSION`, for the runtimes a model is judged against.
fn parse_target(t: &str) -> Result<(String, String), AppError> {
    let usage = || {
        AppError::Usage(format!(
            "--target {t:?}: write it as NAME==VERSION, where NAME is onnxruntime or tensorrt, e.g. onnxruntime==1.17.1"
        ))
    };
    let (name, version) = t.split_once("==").ok_or_else(usage)?;
    let name = normalize_name(name);
    if !["onnxruntime", "tensorrt"].contains(&name.as_str()) || Ver::new(version).parsed().is_none() {
        return Err(usage());
    }
    Ok((name, version.trim().to_string()))
}

fn fleet(s: &Settings, matrix: &Matrix, reports: &[PathBuf], format: FleetFormat) -> Result<u8, AppError> {
    let fleet = crate::fleet::aggregate(reports, matrix);
    let rendered = match format {
        FleetFormat::Json => {
            crate::escape::json_text(&serde_json::to_string_pretty(&fleet).expect("a fleet serialises"))
                + "\n"
        }
        FleetFormat::Markdown => {
            crate::escape::no_commands(&crate::fleet::render_markdown(&fleet)).into_owned()
        }
        FleetFormat::Html => crate::escape::no_commands(&crate::fleet::render_html(&fleet)).into_owned(),
        FleetFormat::Text => crate::escape::no_commands(&crate::fleet::render_text(&fleet)).into_owned(),
    };
    emit(s.output.as_deref(), &rendered)?;
    let failing = fleet.findings.iter().any(|f| f.severity >= s.fail_on);
    Ok(if fleet.nodes == 0 {
        exit::NOT_EVALUATED
    } else if failing {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

/// Reads a paste from a file or standard input, as bytes: a paste may hold
/// anything, and what is not UTF-8 is replaced, not refused.
fn read_input(path: Option<&Path>) -> Result<String, AppError> {
    let bytes = match path {
        Some(p) if p != Path::new("-") => host::read_bytes(p, FileKind::Paste)
            .map_err(|source| AppError::Read { what: p.display().to_string(), source })?,
        _ => {
            // A person who typed `onnx-doctor diagnose` would otherwise face
            // a silent cursor.
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!(
                    "paste the text (collect_env, pip list, nvidia-smi, a traceback), then press Ctrl-D"
                );
            }
            host::read_capped(std::io::stdin().lock(), FileKind::Paste.cap())
                .map_err(|source| AppError::Read { what: "standard input".into(), source })?
        }
    };
    Ok(decode_paste(bytes))
}

/// Text as people save it: UTF-8 (with or without a BOM), or UTF-16 with
/// its BOM, which is what Windows PowerShell's `>` writes. Valid UTF-8 is
/// taken as it is, without a copy: a paste may be hundreds of MB.
fn decode_paste(bytes: Vec<u8>) -> String {
    let utf16 = |le: bool| {
        let units = bytes[2..]
            .chunks_exact(2)
            .map(|p| if le { u16::from_le_bytes([p[0], p[1]]) } else { u16::from_be_bytes([p[0], p[1]]) });
        char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect()
    };
    let text: String = match bytes.as_slice() {
        [0xFF, 0xFE, ..] => utf16(true),
        [0xFE, 0xFF, ..] => utf16(false),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        _ => String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    };
    lone_carriage_returns_as_newlines(text)
}

/// Classic Mac OS and some terminals' copy end lines with a bare CR: read
/// as one line, such a paste would state nothing. A CR before LF stays
/// (the line reader drops it).
fn lone_carriage_returns_as_newlines(text: String) -> String {
    let mut bytes = text.into_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
    // Only an ASCII byte was replaced, by another: still UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `diagnose log.txt -o log.txt` (or `--json log.txt`) would replace the
/// paste with its report before anyone read either: refused, whatever
/// spelling names the file. So is one file named for both outputs.
fn refuse_output_over_input(s: &Settings, command: &Option<Command>) -> Result<(), AppError> {
    let mut inputs: Vec<&Path> = s.snapshot.iter().map(PathBuf::as_path).collect();
    match command {
        Some(Command::Diagnose { input: Some(p), .. }) => inputs.push(p),
        Some(Command::Model { file, .. }) => inputs.push(file),
        Some(Command::Fleet { reports, .. }) => inputs.extend(reports.iter().map(PathBuf::as_path)),
        _ => {}
    }
    let outputs = [("--output", &s.output), ("--json", &s.json)];
    for (option, output) in outputs {
        let Some(output) = output else { continue };
        if let Some(i) = inputs.iter().find(|i| host::same_file(i, output)) {
            return Err(AppError::Usage(format!(
                "{option} {} is the input {}: writing the report would destroy what it reports on; choose another file",
                output.display(),
                i.display()
            )));
        }
    }
    if let (Some(out), Some(json)) = (&s.output, &s.json)
        && (out == json || host::same_file(out, json))
    {
        return Err(AppError::Usage(format!(
            "--output and --json both name {}: one report would overwrite the other; choose two files",
            json.display()
        )));
    }
    Ok(())
}

/// Reads `--snapshot FILE`: a saved snapshot or report.
fn read_snapshot(path: &Path) -> Result<Snapshot, AppError> {
    let what = format!("snapshot {}", path.display());
    let text = host::read_text(path, FileKind::Report)
        .map_err(|source| AppError::Read { what: what.clone(), source })?;
    Snapshot::from_saved(&text).map_err(|why| AppError::Unreadable { what, why })
}

/// What a judgement starts from.
enum Given {
    /// Nothing: probe this machine (or read `--snapshot`).
    Nothing,
    /// A snapshot of this machine.
    ProbedHere(Snapshot),
    /// A saved report or a paste: another machine's, whose own names
    /// are what redaction removes.
    Saved(Snapshot),
}

/// Probes (or takes the given snapshot), judges and renders: the heart of
/// `check`, `report`, `diagnose` and `model`.
fn judge(s: &Settings, matrix: &Matrix, given: Given, format: Format) -> Result<u8, AppError> {
    let host = machine(s);
    let (snapshot, saved) = match (given, &s.snapshot) {
        (Given::ProbedHere(snap), _) => (snap, false),
        (Given::Saved(snap), _) => (snap, true),
        (Given::Nothing, Some(path)) => (read_snapshot(path)?, true),
        (Given::Nothing, None) => {
            let _progress = Progress::start(s.fast);
            (probe(&host, &probe_options(s, matrix, s.fast)), false)
        }
    };
    let identity = if saved { Identity::Saved } else { Identity::Host(&host) };
    let (report, code, rendered) = judged(s, matrix, identity, snapshot, format)?;
    emit(s.output.as_deref(), &rendered)?;
    if let Some(path) = &s.json {
        emit(Some(path), &(side_json(s, identity, &report) + "\n"))?;
    }
    if format == Format::Github {
        // The job's summary page shows the whole report; it is public on a
        // public repository, so redacted unless asked not to be.
        // The same two passes a Markdown report gets: every value by its
        // field (user and host names too), unless judged() did it already,
        // then the rendered text.
        let summary = match (s.redacts(Format::Markdown), s.redacts(format)) {
            (false, _) => markdown::render(&report, matrix, code),
            (true, already) => {
                let redactor = identity.redactor(&report.snapshot);
                let redacted = match already {
                    true => std::borrow::Cow::Borrowed(&report),
                    false => std::borrow::Cow::Owned(redact_fields(&redactor, &report)?),
                };
                redactor.apply_rendered(&markdown::render(&redacted, matrix, code))
            }
        };
        terminal::append_step_summary(&inert(Format::Markdown, summary))?;
    }
    Ok(code)
}

/// Whose names redaction removes from a report.
#[derive(Clone, Copy)]
enum Identity<'h> {
    /// This machine's, which was probed.
    Host(&'h Host),
    /// The ones written in a saved report or paste.
    Saved,
}

impl Identity<'_> {
    fn redactor(self, snapshot: &Snapshot) -> Redactor {
        match self {
            Self::Host(host) => Redactor::new(host, snapshot),
            Self::Saved => Redactor::for_saved(snapshot),
        }
    }
}

/// `report` with every value redacted by its field; an error, never the
/// report as it was, when that cannot be done.
fn redact_fields(redactor: &Redactor, report: &Report) -> Result<Report, AppError> {
    report.map_strings_in(false, &|field, v| redactor.apply_field(field, v)).map_err(AppError::Redaction)
}

/// A report as JSON for `--json` (and for each environment of a split
/// paste), with the host-derived values redacted as the JSON format asks.
fn side_json(s: &Settings, identity: Identity<'_>, report: &Report) -> String {
    let json = serde_json::to_string_pretty(report).expect("a report serialises");
    match s.redacts(Format::Json) {
        true => identity.redactor(&report.snapshot).apply_rendered(&json),
        false => json,
    }
}

/// Judges one snapshot and renders it in `format`: the report (its
/// values redacted where the format asks), its exit code, and the text.
fn judged(
    s: &Settings,
    matrix: &Matrix,
    identity: Identity<'_>,
    mut snapshot: Snapshot,
    format: Format,
) -> Result<(Report, u8, String), AppError> {
    for a in &s.assumptions {
        snapshot.assume(a);
    }
    snapshot.expectations.extend(s.expectations.iter().cloned());
    let redactor = s.redacts(format).then(|| identity.redactor(&snapshot));
    let judgement = check(&snapshot, matrix);
    let report = Report::new(snapshot, matrix, judgement).with_today(today());
    let mut code = report.exit_code(s.fail_on);
    // Secrets go before any renderer sees the report: a value is found as it
    // is, not as JSON or Markdown escaped it.
    let report = match &redactor {
        Some(r) => redact_fields(r, &report)?,
        None => report,
    };
    let rendered = match format {
        Format::Json => {
            let json = serde_json::to_string_pretty(&report).expect("a report serialises");
            crate::escape::json_text(&json) + "\n"
        }
        Format::Markdown => markdown::render(&report, matrix, code),
        Format::Github => ci::github(&report),
        Format::Junit => ci::junit(&report, s.fail_on),
        // Exit 1 exactly when there is a reply to post.
        Format::Reply => match reply::render(&report, matrix, s.fail_on) {
            Some(reply) => {
                code = crate::exit::FINDINGS;
                reply
            }
            None => {
                code = crate::exit::OK;
                String::new()
            }
        },
        Format::Text => {
            let verbose_command = verbose_command(std::env::args_os().skip(1));
            let look = text::Look {
                paint: text::Paint(s.color),
                detail: s.detail,
                width: s.width,
                verbose_command: &verbose_command,
            };
            text::render(&report, matrix, look, code)
        }
    };
    // Renderers only add fixed words to values redacted above; this pass
    // catches what they derive from the host, and never user or host names,
    // which are ordinary words in a rendered report ("root", "debian").
    let rendered = match &redactor {
        Some(r) => r.apply_rendered(&rendered),
        None => rendered,
    };
    Ok((report, code, inert(format, rendered)))
}

/// The command the user ran, with `-v`: what the text report's last line
/// offers for the whole story. It repeats the subcommand, the input and the
/// options (`--python`, `--snapshot`), so it shows the same run in full,
/// quoted for a POSIX shell.
fn verbose_command(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    let mut words = vec!["onnx-doctor".to_string()];
    for arg in args {
        let arg = arg.to_string_lossy().into_owned();
        words.push(shlex::try_quote(&arg).map_or_else(|_| arg.clone(), std::borrow::Cow::into_owned));
    }
    words.push("-v".into());
    words.join(" ")
}

/// A rendered report with no line a CI runner would obey: text, Markdown
/// and JUnit quote values from pastes, snapshots and models, which may
/// start a line with `::error::`. GitHub's format writes its own commands
/// and escapes every value inside them; JSON has no line a value starts.
fn inert(format: Format, rendered: String) -> String {
    match format {
        Format::Text | Format::Markdown | Format::Junit | Format::Reply => {
            crate::escape::no_commands(&rendered).into_owned()
        }
        Format::Github | Format::Json => rendered,
    }
}

/// `diagnose` of a paste that sets several environments apart: each judged
/// on its own, under its heading; JSON as `{"environments": [...]}`. The
/// exit code is 1 if any has findings at the fail level, 3 if none could
/// be judged, else 0.
fn judge_environments(
    s: &Settings,
    matrix: &Matrix,
    envs: Vec<crate::import::Environment>,
) -> Result<u8, AppError> {
    let mut codes = Vec::new();
    let mut out = String::new();
    let mut json = Vec::new();
    for env in envs {
        let (first, last) = env.lines;
        let where_ = format!("{} (lines {first}-{last})", env.label);
        let (report, code, rendered) = judged(s, matrix, Identity::Saved, env.snapshot, s.format)?;
        codes.push(code);
        match s.format {
            Format::Json => {}
            Format::Markdown => out.push_str(&format!("## {where_}\n\n{rendered}\n")),
            // Neither splits a paste: one report, one reply.
            Format::Github | Format::Junit | Format::Reply => out.push_str(&rendered),
            Format::Text => out.push_str(&format!("== {where_} ==\n{rendered}\n")),
        }
        // The JSON of this environment, for the output or for --json.
        if s.format == Format::Json || s.json.is_some() {
            let value: serde_json::Value = serde_json::from_str(&side_json(s, Identity::Saved, &report))
                .unwrap_or_else(|_| serde_json::to_value(&report).expect("a report serialises"));
            json.push(serde_json::json!({ "label": env.label, "lines": [first, last], "report": value }));
        }
    }
    let all = serde_json::json!({ "environments": json });
    let all =
        crate::escape::json_text(&serde_json::to_string_pretty(&all).expect("reports serialise")) + "\n";
    if s.format == Format::Json {
        out = all.clone();
    }
    emit(s.output.as_deref(), &out)?;
    if let Some(path) = &s.json {
        emit(Some(path), &all)?;
    }
    Ok(if codes.contains(&exit::FINDINGS) {
        exit::FINDINGS
    } else if codes.iter().all(|&c| c == exit::NOT_EVALUATED) {
        exit::NOT_EVALUATED
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_hint_reruns_what_was_asked_with_v() {
        let args = ["diagnose", "my ticket.txt", "--python", "/env/bin/python"].map(std::ffi::OsString::from);
        assert_eq!(
            verbose_command(args.into_iter()),
            "onnx-doctor diagnose 'my ticket.txt' --python /env/bin/python -v"
        );
        assert_eq!(verbose_command(std::iter::empty()), "onnx-doctor -v");
    }

    #[test]
    fn bare_carriage_returns_end_lines_and_crlf_is_kept() {
        assert_eq!(decode_paste(b"a\rb\r\nc\r".to_vec()), "a\nb\r\nc\n");
        assert_eq!(decode_paste(b"plain\n".to_vec()), "plain\n");
    }
}
