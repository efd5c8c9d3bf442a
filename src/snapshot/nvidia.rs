//! Facts about the NVIDIA stack: driver, GPUs, CUDA, cuDNN, TensorRT, and
//! which copy of each library a process would actually load.
//!
//! "Installed is not loaded": every library copy is listed with where it
//! was found, and for the libraries that decide whether GPU inference works
//! (onnxruntime's CUDA provider, torch's CUDA library, TensorRT) the snapshot
//! also records how the dynamic loader would resolve each dependency.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Component, Library, Probed};
use crate::version::Ver;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Nvidia {
    /// What NVML said, or why it could not be asked.
    pub nvml: NvmlState,
    /// The driver, from NVML or its fallbacks.
    pub driver: Probed<Driver>,
    /// The kernel module's version, from `/proc/driver/nvidia/version`.
    pub kernel_module: Probed<Ver>,
    pub gpus: Probed<Vec<Gpu>>,
    /// CUDA toolkits on disk (`/usr/local/cuda*`, `CUDA_HOME`).
    #[serde(default)]
    pub toolkits: Vec<Toolkit>,
    /// Every copy of the CUDA runtime, cuDNN, cuBLAS, TensorRT libraries found.
    #[serde(default)]
    pub libraries: Vec<LibraryCopy>,
    /// Versions read from headers (`cudnn_version.h`, `NvInferVersion.h`).
    #[serde(default)]
    pub headers: Vec<HeaderVersion>,
    /// How the loader resolves the GPU libraries of installed packages.
    #[serde(default)]
    pub links: Vec<LinkReport>,
    #[serde(default)]
    pub container: ContainerGpu,
    /// Whether `--assume` stated the host's driver or GPUs: what this
    /// machine shows of its GPUs (device nodes, CUDA available) is then not
    /// what the host will show.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub assumed: bool,
    /// How an installed nvidia-smi failed to answer (it hung, or exited
    /// with an error): a driver may be there but not answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smi_failure: Option<String>,
}

impl Nvidia {
    /// Nothing probed: every part says why.
    pub(crate) fn unprobed(why: &str) -> Self {
        Self {
            nvml: NvmlState::Error { detail: why.into() },
            driver: Probed::NotEvaluated(why.into()),
            kernel_module: Probed::NotEvaluated(why.into()),
            gpus: Probed::NotEvaluated(why.into()),
            toolkits: Vec::new(),
            libraries: Vec::new(),
            headers: Vec::new(),
            links: Vec::new(),
            container: ContainerGpu::default(),
            assumed: false,
            smi_failure: None,
        }
    }

    /// Whether this machine has no NVIDIA driver at all: NVML has no
    /// library (or no module), no kernel module is loaded, and no installed
    /// nvidia-smi failed to answer. A driver that could not be read is not
    /// an absent one.
    pub(crate) fn driver_absent(&self) -> bool {
        matches!(self.nvml, NvmlState::NoLibrary { .. } | NvmlState::DriverNotLoaded)
            && self.kernel_module.found().is_none()
            && self.smi_failure.is_none()
    }
}

/// The outcome of asking NVML (`libnvidia-ml.so.1`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum NvmlState {
    Ok,
    /// The library is not there: no driver, or a container started
    /// without GPU access.
    NoLibrary {
        detail: String,
    },
    DriverNotLoaded,
    NoPermission,
    /// The user-space library and the kernel module differ: the driver
    /// was upgraded and the machine not rebooted.
    VersionMismatch,
    /// An NVML call did not return within the timeout.
    Hung {
        seconds: f64,
    },
    Error {
        detail: String,
    },
}

impl NvmlState {
    /// The state in one word, as the `nvml` fact gives it.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::NoLibrary { .. } => "no_library",
            Self::DriverNotLoaded => "driver_not_loaded",
            Self::NoPermission => "no_permission",
            Self::VersionMismatch => "version_mismatch",
            Self::Hung { .. } => "hung",
            Self::Error { .. } => "error",
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Ok => "NVML answered".into(),
            Self::NoLibrary { detail } => format!("no NVML library ({detail})"),
            Self::DriverNotLoaded => "the NVIDIA kernel driver is not loaded".into(),
            Self::NoPermission => "no permission to talk to the NVIDIA driver".into(),
            Self::VersionMismatch => "driver/library version mismatch".into(),
            Self::Hung { seconds } => format!("NVML did not answer within {seconds:.1} s"),
            Self::Error { detail } => format!("NVML failed: {detail}"),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Driver {
    /// "535.104.05".
    pub version: Ver,
    /// The highest CUDA version this driver supports (not an installed
    /// toolkit): NVML's cudaDriverVersion, or nvidia-smi's "CUDA Version".
    pub max_cuda: Option<Ver>,
    /// "nvml", "/proc/driver/nvidia/version", "nvidia-smi".
    pub source: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// "8.6", "12.0".
    pub compute_capability: Option<Ver>,
    pub architecture: Option<String>,
    pub memory_mib: Option<u64>,
    /// Redactable in reports.
    pub uuid: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Toolkit {
    pub root: PathBuf,
    pub version: Probed<Ver>,
    /// Why this directory was looked at ("CUDA_HOME", "/usr/local/cuda").
    pub found_via: String,
    /// The file or command the version came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_source: Option<String>,
}

/// One copy of a library on disk.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LibraryCopy {
    pub library: Library,
    /// The file name ("libcudnn.so.9", "libcudart.so.12.4.127").
    pub file: String,
    pub path: PathBuf,
    /// The version the file name carries, when it carries more than a major.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Ver>,
    /// The soname major (`9` for libcudnn.so.9), when the name has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major: Option<u64>,
    /// "loader cache", "LD_LIBRARY_PATH", "CUDA toolkit /usr/local/cuda-12.4",
    /// "pip wheel in /venv/lib/python3.11/site-packages", "conda".
    pub origin: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HeaderVersion {
    /// cudnn or tensorrt.
    pub component: Component,
    pub version: Ver,
    pub path: PathBuf,
}

/// How the dynamic loader would resolve one library's dependencies.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LinkReport {
    /// "onnxruntime-cuda-provider", "onnxruntime-tensorrt-provider",
    /// "torch-cuda", "tensorrt".
    pub role: String,
    pub library: PathBuf,
    /// The Python environment it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Direct and indirect dependencies, each once.
    pub resolved: Vec<Resolution>,
    /// Sonames no search step found.
    pub unresolved: Vec<Unresolved>,
    /// On Windows: the Visual C++ runtime the library's DLLs import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vc_runtime: Option<VcRuntime>,
}

/// The Visual C++ runtime a library's DLLs need, and the one Windows
/// would load for them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VcRuntime {
    /// The newest toolset (the linker version, `14.42`) that built one of
    /// the DLLs importing the runtime.
    pub built_with: Ver,
    /// That DLL.
    pub built: PathBuf,
    /// Each runtime DLL imported (`MSVCP140.dll`, `VCRUNTIME140_1.dll`).
    pub dlls: Vec<VcDll>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VcDll {
    pub name: String,
    /// The file Windows would load; none when no folder it searches has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Its file version (`14.40.33810.0`), from its version resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Ver>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Resolution {
    pub soname: String,
    pub path: PathBuf,
    /// "RUNPATH", "RPATH", "LD_LIBRARY_PATH", "loader cache", "default directory".
    pub via: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Unresolved {
    pub soname: String,
    /// The file that needs it.
    pub needed_by: PathBuf,
    /// Copies that exist but are not on the loader's path (a pip
    /// `nvidia-*` wheel, say), which is what the fix points at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub available_in: Vec<PathBuf>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ContainerGpu {
    /// `NVIDIA_VISIBLE_DEVICES`.
    pub visible_devices: Option<String>,
    /// `CUDA_VISIBLE_DEVICES`, as set (an empty value hides every GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_visible_devices: Option<String>,
    /// How many `/dev/nvidiaN` device nodes exist; none when not looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_nodes: Option<u32>,
    /// `NVIDIA_DRIVER_CAPABILITIES`.
    pub driver_capabilities: Option<String>,
    /// Forward-compatibility libcuda copies (`cuda-compat`) on the loader path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compat_libraries: Vec<PathBuf>,
}
