//! The first run of a new user, on the Pythons new users really have: a
//! bare Python, a venv without pip, a uv environment, a venv that sees the
//! system's packages, a conda-like prefix, a torch-only and an
//! onnxruntime-only environment. Each is healthy, so each must get exactly
//! that verdict: no error, no warning, exit 0. A false alarm here is the
//! first thing a user sees of the doctor.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;

use serde_json::Value;
use support::*;

/// The full check of one interpreter, with no NVIDIA driver on the machine.
/// The verdict is what is tested, not the speed: an import gets longer
/// than the default 30 s, since importing torch while the other tests of
/// this file import theirs can take that long on a two-core machine.
fn first_run(python: &Path) -> (i32, Value) {
    let out = doctor()
        .args([
            "--format",
            "json",
            "--timeout",
            "120",
            "--nvml-lib",
            "/nonexistent/libnvidia-ml.so.1",
            "--python",
        ])
        .arg(python)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

/// No error and no warning, exit 0, and the verdict a healthy machine gets.
fn assert_healthy(what: &str, python: &Path) -> Value {
    let (code, report) = first_run(python);
    let bad: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| format!("{}: {}", f["code"], f["message"]))
        .collect();
    assert!(bad.is_empty(), "{what}: {bad:#?}");
    assert_eq!(code, 0, "{what}");
    let verdict = report["summary"]["verdict"].as_str().unwrap();
    assert!(["ok", "info"].contains(&verdict), "{what}: verdict {verdict}");
    let env = &report["snapshot"]["pythons"][0];
    assert!(env["interpreter"]["found"].is_object(), "{what}: the interpreter ran: {:#}", env["interpreter"]);
    report
}

fn import_state<'a>(report: &'a Value, package: &str) -> &'a str {
    import(report, package).and_then(|i| i["status"]["state"].as_str()).unwrap_or("absent")
}

#[test]
fn a_venv_without_pip_is_healthy() {
    let env = venv_made("without-pip", &["--without-pip"], &[]);
    assert_healthy("python -m venv --without-pip", &env.join("bin/python"));
}

#[test]
fn a_venv_that_sees_the_system_packages_is_healthy() {
    let env = venv_made("system-site", &["--system-site-packages"], &[]);
    assert_healthy("python -m venv --system-site-packages", &env.join("bin/python"));
}

#[test]
fn the_systems_own_python3_is_healthy() {
    // Debian's python3 with dist-packages, where the machine has one.
    let system = Path::new("/usr/bin/python3");
    if system.exists() {
        assert_healthy("/usr/bin/python3", system);
    }
}

#[test]
fn a_uv_environment_without_pip_gets_uv_fixes() {
    let env = uv_venv("uv-onnx", &["onnx", "onnxruntime"]);
    let report = assert_healthy("uv venv with onnx and onnxruntime", &env.join("bin/python"));
    assert_eq!(report["snapshot"]["pythons"][0]["kind"], "uv");
    assert_eq!(import_state(&report, "onnxruntime"), "ok");
    // A broken pair in a uv environment is fixed with uv's pip, not `python -m pip`.
    let broken = uv_venv("uv-ort117-numpy2", &["onnxruntime==1.17.1", "numpy>=2"]);
    let (_, report) = first_run(&broken.join("bin/python"));
    let fix = finding(&report, "onnxruntime-built-against-numpy1")["fixes"][0].as_str().unwrap().to_string();
    assert!(fix.starts_with("uv pip install --python "), "{fix}");
}

#[test]
fn a_conda_like_prefix_is_healthy_and_read_as_conda() {
    let env = venv_made("conda-like", &[], &[&["onnxruntime"]]);
    std::fs::create_dir_all(env.join("conda-meta")).unwrap();
    let report = assert_healthy("a prefix with conda-meta", &env.join("bin/python"));
    assert_eq!(report["snapshot"]["pythons"][0]["kind"], "conda");
}

#[test]
fn an_onnxruntime_only_environment_is_healthy_and_its_trial_loads() {
    let env = venv("ort-only", &[&["onnxruntime"]]);
    let report = assert_healthy("onnxruntime only", &env.join("bin/python"));
    assert_eq!(import_state(&report, "onnxruntime"), "ok");
    assert_eq!(import_state(&report, "onnx"), "not_installed");
    assert_eq!(import_state(&report, "torch"), "not_installed");
    let ort = import(&report, "onnxruntime").unwrap();
    assert!(ort["facts"]["trial_providers_working"].is_array(), "{ort:#}");
}

/// `pip install torch`, and nothing else: the CUDA build from the package
/// registry with its nvidia-* wheels, on a machine without a GPU.
#[test]
fn a_torch_only_environment_is_healthy() {
    let env = torch_venv();
    let report = assert_healthy("pip install torch", &env.join("bin/python"));
    assert_eq!(import_state(&report, "torch"), "ok");
    // torch loads its own wheels' CUDA libraries: nothing is missing.
    let codes = finding_codes(&report);
    assert!(!codes.contains(&"torch-cuda-library-cannot-load".to_string()), "{codes:?}");
}
