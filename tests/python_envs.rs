//! End to end against real virtual environments with real, really broken
//! package combinations installed from the package registry.
#![allow(clippy::disallowed_methods)]

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::*;

fn check_json(venv: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = doctor()
        .args(["--format", "json", "--python"])
        .arg(venv.join("bin/python"))
        .args(extra)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

#[test]
fn a_healthy_current_stack_exits_0_with_no_error_findings() {
    let venv = healthy_venv();
    let (code, report) = check_json(&venv, &[]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    assert_eq!(report["summary"]["errors"], 0);
    let env = &report["snapshot"]["pythons"][0];
    let imports: BTreeMap<&str, &str> = env["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["package"].as_str().unwrap(), i["status"]["state"].as_str().unwrap()))
        .collect();
    for pkg in ["numpy", "protobuf", "onnx", "onnxruntime"] {
        assert_eq!(imports[pkg], "ok", "{pkg}");
    }
    assert_eq!(imports["torch"], "not_installed");
    assert_eq!(env["kind"], "venv");
}

/// The first run of a new user: a Python with nothing installed. Without
/// protobuf the `google` namespace is missing too, and that is "not
/// installed", not a failed import.
#[test]
fn a_python_with_nothing_installed_is_healthy_and_every_package_is_absent() {
    let venv = venv("empty", &[]);
    let (code, report) = check_json(&venv, &[]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    assert_eq!(report["findings"], serde_json::json!([]));
    let env = &report["snapshot"]["pythons"][0];
    for import in env["imports"].as_array().unwrap() {
        assert_eq!(import["status"]["state"], "not_installed", "{import:#}");
    }
}

#[test]
fn onnxruntime_1_17_with_numpy_2_fails_to_import_and_is_explained() {
    let venv = ort117_numpy2_venv();
    let (code, report) = check_json(&venv, &[]);
    assert_eq!(code, 1);
    let f = finding(&report, "onnxruntime-built-against-numpy1");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["components"], serde_json::json!(["onnxruntime", "numpy"]));
    assert!(f["message"].as_str().unwrap().contains("onnxruntime 1.17.1"), "{f:#}");
    // The fix names the interpreter that was checked, not whatever `python` is.
    let python = venv.join("bin/python");
    assert_eq!(f["fixes"][0], format!("{} -m pip install \"numpy<2\"", python.display()));
    // The import really failed, and its text is attached rather than repeated.
    let evidence = f["evidence"].to_string();
    assert!(evidence.contains("compiled using NumPy 1.x"), "{evidence}");
    assert!(!finding_codes(&report).contains(&"import-failed".to_string()));
}

#[test]
fn onnx_1_13_with_protobuf_3_19_fails_on_the_missing_builder_module() {
    let venv = onnx113_protobuf319_venv();
    let (code, report) = check_json(&venv, &[]);
    assert_eq!(code, 1);
    let f = finding(&report, "onnx-protobuf-too-old-for-generated-code");
    assert_eq!(
        f["fixes"][0],
        format!(
            "{} -m pip install \"protobuf>=3.20.2,<4\"   # the range onnx 1.13.0 declares",
            venv.join("bin/python").display()
        )
    );
    assert!(f["evidence"].to_string().contains("cannot import name 'builder'"), "{f:#}");
    // onnx's own Requires-Dist says the same; it is not reported twice.
    assert!(
        !finding_codes(&report).contains(&"declared-requirement-unmet".to_string()),
        "{:#}",
        report["findings"]
    );
}

#[test]
fn the_printed_fix_repairs_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let venv = fresh_venv(&tmp.path().join("env"), &[&["onnxruntime==1.17.1", "numpy>=2"]]);
    let (code, report) = check_json(&venv, &[]);
    assert_eq!(code, 1);
    let fix = finding(&report, "onnxruntime-built-against-numpy1")["fixes"][0].as_str().unwrap().to_string();

    // Run the fix as printed: it names the interpreter, so no activation is needed.
    assert!(fix.starts_with(&venv.join("bin/python").display().to_string()), "{fix}");
    let out = shell(&fix);
    assert!(out.status.success(), "{fix}\n{}", String::from_utf8_lossy(&out.stderr));

    let (code, report) = check_json(&venv, &[]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    assert_eq!(import(&report, "onnxruntime").unwrap()["status"]["state"], "ok");
}

fn versions(report: &serde_json::Value) -> BTreeMap<String, String> {
    report["snapshot"]["pythons"][0]["distributions"]["found"]
        .as_array()
        .unwrap_or_else(|| panic!("no distributions: {:#}", report["snapshot"]["pythons"][0]))
        .iter()
        .map(|d| (d["name"].as_str().unwrap().to_string(), d["version"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn fast_mode_agrees_with_the_full_probe_on_every_version() {
    // torch-export reaches torch through a .pth file, as Python does.
    for venv in [healthy_venv(), ort117_numpy2_venv(), onnx113_protobuf319_venv(), torch_export_venv()] {
        let (_, full) = check_json(&venv, &[]);
        let (_, fast) = check_json(&venv, &["--fast"]);
        assert_eq!(fast["snapshot"]["mode"], "fast");
        let (full_v, fast_v) = (versions(&full), versions(&fast));
        assert!(fast_v.len() >= 4, "{fast_v:?}");
        assert_eq!(full_v, fast_v, "{}", venv.display());
        assert_eq!(full["snapshot"]["pythons"][0]["version"], fast["snapshot"]["pythons"][0]["version"]);
        // The same facts, the same plan.
        assert_eq!(full["fix_plan"], fast["fix_plan"], "{}", venv.display());
    }
}

#[test]
fn fast_mode_still_judges_version_rules_without_running_python() {
    let venv = ort117_numpy2_venv();
    let (code, report) = check_json(&venv, &["--fast"]);
    assert_eq!(code, 1);
    finding(&report, "onnxruntime-built-against-numpy1");
    assert!(
        report["snapshot"]["pythons"][0]["interpreter"]["not_evaluated"].as_str().unwrap().contains("--fast")
    );
}

#[test]
fn a_saved_report_rechecks_to_identical_findings() {
    let venv = ort117_numpy2_venv();
    let tmp = tempfile::tempdir().unwrap();
    let saved = tmp.path().join("report.json");
    let first = doctor()
        .args(["--format", "json", "--output"])
        .arg(&saved)
        .arg("--python")
        .arg(venv.join("bin/python"))
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(1));
    let original = json(&std::fs::read(&saved).unwrap());

    let again = doctor().args(["--format", "json", "--snapshot"]).arg(&saved).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    let rechecked = json(&again.stdout);
    assert_eq!(original["findings"], rechecked["findings"]);
    assert_eq!(original["outcomes"], rechecked["outcomes"]);
    assert_eq!(original["snapshot"], rechecked["snapshot"]);

    // Byte for byte: the same snapshot and matrix give the same report.
    let third = doctor().args(["--format", "json", "--snapshot"]).arg(&saved).output().unwrap();
    assert_eq!(again.stdout, third.stdout);
}

#[test]
fn text_and_markdown_reports_carry_the_verdict_and_the_fix() {
    let venv = ort117_numpy2_venv();
    let text = doctor().arg("--python").arg(venv.join("bin/python")).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("error[onnxruntime-built-against-numpy1]"), "{text}");
    assert!(text.contains("/bin/python -m pip install \"numpy<2\""), "{text}");
    assert!(text.contains("exit 1"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when not a terminal");

    let md =
        doctor().args(["--format", "markdown", "--python"]).arg(venv.join("bin/python")).output().unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.starts_with("## onnx-doctor report"), "{md}");
    assert!(md.contains("#### error `onnxruntime-built-against-numpy1`"), "{md}");
    assert!(md.contains("<details>"), "{md}");
}

#[test]
fn a_local_file_named_like_a_package_is_reported() {
    let venv = healthy_venv();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("onnx.py"), "raise ImportError('local file')\n").unwrap();
    let out = doctor()
        .current_dir(cwd.path())
        .args(["--format", "json", "--python"])
        .arg(venv.join("bin/python"))
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let f = finding(&report, "module-shadowed-by-local-file");
    assert!(f["message"].as_str().unwrap().contains("onnx.py"), "{f:#}");
    // The doctor itself still saw the real package: it runs in a neutral directory.
    assert_eq!(out.status.code(), Some(0));
}

/// A matrix more than 180 days older than today says so.
#[test]
fn an_old_matrix_says_how_old_it_is() {
    let venv = healthy_venv();
    let run = |date: &str| {
        let epoch = std::process::Command::new("date").args(["-u", "-d", date, "+%s"]).output().unwrap();
        let epoch = String::from_utf8(epoch.stdout).unwrap();
        let out = doctor()
            .env("SOURCE_DATE_EPOCH", epoch.trim())
            .args(["--fast", "--python"])
            .arg(venv.join("bin/python"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let matrix = onnx_doctor::matrix::Matrix::load(&[]).unwrap().version;
    assert!(!run(&matrix).contains("days ago"));
    let later = run(&format!("{matrix} + 200 days"));
    assert!(later.contains(&format!("this matrix is from {matrix}, 200 days ago")), "{later}");
}
