//! `onnx-doctor`: parse the command line, run, map the outcome to an exit
//! code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;
use onnx_doctor::app;
use onnx_doctor::cli::Cli;
use onnx_doctor::exit;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // `onnx-doctor --matrix DIR rules`: each subcommand takes its own options.
            if e.kind() == clap::error::ErrorKind::ArgumentConflict && e.to_string().contains("subcommand") {
                eprintln!("\ntip: options go after the subcommand, as in `onnx-doctor rules --matrix DIR`");
            }
            return ExitCode::from(if e.use_stderr() { exit::USAGE } else { exit::OK });
        }
    };
    onnx_doctor::host::clean_up_on_signals();
    match app::run(cli) {
        Ok(code) => ExitCode::from(code),
        // A closed pipe (`onnx-doctor | head`) is the reader's choice, not an error.
        Err(app::AppError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("onnx-doctor: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
