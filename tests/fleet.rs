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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("possible values: text, json, markdown, html"), "{stderr}");
}

/// A fleet with a node named like markup, as `fleet` reports it in `format`.
fn picture(dir: &Path, format: &str) -> String {
    fleet(dir);
    let reports = dir.join("reports");
    std::fs::copy(reports.join("node08.json"), reports.join("<img src=x onerror=alert(1)>|node.json"))
        .unwrap();
    let out = doctor().args(["fleet", "--format", format]).arg(&reports).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_markdown_table_has_a_row_per_set_of_findings_and_every_row_its_cells() {
    let t = tempfile::tempdir().unwrap();
    let md = picture(t.path(), "markdown");
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("### Nodes × findings"))
        .filter(|l| l.starts_with('|'))
        .take_while(|l| !l.starts_with("| component"))
        .collect();
    // Cells are split at pipes that are not escaped.
    let cells = |l: &str| l.replace("\\|", "").matches('|').count();
    assert!(table.len() >= 4, "{md}");
    for row in &table {
        assert_eq!(cells(row), cells(table[0]), "{row}\n{md}");
    }
    // The header names the finding, the rows mark the nodes that have it.
    assert!(table[0].contains("`driver-too-old-for-torch-cuda`"), "{md}");
    let marked: Vec<&&str> = table.iter().filter(|r| r.contains('🔴')).collect();
    assert_eq!(marked.len(), 1, "{md}");
    assert!(marked[0].starts_with("| 3 |"), "{md}");
    assert!(!md.contains("<img"), "{md}");
}

/// `chromium --headless` with `args`, bounded; `None` where there is none
/// (CI installs it: there, its absence fails the test).
fn chromium(args: &[&str]) -> Option<std::process::Output> {
    let found = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()));
    let Some(browser) = found else {
        assert!(std::env::var_os("CI").is_none(), "CI must have chromium to render the fleet page");
        eprintln!("no chromium: the page is not rendered");
        return None;
    };
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new("timeout");
    cmd.args(["120", browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args);
    Some(cmd.output().unwrap())
}

#[test]
fn the_html_page_renders_with_its_nodes_by_findings_table_and_no_injected_markup() {
    let t = tempfile::tempdir().unwrap();
    let html = picture(t.path(), "html");
    let page = t.path().join("fleet.html");
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}", page.display());
    let Some(dom) = chromium(&["--dump-dom", &url]) else { return };
    assert!(dom.status.success(), "{dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    // The rendered document: a row per set of findings, a column per finding.
    let tbody = dom.split("<tbody>").nth(1).and_then(|b| b.split("</tbody>").next()).unwrap_or("");
    let rows = tbody.matches("<tr").count();
    let json = doctor().args(["fleet", "--format", "json"]).arg(t.path().join("reports")).output().unwrap();
    let fleet = support::json(&json.stdout);
    assert_eq!(rows, fleet["profiles"].as_array().unwrap().len(), "{dom}");
    assert_eq!(dom.matches("class=\"code\"").count(), fleet["findings"].as_array().unwrap().len(), "{dom}");
    assert!(dom.contains("class=\"mark error\""), "{dom}");
    // The node named like markup is text, not an element.
    assert!(!dom.contains("<img"), "{dom}");
    assert!(dom.contains("&lt;img src=x onerror=alert(1)&gt;|node"), "{dom}");
    // And it draws: a screenshot of the page.
    let shot = t.path().join("fleet.png");
    let out =
        chromium(&[&format!("--screenshot={}", shot.display()), "--window-size=1000,800", &url]).unwrap();
    assert!(out.status.success(), "{out:?}");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());
    if let Some(keep) = std::env::var_os("ONNX_DOCTOR_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
