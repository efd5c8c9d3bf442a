//! The model check: what an `.onnx` file needs from the runtime that will
//! load it, read without loading its weights.
//!
//! The file is walked field by field with positioned reads ([`wire`]):
//! graphs, nodes and attributes that hold subgraphs are descended into,
//! small messages (value infos, opset imports) decoded whole with a
//! hand-declared subset of `onnx.proto` ([`proto`]), and tensor payloads
//! stepped over without reading them. So a 2 GB model with inline weights
//! is read in the time it takes to walk its node list, in memory that
//! holds counts and names rather than nodes, and a file truncated while it
//! is read is an error, not a crash. Protobuf has no magic number, so a file is a
//! model only if it also has a graph and a plausible IR version.

pub mod proto;
mod wire;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use prost::Message;

use wire::{Reader, Source, Value, WireError};

pub use crate::snapshot::model::{ExternalFile, ExternalProblem, ModelFacts, ShapeOperand, TensorInfo};

/// The highest IR version the doctor considers plausible; newer files are
/// still read, anything past this is taken for garbage.
const MAX_PLAUSIBLE_IR: i64 = 64;

/// Graphs nested deeper than this (If inside Loop inside ...) are refused.
const MAX_DEPTH: usize = 32;

/// The largest small message decoded whole (a value info, an opset import).
const MAX_SMALL_MESSAGE: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not an ONNX model: {why}")]
    NotAModel { path: PathBuf, why: String },
}

/// Reads a model file's facts.
pub(crate) fn read(path: &Path) -> Result<ModelFacts, ModelError> {
    let file = crate::host::open_regular(path).map_err(|e| match e {
        crate::host::ReadError::Io(source) => ModelError::Io { path: path.to_path_buf(), source },
        other => ModelError::NotAModel { path: path.into(), why: other.to_string() },
    })?;
    facts(path, &file)
}

/// Facts from bytes already in memory (tests and fuzzing).
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<ModelFacts, ModelError> {
    facts(path, &bytes)
}

/// What a file that does not decode as a model is instead, by its first
/// bytes, for the files that commonly stand where a model should: a Git
/// LFS pointer (the repository was cloned without `git lfs`), an HTML page
/// (a download that saved the site's error or login page), a PyTorch
/// checkpoint (a zip archive, or a pickle before torch 1.6).
fn what_it_is_instead(source: &dyn Source) -> Option<&'static str> {
    const LFS: &str = "it is a Git LFS pointer, not the model: fetch the file itself \
                       (`git lfs pull`, or download it from the repository's web page)";
    const HTML: &str =
        "it is an HTML page, not a model: the download saved a web page (an error or a login page)";
    const ZIP: &str = "it is a zip archive (a PyTorch checkpoint saved with torch.save is one), \
                       not an ONNX model: export the model with torch.onnx.export";
    const PICKLE: &str = "it is a Python pickle (a PyTorch checkpoint is one), \
                          not an ONNX model: export the model with torch.onnx.export";
    const KINDS: &[(&[u8], &str)] = &[
        (b"version https://git-lfs.github.com/spec/", LFS),
        (b"<!DOCTYPE", HTML),
        (b"<!doctype", HTML),
        (b"<html", HTML),
        (b"PK\x03\x04", ZIP),
        (b"\x80\x02", PICKLE),
        (b"\x80\x03", PICKLE),
        (b"\x80\x04", PICKLE),
        (b"\x80\x05", PICKLE),
    ];
    let mut head = [0u8; 64];
    let n = source.read_at(0, &mut head).ok()?;
    let head = &head[..n];
    KINDS.iter().find(|(magic, _)| head.starts_with(magic)).map(|(_, what)| *what)
}

fn facts(path: &Path, source: &dyn Source) -> Result<ModelFacts, ModelError> {
    let not = |why: String| ModelError::NotAModel { path: path.into(), why };
    let mut r = Reader::new(source);
    if r.len() == 0 {
        return Err(not("the file is empty".into()));
    }
    let top = top_level(&mut r).map_err(|e| match e {
        WireError::Io(source) => ModelError::Io { path: path.to_path_buf(), source },
        WireError::Malformed(why) => match what_it_is_instead(source) {
            Some(instead) => not(instead.into()),
            None => not(format!("the protobuf does not decode ({why})")),
        },
    })?;
    let graph = top.graph.ok_or_else(|| not("it has no graph".into()))?;
    if !(1..=MAX_PLAUSIBLE_IR).contains(&top.ir_version) {
        return Err(not(format!("its IR version {} is not one ONNX has", top.ir_version)));
    }
    let mut walk = Walk {
        dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        f: ModelFacts {
            path: path.to_path_buf(),
            file_bytes: r.len(),
            ir_version: top.ir_version,
            producer: format!("{} {}", top.producer_name, top.producer_version).trim().to_string(),
            opsets: top.opsets.iter().map(|o| (domain_name(&o.domain), o.version)).collect(),
            ops: BTreeMap::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            initializers: 0,
            initializer_bytes: 0,
            int64_initializers: 0,
            external_data: Vec::new(),
            subgraphs: 0,
            functions: top.functions.len() as u64,
            shape_operands: Vec::new(),
            aten_operators: Vec::new(),
            linear_resizes: 0,
            shape_gathers: 0,
        },
        opset: top.opsets.iter().find(|o| domain_name(&o.domain) == "ai.onnx").map_or(0, |o| o.version),
        constants: HashSet::new(),
        shapes: HashSet::new(),
        uses: Vec::new(),
        local: HashSet::new(),
    };
    let result = local_functions(&mut r, &top.functions).and_then(|local| {
        walk.local = local;
        walk.graph(&mut r, graph, 0)
    });
    let result = result.and_then(|()| {
        top.functions.iter().try_for_each(|&(offset, len)| walk.function(&mut r, offset, len))
    });
    result.map_err(|e| match e {
        WireError::Io(source) => ModelError::Io { path: path.to_path_buf(), source },
        WireError::Malformed(why) => not(format!("the protobuf does not decode ({why})")),
    })?;
    walk.f.shape_operands = shape_operands(&walk.f.inputs, &walk.constants, walk.uses);
    Ok(walk.f)
}

/// The shape operands whose input is neither an initializer nor a Constant
/// node's output. Those TensorRT's older parsers read only as constants
/// are all kept; the others only where a graph input feeds them.
fn shape_operands(inputs: &[TensorInfo], constants: &HashSet<u64>, uses: Vec<Use>) -> Vec<ShapeOperand> {
    const PARSER_CONSTANTS: &[&str] = &["Reshape.shape", "Resize.scales", "Resize.sizes", "Upsample.scales"];
    let mut out: Vec<ShapeOperand> = Vec::new();
    for u in uses.into_iter().filter(|u| !constants.contains(&name_hash(&u.input))) {
        let from_input = inputs.iter().any(|i| i.name == u.input);
        if !from_input && !PARSER_CONSTANTS.contains(&u.operand) {
            continue;
        }
        let i = match out.iter().position(|o| o.operand == u.operand) {
            Some(i) => i,
            None => {
                out.push(ShapeOperand {
                    operand: u.operand.into(),
                    nodes: 0,
                    first: u.node,
                    inputs: Vec::new(),
                });
                out.len() - 1
            }
        };
        let o = &mut out[i];
        o.nodes += 1;
        if from_input && !o.inputs.contains(&u.input) {
            o.inputs.push(u.input);
        }
    }
    out
}

/// The (domain, name) of each model-local function: a node calling one is
/// not an operator any runtime needs (onnxruntime and TensorRT inline it).
fn local_functions(
    r: &mut Reader<'_>,
    functions: &[(u64, u64)],
) -> Result<HashSet<(String, String)>, WireError> {
    let mut out = HashSet::new();
    for &(offset, len) in functions {
        let (mut name, mut domain) = (String::new(), String::new());
        r.fields(offset, offset + len, |r, tag, v| {
            match (tag, v) {
                (1, Value::Bytes { offset, len }) => name = r.string(offset, len)?,
                (10, Value::Bytes { offset, len }) => domain = r.string(offset, len)?,
                _ => {}
            }
            Ok(())
        })?;
        out.insert((domain_name(&domain), name));
    }
    Ok(out)
}

/// A tensor name's hash (a collision could only hide a finding).
fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

/// Which input of a default-domain node is a shape operand, at `opset`.
fn shape_operand(op: &str, index: usize, opset: i64) -> Option<&'static str> {
    Some(match (op, index) {
        ("Reshape", 1) => "Reshape.shape",
        ("Resize", 1) if opset < 11 => "Resize.scales",
        ("Resize", 2) if opset >= 11 => "Resize.scales",
        ("Resize", 3) => "Resize.sizes",
        ("Upsample", 1) => "Upsample.scales",
        ("Expand", 1) => "Expand.shape",
        ("ConstantOfShape", 0) => "ConstantOfShape.shape",
        ("Tile", 1) => "Tile.repeats",
        ("Slice", 1) => "Slice.starts",
        ("Slice", 2) => "Slice.ends",
        _ => return None,
    })
}

/// A node input that is a shape operand, to be judged once every
/// initializer is known (a graph writes its initializers after its nodes).
struct Use {
    operand: &'static str,
    input: String,
    node: String,
}

/// The fields of ModelProto the doctor reads, with where the graph and the
/// functions are.
#[derive(Default)]
struct TopLevel {
    ir_version: i64,
    producer_name: String,
    producer_version: String,
    graph: Option<(u64, u64)>,
    opsets: Vec<proto::OperatorSetIdProto>,
    functions: Vec<(u64, u64)>,
}

fn top_level(r: &mut Reader<'_>) -> Result<TopLevel, WireError> {
    let mut t = TopLevel::default();
    r.fields(0, r.len(), |r, tag, v| {
        match (tag, v) {
            (1, Value::Varint(x)) => t.ir_version = x as i64,
            (2, Value::Bytes { offset, len }) => t.producer_name = r.string(offset, len)?,
            (3, Value::Bytes { offset, len }) => t.producer_version = r.string(offset, len)?,
            (7, Value::Bytes { offset, len }) => t.graph = Some((offset, len)),
            (8, Value::Bytes { offset, len }) => t.opsets.push(small(r, offset, len)?),
            (25, Value::Bytes { offset, len }) => t.functions.push((offset, len)),
            _ => {}
        }
        Ok(())
    })?;
    Ok(t)
}

/// A small message decoded whole.
fn small<M: Message + Default>(r: &mut Reader<'_>, offset: u64, len: u64) -> Result<M, WireError> {
    let bytes = r.bytes(offset, len, MAX_SMALL_MESSAGE)?;
    M::decode(bytes.as_slice()).map_err(|e| WireError::Malformed(e.to_string()))
}

/// The facts as the walk gathers them.
struct Walk {
    dir: PathBuf,
    f: ModelFacts,
    /// The model's default-domain opset.
    opset: i64,
    /// Initializer names and Constant node outputs, in every graph, hashed:
    /// a model of millions of tiny named initializers costs 8 bytes each.
    constants: HashSet<u64>,
    /// Outputs of Shape nodes, hashed like `constants`.
    shapes: HashSet<u64>,
    uses: Vec<Use>,
    /// The model-local functions, as (domain, name).
    local: HashSet<(String, String)>,
}

impl Walk {
    /// A GraphProto: its nodes, initializers and (for the main graph) inputs and outputs.
    fn graph(
        &mut self,
        r: &mut Reader<'_>,
        (offset, len): (u64, u64),
        depth: usize,
    ) -> Result<(), WireError> {
        if depth > MAX_DEPTH {
            return Err(WireError::Malformed(format!("graphs nested more than {MAX_DEPTH} deep")));
        }
        if depth > 0 {
            self.f.subgraphs += 1;
        }
        r.fields(offset, offset + len, |r, tag, v| {
            let Value::Bytes { offset, len } = v else { return Ok(()) };
            match tag {
                1 => self.node(r, offset, len, depth)?,
                5 => self.initializer(r, offset, len)?,
                11 if depth == 0 => self.f.inputs.push(tensor_info(&small(r, offset, len)?)),
                12 if depth == 0 => self.f.outputs.push(tensor_info(&small(r, offset, len)?)),
                _ => {}
            }
            Ok(())
        })
    }

    /// A NodeProto: counted by domain and op type; subgraphs in its
    /// attributes walked; its shape operands and Constant outputs noted.
    fn node(&mut self, r: &mut Reader<'_>, offset: u64, len: u64, depth: usize) -> Result<(), WireError> {
        let (mut op_type, mut domain, mut name) = (String::new(), String::new(), String::new());
        let (mut inputs, mut outputs, mut strings) = (Vec::new(), Vec::new(), Vec::new());
        r.fields(offset, offset + len, |r, tag, v| {
            let Value::Bytes { offset, len } = v else { return Ok(()) };
            match tag {
                1 => inputs.push(r.string(offset, len)?),
                2 => outputs.push(r.string(offset, len)?),
                3 => name = r.string(offset, len)?,
                4 => op_type = r.string(offset, len)?,
                7 => domain = r.string(offset, len)?,
                5 => strings.extend(self.attribute(r, offset, len, depth)?),
                _ => {}
            }
            Ok(())
        })?;
        let attr = |key: &str| strings.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        if op_type == "ATen"
            && let Some(op) = attr("operator").map(|o| o.trim_start_matches("aten::"))
            && !op.is_empty()
            && self.f.aten_operators.len() < 64
            && let Err(at) = self.f.aten_operators.binary_search_by(|o| o.as_str().cmp(op))
        {
            self.f.aten_operators.insert(at, op.to_string());
        }
        let domain = domain_name(&domain);
        // A call of a model-local function: its body's nodes are counted
        // with the functions.
        if !self.local.is_empty() && self.local.contains(&(domain.clone(), op_type.clone())) {
            return Ok(());
        }
        let count = self.f.ops.entry(domain.clone()).or_default().entry(op_type.clone()).or_default();
        *count += 1;
        if domain != "ai.onnx" {
            return Ok(());
        }
        if op_type == "Constant" {
            self.constants.extend(outputs.iter().map(|o| name_hash(o)));
            return Ok(());
        }
        match op_type.as_str() {
            "Upsample" | "Resize" if attr("mode").is_some_and(|m| m.ends_with("linear")) => {
                self.f.linear_resizes += 1;
            }
            "Shape" => self.shapes.extend(outputs.iter().map(|o| name_hash(o))),
            "Gather" if inputs.first().is_some_and(|i| self.shapes.contains(&name_hash(i))) => {
                self.f.shape_gathers += 1;
            }
            _ => {}
        }
        let label = if name.is_empty() { format!("{op_type} #{count}") } else { name };
        for (i, input) in inputs.into_iter().enumerate() {
            if let Some(operand) = shape_operand(&op_type, i, self.opset).filter(|_| !input.is_empty()) {
                self.uses.push(Use { operand, input, node: label.clone() });
            }
        }
        Ok(())
    }

    /// An AttributeProto: its graphs (`g`, `graphs`) are walked; its name
    /// and string value (`s`, up to 64 bytes: a mode, an ATen operator)
    /// are returned when it has one.
    fn attribute(
        &mut self,
        r: &mut Reader<'_>,
        offset: u64,
        len: u64,
        depth: usize,
    ) -> Result<Option<(String, String)>, WireError> {
        let (mut name, mut value) = (String::new(), None);
        r.fields(offset, offset + len, |r, tag, v| match (tag, v) {
            (1, Value::Bytes { offset, len }) => {
                name = r.string(offset, len)?;
                Ok(())
            }
            (4, Value::Bytes { offset, len }) if len <= 64 => {
                value = Some(r.string(offset, len)?);
                Ok(())
            }
            (6 | 11, Value::Bytes { offset, len }) => self.graph(r, (offset, len), depth + 1),
            _ => Ok(()),
        })?;
        Ok(value.map(|v| (name, v)))
    }

    /// A FunctionProto: its nodes count like the graph's. Its inputs are
    /// parameters bound where it is called, so its shape operands are not
    /// judged.
    fn function(&mut self, r: &mut Reader<'_>, offset: u64, len: u64) -> Result<(), WireError> {
        let uses = self.uses.len();
        r.fields(offset, offset + len, |r, tag, v| match (tag, v) {
            (7, Value::Bytes { offset, len }) => self.node(r, offset, len, 0),
            _ => Ok(()),
        })?;
        self.uses.truncate(uses);
        Ok(())
    }

    /// A TensorProto's header: shape, type, where its data lives. The data
    /// itself is never read.
    fn initializer(&mut self, r: &mut Reader<'_>, offset: u64, len: u64) -> Result<(), WireError> {
        let (mut dims, mut data_type, mut external, mut location) = (Vec::new(), 0, Vec::new(), 0);
        r.fields(offset, offset + len, |r, tag, v| {
            match (tag, v) {
                (8, Value::Bytes { offset, len }) => {
                    self.constants.insert(name_hash(&r.string(offset, len)?));
                }
                (1, Value::Varint(d)) => dims.push(d as i64),
                (1, Value::Bytes { offset, len }) => dims.extend(r.packed(offset, len)?),
                (2, Value::Varint(t)) => data_type = t as i32,
                (13, Value::Bytes { offset, len }) => {
                    external.push(small::<proto::StringStringEntryProto>(r, offset, len)?)
                }
                (14, Value::Varint(l)) => location = l,
                _ => {}
            }
            Ok(())
        })?;
        let f = &mut self.f;
        f.initializers += 1;
        // Hostile dimensions (found by fuzzing) overflow a plain product.
        let elements = dims.iter().fold(1u64, |acc, &d| acc.saturating_mul(d.max(0) as u64));
        f.initializer_bytes =
            f.initializer_bytes.saturating_add(elements.saturating_mul(element_size(data_type)));
        if data_type == 7 {
            f.int64_initializers += 1;
        }
        if location == 1
            && let Some(entry) = external.into_iter().find(|e| e.key == "location")
        {
            match f.external_data.iter_mut().find(|e| e.location == entry.value) {
                Some(e) => e.tensors += 1,
                None => {
                    let problem = external_file_problem(&self.dir, &entry.value);
                    f.external_data.push(ExternalFile {
                        location: entry.value,
                        exists: problem.is_none(),
                        tensors: 1,
                        problem,
                    });
                }
            }
        }
        Ok(())
    }
}

/// What keeps an external-data location from naming a usable file inside
/// the model's folder, if anything. Judged by path components (`w..bin`
/// is a name, `../w.bin` climbs out) and then by the file's metadata and
/// real path; nothing outside the folder is ever opened.
fn external_file_problem(dir: &Path, location: &str) -> Option<ExternalProblem> {
    use std::path::Component;
    let path = Path::new(location);
    if path.is_absolute() {
        return Some(ExternalProblem::Absolute);
    }
    if !path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Some(ExternalProblem::OutsideFolder);
    }
    let file = dir.join(path);
    let Ok(meta) = crate::host::metadata(&file) else { return Some(ExternalProblem::Missing) };
    let real = |p: &Path| crate::host::canonicalize(p).ok();
    match (real(&file), real(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })) {
        (Some(f), Some(d)) if !f.starts_with(&d) => return Some(ExternalProblem::LinkOutside),
        _ => {}
    }
    if !meta.is_file() {
        return Some(ExternalProblem::NotAFile);
    }
    (meta.len() == 0).then_some(ExternalProblem::Empty)
}

fn domain_name(d: &str) -> String {
    if d.is_empty() { "ai.onnx".into() } else { d.into() }
}

fn tensor_info(v: &proto::ValueInfoProto) -> TensorInfo {
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
        let node = proto::NodeProto {
            name: "n".into(),
            op_type: "Relu".into(),
            attribute: vec![],
            domain: String::new(),
        };
        let model = proto::ModelProto {
            ir_version: 8,
            producer_name: "test".into(),
            producer_version: "1".into(),
            graph: Some(proto::GraphProto {
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
