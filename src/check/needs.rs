//! What a model needs: the oldest release of each runtime, in the matrix's
//! tables, that can load it, and what sets that floor.
//!
//! For onnxruntime: the model's IR version and default-domain opset
//! against `onnxruntime-releases`. For TensorRT's ONNX parser: the opset
//! against `tensorrt-releases`, then the operators its parser cannot import
//! (`tensorrt-onnx-ops`). For the onnx package: the IR version it reads
//! (`onnx-releases`). A release is the lower bound of a table row.

use serde::{Deserialize, Serialize};

use crate::matrix::{Matrix, Row};
use crate::snapshot::model::ModelFacts;
use crate::version::Ver;

/// The oldest release of one package that can take the model.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Need {
    pub package: String,
    /// `1.14`, or None when no release in the matrix can.
    pub at_least: Option<String>,
    /// What sets the floor: "opset 18", "IR 10", "operator GridSample".
    pub because: String,
}

/// The rows of `table`, oldest first, with the release each starts at.
fn rows<'m>(matrix: &'m Matrix, table: &str) -> Vec<(Ver, &'m Row)> {
    let Some(t) = matrix.tables.get(table) else { return Vec::new() };
    let mut rows: Vec<(Ver, &Row)> = t
        .rows
        .iter()
        .filter_map(|r| {
            let lowest = r.spec.versions().min()?;
            Some((Ver::new(lowest.to_string()), r))
        })
        .collect();
    rows.sort_by(|a, b| a.0.parsed().cmp(&b.0.parsed()));
    rows
}

fn number(row: &Row, column: &str) -> Option<i64> {
    row.values.get(column)?.trim().parse().ok()
}

/// The first row whose `limits` (column, the model's value) all hold, and
/// the limit the row before it failed.
fn floor(rows: &[(Ver, &Row)], limits: &[(&str, &str, i64)]) -> (Option<String>, String) {
    let holds = |row: &Row, (column, _, value): &(&str, &str, i64)| {
        number(row, column).is_some_and(|max| max >= *value)
    };
    let describe = |(_, word, value): &(&str, &str, i64)| format!("{word} {value}");
    let Some(at) = rows.iter().position(|(_, r)| limits.iter().all(|l| holds(r, l))) else {
        let failed = rows.last().and_then(|(_, r)| limits.iter().find(|l| !holds(r, l)));
        return (None, failed.map_or_else(String::new, describe));
    };
    let because = match at.checked_sub(1).map(|before| rows[before].1) {
        Some(before) => limits.iter().find(|l| !holds(before, l)).map_or_else(String::new, describe),
        // Every release in the table loads it: the floor is the table's.
        None => "the oldest release this matrix knows".into(),
    };
    (Some(rows[at].0.raw().to_string()), because)
}

pub fn needs(model: &ModelFacts, matrix: &Matrix) -> Vec<Need> {
    let opset = model.opsets.get("ai.onnx").copied();
    let mut out = Vec::new();
    let ort = rows(matrix, "onnxruntime-releases");
    if !ort.is_empty() {
        let mut limits = vec![("max_ir", "IR", model.ir_version)];
        limits.extend(opset.map(|o| ("max_opset", "opset", o)));
        let (at_least, because) = floor(&ort, &limits);
        out.push(Need { package: "onnxruntime".into(), at_least, because });
    }
    let trt = rows(matrix, "tensorrt-releases");
    if let Some(opset) = opset.filter(|_| !trt.is_empty()) {
        let (mut at_least, mut because) = floor(&trt, &[("max_opset", "opset", opset)]);
        // From there on, the first release whose parser imports every operator.
        let ops: Vec<&String> = model.ops.get("ai.onnx").map(|o| o.keys().collect()).unwrap_or_default();
        let unsupported = rows(matrix, "tensorrt-onnx-ops");
        if let Some(from) = at_least.as_deref().map(Ver::new) {
            let missing = |row: &Row| -> Vec<String> {
                let list = row.values.get("unsupported").map(String::as_str).unwrap_or("");
                let list: Vec<&str> = list.split_whitespace().collect();
                ops.iter().filter(|o| list.contains(&o.as_str())).map(|o| o.to_string()).collect()
            };
            let mut last_missing: Vec<String> = Vec::new();
            for (release, row) in unsupported.iter().filter(|(v, _)| v.parsed() >= from.parsed()) {
                let lacking = missing(row);
                if lacking.is_empty() {
                    if !last_missing.is_empty() && release.parsed() > from.parsed() {
                        at_least = Some(release.raw().to_string());
                        because = format!("operator {}", last_missing.join(", "));
                    }
                    break;
                }
                last_missing = lacking;
                at_least = None;
                because =
                    format!("operator {} (no release in this matrix imports it)", last_missing.join(", "));
            }
        }
        out.push(Need { package: "tensorrt".into(), at_least, because });
    }
    let onnx = rows(matrix, "onnx-releases");
    if !onnx.is_empty() {
        let (at_least, because) = floor(&onnx, &[("ir", "IR", model.ir_version)]);
        out.push(Need { package: "onnx".into(), at_least, because });
    }
    out
}
