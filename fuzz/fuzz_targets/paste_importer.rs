//! Arbitrary bytes as a support-ticket paste: import and judge never panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use onnx_doctor::matrix::Matrix;

static MATRIX: OnceLock<Matrix> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let matrix = MATRIX.get_or_init(|| Matrix::load(&[]).expect("the embedded matrix loads"));
    let text = String::from_utf8_lossy(data);
    let snapshot = onnx_doctor::import::import(&text, matrix);
    let _ = onnx_doctor::check::check(&snapshot, matrix);
});
