//! Every error signature of matrix/errors.yaml fires on the message users
//! really see, alone in a paste, and a near miss does not fire it.

mod support;

use support::samples::SAMPLES;
use support::*;

/// The codes a paste's diagnosis holds: the importer and the checker the
/// `diagnose` command runs, in this process, on one loaded matrix (the
/// binary's own path is covered by the tests below and by tests/diagnose.rs).
fn paste_codes(m: &onnx_doctor::matrix::Matrix, text: &str) -> Vec<String> {
    let snapshot = onnx_doctor::import::import(text, m);
    onnx_doctor::check::check(&snapshot, m).findings.into_iter().map(|f| f.code).collect()
}

#[test]
fn every_signature_fires_on_its_message_and_not_on_a_near_miss() {
    let m = onnx_doctor::matrix::Matrix::load(&[]).unwrap();
    let signatures: Vec<&str> = m
        .rules
        .iter()
        .filter(|r| matches!(r.kind, onnx_doctor::matrix::RuleKind::Signature { .. }))
        .map(|r| r.code.as_str())
        .collect();
    for code in &signatures {
        assert!(SAMPLES.iter().any(|(c, _, _)| c == code), "no sample message for {code}");
    }
    for (code, line, near_miss) in SAMPLES {
        let fired = paste_codes(&m, &format!("prose before\n{line}\nprose after\n"));
        assert!(fired.contains(&code.to_string()), "{code} did not fire on {line:?}: {fired:?}");
        let quiet = paste_codes(&m, &format!("{near_miss}\n"));
        assert!(!quiet.contains(&code.to_string()), "{code} fired on the near miss {near_miss:?}");
    }
}

#[test]
fn captures_fill_the_message() {
    let out = doctor()
        .args(["diagnose", "-", "--format", "json"])
        .write_stdin(
            "ImportError: libcublasLt.so.12: cannot open shared object file: No such file or directory\n",
        )
        .output()
        .unwrap();
    let r = json(&out.stdout);
    assert_eq!(
        finding(&r, "error-gpu-library-missing")["message"],
        "libcublasLt.so.12 cannot be found by the dynamic loader"
    );
}

#[test]
fn a_glibc_error_next_to_the_facts_that_explain_it_is_one_finding() {
    let paste = "\
PyTorch version: 2.7.0+cu126
Is debug build: False
CUDA used to build PyTorch: 12.6
OS: CentOS Linux 7 (Core) (x86_64)
Libc version: glibc-2.17
Python version: 3.10.14 (main) [GCC 11.2.0] (64-bit runtime)

ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by torch/lib/libtorch_python.so)
";
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(paste).output().unwrap();
    let r = json(&out.stdout);
    let codes = finding_codes(&r);
    assert!(!codes.contains(&"error-glibc-too-old".to_string()), "{codes:?}");
    let f = finding(&r, "glibc-too-old-for-torch");
    assert!(f["message"].as_str().unwrap().contains("glibc 2.17"), "{f:#}");
    assert!(f["evidence"].to_string().contains("GLIBC_2.28"), "{f:#}");
}

/// The case this project was born from: onnx 1.6 on a workstation whose
/// import failed for libprotobuf.so.20 until protobuf went back to 3.9.x.
#[test]
fn a_missing_libprotobuf_soname_names_the_protobuf_release_that_ships_it() {
    let r = diagnose_text(
        "onnx 1.6.0\nprotobuf 3.10.0\nImportError: libprotobuf.so.20: cannot open shared object file: No such file or directory\n",
    );
    let f = finding(&r, "error-libprotobuf-missing");
    assert_eq!(
        f["message"],
        "a compiled package does not find the protobuf C++ library it was built against (libprotobuf.so.20)"
    );
    let fixes: Vec<&str> = f["fixes"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(fixes[0].starts_with("conda install \"libprotobuf=3.9\" \"protobuf=3.9\""), "{fixes:?}");
    let r = diagnose_text("ImportError: libprotobuf.so.32: cannot open shared object file\n");
    let fixes = finding(&r, "error-libprotobuf-missing")["fixes"].to_string();
    assert!(fixes.contains("libprotobuf=3.21"), "{fixes}");
    // A soname no release of the table has: no made-up version, the other fixes stay.
    let r = diagnose_text("ImportError: libprotobuf.so.99: cannot open shared object file\n");
    let fixes = finding(&r, "error-libprotobuf-missing")["fixes"].to_string();
    assert!(!fixes.contains("conda install") && fixes.contains("--force-reinstall onnx"), "{fixes}");
}

#[test]
fn an_api_line_is_read_against_the_installed_release() {
    let findings = |text: &str| -> Vec<serde_json::Value> {
        let out = doctor()
            .args(["diagnose", "-", "--format", "json"])
            .write_stdin(text.to_string())
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"].as_array().cloned().unwrap_or_default()
    };
    let codes = |f: &[serde_json::Value]| -> Vec<String> {
        f.iter().filter_map(|f| f["code"].as_str()).map(String::from).collect()
    };
    let line = "ModuleNotFoundError: No module named 'torch.fx'\n";
    // A torch older than the API: the line is explained, and the finding
    // is about torch, with the release it names.
    let old = findings(&format!("torch==1.6.0\n{line}"));
    let f =
        old.iter().find(|f| f["code"] == "error-api-newer-than-installed").expect("fires under torch 1.6");
    assert!(f["message"].as_str().unwrap().contains("torch 1.6.0 is older"), "{f}");
    assert_eq!(f["components"], serde_json::json!(["torch"]));
    // A torch that has torch.fx: something else is wrong, not the release.
    let new = findings(&format!("torch==1.10.0\n{line}"));
    assert!(!codes(&new).iter().any(|c| c.starts_with("error-api-")), "{new:?}");
    // What a removed module held went with it; a module added later is
    // not read through its parent.
    let six = findings("ImportError: cannot import name 'container_abcs' from 'torch._six'\n");
    assert!(codes(&six).contains(&"error-api-removed-in-installed".to_string()), "{six:?}");
    let sub = findings("ModuleNotFoundError: No module named 'torch.fx.experimental.proxy_tensor'\n");
    assert!(!codes(&sub).iter().any(|c| c.starts_with("error-api-")), "{sub:?}");
    // An unknown module, and a package's own absence, say nothing here.
    let none = findings("ModuleNotFoundError: No module named 'torch'\n");
    assert!(!codes(&none).iter().any(|c| c.starts_with("error-api-")), "{none:?}");
    // A package beside the stack is read under its own distribution: a
    // Pillow 10 lacks the constant, a Pillow 9 has it (something else is
    // wrong there), and the finding is the Python environment's.
    let antialias = "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'\n";
    let pillow10 = findings(&format!("Pillow==10.2.0\n{antialias}"));
    let f = pillow10.iter().find(|f| f["code"] == "error-api-removed-in-installed").expect("fires");
    assert!(f["message"].as_str().unwrap().contains("pillow 10.2.0 no longer has it"), "{f}");
    assert_eq!(f["components"], serde_json::json!(["python"]));
    let pillow9 = findings(&format!("Pillow==9.5.0\n{antialias}"));
    assert!(!codes(&pillow9).iter().any(|c| c.starts_with("error-api-")), "{pillow9:?}");
    // A class's method is named with its class; a bare `__init__` names
    // no function, whatever the table holds.
    let bare = findings("TypeError: __init__() got an unexpected keyword argument 'providers'\n");
    assert!(!codes(&bare).iter().any(|c| c.starts_with("error-api-")), "{bare:?}");
}
