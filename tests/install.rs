//! The artifacts in install/: the install script run for real into a
//! temporary prefix, the Kubernetes manifests checked against the object
//! structure, the Slurm script checked by bash (and shellcheck if present).
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn install_sh_installs_a_working_binary_and_can_run_again() {
    let prefix = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("onnx-doctor");
    for _ in 0..2 {
        let out = Command::new("bash")
            .arg(root().join("install/install.sh"))
            .arg("--binary")
            .arg(&binary)
            .arg("--prefix")
            .arg(prefix.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("installed onnx-doctor ") && said.contains("(matrix "), "{said}");
    }
    let v = Command::new(prefix.path().join("bin/onnx-doctor")).arg("--version").output().unwrap();
    assert!(v.status.success());
}

#[test]
fn install_sh_without_cargo_says_how_to_get_it() {
    let out = Command::new("bash")
        .arg(root().join("install/install.sh"))
        .arg("--prefix")
        .arg(tempfile::tempdir().unwrap().path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cargo is not installed"));
}

fn manifest(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("install/kubernetes").join(name)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn pod_checks(pod: &serde_json::Value, name: &str) {
    // The doctor runs as the init container where there is one (its exit
    // code is the pod's status), else as the container.
    let c = if pod["initContainers"].is_array() { &pod["initContainers"][0] } else { &pod["containers"][0] };
    assert!(c["image"].is_string(), "{name}: image");
    assert_eq!(pod["runtimeClassName"], "nvidia", "{name}");
    assert_eq!(pod["tolerations"][0]["key"], "nvidia.com/gpu", "{name}");
    assert!(pod["nodeSelector"].is_object(), "{name}");
    let mounts = c["volumeMounts"].as_array().unwrap();
    let host = mounts.iter().filter(|m| m["mountPath"].as_str().unwrap().starts_with("/host/"));
    assert!(
        host.clone().count() >= 3 && host.into_iter().all(|m| m["readOnly"] == true),
        "{name}: host mounts"
    );
    let volumes: Vec<&str> =
        pod["volumes"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    for m in mounts {
        assert!(volumes.contains(&m["name"].as_str().unwrap()), "{name}: mount without a volume");
    }
    let args = c["args"].to_string();
    assert!(
        args.contains("--json") && args.contains("$(NODE_NAME)") && args.contains("--root"),
        "{name}: {args}"
    );
}

#[test]
fn the_kubernetes_daemonset_and_job_have_the_fields_they_need() {
    let ds = manifest("daemonset.yaml");
    assert_eq!(ds["apiVersion"], "apps/v1");
    assert_eq!(ds["kind"], "DaemonSet");
    assert_eq!(ds["spec"]["selector"]["matchLabels"], ds["spec"]["template"]["metadata"]["labels"]);
    pod_checks(&ds["spec"]["template"]["spec"], "daemonset");

    let job = manifest("job.yaml");
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    pod_checks(&job["spec"]["template"]["spec"], "job");
}

#[test]
fn the_slurm_script_is_valid_bash_and_refuses_to_run_outside_an_allocation() {
    let script = root().join("install/slurm/onnx-doctor-allocation.sh");
    assert!(Command::new("bash").arg("-n").arg(&script).status().unwrap().success());
    if let Ok(out) = Command::new("shellcheck").arg(&script).output() {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    }
    let out = Command::new("bash").arg(&script).env_remove("SLURM_JOB_ID").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside a Slurm allocation"));
}

/// `install/Dockerfile.example`'s instructions, continuation lines joined.
fn dockerfile_example() -> (String, Vec<String>) {
    let text = std::fs::read_to_string(root().join("install/Dockerfile.example")).unwrap();
    let joined = text.replace("\\\n", " ");
    let instructions =
        joined.lines().filter(|l| !l.trim_start().starts_with('#')).map(str::to_string).collect();
    (text, instructions)
}

/// The environment the example image holds, as dist-info metadata: what
/// its base image holds (the comment above FROM says) and what its pip line
/// installs, with `replace` applied to that line.
fn image_environment(dir: &Path, replace: (&str, &str)) -> PathBuf {
    let (text, instructions) = dockerfile_example();
    let holds =
        text.lines().find_map(|l| l.strip_prefix("# This base image holds ")).expect("a holds comment");
    let (packages, python) = holds.split_once(" on python==").unwrap();
    let pip = instructions.iter().find(|l| l.contains("pip install")).expect("a pip install line");
    let pip = pip.replace(replace.0, replace.1);
    let words = shlex::split(&pip).unwrap();
    let mut dists: Vec<String> = packages.split_whitespace().map(str::to_string).collect();
    dists.extend(words.iter().filter(|w| w.contains("==")).cloned());
    // The newest onnxruntime-gpu when this test was written, which an
    // unpinned ">=1.19" installs: a CUDA 13 build.
    dists.extend(
        words
            .iter()
            .filter(|w| w.as_str() == "onnxruntime-gpu>=1.19")
            .map(|_| "onnxruntime-gpu==1.31.1".into()),
    );
    let dists: Vec<String> = dists
        .iter()
        .map(|d| {
            let (name, version) = d.split_once("==").unwrap_or_else(|| panic!("unpinned: {d}"));
            format!("{}-{version}", name.replace('-', "_"))
        })
        .collect();
    let dists: Vec<&str> = dists.iter().map(String::as_str).collect();
    support::metadata_env(dir, python.trim(), &dists)
}

/// The gate's command line in the example, its --json file moved to `json`.
fn gate_args(json: &Path, drop: &str) -> Vec<String> {
    let (_, instructions) = dockerfile_example();
    let gate = instructions.iter().find(|l| l.contains("onnx-doctor --json")).expect("the gate");
    let words = shlex::split(gate).unwrap();
    let start = words.iter().position(|w| w == "onnx-doctor").unwrap() + 1;
    let mut args: Vec<String> = words[start..].to_vec();
    let at = args.iter().position(|w| w == "--json").unwrap();
    args[at + 1] = json.to_str().unwrap().to_string();
    if let Some(at) = args.iter().position(|w| w == drop) {
        args.drain(at - 1..=at);
    }
    args
}

#[test]
fn the_dockerfile_gate_passes_as_written_and_fails_the_build_unpinned() {
    let dir = tempfile::tempdir().unwrap();
    let env = image_environment(&dir.path().join("pinned"), ("", ""));
    let json = dir.path().join("report.json");
    // The image's own Python, read without running it (no torch here).
    let run = |env: &Path, args: &[String]| {
        support::doctor()
            .args(args)
            .args(["--fast", "--nvml-lib", "/nonexistent.so", "--python"])
            .arg(env)
            .output()
            .unwrap()
    };
    let out = run(&env, &gate_args(&json, ""));
    let log = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(log.lines().count() < 25 && log.contains("healthy"), "a short verdict in the build log:\n{log}");
    let report = support::json(&std::fs::read(&json).unwrap());
    assert_eq!(report["summary"]["errors"], 0, "{report}");

    let env =
        image_environment(&dir.path().join("unpinned"), ("onnxruntime-gpu==1.22.0", "onnxruntime-gpu>=1.19"));
    let out = run(&env, &gate_args(&json, "onnxruntime-gpu==1.22.*"));
    let log = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("driver-too-old-for-onnxruntime-gpu"), "{log}");
}

#[test]
fn the_slurm_script_writes_a_report_per_node_and_ends_with_the_fleet() {
    // srun and hostname as a two-node allocation would run them.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    support::script(
        &bin,
        "srun",
        "#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\nfor n in node-a node-b; do FAKE_NODE=$n \"$@\"; done\n",
    );
    support::script(&bin, "hostname", "#!/bin/sh\necho \"$FAKE_NODE\"\n");
    let doctor = assert_cmd::cargo::cargo_bin("onnx-doctor");
    std::os::unix::fs::symlink(&doctor, bin.join("onnx-doctor")).unwrap();
    let python = support::metadata_env(&dir.path().join("env"), "3.11.9", &["numpy-1.26.4"]);
    let out = Command::new("bash")
        .arg(root().join("install/slurm/onnx-doctor-allocation.sh"))
        .arg(dir.path().join("reports"))
        .args(["--", "--fast", "--nvml-lib", "/nonexistent.so", "--python"])
        .arg(&python)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("SLURM_JOB_ID", "42")
        .env("SLURM_JOB_NUM_NODES", "2")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("node-a: healthy") && said.contains("node-b: healthy"), "{said}");
    assert!(said.contains("2 node reports"), "{said}");
    for node in ["node-a", "node-b"] {
        assert!(dir.path().join(format!("reports/{node}.json")).is_file());
    }
}
