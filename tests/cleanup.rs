//! What the doctor leaves behind: nothing. A probe's background child dies
//! with its process group after a normal run; Ctrl-C or SIGTERM kills every
//! group the doctor started and removes its scratch directory; and a run of
//! many hanging interpreters ends at the whole-run deadline, saying which
//! were cut off. The Python probe writes into a private HOME, not the user's.
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::*;

/// Whether `pid` is gone (or a zombie nobody has reaped yet).
fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn eventually(what: &str, check: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// A fake interpreter that starts a detached `sleep` (its output sent away,
/// so it holds none of the doctor's pipes) and notes its pid.
fn leaves_a_daemon(dir: &Path, then: &str) -> std::path::PathBuf {
    let pids = dir.join("pids");
    script(
        dir,
        "python3",
        &format!(
            "#!/bin/sh\n/bin/sleep 300 </dev/null >/dev/null 2>&1 &\necho $! >> {}\n{then}\n",
            pids.display()
        ),
    )
}

#[test]
fn a_probe_that_leaves_a_background_child_does_not_outlive_the_run() {
    let t = tempfile::tempdir().unwrap();
    let fake = leaves_a_daemon(t.path(), "echo not a probe; exit 0");
    let out = doctor().args(["--format", "json", "--timeout", "5", "--python"]).arg(&fake).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let started = pids(&t.path().join("pids"));
    assert!(!started.is_empty(), "the fake interpreter ran");
    eventually("the probe's background child was left running", || started.iter().all(|p| dead(*p)));
}

#[test]
fn sigterm_kills_every_group_and_removes_the_scratch_directory() {
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let fake = leaves_a_daemon(t.path(), "exec /bin/sleep 300");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("onnx-doctor"))
        .args(["--format", "json", "--timeout", "120", "--python"])
        .arg(&fake)
        .env("TMPDIR", &tmp)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    eventually("the fake interpreter started", || !pids(&t.path().join("pids")).is_empty());
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1, "one scratch directory while it runs");
    // SAFETY: signalling the doctor this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "SIGTERM took {:?}", started.elapsed());
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    let left = pids(&t.path().join("pids"));
    eventually("a process the doctor started survived SIGTERM", || left.iter().all(|p| dead(*p)));
    let scratch: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(scratch.is_empty(), "scratch left behind: {scratch:?}");
}

#[test]
fn imports_that_hang_one_after_another_stop_at_the_whole_run_deadline_and_say_so() {
    // Every stack package's import hangs: the probe gives each its timeout
    // in a fresh process, one after another, eight seconds in all.
    let t = tempfile::tempdir().unwrap();
    let modules = t.path().join("modules");
    for module in
        ["numpy", "google/protobuf", "torch", "torchvision", "onnx", "onnxruntime", "tensorrt", "onnxscript"]
    {
        let file = modules.join(format!("{module}.py"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, "import time\ntime.sleep(60)\n").unwrap();
    }
    let fake = script(
        t.path(),
        "python3",
        &format!("#!/bin/sh\nPYTHONPATH={} exec {} \"$@\"\n", modules.display(), base_python()),
    );
    let started = Instant::now();
    let out = doctor().args(["--format", "json", "--timeout", "1", "--python"]).arg(&fake).output().unwrap();
    let took = started.elapsed();
    // The deadline is 4 × --timeout.
    assert!(took < Duration::from_millis(6000), "took {took:?}");
    let report = json(&out.stdout);
    let imports = report["snapshot"]["pythons"][0]["imports"].as_array().unwrap();
    let said: Vec<String> = imports.iter().map(|i| i["status"].to_string()).collect();
    assert!(said[0].contains("timed_out"), "{said:?}");
    assert!(said.iter().any(|s| s.contains("deadline")), "the imports cut off say so: {said:?}");
}

#[test]
fn the_python_probe_writes_nothing_in_the_users_home() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let seen = t.path().join("seen");
    // A stand-in for an import that fills ~/.cache: it writes where HOME
    // and XDG_CACHE_HOME say, and records where that was.
    let fake = script(
        t.path(),
        "python3",
        &format!(
            "#!/bin/sh\nmkdir -p \"$XDG_CACHE_HOME/onnxruntime\" \"$HOME/.config\" && touch \"$HOME/.config/x\"\n\
             echo \"$HOME $XDG_CACHE_HOME $PYTHONUSERBASE\" > {}\nexec {} \"$@\"\n",
            seen.display(),
            base_python()
        ),
    );
    let out = doctor()
        .args(["--format", "json", "--python"])
        .arg(&fake)
        .env("HOME", &home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("PYTHONUSERBASE")
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert!(report["snapshot"]["pythons"][0]["version"]["found"].is_string(), "{report}");
    let seen = std::fs::read_to_string(&seen).unwrap();
    let entries: Vec<_> = std::fs::read_dir(&home).unwrap().collect();
    assert!(entries.is_empty(), "the probe wrote into HOME: {entries:?} ({seen})");
    assert!(
        seen.trim_end().ends_with(&format!("{}/.local", home.display())),
        "user site still found: {seen}"
    );
}

#[test]
fn a_daemon_that_escapes_into_a_session_of_its_own_does_not_outlive_the_run() {
    // setsid() takes it out of the probe's process group, which the group
    // kill reaches; it is reparented to the doctor when its parent exits.
    let t = tempfile::tempdir().unwrap();
    let pids = t.path().join("pids");
    let fake = script(
        t.path(),
        "python3",
        &format!(
            "#!/bin/sh\n{py} -c 'import os, time; os.setsid(); time.sleep(300)' </dev/null >/dev/null 2>&1 &\n\
             echo $! >> {pids}\necho not a probe\n",
            py = base_python(),
            pids = pids.display()
        ),
    );
    let out = doctor().args(["--format", "json", "--timeout", "5", "--python"]).arg(&fake).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let started = self::pids(&pids);
    assert!(!started.is_empty(), "the fake interpreter ran");
    eventually("the setsid daemon was left running", || started.iter().all(|p| dead(*p)));
}

/// Runs the doctor on an interpreter that hangs, writing to `out`, and
/// sends `signal` once the interpreter has started.
fn interrupted_run(t: &Path, signal: i32, out: &Path) -> std::process::ExitStatus {
    let tmp = t.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let pids = t.join("pids");
    let _ = std::fs::remove_file(&pids);
    let fake = leaves_a_daemon(t, "exec /bin/sleep 300");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("onnx-doctor"))
        .args(["--format", "json", "--timeout", "120", "-o"])
        .arg(out)
        .arg("--python")
        .arg(&fake)
        .env("TMPDIR", &tmp)
        // SIGQUIT may dump core into the working directory.
        .current_dir(t)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    eventually("the fake interpreter started", || !self::pids(&pids).is_empty());
    // SAFETY: signalling the doctor this test started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    let left = self::pids(&pids);
    eventually("a process the doctor started survived the signal", || left.iter().all(|p| dead(*p)));
    let scratch: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(scratch.is_empty(), "scratch left behind: {scratch:?}");
    status
}

#[test]
fn sigquit_and_sigusr1_clean_up_like_sigterm() {
    use std::os::unix::process::ExitStatusExt;
    for signal in [libc::SIGQUIT, libc::SIGUSR1, libc::SIGHUP] {
        let t = tempfile::tempdir().unwrap();
        let status = interrupted_run(t.path(), signal, &t.path().join("report.json"));
        assert_eq!(status.signal(), Some(signal), "{status:?}");
    }
}

#[test]
fn an_interrupted_run_writes_no_report_and_leaves_no_temporary_file() {
    // The probes it killed would be reported as "killed by signal 9": a
    // report about the doctor, not the machine.
    for _ in 0..5 {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("out").join("report.json");
        std::fs::create_dir(out.parent().unwrap()).unwrap();
        interrupted_run(t.path(), libc::SIGINT, &out);
        let written: Vec<_> = std::fs::read_dir(out.parent().unwrap()).unwrap().collect();
        assert!(written.is_empty(), "an interrupted run wrote {written:?}");
    }
}

#[test]
fn with_tmpdir_unusable_nothing_is_written_beside_the_users_home() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let seen = t.path().join("seen");
    let fake = script(
        t.path(),
        "python3",
        &format!(
            "#!/bin/sh\nmkdir -p \"$XDG_CACHE_HOME/Microsoft\" 2>/dev/null\necho \"$HOME\" > {}\nexec {} \"$@\"\n",
            seen.display(),
            base_python()
        ),
    );
    let out = doctor()
        .args(["--format", "json", "--python"])
        .arg(&fake)
        .env("HOME", &home)
        .env("TMPDIR", t.path().join("gone"))
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert!(report["snapshot"]["pythons"][0]["version"]["found"].is_string(), "{report}");
    let seen = std::fs::read_to_string(&seen).unwrap();
    let beside: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !["home", "seen", "python3"].contains(&n.as_str()))
        .collect();
    assert!(beside.is_empty(), "written beside HOME: {beside:?} (HOME was {seen})");
    assert!(std::fs::read_dir(&home).unwrap().next().is_none(), "written into HOME");
    // A private home the doctor made (or one nothing can be made under),
    // never a directory of the machine's such as /home.
    assert!(seen.trim().contains("onnx-doctor"), "HOME was {seen}");
}
