//! The matrix from the outside: `rules`, `explain`, `--version`, and a
//! team's own `--matrix` directory, including every kind of mistake in it.

mod support;

use support::*;

fn overlay(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn stderr_of(dir: &tempfile::TempDir, args: &[&str]) -> (i32, String) {
    let (command, rest) = args.split_first().expect("a subcommand");
    let out = doctor().arg(command).arg("--matrix").arg(dir.path()).args(rest).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stderr).unwrap())
}

const RULE: &str = r#"rules:
  - code: team-pins-numpy
    severity: error
    components: [numpy]
    summary: Our models were validated with numpy 1.26 only.
    message: "numpy {numpy} is not the validated 1.26"
    why: Validation ran on numpy 1.26.
    fixes: ['python -m pip install "numpy==1.26.*"']
    sources: ["https://example.com/our-validation-report"]
    when:
      numpy: present
    require:
      numpy: "==1.26.*"
"#;

#[test]
fn rules_lists_every_rule_and_explain_shows_one_with_its_sources() {
    let out = doctor().arg("rules").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for code in ["onnxruntime-built-against-numpy1", "torchvision-not-paired-with-torch", "import-failed"] {
        assert!(text.contains(code), "{code} missing from:\n{text}");
    }
    let out = doctor().args(["explain", "onnx-protobuf4-descriptors"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("https://github.com/onnx/onnx/issues/4222"), "{text}");
    assert!(text.contains("Defined at matrix/python-packages.yaml:"), "{text}");
}

#[test]
fn explaining_an_unknown_code_is_a_usage_error_with_suggestions() {
    let out = doctor().args(["explain", "numpy1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("did you mean") && err.contains("onnxruntime-built-against-numpy1"), "{err}");
}

#[test]
fn version_names_the_matrix() {
    let out = doctor().arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("onnx-doctor ") && text.contains("(matrix 20") && text.contains("sha256"),
        "{text}"
    );
}

#[test]
fn an_overlay_adds_a_rule_that_judges_a_saved_snapshot() {
    let dir = overlay(&[("team.yaml", RULE)]);
    let venv = healthy_venv();
    let out = doctor()
        .args(["--matrix"])
        .arg(dir.path())
        .args(["--format", "json", "--python"])
        .arg(venv.join("bin/python"))
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(finding(&report, "team-pins-numpy")["message"].as_str().unwrap().starts_with("numpy 2."));
    assert_eq!(report["matrix"]["overlays"][0], dir.path().display().to_string());
}

#[test]
fn an_overlay_rule_with_an_existing_code_replaces_the_embedded_one() {
    let replaced = RULE
        .replace("team-pins-numpy", "onnxruntime-built-against-numpy1")
        .replace("severity: error", "severity: info");
    let dir = overlay(&[("override.yaml", &replaced)]);
    let out = doctor()
        .args(["explain", "onnxruntime-built-against-numpy1", "--matrix"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("onnxruntime-built-against-numpy1 (info)"), "{text}");
    assert!(text.contains("override.yaml:2:"), "{text}");
    let rules = doctor().arg("rules").arg("--matrix").arg(dir.path()).output().unwrap();
    let rules = String::from_utf8(rules.stdout).unwrap();
    assert_eq!(rules.matches("onnxruntime-built-against-numpy1").count(), 1, "{rules}");
}

#[test]
fn a_misspelled_key_is_reported_at_its_line_and_column() {
    let dir = overlay(&[("team.yaml", &RULE.replace("    why:", "    wy:"))]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3);
    assert!(err.contains("team.yaml:7:5: unknown field `wy`"), "{err}");
}

#[test]
fn an_unparsable_specifier_is_reported_at_its_line_and_column() {
    let dir = overlay(&[("team.yaml", &RULE.replace("\"==1.26.*\"\n", "\"=1.26\"\n"))]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3);
    assert!(err.contains("team.yaml:13:14: invalid version specifier \"=1.26\""), "{err}");
}

#[test]
fn a_duplicate_code_in_one_overlay_is_reported_where_it_repeats() {
    let dir = overlay(&[("a.yaml", RULE), ("b.yaml", RULE)]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3);
    assert!(err.contains("b.yaml:2:11: rule code `team-pins-numpy` is already used at"), "{err}");
    assert!(err.contains("a.yaml:2:11"), "{err}");
}

#[test]
fn a_rule_without_a_source_is_refused() {
    let dir = overlay(&[(
        "team.yaml",
        &RULE.replace("    sources: [\"https://example.com/our-validation-report\"]\n", ""),
    )]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3);
    assert!(err.contains("team.yaml:2:11: rule `team-pins-numpy` has no sources"), "{err}");
}

#[test]
fn an_api_history_names_its_package_as_pip_lists_it() {
    let api = |package: &str| {
        format!(
            "python_apis:\n  PIL.Image.LINEAR: {{ package: {package}, removed: \"10.0\", source: https://example.com/notes }}\n"
        )
    };
    // A package beside the stack is read under its normalized name.
    for package in ["pillow", "Pillow"] {
        let dir = overlay(&[("team.yaml", &api(package))]);
        assert_eq!(stderr_of(&dir, &["rules"]).0, 0, "{package}");
    }
    let dir = overlay(&[("team.yaml", &api("\"\""))]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3);
    assert!(err.contains("PIL.Image.LINEAR: names no package"), "{err}");
}

#[test]
fn a_yaml_syntax_error_is_reported_with_its_position() {
    let dir = overlay(&[("team.yaml", "rules:\n  - code: [unclosed\n")]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3);
    assert!(err.contains("team.yaml:"), "{err}");
    assert!(!err.contains("team.yaml:0:0"), "{err}");
}

#[test]
fn a_missing_matrix_directory_is_reported() {
    let out = doctor().args(["rules", "--matrix", "/nonexistent/matrix"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8(out.stderr).unwrap().contains("/nonexistent/matrix"));
}

#[test]
fn an_unreadable_snapshot_exits_3_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("snap.json");
    std::fs::write(&bad, "{\"schema_version\": 99}").unwrap();
    let out = doctor().arg("--snapshot").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8(out.stderr).unwrap().contains("schema version 99"));
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(doctor().args(["--format", "yaml"]).output().unwrap().status.code(), Some(2));
    assert_eq!(doctor().args(["--timeout", "-1"]).output().unwrap().status.code(), Some(2));
}

fn signature_rule(code: &str, signature: &str, message: &str, fix: &str) -> String {
    format!(
        r#"rules:
  - code: {code}
    severity: error
    components: [onnx]
    summary: A team's own error line.
    message: "{message}"
    why: Seen in our logs.
    fixes: ['{fix}']
    sources: ["https://example.com/our-runbook"]
    signature: '{signature}'
"#
    )
}

#[test]
fn a_signature_too_big_to_compile_is_an_error_at_its_line_not_a_silent_loss_of_every_signature() {
    let dir = overlay(&[("big.yaml", &signature_rule("team-huge", r"(?:\w{100}){100}", "huge", "nothing"))]);
    let started = std::time::Instant::now();
    let (code, err) = stderr_of(&dir, &["diagnose", "-"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("big.yaml:10:") && err.contains("size limit"), "{err}");
}

#[test]
fn a_signature_placeholder_no_group_fills_is_an_error_at_load() {
    let rule = signature_rule(
        "team-onnx",
        "my error happened",
        "onnx {version} broke",
        r#"pip install "onnx=={version}""#,
    );
    let dir = overlay(&[("t.yaml", &rule)]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("t.yaml:10:")
            && err.contains("`{version}` in rule `team-onnx` is filled by no named group"),
        "{err}"
    );
    assert_eq!(err.matches("{version}").count(), 1, "one error per placeholder: {err}");

    // Named by a group, the same text loads and fills in.
    let rule = signature_rule(
        "team-onnx",
        r"onnx (?P<version>\d+\.\d+) broke",
        "onnx {version} broke",
        r#"pip install "onnx=={version}""#,
    );
    let dir = overlay(&[("t.yaml", &rule)]);
    let out = doctor()
        .args(["diagnose", "-", "--format", "json", "--matrix"])
        .arg(dir.path())
        .write_stdin("onnx 1.17 broke\n")
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert_eq!(finding(&report, "team-onnx")["fixes"][0], r#"python -m pip install "onnx==1.17""#);
}

#[test]
fn a_misspelt_fact_is_refused_where_it_is_written_with_the_name_meant() {
    let typo = RULE.replace("    when:\n      numpy: present\n", "    when:\n      torhc: \"<2.15\"\n");
    let dir = overlay(&[("policy.yaml", &typo)]);
    let (code, err) = stderr_of(&dir, &["--fast"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("policy.yaml:11:7: `torhc` is no fact") && err.contains("did you mean `torch`?"),
        "{err}"
    );

    // The same in every place a fact is named: a placeholder, a lookup, a
    // stack package's fact.
    for (from, to, said) in [
        ("numpy {numpy} is not", "numpy {numpy.relase} is not", "did you mean `numpy.release`?"),
        (
            "      numpy: present\n",
            "      numpy: present\n    lookup: onnx-releases by onxn\n",
            "did you mean `onnx`?",
        ),
        (
            "      numpy: present\n",
            "      gpu.compute_capabilty: present\n",
            "did you mean `gpu.compute_capability`?",
        ),
        ("      numpy: present\n", "      onnx.ir_versoin: present\n", "did you mean `onnx.ir_version`?"),
    ] {
        let dir = overlay(&[("policy.yaml", &RULE.replace(from, to))]);
        let (code, err) = stderr_of(&dir, &["--fast"]);
        assert_eq!(code, 3, "{to}: {err}");
        assert!(err.contains("policy.yaml:") && err.contains(said), "{to}: {err}");
    }
}

#[test]
fn a_fix_with_a_fact_the_environment_lacks_is_left_out_not_shown_with_a_hole() {
    let rule = RULE.replace(
        r#"fixes: ['python -m pip install "numpy==1.26.*"']"#,
        r#"fixes: ['python -m pip install "torch=={torch.release}"', 'python -m pip install "numpy==1.26.*"']"#,
    );
    let dir = overlay(&[("team.yaml", &rule)]);
    let out = doctor()
        .args(["diagnose", "-", "--format", "json", "--matrix"])
        .arg(dir.path())
        .write_stdin("[pip3] numpy==2.1.0\n[pip3] onnx==1.17.0\n")
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let fixes = finding(&report, "team-pins-numpy")["fixes"].clone();
    assert_eq!(fixes, serde_json::json!([r#"python -m pip install "numpy==1.26.*""#]), "{fixes}");
}

#[test]
fn an_errors_likely_cause_must_be_one_the_facts_decide() {
    let cause = |decided: &str| {
        format!(
            "{}    likely:\n      - cause: \"the image lacks it\"\n{decided}        confirm: \"docker info\"\n        fix: \"use the runtime\"\n        source: https://example.com/our-runbook\n",
            signature_rule("team-lib", "libfoo missing", "libfoo is missing", "install libfoo")
        )
    };
    let dir = overlay(&[("t.yaml", &cause(""))]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("a likely cause of `team-lib` has no `decided_by`"), "{err}");
    let dir = overlay(&[("t.yaml", &cause("        decided_by:\n          container: present\n"))]);
    let (code, err) = stderr_of(&dir, &["rules"]);
    assert_eq!(code, 0, "{err}");
}
