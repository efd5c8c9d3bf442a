//! The printed fix is checked by running it: for each really broken
//! environment, a fresh copy gets the first fix of the finding, exactly as
//! printed, and the doctor runs again. The finding must be gone and no new
//! error may appear. (onnxruntime 1.17 under NumPy 2 is in python_envs.rs.)

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;

use serde_json::Value;
use support::*;

fn check(env: &Path) -> (i32, Value) {
    let out = doctor()
        .args(["--format", "json", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(env.join("bin/python"))
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

fn errors(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// Runs the first fix of `code` as printed, then checks again: `code` is
/// gone, and no error appears that was not there before.
fn apply_first_fix(env: &Path, code: &str) -> (i32, Value) {
    let (_, report) = check(env);
    let before = errors(&report);
    let fix = finding(&report, code)["fixes"][0].as_str().unwrap().to_string();
    // The fix names the checked interpreter; nothing needs activating.
    let out = shell(&fix);
    assert!(out.status.success(), "{fix}\n{}", String::from_utf8_lossy(&out.stderr));
    let (exit, after) = check(env);
    let left: Vec<String> = errors(&after).into_iter().filter(|e| !before.contains(e)).collect();
    assert!(!finding_codes(&after).contains(&code.to_string()), "{code} is still there after `{fix}`");
    assert!(left.is_empty(), "after `{fix}`, new errors: {left:?}");
    (exit, after)
}

/// Runs every step of the fix plan as printed, then checks again: no error
/// is left, and no warning or error appears that was not there before but
/// `left_to_code`: what the plan's prose steps (what to do in code, which
/// no command runs) ask for.
fn apply_plan(env: &Path, left_to_code: &[&str]) -> (i32, Value) {
    let (_, report) = check(env);
    let before = finding_codes(&report);
    let steps: Vec<String> = report["fix_plan"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["steps"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()))
        .collect();
    let python = env.join("bin/python").display().to_string();
    let commands: Vec<&String> = steps.iter().filter(|s| s.starts_with(&python)).collect();
    assert!(!commands.is_empty(), "no command in the plan: {steps:?}");
    for step in commands {
        let out = shell(step);
        assert!(out.status.success(), "{step}\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let (exit, after) = check(env);
    assert!(errors(&after).is_empty(), "after the plan {steps:?}, errors: {:#}", after["findings"]);
    let new: Vec<String> = after["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| f["code"].as_str().unwrap().to_string())
        .filter(|c| !before.contains(c) && !left_to_code.contains(&c.as_str()))
        .collect();
    assert!(new.is_empty(), "after the plan {steps:?}, new findings: {new:?}");
    (exit, after)
}

#[test]
fn protobuf_too_old_for_onnx_is_repaired_by_its_fix() {
    let t = tempfile::tempdir().unwrap();
    let env = fresh_venv(
        &t.path().join("env"),
        &[&["--no-deps", "onnx==1.13.0", "protobuf==3.19.6", "numpy<2", "typing_extensions"]],
    );
    let (code, _) = check(&env);
    assert_eq!(code, 1);
    let (code, after) = apply_first_fix(&env, "onnx-protobuf-too-old-for-generated-code");
    assert_eq!(code, 0, "{:#}", after["findings"]);
}

#[test]
fn protobuf_too_old_for_onnx_is_repaired_by_the_whole_plan() {
    let t = tempfile::tempdir().unwrap();
    let env = fresh_venv(
        &t.path().join("env"),
        &[&["--no-deps", "onnx==1.13.0", "protobuf==3.19.6", "numpy<2", "typing_extensions"]],
    );
    let (code, _) = apply_plan(&env, &[]);
    assert_eq!(code, 0);
}

/// onnxruntime 1.17 under NumPy 2 cannot import; the plan brings back a
/// NumPy it was built for, and the trials then run.
#[test]
fn onnxruntime_1_17_under_numpy_2_is_repaired_by_the_whole_plan() {
    let t = tempfile::tempdir().unwrap();
    let env = fresh_venv(&t.path().join("env"), &[&["onnxruntime==1.17.1", "numpy>=2"]]);
    let (code, report) = check(&env);
    assert_eq!(code, 1, "{:#}", report["findings"]);
    finding(&report, "onnxruntime-built-against-numpy1");
    let (code, after) = apply_plan(&env, &[]);
    assert_eq!(code, 0, "{:#}", after["findings"]);
    let imports = after["snapshot"]["pythons"][0]["imports"].to_string();
    assert!(
        imports.contains("trial_onnx_default") || imports.contains("trial_seconds"),
        "the trial ran: {imports}"
    );
}

#[test]
fn onnxruntime_and_onnxruntime_gpu_together_are_repaired_by_their_fix() {
    let t = tempfile::tempdir().unwrap();
    let env = fresh_venv(
        &t.path().join("env"),
        &[&["onnxruntime==1.20.0", "numpy<2"], &["--no-deps", "onnxruntime-gpu==1.20.0"]],
    );
    let (code, report) = check(&env);
    assert_eq!(code, 1, "{:#}", report["findings"]);
    apply_first_fix(&env, "onnxruntime-cpu-and-gpu-both-installed");
}

/// The CPU package installed over onnxruntime-gpu (what another package's
/// requirements do): the plan leaves onnxruntime-gpu alone, whole.
#[test]
fn the_cpu_package_installed_over_onnxruntime_gpu_is_repaired_by_the_whole_plan() {
    let t = tempfile::tempdir().unwrap();
    let env = fresh_venv(
        &t.path().join("env"),
        // Installed with its requirements, so that the plan has only the
        // duplicate to remove (with --no-deps it also installs what is
        // missing, NVIDIA's CUDA wheels among it: gigabytes on CI's disk).
        &[&["onnxruntime-gpu==1.19.2", "numpy<2"], &["--no-deps", "onnxruntime==1.19.2"]],
    );
    let (code, report) = check(&env);
    assert_eq!(code, 1, "{:#}", report["findings"]);
    finding(&report, "onnxruntime-cpu-and-gpu-both-installed");
    // The plan's last step: call onnxruntime.preload_dlls() in the program.
    apply_plan(&env, &["onnxruntime-provider-needs-preload"]);
    let (_, after) = check(&env);
    let names: Vec<&str> = after["snapshot"]["pythons"][0]["distributions"]["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"onnxruntime-gpu") && !names.contains(&"onnxruntime"), "{names:?}");
}

/// `pip install torch onnx onnxruntime-gpu` as a new user ran it (torch
/// 2.15, onnx 1.23.2, onnxruntime-gpu 1.31.1): torch's nvidia-* wheels bring
/// most of what the CUDA provider needs, but not libcurand (torch 2.15
/// dropped it), and onnxruntime refuses the IR onnx writes by default. No
/// onnxruntime-gpu newer than 1.31.1 exists, so the plan pins onnx instead;
/// `--fast` gives the same plan. After it, only the note that onnxruntime
/// needs preload_dlls() (or torch imported first) remains, and the trial
/// that loaded onnx's default model agrees.
/// (torch is the cached torch environment's, copied as hard links.)
#[test]
fn torch_onnx_and_onnxruntime_gpu_of_one_day_are_repaired_by_the_whole_plan() {
    let t = tempfile::tempdir().unwrap();
    let env = fresh_venv_from(
        &torch_venv(),
        &t.path().join("env"),
        &[&["onnx==1.23.2", "onnxruntime-gpu==1.31.1"]],
    );
    let (code, report) = check(&env);
    assert_eq!(code, 1, "{:#}", report["findings"]);
    let f = finding(&report, "onnxruntime-provider-cannot-load");
    assert!(f["message"].as_str().unwrap().contains("libcurand.so.10"), "{f:#}");
    let fix = f["fixes"][0].as_str().unwrap();
    assert!(fix.contains("-m pip install \"nvidia-curand\""), "{fix}");
    assert!(!fix.contains("LD_LIBRARY_PATH"), "a path cannot help a library no wheel installed: {fix}");
    finding(&report, "onnxruntime-refuses-onnx-default");
    let plan = report["fix_plan"].to_string();
    assert!(!plan.contains("onnxruntime-gpu>"), "no newer onnxruntime-gpu exists: {plan}");
    let fast = doctor()
        .args(["--fast", "--format", "json", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(env.join("bin/python"))
        .output()
        .unwrap();
    assert_eq!(json(&fast.stdout)["fix_plan"], report["fix_plan"], "--fast and the full check plan alike");
    let (code, after) = apply_plan(&env, &["onnxruntime-provider-needs-preload"]);
    assert_eq!(code, 0, "{:#}", after["findings"]);
    finding(&after, "onnxruntime-provider-needs-preload");
    let trial = after["snapshot"]["pythons"][0]["imports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["package"] == "onnxruntime")
        .map(|i| i["facts"]["trial_onnx_default"].clone());
    assert_eq!(trial, Some(Value::from("loads")), "the trial loads onnx's default model now");
}
