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
    let outcome = app::run(cli);
    // What a probe left running in a session of its own ends with the run.
    onnx_doctor::host::sweep_orphans();
    match outcome {
        Ok(code) => ExitCode::from(code),
        // A closed pipe (`onnx-doctor | head`) is the reader's choice, not an error.
        Err(app::AppError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(exit::OK),
        Err(e) => {
            // Messages quote paths and values the user or a file supplied.
            let message = onnx_doctor::escape::visible(&e.to_string()).into_owned();
            eprintln!("onnx-doctor: {}", onnx_doctor::escape::no_commands(&message));
            ExitCode::from(e.exit_code())
        }
    }
}
