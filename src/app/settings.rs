//! What the command line means. `cli` holds what the user typed; this turns
//! it into settings once, with every usage error found before any work
//! starts: pins and assumptions parsed into their types, paths resolved
//! against the directory the doctor was started in, colour decided.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::AppError;
use crate::cli::{ColorChoice, FailOn, Format, Options};
use crate::matrix::Severity;
use crate::report::text::Detail;
use crate::snapshot::{Assumption, Expectation};

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub format: Format,
    /// `--output FILE`, resolved.
    pub output: Option<PathBuf>,
    /// `--json FILE`, resolved: the JSON report, beside what `format` prints.
    pub json: Option<PathBuf>,
    pub fail_on: Severity,
    pub matrix_dirs: Vec<PathBuf>,
    /// `--python`, each resolved against the starting directory.
    pub pythons: Vec<PathBuf>,
    pub fast: bool,
    pub trials: bool,
    pub timeout: Duration,
    pub snapshot: Option<PathBuf>,
    /// `--redact` / `--no-redact`; `None` is the format's default.
    pub redact: Option<bool>,
    pub color: bool,
    /// How much the text report says, and the width it wraps prose to.
    pub detail: Detail,
    pub width: usize,
    pub root: PathBuf,
    pub nvml_lib: Option<PathBuf>,
    pub assumptions: Vec<Assumption>,
    pub expectations: Vec<Expectation>,
    pub version: bool,
}

impl Settings {
    pub(crate) fn from_args(o: &Options, cwd: &Path) -> Result<Self, AppError> {
        let (p, j, out) = (&o.probe, &o.judge, &o.output);
        let resolve = |p: &PathBuf| if p.is_absolute() { p.clone() } else { cwd.join(p) };
        // `-o -` is standard output, as `diagnose -` reads standard input.
        let to_file = out.output.as_ref().filter(|p| p.as_os_str() != "-");
        let assumptions = j
            .assume
            .iter()
            .map(|a| a.parse().map_err(|e| AppError::Usage(format!("--assume {e}"))))
            .collect::<Result<Vec<Assumption>, _>>()?;
        let expectations = j
            .expect
            .iter()
            .map(|e| e.parse().map_err(|e| AppError::Usage(format!("--expect {e}"))))
            .collect::<Result<Vec<Expectation>, _>>()?;
        let root = resolve(&p.root);
        if !root.is_dir() {
            return Err(AppError::Usage(format!(
                "--root {}: no such directory (it is where the host's /etc, /proc and /usr are read from)",
                p.root.display()
            )));
        }
        let nvml_lib = p.nvml_lib.as_ref().map(resolve);
        if let Some(lib) = &nvml_lib {
            refuse_special_library(lib)?;
        }
        Ok(Self {
            format: out.format,
            output: to_file.map(resolve),
            json: out.json.as_ref().map(resolve),
            fail_on: match j.fail_on {
                FailOn::Error => Severity::Error,
                FailOn::Warning => Severity::Warning,
            },
            matrix_dirs: j.matrix.matrix.iter().map(resolve).collect(),
            pythons: p.python.iter().map(resolve).collect(),
            fast: p.fast,
            trials: !p.no_trials,
            timeout: Duration::from_secs_f64(p.timeout),
            snapshot: p.snapshot.as_ref().map(resolve),
            redact: if out.no_redact {
                Some(false)
            } else if out.redact {
                Some(true)
            } else {
                None
            },
            color: use_color(out.color, to_file.is_some()),
            detail: if out.verbose {
                Detail::Verbose
            } else if out.quiet {
                Detail::Quiet
            } else {
                Detail::Default
            },
            width: width(to_file.is_some()),
            root,
            nvml_lib,
            assumptions,
            expectations,
            version: o.version,
        })
    }

    /// Whether to redact a report rendered in `format`: Markdown is meant
    /// for public tickets, so it is redacted unless asked not to be.
    pub(crate) fn redacts(&self, format: Format) -> bool {
        self.redact.unwrap_or(matches!(format, Format::Markdown | Format::Reply))
    }
}

/// `--nvml-lib FIFO` would block the loader (and, holding its lock, every
/// later `dlopen`) forever: what exists must be a regular file. A path that
/// names nothing is left to NVML, which says it found no library.
fn refuse_special_library(lib: &Path) -> Result<(), AppError> {
    match crate::host::open_regular(lib) {
        Err(e @ crate::host::ReadError::NotRegular(_)) => Err(AppError::Usage(format!(
            "--nvml-lib {}: {e}; name the NVML library file (libnvidia-ml.so.1)",
            lib.display()
        ))),
        _ => Ok(()),
    }
}

/// Colour only for a person at a terminal: `NO_COLOR` turns it off,
/// `CLICOLOR_FORCE` on (https://bixense.com/clicolors/), `--color` decides
/// over both.
fn use_color(choice: ColorChoice, to_file: bool) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set("NO_COLOR") => false,
        ColorChoice::Auto if set("CLICOLOR_FORCE") => true,
        ColorChoice::Auto => {
            !to_file
                && std::io::stdout().is_terminal()
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
                && std::env::var_os("CLICOLOR").is_none_or(|v| v != "0")
        }
    }
}

/// The terminal's width, or `COLUMNS`, or 100; never below 60 or above 160
/// (long lines are hard to read however wide the window).
fn width(to_file: bool) -> usize {
    let term = console::Term::stdout();
    let columns =
        if !to_file && term.is_term() { term.size_checked().map(|(_, w)| usize::from(w)) } else { None };
    columns
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()))
        .unwrap_or(100)
        .clamp(60, 160)
}
