//! Rules judged on hand-written snapshots: each fires on the broken case and
//! stays quiet on its close neighbour. No Python is run: `--snapshot`
//! re-checks saved facts, which is exactly what a support ticket does.

mod support;

use serde_json::{Value, json};
use support::*;

/// A snapshot of one environment with these distributions (name, version)
/// and imports that all went fine.
fn snapshot(python: &str, dists: &[(&str, &str)]) -> Value {
    let distributions: Vec<Value> = dists
        .iter()
        .map(|(n, v)| json!({"name": n, "version": v, "location": "/env/lib/python3/site-packages"}))
        .collect();
    json!({
        "schema_version": 1,
        "probed_by": "onnx-doctor test",
        "mode": "fast",
        "system": {"found": {"os": {"found": "Ubuntu 22.04.4 LTS"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                             "glibc": {"found": "2.35"}, "container": null, "wsl": false}},
        "pythons": [{
            "executable": "/env/bin/python",
            "source": "flag",
            "version": {"found": python},
            "kind": "venv",
            "interpreter": {"not_evaluated": "--fast: the interpreter was not run"},
            "site_dirs": ["/env/lib/python3/site-packages"],
            "distributions": {"found": distributions},
            "imports": []
        }]
    })
}

fn check(snap: &Value) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snap.json");
    std::fs::write(&path, snap.to_string()).unwrap();
    let out = doctor().args(["--format", "json", "--snapshot"]).arg(&path).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

fn fires(python: &str, dists: &[(&str, &str)], code: &str) -> Value {
    let (_, report) = check(&snapshot(python, dists));
    finding(&report, code).clone()
}

fn quiet(python: &str, dists: &[(&str, &str)], code: &str) {
    let (_, report) = check(&snapshot(python, dists));
    assert!(!finding_codes(&report).contains(&code.to_string()), "{code} fired: {:#}", report["findings"]);
    let outcome = report["outcomes"].as_array().unwrap().iter().find(|o| o["code"] == code).cloned();
    if let Some(o) = outcome {
        assert_ne!(o["status"], "not_evaluated", "{o}");
    }
}

#[test]
fn torchvision_must_be_the_release_paired_with_torch() {
    let f = fires(
        "3.11.9",
        &[("torch", "2.3.1"), ("torchvision", "0.17.2")],
        "torchvision-not-paired-with-torch",
    );
    assert_eq!(f["fixes"][0], "/env/bin/python -m pip install \"torchvision==0.18.*\"");
    quiet("3.11.9", &[("torch", "2.3.1"), ("torchvision", "0.18.1")], "torchvision-not-paired-with-torch");
    quiet("3.7.16", &[("torch", "1.3.1"), ("torchvision", "0.4.2")], "torchvision-not-paired-with-torch");
    fires("3.7.16", &[("torch", "1.3.1"), ("torchvision", "0.4.1")], "torchvision-not-paired-with-torch");
}

#[test]
fn torch_and_torchvision_must_come_from_the_same_cuda_variant() {
    let f = fires(
        "3.10.14",
        &[("torch", "2.1.2+cu121"), ("torchvision", "0.16.2+cu118")],
        "torchvision-cuda-variant-differs",
    );
    assert!(f["fixes"][0].as_str().unwrap().contains("torchvision==0.16.2+cu121"), "{f:#}");
    assert!(f["fixes"][0].as_str().unwrap().contains("/whl/cu121"), "{f:#}");
    quiet(
        "3.10.14",
        &[("torch", "2.1.2+cu121"), ("torchvision", "0.16.2+cu121")],
        "torchvision-cuda-variant-differs",
    );
}

#[test]
fn onnxruntime_and_onnxruntime_gpu_together_is_an_error() {
    let f = fires(
        "3.11.9",
        &[("onnxruntime", "1.20.1"), ("onnxruntime-gpu", "1.20.1")],
        "onnxruntime-cpu-and-gpu-both-installed",
    );
    // onnxruntime-gpu 1.20.1 was never published: the newest patch of 1.20 is.
    assert!(f["fixes"][0].as_str().unwrap().contains("\"onnxruntime-gpu~=1.20.1\""), "{f:#}");
    quiet("3.11.9", &[("onnxruntime-gpu", "1.20.1")], "onnxruntime-cpu-and-gpu-both-installed");
}

#[test]
fn old_onnx_under_protobuf_4_is_the_descriptors_error_and_new_onnx_is_not() {
    fires("3.9.19", &[("onnx", "1.10.2"), ("protobuf", "4.21.0")], "onnx-protobuf4-descriptors");
    quiet("3.9.19", &[("onnx", "1.10.2"), ("protobuf", "3.20.3")], "onnx-protobuf4-descriptors");
    quiet("3.9.19", &[("onnx", "1.12.0"), ("protobuf", "4.21.0")], "onnx-protobuf4-descriptors");
}

#[test]
fn numpy_2_rules_respect_their_first_fixed_release() {
    fires("3.11.9", &[("onnxruntime-gpu", "1.18.1"), ("numpy", "2.0.0")], "onnxruntime-built-against-numpy1");
    quiet("3.11.9", &[("onnxruntime-gpu", "1.19.0"), ("numpy", "2.0.0")], "onnxruntime-built-against-numpy1");
    quiet("3.11.9", &[("onnxruntime", "1.18.1"), ("numpy", "1.26.4")], "onnxruntime-built-against-numpy1");
    fires("3.11.9", &[("torch", "2.2.2"), ("numpy", "2.1.0")], "torch-built-against-numpy1");
    quiet("3.11.9", &[("torch", "2.3.0"), ("numpy", "2.1.0")], "torch-built-against-numpy1");
}

#[test]
fn a_python_outside_the_wheels_of_a_release_is_flagged() {
    let f = fires("3.12.4", &[("torch", "2.1.2")], "python-unsupported-by-torch");
    assert!(f["message"].as_str().unwrap().contains(">=3.8,<3.12"), "{f:#}");
    quiet("3.11.9", &[("torch", "2.1.2")], "python-unsupported-by-torch");
    fires("3.10.14", &[("onnxruntime", "1.24.1")], "python-unsupported-by-onnxruntime");
    quiet("3.11.9", &[("onnxruntime", "1.24.1")], "python-unsupported-by-onnxruntime");
}

#[test]
fn a_release_the_matrix_does_not_know_is_not_evaluated_rather_than_passed() {
    let (_, report) = check(&snapshot("3.11.9", &[("torch", "9.0.0"), ("torchvision", "9.15.0")]));
    let o = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["code"] == "torchvision-not-paired-with-torch")
        .unwrap()
        .clone();
    assert_eq!(o["status"], "not_evaluated");
    assert!(o["reason"].as_str().unwrap().contains("no row for torch 9.0.0"), "{o}");
}

#[test]
fn fail_on_warning_turns_warnings_into_a_failing_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snap.json");
    std::fs::write(&path, snapshot("3.11.9", &[("onnx", "1.16.2"), ("numpy", "2.1.0")]).to_string()).unwrap();
    let lenient = doctor().arg("--snapshot").arg(&path).output().unwrap();
    assert_eq!(lenient.status.code(), Some(0));
    let strict = doctor().args(["--fail-on", "warning", "--snapshot"]).arg(&path).output().unwrap();
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn declared_requirements_are_checked_like_pip_check_with_markers_evaluated() {
    let mut snap = snapshot("3.11.9", &[("onnx", "1.13.0"), ("protobuf", "4.21.0"), ("numpy", "1.26.4")]);
    snap["pythons"][0]["distributions"]["found"][0]["requires"] = json!([
        "numpy (>=1.16.6)",
        "protobuf (<4,>=3.20.2)",
        "typing-extensions (>=3.6.2.1); python_version < \"3.8\"",
        "pytest; extra == \"test\""
    ]);
    let (code, report) = check(&snap);
    assert_eq!(code, 0, "a declared-requirement mismatch is a warning");
    let f = finding(&report, "declared-requirement-unmet");
    assert_eq!(f["message"], "onnx 1.13.0 requires protobuf>=3.20.2, <4, but protobuf 4.21.0 is installed");
    assert_eq!(f["severity"], "warning");
    // Neither the marker-guarded nor the extra's requirement applies here.
    assert!(
        !finding_codes(&report).contains(&"declared-requirement-missing".to_string()),
        "{:#}",
        report["findings"]
    );

    snap["pythons"][0]["version"] = json!({"found": "3.7.16"});
    let (_, report) = check(&snap);
    let missing = finding(&report, "declared-requirement-missing");
    assert!(
        missing["message"].as_str().unwrap()
            == "onnx 1.13.0 requires what is not installed: typing-extensions>=3.6.2.1",
        "{missing:#}"
    );
}

#[test]
fn onnx_before_1_17_under_numpy_2_is_a_warning_and_1_17_is_not() {
    let f = fires("3.11.9", &[("onnx", "1.16.2"), ("numpy", "2.1.0")], "onnx-untested-with-numpy2");
    assert_eq!(f["severity"], "warning");
    quiet("3.11.9", &[("onnx", "1.17.0"), ("numpy", "2.1.0")], "onnx-untested-with-numpy2");
}

/// A snapshot whose probe imported onnx and torch with these runtime facts.
fn with_imports(dists: &[(&str, &str)], imports: Value) -> Value {
    let mut s = snapshot("3.11.9", dists);
    s["mode"] = json!("full");
    s["pythons"][0]["imports"] = imports;
    s
}

#[test]
fn onnx_defaults_newer_than_onnxruntime_are_warnings_with_the_matching_onnx_fix() {
    let imports = json!([{"package": "onnx", "module": "onnx", "status": {"state": "ok"},
                          "facts": {"ir_version": 11, "max_opset": 23}}]);
    let (_, r) = check(&with_imports(&[("onnx", "1.18.0"), ("onnxruntime", "1.20.1")], imports.clone()));
    let ir = finding(&r, "onnx-ir-newer-than-onnxruntime");
    assert_eq!(ir["fixes"][0], "/env/bin/python -m pip install \"onnx<1.17\"");
    finding(&r, "onnx-opset-newer-than-onnxruntime");
    let (_, r) = check(&with_imports(&[("onnx", "1.18.0"), ("onnxruntime", "1.23.0")], imports));
    assert!(
        !finding_codes(&r).iter().any(|c| c.starts_with("onnx-ir") || c.starts_with("onnx-opset")),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn torch_with_cudnn_9_next_to_an_onnxruntime_gpu_built_for_cudnn_8() {
    let imports = json!([{"package": "torch", "module": "torch", "status": {"state": "ok"},
                          "facts": {"version": "2.4.1", "cuda": "12.1", "cudnn_version": "9.1.0"}}]);
    let (_, r) = check(&with_imports(&[("torch", "2.4.1"), ("onnxruntime-gpu", "1.18.1")], imports.clone()));
    let f = finding(&r, "cudnn-major-differs-torch-onnxruntime");
    assert!(
        f["message"].as_str().unwrap().contains("cuDNN 9.1.0")
            && f["message"].as_str().unwrap().contains("cuDNN 8")
    );
    let (_, r) = check(&with_imports(&[("torch", "2.4.1"), ("onnxruntime-gpu", "1.20.1")], imports));
    assert!(!finding_codes(&r).contains(&"cudnn-major-differs-torch-onnxruntime".to_string()));
}

#[test]
fn a_second_copy_of_a_stack_package_further_down_the_path_is_reported() {
    let mut s = snapshot("3.11.9", &[("onnx", "1.12.0")]);
    s["pythons"][0]["distributions"]["found"][0]["shadowed"] =
        json!([{"version": "1.17.0", "location": "/env/lib/python3.11/site-packages"}]);
    let (_, r) = check(&s);
    let f = finding(&r, "distribution-shadowed");
    assert!(f["message"].as_str().unwrap().contains("hides onnx 1.17.0"), "{f:#}");
}

#[test]
fn a_machine_without_any_python_says_so() {
    let mut s = snapshot("3.11.9", &[]);
    s["pythons"] = json!([]);
    let (_, r) = check(&s);
    finding(&r, "no-python-found");
}

fn plan_for(report: &Value) -> Value {
    let plans = report["fix_plan"].as_array().cloned().unwrap_or_default();
    assert_eq!(plans.len(), 1, "{:#}", report["fix_plan"]);
    plans[0].clone()
}

#[test]
fn the_fixes_of_all_findings_form_one_consistent_set() {
    // Three rules want numpy<2 or a newer onnx; onnx>=1.17 would not load
    // its models on the onnxruntime 1.17 that stays, so numpy<2 wins for all.
    let (_, r) = check(&snapshot(
        "3.11.9",
        &[("onnxruntime", "1.17.3"), ("torch", "2.2.2"), ("onnx", "1.15.0"), ("numpy", "2.1.0")],
    ));
    for code in
        ["onnxruntime-built-against-numpy1", "torch-built-against-numpy1", "onnx-untested-with-numpy2"]
    {
        assert_eq!(finding(&r, code)["fixes"][0], "/env/bin/python -m pip install \"numpy<2\"", "{code}");
    }
    let plan = plan_for(&r);
    assert_eq!(plan["steps"], json!(["/env/bin/python -m pip install \"numpy<2\""]), "{plan:#}");
    assert!(plan.get("conflicts").is_none(), "{plan:#}");
}

#[test]
fn a_fix_that_breaks_a_package_the_plan_keeps_gives_way_to_the_next_one() {
    // A (hypothetical) in-house package needs numpy 2, so pinning numpy<2
    // would break it: upgrading onnxruntime is the consistent fix.
    let mut s =
        snapshot("3.11.9", &[("onnxruntime", "1.17.3"), ("numpy", "2.1.0"), ("team-models", "1.0.0")]);
    s["pythons"][0]["distributions"]["found"][2]["requires"] = json!(["numpy>=2"]);
    let (_, r) = check(&s);
    let f = finding(&r, "onnxruntime-built-against-numpy1");
    assert!(
        f["fixes"][0].as_str().unwrap().starts_with("/env/bin/python -m pip install \"onnxruntime>=1.19\""),
        "{f:#}"
    );
    assert_eq!(plan_for(&r)["steps"], json!(["/env/bin/python -m pip install \"onnxruntime>=1.19\""]));

    // When the same package also pins onnxruntime below 1.19, no listed fix
    // is consistent: the plan keeps the best one and names the conflict.
    s["pythons"][0]["distributions"]["found"][2]["requires"] = json!(["numpy>=2", "onnxruntime<1.18"]);
    let (_, r) = check(&s);
    let plan = plan_for(&r);
    let conflicts = plan["conflicts"].to_string();
    assert!(conflicts.contains("onnxruntime-built-against-numpy1"), "{plan:#}");
    assert!(conflicts.contains("team-models 1.0.0 requires numpy>=2"), "{plan:#}");
}

#[test]
fn the_text_report_ends_with_the_merged_commands() {
    let s = snapshot(
        "3.11.9",
        &[("onnxruntime", "1.17.1"), ("onnxruntime-gpu", "1.17.1"), ("torch", "2.2.2"), ("numpy", "2.1.0")],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snap.json");
    std::fs::write(&path, s.to_string()).unwrap();
    let out = doctor().args(["--color", "never", "--snapshot"]).arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let plan =
        text.split("fix all at once, in this order:").nth(1).unwrap_or_else(|| panic!("no plan in:\n{text}"));
    assert!(plan.contains("1. /env/bin/python -m pip uninstall -y onnxruntime onnxruntime-gpu"), "{plan}");
    assert!(
        plan.contains(r#"2. /env/bin/python -m pip install "numpy<2" "onnxruntime-gpu~=1.17.1""#),
        "{plan}"
    );
}

#[test]
fn a_requirement_whose_marker_does_not_apply_does_not_steer_the_plan() {
    let mut s =
        snapshot("3.11.9", &[("onnxruntime", "1.17.3"), ("numpy", "2.1.0"), ("team-models", "1.0.0")]);
    s["pythons"][0]["distributions"]["found"][2]["requires"] =
        json!(["numpy>=2; python_version < \"3.9\"", "numpy>=2; extra == \"fast\""]);
    let (_, r) = check(&s);
    assert_eq!(
        plan_for(&r)["steps"],
        json!(["/env/bin/python -m pip install \"numpy<2\""]),
        "{:#}",
        r["fix_plan"]
    );
}
