//! What grows with its input grows linearly, and what a report keeps is
//! bounded: a pasted package list of any length, a library folder named
//! many times on `LD_LIBRARY_PATH`, a fleet with thousands of distinct
//! findings, thousands of `--expect` pins.
//!
//! Speed is measured, not asserted; the time limits here are generous
//! bounds on cases that took minutes when they were quadratic.

#![allow(clippy::disallowed_methods)]

mod support;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// Distributions the importer keeps beyond those the matrix watches.
const KEPT_OTHERS: usize = 4096;

fn distributions(report: &Value) -> &Vec<Value> {
    report["snapshot"]["pythons"][0]["distributions"]["found"].as_array().expect("a package list")
}

fn pasted_fact<'a>(report: &'a Value, fact: &str) -> Option<&'a Value> {
    report["snapshot"]["pasted"]["facts"].as_array()?.iter().find(|f| f["fact"] == fact)
}

#[test]
fn a_pip_list_of_fifty_thousand_packages_keeps_a_bounded_report() {
    let others = 50_000;
    let mut text = String::from("Package    Version\n---------- -------\n");
    for i in 0..others {
        let _ = writeln!(text, "pkg{i}  1.{}.0", i % 100);
    }
    // Watched ones after the budget is spent are kept all the same.
    text.push_str("torch  2.4.1\nnumpy  2.1.0\nonnxruntime  1.17.1\n");
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    assert!(out.stdout.len() < 4 << 20, "a report of {} bytes", out.stdout.len());
    let report = json(&out.stdout);
    let dists = distributions(&report);
    assert_eq!(dists.len(), KEPT_OTHERS + 3, "every watched one and the first {KEPT_OTHERS} others");
    for (name, version) in
        [("torch", "2.4.1"), ("numpy", "2.1.0"), ("onnxruntime", "1.17.1"), ("pkg0", "1.0.0")]
    {
        assert!(dists.iter().any(|d| d["name"] == name && d["version"] == version), "{name}");
    }
    assert!(!dists.iter().any(|d| d["name"] == format!("pkg{KEPT_OTHERS}")));
    let left_out = pasted_fact(&report, "distributions.not_kept").expect("the count of those left out");
    assert_eq!(left_out["value"], (others - KEPT_OTHERS).to_string());
    assert_eq!(left_out["line"], KEPT_OTHERS + 3, "the first line naming one left out");
    // numpy 2 against onnxruntime 1.17 is still judged.
    assert!(finding_codes(&report).iter().any(|c| c.contains("numpy")), "{:?}", finding_codes(&report));
}

#[test]
fn a_freeze_repeated_a_hundred_thousand_times_reads_as_it_once_did() {
    let once = "torch==2.4.1\nnumpy==1.26.4\nonnx==1.16.0\nprotobuf==3.20.3\nfoo-bar==0.1\n";
    let report_once = diagnose_text(once);
    let report_many = diagnose_text(&once.repeat(100_000));
    assert_eq!(distributions(&report_many), distributions(&report_once));
    assert_eq!(report_many["snapshot"]["pasted"]["facts"], report_once["snapshot"]["pasted"]["facts"]);
    assert_eq!(finding_codes(&report_many), finding_codes(&report_once));
}

#[test]
fn a_list_of_gpus_or_library_paths_keeps_a_bounded_number() {
    let mut text = String::new();
    for i in 0..20_000 {
        let _ =
            writeln!(text, "GPU {i}: NVIDIA A100-SXM4-80GB (UUID: GPU-{i:08x}-0000-0000-0000-000000000000)");
    }
    text.push_str("\ncuDNN version: Probably one of the following:\n");
    for i in 0..20_000 {
        let _ = writeln!(text, "/usr/lib/x{i}/libcudnn.so.8.9.{}", i % 10);
    }
    let report = diagnose_text(&text);
    let nvidia = &report["snapshot"]["nvidia"]["found"];
    let gpus = nvidia["gpus"]["found"].as_array().unwrap().len();
    let libraries = nvidia["libraries"].as_array().unwrap().len();
    assert!((1..=256).contains(&gpus), "{gpus} GPUs kept");
    assert!((1..=256).contains(&libraries), "{libraries} library paths kept");
}

#[test]
fn a_library_folder_named_ten_times_is_listed_once() {
    let t = tempfile::tempdir().unwrap();
    let libs = t.path().join("libs");
    std::fs::create_dir(&libs).unwrap();
    for i in 0..20_000 {
        std::fs::write(libs.join(format!("libcudnn.so.{i}")), "").unwrap();
    }
    // The same folder through a link is the same folder.
    std::os::unix::fs::symlink(&libs, t.path().join("alias")).unwrap();
    let mut dirs = vec![libs.clone(); 10];
    dirs.push(t.path().join("alias"));
    let library_path = std::env::join_paths(&dirs).unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["numpy-1.26.4"]);
    let started = Instant::now();
    let out = doctor()
        .env("LD_LIBRARY_PATH", &library_path)
        .args(["--format", "json", "--fast", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(&env)
        .output()
        .unwrap();
    let took = started.elapsed();
    let report = json(&out.stdout);
    let copies = report["snapshot"]["nvidia"]["found"]["libraries"].as_array().expect("library copies");
    let cudnn: Vec<&Value> = copies.iter().filter(|c| c["library"] == "cudnn").collect();
    assert_eq!(cudnn.len(), 20_000, "each file once");
    assert!(cudnn.iter().all(|c| c["origin"] == "LD_LIBRARY_PATH"));
    assert!(cudnn.iter().all(|c| c["path"].as_str().unwrap().starts_with(libs.to_str().unwrap())));
    // It took 160 s when each folder was listed per name and every copy compared with every other.
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// A node report whose findings are these codes.
fn node_report(codes: impl Iterator<Item = String>) -> Value {
    let findings: Vec<Value> = codes.map(|c| serde_json::json!({"code": c, "severity": "warning"})).collect();
    serde_json::json!({
        "findings": findings,
        "snapshot": {
            "schema_version": 1, "probed_by": "bounded test", "mode": "fast",
            "system": {"found": {"os": {"found": "Ubuntu 22.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                                 "glibc": {"found": "2.35"}, "container": null, "wsl": false}},
            "pythons": [], "nvidia": {"not_evaluated": "fixture"}
        }
    })
}

#[test]
fn a_fleet_table_of_forty_rows_and_five_thousand_codes_is_drawn_in_one_pass() {
    let codes = 5_000;
    let mut stream = String::new();
    // Forty nodes, each with every code but its own: forty distinct rows.
    for node in 0..40 {
        let report = node_report((0..codes).filter(|i| *i != node).map(|i| format!("code-{i:05}")));
        stream.push_str(&report.to_string());
        stream.push('\n');
    }
    for format in ["markdown", "html"] {
        let started = Instant::now();
        let out =
            doctor().args(["fleet", "-", "--format", format]).write_stdin(stream.clone()).output().unwrap();
        let took = started.elapsed();
        let text = String::from_utf8(out.stdout).unwrap();
        let marks = text.matches(if format == "markdown" { " 🟡 |" } else { ">▲</td>" }).count();
        assert_eq!(marks, 40 * (codes - 1), "{format}: one mark per node and code it has");
        // It took minutes when every cell searched its row's codes and the fleet's findings.
        assert!(took < Duration::from_secs(60), "{format}: {took:?}");
    }
}

#[test]
fn ten_thousand_pins_are_judged_in_linear_time() {
    let pins = 10_000;
    let t = tempfile::tempdir().unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["pkg7-1.0", "numpy-1.26.4"]);
    let mut cmd = doctor();
    cmd.args(["--format", "json", "--fast", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(&env);
    for i in 0..pins {
        cmd.arg("--expect").arg(format!("pkg{i}==1"));
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let took = started.elapsed();
    let report = json(&out.stdout);
    let unmet = report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "expectation-not-met");
    assert_eq!(unmet.count(), pins - 1, "every pin but pkg7's");
    assert!(took < Duration::from_secs(60), "{took:?}");
}
