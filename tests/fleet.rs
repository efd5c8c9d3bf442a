//! `onnx-doctor fleet` over real reports of a small generated fleet.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::*;

fn node_snapshot(driver: &str, torch: &str) -> Value {
    json!({
        "schema_version": 1, "probed_by": "fleet test", "mode": "fast",
        "system": {"found": {"os": {"found": "Ubuntu 22.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                             "glibc": {"found": "2.35"}, "container": null, "wsl": false}},
        "pythons": [{"executable": "/env/bin/python", "source": "flag", "version": {"found": "3.11.9"}, "kind": "venv",
                     "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [],
                     "distributions": {"found": [
                         {"name": "torch", "version": torch, "location": "/env"},
                         {"name": "numpy", "version": "1.26.4", "location": "/env"}]},
                     "imports": []}],
        "nvidia": {"found": {"nvml": {"state": "ok"},
                             "driver": {"found": {"version": driver, "max_cuda": null, "source": "nvml"}},
                             "kernel_module": {"found": driver},
                             "gpus": {"found": [{"index": 0, "name": "NVIDIA A100", "compute_capability": "8.0",
                                                 "architecture": "Ampere", "memory_mib": 81920, "uuid": null}]}}}
    })
}

/// Writes node reports produced by the real doctor from snapshots.
fn fleet(dir: &Path) {
    let nodes =
        [("535.104.05", "2.4.1+cu121", 7), ("470.82.01", "2.4.1+cu121", 2), ("535.104.05", "2.3.1+cu121", 1)];
    let mut n = 0;
    for (driver, torch, count) in nodes {
        let snap = dir.join(format!("snap-{driver}-{torch}.json"));
        std::fs::write(&snap, node_snapshot(driver, torch).to_string()).unwrap();
        for _ in 0..count {
            n += 1;
            let out = dir.join(format!("reports/node{n:02}.json"));
            std::fs::create_dir_all(out.parent().unwrap()).unwrap();
            let _ = doctor()
                .args(["--format", "json", "--snapshot"])
                .arg(&snap)
                .arg("--output")
                .arg(&out)
                .output()
                .unwrap();
        }
    }
    std::fs::write(dir.join("reports/node11.json"), "{\"doctor\": \"onnx-doctor 0.1.0\", \"findings\": [")
        .unwrap();
    std::fs::write(dir.join("reports/notes.json"), "{\"not\": \"a report\"}").unwrap();
}

#[test]
fn findings_are_counted_by_nodes_and_drift_puts_outliers_first() {
    let t = tempfile::tempdir().unwrap();
    fleet(t.path());
    let out = doctor().args(["fleet", "--format", "json"]).arg(t.path().join("reports")).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "two nodes have an error finding");
    let f = json(&out.stdout);
    assert_eq!(f["nodes"], 10);
    let unreadable: Vec<&str> =
        f["unreadable"].as_array().unwrap().iter().map(|u| u["source"].as_str().unwrap()).collect();
    assert_eq!(unreadable.len(), 2, "{unreadable:?}");
    assert!(unreadable.iter().any(|u| u.ends_with("node11.json")));
    let driver = f["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "driver-too-old-for-torch-cuda")
        .unwrap();
    assert_eq!(driver["nodes"], 2);
    assert_eq!(driver["examples"], json!(["node08", "node09"]));
    let drift = |component: &str| -> Vec<(String, u64)> {
        f["drift"].as_array().unwrap().iter().find(|d| d["component"] == component).unwrap()["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["version"].as_str().unwrap().to_string(), g["nodes"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(drift("driver"), vec![("470.82.01".to_string(), 2), ("535.104.05".to_string(), 8)]);
    assert_eq!(drift("torch"), vec![("2.3.1+cu121".to_string(), 1), ("2.4.1+cu121".to_string(), 9)]);
    // Components every node agrees on come after those that drift.
    let order: Vec<&str> =
        f["drift"].as_array().unwrap().iter().map(|d| d["component"].as_str().unwrap()).collect();
    assert!(
        order.iter().position(|c| *c == "numpy") > order.iter().position(|c| *c == "driver"),
        "{order:?}"
    );
}

#[test]
fn json_lines_on_standard_input_are_a_fleet_too() {
    let t = tempfile::tempdir().unwrap();
    fleet(t.path());
    let mut lines = Vec::new();
    for n in 1..=3 {
        let text = std::fs::read_to_string(t.path().join(format!("reports/node{n:02}.json"))).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        lines.push(v.to_string());
    }
    let out =
        doctor().args(["fleet", "-", "--format", "json"]).write_stdin(lines.join("\n")).output().unwrap();
    let f = json(&out.stdout);
    assert_eq!(f["nodes"], 3);
    assert_eq!(out.status.code(), Some(0));
}

/// A Kubernetes ConfigMap mounts each key as a link into a hidden,
/// timestamped directory (`node.json -> ..data/node.json`, `..data ->
/// ..2026_11_23...`); a `self -> .` link loops. Each real report counts once.
#[test]
fn linked_reports_and_directory_loops_count_each_report_once() {
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir().unwrap();
    fleet(t.path());
    let mount = t.path().join("configmap");
    let stamped = mount.join("..2026_11_23_10_00_00.123");
    std::fs::create_dir_all(&stamped).unwrap();
    for n in ["node01", "node08"] {
        std::fs::copy(t.path().join(format!("reports/{n}.json")), stamped.join(format!("{n}.json"))).unwrap();
        symlink(format!("..data/{n}.json"), mount.join(format!("{n}.json"))).unwrap();
    }
    symlink("..2026_11_23_10_00_00.123", mount.join("..data")).unwrap();
    symlink(".", mount.join("self")).unwrap();
    symlink("..", mount.join("up")).unwrap();
    let out = doctor().args(["fleet", "--format", "json"]).arg(&mount).output().unwrap();
    let f = json(&out.stdout);
    assert_eq!(f["nodes"], 2, "{f:#}");
}

#[test]
fn a_report_of_another_schema_is_skipped_with_a_reason() {
    let t = tempfile::tempdir().unwrap();
    fleet(t.path());
    let text = std::fs::read_to_string(t.path().join("reports/node01.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["snapshot"]["schema_version"] = json!(99);
    std::fs::write(t.path().join("reports/node01.json"), v.to_string()).unwrap();
    let out = doctor().args(["fleet", "--format", "json"]).arg(t.path().join("reports")).output().unwrap();
    let f = json(&out.stdout);
    assert_eq!(f["nodes"], 9);
    let skipped = f["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["source"].as_str().unwrap().ends_with("node01.json"));
    assert!(skipped.unwrap()["error"].as_str().unwrap().contains("schema 99"), "{f:#}");
}

#[test]
fn fleet_refuses_the_ci_formats_it_does_not_write() {
    let t = tempfile::tempdir().unwrap();
    fleet(t.path());
    let out = doctor().args(["fleet", "--format", "junit"]).arg(t.path().join("reports")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("text, json or markdown"));
}
