//! The user's side of a ticket: the Markdown report, redacted by default,
//! and fed back to `diagnose` with the same findings.

mod support;

use support::*;

fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: a valid buffer of the given length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0)?;
    let name = String::from_utf8_lossy(&buf[..end]).to_string();
    (rc == 0 && name.len() >= 3 && name != "localhost").then_some(name)
}

#[test]
fn the_markdown_report_hides_who_and_where_unless_asked_not_to() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home/zanzibar");
    let host = hostname();
    let secret = "hf_S3cretValue99";
    let project = home.join(format!("proj-{}-{secret}", host.clone().unwrap_or_else(|| "nohost".into())));
    let env = metadata_env(&project.join("env"), "3.11.9", &["onnxruntime-1.17.1", "numpy-2.0.1"]);
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(
        root.join("etc/os-release"),
        "PRETTY_NAME=\"Ubuntu 22.04 (admin@example.com at 10.20.30.40)\"\n",
    )
    .unwrap();
    let lib = fake_nvml(t.path(), &[]);
    let run = |extra: &[&str]| {
        let out = doctor()
            .env("HOME", &home)
            .env("USER", "zanzibar")
            .env("HF_TOKEN", secret)
            .arg("report")
            .args(["--fast", "--nvml-lib"])
            .arg(&lib)
            .arg("--root")
            .arg(&root)
            .arg("--python")
            .arg(&env)
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let redacted = run(&[]);
    for private in ["zanzibar", secret, "GPU-00000000-1111", "admin@example.com", "10.20.30.40"] {
        assert!(!redacted.contains(private), "{private} leaked:\n{redacted}");
    }
    if let Some(h) = &host {
        assert!(!redacted.contains(h.as_str()), "host name {h} leaked");
    }
    for placeholder in ["<home>", "<gpu-uuid-0>", "<email>", "<ip>", "<secret:HF_TOKEN>"] {
        assert!(redacted.contains(placeholder), "{placeholder} missing:\n{redacted}");
    }
    // Versions that look like addresses are not addresses.
    assert!(redacted.contains("570.124.06"), "{redacted}");

    let plain = run(&["--no-redact"]);
    for private in ["zanzibar", secret, "GPU-00000000-1111", "admin@example.com", "10.20.30.40"] {
        assert!(plain.contains(private), "{private} missing without redaction");
    }
}

#[test]
fn a_markdown_report_fed_to_diagnose_gives_the_same_findings_as_check() {
    let t = tempfile::tempdir().unwrap();
    let env = metadata_env(
        &t.path().join("env"),
        "3.11.9",
        &["onnxruntime-1.17.1", "numpy-2.0.1", "torch-2.1.0+cu121"],
    );
    let lib = fake_nvml(
        t.path(),
        &["DRIVER=\"470.82.01\"", "CUDA_INT=11040", "GPU0_NAME=\"Tesla T4\"", "GPU0_CC=7,5"],
    );
    let base = |cmd: &mut assert_cmd::Command| {
        cmd.args(["--fast", "--nvml-lib"]).arg(&lib).arg("--python").arg(&env);
    };
    let mut check = doctor();
    base(&mut check);
    let check = check.args(["--format", "json", "--redact"]).output().unwrap();
    let mut md = doctor();
    base(&mut md);
    let md = md.args(["--format", "markdown"]).output().unwrap();
    assert!(String::from_utf8_lossy(&md.stdout).starts_with("## onnx-doctor report"));

    let again =
        doctor().args(["diagnose", "--format", "json", "--redact"]).write_stdin(md.stdout).output().unwrap();
    assert_eq!(check.status.code(), again.status.code());
    let (a, b) = (json(&check.stdout), json(&again.stdout));
    assert!(finding_codes(&a).contains(&"driver-too-old-for-torch-cuda".to_string()));
    assert_eq!(a["findings"], b["findings"]);
}

/// Tokens pasted into a ticket, in the shapes they come in. Each must be
/// gone from the redacted Markdown, and from its JSON block even when the
/// secret holds a quote or a backslash that JSON would escape.
#[test]
fn secrets_in_a_pasted_traceback_are_redacted_but_cpp_scopes_and_versions_stay() {
    let secrets = [
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
        "hf_abcdefghijklmnopqrstuvwxyz0123",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-abcdefghij",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
        "wJalrXUtnFEMI/K7MDENG/bPx\"RfiCY\\EXAMPLEKEY",
        "s3cr3t-pass",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "/home/alice",
    ];
    let paste = format!(
        "PyTorch version: 2.1.0+cu121\n[pip3] torch==2.3.1\n\
         RuntimeError: c10::Error CUDA error: no kernel image is available for execution on the device \
         {} {} token={} {} {} {} jwt {} AWS_SECRET_ACCESS_KEY={} https://bob:{}@mirror.example/simple \
         -----BEGIN RSA PRIVATE KEY----- {} -----END RSA PRIVATE KEY----- in {}/proj \
         MY_API_KEY=python TensorRT 8.6.1.6 with python\n",
        secrets[0],
        secrets[1],
        secrets[2],
        secrets[3],
        secrets[4],
        secrets[5],
        secrets[6],
        secrets[7],
        secrets[8],
        secrets[9],
        secrets[10]
    );
    // The engineer's own environment has a secret-named variable holding a word.
    let md = doctor()
        .args(["diagnose", "-", "--format", "markdown"])
        .env("MY_API_KEY", "python")
        .write_stdin(paste)
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    let json_escaped = serde_json::to_string(secrets[7]).unwrap();
    for secret in secrets.iter().chain([&"RfiCY", &json_escaped.trim_matches('"')]) {
        assert!(!md.contains(secret), "{secret} leaked:\n{md}");
    }
    let quoted = md.lines().find(|l| l.contains("no kernel image")).expect("the error line is quoted");
    for kept in ["c10::Error", "8.6.1.6", "MY_API_KEY=python", "with python", "mirror.example"] {
        assert!(quoted.contains(kept), "{kept} was redacted: {quoted}");
    }
}
