//! The doctor as a build gate: no GPU during `docker build`, assumptions
//! about the host, pins the image must meet, and output CI systems read.
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;

use serde_json::Value;
use support::*;

fn gate(env: &Path, extra: &[&str]) -> (i32, Value) {
    let out = doctor()
        .args(["--format", "json", "--fast", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(env)
        .args(extra)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

fn image(t: &Path) -> std::path::PathBuf {
    metadata_env(&t.join("env"), "3.11.9", &["torch-2.1.0+cu121", "torchvision-0.16.0+cu121", "numpy-1.26.4"])
}

#[test]
fn without_a_driver_the_image_says_what_it_requires_of_its_host() {
    let t = tempfile::tempdir().unwrap();
    let (code, r) = gate(&image(t.path()), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let f = finding(&r, "image-requires-driver");
    assert_eq!(f["severity"], "info");
    assert!(f["message"].as_str().unwrap().contains("needs a driver >= 525.60.13"), "{f:#}");
    let g = finding(&r, "image-requires-gpu");
    assert!(g["message"].as_str().unwrap().contains("5.0;6.0;7.0;7.5;8.0;8.6;9.0"), "{g:#}");
}

#[test]
fn assumed_host_drivers_are_judged() {
    let t = tempfile::tempdir().unwrap();
    let env = image(t.path());
    let (code, r) = gate(&env, &["--assume", "driver=470.82.01"]);
    assert_eq!(code, 1);
    finding(&r, "driver-too-old-for-torch-cuda");
    let (code, r) = gate(&env, &["--assume", "driver=535.104.05", "--assume", "gpu=sm_80"]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(!finding_codes(&r).contains(&"image-requires-driver".to_string()));
    let (code, r) = gate(&env, &["--assume", "driver=535.104.05", "--assume", "gpu=sm_120"]);
    assert_eq!(code, 1);
    finding(&r, "gpu-not-supported-by-torch-build");
    let out = doctor().args(["--assume", "gpu=x", "--snapshot", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn expected_pins_are_errors_when_missed() {
    let t = tempfile::tempdir().unwrap();
    let env = image(t.path());
    let (code, r) = gate(&env, &["--expect", "torch==2.1.*", "--expect", "python>=3.10"]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let (code, r) =
        gate(&env, &["--expect", "torch==2.4.*", "--expect", "cuda>=12.4", "--expect", "onnx>=1.16"]);
    assert_eq!(code, 1);
    let messages: Vec<String> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "expectation-not-met")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages.contains(&"expected torch==2.4.*, found torch 2.1.0+cu121".to_string()), "{messages:?}");
    assert!(messages.contains(&"expected cuda>=12.4, found cuda 12.1".to_string()), "{messages:?}");
    assert!(messages.contains(&"expected onnx>=1.16, found onnx not installed".to_string()), "{messages:?}");
    // Each pin gets the advice for what it pins: pip for a package, never for CUDA.
    let fixes = |name: &str| -> Vec<String> {
        let f = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "expectation-not-met" && f["message"].as_str().unwrap().contains(name))
            .unwrap();
        f["fixes"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
    };
    assert!(fixes("onnx>=")[0].contains("pip install \"onnx>=1.16\""), "{:?}", fixes("onnx>="));
    assert_eq!(fixes("cuda>=").len(), 1);
    assert!(fixes("cuda>=")[0].starts_with("use a CUDA that meets cuda>=12.4"), "{:?}", fixes("cuda>="));
    let out = doctor().args(["--expect", "torch", "--snapshot", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn github_annotations_and_junit_xml_carry_every_finding() {
    let t = tempfile::tempdir().unwrap();
    let env = image(t.path());
    let args = [
        "--fast",
        "--nvml-lib",
        "/nonexistent/x.so",
        "--assume",
        "driver=470.82.01",
        "--expect",
        "torch==2.4.*",
    ];
    let gh = doctor().args(args).args(["--format", "github", "--python"]).arg(&env).output().unwrap();
    let gh = String::from_utf8(gh.stdout).unwrap();
    assert!(
        gh.lines().any(|l| l.starts_with("::error title=onnx-doctor driver-too-old-for-torch-cuda")),
        "{gh}"
    );
    assert!(gh.lines().any(|l| l.starts_with("::error title=onnx-doctor expectation-not-met")), "{gh}");

    let xml = doctor().args(args).args(["--format", "junit", "--python"]).arg(&env).output().unwrap();
    assert_eq!(xml.status.code(), Some(1));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.xml");
    std::fs::write(&file, &xml.stdout).unwrap();
    // An independent parser: Python's ElementTree.
    let check = "import sys, xml.etree.ElementTree as ET\n\
        cases = fails = 0\n\
        for s in ET.parse(sys.argv[1]).getroot().findall('testsuite'):\n\
        \x20   c = s.findall('testcase')\n\
        \x20   f = [x for t in c for x in t.findall('failure')]\n\
        \x20   assert int(s.get('tests')) == len(c) and int(s.get('failures')) == len(f)\n\
        \x20   cases, fails = cases + len(c), fails + len(f)\n\
        print(cases, fails)\n";
    let out = std::process::Command::new(base_python()).args(["-c", check]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let counts = String::from_utf8(out.stdout).unwrap();
    let fails: usize = counts.split_whitespace().nth(1).unwrap().parse().unwrap();
    let report =
        json(&doctor().args(args).args(["--format", "json", "--python"]).arg(&env).output().unwrap().stdout);
    // One failing case per rule and place with an error there.
    let failing: std::collections::BTreeSet<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| format!("{} {}", f["code"], f["subject"]))
        .collect();
    assert!(!failing.is_empty());
    assert_eq!(fails, failing.len(), "every failing rule is a failure element");
}

/// What the full check sees inside `docker build` on an image with a CUDA
/// torch: torch imported, built for CUDA 12.1 and sm_50-sm_90, and CUDA not
/// available because the build has no GPU; no driver, no device node.
fn image_build_snapshot(t: &Path, device_nodes: serde_json::Value) -> std::path::PathBuf {
    let (_, mut r) = gate(&image(t), &[]);
    let env = &mut r["snapshot"]["pythons"][0];
    env["imports"] = serde_json::json!([{
        "package": "torch", "module": "torch", "status": {"state": "ok"},
        "facts": {"cuda": "12.1", "cuda_available": false,
                  "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}
    }]);
    r["snapshot"]["nvidia"]["found"]["container"]["device_nodes"] = device_nodes;
    let file = t.join("build.json");
    std::fs::write(&file, r.to_string()).unwrap();
    file
}

#[test]
fn the_container_gate_passes_on_an_image_build_where_the_assumed_host_would_run_it() {
    // A build sandbox with an empty /dev, and one whose /dev was not read.
    for device_nodes in [serde_json::json!(0), serde_json::Value::Null] {
        let t = tempfile::tempdir().unwrap();
        let snapshot = image_build_snapshot(t.path(), device_nodes);
        let judge = |assume: &[&str]| {
            let out = doctor()
                .args(["--format", "json", "--snapshot"])
                .arg(&snapshot)
                .args(assume.iter().flat_map(|a| ["--assume", a]))
                .output()
                .unwrap();
            (out.status.code().unwrap(), json(&out.stdout))
        };
        let (code, r) = judge(&["driver=595.71.05", "gpu=sm_90"]);
        assert_eq!(code, 0, "{:#}", r["findings"]);
        let codes = finding_codes(&r);
        for observed in ["container-started-without-gpus", "torch-cuda-not-available"] {
            assert!(!codes.contains(&observed.to_string()), "{observed} from an assumed host: {codes:?}");
        }
        let (code, r) = judge(&["driver=470.82.01", "gpu=sm_90"]);
        assert_eq!(code, 1);
        finding(&r, "driver-too-old-for-torch-cuda");
        let (code, r) = judge(&["driver=595.71.05", "gpu=sm_120"]);
        assert_eq!(code, 1);
        finding(&r, "gpu-not-supported-by-torch-build");
    }
}
