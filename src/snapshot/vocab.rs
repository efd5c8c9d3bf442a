//! The words facts and findings are written in: which part of a stack a
//! finding involves, which library a file is, what an expectation pins.
//!
//! They live beside the facts so that every layer above (the matrix, the
//! probes, the rules, the renderers) shares one spelling and the compiler
//! checks it.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A part of a stack a finding can involve: a piece of the machine
/// (`driver`, `cuda`), or a Python package the matrix's `stack:` section
/// names (`torch`, `onnxruntime`). The machine's parts are fixed; the
/// packages come from the matrix, so adding one is a matrix entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Component(Cow<'static, str>);

impl Component {
    pub const SYSTEM: Self = Self::fixed("system");
    pub const DRIVER: Self = Self::fixed("driver");
    pub const GPU: Self = Self::fixed("gpu");
    pub const CUDA: Self = Self::fixed("cuda");
    pub const CUDNN: Self = Self::fixed("cudnn");
    pub const TENSORRT: Self = Self::fixed("tensorrt");
    /// The Python environment itself, and packages no stack entry names.
    pub const PYTHON: Self = Self::fixed("python");

    /// The parts of the machine, which every matrix knows.
    pub const MACHINE: &[Self] =
        &[Self::SYSTEM, Self::DRIVER, Self::GPU, Self::CUDA, Self::CUDNN, Self::TENSORRT, Self::PYTHON];

    const fn fixed(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    pub fn new(name: impl Into<String>) -> Self {
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
