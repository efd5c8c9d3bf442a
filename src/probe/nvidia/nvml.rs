//! The driver and GPUs through NVML, the library nvidia-smi itself uses.
//!
//! `libnvidia-ml.so.1` is opened at run time (nvml-wrapper's dlopen path),
//! so the doctor runs on machines with no driver at all. NVML talks to the
//! kernel driver, and a wedged driver can block a call indefinitely, so the
//! whole conversation runs on its own thread and the doctor stops waiting
//! at the timeout: the thread is abandoned (it ends with the process).

use std::ffi::OsString;
use std::sync::mpsc;
use std::time::Duration;

use nvml_wrapper::Nvml;
use nvml_wrapper::error::NvmlError;

use crate::snapshot::nvidia::{Driver, Gpu, NvmlState};
use crate::version::Ver;

/// A statically linked build has no dynamic loader: `dlopen` of the
/// driver's glibc `libnvidia-ml.so.1` cannot work there, so it is not tried,
/// and the report says which build can (the driver and GPUs still come from
/// `nvidia-smi` and `/proc`).
const STATIC_BUILD: Option<&str> = if cfg!(target_feature = "crt-static") {
    Some(
        "not asked: this is a static (musl) build of onnx-doctor, which cannot load NVML; \
         the glibc build of the same release can",
    )
} else {
    None
};

pub(crate) struct NvmlAnswer {
    pub state: NvmlState,
    pub driver: Option<Driver>,
    pub gpus: Option<Vec<Gpu>>,
}

impl NvmlAnswer {
    fn failed(state: NvmlState) -> Self {
        Self { state, driver: None, gpus: None }
    }
}

/// Asks NVML, loading it from `lib` (a path or a bare name) or the default
/// `libnvidia-ml.so.1`.
pub(crate) fn probe(lib: Option<OsString>, timeout: Duration) -> NvmlAnswer {
    if let Some(why) = STATIC_BUILD {
        return NvmlAnswer::failed(NvmlState::Error { detail: why.into() });
    }
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name("nvml".into()).spawn(move || {
        let _ = tx.send(ask(lib));
    });
    if spawned.is_err() {
        return NvmlAnswer::failed(NvmlState::Error { detail: "could not start the NVML thread".into() });
    }
    match rx.recv_timeout(timeout) {
        Ok(answer) => answer,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            NvmlAnswer::failed(NvmlState::Hung { seconds: timeout.as_secs_f64() })
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => NvmlAnswer::failed(NvmlState::Error {
            detail: "the NVML library crashed the probe thread".into(),
        }),
    }
}

fn ask(lib: Option<OsString>) -> NvmlAnswer {
    let mut builder = Nvml::builder();
    if let Some(lib) = &lib {
        builder.lib_path(lib);
    }
    let nvml = match builder.init() {
        Ok(n) => n,
        Err(e) => return NvmlAnswer::failed(named(state_of(e), lib.as_deref())),
    };
    let driver = match nvml.sys_driver_version() {
        Ok(v) => Driver {
            version: Ver::new(v),
            max_cuda: nvml.sys_cuda_driver_version().ok().map(|v| Ver::from_cuda_int(v.max(0) as u64)),
            source: "nvml".into(),
        },
        Err(e) => return NvmlAnswer::failed(state_of(e)),
    };
    let gpus = nvml.device_count().ok().map(|count| {
        (0..count)
            .filter_map(|i| {
                let d = nvml.device_by_index(i).ok()?;
                Some(Gpu {
                    index: i,
                    name: d.name().unwrap_or_else(|_| "unknown GPU".into()),
                    compute_capability: d
                        .cuda_compute_capability()
                        .ok()
                        .map(|c| Ver::new(format!("{}.{}", c.major, c.minor))),
                    architecture: d.architecture().ok().map(|a| format!("{a:?}")),
                    memory_mib: d.memory_info().ok().map(|m| m.total / (1024 * 1024)),
                    uuid: d.uuid().ok(),
                })
            })
            .collect()
    });
    NvmlAnswer { state: NvmlState::Ok, driver: Some(driver), gpus }
}

/// A loader's error names the library it could not load: dlopen's does,
/// Windows' LoadLibraryExW's does not.
fn named(state: NvmlState, lib: Option<&std::ffi::OsStr>) -> NvmlState {
    match (state, lib) {
        (NvmlState::NoLibrary { detail }, Some(lib)) if !detail.contains(&*lib.to_string_lossy()) => {
            NvmlState::NoLibrary { detail: format!("{}: {detail}", lib.to_string_lossy()) }
        }
        (state, _) => state,
    }
}

fn state_of(e: NvmlError) -> NvmlState {
    match e {
        NvmlError::LibloadingError(inner) => NvmlState::NoLibrary { detail: inner.to_string() },
        NvmlError::LibraryNotFound => {
            NvmlState::NoLibrary { detail: "NVML reports its library missing".into() }
        }
        NvmlError::DriverNotLoaded => NvmlState::DriverNotLoaded,
        NvmlError::NoPermission => NvmlState::NoPermission,
        NvmlError::LibRmVersionMismatch => NvmlState::VersionMismatch,
        other => NvmlState::Error { detail: other.to_string() },
    }
}
