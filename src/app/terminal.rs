//! The terminal side of a run: where the output goes, and the progress line
//! a person sees while Python imports the stack.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use console::Term;
use std::path::Path;
use std::time::Duration;

use super::AppError;
use crate::host;

/// Writes to `--output` or standard output: a file whole or not at all,
/// and nothing once the run was interrupted (its probes were killed, so
/// what it would say is not about the machine).
pub(crate) fn emit(output: Option<&Path>, text: &str) -> Result<(), AppError> {
    match output {
        Some(path) => host::write_whole(path, text.as_bytes())
            .map_err(|source| AppError::Write { what: format!("the report to {}", path.display()), source }),
        None if host::interrupted() => Ok(()),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

/// Appends to the file GitHub Actions names in `GITHUB_STEP_SUMMARY`, when
/// it names one: the job's summary page shows it as Markdown.
/// https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary
pub(crate) fn append_step_summary(markdown: &str) -> Result<(), AppError> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else { return Ok(()) };
    let path = Path::new(&path);
    host::append_regular(path, format!("{markdown}\n").as_bytes())
        .map_err(|source| AppError::Write { what: format!("the job summary to {}", path.display()), source })
}

/// "probing… 2.4 s" on stderr while the probe imports the stack, for a
/// person at a terminal: `import torch` alone can take seconds. Nothing is
/// written when stderr is not a terminal (pipes, CI logs) or with `--fast`,
/// and the line is erased before the report is printed.
pub(crate) struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub(crate) fn start(fast: bool) -> Option<Self> {
        let term = Term::stderr();
        if fast || !term.is_term() || std::env::var_os("CI").is_some() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut shown = false;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let elapsed = started.elapsed();
                // Quick runs finish before anything is shown.
                if elapsed < Duration::from_millis(400) || flag.load(Ordering::Relaxed) {
                    continue;
                }
                let _ = term.clear_line();
                let line = format!(
                    "onnx-doctor: importing the Python stack to probe it… {:.1} s",
                    elapsed.as_secs_f64()
                );
                let _ = term.write_str(&line);
                shown = true;
            }
            if shown {
                let _ = term.clear_line();
            }
        });
        Some(Self { stop, thread: Some(thread) })
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
