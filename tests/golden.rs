//! Golden files for every renderer: the same snapshot and matrix give the
//! same report, byte for byte (DESIGN.md, principle 8), and a change to what
//! users read shows up in review as a diff of `tests/snapshots/`.
//!
//! The snapshots under `tests/fixtures/snapshots/` were taken on real
//! environments (the test venvs, a fake-NVML GPU machine) with their paths
//! made neutral. Run `INSTA_UPDATE=always cargo test --test golden` and read
//! the diff to accept a deliberate change.

mod support;

use std::path::{Path, PathBuf};

use support::doctor;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshots").join(format!("{name}.json"))
}

/// What the doctor prints for `args`, with the matrix's date, hash and
/// source lines (which move with every matrix edit) made neutral.
fn render(args: &[&str]) -> String {
    // A fixed "today", so the matrix-age note never comes and goes.
    let out =
        doctor().env("COLUMNS", "100").env("SOURCE_DATE_EPOCH", "1795478400").args(args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 3), "{args:?}: {out:?}");
    let mut text = String::from_utf8(out.stdout).unwrap();
    if !out.stderr.is_empty() {
        text.push_str("--- stderr ---\n");
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    text
}

macro_rules! golden {
    ($name:expr, $text:expr) => {
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            filters => vec![
                (r"matrix \d{4}-\d{2}-\d{2}", "matrix [date]"),
                (r"sha256 [0-9a-f]{12}", "sha256 [hash]"),
                (r#""sha256": "[0-9a-f]{64}""#, r#""sha256": "[hash]""#),
                (r#""version": "\d{4}-\d{2}-\d{2}""#, r#""version": "[date]""#),
                (r"(matrix/[a-z-]+\.yaml):\d+:\d+", "$1:[line]:[col]"),
                (r"onnx-doctor \d+\.\d+\.\d+", "onnx-doctor [version]"),
                (r"--snapshot \S*/tests/fixtures/snapshots/", "--snapshot [fixtures]/"),
            ],
        }, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

const SNAPSHOTS: &[&str] = &["healthy", "numpy-abi", "protobuf", "five-envs", "gpu-rtx5090-cu126"];

#[test]
fn text_reports() {
    for name in SNAPSHOTS {
        let path = fixture(name);
        golden!(format!("text-{name}"), render(&["--snapshot", path.to_str().unwrap()]));
        golden!(format!("text-verbose-{name}"), render(&["--snapshot", path.to_str().unwrap(), "-v"]));
        golden!(format!("text-quiet-{name}"), render(&["--snapshot", path.to_str().unwrap(), "--quiet"]));
    }
}

/// The default report is read on one screen, even for a machine with five
/// environments and a handful of problems.
#[test]
fn the_default_report_of_five_environments_fits_a_screen() {
    let path = fixture("five-envs");
    let text = render(&["--snapshot", path.to_str().unwrap()]);
    let lines = text.lines().count();
    // Six findings and two notes over five environments.
    assert!(lines < 64, "{lines} lines:\n{text}");
    // Every finding is there, with what to run.
    for code in [
        "onnxruntime-built-against-numpy1",
        "onnx-protobuf-too-old-for-generated-code",
        "declared-requirement-missing",
    ] {
        assert!(text.contains(&format!("[{code}]")), "{code} missing:\n{text}");
    }
    assert!(text.contains("1. /home/ada/venvs/onnxruntime-gpu-nodeps/bin/python -m pip install"), "{text}");
    // A traceback is never repeated, and the verbose report shows it once.
    let verbose = render(&["--snapshot", path.to_str().unwrap(), "--verbose"]);
    assert_eq!(verbose.matches("Traceback (most recent call last)").count(), 3, "{verbose}");
}

#[test]
fn markdown_reports() {
    for name in SNAPSHOTS {
        let path = fixture(name);
        let args = ["--snapshot", path.to_str().unwrap(), "--format", "markdown", "--no-redact"];
        golden!(format!("markdown-{name}"), render(&args));
    }
}

#[test]
fn ci_reports() {
    for name in ["numpy-abi", "five-envs"] {
        let path = fixture(name);
        for format in ["github", "junit"] {
            golden!(
                format!("{format}-{name}"),
                render(&["--snapshot", path.to_str().unwrap(), "--format", format])
            );
        }
    }
}

#[test]
fn json_report() {
    let path = fixture("protobuf");
    golden!("json-protobuf", render(&["--snapshot", path.to_str().unwrap(), "--format", "json"]));
}

#[test]
fn the_rule_catalog_and_one_explanation() {
    golden!("rules", render(&["rules"]));
    golden!(
        "explain-onnxruntime-built-against-numpy1",
        render(&["explain", "onnxruntime-built-against-numpy1"])
    );
}

#[test]
fn matrix_load_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("team.yaml"),
        "rules:\n  - code: Team_Rule\n    severity: fatal\n    components: [numpy, scipy]\n    summary: s\n    message: m\n    why: w\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "tables: [\n").unwrap();
    let out = render(&["rules", "--matrix", dir.path().to_str().unwrap()]);
    golden!("matrix-errors", out.replace(dir.path().to_str().unwrap(), "[dir]"));
}

/// Colour follows NO_COLOR and CLICOLOR_FORCE (https://bixense.com/clicolors/)
/// when not asked for explicitly, and --color over both.
#[test]
fn colour_follows_the_conventions() {
    let path = fixture("numpy-abi");
    let run = |envs: &[(&str, &str)], args: &[&str]| {
        let mut cmd = doctor();
        cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE").arg("--snapshot").arg(&path).args(args);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap().contains("\u{1b}[")
    };
    // Not a terminal: plain, unless forced.
    assert!(!run(&[], &[]));
    assert!(run(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!run(&[("CLICOLOR_FORCE", "0")], &[]));
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], &[]));
    assert!(run(&[("NO_COLOR", "1")], &["--color", "always"]));
    assert!(!run(&[("CLICOLOR_FORCE", "1")], &["--color", "never"]));
}
