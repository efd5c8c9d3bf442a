//! What an interactive session shows: an expression at Python's or
//! IPython's prompt, and its value on the line after it.
//!
//! ```text
//! >>> import torch
//! >>> torch.__version__, torch.version.cuda
//! ('2.1.0+cpu', None)
//! >>> torch.cuda.is_available()
//! False
//! ```
//!
//! A value printed by the interpreter is as sure as a `pip list` row: the
//! module imported, at that version. Only a few expressions are read, each
//! of which names one fact; anything else at a prompt is left to the
//! other readers.

use super::{Collector, Key};

/// What one expression at the prompt asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// `X.__version__` of the module a distribution installs.
    Version(Module),
    /// `torch.version.cuda`: the CUDA torch was built with, `None` for the CPU build.
    TorchCuda,
    /// `torch.cuda.is_available()`.
    CudaAvailable,
    /// Anything else: its value is not read, but it keeps its place in a tuple.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Module {
    Dist(&'static str),
    /// `onnxruntime`: a release of whichever onnxruntime package is installed.
    OnnxRuntime,
}

/// The expressions of a prompt line, at most this many.
const MAX_ASKED: usize = 6;

/// The module names and the usual aliases (`import onnxruntime as ort`).
const MODULES: &[(&str, Module)] = &[
    ("torch", Module::Dist("torch")),
    ("torchvision", Module::Dist("torchvision")),
    ("torchaudio", Module::Dist("torchaudio")),
    ("onnx", Module::Dist("onnx")),
    ("onnxruntime", Module::OnnxRuntime),
    ("ort", Module::OnnxRuntime),
    ("rt", Module::OnnxRuntime),
    ("numpy", Module::Dist("numpy")),
    ("np", Module::Dist("numpy")),
    ("tensorrt", Module::Dist("tensorrt")),
    ("trt", Module::Dist("tensorrt")),
    ("google.protobuf", Module::Dist("protobuf")),
    ("protobuf", Module::Dist("protobuf")),
];

/// The expressions a prompt line evaluates, when it is one (`>>> `,
/// `In [3]: `); `print(a, b)` and a tuple `a, b` alike. Those not read
/// keep their place, and a single one's value may still be a symptom
/// (`ort.get_device()` and `'CPU'`).
pub(crate) fn prompt(line: &str) -> Option<Vec<Asked>> {
    let expr =
        line.trim_start().strip_prefix(">>>").or_else(|| ipython_prompt(line.trim_start(), "In"))?.trim();
    let expr = expr.strip_prefix("print(").and_then(|e| e.strip_suffix(')')).unwrap_or(expr).trim();
    let expr = expr.strip_prefix('(').and_then(|e| e.strip_suffix(')')).unwrap_or(expr);
    let asked: Vec<Asked> = expr.split(',').map(|e| asked(e.trim())).collect();
    (!expr.is_empty() && asked.len() <= MAX_ASKED).then_some(asked)
}

/// `In [3]: rest` → `rest`; likewise `Out[3]: rest`.
fn ipython_prompt<'l>(line: &'l str, word: &str) -> Option<&'l str> {
    let rest = line.strip_prefix(word)?.trim_start().strip_prefix('[')?;
    let close = rest.find(']')?;
    rest[..close].chars().all(|ch| ch.is_ascii_digit()).then_some(())?;
    rest[close + 1..].strip_prefix(':')
}

fn asked(expr: &str) -> Asked {
    match expr {
        "torch.version.cuda" => Asked::TorchCuda,
        "torch.cuda.is_available()" => Asked::CudaAvailable,
        _ => expr
            .strip_suffix(".__version__")
            .and_then(|m| MODULES.iter().find(|(name, _)| *name == m))
            .map_or(Asked::Other, |(_, module)| Asked::Version(*module)),
    }
}

/// The values of the line after a prompt, one per expression asked, when
/// the line is such a value and their count matches: `'2.1.0+cpu'`,
/// `Out[2]: ('2.1.0', None)`, `2.1.0+cpu None` (print's).
pub(crate) fn values(line: &str, asked: &[Asked]) -> Option<Vec<String>> {
    if line.starts_with(">>>") || line.starts_with("...") || ipython_prompt(line, "In").is_some() {
        return None;
    }
    let line = ipython_prompt(line, "Out").unwrap_or(line).trim();
    let line = line.strip_prefix('(').and_then(|l| l.strip_suffix(')')).unwrap_or(line);
    let values: Vec<String> = line
        .split([',', ' ', '\t'])
        .filter(|v| !v.is_empty())
        .map(|v| v.trim_matches(['\'', '"']).to_string())
        .collect();
    (values.len() == asked.len()).then_some(values)
}

/// Records what the values say.
pub(crate) fn record(asked: &[Asked], values: &[String], c: &mut Collector) {
    for (a, v) in asked.iter().zip(values) {
        match a {
            Asked::Version(Module::Dist(name)) => c.dist(name, v),
            Asked::Version(Module::OnnxRuntime) => {
                c.any_onnxruntime(v);
                c.dist("onnxruntime", v);
            }
            Asked::TorchCuda if v == "None" => c.cpu_torch_marker(),
            Asked::TorchCuda => c.fact(Key::TorchCuda, v),
            Asked::CudaAvailable if v == "True" || v == "False" => c.fact(Key::TorchCudaAvailable, v),
            Asked::CudaAvailable | Asked::Other => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_names_what_it_asks_in_order() {
        assert_eq!(
            prompt(">>> torch.__version__, torch.version.cuda"),
            Some(vec![Asked::Version(Module::Dist("torch")), Asked::TorchCuda])
        );
        assert_eq!(prompt("In [3]: print(ort.__version__)"), Some(vec![Asked::Version(Module::OnnxRuntime)]));
        assert_eq!(prompt(">>> torch.cuda.is_available()"), Some(vec![Asked::CudaAvailable]));
        assert_eq!(prompt(">>> import torch"), Some(vec![Asked::Other]));
        assert_eq!(prompt(">>>"), None);
        assert_eq!(prompt("torch.__version__"), None);
        assert_eq!(prompt("In [x]: torch.__version__"), None);
    }

    #[test]
    fn values_are_read_only_where_they_answer_every_expression() {
        let two = [Asked::Version(Module::Dist("torch")), Asked::TorchCuda];
        assert_eq!(values("('2.1.0+cpu', None)", &two), Some(vec!["2.1.0+cpu".into(), "None".into()]));
        assert_eq!(values("2.1.0+cpu None", &two), Some(vec!["2.1.0+cpu".into(), "None".into()]));
        assert_eq!(
            values("Out[4]: ('2.0.1+cu118', '11.8')", &two),
            Some(vec!["2.0.1+cu118".into(), "11.8".into()])
        );
        assert_eq!(values("'2.1.0+cpu'", &two), None);
        assert_eq!(values(">>> torch.version.cuda", &two[1..]), None);
    }
}
