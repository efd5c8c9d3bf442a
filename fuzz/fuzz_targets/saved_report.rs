//! Arbitrary bytes as a saved snapshot or report (`--snapshot`, a report
//! pasted into `diagnose`): reading it never panics, and one that reads is
//! judged and rendered without a panic and without a control character
//! printed raw. Seed it with the doctor's own JSON reports:
//! `mkdir -p corpus/saved_report && for f in ../tests/fixtures/snapshots/*.json; do cp "$f" corpus/saved_report/; done`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use onnx_doctor::matrix::Matrix;
use onnx_doctor::report::text::{Detail, Look, Paint};
use onnx_doctor::report::{Report, ci, markdown, text};
use onnx_doctor::snapshot::Snapshot;

static MATRIX: OnceLock<Matrix> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let matrix = MATRIX.get_or_init(|| Matrix::load(&[]).expect("the embedded matrix loads"));
    let Ok(snapshot) = Snapshot::from_saved(&String::from_utf8_lossy(data)) else { return };
    let judgement = onnx_doctor::check::check(&snapshot, matrix);
    let report = Report::new(snapshot, matrix, judgement);
    let look =
        Look { paint: Paint(false), detail: Detail::Verbose, width: 100, verbose_command: "onnx-doctor -v" };
    for (name, out) in [
        ("text", text::render(&report, matrix, look, 1)),
        ("markdown", markdown::render(&report, matrix, 1)),
        ("github", ci::github(&report)),
        ("junit", ci::junit(&report, onnx_doctor::matrix::Severity::Error)),
    ] {
        let raw = out.chars().find(|c| onnx_doctor::escape::is_hidden(*c));
        assert!(raw.is_none(), "{name} prints {raw:?} raw");
    }
});
