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
    pub exists: bool,
    pub tensors: u64,
}
