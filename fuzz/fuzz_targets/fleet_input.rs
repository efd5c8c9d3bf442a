//! Arbitrary bytes as one node's report handed to `fleet`: aggregating
//! never panics, and the fleet renders in every format.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use onnx_doctor::matrix::Matrix;

static MATRIX: OnceLock<Matrix> = OnceLock::new();
static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let matrix = MATRIX.get_or_init(|| Matrix::load(&[]).expect("the embedded matrix loads"));
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"));
    let node = dir.path().join("node.json");
    std::fs::write(&node, data).expect("the report written");
    let fleet = onnx_doctor::fleet::aggregate(&[node], matrix);
    let _ = onnx_doctor::fleet::render_text(&fleet);
    let _ = onnx_doctor::fleet::render_markdown(&fleet);
    let _ = onnx_doctor::fleet::render_html(&fleet);
});
