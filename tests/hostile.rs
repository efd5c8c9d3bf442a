//! Hostile and unlucky input: FIFOs that would block forever, devices that
//! never end, directories where files were expected. The doctor refuses
//! each at once and says what it is.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::*;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs the doctor with a deadline far below what a hang would take.
fn quickly(args: &[&str]) -> std::process::Output {
    let started = Instant::now();
    let out = doctor().timeout(Duration::from_secs(20)).args(args).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", started.elapsed());
    out
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_device_as_a_paste_is_refused_instead_of_read_forever() {
    let out = quickly(&["diagnose", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("a device, not a regular file"), "{}", stderr(&out));
}

#[test]
fn fifos_given_as_a_model_a_snapshot_or_a_paste_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("f");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    for args in [vec!["model", f], vec!["--snapshot", f], vec!["diagnose", f]] {
        let out = quickly(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(stderr(&out).contains("FIFO"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_fifo_or_a_device_link_in_a_matrix_directory_is_an_error_with_its_name() {
    let t = tempfile::tempdir().unwrap();
    mkfifo(&t.path().join("a.yaml"));
    std::os::unix::fs::symlink("/dev/zero", t.path().join("b.yaml")).unwrap();
    let out = quickly(&["rules", "--matrix", t.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("a.yaml") && err.contains("FIFO"), "{err}");
}

#[test]
fn a_directory_named_like_a_model_says_it_is_a_directory() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("x.onnx");
    std::fs::create_dir(&dir).unwrap();
    let out = quickly(&["model", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("it is a directory"), "{}", stderr(&out));
}

#[test]
fn fifos_and_devices_under_root_and_in_metadata_do_not_block_the_fast_check() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    for dir in ["etc", "proc/driver/nvidia"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    mkfifo(&root.join("etc/os-release"));
    mkfifo(&root.join("proc/driver/nvidia/version"));
    std::os::unix::fs::symlink("/dev/zero", root.join("etc/ld.so.cache")).unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["onnx-1.17.0"]);
    let site = site_packages(&env);
    std::fs::remove_file(site.join("onnx-1.17.0.dist-info/METADATA")).unwrap();
    mkfifo(&site.join("onnx-1.17.0.dist-info/METADATA"));
    let out = quickly(&[
        "--fast",
        "--format",
        "json",
        "--root",
        root.to_str().unwrap(),
        "--nvml-lib",
        "/nonexistent/libnvidia-ml.so.1",
        "--python",
        env.to_str().unwrap(),
    ]);
    let report = json(&out.stdout);
    assert_eq!(report["snapshot"]["pythons"][0]["distributions"]["found"][0]["name"], "onnx");
}
