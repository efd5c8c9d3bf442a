//! Probes gather facts and never judge.
//!
//! Each probe fills its part of the [`Snapshot`] and records why it could
//! not when it could not. They run in parallel: the Python interpreters are
//! the slow part (importing torch takes seconds), so each gets its own
//! thread, and everything else happens meanwhile.

pub mod dists;
pub mod nvidia;
pub mod python;
pub mod system;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::thread;

use crate::host::Host;
use crate::snapshot::{ProbeMode, Probed, PythonEnv, Snapshot};

#[derive(Clone, Debug, Default)]
pub(crate) struct ProbeOptions {
    /// `--python`: probe exactly these (executables or environment dirs).
    pub pythons: Vec<PathBuf>,
    /// `--fast`: read metadata only, run nothing.
    pub fast: bool,
    /// Run the trials after the imports (`--no-trials` turns them off).
    pub trials: bool,
    /// Distributions whose `Requires-Dist` the checks need.
    pub watched: BTreeSet<String>,
    /// The Python packages to import, in order (the matrix's `stack:`).
    pub stack: Vec<crate::snapshot::StackPackage>,
    /// `--nvml-lib`: where to load NVML from instead of `libnvidia-ml.so.1`.
    pub nvml_lib: Option<OsString>,
    /// `model FILE`: the model to try in the installed onnxruntime (a trial).
    pub model: Option<PathBuf>,
}

pub(crate) fn probe(host: &Host, options: &ProbeOptions) -> Snapshot {
    let candidates = python::discovery::discover(host, &options.pythons);
    let (system, pythons, mut gpu) = thread::scope(|s| {
        let system = s.spawn(|| system::probe(host));
        let gpu = s.spawn(|| nvidia::probe_machine(host, options.nvml_lib.clone()));
        let pythons: Vec<_> = candidates
            .iter()
            .map(|c| {
                s.spawn(move || {
                    if options.fast {
                        python::probe_fast(host, c, options)
                    } else {
                        python::probe(host, c, options)
                    }
                })
            })
            .collect();
        let pythons: Vec<PythonEnv> =
            pythons.into_iter().map(|h| h.join().expect("python probe panicked")).collect();
        (system.join().expect("system probe panicked"), pythons, gpu.join().expect("NVIDIA probe panicked"))
    });
    let pythons = dedupe_by_interpreter(pythons);
    nvidia::add_python_envs(&mut gpu, host, &pythons, &options.stack);
    let mode = if options.fast { ProbeMode::Fast } else { ProbeMode::Full };
    let mut snapshot = Snapshot::new(format!("onnx-doctor {}", env!("CARGO_PKG_VERSION")), mode);
    snapshot.system = Probed::Found(system);
    snapshot.pythons = pythons;
    snapshot.nvidia = Probed::Found(gpu);
    snapshot
}

/// Two launchers of one interpreter (pyenv shims `python` and `python3`)
/// are one environment: keep the first. Without a run interpreter
/// (`--fast`), the same site directories mean the same environment.
fn dedupe_by_interpreter(pythons: Vec<PythonEnv>) -> Vec<PythonEnv> {
    #[derive(PartialEq)]
    enum Key {
        Interpreter(std::path::PathBuf, std::path::PathBuf),
        Sites(Vec<std::path::PathBuf>),
    }
    let mut seen = Vec::new();
    pythons
        .into_iter()
        .filter(|p| {
            let key = match p.interpreter.found() {
                Some(i) => Key::Interpreter(
                    i.prefix.clone(),
                    crate::host::canonicalize(&i.executable).unwrap_or(i.executable.clone()),
                ),
                None if !p.site_dirs.is_empty() => Key::Sites(p.site_dirs.clone()),
                None => return true,
            };
            if seen.contains(&key) {
                false
            } else {
                seen.push(key);
                true
            }
        })
        .collect()
}
