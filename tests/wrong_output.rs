//! Small ways to be wrong: a usage mistake taken for a request, a report
//! written over its own input, a version with a NUL in it, a 200-digit
//! driver called "ok", a PowerShell-saved paste read as nothing, a report
//! of another schema read as an empty paste, advice for a flag not given.
#![allow(clippy::disallowed_methods)]

mod support;

use support::*;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_expectation_without_a_name_is_a_usage_error() {
    let out = doctor().args(["--fast", "--expect", "==1.0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("write a name and a version specifier"), "{}", stderr(&out));
}

#[test]
fn a_root_that_does_not_exist_is_a_usage_error() {
    let out = doctor().args(["--fast", "--root", "/nonexistent/host"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/host: no such directory"), "{}", stderr(&out));
}

#[test]
fn a_relative_python_is_found_from_where_the_user_stands() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("venvs/empty")).unwrap();
    let out = doctor()
        .current_dir(t.path())
        .args(["--fast", "--format", "json", "--python", "venvs/empty"])
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let exe = report["snapshot"]["pythons"][0]["executable"].as_str().unwrap().to_string();
    let real = t.path().canonicalize().unwrap().join("venvs/empty");
    assert!(exe.starts_with(real.to_str().unwrap()) || exe.starts_with(t.path().to_str().unwrap()), "{exe}");
}

#[test]
fn the_report_is_never_written_over_its_input() {
    let t = tempfile::tempdir().unwrap();
    let paste = "[pip3] torch==2.3.1\n";
    std::fs::write(t.path().join("ticket.txt"), paste).unwrap();
    let out = doctor()
        .current_dir(t.path())
        .args(["diagnose", "ticket.txt", "-o"])
        .arg(t.path().join("./ticket.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is the input"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(t.path().join("ticket.txt")).unwrap(), paste);
}

#[test]
fn a_report_that_cannot_be_written_says_where_and_exits_2() {
    for target in ["/nonexistent/dir/report.md", "/dev/full"] {
        let out = doctor()
            .args(["diagnose", "-", "-o", target])
            .write_stdin("[pip3] torch==2.3.1\n")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        assert!(stderr(&out).contains(&format!("cannot write the report to {target}")), "{}", stderr(&out));
    }
}

#[test]
fn nul_bytes_are_not_part_of_a_version() {
    let report = diagnose_text("[pip3] torch==2.3.1\0\0\n[pip3] onnx==1.1\x007.0\n");
    let dists = report["snapshot"]["pythons"][0]["distributions"]["found"].to_string();
    assert!(!dists.contains("\\u0000"), "{dists}");
    assert!(dists.contains("\"2.3.1\"") && dists.contains("\"1.17.0\""), "{dists}");
}

#[test]
fn a_driver_version_of_200_digits_is_not_called_ok() {
    let report = diagnose_text(&format!("Nvidia driver version: {}\n[pip3] torch==2.3.1\n", "5".repeat(200)));
    let driver = &report["snapshot"]["nvidia"]["found"]["driver"];
    assert!(driver["found"].is_null(), "{driver}");
    assert!(driver["not_evaluated"].as_str().unwrap().contains("not a version"), "{driver}");
}

#[test]
fn a_paste_saved_by_powershell_as_utf16_is_read() {
    let text = "PyTorch version: 2.1.0+cu121\r\n[pip3] onnxruntime==1.17.1\r\n[pip3] numpy==2.0.1\r\n";
    for (bom, le) in [([0xFF, 0xFE], true), ([0xFE, 0xFF], false)] {
        let mut bytes = bom.to_vec();
        for unit in text.encode_utf16() {
            bytes.extend(if le { unit.to_le_bytes() } else { unit.to_be_bytes() });
        }
        let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(bytes).output().unwrap();
        let codes = finding_codes(&json(&out.stdout));
        assert!(codes.contains(&"onnxruntime-built-against-numpy1".to_string()), "{codes:?}");
    }
}

#[test]
fn a_report_of_another_schema_is_explained_not_read_as_an_empty_paste() {
    let report = diagnose_text("[pip3] torch==2.3.1\n");
    let mut other = report.clone();
    other["snapshot"]["schema_version"] = 99.into();
    let out = doctor().args(["diagnose", "-"]).write_stdin(other.to_string()).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("schema version 99 is not 1"), "{}", stderr(&out));
}

#[test]
fn the_hint_to_run_without_fast_is_given_only_with_fast() {
    let t = tempfile::tempdir().unwrap();
    let fake = script(t.path(), "python3", "#!/bin/sh\nexit 1\n");
    let reason = |fast: bool| {
        let mut cmd = doctor();
        cmd.args(["--format", "json", "--python"]).arg(&fake);
        if fast {
            cmd.arg("--fast");
        }
        let report = json(&cmd.output().unwrap().stdout);
        report["snapshot"]["pythons"][0]["distributions"]["not_evaluated"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let (slow, fast) = (reason(false), reason(true));
    assert!(slow.contains("no site-packages") && !slow.contains("--fast"), "{slow}");
    assert!(fast.contains("run without --fast"), "{fast}");
}
