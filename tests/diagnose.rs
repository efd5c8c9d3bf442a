//! `diagnose`: support-ticket pastes of every shape, turned into the same
//! findings a probe of the user's machine would give.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;

use serde_json::Value;
use support::*;

fn paste(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pastes").join(name)
}

fn diagnose(name: &str) -> (i32, Value) {
    let out = doctor().args(["diagnose", "--format", "json"]).arg(paste(name)).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

/// fact → (value, line) as the importer recorded them.
fn facts(report: &Value) -> Vec<(String, String, u64)> {
    report["snapshot"]["pasted"]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["fact"].as_str().unwrap().into(),
                f["value"].as_str().unwrap().into(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn fact(report: &Value, name: &str) -> Option<(String, u64)> {
    facts(report).into_iter().find(|(f, _, _)| f == name).map(|(_, v, l)| (v, l))
}

fn dists(report: &Value) -> Vec<(String, String)> {
    report["snapshot"]["pythons"][0]["distributions"]["found"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| (d["name"].as_str().unwrap().into(), d["version"].as_str().unwrap().into()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn collect_env_of_2019_with_a_gpu_list_conda_builds_and_a_single_cudnn_path() {
    let (_, r) = diagnose("collect_env_2019.txt");
    assert_eq!(fact(&r, "torch.version"), Some(("1.3.1".into(), 2)));
    assert_eq!(fact(&r, "torch.cuda"), Some(("10.1.243".into(), 4)));
    assert_eq!(fact(&r, "python"), Some(("3.6".into(), 10)));
    assert_eq!(fact(&r, "driver"), Some(("418.87.00".into(), 17)));
    let gpus = &r["snapshot"]["nvidia"]["found"]["gpus"]["found"];
    assert_eq!(gpus.as_array().unwrap().len(), 2);
    assert_eq!(gpus[1]["name"], "GeForce GTX 1080 Ti");
    assert_eq!(gpus[1]["compute_capability"], "6.1");
    assert_eq!(
        dists(&r),
        vec![
            ("blas".into(), "1.0".into()),
            ("numpy".into(), "1.17.3".into()),
            ("torch".into(), "1.3.1".into()),
            ("torchvision".into(), "0.4.2".into()),
        ]
    );
    // The conda build string's CUDA agrees with collect_env: no conflict.
    assert!(r["snapshot"]["pasted"]["conflicts"].is_null(), "{:#}", r["snapshot"]["pasted"]["conflicts"]);
}

#[test]
fn collect_env_of_2021_quoted_and_fenced_gives_one_explained_driver_finding() {
    let (code, r) = diagnose("collect_env_2021_driver_too_old.txt");
    assert_eq!(code, 1);
    assert_eq!(fact(&r, "glibc"), Some(("2.27".into(), 20)));
    assert_eq!(fact(&r, "cuda.toolkit"), Some(("10.0.130".into(), 25)));
    let libs = &r["snapshot"]["nvidia"]["found"]["libraries"];
    assert_eq!(libs[0]["file"], "libcudnn.so.7.6.5");
    let f = finding(&r, "driver-too-old-for-torch-cuda");
    assert!(
        f["message"].as_str().unwrap().contains("CUDA 10.2")
            && f["message"].as_str().unwrap().contains("410.104")
    );
    assert!(f["evidence"][0].as_str().unwrap().starts_with("line 7: RuntimeError"), "{f:#}");
    // The traceback line is explained, not repeated.
    assert!(!finding_codes(&r).contains(&"error-cuda-driver-insufficient".to_string()));
}

#[test]
fn an_rtx_5090_with_a_cu126_torch_in_a_2025_paste() {
    let (code, r) = diagnose("collect_env_2025_rtx5090.txt");
    assert_eq!(code, 1);
    let f = finding(&r, "gpu-not-supported-by-torch-build");
    assert!(f["fixes"][0].as_str().unwrap().contains("/whl/cu128"), "{f:#}");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("sm_120 is not compatible") && evidence.contains("no kernel image"),
        "{evidence}"
    );
    assert_eq!(
        finding_codes(&r).iter().filter(|c| c.starts_with("error-")).count(),
        0,
        "{:?}",
        finding_codes(&r)
    );
}

#[test]
fn a_cpu_torch_on_a_gpu_machine() {
    let (_, r) = diagnose("cpu_torch_on_gpu.txt");
    let f = finding(&r, "torch-cpu-build-on-gpu-machine");
    assert!(f["message"].as_str().unwrap().contains("NVIDIA GeForce RTX 3090"));
    assert!(f["evidence"].to_string().contains("Torch not compiled with CUDA enabled"));
}

#[test]
fn torch_pip_installed_from_the_default_index_on_windows_is_the_cpu_build() {
    let text = |os: &str, command: &str| {
        format!("{os}, RTX 3090\n{command}\ntorch.cuda.is_available() returns False\n")
    };
    let codes = |r: &Value| -> Vec<String> {
        r["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
    };
    let r = diagnose_str(&text("Windows 10", "pip install torch==2.1.0 torchvision==0.16.0"));
    let f = finding(&r, "torch-cpu-build-on-gpu-machine");
    assert!(f["message"].as_str().unwrap().contains("CPU-only build"), "{f:#}");
    for (os, command) in [
        ("Windows 10", "pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cu121"),
        ("Ubuntu 22.04", "pip install torch==2.1.0 torchvision==0.16.0"),
    ] {
        let r = diagnose_str(&text(os, command));
        assert!(!codes(&r).contains(&"torch-cpu-build-on-gpu-machine".to_string()), "{os}: {command}");
    }
}

#[test]
fn pip_list_columns_with_both_onnxruntime_packages() {
    let (code, r) = diagnose("pip_list_columns_both_ort.txt");
    assert_eq!(code, 1);
    assert_eq!(dists(&r).len(), 8);
    let f = finding(&r, "onnxruntime-cpu-and-gpu-both-installed");
    assert!(f["evidence"].to_string().contains("CUDAExecutionProvider"));
}

#[test]
fn pip_freeze_with_windows_line_endings_and_numpy_2_under_an_old_onnxruntime() {
    let (code, r) = diagnose("pip_freeze_crlf_numpy2.txt");
    assert_eq!(code, 1);
    assert_eq!(dists(&r)[0], ("numpy".to_string(), "2.0.1".to_string()));
    let f = finding(&r, "onnxruntime-built-against-numpy1");
    assert!(f["evidence"].to_string().contains("_ARRAY_API not found"));
}

#[test]
fn conda_list_with_old_onnx_under_protobuf_4() {
    let (_, r) = diagnose("conda_list_old_onnx.txt");
    assert!(dists(&r).contains(&("protobuf".to_string(), "4.21.0".to_string())));
    let f = finding(&r, "onnx-protobuf4-descriptors");
    assert!(f["evidence"].to_string().contains("Descriptors cannot not be created directly"));
}

#[test]
fn torchvision_built_for_another_torch() {
    let (_, r) = diagnose("torchvision_mismatch.txt");
    let f = finding(&r, "torchvision-not-paired-with-torch");
    assert_eq!(f["fixes"][0], "python -m pip install \"torchvision==0.16.*\"");
    assert!(f["evidence"].to_string().contains("torchvision::nms"));
}

#[test]
fn nvidia_smi_banners_old_and_new_nvidia_smi_l_nvcc_and_proc() {
    let (_, old) = diagnose("nvidia_smi_old.txt");
    assert_eq!(fact(&old, "driver"), Some(("418.67".into(), 3)));
    assert_eq!(fact(&old, "driver.max_cuda"), Some(("10.1".into(), 3)));
    assert_eq!(old["snapshot"]["nvidia"]["found"]["gpus"]["found"][0]["name"], "Tesla V100-SXM2...");
    assert_eq!(old["snapshot"]["nvidia"]["found"]["gpus"]["found"][0]["compute_capability"], "7.0");

    let (_, new) = diagnose("nvidia_smi_new.txt");
    let n = &new["snapshot"]["nvidia"]["found"];
    assert_eq!(n["driver"]["found"]["version"], "570.124.06");
    assert_eq!(n["driver"]["found"]["max_cuda"], "12.8");
    assert_eq!(n["gpus"]["found"].as_array().unwrap().len(), 2);
    assert_eq!(n["gpus"]["found"][1]["uuid"], "GPU-7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d");
    assert_eq!(n["gpus"]["found"][0]["compute_capability"], "9.0");
    assert_eq!(n["toolkits"][0]["version"]["found"], "12.4.131");
    assert_eq!(n["kernel_module"]["found"], "570.124.06");
}

#[test]
fn conflicting_statements_are_reported_not_silently_picked() {
    let (_, r) = diagnose("conflicting_torch.txt");
    let f = finding(&r, "pasted-facts-conflict");
    let m = f["message"].as_str().unwrap();
    assert!(m.contains("2.1.0+cu121 (line 1)") && m.contains("2.3.1 (line 2)"), "{m}");
}

#[test]
fn a_paste_with_nothing_recognisable_cannot_be_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("prose.txt");
    std::fs::write(&p, "Hello, my model does not work. Any idea?\n").unwrap();
    let out = doctor().arg("diagnose").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn diagnose_reads_standard_input() {
    let text = std::fs::read(paste("torchvision_mismatch.txt")).unwrap();
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    finding(&json(&out.stdout), "torchvision-not-paired-with-torch");
}

#[test]
fn arbitrary_bytes_never_crash_the_importer() {
    // Deterministic pseudo-random pastes mixing garbage with fragments of
    // the formats, so the parsers see truncated and corrupted lines.
    let fragments: &[&[u8]] = &[
        b"PyTorch version: ",
        b"GPU models and configuration:",
        b"| NVIDIA-SMI 5",
        b"Driver Version: ",
        b"[conda] pytorch 1.13.1 py3.9_cuda",
        b"Package Version\n",
        b"# Name Version Build\n",
        b"cuDNN version: Probably one of the following:\n",
        b"GPU 0: ",
        b"==",
        b"\r\n",
        b"\n",
        b"> ",
        b"```",
        "é漢\u{feff}".as_bytes(),
        b"\xff\xfe\x00",
        b"libcudnn.so.9: cannot open shared object file",
        b"{\"schema_version\": 1,",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let matrix = onnx_doctor::matrix::Matrix::load(&[]).unwrap();
    for _ in 0..1500 {
        let mut bytes = Vec::new();
        let parts = next() % 40;
        for _ in 0..parts {
            if next() % 3 == 0 {
                let n = (next() % 20) as usize;
                bytes.extend((0..n).map(|_| (next() % 256) as u8));
            } else {
                bytes.extend_from_slice(fragments[(next() % fragments.len() as u64) as usize]);
                bytes.extend(format!("{}.{}", next() % 1000, next() % 100).bytes());
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let snapshot = onnx_doctor::import::import(&text, &matrix);
        let _ = onnx_doctor::check::check(&snapshot, &matrix);
    }
}

/// (fact, value, guessed) as the importer recorded them.
fn read_facts(report: &Value) -> Vec<(String, String, bool)> {
    let guessed =
        report["snapshot"]["pasted"]["facts"].as_array().unwrap().iter().map(|f| f["guessed"] == true);
    facts(report).into_iter().zip(guessed).map(|((fact, value, _), guessed)| (fact, value, guessed)).collect()
}

#[test]
fn issue_templates_filled_in_by_hand_are_read_like_collect_env() {
    let text = "### Environment\n\
        **PyTorch Version**: 2.6.0+cu126\n\
        **CUDA/cuDNN version**: 12.6 / 9.5\n\
        - ONNX Runtime version: `1.20.1`\n\
        - GPU model and memory: NVIDIA GeForce RTX 5090 32GB\n\
        - Python version (if applicable): 3.12\n\
        - TensorRT Version: N/A\n";
    let r = diagnose_text(text);
    let facts = read_facts(&r);
    for (fact, value) in
        [("torch", "2.6.0+cu126"), ("cuda.toolkit", "12.6"), ("cudnn", "9.5"), ("onnxruntime", "1.20.1")]
    {
        assert!(facts.contains(&(fact.into(), value.into(), false)), "{fact}: {facts:?}");
    }
    assert!(facts.contains(&("gpu.0.name".into(), "NVIDIA GeForce RTX 5090".into(), false)), "{facts:?}");
    assert!(facts.contains(&("python".into(), "3.12".into(), false)), "{facts:?}");
    assert!(!facts.iter().any(|(f, _, _)| f == "tensorrt"), "N/A is not a version");
    // The wheel's tag says CUDA 12.6; its arch list has no Blackwell.
    assert!(
        finding_codes(&r).contains(&"gpu-not-supported-by-torch-build".to_string()),
        "{:#}",
        r["findings"]
    );

    // A Markdown table, and `Key = value`.
    let r = diagnose_text(
        "| Component | Version |\n|---|---|\n| PyTorch | 1.8.0+cu111 |\n| Driver | 450.80.02 |\nonnx = 1.9.0\n",
    );
    let facts = read_facts(&r);
    assert!(facts.contains(&("torch".into(), "1.8.0+cu111".into(), false)), "{facts:?}");
    assert!(facts.contains(&("driver".into(), "450.80.02".into(), false)), "{facts:?}");
    assert!(facts.contains(&("onnx".into(), "1.9.0".into(), false)), "{facts:?}");
}

#[test]
fn a_version_without_its_build_is_not_called_a_cpu_build() {
    // "PyTorch Version: 2.2.0" says nothing of CUDA; collect_env's
    // "CUDA used to build PyTorch: None" would.
    let r = diagnose_text("**PyTorch Version**: 2.2.0\n**GPU**: RTX 4090\n**Python**: 3.11\n");
    assert!(
        !finding_codes(&r).contains(&"torch-cpu-build-on-gpu-machine".to_string()),
        "{:#}",
        r["findings"]
    );
    assert_eq!(r["summary"]["errors"], 0);
}

#[test]
fn sentences_paths_and_image_tags_are_read_and_marked_as_guesses() {
    let r = diagnose_text(
        "I installed torch 1.12 with cu113 in a conda env, CUDA 11.3, driver 470.82\n\
         File \"/home/u/miniconda3/envs/x/lib/python3.8/site-packages/torch/__init__.py\", line 1\n",
    );
    let facts = read_facts(&r);
    for (fact, value) in [
        ("torch", "1.12"),
        ("torch.cuda", "11.3"),
        ("cuda.toolkit", "11.3"),
        ("driver", "470.82"),
        ("python", "3.8"),
    ] {
        assert!(facts.contains(&(fact.into(), value.into(), true)), "{fact}: {facts:?}");
    }
    // A structured statement outranks a sentence, wherever each stands.
    let r = diagnose_text("I upgraded from torch 1.12 last week.\nPyTorch version: 2.2.0\n");
    let facts = read_facts(&r);
    assert!(facts.contains(&("torch".into(), "2.2.0".into(), false)), "{facts:?}");
    assert!(!facts.iter().any(|(f, v, _)| f == "torch" && v == "1.12"), "{facts:?}");
    assert!(r["snapshot"]["pasted"]["conflicts"].as_array().is_none_or(|c| c.is_empty()), "{r:#}");

    // An image tag is structured: it states torch, its CUDA and cuDNN.
    let r = diagnose_text("FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-devel\n");
    let facts = read_facts(&r);
    for (fact, value) in [("torch", "2.1.0"), ("torch.cuda", "12.1"), ("cudnn", "8")] {
        assert!(facts.contains(&(fact.into(), value.into(), false)), "{fact}: {facts:?}");
    }
}

#[test]
fn a_paste_too_thin_to_judge_says_what_to_ask_for() {
    let out = doctor()
        .args(["diagnose", "-"])
        .write_stdin("Traceback (most recent call last):\nRuntimeError: something broke\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("To judge more, ask the reporter to run:"), "{text}");
    for command in
        ["python -m torch.utils.collect_env", "nvidia-smi", "python -m pip list", "onnx-doctor report"]
    {
        assert!(text.contains(command), "{command}: {text}");
    }
    assert!(text.contains("not enough in the paste to judge"), "{text}");

    // With the driver and GPU stated, nvidia-smi is not asked for again.
    let r =
        diagnose_text("torch==2.6.0+cu126\nNvidia driver version: 570.86.10\nGPU 0: NVIDIA A100-SXM4-80GB\n");
    let asked: Vec<&str> =
        r["still_needed"].as_array().unwrap().iter().map(|a| a["command"].as_str().unwrap()).collect();
    assert!(!asked.contains(&"nvidia-smi"), "{asked:?}");
    assert!(asked.contains(&"python -m pip list"), "{asked:?}");
}

#[test]
fn at_a_terminal_diagnose_says_how_to_end_the_paste_and_a_pipe_hears_nothing() {
    let bin = assert_cmd::cargo::cargo_bin("onnx-doctor");
    // Built for another machine (scripts/cross-test), the binary runs through
    // cargo's runner, as assert_cmd runs it.
    let runner_var =
        format!("CARGO_TARGET_{}_UNKNOWN_LINUX_GNU_RUNNER", std::env::consts::ARCH.to_uppercase());
    let runner = std::env::var(runner_var).unwrap_or_default();
    // `script` gives the doctor a terminal; Ctrl-D at the start of a line ends the paste.
    let mut child = std::process::Command::new("script")
        .args(["-qec", &format!("env NO_COLOR=1 {runner} {} diagnose -q", bin.display()), "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"PyTorch version: 2.6.0+cu126\n\x04").unwrap();
    let tty = String::from_utf8_lossy(&child.wait_with_output().unwrap().stdout).into_owned();
    let asked = tty.find("then press Ctrl-D").unwrap_or_else(|| panic!("{tty:?}"));
    let judged = tty.find(" · exit ").unwrap_or_else(|| panic!("{tty:?}"));
    assert!(asked < judged, "{tty:?}");

    let piped = doctor().args(["diagnose", "-q"]).write_stdin("PyTorch version: 2.6.0\n").output().unwrap();
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("Ctrl-D"), "a prompt written to a pipe");
}

fn fix_of(report: &Value, code: &str) -> Vec<String> {
    finding(report, code)["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn conda_build_strings_say_cpu_or_cuda_and_the_python() {
    let cpu = diagnose_text(
        "[conda] pytorch                   1.11.0          py3.8_cpu_0    pytorch\n\
         [conda] pytorch-mutex             1.0                         cpu    pytorch\n\
         GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090\n\
         Nvidia driver version: 510.47.03\n",
    );
    assert_eq!(fact(&cpu, "python").unwrap().0, "3.8");
    // The fix names the CUDA build of this torch release that this driver runs.
    let fixes = fix_of(&cpu, "torch-cpu-build-on-gpu-machine");
    assert!(fixes[0].contains("torch==1.11.0+cu115") && fixes[0].contains("whl/cu115"), "{fixes:?}");

    let forge = diagnose_text(
        "# Name                    Version                   Build  Channel\n\
         pytorch                   1.8.0           cuda112py38h5a4ad6b_1    conda-forge\n\n\
         Nvidia driver version: 418.67\n",
    );
    assert!(
        finding(&forge, "driver-too-old-for-torch-cuda")["message"].as_str().unwrap().contains("CUDA 11.2")
    );
    // 418.67 runs CUDA 10.1: torch 1.8.0 had a cu101 build.
    assert!(fix_of(&forge, "driver-too-old-for-torch-cuda")[0].contains("torch==1.8.0+cu101"));

    // The defaults channel's selector package says CPU for its pytorch.
    let select = diagnose_text(
        "# Name                    Version                   Build  Channel\n\
         _pytorch_select           0.1                       cpu_0\n\
         pytorch                   1.3.1           gpu_py37h62f834f_0\n\
         GPU models and configuration: GPU 0: NVIDIA GeForce RTX 2080 Ti\n",
    );
    assert!(finding_codes(&select).contains(&"torch-cpu-build-on-gpu-machine".to_string()));
    let gpu_select = diagnose_text(
        "# Name                    Version                   Build  Channel\n\
         _pytorch_select           0.2                       gpu_0\n\
         GPU models and configuration: GPU 0: NVIDIA GeForce RTX 2080 Ti\n",
    );
    assert!(fact(&gpu_select, "torch.cuda").is_none());
    // The CPU marker alone still says torch is there, a CPU build of no
    // stated version: the GPU makes that the finding, with no version guessed.
    let marker_only = diagnose_text(
        "# Name                    Version                   Build  Channel\n\
         _pytorch_select           0.1                       cpu_0\n\
         GPU models and configuration: GPU 0: NVIDIA GeForce RTX 2080 Ti\n",
    );
    let cpu_build = finding(&marker_only, "torch-cpu-build-on-gpu-machine");
    assert!(cpu_build["message"].as_str().unwrap().contains("version not stated"), "{cpu_build}");

    let only = diagnose_text(
        "[conda] pytorch 1.13.1 py3.9_cuda11.7_cudnn8.5.0_0 pytorch\n[conda] cpuonly 2.0 0 pytorch\n",
    );
    assert!(
        finding_codes(&only).contains(&"pasted-facts-conflict".to_string()),
        "cpuonly beside a CUDA build"
    );
}

#[test]
fn a_driver_too_old_for_every_build_of_the_release_gets_no_install_command() {
    let r = diagnose_text("PyTorch version: 1.9.0+cu102\nNvidia driver version: 410.104\n");
    let fixes = fix_of(&r, "driver-too-old-for-torch-cuda");
    assert!(fixes.iter().all(|f| !f.contains("torch==1.9.0+")), "{fixes:?}");
    assert!(fixes.iter().any(|f| f.contains("upgrade the NVIDIA driver")), "{fixes:?}");
}

#[test]
fn the_os_name_tells_the_glibc_when_the_paste_does_not() {
    let r = diagnose_text(
        "### OS Version\n\nCentOS Linux release 7.6.1810 (Core)\n\n### ONNX Runtime Version or Commit ID\n\n1.17.3\n",
    );
    assert_eq!(fact(&r, "glibc").unwrap(), ("2.17".to_string(), 3), "tied to the OS line");
    assert!(finding_codes(&r).contains(&"glibc-too-old-for-onnxruntime".to_string()));
    let stated = diagnose_text("OS: CentOS Linux 7 (Core)\nLibc version: glibc-2.28\n");
    assert_eq!(fact(&stated, "glibc").unwrap().0, "2.28", "a stated glibc wins");
    for (os, glibc) in [
        ("Ubuntu 22.04.3 LTS", "2.35"),
        ("Debian GNU/Linux 11 (bullseye)", "2.31"),
        ("Amazon Linux 2023", "2.34"),
    ] {
        assert_eq!(fact(&diagnose_text(&format!("OS: {os}\n")), "glibc").unwrap().0, glibc, "{os}");
    }
    assert!(fact(&diagnose_text("OS: Arch Linux\n"), "glibc").is_none());
}

#[test]
fn gpu_names_typed_run_together_still_have_a_compute_capability() {
    for (name, cc) in [
        ("RTX1080ti", "6.1"),
        ("2080ti", "7.5"),
        ("GeForce 940MX", "5.0"),
        ("NVIDIA RTX A1000 Laptop GPU", "8.6"),
        ("Jetson Nano", "5.3"),
    ] {
        let r = diagnose_text(&format!("GPU models and configuration: GPU 0: {name}\n"));
        let gpu = &r["snapshot"]["nvidia"]["found"]["gpus"]["found"][0];
        assert_eq!(gpu["compute_capability"], cc, "{name}: {gpu}");
    }
    // A name the matrix does not know judges nothing about compute capability.
    let r = diagnose_text(
        "GPU models and configuration: GPU 0: Mystery Accelerator\nCUDA runtime version: 13.0.48\n",
    );
    assert!(!finding_codes(&r).contains(&"gpu-not-supported-by-cuda-toolkit".to_string()));
}

#[test]
fn a_line_two_signatures_match_is_one_finding() {
    let r = diagnose_text(
        "ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu113 (from versions: none)\n",
    );
    let codes = finding_codes(&r);
    assert!(codes.contains(&"error-pip-torch-local-version".to_string()), "{codes:?}");
    assert!(!codes.contains(&"error-pip-no-release-for-python".to_string()), "{codes:?}");
    let r = diagnose_text(
        "onnx==1.16.0\nonnxruntime==1.17.1\nonnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:Unsupported model IR version: 10, max supported IR version: 9\n",
    );
    let f = finding(&r, "onnx-ir-newer-than-onnxruntime");
    assert_eq!(f["severity"], "error", "the paste shows the failure the warning predicts");
    assert_eq!(
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e.as_str().unwrap().contains("IR version: 10"))
            .count(),
        1
    );
}

#[test]
fn a_version_in_a_sentence_does_not_add_a_second_onnxruntime() {
    let r = diagnose_text("onnxruntime-gpu==1.19.0\nUsing onnxruntime 1.19.0 on jetson with JetPack 6.1\n");
    assert!(!finding_codes(&r).contains(&"onnxruntime-cpu-and-gpu-both-installed".to_string()));
    let r = diagnose_text("When I install the onnxruntime-gpu==1.19.2, create InferenceSession failed.\n");
    assert!(dists(&r).contains(&("onnxruntime-gpu".to_string(), "1.19.2".to_string())), "{:?}", dists(&r));
    let refused = diagnose_text(
        "ERROR: Could not find a version that satisfies the requirement onnxruntime==1.17.3 (from versions: 1.16.3)\n",
    );
    assert!(dists(&refused).is_empty(), "pip refused it: not installed");
}

#[test]
fn an_ngc_image_or_a_jetpack_release_tells_the_stack_it_ships() {
    // What each release ships comes from matrix/platforms.yaml, as guesses
    // tied to the line that named it.
    let r = diagnose_text("FROM nvcr.io/nvidia/pytorch:20.02-py3\nRUN pip install onnx\n");
    for (name, value) in [
        ("torch", "1.4.0a0+a5b4d78"),
        ("cuda.toolkit", "10.2.89"),
        ("python", "3.6"),
        ("os", "Ubuntu 18.04"),
        ("glibc", "2.27"),
    ] {
        assert_eq!(fact(&r, name), Some((value.to_string(), 1)), "{name}: {:?}", facts(&r));
    }
    assert!(read_facts(&r).iter().all(|(_, _, guessed)| *guessed), "{:?}", read_facts(&r));
    assert!(!r["findings"].as_array().unwrap().iter().any(|f| f["severity"] == "error"), "{}", r["findings"]);

    // The TensorRT image of a release ships its TensorRT and cuDNN, not torch;
    // a Python the paste states wins over the release's.
    let r = diagnose_text("image: nvcr.io/nvidia/tensorrt:21.10-py3\nPython version: 3.8.10\n");
    assert_eq!(fact(&r, "tensorrt").unwrap().0, "8.0.3.4");
    assert_eq!(fact(&r, "cudnn").unwrap().0, "8.2.4.15");
    assert_eq!(fact(&r, "python").unwrap().0, "3.8.10");
    assert!(fact(&r, "torch").is_none());

    // JetPack by name, by L4T release, and as /etc/nv_tegra_release says it.
    for paste in [
        "- JetPack: 5.1\n",
        "Jetson AGX Orin, L4T R35.2.1\n",
        "# R35 (release), REVISION: 2.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64\n",
        "FROM nvcr.io/nvidia/l4t-base:r35.2.1\n",
        "docker run --runtime nvidia -it dustynv/ros:noetic-pytorch-l4t-r35.2.1\n",
    ] {
        let r = diagnose_text(paste);
        for (name, value) in
            [("cuda.toolkit", "11.4"), ("cudnn", "8.6.0"), ("tensorrt", "8.5.2"), ("arch", "aarch64")]
        {
            assert_eq!(fact(&r, name).map(|f| f.0), Some(value.to_string()), "{paste}: {name}");
        }
    }
    // A release the matrix does not list states nothing.
    let r = diagnose_text("JetPack 9.9 on an Orin\nnvcr.io/nvidia/pytorch:19.13-py3\n");
    assert!(facts(&r).is_empty(), "{:?}", facts(&r));
}

#[test]
fn environments_the_paste_sets_apart_are_judged_apart() {
    let text = "The session fails since the upgrade.\n\
        onnxruntime.capi: numpy.core.multiarray failed to import\n\
        \n\
        **Before:**\n\
        onnxruntime==1.18.0\n\
        numpy==1.26.4\n\
        \n\
        **After:**\n\
        onnxruntime==1.18.0\n\
        numpy==2.0.1\n";
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "the broken environment decides the exit code");
    let r = json(&out.stdout);
    let envs = r["environments"].as_array().unwrap();
    let summary: Vec<(String, Value, Vec<String>)> = envs
        .iter()
        .map(|e| (e["label"].as_str().unwrap().to_string(), e["lines"].clone(), finding_codes(&e["report"])))
        .collect();
    assert_eq!(summary[0].0, "Before");
    assert_eq!(summary[0].1, serde_json::json!([4, 6]));
    assert_eq!(summary[1].0, "After");
    assert!(summary[1].2.contains(&"onnxruntime-built-against-numpy1".to_string()), "{summary:?}");
    assert!(!summary[0].2.contains(&"onnxruntime-built-against-numpy1".to_string()), "{summary:?}");
    // Each environment's facts name the paste's own lines; the shared error
    // line (before the headings) belongs to both.
    let numpy = fact(&envs[1]["report"], "numpy").unwrap();
    assert_eq!(numpy, ("2.0.1".to_string(), 10));
    for e in envs {
        let lines = &e["report"]["snapshot"]["pasted"]["error_lines"];
        assert_eq!(lines[0]["line"], 2, "{lines:#}");
    }
    // The text report shows each under its heading; --json keeps them all.
    let dir = tempfile::tempdir().unwrap();
    let side = dir.path().join("report.json");
    let out = doctor().args(["diagnose", "-", "--json"]).arg(&side).write_stdin(text).output().unwrap();
    let saved = json(&std::fs::read(&side).unwrap());
    assert_eq!(saved["environments"][1]["label"], "After", "{saved:#}");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("== Before (lines 4-6) ==") && shown.contains("== After (lines 8-10) =="),
        "{shown}"
    );
    // Without headings the two numpy versions are one environment's conflict.
    let flat = text.replace("**Before:**", "").replace("**After:**", "");
    let r = diagnose_text(&flat);
    assert!(r["environments"].is_null());
    assert!(finding_codes(&r).contains(&"pasted-facts-conflict".to_string()), "{:#}", r["findings"]);
}

#[test]
fn the_torch_a_paste_shows_picks_the_opset_an_export_error_asks_for() {
    let fixes = |text: &str| {
        let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
        let r = json(&out.stdout);
        let f = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "error-torch-export-opset-unsupported");
        f.unwrap_or_else(|| panic!("{r:#}"))["fixes"].as_array().unwrap().clone()
    };
    let error = "ValueError: Unsupported ONNX opset version: 16\n";
    // torch 1.11 exports up to opset 15.
    let with_torch = fixes(&format!("PyTorch version: 1.11.0+cu113\n{error}"));
    assert_eq!(
        with_torch[0],
        "torch.onnx.export(..., opset_version=15), or --opset 15 for export scripts: the newest opset this torch exports"
    );
    // No torch in the paste: the fix that needs its row is left out, not written with a hole.
    let without = fixes(error);
    assert!(without.iter().all(|f| !f.as_str().unwrap().contains("{row")), "{without:?}");
    assert!(without[0].as_str().unwrap().starts_with("export at an opset this torch writes"), "{without:?}");
}

#[test]
fn an_export_error_for_an_operator_a_later_torch_learnt_names_that_torch_and_opset() {
    let first_fix = |text: &str| {
        let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
        let r = json(&out.stdout);
        finding(&r, "error-onnx-export-aten")["fixes"][0].as_str().unwrap().to_string()
    };
    // torch 1.11 has no symbolic for grid_sampler at any opset; 1.12 exports it from opset 16.
    let fix = first_fix(
        "PyTorch version: 1.11.0\nRuntimeError: Exporting the operator grid_sampler to ONNX opset version 16 is not \
         supported. Please feel free to request support or submit a pull request on PyTorch GitHub.\n",
    );
    assert!(fix.starts_with("python -m pip install --upgrade \"torch>=1.12\"   # "), "{fix}");
    assert!(fix.ends_with("then export with opset_version=16 or newer"), "{fix}");
    // The 1.13+ form, with the domain and quotes.
    let fix = first_fix(
        "UnsupportedOperatorError: Exporting the operator 'aten::scaled_dot_product_attention' to ONNX opset version 14 \
         is not supported. Please feel free to request support or submit a pull request on PyTorch GitHub: \
         https://github.com/pytorch/pytorch/issues.\n",
    );
    assert!(fix.contains("\"torch>=2.1\""), "{fix}");
    // An operator no release read learnt: no torch to name.
    let fix = first_fix(
        "UnsupportedOperatorError: Exporting the operator 'aten::l1_loss' to ONNX opset version 17 is not supported.\n",
    );
    assert!(fix.starts_with("torch.onnx.export(..., dynamo=True)"), "{fix}");
}

#[test]
fn a_paste_of_numpy_alone_does_not_say_nothing_is_installed() {
    let out = doctor().args(["diagnose", "-"]).write_stdin("numpy 2.0.0\n").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("numpy 2.0.0"), "{text}");
    assert!(!text.contains("no package of the stack is installed"), "{text}");
}

/// A NumPy-1 traceback from `import onnxruntime` is onnxruntime's failure:
/// it makes no warning about onnx an error, though both name numpy 2.
#[test]
fn a_traceback_is_evidence_only_against_the_package_whose_frames_it_shows() {
    let traceback = |package: &str| {
        format!(
            "numpy==2.0.0\nonnx==1.16.0\nonnxruntime==1.18.0\n\
             A module that was compiled using NumPy 1.x cannot be run in\n\
             NumPy 2.0.0 as it may crash.\n\n\
             Traceback (most recent call last):\n  File \"/app/run.py\", line 3, in <module>\n    import {package}\n\
             \x20 File \"/usr/lib/python3/site-packages/{package}/__init__.py\", line 23, in <module>\n\
             AttributeError: _ARRAY_API not found\n"
        )
    };
    let r = diagnose_text(&traceback("onnxruntime"));
    assert_eq!(finding(&r, "onnxruntime-built-against-numpy1")["severity"], "error");
    let onnx = finding(&r, "onnx-untested-with-numpy2");
    assert_eq!(onnx["severity"], "warning", "{onnx:#}");
    assert!(onnx["evidence"].as_array().is_none_or(Vec::is_empty), "{onnx:#}");
    // Without frames the line cannot be placed: every explanation keeps it.
    let bare = "numpy==2.0.0\nonnx==1.16.0\nonnxruntime==1.18.0\nA module that was compiled using NumPy 1.x cannot be run in\n";
    let r = diagnose_text(bare);
    assert!(!finding(&r, "onnx-untested-with-numpy2")["evidence"].as_array().unwrap().is_empty(), "{r:#}");
}

/// The warning torch 1.2 writes before the error says why; it chooses the
/// fix, and the two lines are one finding.
#[test]
fn the_reason_torch_warns_before_an_export_error_chooses_the_fix() {
    let r = diagnose_text(
        "torch==1.2.0\n\
         /usr/lib/python3/site-packages/torch/onnx/symbolic_helper.py:198: UserWarning: ONNX export failed on upsample_bilinear2d because align_corners == True not supported\n\
         RuntimeError: ONNX export failed: Couldn't export operator aten::upsample_bilinear2d\n",
    );
    let codes = finding_codes(&r);
    assert!(codes.contains(&"error-onnx-export-align-corners".to_string()), "{codes:?}");
    assert!(!codes.contains(&"error-onnx-export-aten".to_string()), "{codes:?}");
    let f = finding(&r, "error-onnx-export-align-corners");
    assert!(f["fixes"][0].as_str().unwrap().contains("opset_version=11"), "{f:#}");
    assert_eq!(f["evidence"].as_array().unwrap().len(), 2, "{f:#}");

    let r = diagnose_text(
        "torch==1.2.0\n\
         UserWarning: ONNX export failed on adaptive_avg_pool2d because output size that are not factor of input size not supported\n\
         RuntimeError: ONNX export failed: Couldn't export operator aten::adaptive_avg_pool2d\n",
    );
    let codes = finding_codes(&r);
    assert_eq!(codes, vec!["error-onnx-export-adaptive-pool-not-factor".to_string()], "{codes:?}");
    let fix = finding(&r, "error-onnx-export-adaptive-pool-not-factor")["fixes"][0].to_string();
    assert!(fix.contains("kernel_size=in - (out - 1) * (in // out)"), "{fix}");
}

/// The driver and the one GPU NVML read on the H100 the fixtures come
/// from. `nvidia-smi -q` heads the GPU's section with its bus id, which is
/// no second GPU.
fn the_h100_as_nvml_saw_it(r: &Value) {
    let n = &r["snapshot"]["nvidia"]["found"];
    assert_eq!(n["driver"]["found"]["version"], "580.159.04");
    assert_eq!(n["driver"]["found"]["max_cuda"], "13.0");
    let gpus = n["gpus"]["found"].as_array().unwrap();
    assert_eq!(gpus.len(), 1, "{gpus:?}");
    assert_eq!(gpus[0]["name"], "NVIDIA H100 80GB HBM3");
    assert_eq!(gpus[0]["compute_capability"], "9.0");
}

/// What a real H100 machine printed (`bench/device.sh`): `nvidia-smi`,
/// `nvidia-smi -q`, `pip list` and collect_env together, and the report the
/// doctor wrote there from NVML and the live Python.
#[test]
fn a_real_h100_machine_pasted_reads_as_its_probe_did() {
    let (code, r) = diagnose("h100_machine.txt");
    assert_eq!(code, 0);
    the_h100_as_nvml_saw_it(&r);
    assert_eq!(fact(&r, "torch.cuda"), Some(("13.0".into(), 503)));
    // What the machine's own check without trials found, and nothing else
    // but a note on the line that printed onnxruntime's providers: the CPU
    // package is what is installed there.
    let mut codes = finding_codes(&r);
    codes.sort();
    assert_eq!(
        codes,
        [
            "likely-onnxruntime-without-cuda-provider",
            "onnx-ir-newer-than-onnxruntime",
            "onnx-opset-newer-than-onnxruntime"
        ]
    );

    // The report written there: the runtime's own answer from its trial.
    let (code, saved) = diagnose("h100_report.md");
    assert_eq!(code, 0);
    assert_eq!(finding_codes(&saved), ["onnxruntime-refuses-onnx-default"]);
    assert_eq!(saved["snapshot"]["nvidia"]["found"]["driver"]["found"]["source"], "nvml");
}

#[test]
fn nvidia_smi_q_alone_gives_the_driver_its_cuda_and_the_gpu() {
    let (_, r) = diagnose("h100_nvidia_smi_q.txt");
    the_h100_as_nvml_saw_it(&r);
}

fn diagnose_str(text: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("paste.txt");
    std::fs::write(&p, text).unwrap();
    let out = doctor().args(["diagnose", "--format", "json"]).arg(&p).output().unwrap();
    json(&out.stdout)
}

fn causes(report: &Value, code: &str) -> Vec<String> {
    finding(report, code)["likely"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["cause"].as_str().unwrap().split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn a_symptom_without_the_facts_that_decide_it_gets_its_likely_causes_as_a_note() {
    let symptom =
        "print(ort.get_available_providers())\n['AzureExecutionProvider', 'CPUExecutionProvider']\n";
    let r = diagnose_str(symptom);
    let f = finding(&r, "likely-onnxruntime-without-cuda-provider");
    assert_eq!(f["severity"], "info");
    assert_eq!(
        causes(&r, "likely-onnxruntime-without-cuda-provider"),
        ["the CPU package onnxruntime", "onnxruntime-gpu went into another"]
    );
    // The commands that tell the causes apart lead the fixes.
    assert_eq!(f["fixes"][0], "python -m pip show onnxruntime onnxruntime-gpu");

    // A fact that contradicts a cause drops it: onnxruntime-gpu is what is installed.
    let r = diagnose_str(&format!("onnxruntime-gpu==1.18.0\n{symptom}"));
    assert_eq!(causes(&r, "likely-onnxruntime-without-cuda-provider"), ["onnxruntime-gpu went into another"]);

    // Facts that decide it: both packages installed. One finding, the
    // symptom its evidence.
    let r = diagnose_str(&format!("onnxruntime==1.18.0\nonnxruntime-gpu==1.18.0\n{symptom}"));
    let codes = finding_codes(&r);
    assert!(!codes.iter().any(|c| c.starts_with("likely-")), "{codes:?}");
    let f = finding(&r, "onnxruntime-cpu-and-gpu-both-installed");
    assert!(f["evidence"].to_string().contains("CPUExecutionProvider"), "{f}");

    // torch with a CUDA build and no driver stated: the CPU build is ruled out.
    let r = diagnose_str("torch 2.3.1+cu121\ntorch.cuda.is_available() returns False\n");
    assert_eq!(
        causes(&r, "likely-torch-cuda-unavailable"),
        ["no NVIDIA driver is", "the program was asked", "CUDA_VISIBLE_DEVICES (set by a"]
    );
    // A torch stated as the CPU build decides it: one cause, named in the
    // message, its fix the only one, and no longer a mere note.
    for cpu in ["torch==2.1.0+cpu", "PyTorch version: 2.1.0\nCUDA used to build PyTorch: None"] {
        let r = diagnose_str(&format!("{cpu}\ntorch.cuda.is_available() returns False\n"));
        let f = finding(&r, "likely-torch-cuda-unavailable");
        assert!(f["likely"].as_array().is_none_or(Vec::is_empty), "{f}");
        assert!(f["message"].as_str().unwrap().contains("torch is a CPU-only build"), "{f}");
        assert_eq!(f["severity"], "warning");
        assert_eq!(f["fixes"].as_array().unwrap().len(), 1, "{f}");
    }
    // A torch whose build the paste does not state decides nothing.
    let r = diagnose_str("torch==2.1.0\ntorch.cuda.is_available() returns False\n");
    assert_eq!(causes(&r, "likely-torch-cuda-unavailable").len(), 4);
    // collect_env's own line is a fact, not a complaint: a Mac has no CUDA.
    let r = diagnose_str("PyTorch version: 2.3.1\nIs CUDA available: False\nOS: macOS 14.5 (arm64)\n");
    assert!(!finding_codes(&r).iter().any(|c| c.starts_with("likely-")));
}

#[test]
fn the_gpus_compute_capability_picks_the_torch_floor_and_python_decides_if_it_exists() {
    let fixes = |sm: &str, python: &str| {
        let text = format!(
            "Python {python}\nUserWarning: NVIDIA GeForce X with CUDA capability {sm} is not compatible with the current PyTorch installation.\n"
        );
        let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
        finding(&json(&out.stdout), "error-torch-sm-not-compatible")["fixes"].clone()
    };
    // An RTX 30xx needs a CUDA 11 build, which Python 3.6 still had.
    let f = fixes("sm_86", "3.6.9");
    assert!(
        f[0].as_str()
            .unwrap()
            .contains("\"torch>=1.10\" torchvision --extra-index-url https://download.pytorch.org/whl/cu113"),
        "{f}"
    );
    // An H100 needs torch 2.0, which has no wheel for Python 3.6: no
    // command is printed that pip would refuse.
    let f = fixes("sm_90", "3.6.9");
    assert_eq!(f.as_array().unwrap().len(), 1, "{f}");
    assert!(
        f[0].as_str().unwrap().starts_with("the fix needs a newer Python than this one: no torch >=2.0"),
        "{f}"
    );
    let f = fixes("sm_90", "3.11.4");
    assert!(f[0].as_str().unwrap().contains("\"torch>=2.0\""), "{f}");
    // An RTX 50xx: 2.7's CUDA 12.8 build.
    assert!(fixes("sm_120", "3.12.1")[0].as_str().unwrap().contains("whl/cu128"));
}

#[test]
fn a_release_the_package_index_never_served_is_not_pinned() {
    // onnxruntime-gpu 1.20.1 was never published (1.20.0 and 1.20.2 were).
    let list = "Package         Version\n--------------- -------\n";
    let text = format!("Python 3.12.9\n{list}onnxruntime     1.20.1\nonnxruntime-gpu 1.20.1\n");
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    let r = json(&out.stdout);
    let fixes = finding(&r, "onnxruntime-cpu-and-gpu-both-installed")["fixes"].to_string();
    assert!(!fixes.contains("==1.20.1"), "{fixes}");
    assert!(fixes.contains("onnxruntime-gpu~=1.20.1"), "{fixes}");
    // A release line the index no longer serves at all drops out, and the
    // CPU package of the same line is what remains.
    let text = format!("Python 3.6.9\n{list}onnxruntime     1.6.0\nonnxruntime-gpu 1.6.0\n");
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    let fixes = finding(&json(&out.stdout), "onnxruntime-cpu-and-gpu-both-installed")["fixes"].clone();
    assert_eq!(fixes.as_array().unwrap().len(), 1, "{fixes}");
    assert!(fixes[0].as_str().unwrap().contains("\"onnxruntime~=1.6.0\""), "{fixes}");
}

/// "Illegal instruction" kills Python without a traceback. On a Jetson
/// (named by its board alone) numpy's OpenBLAS is the likely cause and the
/// first fix; on x86_64 that cause is ruled out and what is left says how
/// to find the module.
#[test]
fn an_illegal_instruction_on_a_jetson_is_numpys_openblas_first() {
    // (confirm, fix) of each likely cause, most likely first.
    let causes = |text: &str| {
        let (code, r) = diagnose_stdin(text);
        assert_eq!(code, 0, "a note never fails a build");
        finding(&r, "likely-illegal-instruction")["likely"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["confirm"].as_str().unwrap().to_string(), l["fix"].as_str().unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    let jetson =
        causes("On my Jetson Nano, python3 -c 'import torch' prints\nIllegal instruction (core dumped)\n");
    assert!(jetson[0].0.starts_with("OPENBLAS_CORETYPE=ARMV8 python3"), "{jetson:?}");
    assert!(jetson[0].1.starts_with("export OPENBLAS_CORETYPE=ARMV8"), "{jetson:?}");
    let x86 = causes("- Arch: x86_64\nIllegal instruction (core dumped)\n");
    assert_eq!(x86.len(), 1, "{x86:?}");
    assert!(x86[0].0.starts_with("export PYTHONFAULTHANDLER=1"), "{x86:?}");
}

/// The exporter history answers with what the user lacks: the torch when
/// theirs is older than the first that exports the operator, else only
/// the opset; an operator every torch exports needs no upgrade.
#[test]
fn an_export_error_is_answered_with_the_torch_or_the_opset_the_user_lacks() {
    let fixes = |text: &str| {
        let (_, r) = diagnose_stdin(text);
        finding(&r, "error-onnx-export-aten")["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let old = fixes(
        "torch==1.10.2\nExporting the operator 'aten::grid_sampler' to ONNX opset version 11 is not supported\n",
    );
    assert!(
        old[0].starts_with("python -m pip install --upgrade \"torch>=1.12\"")
            && old[0].contains("opset_version=16"),
        "{old:?}"
    );
    let new = fixes(
        "torch==2.1.0\nExporting the operator 'aten::grid_sampler' to ONNX opset version 11 is not supported\n",
    );
    assert!(new[0].starts_with("torch.onnx.export(..., opset_version=16)"), "{new:?}");
    assert!(!new.iter().any(|f| f.contains("\"torch>=")), "{new:?}");
    // topk is exported by every torch from 1.0, from opset 9.
    let any = fixes("Exporting the operator 'aten::topk' to ONNX opset version 8 is not supported\n");
    assert!(any[0].starts_with("torch.onnx.export(..., opset_version=9)"), "{any:?}");
    assert!(!any.iter().any(|f| f.contains("\"torch>=")), "{any:?}");
}

/// The cases of the notes this project grew from, with the notes' own
/// lines: each gets the answer their authors found.
#[test]
fn the_export_notes_of_the_torch_1_x_years_get_their_authors_answers() {
    let report = |text: &str| {
        let out = doctor()
            .args(["diagnose", "-", "--format", "json"])
            .write_stdin(text.to_string())
            .output()
            .unwrap();
        json(&out.stdout)
    };
    // torch 1.0/1.1 had no group_norm symbolic; torch 1.4 exports it.
    let r = report(
        "UserWarning: ONNX export failed on ATen operator group_norm because torch.onnx.symbolic.group_norm does not exist\n",
    );
    let fix = finding(&r, "error-onnx-export-aten")["fixes"][0].as_str().unwrap().to_string();
    assert!(fix.contains("\"torch>=1.4\"") && fix.contains("group_norm"), "{fix}");
    // TensorRT 6 cannot gather from x.size(): fold it, or stop indexing it.
    let r = report(
        "Error: In node 2 (importGather): UNSUPPORTED_NODE: Assertion failed: !(data->getType() == nvinfer1::DataType::kINT32 && nbDims == 1) && “Cannot perform gather on a shape tensor!”\n",
    );
    assert_eq!(finding_codes(&r), ["error-tensorrt-gather-on-shape-tensor"]);
    assert!(
        finding(&r, "error-tensorrt-gather-on-shape-tensor")["fixes"]
            .to_string()
            .contains("torch.tensor(x.shape)[1:]")
    );
    // TensorRT 6 upsamples only in nearest mode.
    let r = report(
        "Error: In node 1 (importUpsample): UNSUPPORTED_NODE: Assertion failed: (nbDims >= 1) && (nbDims <= 3)\n",
    );
    assert_eq!(finding_codes(&r), ["error-tensorrt-upsample-dims"]);
    assert!(
        finding(&r, "error-tensorrt-upsample-dims")["fixes"][0].as_str().unwrap().contains("mode='nearest'")
    );
    // A size taken from the input where the symbolic needs a constant.
    let r = report("torch==1.2.0\nRuntimeError: ONNX symbolic expected a constant value in the trace\n");
    assert_eq!(finding_codes(&r), ["error-onnx-export-needs-constant"]);
    assert!(finding(&r, "error-onnx-export-needs-constant")["fixes"].to_string().contains("scale_factor"));
    // In-place index assignment: torch 1.3 wrote an ATen node that
    // onnxruntime refuses; torch 1.5 at opset 11 exports it, and a scatter
    // exports on the torch the user has.
    let r = report(
        "torch==1.3.1\n\
         %5 : Float(4, 3) = ATen[operator=\"index_put\"](%data, %index, %new_data, %4)\n\
         onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Fatal error: ATen is not a registered function/op\n",
    );
    assert_eq!(finding_codes(&r), ["error-onnx-export-index-put"]);
    let fixes = finding(&r, "error-onnx-export-index-put")["fixes"].to_string();
    assert!(fixes.contains("\\\"torch>=1.5\\\"") && fixes.contains("opset_version=11"), "{fixes}");
    assert!(fixes.contains("data.scatter(0, index.unsqueeze(1)"), "{fixes}");
    // On torch 1.8, only the opset is missing.
    let r = report(
        "torch==1.8.1\nRuntimeError: Unsupported: ONNX export of index_put in opset 9. Please try opset version 11.\n",
    );
    let fixes = finding(&r, "error-onnx-export-index-put")["fixes"].to_string();
    assert!(fixes.contains("opset_version=11)") && !fixes.contains("pip install"), "{fixes}");
    // A model whose ATen node the paste does not name is sent to the model check.
    let r = report(
        "onnx.onnx_cpp2py_export.checker.ValidationError: No Op registered for ATen with domain_version of 9\n",
    );
    assert_eq!(finding_codes(&r), ["error-onnx-model-aten-node"]);

    // The machine as the notes list it: the GPU is read from "RTX2080TI".
    let r = report("- Ubuntu 16.04\n- RTX2080TI, Driver Version: 410.79\n- CUDA 10.0\n- pytorch 1.3.1\n");
    let gpu = &r["snapshot"]["nvidia"]["found"]["gpus"]["found"][0];
    assert_eq!(gpu["compute_capability"], "7.5", "{:#}", r["snapshot"]["nvidia"]);
}

#[test]
fn a_paste_with_only_a_symptom_is_not_called_healthy() {
    let out = doctor()
        .args(["diagnose", "-"])
        .write_stdin(
            "whisper/transcribe.py:114: UserWarning: FP16 is not supported on CPU; using FP32 instead\n",
        )
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("info[likely-torch-cuda-unavailable]"), "{text}");
    assert!(
        text.contains("a symptom whose cause the paste does not show: 0 errors, 0 warnings, 1 note"),
        "{text}"
    );
    assert!(!text.contains("healthy"), "{text}");
    assert_eq!(out.status.code(), Some(0), "a note never fails a build");
}

fn diagnose_stdin(text: &str) -> (i32, Value) {
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

/// pip's own lines state what is installed: "Successfully installed
/// name-version …" (names with dashes too) and "Requirement already
/// satisfied: name in DIR (version)".
#[test]
fn what_pip_printed_while_installing_states_the_versions() {
    let (code, r) = diagnose_stdin(
        "$ pip install onnxruntime==1.18.0\n\
         Requirement already satisfied: numpy>=1.21.6 in ./venv/lib/python3.11/site-packages (from onnxruntime==1.18.0) (2.0.1)\n\
         Installing collected packages: onnxruntime\n\
         Successfully installed onnxruntime-1.18.0 tensorrt-cu12-10.0.1\n",
    );
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let d = dists(&r);
    for (name, version) in [("numpy", "2.0.1"), ("onnxruntime", "1.18.0"), ("tensorrt-cu12", "10.0.1")] {
        assert!(d.contains(&(name.to_string(), version.to_string())), "{d:?}");
    }
    assert_eq!(fact(&r, "python").map(|f| f.0).as_deref(), Some("3.11"));
    finding(&r, "onnxruntime-built-against-numpy1");
}

/// ultralytics' device banner: Python, torch with its build tag, and the
/// GPU with its index.
#[test]
fn the_ultralytics_banner_states_python_torch_and_the_gpu() {
    let (_, r) = diagnose_stdin(
        "Ultralytics 8.3.2 🚀 Python-3.11.4 torch-2.4.1+cu121 CUDA:0 (NVIDIA GeForce RTX 5090, 32607MiB)\n\
         \x20                                                   CUDA:1 (NVIDIA GeForce RTX 4090, 24217MiB)\n",
    );
    assert_eq!(fact(&r, "python").map(|f| f.0).as_deref(), Some("3.11.4"));
    assert!(dists(&r).contains(&("torch".to_string(), "2.4.1+cu121".to_string())), "{:?}", dists(&r));
    assert_eq!(fact(&r, "gpu.0.name").map(|f| f.0).as_deref(), Some("NVIDIA GeForce RTX 5090"));
    assert_eq!(fact(&r, "gpu.1.name").map(|f| f.0).as_deref(), Some("NVIDIA GeForce RTX 4090"));
    finding(&r, "gpu-not-supported-by-torch-build");

    let (_, r) = diagnose_stdin("Ultralytics YOLOv8.0.54 Python-3.10.6 torch-2.0.0+cpu CPU\n");
    assert!(dists(&r).contains(&("torch".to_string(), "2.0.0+cpu".to_string())), "{:?}", dists(&r));
    assert_eq!(fact(&r, "gpu.0.name"), None);
}

/// The fix for a torch build without kernels for the GPU is chosen by the
/// GPU's compute capability: the same release's CUDA build that covers it
/// when one exists, else the first release whose builds do; never the
/// newest GPUs' floor for an older card.
#[test]
fn a_torch_build_without_kernels_for_the_gpu_is_fixed_for_that_gpu() {
    let text = |gpu: &str, sm: &str, torch: &str, cuda: &str| {
        format!(
            "PyTorch version: {torch}\nCUDA used to build PyTorch: {cuda}\nGPU models and configuration: GPU 0: {gpu}\n\
             Nvidia driver version: 470.57.02\n\
             UserWarning: {gpu} with CUDA capability {sm} is not compatible with the current PyTorch installation.\n"
        )
    };
    let fixes = |r: &Value| -> Vec<String> {
        finding(r, "gpu-not-supported-by-torch-build")["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect()
    };
    // An RTX 3090 (8.6) under torch 1.7.1's CUDA 10.2 build: its CUDA 11.0
    // build carries sm_80 code, which 8.6 runs.
    let r = diagnose_text(&text("NVIDIA GeForce RTX 3090", "sm_86", "1.7.1+cu102", "10.2"));
    let f = fixes(&r);
    assert!(f[0].starts_with("python -m pip install \"torch==1.7.1+cu110\" --extra-index-url https://download.pytorch.org/whl/cu110"), "{f:?}");
    assert!(f[1].contains("\"torch>=1.10\""), "{f:?}");
    assert!(f.iter().all(|f| !f.contains("sm_120") && !f.contains('{')), "{f:?}");
    // An H100 (9.0): no build of 1.7.1 has sm_90 code, so the release moves,
    // to the first with it.
    let r = diagnose_text(&text("NVIDIA H100 80GB HBM3", "sm_90", "1.7.1+cu102", "10.2"));
    let f = fixes(&r);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].contains("\"torch>=2.0\"") && f[0].contains("/whl/cu118"), "{f:?}");
    // A GTX 1080 (6.1) under 2.7.0's CUDA 12.8 build, which dropped Pascal:
    // the same release's CUDA 12.6 build still has it.
    let r = diagnose_text(
        &text("NVIDIA GeForce GTX 1080", "sm_61", "2.7.0+cu128", "12.8").replace("470.57.02", "570.86.10"),
    );
    let f = fixes(&r);
    assert!(f[0].starts_with("python -m pip install \"torch==2.7.0+cu126\""), "{f:?}");
}

/// rembg before 2.0.60 requires the CPU onnxruntime and its `[gpu]` extra
/// adds onnxruntime-gpu: a ticket that names the release and the install
/// command, and lists nothing, has both installed.
#[test]
fn a_package_that_requires_the_cpu_onnxruntime_installs_it_beside_the_gpu_one() {
    let codes = |text: &str| finding_codes(&diagnose_text(text));
    let ticket = "**OS Version:**\nWindows 11\n\n**Rembg version:**\nv2.0.55\n\n\
        I ran pip install rembg[gpu,cli] and it still runs on the CPU.\n";
    assert!(codes(ticket).contains(&"onnxruntime-required-beside-gpu".to_string()), "{:?}", codes(ticket));
    // The release that moved onnxruntime into a `cpu` extra requires neither.
    let newer = ticket.replace("v2.0.55", "v2.0.60");
    assert!(!codes(&newer).iter().any(|c| c.starts_with("onnxruntime-")), "{:?}", codes(&newer));
    // Without the extra, nothing says onnxruntime-gpu is there.
    let cpu = ticket.replace("rembg[gpu,cli]", "rembg");
    assert!(!codes(&cpu).contains(&"onnxruntime-required-beside-gpu".to_string()), "{:?}", codes(&cpu));
    // A package list is what is installed: onnxruntime was removed.
    let listed = "Package         Version\n--------------- -------\nonnxruntime-gpu 1.17.1\nrembg           2.0.55\n\n\
        I ran pip install rembg[gpu,cli]\n";
    assert!(!codes(listed).iter().any(|c| c.starts_with("onnxruntime-")), "{:?}", codes(listed));
    // And one that shows both is the plain case, with the versions.
    let both = listed.replace("rembg  ", "onnxruntime     1.17.1\nrembg  ");
    assert!(
        codes(&both).contains(&"onnxruntime-cpu-and-gpu-both-installed".to_string()),
        "{:?}",
        codes(&both)
    );
}

/// Torch-TensorRT's template, as reporters fill it in: a value glued to its
/// key, LibTorch for torch, and "tensorRT-8.2.4.2" naming TensorRT itself.
#[test]
fn torch_tensorrt_is_judged_against_the_libtorch_it_was_built_for() {
    let codes = |text: &str| finding_codes(&diagnose_text(text));
    let ticket = " - Torch-TensorRT Version:1.1.0\n - LibTorch Version:1.9.0 (compiled from source)\n\
        - CUDA version:cuda10.2\n - TensorRT: tensorRT-8.2.4.2\n";
    let r = diagnose_text(ticket);
    assert!(
        codes(ticket).contains(&"torch-tensorrt-not-paired-with-torch".to_string()),
        "{:?}",
        codes(ticket)
    );
    let names: Vec<String> = facts(&r).into_iter().map(|(fact, _, _)| fact).collect();
    assert!(names.contains(&"tensorrt".to_string()), "{names:?}");
    // The LibTorch that release was built for.
    let paired = ticket.replace("1.9.0", "1.11.0");
    assert!(
        !codes(&paired).contains(&"torch-tensorrt-not-paired-with-torch".to_string()),
        "{:?}",
        codes(&paired)
    );
    // A pre-release built from the main branch carries no release's pin.
    let main = ticket.replace("Version:1.1.0", "Version:1.1.0a0+b652045d");
    assert!(
        !codes(&main).contains(&"torch-tensorrt-not-paired-with-torch".to_string()),
        "{:?}",
        codes(&main)
    );
}

/// In a JetPack 4 (L4T r32) container the CUDA libraries come from the
/// host through the NVIDIA runtime: a missing one there names that cause.
/// On the Jetson itself, or in a later L4T's image, the error stays as it is.
#[test]
fn a_cuda_library_missing_in_a_jetpack_4_container_names_the_nvidia_runtime() {
    let message = |text: &str| {
        let r = diagnose_text(text);
        let f = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "error-gpu-library-missing")
            .cloned();
        f.map(|f| f["message"].as_str().unwrap().to_string()).unwrap_or_default()
    };
    let error = "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\n";
    let container =
        format!("Status: Downloaded newer image for dustynv/ros:noetic-pytorch-l4t-r32.5.0\n{error}");
    assert!(message(&container).contains("NVIDIA container runtime"), "{}", message(&container));
    let built = format!("FROM nvcr.io/nvidia/l4t-base:r32.7.1\n{error}");
    assert!(message(&built).contains("NVIDIA container runtime"), "{}", message(&built));
    // The Jetson itself: CUDA is JetPack's, not the runtime's.
    let host = format!("# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t186ref\n{error}");
    assert!(message(&host).starts_with("libcurand.so.10 cannot be found"), "{}", message(&host));
    assert!(!message(&host).contains("runtime"), "{}", message(&host));
    // From L4T r34 the images carry CUDA themselves.
    let newer = container.replace("r32.5.0", "r35.4.1");
    assert!(!message(&newer).contains("runtime"), "{}", message(&newer));
}

/// ONNX Runtime's template gives a release without its package; the
/// sentence that installed it names the package. cuDNN named beside it
/// (NVIDIA's wheel, "cuDNN==8.9") is the one that package must load, and
/// `-cu12` in a wheel's name is a CUDA major, not torch's build.
#[test]
fn the_onnxruntime_package_a_sentence_installed_is_judged_against_the_cudnn_named() {
    let ticket = "In my env the default CUDA==12.1 and cuDNN==8.9; torch installed nvidia-cudnn-cu12==8.9.26.\n\
        When I install the onnxruntime-gpu==1.19.2, create InferenceSession failed.\n\n\
        ### ONNX Runtime Version or Commit ID\n\n1.19.2\n";
    let r = diagnose_text(ticket);
    let codes = finding_codes(&r);
    assert!(codes.contains(&"onnxruntime-gpu-cudnn-major-differs".to_string()), "{codes:?}");
    let d = dists(&r);
    assert!(d.contains(&("onnxruntime-gpu".into(), "1.19.2".into())), "{d:?}");
    assert!(!d.iter().any(|(n, _)| n == "onnxruntime" || n == "cuda" || n == "cudnn"), "{d:?}");
    assert_eq!(fact(&r, "torch.cuda"), None);
    assert_eq!(fact(&r, "cuda.toolkit").map(|(v, _)| v), Some("12.1".into()));
    // cuDNN 9 beside it: nothing to say.
    let nine = ticket.replace("8.9.26", "9.1.0.70").replace("cuDNN==8.9", "cuDNN==9.1");
    assert!(
        !finding_codes(&diagnose_text(&nine)).contains(&"onnxruntime-gpu-cudnn-major-differs".to_string())
    );
    // Another release in the field: the sentence's package is a second one.
    let other = ticket.replace("\n1.19.2\n", "\n1.18.0\n");
    let d = dists(&diagnose_text(&other));
    assert!(d.contains(&("onnxruntime".into(), "1.18.0".into())), "{d:?}");
}

/// A paste from a Jetson container names two L4T releases: the image's
/// tag is what runs in the container, the other is the host's. Images of
/// another L4T line than the host's do not get CUDA.
#[test]
fn an_l4t_image_of_another_line_than_the_host_is_named() {
    let fires =
        |text: &str| finding_codes(&diagnose_text(text)).contains(&"l4t-image-not-for-host".to_string());
    let host_first =
        "My AGX Orin runs JetPack 6.1 [L4T 36.4.0]; the torch in dustynv/l4t-ml: r35.4.1 cannot use CUDA.\n";
    assert!(fires(host_first));
    let r = diagnose_text(host_first);
    assert_eq!(fact(&r, "l4t").map(|(v, _)| v), Some("35.4.1".into()));
    assert_eq!(fact(&r, "host.l4t").map(|(v, _)| v), Some("36.4.0".into()));
    // The image named first, the host after it.
    assert!(fires("docker run --runtime nvidia -it dustynv/pytorch:2.1-r35.4.1\nhost: L4T R36.4.0\n"));
    // An image of the host's own line, or no host stated: nothing to say.
    assert!(!fires("My AGX Orin runs L4T 36.4.3; the image is dustynv/l4t-ml:r36.4.0.\n"));
    assert!(!fires("the torch in dustynv/l4t-ml: r35.4.1 cannot use CUDA.\n"));
    assert!(!fires("JetPack 4.6.1 (L4T R32.7.1) on a Nano\n"));
}

#[test]
fn an_interpreter_session_states_what_it_printed() {
    // Python's prompt, IPython's, and a tuple of two answers.
    let r = diagnose_str(
        "GPU 0: NVIDIA GeForce RTX 3060\n>>> import torch\n>>> torch.__version__, torch.version.cuda\n('2.1.0+cpu', None)\n",
    );
    assert_eq!(fact(&r, "torch").map(|(v, _)| v), Some("2.1.0+cpu".to_string()));
    finding(&r, "torch-cpu-build-on-gpu-machine");

    let r = diagnose_str("In [2]: print(torch.version.cuda)\nNone\n");
    assert_eq!(fact(&r, "torch.cuda"), Some(("None".to_string(), 2)));

    // The expression and its value are one statement of the symptom.
    let r = diagnose_str(">>> import torch\n>>> torch.cuda.is_available()\nFalse\n");
    let f = finding(&r, "likely-torch-cuda-unavailable");
    assert!(f["evidence"].to_string().contains("is_available() -> False"), "{f:#}");

    // A value that answers another count of expressions, or a traceback, is not read.
    let r = diagnose_str(">>> torch.__version__, torch.version.cuda\n'2.1.0+cpu'\n");
    assert_eq!(fact(&r, "torch"), None);
    let r = diagnose_str(">>> onnx.__version__\nTraceback (most recent call last):\n");
    assert_eq!(fact(&r, "onnx"), None);
    // Without a prompt, a line of code is not an answer.
    let r = diagnose_str("torch.cuda.is_available()\nFalse\n");
    assert!(r["findings"].as_array().unwrap().is_empty(), "{:#}", r["findings"]);
}

#[test]
fn a_version_attribute_in_a_sentence_names_its_package() {
    let r = diagnose_str("RTX 3060 here, and print(torch.__version__) gives '2.1.0+cpu'\n");
    assert_eq!(fact(&r, "torch").map(|(v, _)| v), Some("2.1.0+cpu".to_string()));
    // A verb says a version only after the attribute.
    let r = diagnose_str("onnx gives 1.5 times the speed\n");
    assert_eq!(fact(&r, "onnx"), None);
}

#[test]
fn an_install_command_names_the_build_it_installs() {
    let codes = |r: &Value| -> Vec<String> {
        r["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
    };
    // torch's own index names its CUDA: cu121 needs a driver 470 does not reach.
    let r = diagnose_str(
        "pip3 install torch torchvision --index-url https://download.pytorch.org/whl/cu121\nDriver Version: 470.82\n",
    );
    assert_eq!(fact(&r, "torch.cuda").map(|(v, _)| v), Some("12.1".to_string()));
    assert!(codes(&r).contains(&"driver-too-old-for-torch-cuda".to_string()), "{:?}", codes(&r));

    // conda's cpuonly is the CPU build; its versions are what it installed.
    let r = diagnose_str("(base) $ conda install pytorch torchvision cpuonly -c pytorch\nGPU: RTX 3060\n");
    assert!(codes(&r).contains(&"torch-cpu-build-on-gpu-machine".to_string()), "{:?}", codes(&r));
    let r = diagnose_str("conda install pytorch==1.12.1 torchvision==0.13.1 cudatoolkit=11.3 -c pytorch\n");
    assert_eq!(fact(&r, "torch").map(|(v, _)| v), Some("1.12.1".to_string()));
    assert_eq!(fact(&r, "conda.cuda").map(|(v, _)| v), Some("11.3".to_string()));

    // A sentence about a command is not the command.
    let r = diagnose_str("Should I conda install cudatoolkit=11.3 first?\n");
    assert_eq!(fact(&r, "conda.cuda"), None);
}

#[test]
fn a_gpu_field_that_goes_on_to_other_facts_names_the_gpu_and_states_them() {
    let r = diagnose_str("GPU: RTX 3060, CUDA 12.4, cuDNN 9.1\n");
    assert_eq!(fact(&r, "gpu.0.name").map(|(v, _)| v), Some("RTX 3060".to_string()));
    assert_eq!(fact(&r, "cudnn").map(|(v, _)| v), Some("9.1".to_string()));
}

#[test]
fn pip_that_passes_over_a_published_wheel_is_too_old_for_its_tag() {
    let codes = |r: &Value| -> Vec<String> {
        r["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
    };
    let refusal = "Could not find a version that satisfies the requirement onnxruntime==1.13.1 (from versions: 1.2.0, 1.3.0)\nNo matching distribution found for onnxruntime==1.13.1\n";
    // 1.13.1 has cp38 wheels on every platform the index lists: pip passed them over.
    let r =
        diagnose_str(&format!("$ python3.8 -m pip install onnxruntime==1.13.1\nPython 3.8.10\n{refusal}"));
    assert_eq!(codes(&r), ["pip-older-than-wheel-tags"], "{r:#}");
    // No cp311 wheel of 1.13.1 exists: the signature's own finding stands.
    let r = diagnose_str(&format!("Python 3.11.4\n{refusal}"));
    assert!(codes(&r).contains(&"error-pip-version-not-for-python".to_string()), "{:?}", codes(&r));
    assert!(!codes(&r).contains(&"pip-older-than-wheel-tags".to_string()));
    // macOS has no wheel list in the matrix: nothing is claimed about pip.
    let r = diagnose_str(&format!("OS: macOS 10.15.7\nPython 3.8.10\n{refusal}"));
    assert!(!codes(&r).contains(&"pip-older-than-wheel-tags".to_string()), "{:?}", codes(&r));
    // A source build of a release with a wheel for this Python and system.
    let r = diagnose_str(
        "OS: Ubuntu 18.04\nPython version: 3.7.13\n$ pip install onnx==1.8.1\nERROR: Failed building wheel for onnx\n",
    );
    assert!(codes(&r).contains(&"pip-older-than-wheel-tags".to_string()), "{:?}", codes(&r));
    // onnx 1.8.1 has no cp310 wheel: building it is the expected fallback.
    let r = diagnose_str(
        "OS: Ubuntu 22.04\nPython version: 3.10.12\n$ pip install onnx==1.8.1\nERROR: Failed building wheel for onnx\n",
    );
    assert!(codes(&r).contains(&"error-pip-building-from-source".to_string()), "{:?}", codes(&r));
}

#[test]
fn a_faster_whisper_named_beside_an_image_tag_is_judged_against_the_image_cuda() {
    // The release named in prose (backquoted, in parentheses) on the line
    // that names the image; CTranslate2 4 under faster-whisper 1.0 opens
    // CUDA 12's cuBLAS, which a CUDA 11.8 image does not have.
    let r = diagnose_text(
        "Using the image `nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04` with faster-whisper (version `1.0.1`):\n\
         RuntimeError: Library libcublas.so.12 is not found or cannot be loaded\n",
    );
    let facts = read_facts(&r);
    assert!(facts.iter().any(|(f, v, _)| f == "faster-whisper" && v == "1.0.1"), "{facts:?}");
    assert!(!facts.iter().any(|(f, _, _)| f == "torch"), "the image's tag names no torch: {facts:?}");
    let codes = finding_codes(&r);
    assert!(codes.contains(&"faster-whisper-cuda-major-differs-toolkit".to_string()), "{:#}", r["findings"]);
    // The loader's error is the finding's evidence, not a second finding.
    assert!(!codes.contains(&"error-gpu-library-missing".to_string()), "{codes:?}");

    // faster-whisper 0.10.1 went back to CTranslate2 3, built for CUDA 11.
    let r = diagnose_text(
        "Using the image `nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04` with faster_whisper 0.10.1\n",
    );
    assert!(
        !finding_codes(&r).contains(&"faster-whisper-cuda-major-differs-toolkit".to_string()),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn a_triton_image_of_2020_and_2021_names_the_tensorrt_it_ships() {
    // Triton's release notes list each image's CUDA, cuDNN and TensorRT.
    for (image, cuda, tensorrt) in
        [("tritonserver:20.12-py3", "11.1.1", "7.2.2"), ("tritonserver:21.12-py3", "11.5.0", "8.2.1.8")]
    {
        let r = diagnose_text(&format!("FROM nvcr.io/nvidia/{image}\n"));
        let facts = read_facts(&r);
        assert!(facts.contains(&("cuda.toolkit".into(), cuda.into(), true)), "{image}: {facts:?}");
        assert!(facts.contains(&("tensorrt".into(), tensorrt.into(), true)), "{image}: {facts:?}");
    }
}

#[test]
fn a_conda_plan_with_the_cpu_build_beside_the_cuda_asked_for_is_named() {
    // The command asks for cudatoolkit 11.3; the plan answers with the CPU build.
    let plan = "$ conda install -c pytorch pytorch=1.9.0 torchvision cudatoolkit=11.3\n\
        The following NEW packages will be INSTALLED:\n\n  \
        cudatoolkit        pkgs/main/linux-64::cudatoolkit-11.3.1-h2bc3f7f_2\n  \
        pytorch            pytorch/linux-64::pytorch-1.9.0-py3.8_cpu_0\n";
    let codes = finding_codes(&diagnose_text(plan));
    assert!(codes.contains(&"torch-cpu-build-despite-conda-cuda".to_string()), "{codes:?}");
    // A conda list whose pytorch is a CUDA build: nothing to say.
    let list = "# packages in environment at /opt/conda:\n\
        cudatoolkit               11.1.74              h6bb024c_0    nvidia\n\
        pytorch                   1.9.0           py3.8_cuda11.1_cudnn8.0.5_0    pytorch\n";
    let codes = finding_codes(&diagnose_text(list));
    assert!(!codes.contains(&"torch-cpu-build-despite-conda-cuda".to_string()), "{codes:?}");
}

#[test]
fn a_bare_l4t_release_beside_a_jetson_is_the_host_and_one_before_container_the_image() {
    let r = diagnose_text("I run the r35.4.1 container on a Jetson AGX Orin with r36.2.0 and CUDA fails.\n");
    assert_eq!(fact(&r, "l4t").map(|f| f.0), Some("35.4.1".to_string()), "{:#}", r["snapshot"]["pasted"]);
    assert_eq!(fact(&r, "host.l4t").map(|f| f.0), Some("36.2.0".to_string()));
    assert!(finding_codes(&r).contains(&"l4t-image-not-for-host".to_string()));
    // Without a Jetson on the line, "r35.1" is no L4T release.
    let r = diagnose_text("the r35.1 release of our model fails on the r36.2 branch\n");
    assert_eq!(fact(&r, "l4t"), None);
}

#[test]
fn a_traceback_from_a_source_tree_missing_its_own_submodule_names_the_shadowing_folder() {
    let text = "Traceback (most recent call last):\n  \
        File \"/home/ann/src/onnx/onnx/__init__.py\", line 6, in <module>\n    \
        from onnx.onnx_cpp2py_export import ONNX_ML\n\
        ModuleNotFoundError: No module named 'onnx.onnx_cpp2py_export'\n";
    let r = diagnose_text(text);
    let f = r["findings"].as_array().unwrap().iter().find(|f| f["code"] == "module-shadowed-by-local-file");
    let f = f.unwrap_or_else(|| panic!("{:#}", r["findings"]));
    assert!(
        f["message"].as_str().unwrap().contains("/home/ann/src/onnx/onnx shadows the installed onnx"),
        "{f:#}"
    );
    assert!(f["message"].as_str().unwrap().ends_with("run from /home/ann/src/onnx"), "{f:#}");
    // The same error from the installed package's folder is no shadowing.
    let installed = text.replace("/home/ann/src/onnx/onnx", "/usr/lib/python3/dist-packages/onnx");
    assert!(
        !finding_codes(&diagnose_text(&installed)).contains(&"module-shadowed-by-local-file".to_string())
    );
    // A folder with a space is one word of the command.
    let spaced = diagnose_text(&text.replace("/home/ann/src", "/home/ann/my src"));
    let f =
        spaced["findings"].as_array().unwrap().iter().find(|f| f["code"] == "module-shadowed-by-local-file");
    let fix = f.unwrap()["fixes"][0].as_str().unwrap();
    assert_eq!(fix, r#"mv "/home/ann/my src/onnx/onnx" "/home/ann/my src/onnx/onnx.local""#);
    // Nor is another package's missing module.
    let other =
        text.replace("No module named 'onnx.onnx_cpp2py_export'", "No module named 'google.protobuf'");
    assert!(!finding_codes(&diagnose_text(&other)).contains(&"module-shadowed-by-local-file".to_string()));
}
