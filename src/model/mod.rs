//! The model check: what an `.onnx` file needs from the runtime that will
//! load it, read without loading its weights.
//!
//! The file is memory-mapped and decoded with a hand-declared subset of
//! `onnx.proto` ([`proto`]): tensor payloads are skipped, never copied, so a
//! 2 GB model with inline weights is read in the time it takes to walk its
//! node list. Protobuf has no magic number, so a file "decodes" only if it
//! also has a graph and a plausible IR version; a truncated or corrupted
//! file is a clear error, never a panic (prost bounds recursion and checks
//! every length against the input).

pub mod proto;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message;

use proto::{GraphProto, ModelProto, NodeProto, ValueInfoProto};

pub use crate::snapshot::model::{ExternalFile, ModelFacts, TensorInfo};

/// The highest IR version the doctor considers plausible; newer files are
/// still read, anything past this is taken for garbage.
const MAX_PLAUSIBLE_IR: i64 = 64;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not an ONNX model: {why}")]
    NotAModel { path: PathBuf, why: String },
}

/// Reads a model file's facts.
pub fn read(path: &Path) -> Result<ModelFacts, ModelError> {
    let io = |source| ModelError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len == 0 {
        return Err(ModelError::NotAModel { path: path.into(), why: "the file is empty".into() });
    }
    // SAFETY: read-only map of a file we do not modify; see elf.rs for the
    // same reasoning about concurrent truncation.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    let model = ModelProto::decode(&map[..]).map_err(|e| ModelError::NotAModel {
        path: path.into(),
        why: format!("the protobuf does not decode ({e})"),
    })?;
    facts(path, len, &model)
}

/// Facts from bytes already in memory (tests and fuzzing).
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<ModelFacts, ModelError> {
    let model = ModelProto::decode(bytes).map_err(|e| ModelError::NotAModel {
        path: path.into(),
        why: format!("the protobuf does not decode ({e})"),
    })?;
    facts(path, bytes.len() as u64, &model)
}

fn facts(path: &Path, len: u64, model: &ModelProto) -> Result<ModelFacts, ModelError> {
    let not = |why: &str| ModelError::NotAModel { path: path.into(), why: why.into() };
    let graph = model.graph.as_ref().ok_or_else(|| not("it has no graph"))?;
    if !(1..=MAX_PLAUSIBLE_IR).contains(&model.ir_version) {
        return Err(not(&format!("its IR version {} is not one ONNX has", model.ir_version)));
    }
    let mut f = ModelFacts {
        path: path.to_path_buf(),
        file_bytes: len,
        ir_version: model.ir_version,
        producer: format!("{} {}", model.producer_name, model.producer_version).trim().to_string(),
        opsets: model.opset_import.iter().map(|o| (domain_name(&o.domain), o.version)).collect(),
        ops: BTreeMap::new(),
        inputs: graph.input.iter().map(tensor_info).collect(),
        outputs: graph.output.iter().map(tensor_info).collect(),
        initializers: 0,
        initializer_bytes: 0,
        int64_initializers: 0,
        external_data: Vec::new(),
        subgraphs: 0,
        functions: model.functions.len() as u64,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    walk_graph(graph, &mut f, dir, true);
    for func in &model.functions {
        for node in &func.node {
            walk_node(node, &mut f, dir);
        }
    }
    Ok(f)
}

fn domain_name(d: &str) -> String {
    if d.is_empty() { "ai.onnx".into() } else { d.into() }
}

fn walk_graph(g: &GraphProto, f: &mut ModelFacts, dir: &Path, top: bool) {
    for t in &g.initializer {
        f.initializers += 1;
        // Hostile dimensions (found by fuzzing) overflow a plain product.
        let elements = t.dims.iter().fold(1u64, |acc, &d| acc.saturating_mul(d.max(0) as u64));
        f.initializer_bytes =
            f.initializer_bytes.saturating_add(elements.saturating_mul(element_size(t.data_type)));
        if t.data_type == 7 {
            f.int64_initializers += 1;
        }
        if t.data_location == 1 {
            let location = t.external_data.iter().find(|e| e.key == "location").map(|e| e.value.clone());
            if let Some(location) = location {
                match f.external_data.iter_mut().find(|e| e.location == location) {
                    Some(e) => e.tensors += 1,
                    None => {
                        let exists = !location.contains("..") && dir.join(&location).is_file();
                        f.external_data.push(ExternalFile { location, exists, tensors: 1 });
                    }
                }
            }
        }
    }
    if !top {
        f.subgraphs += 1;
    }
    for node in &g.node {
        walk_node(node, f, dir);
    }
}

fn walk_node(node: &NodeProto, f: &mut ModelFacts, dir: &Path) {
    *f.ops.entry(domain_name(&node.domain)).or_default().entry(node.op_type.clone()).or_default() += 1;
    for a in &node.attribute {
        if let Some(g) = &a.g {
            walk_graph(g, f, dir, false);
        }
        for g in &a.graphs {
            walk_graph(g, f, dir, false);
        }
    }
}

fn tensor_info(v: &ValueInfoProto) -> TensorInfo {
    let tensor = v.r#type.as_ref().and_then(|t| t.tensor_type.as_ref());
    TensorInfo {
        name: v.name.clone(),
        elem_type: tensor.map_or("?".into(), |t| element_name(t.elem_type).into()),
        shape: tensor
            .and_then(|t| t.shape.as_ref())
            .map(|s| {
                s.dim
                    .iter()
                    .map(|d| match (&d.dim_value, &d.dim_param) {
                        (Some(v), _) => v.to_string(),
                        (None, Some(p)) if !p.is_empty() => p.clone(),
                        _ => "?".into(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// TensorProto.DataType → bytes per element.
fn element_size(t: i32) -> u64 {
    match t {
        1 | 6 | 12 => 4,       // float, int32, uint32
        2 | 3 | 9 => 1,        // uint8, int8, bool
        4 | 5 | 10 | 16 => 2,  // uint16, int16, float16, bfloat16
        7 | 11 | 13 | 14 => 8, // int64, double, uint64, complex64
        15 => 16,              // complex128
        17..=20 => 1,          // float8 variants
        _ => 0,
    }
}

fn element_name(t: i32) -> &'static str {
    match t {
        1 => "float32",
        2 => "uint8",
        3 => "int8",
        4 => "uint16",
        5 => "int16",
        6 => "int32",
        7 => "int64",
        8 => "string",
        9 => "bool",
        10 => "float16",
        11 => "float64",
        12 => "uint32",
        13 => "uint64",
        16 => "bfloat16",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_model() -> Vec<u8> {
        let node =
            NodeProto { name: "n".into(), op_type: "Relu".into(), attribute: vec![], domain: String::new() };
        let model = ModelProto {
            ir_version: 8,
            producer_name: "test".into(),
            producer_version: "1".into(),
            graph: Some(GraphProto {
                node: vec![node],
                name: "g".into(),
                initializer: vec![],
                input: vec![],
                output: vec![],
            }),
            opset_import: vec![proto::OperatorSetIdProto { domain: String::new(), version: 17 }],
            functions: vec![],
        };
        model.encode_to_vec()
    }

    #[test]
    fn a_model_is_read_and_every_truncation_is_an_error_not_a_panic() {
        let bytes = tiny_model();
        let f = read_bytes(Path::new("m.onnx"), &bytes).unwrap();
        assert_eq!(f.opsets["ai.onnx"], 17);
        assert_eq!(f.ops["ai.onnx"]["Relu"], 1);
        for cut in 0..bytes.len() {
            let _ = read_bytes(Path::new("m.onnx"), &bytes[..cut]);
        }
    }

    #[test]
    fn every_single_bit_flip_is_survived() {
        let bytes = tiny_model();
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            let _ = read_bytes(Path::new("m.onnx"), &b);
        }
    }

    #[test]
    fn dimensions_whose_product_overflows_do_not_panic() {
        // Found by `cargo fuzz run model_reader`.
        let bytes = include_bytes!("../../tests/fixtures/fuzz-overflowing-dims.onnx");
        let _ = read_bytes(Path::new("fuzz.onnx"), bytes);
    }

    #[test]
    fn garbage_is_not_a_model() {
        let err = read_bytes(Path::new("x.onnx"), b"\x89PNG\r\n\x1a\n not a model").unwrap_err();
        assert!(err.to_string().contains("is not an ONNX model"), "{err}");
    }
}
