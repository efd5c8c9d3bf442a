//! Interpreters that misbehave: the doctor must finish within its timeout,
//! say what it could not evaluate and why, and exit 3 only when nothing at
//! all could be probed.
#![allow(clippy::disallowed_methods)]

mod support;

use std::time::{Duration, Instant};

use support::*;

fn run_with(python: &std::path::Path, timeout: &str) -> (i32, serde_json::Value, Duration) {
    let started = Instant::now();
    let out =
        doctor().args(["--format", "json", "--timeout", timeout, "--python"]).arg(python).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout), started.elapsed())
}

fn interpreter_reason(report: &serde_json::Value) -> String {
    report["snapshot"]["pythons"][0]["interpreter"]["not_evaluated"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_python_that_hangs_is_abandoned_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let fake = script(dir.path(), "python3", "#!/bin/sh\nsleep 600 & sleep 600\n");
    let (code, report, took) = run_with(&fake, "1");
    // Abandoned at the timeout, not after the 600 s sleep: the slack is for
    // a loaded two-core machine (3.6 s was seen there).
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert_eq!(code, 3);
    assert!(interpreter_reason(&report).contains("timed out after 1.0 s"), "{}", interpreter_reason(&report));
    assert_eq!(report["summary"]["verdict"], "not_evaluated");
}

#[test]
fn a_python_that_prints_garbage_is_not_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let fake =
        script(dir.path(), "python3", "#!/bin/sh\nhead -c 4096 /dev/urandom\necho '{\"event\": nope'\n");
    let (code, report, _) = run_with(&fake, "5");
    assert_eq!(code, 3);
    assert!(interpreter_reason(&report).contains("gave no probe output"), "{}", interpreter_reason(&report));
}

#[test]
fn a_python_that_exits_1_is_not_evaluated_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let fake =
        script(dir.path(), "python3", "#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 1\n");
    let (code, report, _) = run_with(&fake, "5");
    assert_eq!(code, 3);
    let reason = interpreter_reason(&report);
    assert!(reason.contains("exited with status 1") && reason.contains("init_fs_encoding"), "{reason}");
    let text = doctor().args(["--timeout", "5", "--python"]).arg(&fake).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("n/e"), "{text}");
    assert!(text.contains("nothing could be probed"), "{text}");
}

#[test]
fn one_broken_python_does_not_hide_a_working_one() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let hung = script(a.path(), "python3", "#!/bin/sh\nsleep 600\n");
    let also_hung = script(b.path(), "python3", "#!/bin/sh\nsleep 600\n");
    let healthy = healthy_venv();
    let started = Instant::now();
    // 8 s: long enough for the healthy one's imports on a loaded two-core
    // machine (2 s was not, in CI). Two hung interpreters take 16 s one
    // after the other and 8 s side by side: 14 s tells them apart with
    // room for a loaded machine.
    let out = doctor()
        .args(["--format", "json", "--timeout", "8", "--python"])
        .arg(&hung)
        .arg("--python")
        .arg(&also_hung)
        .arg("--python")
        .arg(healthy.join("bin/python"))
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(14), "probes run in parallel: {:?}", started.elapsed());
    let report = json(&out.stdout);
    // The broken one is a warning, not a reason to fail the build.
    assert_eq!(out.status.code(), Some(0), "{:#}", report["findings"]);
    assert_eq!(finding(&report, "python-not-evaluated")["severity"], "warning");
}

#[test]
fn a_package_whose_import_hangs_times_out_alone_and_the_rest_is_still_probed() {
    let dir = tempfile::tempdir().unwrap();
    let pkgs = dir.path().join("pkgs");
    std::fs::create_dir_all(pkgs.join("numpy")).unwrap();
    std::fs::write(pkgs.join("numpy/__init__.py"), "import time\nwhile True:\n    time.sleep(1)\n").unwrap();
    std::fs::create_dir_all(pkgs.join("onnx")).unwrap();
    std::fs::write(pkgs.join("onnx/__init__.py"), "import os\nos.kill(os.getpid(), 9)\n").unwrap();
    std::fs::create_dir_all(pkgs.join("torch")).unwrap();
    std::fs::write(pkgs.join("torch/__init__.py"), "__version__ = '9.9.9'\n").unwrap();
    let python = which_python();
    let started = Instant::now();
    let out = doctor()
        .env("PYTHONPATH", &pkgs)
        .args(["--format", "json", "--timeout", "2", "--python"])
        .arg(&python)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "took {took:?}");
    let report = json(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    let imports = report["snapshot"]["pythons"][0]["imports"].as_array().unwrap();
    let state = |pkg: &str| {
        imports
            .iter()
            .find(|i| i["package"] == pkg)
            .map(|i| i["status"]["state"].as_str().unwrap().to_string())
    };
    assert_eq!(state("numpy").as_deref(), Some("timed_out"));
    assert_eq!(state("onnx").as_deref(), Some("crashed"));
    assert_eq!(state("torch").as_deref(), Some("ok"));
    finding(&report, "import-timed-out");
    assert!(finding(&report, "import-crashed")["message"].as_str().unwrap().contains("signal 9"));
}

/// The real base interpreter (not a pyenv shim).
fn which_python() -> std::path::PathBuf {
    let out = std::process::Command::new(base_python())
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

#[test]
fn fast_mode_counts_the_python_and_python3_shims_of_one_pyenv_as_one_environment() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".pyenv");
    let shims = root.join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    for name in ["python", "python3"] {
        // Shims are never run in --fast mode; this one would fail loudly.
        script(&shims, name, "#!/bin/sh\nexit 99\n");
    }
    let version = root.join("versions/3.11.7");
    let site = version.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(version.join("bin")).unwrap();
    std::fs::create_dir_all(site.join("numpy-1.26.4.dist-info")).unwrap();
    std::fs::write(site.join("numpy-1.26.4.dist-info/METADATA"), "Name: numpy\nVersion: 1.26.4\n").unwrap();
    for name in ["python", "python3"] {
        std::fs::write(version.join("bin").join(name), "").unwrap();
    }
    std::fs::write(root.join("version"), "3.11.7\n").unwrap();
    let out = doctor()
        .current_dir(home.path())
        .env("PATH", &shims)
        .env("HOME", home.path())
        .env_remove("PYENV_VERSION")
        .args(["--fast", "--format", "json"])
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let pythons = report["snapshot"]["pythons"].as_array().unwrap();
    assert_eq!(pythons.len(), 1, "{:#}", report["snapshot"]["pythons"]);
    assert_eq!(pythons[0]["distributions"]["found"][0]["version"], "1.26.4");
}

#[test]
fn a_person_at_a_terminal_sees_progress_and_a_pipe_sees_none() {
    let dir = tempfile::tempdir().unwrap();
    // An interpreter that takes a second and then fails: the probe is slow.
    let slow = script(dir.path(), "python3", "#!/bin/sh\nsleep 1\nexit 1\n");
    let doctor_bin = assert_cmd::cargo::cargo_bin("onnx-doctor");
    // `script` gives the doctor a terminal on stderr.
    let command =
        format!("env -u CI NO_COLOR=1 {} --timeout 5 --python {}", doctor_bin.display(), slow.display());
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    let tty = String::from_utf8_lossy(&out.stdout);
    let progress = tty.find("importing the Python stack").unwrap_or_else(|| panic!("no progress in {tty:?}"));
    let erased = tty[progress..].find("\r\x1b[2K").expect("the progress line is erased");
    let report = tty.find("nothing could be probed").expect("the report follows");
    assert!(progress + erased < report, "{tty:?}");

    let piped = doctor().args(["--timeout", "5", "--python"]).arg(&slow).output().unwrap();
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("importing"), "progress written to a pipe");
}
