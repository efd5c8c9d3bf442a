//! Arbitrary bytes as a support-ticket paste: import and judge never panic,
//! and no renderer prints a control character from it raw.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use onnx_doctor::matrix::Matrix;
use onnx_doctor::report::text::{Detail, Look, Paint};
use onnx_doctor::report::{Report, ci, markdown, text};

static MATRIX: OnceLock<Matrix> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let matrix = MATRIX.get_or_init(|| Matrix::load(&[]).expect("the embedded matrix loads"));
    let pasted = String::from_utf8_lossy(data);
    let snapshot = onnx_doctor::import::import(&pasted, matrix);
    let judgement = onnx_doctor::check::check(&snapshot, matrix);
    let report = Report::new(snapshot, matrix, judgement);
    let look =
        Look { paint: Paint(false), detail: Detail::Verbose, width: 100, verbose_command: "onnx-doctor -v" };
    for (name, out) in [
        ("text", text::render(&report, matrix, look, 1)),
        ("markdown", markdown::render(&report, matrix, 1)),
        ("github", ci::github(&report)),
    ] {
        let raw = out.chars().find(|c| onnx_doctor::escape::is_hidden(*c));
        assert!(raw.is_none(), "{name} prints {raw:?} raw");
    }
});
