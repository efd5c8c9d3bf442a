//! The words facts and findings are written in: which part of a stack a
//! finding involves, which library a file is, what an expectation pins.
//!
//! They live beside the facts so that every layer above (the matrix, the
//! probes, the rules, the renderers) shares one spelling and the compiler
//! checks it.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::version::{Spec, Ver};

/// A part of a stack a finding can involve: a piece of the machine
/// (`driver`, `cuda`), or a Python package the matrix's `stack:` section
/// names (`torch`, `onnxruntime`). The machine's parts are fixed; the
/// packages come from the matrix, so adding one is a matrix entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Component(Cow<'static, str>);

impl Component {
    pub(crate) const SYSTEM: Self = Self::fixed("system");
    pub(crate) const DRIVER: Self = Self::fixed("driver");
    pub(crate) const GPU: Self = Self::fixed("gpu");
    pub(crate) const CUDA: Self = Self::fixed("cuda");
    pub(crate) const CUDNN: Self = Self::fixed("cudnn");
    pub(crate) const TENSORRT: Self = Self::fixed("tensorrt");
    /// The Python environment itself, and packages no stack entry names.
    pub(crate) const PYTHON: Self = Self::fixed("python");

    /// The parts of the machine, which every matrix knows.
    pub const MACHINE: &[Self] =
        &[Self::SYSTEM, Self::DRIVER, Self::GPU, Self::CUDA, Self::CUDNN, Self::TENSORRT, Self::PYTHON];

    const fn fixed(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    pub(crate) fn new(name: impl Into<String>) -> Self {
        Self(Cow::Owned(name.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How much a finding matters: what decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Normalises a distribution name as PEP 503 does: lower case, runs of
/// `-`, `_` and `.` become one `-`. A string that is no valid name (pasted
/// junk) is only trimmed and lower-cased, and so matches no distribution.
pub fn normalize_name(name: &str) -> String {
    let mut out = String::new();
    normalize_name_into(name, &mut out);
    out
}

/// [`normalize_name`] into a buffer the caller reuses: a long package list
/// normalises every name it reads without allocating for each.
pub(crate) fn normalize_name_into(name: &str, out: &mut String) {
    let name = name.trim();
    out.clear();
    // PEP 503 over a valid name (pep508_rs's rules): ASCII letters and
    // digits, `-_.` between them, each run of those one `-`.
    let mut last_separator = true;
    for b in name.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => {
                out.push(b.to_ascii_lowercase() as char);
                last_separator = false;
            }
            b'-' | b'_' | b'.' if !out.is_empty() => {
                if !last_separator {
                    out.push('-');
                }
                last_separator = true;
            }
            _ => {
                out.clear();
                out.push_str(&name.to_lowercase());
                return;
            }
        }
    }
    if last_separator && !out.is_empty() {
        out.clear();
        out.push_str(&name.to_lowercase());
    }
}

/// The libraries whose copies the doctor lists, by their file-name stem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Library {
    #[serde(rename = "cudart")]
    Cudart,
    #[serde(rename = "cudnn")]
    Cudnn,
    #[serde(rename = "cublas")]
    Cublas,
    #[serde(rename = "cublasLt")]
    CublasLt,
    #[serde(rename = "nvinfer")]
    Nvinfer,
    #[serde(rename = "nvrtc")]
    Nvrtc,
    /// The driver's `libcuda.so`.
    #[serde(rename = "cuda")]
    Cuda,
    #[serde(rename = "nvidia-ml")]
    NvidiaMl,
}

impl Library {
    pub(crate) const ALL: &[Self] = &[
        Self::Cudart,
        Self::Cudnn,
        Self::Cublas,
        Self::CublasLt,
        Self::Nvinfer,
        Self::Nvrtc,
        Self::Cuda,
        Self::NvidiaMl,
    ];

    /// The file name up to its version suffix (`libcudnn.so`).
    pub(crate) fn stem(self) -> &'static str {
        match self {
            Self::Cudart => "libcudart.so",
            Self::Cudnn => "libcudnn.so",
            Self::Cublas => "libcublas.so",
            Self::CublasLt => "libcublasLt.so",
            Self::Nvinfer => "libnvinfer.so",
            Self::Nvrtc => "libnvrtc.so",
            Self::Cuda => "libcuda.so",
            Self::NvidiaMl => "libnvidia-ml.so",
        }
    }

    /// The start of the library's DLL name on Windows (`cudart64_12.dll`);
    /// the driver's two are whole names.
    pub(crate) fn dll_stem(self) -> &'static str {
        match self {
            Self::Cudart => "cudart64_",
            Self::Cudnn => "cudnn64_",
            Self::Cublas => "cublas64_",
            Self::CublasLt => "cublasLt64_",
            Self::Nvinfer => "nvinfer_",
            Self::Nvrtc => "nvrtc64_",
            Self::Cuda => "nvcuda",
            Self::NvidiaMl => "nvml",
        }
    }

    /// The component a copy of this library belongs to.
    pub(crate) fn component(self) -> Component {
        match self {
            Self::Cudnn => Component::CUDNN,
            Self::Nvinfer => Component::TENSORRT,
            Self::Cuda | Self::NvidiaMl => Component::DRIVER,
            Self::Cudart | Self::Cublas | Self::CublasLt | Self::Nvrtc => Component::CUDA,
        }
    }
}

/// A pin the environment must meet (`--expect "torch==2.4.*"`): a name and
/// a PEP 440 specifier. `cuda`, `driver` and `python` name the machine's
/// CUDA, driver and interpreter; any other name is a distribution.
#[derive(Clone, Debug)]
pub struct Expectation {
    text: String,
    pub name: String,
    pub spec: Spec,
}

impl Expectation {
    /// What the user wrote.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for Expectation {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let at = text.find(['<', '>', '=', '!', '~']).unwrap_or(text.len());
        let (name, spec) = text.split_at(at);
        let name = normalize_name(name);
        if name.is_empty() || spec.is_empty() {
            return Err(format!(
                "{text:?}: write a name and a version specifier, e.g. \"torch==2.4.*\", \"cuda>=12.4\", \"python>=3.10\""
            ));
        }
        let spec = spec.parse().map_err(|e| format!("{text:?}: {e}"))?;
        Ok(Self { text: text.to_string(), name, spec })
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Expectation {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Serialize for Expectation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Expectation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// A fact of the host the doctor cannot see, given with `--assume` (a
/// container build has no GPU and no driver). It replaces what it assumes.
#[derive(Clone, Debug, PartialEq)]
pub enum Assumption {
    Driver(Ver),
    /// A compute capability (`8.0`).
    Gpu(Ver),
}

impl FromStr for Assumption {
    type Err = String;

    fn from_str(a: &str) -> Result<Self, String> {
        let Some((what, value)) = a.split_once('=') else {
            return Err(format!("{a:?}: write COMPONENT=VERSION, e.g. driver=535.104.05 or gpu=sm_80"));
        };
        let value = value.trim();
        match what.trim() {
            "driver" => {
                let v = Ver::new(value);
                match v.release() {
                    [major, ..] if v.parsed().is_some() && *major < 10_000 => Ok(Self::Driver(v)),
                    _ => Err(format!("{a:?}: {value:?} is not a driver version (e.g. 535.104.05)")),
                }
            }
            "gpu" => {
                let cc = value.trim_start_matches("sm_");
                let cc = if cc.contains('.') {
                    cc.to_string()
                } else if cc.len() >= 2 && cc.is_ascii() {
                    format!("{}.{}", &cc[..cc.len() - 1], &cc[cc.len() - 1..])
                } else {
                    String::new()
                };
                let v = Ver::new(cc.as_str());
                match v.release() {
                    [major, _] if *major < 100 => Ok(Self::Gpu(v)),
                    _ => Err(format!("{a:?}: write gpu=sm_80 or gpu=8.0")),
                }
            }
            other => Err(format!("{other:?}: the components that can be assumed are driver and gpu")),
        }
    }
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Driver(v) => write!(f, "driver={v}"),
            Self::Gpu(cc) => write!(f, "gpu={cc}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_need_a_name_and_a_specifier() {
        let e: Expectation = " Torch==2.4.* ".parse().unwrap();
        assert_eq!((e.name.as_str(), e.spec.raw(), e.as_str()), ("torch", "==2.4.*", "Torch==2.4.*"));
        assert!("==1.0".parse::<Expectation>().is_err());
        assert!("torch".parse::<Expectation>().is_err());
        assert!("torch=>2".parse::<Expectation>().is_err());
    }

    #[test]
    fn assumptions_read_drivers_and_compute_capabilities() {
        assert_eq!("driver=535.104.05".parse(), Ok(Assumption::Driver(Ver::new("535.104.05"))));
        assert_eq!("gpu=sm_86".parse(), Ok(Assumption::Gpu(Ver::new("8.6"))));
        assert_eq!("gpu=12.0".parse(), Ok(Assumption::Gpu(Ver::new("12.0"))));
        assert!("gpu=sm_x".parse::<Assumption>().is_err());
        assert!(format!("driver={}", "9".repeat(200)).parse::<Assumption>().is_err());
        assert!("cuda=12".parse::<Assumption>().is_err());
    }

    #[test]
    fn names_normalise_as_pep_503_says_without_a_parser() {
        for name in [
            "Torch",
            "onnxruntime_gpu",
            "ml.dtypes",
            "A__B--c..D",
            " numpy ",
            "x",
            "",
            "-lead",
            "trail_",
            "we ird",
            "naïve",
            "ONNX-Runtime-GPU",
            "9lives",
            "a.-_b",
        ] {
            let trimmed = name.trim();
            let expected = pep508_rs::PackageName::from_str(trimmed)
                .map_or_else(|_| trimmed.to_lowercase(), |n| n.to_string());
            assert_eq!(normalize_name(name), expected, "{name:?}");
        }
    }
}
