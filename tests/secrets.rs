//! Secrets pasted into `diagnose`: gone from every format's report, and
//! how long redaction takes over a big paste.
#![allow(clippy::disallowed_methods)]

mod support;

use std::time::{Duration, Instant};

use onnx_doctor::host::Host;
use onnx_doctor::report::redact::{Redactor, SHAPES, Shape};
use onnx_doctor::snapshot::{ProbeMode, Snapshot};
use regex::Regex;
use support::*;

/// The secret a shape's example holds (its last group, or the whole
/// match), on one line as [`paste`] puts it.
fn secret(shape: &Shape) -> String {
    let c = Regex::new(shape.pattern).unwrap().captures(shape.example).expect("the example matches");
    let value = c.get(c.len() - 1).or(c.get(0)).unwrap().as_str();
    value.trim_matches(['"', '\'']).replace('\n', " ")
}

/// No ten bytes of `secret` in `text`.
fn kept(secret: &str, text: &str) -> Option<String> {
    let b = secret.as_bytes();
    b.windows(10.min(b.len()))
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .find(|w| text.contains(w.as_str()))
}

/// A shape found only on a line of its own, which `diagnose` does not quote.
const OWN_LINE: &[&str] = &["netrc-password-line"];

/// Each shape's example on an error line the doctor quotes, as the line
/// of a traceback it would be.
fn paste() -> String {
    let mut p = String::new();
    for s in SHAPES {
        let one_line = s.example.replace('\n', " ");
        let line = match OWN_LINE.contains(&s.name) {
            true => one_line,
            false => format!(
                "RuntimeError: CUDA driver version is insufficient for CUDA runtime version {one_line}"
            ),
        };
        p.push_str(&line);
        p.push('\n');
    }
    p.push_str("RuntimeError: CUDA driver version is insufficient for CUDA runtime version password=Sunsh1ne!2024xyz\n");
    p
}

#[test]
fn no_example_secret_survives_any_format() {
    let t = tempfile::tempdir().unwrap();
    let summary = t.path().join("summary.md");
    let run = |args: &[&str]| {
        let out = doctor()
            .args(["diagnose", "-"])
            .args(args)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .write_stdin(paste())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // Each secret reaches the report: there is something to redact.
    let plain = run(&["--format", "markdown", "--no-redact"]);
    for s in SHAPES.iter().filter(|s| !OWN_LINE.contains(&s.name)) {
        assert!(plain.contains(&secret(s)), "{} is not in the report at all", s.name);
    }
    // Annotations and JUnit quote no evidence: nothing there to redact.
    for (args, quotes) in [
        (&["--format", "markdown"][..], true),
        (&["--format", "text", "--redact", "-v"], true),
        (&["--format", "json", "--redact"], true),
        (&["--format", "github", "--redact"], false),
        (&["--format", "junit", "--redact", "-v"], false),
    ] {
        let out = run(args);
        if quotes {
            assert!(
                out.contains("<secret") || out.contains("&lt;secret"),
                "{args:?}: no placeholder:\n{out}"
            );
        }
        for s in SHAPES.iter().map(secret).chain(["Sunsh1ne!2024xyz".to_string()]) {
            assert_eq!(kept(&s, &out), None, "{args:?} kept {s}:\n{out}");
        }
    }
    // The job summary of `--format github` is Markdown, redacted by default.
    run(&["--format", "github"]);
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("<secret"), "{md}");
    for s in SHAPES.iter().map(secret) {
        assert_eq!(kept(&s, &md), None, "the step summary kept {s}:\n{md}");
    }
}

fn redactor() -> Redactor {
    let env = [("HOME".into(), "/home/me".into()), ("USER".into(), "someone".into())].into_iter().collect();
    let host = Host::new("/".into(), env, "/".into(), Duration::from_secs(1));
    Redactor::new(&host, &Snapshot::new("test", ProbeMode::Pasted))
}

/// About `size` bytes of what people paste: pip lists, tracebacks, an
/// nvidia-smi table, a rich traceback's box drawing, a few secrets.
fn big_paste(size: usize) -> String {
    let block = "\
torch                     2.1.0+cu121
onnxruntime-gpu           1.17.1
scikit-learn              1.3.0
google-auth               2.23.0
nvidia-cudnn-cu12         8.9.2.26
Traceback (most recent call last):
  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py\", line 5373, in multi_head_attention_forward
    key_padding_mask = _canonical_mask(mask=key_padding_mask, mask_name=\"key_padding_mask\")
KeyError: 'CUDAExecutionProvider'
RuntimeError: CUDA error: no kernel image is available for execution on the device (sm_86) c10::Error
│ /usr/lib/python3/dist-packages/onnx/checker.py:136 in check_model │ ━━━━━━━━━━━━ 100% é ü 日本
|   0  NVIDIA GeForce RTX 3090    Off | 00000000:01:00.0  On |                  N/A |
CUDA_VISIBLE_DEVICES=0 token_type_ids: tensor([[0, 0, 0]]) input_ids attention_mask
export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 password=Sunsh1ne!2024xyz
";
    block.repeat(size / block.len() + 1)
}

#[test]
#[ignore = "a timing, not a check: cargo test --release --test secrets -- --ignored --nocapture"]
fn redacting_ten_megabytes() {
    let r = redactor();
    let text = big_paste(10 << 20);
    let timed = |name: &str, f: &dyn Fn(&str) -> String| {
        let start = Instant::now();
        let out = f(&text);
        println!("{name}: {} MiB in {:?}", text.len() >> 20, start.elapsed());
        assert!(!out.contains("Sunsh1ne") && !out.contains("hf_abcdefghij"));
    };
    timed("apply", &|t| r.apply(t));
    timed("apply_rendered", &|t| r.apply_rendered(t));
}

#[test]
fn the_github_job_summary_redacts_user_names_like_a_markdown_report() {
    let t = tempfile::tempdir().unwrap();
    let summary = t.path().join("summary.md");
    // A project folder named after the user, outside any home directory:
    // only the field-by-field pass knows the word is a user's name.
    let env = metadata_env(&t.path().join("proj-zanzibar").join("env"), "3.11.9", &["onnx-1.17.0"]);
    let run = |format: &str, summary: Option<&std::path::Path>| {
        let mut cmd = support::doctor();
        cmd.args(["--fast", "--format", format, "--python"]).arg(&env).env("USER", "zanzibar");
        if let Some(s) = summary {
            cmd.env("GITHUB_STEP_SUMMARY", s);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(!run("markdown", None).contains("zanzibar"));
    run("github", Some(&summary));
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.contains("onnx"), "{written}");
    assert!(!written.contains("zanzibar"), "the public summary names the user:\n{written}");
}
