//! The artifacts in install/: the install script run for real into a
//! temporary prefix, the Kubernetes manifests checked against the object
//! structure, the Slurm script checked by bash (and shellcheck if present).
#![allow(clippy::disallowed_methods)]

use std::path::Path;
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
    let c = &pod["containers"][0];
    assert!(c["image"].is_string(), "{name}: image");
    assert_eq!(pod["runtimeClassName"], "nvidia", "{name}");
    assert_eq!(pod["tolerations"][0]["key"], "nvidia.com/gpu", "{name}");
    assert!(pod["nodeSelector"].is_object(), "{name}");
    let mounts = c["volumeMounts"].as_array().unwrap();
    assert!(mounts.iter().all(|m| m["readOnly"] == true), "{name}: host mounts are read-only");
    let volumes: Vec<&str> =
        pod["volumes"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    for m in mounts {
        assert!(volumes.contains(&m["name"].as_str().unwrap()), "{name}: mount without a volume");
    }
    let args = c["args"].to_string();
    assert!(args.contains("--format") && args.contains("json") && args.contains("--root"), "{name}: {args}");
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
