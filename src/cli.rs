//! The command line, as the user types it. Meaning is given in `app`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "onnx-doctor",
    about = "Finds what is broken in a PyTorch → ONNX → ONNX Runtime / TensorRT stack, and prints the fix.",
    disable_version_flag = true,
    args_conflicts_with_subcommands = false
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub global: GlobalArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Probe this machine and judge it against the matrix (the default).
    Check,
    /// Diagnose pasted text (collect_env, pip list, nvidia-smi, tracebacks, a doctor report) from FILE or stdin.
    Diagnose {
        /// The file to read; `-` or nothing reads standard input.
        input: Option<PathBuf>,
    },
    /// Probe this machine and print a redacted Markdown report to attach to an issue.
    Report,
    /// Check an ONNX model against the installed runtimes or a --target.
    Model {
        /// The .onnx file.
        file: PathBuf,
        /// A runtime to judge against instead of the installed one: onnxruntime==1.17.1, tensorrt==8.6.1 (repeatable).
        #[arg(long = "target", value_name = "SPEC")]
        targets: Vec<String>,
    },
    /// Aggregate many nodes' JSON reports: findings by nodes affected, and version drift.
    Fleet {
        /// Report files, directories of them, or `-` for concatenated JSON on standard input.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
    },
    /// List every rule: code, severity, one line.
    Rules,
    /// Explain one rule: why it matters, how to fix it, and its sources.
    Explain {
        /// The rule's code, as shown in a finding (`onnxruntime-built-against-numpy1`).
        code: String,
    },
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', global = true, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit with 1 when a finding at or above this severity is found.
    #[arg(long, global = true, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// A directory of extra matrix YAML files that add rules or replace rules by code (repeatable).
    #[arg(long = "matrix", global = true, value_name = "DIR")]
    pub matrix: Vec<PathBuf>,
    /// A Python interpreter or environment directory to check (repeatable); replaces discovery.
    #[arg(long = "python", global = true, value_name = "PATH")]
    pub python: Vec<PathBuf>,
    /// Read package metadata only; run no Python.
    #[arg(long, global = true)]
    pub fast: bool,
    /// Import the stack but run no trials (loading tiny models, trying each provider, a GPU kernel).
    #[arg(long, global = true)]
    pub no_trials: bool,
    /// Seconds any one external program (a Python probe) may run.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 30.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Re-check a saved snapshot (or a JSON report) instead of probing this machine.
    #[arg(long, global = true, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Replace user and host names, home directories, GPU UUIDs, IP and e-mail addresses and secret-looking
    /// environment values with placeholders (the default for Markdown).
    #[arg(long, global = true, conflicts_with = "no_redact")]
    pub redact: bool,
    /// Do not redact, even in Markdown.
    #[arg(long, global = true)]
    pub no_redact: bool,
    /// Say more: the why, every fix, all evidence and the sources of each finding, and every line of the verdict.
    #[arg(long, short = 'v', global = true, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Say less: only the findings, their fixes and the summary line (for CI logs).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// When to use colour.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Read system files (/etc, /proc, /usr/local/cuda) under this directory, e.g. a host mounted into a container.
    #[arg(long, global = true, value_name = "DIR", env = "ONNX_DOCTOR_ROOT", default_value = "/")]
    pub root: PathBuf,
    /// Load NVML from this file instead of libnvidia-ml.so.1 (e.g. /usr/lib/wsl/lib/libnvidia-ml.so.1 under WSL).
    #[arg(long, global = true, value_name = "PATH", env = "ONNX_DOCTOR_NVML_LIB")]
    pub nvml_lib: Option<PathBuf>,
    /// Judge as if the host had this (repeatable): driver=535.104.05, gpu=sm_80 (or gpu=8.0).
    /// For container builds, where no GPU is visible.
    #[arg(long = "assume", global = true, value_name = "COMPONENT=VERSION")]
    pub assume: Vec<String>,
    /// A pin the environment must meet (repeatable): "torch==2.4.*", "cuda>=12.4", "python>=3.10".
    #[arg(long = "expect", global = true, value_name = "SPEC")]
    pub expect: Vec<String>,
    /// Print the version of the doctor and of its matrix.
    #[arg(short = 'V', long)]
    pub version: bool,
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
