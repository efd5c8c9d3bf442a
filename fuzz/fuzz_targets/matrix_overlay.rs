//! Arbitrary bytes as a team's `--matrix` overlay file: loading never
//! panics, and a matrix that loads judges a snapshot without panicking.
//! Seed the corpus with the shipped files: `mkdir -p corpus/matrix_overlay
//! && cp ../matrix/*.yaml corpus/matrix_overlay/`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use onnx_doctor::matrix::Matrix;
use onnx_doctor::snapshot::Snapshot;

static SNAPSHOT: OnceLock<Snapshot> = OnceLock::new();

const SNAPSHOT_JSON: &str = r#"{
  "schema_version": 1, "probed_by": "fuzz", "mode": "full",
  "system": {"found": {"os": {"found": "Ubuntu 24.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                       "glibc": {"found": "2.39"}, "container": null, "wsl": false}},
  "pythons": [{"executable": "/env/bin/python", "source": "flag", "version": {"found": "3.11.9"},
               "kind": "venv", "interpreter": {"not_evaluated": "fuzz"}, "site_dirs": [],
               "distributions": {"found": [
                 {"name": "torch", "version": "2.5.1+cu124", "location": "/env"},
                 {"name": "torchvision", "version": "0.20.1+cu124", "location": "/env"},
                 {"name": "onnx", "version": "1.17.0", "location": "/env"},
                 {"name": "onnxruntime-gpu", "version": "1.20.1", "location": "/env"},
                 {"name": "numpy", "version": "2.1.0", "location": "/env"},
                 {"name": "protobuf", "version": "5.28.3", "location": "/env"}]},
               "imports": [{"package": "onnx", "module": "onnx", "status": {"state": "ok"},
                            "facts": {"ir_version": 10, "max_opset": 22}}]}],
  "nvidia": {"found": {"nvml": {"state": "ok"},
                       "driver": {"found": {"version": "550.54.14", "max_cuda": "12.4", "source": "nvml"}},
                       "kernel_module": {"found": "550.54.14"},
                       "gpus": {"found": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9",
                                           "architecture": "Ada", "memory_mib": 24564, "uuid": null}]}}},
  "expectations": []
}"#;

fuzz_target!(|data: &[u8]| {
    let snapshot =
        SNAPSHOT.get_or_init(|| serde_json::from_str(SNAPSHOT_JSON).expect("the fuzz snapshot parses"));
    let text = String::from_utf8_lossy(data);
    if let Ok(matrix) = Matrix::load_with_overlay_text("fuzz.yaml", &text) {
        let _ = onnx_doctor::check::check(snapshot, &matrix);
    }
});
