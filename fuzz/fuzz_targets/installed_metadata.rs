//! Arbitrary bytes as the METADATA of an installed package: its
//! `Requires-Dist` lines (markers included) are judged against an
//! environment and planned into fixes without a panic, and the same text
//! read through the site directory (`--fast`) reads without one.
#![no_main]

use std::collections::BTreeSet;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use onnx_doctor::matrix::Matrix;
use onnx_doctor::snapshot::{Probed, Snapshot};

static MATRIX: OnceLock<Matrix> = OnceLock::new();
static SITE: OnceLock<tempfile::TempDir> = OnceLock::new();

const SNAPSHOT_JSON: &str = r#"{
  "schema_version": 1, "probed_by": "fuzz", "mode": "fast",
  "pythons": [{"executable": "/env/bin/python", "source": "flag", "version": {"found": "3.11.9"},
               "kind": "venv", "interpreter": {"not_evaluated": "fuzz"}, "site_dirs": [],
               "distributions": {"found": [
                 {"name": "onnx", "version": "1.17.0", "location": "/env", "requires": []},
                 {"name": "numpy", "version": "2.1.0", "location": "/env"},
                 {"name": "protobuf", "version": "3.20.3", "location": "/env"}]},
               "imports": []}],
  "system": {"not_evaluated": "fuzz"}, "nvidia": {"not_evaluated": "fuzz"}, "expectations": []
}"#;

fuzz_target!(|data: &[u8]| {
    let matrix = MATRIX.get_or_init(|| Matrix::load(&[]).expect("the embedded matrix loads"));
    let text = String::from_utf8_lossy(data);
    let mut snapshot: Snapshot = serde_json::from_str(SNAPSHOT_JSON).expect("the fuzz snapshot parses");
    if let Probed::Found(dists) = &mut snapshot.pythons[0].distributions {
        dists[0].requires = text.lines().map(str::to_string).collect();
    }
    let _ = onnx_doctor::check::check(&snapshot, matrix);

    let site = SITE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(dir.path().join("onnx.egg-info")).expect("a dist-info");
        dir
    });
    let info = site.path().join("onnx.egg-info");
    std::fs::write(info.join("PKG-INFO"), data).expect("PKG-INFO written");
    std::fs::write(info.join("requires.txt"), data).expect("requires.txt written");
    let watched: BTreeSet<String> = ["onnx".to_string()].into();
    let _ = onnx_doctor::probe::dists::read_distributions(&[site.path().to_path_buf()], &watched);
});
