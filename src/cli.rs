//! The command line, as the user types it. Meaning is given in `app`.
//!
//! Each subcommand takes only the options that apply to it, in groups:
//! what to probe ([`ProbeArgs`]), how to judge ([`JudgeArgs`]) and how to
//! print ([`OutputArgs`]). Running with no subcommand is `check`. The app
//! sees every option through [`Options`], the groups a subcommand did not
//! take at their defaults.

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

const EXAMPLES: &str = "\
Examples:
  A workstation: every Python environment found, the driver, CUDA, cuDNN,
  TensorRT; -v adds the why, the evidence and the sources of each finding
    onnx-doctor
    onnx-doctor --python .venv -v

  A container build's gate: no GPU is visible while building, nothing
  prompts, the exit code decides
    onnx-doctor --assume gpu=sm_89 --assume driver=DRIVER --fail-on warning
                                          (DRIVER: the host's, as nvidia-smi prints it)
    onnx-doctor --format json -o /report.json
    onnx-doctor --format github           (annotations in GitHub Actions)
    onnx-doctor --format junit -o onnx-doctor.xml

  A support ticket
    onnx-doctor report -o report.md       (redacted, to attach)
    onnx-doctor diagnose ticket.txt       (collect_env, pip list, nvidia-smi,
                                           a traceback, a report: any mix)
    onnx-doctor diagnose ticket.txt --reply
                                          (a Markdown reply to its reporter; exit 1
                                           when there is one to post)

  A model, against what is installed or the releases you deploy on
    onnx-doctor model model.onnx --target onnxruntime==VERSION

Exit codes:
  0  nothing at or above --fail-on (error by default)
  1  findings at or above --fail-on
  2  a usage error: a bad option or argument, output that cannot be written
  3  nothing was judged: nothing could be probed, or a matrix, snapshot or
     input could not be read";

const COMPLETIONS: &str = "\
Install:
  bash   onnx-doctor completions bash > ~/.local/share/bash-completion/completions/onnx-doctor
  zsh    onnx-doctor completions zsh > ~/.zfunc/_onnx-doctor
         (with `fpath+=~/.zfunc; autoload -U compinit; compinit` in ~/.zshrc)
  fish   onnx-doctor completions fish > ~/.config/fish/completions/onnx-doctor.fish
  elvish onnx-doctor completions elvish >> ~/.config/elvish/rc.elv
  powershell
         onnx-doctor completions powershell >> $PROFILE
Open a new shell afterwards.";

#[derive(Debug, Parser)]
#[command(
    name = "onnx-doctor",
    about = "Finds what is broken in a PyTorch → ONNX → ONNX Runtime / TensorRT stack, and prints the fix.",
    after_help = EXAMPLES,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `check`'s options, for a run without a subcommand.
    #[command(flatten)]
    pub check: CheckArgs,
    /// Print the version of the doctor and of its matrix.
    #[arg(short = 'V', long)]
    pub version: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Probe this machine and judge it against the matrix (the default).
    #[command(after_help = EXAMPLES)]
    Check(CheckArgs),
    /// Diagnose pasted text (collect_env, pip list, nvidia-smi, tracebacks, a doctor report) from FILE or stdin.
    Diagnose {
        /// The file to read; `-` or nothing reads standard input.
        input: Option<PathBuf>,
        /// Write a short Markdown reply to the ticket's reporter instead of a report (for a triage bot): what
        /// was found, the commands that fix it, what to paste back. Only findings at or above --fail-on, or
        /// a recognised symptom, make a reply; exit 1 when there is one to post, 0 (writing nothing) when
        /// there is not.
        #[arg(long, conflicts_with_all = ["format", "verbose", "quiet"])]
        reply: bool,
        #[command(flatten)]
        judge: JudgeArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Probe this machine and print a redacted Markdown report to attach to an issue.
    Report {
        #[command(flatten)]
        probe: ProbeArgs,
        #[command(flatten)]
        judge: JudgeArgs,
        /// Write the report to FILE instead of standard output.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Do not redact user and host names, home directories, addresses and secrets.
        #[arg(long)]
        no_redact: bool,
    },
    /// Check an ONNX model against the installed runtimes or a --target.
    Model {
        /// The .onnx file.
        file: PathBuf,
        /// A runtime to judge against instead of the installed one: onnxruntime==1.17.1, tensorrt==8.6.1 (repeatable).
        #[arg(long = "target", value_name = "SPEC")]
        targets: Vec<String>,
        #[command(flatten)]
        probe: ProbeArgs,
        #[command(flatten)]
        judge: JudgeArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Aggregate many nodes' JSON reports: findings by nodes affected, and version drift.
    Fleet {
        /// Report files, directories of them, or `-` for concatenated JSON on standard input.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Output format: html and markdown draw the nodes × findings table.
        #[arg(long, value_enum, default_value_t = FleetFormat::Text)]
        format: FleetFormat,
        /// Write to FILE instead of standard output.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Exit with 1 when a node has a finding at or above this severity.
        #[arg(long, value_enum, default_value_t = FailOn::Error)]
        fail_on: FailOn,
        #[command(flatten)]
        matrix: MatrixArgs,
    },
    /// List every rule: code, severity, one line.
    Rules {
        #[arg(long, value_enum, default_value_t = CatalogFormat::Text)]
        format: CatalogFormat,
        #[command(flatten)]
        matrix: MatrixArgs,
    },
    /// Explain one rule: why it matters, how to fix it, and its sources.
    Explain {
        /// The rule's code, as shown in a finding (`onnxruntime-built-against-numpy1`).
        code: String,
        #[arg(long, value_enum, default_value_t = CatalogFormat::Text)]
        format: CatalogFormat,
        #[command(flatten)]
        matrix: MatrixArgs,
    },
    /// Print a shell completion script (see --help for where to put it).
    #[command(after_help = COMPLETIONS)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `check`: what to probe, how to judge, how to print.
#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What to probe, and how long anything may take.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Probing")]
pub struct ProbeArgs {
    /// A Python interpreter or environment directory to check (repeatable); replaces discovery.
    #[arg(long = "python", value_name = "PATH")]
    pub python: Vec<PathBuf>,
    /// Read package metadata only; run no Python.
    #[arg(long)]
    pub fast: bool,
    /// Import the stack but run no trials (loading tiny models, trying each provider, a GPU kernel).
    #[arg(long)]
    pub no_trials: bool,
    /// Seconds any one external program (a Python probe) may run.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Re-check a saved snapshot (or a JSON report) instead of probing this machine.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Read system files (/etc, /proc, /usr/local/cuda) under this directory, e.g. a host mounted into a container.
    #[arg(long, value_name = "DIR", env = "ONNX_DOCTOR_ROOT", default_value = "/")]
    pub root: PathBuf,
    /// Load NVML from this file instead of libnvidia-ml.so.1 (e.g. /usr/lib/wsl/lib/libnvidia-ml.so.1 under WSL).
    #[arg(long, value_name = "PATH", env = "ONNX_DOCTOR_NVML_LIB")]
    pub nvml_lib: Option<PathBuf>,
}

/// Which matrix judges.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Judging")]
pub struct MatrixArgs {
    /// A directory of extra matrix YAML files that add rules or replace rules by code (repeatable).
    #[arg(long = "matrix", value_name = "DIR")]
    pub matrix: Vec<PathBuf>,
}

/// How to judge what was found.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Judging")]
pub struct JudgeArgs {
    /// Exit with 1 when a finding at or above this severity is found.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Judge as if the host had this (repeatable): driver=535.104.05, gpu=sm_80 (or gpu=8.0).
    /// For container builds, where no GPU is visible.
    #[arg(long = "assume", value_name = "COMPONENT=VERSION")]
    pub assume: Vec<String>,
    /// A pin the environment must meet (repeatable): "torch==2.4.*", "cuda>=12.4", "python>=3.10".
    #[arg(long = "expect", value_name = "SPEC")]
    pub expect: Vec<String>,
}

/// How to print the report.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the whole report as JSON to FILE, whatever --format prints: a short verdict in the log, the
    /// details kept as an artifact.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Say more: the why, every fix, all evidence and the sources of each finding, and every line of the verdict.
    #[arg(long, short = 'v', conflicts_with = "quiet")]
    pub verbose: bool,
    /// Say less: only the findings, their fixes and the summary line (for CI logs).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Replace user and host names, home directories, GPU UUIDs, IP and e-mail addresses and secret-looking
    /// environment values with placeholders (the default for Markdown).
    #[arg(long, conflicts_with = "no_redact")]
    pub redact: bool,
    /// Do not redact, even in Markdown.
    #[arg(long)]
    pub no_redact: bool,
    /// When to use colour (NO_COLOR and CLICOLOR_FORCE are honoured with auto).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Every option a run can be given: those of the subcommand, the rest at
/// their defaults.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub probe: ProbeArgs,
    pub judge: JudgeArgs,
    pub output: OutputArgs,
    pub version: bool,
}

impl Cli {
    /// The options of the run, whatever the subcommand.
    pub(crate) fn options(&self) -> Options {
        let mut o =
            Options { probe: defaults(), judge: defaults(), output: defaults(), version: self.version };
        let check = |o: &mut Options, c: &CheckArgs| {
            o.probe = c.probe.clone();
            o.judge = c.judge.clone();
            o.output = c.output.clone();
        };
        match &self.command {
            None => check(&mut o, &self.check),
            Some(Command::Check(c)) => check(&mut o, c),
            Some(Command::Diagnose { judge, output, reply, .. }) => {
                o.judge = judge.clone();
                o.output = output.clone();
                if *reply {
                    o.output.format = Format::Reply;
                }
            }
            Some(Command::Report { probe, judge, output, no_redact }) => {
                o.probe = probe.clone();
                o.judge = judge.clone();
                o.output.format = Format::Markdown;
                o.output.output.clone_from(output);
                o.output.no_redact = *no_redact;
            }
            Some(Command::Model { probe, judge, output, .. }) => {
                o.probe = probe.clone();
                o.judge = judge.clone();
                o.output = output.clone();
            }
            Some(Command::Fleet { output, fail_on, matrix, .. }) => {
                o.output.output.clone_from(output);
                o.judge.fail_on = *fail_on;
                o.judge.matrix = matrix.clone();
            }
            Some(Command::Rules { matrix, .. } | Command::Explain { matrix, .. }) => {
                o.judge.matrix = matrix.clone();
            }
            Some(Command::Completions { .. }) => {}
        }
        o
    }
}

/// A group of options at its defaults (environment variables included),
/// as clap would fill it from an empty command line.
fn defaults<T: Args + FromArgMatches>() -> T {
    let cmd = T::augment_args(clap::Command::new("onnx-doctor").no_binary_name(true));
    let matches = cmd.try_get_matches_from(std::iter::empty::<String>()).expect("every option has a default");
    T::from_arg_matches(&matches).expect("defaults are valid")
}

/// The clap command, for completions and help.
pub(crate) fn command() -> clap::Command {
    Cli::command()
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err("the timeout must be more than 0 and at most 86400 seconds".into())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
    /// GitHub Actions workflow annotations.
    Github,
    /// JUnit XML: one test case per rule evaluated, a failure per finding.
    Junit,
    /// `diagnose --reply`: a Markdown reply to a ticket's reporter.
    #[value(skip)]
    Reply,
}

/// What `fleet` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FleetFormat {
    Text,
    Json,
    /// GitHub-flavoured Markdown, with the nodes × findings table.
    Markdown,
    /// One self-contained page: the nodes × findings table, version drift.
    Html,
}

/// What `rules` and `explain` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CatalogFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_example_in_the_help_parses() {
        let examples: Vec<&str> = EXAMPLES
            .lines()
            .chain(COMPLETIONS.lines())
            .filter_map(|l| l.trim_start().split_once("onnx-doctor "))
            .map(|(_, rest)| rest.split(['(', '>']).next().unwrap_or(rest).trim())
            .collect();
        assert!(examples.len() >= 10, "{examples:?}");
        for e in examples {
            let args = std::iter::once("onnx-doctor").chain(e.split_whitespace());
            if let Err(err) = Cli::try_parse_from(args) {
                panic!("`onnx-doctor {e}`: {err}");
            }
        }
    }

    #[test]
    fn a_subcommand_takes_only_its_options() {
        assert!(Cli::try_parse_from(["onnx-doctor", "rules", "--fast"]).is_err());
        assert!(Cli::try_parse_from(["onnx-doctor", "diagnose", "--python", "/usr/bin/python3"]).is_err());
        assert!(Cli::try_parse_from(["onnx-doctor", "fleet", "a.json", "--format", "github"]).is_err());
        let cli =
            Cli::try_parse_from(["onnx-doctor", "diagnose", "t.txt", "--format", "json", "-q"]).unwrap();
        let o = cli.options();
        assert_eq!(o.output.format, Format::Json);
        assert!(o.output.quiet);
        assert_eq!(o.probe.timeout, 30.0);
        let cli = Cli::try_parse_from(["onnx-doctor", "--fast", "-v"]).unwrap();
        assert!(cli.options().probe.fast && cli.options().output.verbose);
        let cli =
            Cli::try_parse_from(["onnx-doctor", "diagnose", "t.txt", "--reply", "--fail-on", "warning"])
                .unwrap();
        assert_eq!(cli.options().output.format, Format::Reply);
        assert!(Cli::try_parse_from(["onnx-doctor", "diagnose", "--reply", "--format", "json"]).is_err());
        assert!(
            Cli::try_parse_from(["onnx-doctor", "--format", "reply"]).is_err(),
            "a reply is diagnose's alone"
        );
        let cli = Cli::try_parse_from(["onnx-doctor", "report", "--no-redact"]).unwrap();
        assert_eq!(cli.options().output.format, Format::Markdown);
    }
}
