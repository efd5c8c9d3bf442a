//! What a model with dynamic input dimensions needs from TensorRT: an
//! optimization profile giving every dynamic input a minimum, optimum and
//! maximum shape. The doctor writes one, as `trtexec` flags and as the
//! Python builder calls, with placeholder sizes a user then adjusts: a
//! dimension named the same in several inputs gets the same size, the
//! first dimension (the batch) 1 / 1 / 16, any other 1 / 256 / 1024.
//!
//! A graph input that feeds a shape operand (a Reshape's shape) is a
//! TensorRT *shape tensor*: the profile bounds its values, which the model
//! does not say, so those calls are written with MIN / OPT / MAX to fill in.

use crate::snapshot::model::{ModelFacts, TensorInfo};

fn is_dynamic(dim: &str) -> bool {
    dim.parse::<u64>().is_err()
}

/// The inputs with at least one dimension that is not a fixed number.
/// Inputs that are also initializers (old exporters list weights as
/// inputs) have fixed shapes, so they never appear here.
pub(crate) fn dynamic_inputs(m: &ModelFacts) -> Vec<&TensorInfo> {
    m.inputs.iter().filter(|i| i.shape.iter().any(|d| is_dynamic(d))).collect()
}

/// `input[batch,3,height,width]` for each dynamic input.
pub(crate) fn describe(m: &ModelFacts) -> Vec<String> {
    dynamic_inputs(m).iter().map(|i| format!("{}[{}]", i.name, i.shape.join(","))).collect()
}

/// The three shapes of one input, as dimension lists. A named dimension
/// that is the first of any input is a batch, wherever else it appears.
fn shapes(m: &ModelFacts, input: &TensorInfo) -> [Vec<u64>; 3] {
    let batch = |axis: usize, d: &str| {
        axis == 0 || (d != "?" && m.inputs.iter().any(|i| i.shape.first().is_some_and(|f| f == d)))
    };
    let pick = |k: usize| {
        input
            .shape
            .iter()
            .enumerate()
            .map(|(axis, d)| match d.parse::<u64>() {
                Ok(n) => n,
                Err(_) if batch(axis, d) => [1, 1, 16][k],
                Err(_) => [1, 256, 1024][k],
            })
            .collect()
    };
    [pick(0), pick(1), pick(2)]
}

/// `--minShapes=a:1x3x256x256 --optShapes=… --maxShapes=…`.
pub(crate) fn trtexec_flags(m: &ModelFacts) -> String {
    let inputs = dynamic_inputs(m);
    let flag = |k: usize, name: &str| {
        let list: Vec<String> = inputs
            .iter()
            .map(|i| {
                let dims: Vec<String> = shapes(m, i)[k].iter().map(u64::to_string).collect();
                format!("{}:{}", quote_name(&i.name), dims.join("x"))
            })
            .collect();
        format!("--{name}={}", list.join(","))
    };
    [flag(0, "minShapes"), flag(1, "optShapes"), flag(2, "maxShapes")].join(" ")
}

/// trtexec splits its shape lists at `,` and `:`; a name holding either
/// is quoted, as trtexec accepts.
fn quote_name(name: &str) -> String {
    if name.contains([',', ':', ' ']) { format!("\\'{name}\\'") } else { name.to_string() }
}

/// `profile.set_shape("a", (1, 3, 256, 256), (…), (…))` for each dynamic input, `; `-joined.
pub(crate) fn python_profile(m: &ModelFacts) -> String {
    let tuple = |dims: &[u64]| {
        let items: Vec<String> = dims.iter().map(u64::to_string).collect();
        if items.len() == 1 { format!("({},)", items[0]) } else { format!("({})", items.join(", ")) }
    };
    dynamic_inputs(m)
        .iter()
        .map(|i| {
            let [min, opt, max] = shapes(m, i);
            format!("profile.set_shape({:?}, {}, {}, {})", i.name, tuple(&min), tuple(&opt), tuple(&max))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `Resize.scales (3 nodes, first /up/Resize)` for each shape operand the
/// model does not hold as a constant.
pub(crate) fn runtime_shape_nodes(m: &ModelFacts) -> Vec<String> {
    m.shape_operands
        .iter()
        .map(|o| match o.nodes {
            1 => format!("{} ({})", o.operand, o.first),
            n => format!("{} ({n} nodes, first {})", o.operand, o.first),
        })
        .collect()
}

/// The graph inputs that feed a shape operand, distinct, in model order.
fn shape_tensors(m: &ModelFacts) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for i in m.shape_operands.iter().flat_map(|o| &o.inputs) {
        if !out.contains(&i.as_str()) {
            out.push(i);
        }
    }
    out
}

/// `shape (Reshape.shape)` for each graph input that feeds a shape operand.
pub(crate) fn shape_tensor_inputs(m: &ModelFacts) -> Vec<String> {
    shape_tensors(m)
        .into_iter()
        .map(|name| {
            let fed: Vec<&str> = m
                .shape_operands
                .iter()
                .filter(|o| o.inputs.iter().any(|i| i == name))
                .map(|o| o.operand.as_str())
                .collect();
            format!("{name} ({})", fed.join(", "))
        })
        .collect()
}

/// `profile.set_shape_input("shape", MIN, OPT, MAX)` for each, `; `-joined.
pub(crate) fn shape_input_profile(m: &ModelFacts) -> String {
    shape_tensors(m)
        .into_iter()
        .map(|name| format!("profile.set_shape_input({name:?}, MIN, OPT, MAX)"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, shape: &[&str]) -> TensorInfo {
        TensorInfo {
            name: name.into(),
            elem_type: "float32".into(),
            shape: shape.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn model(inputs: Vec<TensorInfo>) -> ModelFacts {
        ModelFacts {
            path: "m.onnx".into(),
            file_bytes: 0,
            ir_version: 8,
            producer: String::new(),
            opsets: Default::default(),
            ops: Default::default(),
            inputs,
            outputs: vec![],
            initializers: 0,
            initializer_bytes: 0,
            int64_initializers: 0,
            external_data: vec![],
            subgraphs: 0,
            functions: 0,
            shape_operands: vec![],
            aten_operators: vec![],
            linear_resizes: 0,
            shape_gathers: 0,
        }
    }

    #[test]
    fn every_dynamic_input_gets_three_shapes_and_fixed_ones_none() {
        let m = model(vec![
            input("images", &["batch", "3", "height", "width"]),
            input("scale", &["2"]),
            input("ids", &["batch", "?"]),
            input("mask", &["1", "batch"]),
        ]);
        assert_eq!(describe(&m), ["images[batch,3,height,width]", "ids[batch,?]", "mask[1,batch]"]);
        assert_eq!(
            trtexec_flags(&m),
            "--minShapes=images:1x3x1x1,ids:1x1,mask:1x1 --optShapes=images:1x3x256x256,ids:1x256,mask:1x1 \
             --maxShapes=images:16x3x1024x1024,ids:16x1024,mask:1x16"
        );
        assert_eq!(
            python_profile(&m),
            "profile.set_shape(\"images\", (1, 3, 1, 1), (1, 3, 256, 256), (16, 3, 1024, 1024)); \
             profile.set_shape(\"ids\", (1, 1), (1, 256), (16, 1024)); \
             profile.set_shape(\"mask\", (1, 1), (1, 1), (1, 16))"
        );
    }

    #[test]
    fn a_static_model_has_no_profile() {
        let m = model(vec![input("x", &["1", "3", "224", "224"])]);
        assert!(dynamic_inputs(&m).is_empty());
    }
}
