//! Facts of an ONNX model file, as `onnx-doctor model` read them: what the
//! model needs from the runtime that will load it. The reader lives in
//! the `model` module; the facts live here, beside every other fact, so a
//! snapshot carries them without depending on the reader.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Facts of one model file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ModelFacts {
    pub path: PathBuf,
    pub file_bytes: u64,
    pub ir_version: i64,
    pub producer: String,
    /// domain ("" written as "ai.onnx") → version.
    pub opsets: BTreeMap<String, i64>,
    /// domain → op type → count, subgraphs and functions included.
    pub ops: BTreeMap<String, BTreeMap<String, u64>>,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
    pub initializers: u64,
    /// Bytes the initializers hold, from their shapes and element types.
    pub initializer_bytes: u64,
    /// Initializers of type INT64 (TensorRT casts them down).
    pub int64_initializers: u64,
    /// Files holding external data, and whether they exist beside the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external_data: Vec<ExternalFile>,
    /// Graphs inside If/Loop/Scan nodes.
    pub subgraphs: u64,
    /// Model-local functions.
    pub functions: u64,
    /// Shape operands (a Reshape's shape, a Resize's scales) the model
    /// does not hold as constants, by operand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shape_operands: Vec<ShapeOperand>,
    /// The operators ATen fallback nodes stand for (their `operator`
    /// attribute, `aten::` dropped), sorted, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aten_operators: Vec<String>,
    /// Upsample and Resize nodes in linear (bilinear, trilinear) mode.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub linear_resizes: u64,
    /// Gather nodes whose data is a Shape node's output: indexing
    /// `x.size()` or `x.shape` in forward.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shape_gathers: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One kind of shape operand (`Resize.scales`) that some nodes take from
/// something other than an initializer or a Constant node: computed at run
/// time, or a graph input. TensorRT's older ONNX parsers need some of these
/// as constants; a graph input feeding one is a TensorRT shape tensor.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShapeOperand {
    /// `Reshape.shape`, `Resize.scales`, `Resize.sizes`, `Expand.shape`.
    pub operand: String,
    /// How many nodes take it at run time.
    pub nodes: u64,
    /// The first of them, by name (`/up/Resize`, or `Resize #3` unnamed).
    pub first: String,
    /// The graph inputs that feed it directly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    pub elem_type: String,
    /// Numbers for fixed dimensions, names for symbolic ones, "?" for unknown.
    pub shape: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ExternalFile {
    pub location: String,
    /// A usable file inside the model's folder.
    pub exists: bool,
    pub tensors: u64,
    /// Why a file is not usable, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<ExternalProblem>,
}

/// What is wrong with an external-data location. The doctor only looks at
/// the location and the file's metadata; it never reads outside the folder.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ExternalProblem {
    /// No such file beside the model.
    Missing,
    /// `/data/w.bin`: onnx refuses absolute locations.
    Absolute,
    /// `../w.bin`: a location that climbs out of the model's folder.
    OutsideFolder,
    /// A link inside the folder to a file outside it.
    LinkOutside,
    /// A file of 0 bytes, where weights were expected.
    Empty,
    /// A directory or a device, not a regular file.
    NotAFile,
}

impl ExternalProblem {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Absolute => "an absolute path, which onnx refuses",
            Self::OutsideFolder => "outside the model's folder, which onnx refuses",
            Self::LinkOutside => "a link to a file outside the model's folder",
            Self::Empty => "an empty file",
            Self::NotAFile => "not a regular file",
        }
    }
}
