//! What a model needs: the oldest release of each runtime, in the matrix's
//! tables, that can load it, and what sets that floor.
//!
//! For onnxruntime: the model's IR version and default-domain opset
//! against `onnxruntime-releases`. For TensorRT's ONNX parser: the opset
//! against `tensorrt-releases`, then the operators its parser cannot import
//! (`tensorrt-onnx-ops`), then the shape operands it takes only as
//! constants (`tensorrt-parser-constants`). For the onnx package: the IR
//! version it reads (`onnx-releases`). A release is the lower bound of a
//! table row.

use serde::{Deserialize, Serialize};

use crate::matrix::{Kernel, Matrix, ProviderKernels, Row};
use crate::snapshot::model::ModelFacts;
use crate::version::Ver;

/// The provider every onnxruntime build has.
pub(crate) const CPU: &str = "CPUExecutionProvider";
pub(crate) const CUDA: &str = "CUDAExecutionProvider";

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

pub(crate) fn needs(model: &ModelFacts, matrix: &Matrix) -> Vec<Need> {
    let opset = model.opsets.get("ai.onnx").copied();
    let mut out = Vec::new();
    let ort = rows(matrix, "onnxruntime-releases");
    if !ort.is_empty() {
        let mut limits = vec![("max_ir", "IR", model.ir_version)];
        limits.extend(opset.map(|o| ("max_opset", "opset", o)));
        let (mut at_least, mut because) = floor(&ort, &limits);
        // The operators can raise that floor: the first release whose CPU
        // provider runs them all (the CPU provider takes any node another
        // provider does not).
        if let Some((kernels_from, why)) = kernel_floor(model, matrix, "onnxruntime", CPU) {
            let later = match (&at_least, &kernels_from) {
                (Some(a), Some(k)) => Ver::new(k.as_str()).parsed() > Ver::new(a.as_str()).parsed(),
                (Some(_), None) => true,
                (None, _) => false,
            };
            if later {
                (at_least, because) = (kernels_from, why);
            }
        }
        out.push(Need { package: "onnxruntime".into(), at_least, because });
    }
    out.extend(tensorrt_need(model, matrix));
    let onnx = rows(matrix, "onnx-releases");
    if !onnx.is_empty() {
        let (at_least, because) = floor(&onnx, &[("ir", "IR", model.ir_version)]);
        out.push(Need { package: "onnx".into(), at_least, because });
    }
    out
}

/// The oldest TensorRT whose ONNX parser takes the model: its opset, then
/// its operators, then the shape operands it computes at run time.
fn tensorrt_need(model: &ModelFacts, matrix: &Matrix) -> Option<Need> {
    let trt = rows(matrix, "tensorrt-releases");
    let opset = model.opsets.get("ai.onnx").copied().filter(|_| !trt.is_empty())?;
    let (mut at_least, mut because) = floor(&trt, &[("max_opset", "opset", opset)]);
    // From there on, the first release whose parser imports every
    // operator, then the first that takes every shape operand the model
    // computes at run time.
    let ops: Vec<&str> =
        model.ops.get("ai.onnx").map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    let operands: Vec<&str> = model.shape_operands.iter().map(|o| o.operand.as_str()).collect();
    for (table, column, items, what) in [
        ("tensorrt-onnx-ops", "unsupported", &ops, "operator {}"),
        ("tensorrt-parser-constants", "needs_constant", &operands, "{} computed at run time"),
    ] {
        let Some(from) = at_least.as_deref().map(Ver::new) else { break };
        let Some((release, clash)) = first_without(matrix, table, column, items, &from) else { continue };
        because = what.replace("{}", &clash.join(", "));
        if release.is_none() {
            because += " (no release in this matrix imports it)";
        }
        at_least = release;
    }
    Some(Need { package: "tensorrt".into(), at_least, because })
}

/// From the row of `table` that holds `from` on, the first whose `column`
/// lists none of `items`, and what the row before it listed. None when the
/// row holding `from` already lists none; a release of None when no row does.
fn first_without(
    matrix: &Matrix,
    table: &str,
    column: &str,
    items: &[&str],
    from: &Ver,
) -> Option<(Option<String>, Vec<String>)> {
    let rows = rows(matrix, table);
    let start = rows.iter().rposition(|(v, _)| v.parsed() <= from.parsed()).unwrap_or(0);
    let mut clash: Vec<String> = Vec::new();
    for (release, row) in &rows[start..] {
        let listed = row.values.get(column).map(String::as_str).unwrap_or("");
        let hits: Vec<String> = items
            .iter()
            .filter(|i| listed.split_whitespace().any(|l| l == **i))
            .map(|i| i.to_string())
            .collect();
        if hits.is_empty() {
            return (!clash.is_empty()).then(|| (Some(release.raw().to_string()), clash));
        }
        clash = hits;
    }
    (!clash.is_empty()).then_some((None, clash))
}

/// The model's operators, each with the domain and the opset it is read
/// at, for the domains `kernels` has tables for.
fn model_ops<'m>(model: &'m ModelFacts, kernels: &ProviderKernels) -> Vec<(&'m str, &'m str, i64)> {
    let mut out = Vec::new();
    for (domain, ops) in &model.ops {
        let Some(&opset) = model.opsets.get(domain) else { continue };
        if !kernels.knows_domain(domain) {
            continue;
        }
        out.extend(ops.keys().map(|op| (domain.as_str(), op.as_str(), opset)));
    }
    out
}

/// The operator's since version at `opset`, from every kernel range and
/// function body the matrix knows of it.
fn since_version(
    matrix: &Matrix,
    all: &[&ProviderKernels],
    domain: &str,
    op: &str,
    opset: i64,
) -> Option<i64> {
    ProviderKernels::since_version(all, matrix.function_versions(domain, op), domain, op, opset)
}

/// `LayerNormalization-17`, `com.microsoft.FusedConv-1`.
fn op_label(domain: &str, op: &str, version: i64) -> String {
    if domain == "ai.onnx" { format!("{op}-{version}") } else { format!("{domain}.{op}-{version}") }
}

/// One operator of the model as the kernel tables see it: the version
/// onnxruntime would look a kernel up by, and its label.
struct KernelOp<'m> {
    domain: &'m str,
    op: &'m str,
    since: Option<i64>,
    label: String,
}

/// `provider`'s table for `runtime`, and the model's operators it covers,
/// without those whose schema has a function body (onnxruntime runs the
/// body where it has no kernel) and those it loads as initializers.
fn kernel_ops<'a>(
    model: &'a ModelFacts,
    matrix: &'a Matrix,
    runtime: &str,
    provider: &str,
) -> Option<(&'a ProviderKernels, Vec<KernelOp<'a>>)> {
    let all: Vec<&ProviderKernels> =
        matrix.operator_kernels.iter().filter(|k| k.runtime == runtime).collect();
    let kernels = *all.iter().find(|k| k.provider == provider)?;
    let ops = model_ops(model, kernels)
        .into_iter()
        .filter(|&(domain, op, _)| !matrix.is_initializer_op(domain, op))
        .filter_map(|(domain, op, opset)| {
            let since = since_version(matrix, &all, domain, op, opset);
            let function = since.is_some_and(|s| matrix.is_function_op(domain, op, s));
            let label = op_label(domain, op, since.unwrap_or(opset));
            (!function).then_some(KernelOp { domain, op, since, label })
        })
        .collect();
    Some((kernels, ops))
}

/// The operators of the model that `release` of `runtime` has no kernel
/// for on `provider`, as `LayerNormalization-17`.
pub(crate) fn lacking(
    model: &ModelFacts,
    matrix: &Matrix,
    runtime: &str,
    provider: &str,
    release: &Ver,
) -> Vec<String> {
    let Some((kernels, ops)) = kernel_ops(model, matrix, runtime, provider) else { return Vec::new() };
    ops.into_iter()
        .filter(|o| kernels.kernel(release, o.domain, o.op, o.since) == Kernel::Lacks)
        .map(|o| o.label)
        .collect()
}

/// The first release read whose `provider` runs every operator named in
/// `labels` (as [`lacking`] names them); None when one of them has no
/// kernel in any release read.
pub(crate) fn first_running(
    model: &ModelFacts,
    matrix: &Matrix,
    runtime: &str,
    provider: &str,
    labels: &[String],
) -> Option<String> {
    let (kernels, ops) = kernel_ops(model, matrix, runtime, provider)?;
    let mut at = None;
    for o in ops.iter().filter(|o| labels.contains(&o.label)) {
        at = at.max(Some(kernels.first_with(o.domain, o.op, o.since)?));
    }
    kernels.releases.get(at?).map(|r| r.release.clone())
}

/// The first release read whose `provider` runs every operator of the
/// model, and the operator that sets it; None when every release read
/// does (the floor is then the IR's and opset's).
fn kernel_floor(
    model: &ModelFacts,
    matrix: &Matrix,
    runtime: &str,
    provider: &str,
) -> Option<(Option<String>, String)> {
    let (kernels, ops) = kernel_ops(model, matrix, runtime, provider)?;
    let mut worst: Option<(usize, String)> = None;
    for o in ops {
        let at = kernels.first_with(o.domain, o.op, o.since).unwrap_or(usize::MAX);
        if at > 0 && worst.as_ref().is_none_or(|(w, _)| at > *w) {
            worst = Some((at, o.label));
        }
    }
    let (at, label) = worst?;
    Some(match kernels.releases.get(at) {
        Some(r) => (Some(r.release.clone()), format!("operator {label}")),
        None => {
            let last = kernels.releases.last().map_or("", |r| r.release.as_str());
            let short = provider.trim_end_matches("ExecutionProvider");
            (None, format!("operator {label} (no {short} kernel up to {last})"))
        }
    })
}
