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

/// Each finding as (code, severity, subject): what a re-check must give back.
fn judged(report: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("code"), s("severity"), s("subject"))
        })
        .collect();
    v.sort();
    v
}

/// `report` then `diagnose` gives the verdict `check` gave, for the real
/// test environments, as root and as users whose names are ordinary words
/// of a report ("debian" is a distro id, "python" part of package names).
#[test]
fn the_report_round_trip_keeps_the_verdict_for_every_user() {
    let venvs = [healthy_venv(), ort117_numpy2_venv(), onnx113_protobuf319_venv(), onnxruntime_gpu_venv()];
    for user in ["root", "debian", "python", "onnx"] {
        for venv in &venvs {
            let run = |args: &[&str]| {
                doctor()
                    .env("USER", user)
                    .env("HOME", format!("/home/{user}"))
                    .args(args)
                    .arg("--python")
                    .arg(venv)
                    .output()
                    .unwrap()
            };
            let check = run(&["--format", "json", "--no-trials"]);
            let report = run(&["report", "--no-trials"]);
            let md = String::from_utf8(report.stdout).unwrap();
            assert!(!md.contains("\"<user>\"") && !md.contains("<user>-"), "{user}: a value became <user>");
            let again = doctor()
                .args(["diagnose", "--format", "json"])
                .write_stdin(md.as_bytes().to_vec())
                .output()
                .unwrap();
            assert_eq!(check.status.code(), again.status.code(), "{user} {venv:?}");
            assert_eq!(judged(&json(&check.stdout)), judged(&json(&again.stdout)), "{user} {venv:?}");
        }
    }
}

/// Five environments of 226 distributions each: the report fits an issue,
/// says what it left out, and still re-checks to the same findings.
#[test]
fn a_report_of_five_big_environments_fits_an_issue() {
    let t = tempfile::tempdir().unwrap();
    let mut dists: Vec<String> =
        ["torch-2.1.0+cu121", "onnxruntime-1.17.1", "numpy-2.0.1", "onnx-1.15.0", "protobuf-4.25.3"]
            .map(String::from)
            .to_vec();
    dists.extend((0..220).map(|i| format!("somelongpackagenamenumber{i}-1.{i}.0")));
    let dists: Vec<&str> = dists.iter().map(String::as_str).collect();
    let envs: Vec<_> =
        (0..5).map(|i| metadata_env(&t.path().join(format!("env{i}")), "3.11.9", &dists)).collect();
    let run = |args: &[&str]| {
        let mut cmd = doctor();
        cmd.arg("--fast").args(args);
        for e in &envs {
            cmd.arg("--python").arg(e);
        }
        cmd.output().unwrap()
    };
    let check = run(&["--format", "json"]);
    let md = String::from_utf8(run(&["--format", "markdown"]).stdout).unwrap();
    assert!(md.chars().count() <= 65_536, "{} characters", md.chars().count());
    assert!(md.contains("leaves out 1100 installed distributions"), "says what it left out");
    let again =
        doctor().args(["diagnose", "--format", "json"]).write_stdin(md.into_bytes()).output().unwrap();
    assert_eq!(judged(&json(&check.stdout)), judged(&json(&again.stdout)));
}
