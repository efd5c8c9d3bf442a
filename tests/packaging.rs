//! The release artifacts `scripts/release` builds into `dist/`: portable
//! binaries (glibc 2.17 floor, x86_64 and aarch64), manylinux wheels, and
//! the optional static musl binary. They are tested where
//! `ONNX_DOCTOR_DIST` names that directory (`.ci/run` builds them and sets
//! it: building them takes minutes); elsewhere these tests say so and pass.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use support::*;

/// The glibc every Linux binary of a release must run on: CentOS 7's.
const GLIBC_FLOOR: (u32, u32) = (2, 17);

/// `dist/`, or None (with a note) where this run has no release to test.
fn dist() -> Option<PathBuf> {
    match std::env::var_os("ONNX_DOCTOR_DIST") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("no release to test: run scripts/release and set ONNX_DOCTOR_DIST=dist");
            None
        }
    }
}

/// The artifacts in `dist` whose names start with `prefix` and end with `suffix`.
fn artifacts(dist: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dist)
        .unwrap_or_else(|e| panic!("{}: {e}", dist.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    found.sort();
    found
}

fn binary(dist: &Path, arch: &str) -> PathBuf {
    let found = artifacts(dist, "onnx-doctor-", &format!("-{arch}-linux-gnu"));
    assert_eq!(found.len(), 1, "one {arch} binary in {}: {found:?}", dist.display());
    found.into_iter().next().unwrap()
}

/// The newest `GLIBC_x.y` symbol version `file` requires, its machine and
/// its interpreter.
fn glibc_needed(file: &Path) -> ((u32, u32), u16, Option<String>) {
    let bytes = std::fs::read(file).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let mut newest = (0, 0);
    for need in elf.verneed.iter().flat_map(|v| v.iter()) {
        for aux in need.iter() {
            let name = elf.dynstrtab.get_at(aux.vna_name).unwrap_or("");
            if let Some(v) = name.strip_prefix("GLIBC_") {
                let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
                newest = newest.max((parts.next().unwrap_or(0), parts.next().unwrap_or(0)));
            }
        }
    }
    (newest, elf.header.e_machine, elf.interpreter.map(str::to_string))
}

#[test]
fn binaries_need_no_glibc_newer_than_2_17() {
    let Some(dist) = dist() else { return };
    for (arch, machine, loader) in [
        ("x86_64", goblin::elf::header::EM_X86_64, "/lib64/ld-linux-x86-64.so.2"),
        ("aarch64", goblin::elf::header::EM_AARCH64, "/lib/ld-linux-aarch64.so.1"),
    ] {
        let file = binary(&dist, arch);
        let (newest, e_machine, interpreter) = glibc_needed(&file);
        let size = std::fs::metadata(&file).unwrap().len();
        eprintln!("{}: needs GLIBC_{}.{}, {size} bytes", file.display(), newest.0, newest.1);
        assert_eq!(e_machine, machine, "{}", file.display());
        assert_eq!(interpreter.as_deref(), Some(loader), "{}", file.display());
        assert!(
            newest >= (2, 2) && newest <= GLIBC_FLOOR,
            "{}: GLIBC_{}.{}",
            file.display(),
            newest.0,
            newest.1
        );
    }
}

/// `qemu-aarch64` with the aarch64 C library as its root, where installed
/// (CI installs Debian's qemu-user-static and libc6-arm64-cross).
fn qemu_aarch64() -> Option<Command> {
    let sysroot = Path::new("/usr/aarch64-linux-gnu");
    for qemu in ["qemu-aarch64-static", "qemu-aarch64"] {
        let found = Command::new(qemu).arg("--version").output().is_ok_and(|o| o.status.success());
        if found && sysroot.is_dir() {
            let mut cmd = Command::new(qemu);
            cmd.arg("-L").arg(sysroot);
            return Some(cmd);
        }
    }
    assert!(std::env::var_os("CI").is_none(), "CI needs qemu-aarch64 and /usr/aarch64-linux-gnu");
    eprintln!("no qemu-aarch64 here: the aarch64 binary is not run");
    None
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/snapshots/{name}.json", env!("CARGO_MANIFEST_DIR"))
}

/// Runs a release binary (through `runner` when given) with `args`:
/// its exit code and standard output.
fn run(runner: Option<Command>, bin: &Path, args: &[&str], stdin: &str) -> (i32, String) {
    let mut cmd = match runner {
        Some(mut r) => {
            r.arg(bin);
            r
        }
        None => Command::new(bin),
    };
    cmd.args(args)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn both_architectures_judge_a_snapshot_and_a_paste_alike() {
    let Some(dist) = dist() else { return };
    let x86 = binary(&dist, "x86_64");
    let arm = binary(&dist, "aarch64");
    let paste = "PyTorch version: 2.6.0+cu126\nCUDA used to build PyTorch: 12.6\n\
                 Nvidia driver version: 525.60.13\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090\n";
    let cases: [(&[&str], &str); 3] = [
        (&["--version"], ""),
        (&["--snapshot", &fixture("five-envs"), "--format", "json"], ""),
        (&["diagnose", "--format", "json"], paste),
    ];
    for (args, stdin) in cases {
        let (code, x86_out) = run(None, &x86, args, stdin);
        assert!(code == 0 || code == 1, "{args:?}: exit {code}\n{x86_out}");
        assert!(!x86_out.is_empty(), "{args:?}");
        let Some(qemu) = qemu_aarch64() else { continue };
        let started = Instant::now();
        let (arm_code, arm_out) = run(Some(qemu), &arm, args, stdin);
        eprintln!("aarch64 under qemu, {args:?}: {:.2} s", started.elapsed().as_secs_f64());
        assert_eq!((arm_code, arm_out), (code, x86_out), "{args:?}");
    }
}

#[test]
fn the_manylinux_wheel_installs_in_seconds_and_checks_its_environment() {
    let Some(dist) = dist() else { return };
    let wheels = artifacts(&dist, "onnx_stack_doctor-", ".whl");
    let names: Vec<String> =
        wheels.iter().map(|w| w.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for arch in ["x86_64", "aarch64"] {
        assert!(
            names.iter().any(|n| n.contains(&format!("manylinux2014_{arch}"))
                && n.contains(&format!("manylinux_2_17_{arch}"))),
            "{names:?}"
        );
    }
    let wheel = wheels.iter().find(|w| w.to_string_lossy().ends_with("_x86_64.whl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let made = Command::new(base_python()).args(["-m", "venv"]).arg(&venv).status().unwrap();
    assert!(made.success());
    let started = Instant::now();
    let installed = Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--no-index", "--disable-pip-version-check"])
        .arg(wheel)
        .status()
        .unwrap();
    assert!(installed.success());
    eprintln!("pip install {}: {:.2} s", wheel.display(), started.elapsed().as_secs_f64());

    let bin = venv.join("bin/onnx-doctor");
    let (code, version) = run(None, &bin, &["--version"], "");
    assert_eq!(code, 0);
    assert!(version.starts_with(&format!("onnx-doctor {}", env!("CARGO_PKG_VERSION"))), "{version}");
    // A real check of the environment it was installed into: a Python
    // with none of the stack, which is healthy.
    let python = venv.join("bin/python");
    let (code, out) = run(None, &bin, &["--python", python.to_str().unwrap(), "--format", "json"], "");
    assert_eq!(code, 0, "{out}");
    let report = json(out.as_bytes());
    let probed = report["snapshot"]["pythons"][0]["executable"].as_str().unwrap_or_default().to_string();
    assert!(probed.starts_with(venv.to_str().unwrap()), "{probed}");
}

#[test]
fn the_static_musl_binary_says_it_cannot_load_nvml() {
    let Some(dist) = dist() else { return };
    let Some(musl) = artifacts(&dist, "onnx-doctor-", "-x86_64-linux-musl").into_iter().next() else {
        eprintln!("no musl build in {} (scripts/release --musl)", dist.display());
        return;
    };
    let (_, _, interpreter) = glibc_needed(&musl);
    assert_eq!(interpreter, None, "static: no dynamic loader");
    let (_, out) = run(None, &musl, &["--fast", "--format", "json"], "");
    let report = json(out.as_bytes());
    let nvml = report["snapshot"]["nvidia"]["found"]["nvml"].to_string();
    assert!(nvml.contains("static (musl) build") && nvml.contains("glibc build"), "{nvml}");
}
