//! The terminal side of a run: where the output goes, and the progress line
//! a person sees while Python imports the stack.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use super::AppError;

/// Writes to `--output` or standard output.
pub fn emit(output: Option<&Path>, text: &str) -> Result<(), AppError> {
    match output {
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
pub struct Progress {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn start(fast: bool) -> Option<Self> {
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
