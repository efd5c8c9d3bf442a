//! The NVIDIA probes on machines built for the test: a fake NVML compiled
//! from C and loaded through nvml-wrapper's real loader, fixture roots for
//! /proc and toolkits, fake nvidia-smi executables, and real ELF libraries
//! built with gcc for the loader resolution.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// Runs `--fast` on a metadata-only environment with NVML from `nvml`.
fn check(nvml: &Path, env: &Path, extra: &[&str]) -> (i32, Value) {
    let out = doctor()
        .args(["--format", "json", "--fast", "--nvml-lib"])
        .arg(nvml)
        .arg("--python")
        .arg(env)
        .args(extra)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

/// A machine made for one test: a fake NVML built with these `-D` flags
/// (driver, CUDA, GPUs; the defaults are one RTX 5090 under driver
/// 570.124.06), and Python environments that hold only package metadata.
struct Machine {
    dir: tempfile::TempDir,
    nvml: std::path::PathBuf,
    envs: usize,
}

impl Machine {
    fn new(defines: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let nvml = fake_nvml(dir.path(), defines);
        Self { dir, nvml, envs: 0 }
    }

    /// A fresh Python 3.11 environment with these distributions (`torch-2.6.0+cu126`).
    fn env(&mut self, dists: &[&str]) -> std::path::PathBuf {
        self.envs += 1;
        metadata_env(&self.dir.path().join(format!("env{}", self.envs)), "3.11.9", dists)
    }

    /// `--fast` on a fresh environment with these distributions.
    fn check(&mut self, dists: &[&str]) -> (i32, Value) {
        let env = self.env(dists);
        check(&self.nvml, &env, &[])
    }
}

/// `--fast` with `LD_LIBRARY_PATH` set, as a user who exported it would run it.
fn fast_with_library_path(
    nvml: &Path,
    env: &Path,
    library_path: impl AsRef<std::ffi::OsStr>,
) -> std::process::Output {
    doctor()
        .env("LD_LIBRARY_PATH", library_path)
        .args(["--format", "json", "--fast", "--nvml-lib"])
        .arg(nvml)
        .arg("--python")
        .arg(env)
        .output()
        .unwrap()
}

fn nvidia(report: &Value) -> &Value {
    &report["snapshot"]["nvidia"]["found"]
}

#[test]
fn a_healthy_two_gpu_machine_is_read_through_nvml() {
    let mut m = Machine::new(&["GPU_COUNT=2"]);
    let (code, report) = m.check(&["numpy-1.26.4"]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    let n = nvidia(&report);
    assert_eq!(n["nvml"]["state"], "ok");
    assert_eq!(n["driver"]["found"]["version"], "570.124.06");
    assert_eq!(n["driver"]["found"]["max_cuda"], "12.8");
    let gpus = n["gpus"]["found"].as_array().unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[0]["name"], "NVIDIA GeForce RTX 5090");
    assert_eq!(gpus[0]["compute_capability"], "12.0");
    assert_eq!(gpus[0]["architecture"], "Blackwell");
    assert_eq!(gpus[0]["memory_mib"], 32768);
    assert_eq!(gpus[1]["compute_capability"], "7.5");
    assert_eq!(gpus[1]["uuid"], "GPU-00000000-1111-2222-3333-444444444441");
}

#[test]
fn each_nvml_failure_is_its_own_state() {
    let t = tempfile::tempdir().unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    for (rc, state) in [("9", "driver_not_loaded"), ("4", "no_permission"), ("18", "version_mismatch")] {
        let lib = fake_nvml(t.path(), &[&format!("INIT_RC={rc}")]);
        let (_, report) = check(&lib, &env, &[]);
        assert_eq!(nvidia(&report)["nvml"]["state"], state, "rc {rc}");
    }
    let (_, report) = check(Path::new("/nonexistent/libnvidia-ml.so.1"), &env, &[]);
    assert_eq!(nvidia(&report)["nvml"]["state"], "no_library");
    assert!(nvidia(&report)["nvml"]["detail"].as_str().unwrap().contains("cannot open shared object file"));
}

#[test]
fn an_upgraded_but_not_rebooted_driver_is_an_error_with_the_reboot_fix() {
    let t = tempfile::tempdir().unwrap();
    let lib = fake_nvml(t.path(), &["INIT_RC=18"]);
    let root = t.path().join("root");
    let proc = root.join("proc/driver/nvidia");
    std::fs::create_dir_all(&proc).unwrap();
    std::fs::write(
        proc.join("version"),
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n",
    )
    .unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    let (code, report) = check(&lib, &env, &["--root", root.to_str().unwrap()]);
    assert_eq!(code, 1);
    let f = finding(&report, "nvml-driver-library-mismatch");
    assert_eq!(f["fixes"][0], "sudo reboot");
    assert!(f["message"].as_str().unwrap().contains("535.104.05"), "{f:#}");
    // The driver is still known, from the kernel module.
    assert_eq!(nvidia(&report)["driver"]["found"]["source"], "/proc/driver/nvidia/version");
}

#[test]
fn a_kernel_module_that_differs_from_the_libraries_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let lib = fake_nvml(t.path(), &["DRIVER=\"550.54.14\""]);
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("proc/driver/nvidia")).unwrap();
    std::fs::write(
        root.join("proc/driver/nvidia/version"),
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build  (dvs-builder@U16-T02-35-3)\n",
    )
    .unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    let (_, report) = check(&lib, &env, &["--root", root.to_str().unwrap()]);
    let f = finding(&report, "driver-kernel-module-mismatch");
    assert_eq!(f["message"], "the NVIDIA libraries are 550.54.14 but the loaded kernel module is 535.104.05");
}

#[test]
fn an_nvml_call_that_hangs_is_abandoned_at_the_timeout() {
    let t = tempfile::tempdir().unwrap();
    let lib = fake_nvml(t.path(), &["HANG_INIT"]);
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    let started = Instant::now();
    let (_, report) = check(&lib, &env, &["--timeout", "1"]);
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!(nvidia(&report)["nvml"]["state"], "hung");
}

#[test]
fn rtx_5090_with_a_cu126_torch_gets_the_cu128_fix() {
    let mut m = Machine::new(&[]);
    let (code, report) = m.check(&["torch-2.6.0+cu126", "torchvision-0.21.0+cu126"]);
    assert_eq!(code, 1);
    let f = finding(&report, "gpu-not-supported-by-torch-build");
    assert!(
        f["message"].as_str().unwrap().contains("NVIDIA GeForce RTX 5090, compute capability 12.0"),
        "{f:#}"
    );
    assert!(f["fixes"][0].as_str().unwrap().contains("/whl/cu128"), "{f:#}");
    assert!(f["fixes"][0].as_str().unwrap().contains("torch>=2.7"), "{f:#}");
    // Driver 570 runs CUDA 12.6: no driver finding.
    assert!(!finding_codes(&report).iter().any(|c| c.starts_with("driver-")), "{:#}", report["findings"]);
}

#[test]
fn the_same_gpu_with_a_cu128_torch_is_fine() {
    let mut m = Machine::new(&[]);
    let (code, report) = m.check(&["torch-2.7.1+cu128", "torchvision-0.22.1+cu128"]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    let outcome = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["code"] == "gpu-not-supported-by-torch-build")
        .unwrap()
        .clone();
    assert_eq!(outcome["status"], "passed");
}

#[test]
fn a_pascal_gpu_with_a_cu128_torch_gets_the_cu126_fix() {
    let mut m = Machine::new(&["GPU0_NAME=\"NVIDIA GeForce GTX 1080 Ti\"", "GPU0_CC=6,1", "GPU0_ARCH=4"]);
    let (_, report) = m.check(&["torch-2.8.0+cu128"]);
    let f = finding(&report, "gpu-not-supported-by-torch-build");
    assert!(f["fixes"][0].as_str().unwrap().contains("/whl/cu126"), "{f:#}");
}

#[test]
fn driver_470_with_a_cuda_12_1_torch_is_too_old() {
    let mut m = Machine::new(&[
        "DRIVER=\"470.82.01\"",
        "CUDA_INT=11040",
        "GPU0_NAME=\"Tesla T4\"",
        "GPU0_CC=7,5",
        "GPU0_ARCH=6",
    ]);
    let (code, report) = m.check(&["torch-2.1.0+cu121"]);
    assert_eq!(code, 1);
    let f = finding(&report, "driver-too-old-for-torch-cuda");
    assert_eq!(
        f["message"],
        "torch 2.1.0+cu121 is built for CUDA 12.1, which needs an NVIDIA driver >= 525.60.13; this machine has 470.82.01"
    );
    // The first fix is the newest CUDA build of the same torch this driver
    // runs; the generic advice follows it.
    let first = f["fixes"][0].as_str().unwrap();
    assert!(first.contains("\"torch==2.1.0+cu118\"") && first.contains("/whl/cu118"), "{f:#}");
    assert!(f["fixes"][1].as_str().unwrap().contains("driver 470.82.01 supports"), "{f:#}");
    // One floor-crossing finding, not the compatibility warning as well.
    assert!(!finding_codes(&report).contains(&"driver-below-cuda-toolkit-driver".to_string()));
}

#[test]
fn a_driver_inside_minor_version_compatibility_is_a_warning() {
    let mut m = Machine::new(&[
        "DRIVER=\"535.104.05\"",
        "CUDA_INT=12020",
        "GPU0_NAME=\"NVIDIA A100\"",
        "GPU0_CC=8,0",
    ]);
    let (code, report) = m.check(&["torch-2.4.1+cu124"]);
    assert_eq!(code, 0);
    assert_eq!(finding(&report, "driver-below-cuda-toolkit-driver")["severity"], "warning");
}

#[test]
fn a_pascal_gpu_under_driver_590_is_dropped() {
    let mut m =
        Machine::new(&["DRIVER=\"595.45.04\"", "CUDA_INT=13020", "GPU0_NAME=\"Tesla P40\"", "GPU0_CC=6,1"]);
    let (code, report) = m.check(&[]);
    assert_eq!(code, 1);
    finding(&report, "gpu-dropped-by-driver-branch");
}

#[test]
fn nvidia_smi_is_the_fallback_and_old_ones_lose_only_compute_cap() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // An R470-era nvidia-smi: rejects compute_cap, answers the rest.
    script(
        &bin,
        "nvidia-smi",
        "#!/bin/sh\ncase \"$1\" in *compute_cap*) echo 'Field \"compute_cap\" is not a valid field to query.'; exit 2;; esac\n\
         echo '0, Tesla T4, 470.82.01, 15109, GPU-abc'\n",
    );
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = doctor()
        .env("PATH", path)
        .args(["--format", "json", "--fast", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(&env)
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let n = nvidia(&report);
    assert_eq!(n["driver"]["found"]["version"], "470.82.01");
    assert_eq!(n["driver"]["found"]["source"], "nvidia-smi");
    assert_eq!(n["gpus"]["found"][0]["name"], "Tesla T4");
    assert_eq!(n["gpus"]["found"][0]["memory_mib"], 15109);
    assert!(n["gpus"]["found"][0]["compute_capability"].is_null());
}

#[test]
fn a_hanging_or_babbling_nvidia_smi_does_not_hold_the_doctor() {
    let t = tempfile::tempdir().unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    for body in ["#!/bin/sh\nsleep 600\n", "#!/bin/sh\nhead -c 2000 /dev/urandom\n"] {
        let bin = tempfile::tempdir().unwrap();
        script(bin.path(), "nvidia-smi", body);
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap());
        let started = Instant::now();
        let out = doctor()
            .env("PATH", path)
            .args([
                "--format",
                "json",
                "--fast",
                "--timeout",
                "1",
                "--nvml-lib",
                "/nonexistent/x.so",
                "--python",
            ])
            .arg(&env)
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
        let report = json(&out.stdout);
        assert!(nvidia(&report)["driver"]["not_evaluated"].is_string(), "{:#}", nvidia(&report));
        // An nvidia-smi that is installed but does not answer is a driver
        // not answering, never "no NVIDIA driver".
        assert!(nvidia(&report)["smi_failure"].is_string(), "{:#}", nvidia(&report));
        let text = doctor()
            .env("PATH", format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap()))
            .args(["--fast", "--timeout", "1", "--nvml-lib", "/nonexistent/x.so", "--python"])
            .arg(&env)
            .output()
            .unwrap();
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(!text.contains("no NVIDIA driver") && !text.contains("not found: NVIDIA driver"), "{text}");
        assert!(text.contains("nvidia-smi"), "{text}");
    }
}

#[test]
fn toolkits_headers_and_library_copies_are_found_with_their_origin() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    let cuda = root.join("usr/local/cuda-12.4");
    std::fs::create_dir_all(cuda.join("lib64")).unwrap();
    std::fs::create_dir_all(cuda.join("include")).unwrap();
    std::fs::write(cuda.join("version.json"), r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#)
        .unwrap();
    std::fs::write(cuda.join("lib64/libcudart.so.12.4.127"), "").unwrap();
    std::fs::write(
        cuda.join("include/cudnn_version.h"),
        "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n",
    )
    .unwrap();
    let trt = root.join("usr/local/TensorRT-8.6.1.6");
    std::fs::create_dir_all(trt.join("lib")).unwrap();
    std::fs::write(trt.join("lib/libnvinfer.so.8.6.1"), "").unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["tensorrt-10.3.0"]);
    let libs = site_packages(&env).join("tensorrt_libs");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::write(libs.join("libnvinfer.so.10"), "").unwrap();
    let (_, report) = check(Path::new("/nonexistent/x.so"), &env, &["--root", root.to_str().unwrap()]);
    let n = nvidia(&report);
    assert_eq!(n["toolkits"][0]["version"]["found"], "12.4.1");
    assert_eq!(n["toolkits"][0]["found_via"], "/usr/local/cuda-12.4");
    assert_eq!(n["headers"][0]["version"], "9.1.0");
    let libs = n["libraries"].as_array().unwrap();
    let cudart = libs.iter().find(|l| l["library"] == "cudart").unwrap();
    assert_eq!(cudart["version"], "12.4.127");
    assert!(cudart["origin"].as_str().unwrap().starts_with("CUDA toolkit"));
    let wheel = libs.iter().find(|l| l["file"] == "libnvinfer.so.10").unwrap();
    assert!(wheel["origin"].as_str().unwrap().starts_with("pip wheel in"));
    let f = finding(&report, "tensorrt-several-versions");
    assert!(
        f["message"].as_str().unwrap().contains("8.6") && f["message"].as_str().unwrap().contains("10.3"),
        "{f:#}"
    );
}

/// A fake onnxruntime-gpu: a CUDA provider library that needs
/// `libfakecudnn.so.9`, which exists only inside a pip wheel directory.
fn fake_ort_provider(t: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let env = metadata_env(&t.join("env"), "3.11.9", &["onnxruntime_gpu-1.20.1"]);
    let site = site_packages(&env);
    let wheel_lib = site.join("nvidia/cudnn/lib");
    shared_library(
        &wheel_lib.join("libcudnn.so.9"),
        "int cudnn_stub(void) { return 9; }",
        &["-Wl,-soname,libcudnn.so.9"],
    );
    let capi = site.join("onnxruntime/capi");
    shared_library(
        &capi.join("libonnxruntime_providers_shared.so"),
        "int shared_stub(void) { return 1; }",
        &["-Wl,-soname,libonnxruntime_providers_shared.so"],
    );
    let l = format!("-L{}", wheel_lib.display());
    let c = format!("-L{}", capi.display());
    shared_library(
        &capi.join("libonnxruntime_providers_cuda.so"),
        "int cudnn_stub(void); int shared_stub(void); int provider(void) { return cudnn_stub() + shared_stub(); }",
        &[
            &l,
            &c,
            "-l:libcudnn.so.9",
            "-l:libonnxruntime_providers_shared.so",
            "-Wl,--enable-new-dtags,-rpath,$ORIGIN",
        ],
    );
    (env, wheel_lib)
}

/// The CUDA provider needs a cuDNN that only the environment's own
/// nvidia-cudnn wheel has: onnxruntime runs on the CPU unless the script
/// preloads it, which is a warning with the preload fix first.
#[test]
fn a_cuda_provider_whose_cudnn_is_only_in_a_pip_wheel_needs_preloading() {
    let t = tempfile::tempdir().unwrap();
    let (env, wheel_lib) = fake_ort_provider(t.path());
    let lib = fake_nvml(t.path(), &[]);
    let (code, report) = check(&lib, &env, &[]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    let f = finding(&report, "onnxruntime-provider-needs-preload");
    assert_eq!(f["severity"], "warning");
    assert!(f["message"].as_str().unwrap().contains("libcudnn.so.9"), "{f:#}");
    assert!(f["why"].as_str().unwrap().contains("runs on the CPU"), "{f:#}");
    assert!(f["fixes"][0].as_str().unwrap().starts_with("call onnxruntime.preload_dlls()"), "{f:#}");
    assert_eq!(f["fixes"][1], format!("export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH", wheel_lib.display()));
    let link = &nvidia(&report)["links"][0];
    assert_eq!(link["role"], "onnxruntime-cuda-provider");
    // $ORIGIN in RUNPATH found the provider's sibling.
    let shared = link["resolved"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["soname"] == "libonnxruntime_providers_shared.so")
        .unwrap();
    assert_eq!(shared["via"], "RUNPATH");
}

#[test]
fn the_printed_library_path_fix_makes_the_provider_load() {
    let t = tempfile::tempdir().unwrap();
    let (env, wheel_lib) = fake_ort_provider(t.path());
    let lib = fake_nvml(t.path(), &[]);
    let out = fast_with_library_path(&lib, &env, &wheel_lib);
    let report = json(&out.stdout);
    assert!(
        !finding_codes(&report).contains(&"onnxruntime-provider-cannot-load".to_string()),
        "{:#}",
        report["findings"]
    );
    let link = &nvidia(&report)["links"][0];
    let cudnn = link["resolved"].as_array().unwrap().iter().find(|r| r["soname"] == "libcudnn.so.9").unwrap();
    assert_eq!(cudnn["via"], "LD_LIBRARY_PATH");
}

/// A Windows onnxruntime-gpu: a CUDA provider DLL (built with mingw-w64,
/// a real import table) that needs cuBLAS 12's DLLs and finds its shared
/// provider DLL beside itself.
fn fake_windows_provider(t: &Path) -> PathBuf {
    let env = windows_metadata_env(&t.join("env"), &["onnxruntime_gpu-1.20.1"]);
    let capi = env.join("Lib/site-packages/onnxruntime/capi");
    mingw_dll(&capi.join("onnxruntime_providers_shared.dll"), &["KERNEL32.dll"]);
    mingw_dll(
        &capi.join("onnxruntime_providers_cuda.dll"),
        &[
            "cublasLt64_12.dll",
            "cublas64_12.dll",
            "onnxruntime_providers_shared.dll",
            "api-ms-win-crt-runtime-l1-1-0.dll",
        ],
    );
    env
}

/// Windows' twin of the missing libcurand: the provider's imports are read
/// from its PE import table, the DLL nowhere on the search path is named
/// with the wheel that ships it; once that wheel is in the environment the
/// finding is the preload warning, with a PATH line for PowerShell.
#[test]
fn a_windows_cuda_provider_whose_cublas_is_nowhere_names_the_wheel_that_ships_it() {
    let t = tempfile::tempdir().unwrap();
    let env = fake_windows_provider(t.path());
    let nowhere = t.path().join("nvml.dll");
    let (code, report) = check(&nowhere, &env, &[]);
    assert_eq!(code, 1, "{:#}", report["findings"]);
    let f = finding(&report, "onnxruntime-provider-cannot-load");
    assert!(f["message"].as_str().unwrap().contains("cublasLt64_12.dll, cublas64_12.dll"), "{f:#}");
    assert!(f["fixes"][0].as_str().unwrap().contains(" -m pip install \"nvidia-cublas-cu12\"   #"), "{f:#}");
    let link = &nvidia(&report)["links"][0];
    assert_eq!(link["role"], "onnxruntime-cuda-provider");
    let shared = &link["resolved"][0];
    assert_eq!(shared["soname"], "onnxruntime_providers_shared.dll");
    assert_eq!(shared["via"], "the library's folder");

    // The wheel installed (its DLLs in nvidia\cublas\bin): found, not on the path.
    let site = env.join("Lib/site-packages");
    let bin = site.join("nvidia/cublas/bin");
    mingw_dll(&bin.join("cublasLt64_12.dll"), &["KERNEL32.dll"]);
    mingw_dll(&bin.join("cublas64_12.dll"), &["cublasLt64_12.dll"]);
    let info = site.join("nvidia_cublas_cu12-12.9.2.10.dist-info");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(info.join("METADATA"), "Name: nvidia-cublas-cu12\r\nVersion: 12.9.2.10\r\n\r\n").unwrap();
    let (code, report) = check(&nowhere, &env, &[]);
    assert_eq!(code, 0, "{:#}", report["findings"]);
    let f = finding(&report, "onnxruntime-provider-needs-preload");
    assert!(f["fixes"][0].as_str().unwrap().starts_with("call onnxruntime.preload_dlls()"), "{f:#}");
    assert_eq!(
        f["fixes"][1],
        format!(
            "$env:PATH = '{};' + $env:PATH   # PowerShell, this session; onnxruntime searches PATH for its providers' DLLs",
            bin.display()
        )
    );
    assert!(!f["fixes"].to_string().contains("LD_LIBRARY_PATH"), "{f:#}");
}

/// The Visual C++ runtime, judged the way Windows would load it for a
/// Windows drive read from here (`--root`): none in System32, one older
/// than the toolset that linked the provider, then a new enough one.
#[test]
fn a_windows_provider_is_judged_against_the_visual_cpp_runtime_windows_would_load() {
    let t = tempfile::tempdir().unwrap();
    let drive = t.path().join("c");
    let system32 = drive.join("Windows/System32");
    std::fs::create_dir_all(&system32).unwrap();
    let env = windows_metadata_env(&drive.join("env"), &["onnxruntime_gpu-1.20.1"]);
    let capi = env.join("Lib/site-packages/onnxruntime/capi");
    mingw_dll(&capi.join("onnxruntime_providers_shared.dll"), &["KERNEL32.dll"]);
    let provider = mingw_dll(
        &capi.join("onnxruntime_providers_cuda.dll"),
        &["onnxruntime_providers_shared.dll", "MSVCP140.dll", "VCRUNTIME140.dll", "VCRUNTIME140_1.dll"],
    );
    set_linker_version(&provider, (14, 42));
    let root = drive.to_str().unwrap();
    let nowhere = t.path().join("nvml.dll");

    let (code, report) = check(&nowhere, &env, &["--root", root]);
    assert_eq!(code, 1, "{:#}", report["findings"]);
    let f = finding(&report, "vc-runtime-missing");
    assert!(
        f["message"].as_str().unwrap().starts_with(
            "Windows would not find MSVCP140.dll, VCRUNTIME140.dll, VCRUNTIME140_1.dll of the Microsoft Visual C++ runtime, imported by /"
        ),
        "{f:#}"
    );
    assert!(
        f["fixes"][0]
            .as_str()
            .unwrap()
            .starts_with("winget install --exact --id Microsoft.VCRedist.2015+.x64")
    );
    assert!(f["components"].as_array().unwrap().iter().any(|c| c == "onnxruntime"), "{f:#}");

    // An old runtime in System32 (as an application that copies its own leaves it).
    for dll in ["msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"] {
        mingw_versioned_dll(&system32.join(dll), "14.34.31931.0");
    }
    let (_, report) = check(&nowhere, &env, &["--root", root]);
    assert!(!finding_codes(&report).contains(&"vc-runtime-missing".to_string()));
    let f = finding(&report, "vc-runtime-older-than-build");
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        f["message"],
        "MSVCP140.dll is 14.34.31931.0, older than the 14.42 toolset that built onnxruntime_providers_cuda.dll"
    );
    let vc = &nvidia(&report)["links"][0]["vc_runtime"];
    assert_eq!(vc["built_with"], "14.42", "{vc:#}");

    // The runtime updated: nothing to say.
    for dll in ["msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"] {
        mingw_versioned_dll(&system32.join(dll), "14.44.35211.0");
    }
    let (_, report) = check(&nowhere, &env, &["--root", root]);
    let codes = finding_codes(&report);
    assert!(!codes.iter().any(|c| c.starts_with("vc-runtime")), "{codes:?}");

    // Read from Linux with no Windows drive given, the runtime is not judged.
    let (_, report) = check(&nowhere, &env, &[]);
    assert!(nvidia(&report)["links"][0].get("vc_runtime").is_none());
}

/// The real onnxruntime-gpu Windows wheel, read as it is: its CUDA
/// provider imports cuBLAS 13's DLLs, which no environment without
/// NVIDIA's wheels has, and the fix is the CUDA 13 wheel that ships them.
#[test]
fn the_real_onnxruntime_gpu_windows_wheel_names_the_cuda_dlls_it_lacks() {
    let t = tempfile::tempdir().unwrap();
    let env = windows_metadata_env(&t.path().join("env"), &[]);
    windows_wheel_unpacked("onnxruntime-gpu==1.31.1", &env.join("Lib/site-packages"));
    let (_, report) = check(&t.path().join("nvml.dll"), &env, &[]);
    let links = nvidia(&report)["links"].as_array().unwrap();
    let provider =
        links.iter().find(|l| l["role"] == "onnxruntime-cuda-provider").expect("the CUDA provider");
    let missing: Vec<&str> =
        provider["unresolved"].as_array().unwrap().iter().map(|u| u["soname"].as_str().unwrap()).collect();
    assert_eq!(missing, ["cublasLt64_13.dll", "cublas64_13.dll"], "{provider:#}");
    let f = finding(&report, "onnxruntime-provider-cannot-load");
    assert!(f["fixes"][0].as_str().unwrap().contains(" -m pip install \"nvidia-cublas\"   #"), "{f:#}");

    // Its DLLs name the toolset that linked them (Visual Studio 2022) and
    // the Visual C++ runtime they import, which an empty System32 lacks.
    std::fs::create_dir_all(t.path().join("Windows/System32")).unwrap();
    let (_, report) = check(&t.path().join("nvml.dll"), &env, &["--root", t.path().to_str().unwrap()]);
    let links = nvidia(&report)["links"].as_array().unwrap();
    let provider = links.iter().find(|l| l["role"] == "onnxruntime-cuda-provider").unwrap();
    let vc = &provider["vc_runtime"];
    let built: Vec<u32> = vc["built_with"].as_str().unwrap().split('.').map(|p| p.parse().unwrap()).collect();
    assert!(built[0] == 14 && built[1] >= 30, "{vc:#}");
    let dlls: Vec<&str> =
        vc["dlls"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert!(dlls.contains(&"MSVCP140.dll") && dlls.contains(&"VCRUNTIME140_1.dll"), "{dlls:?}");
    assert!(finding_codes(&report).contains(&"vc-runtime-missing".to_string()));
}

/// `readelf -d` as an independent oracle: the provider's DT_NEEDED entries
/// that `ldconfig -p` does not know.
fn needed_but_not_in_the_loader_cache(lib: &Path) -> Vec<String> {
    #[allow(clippy::disallowed_methods)]
    let readelf = std::process::Command::new("readelf").arg("-d").arg(lib).output().unwrap();
    #[allow(clippy::disallowed_methods)]
    let ldconfig = std::process::Command::new("/sbin/ldconfig").arg("-p").output().unwrap();
    let cache = String::from_utf8_lossy(&ldconfig.stdout).to_string();
    String::from_utf8_lossy(&readelf.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next().map(str::to_string))
        .filter(|so| !cache.contains(&format!("\t{so} ")))
        .collect()
}

#[test]
fn the_real_onnxruntime_gpu_wheel_names_exactly_the_cuda_libraries_it_lacks() {
    let venv = onnxruntime_gpu_venv();
    let out = doctor()
        .args(["--format", "json", "--fast", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(venv.join("bin/python"))
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let links = nvidia(&report)["links"].as_array().unwrap();
    let provider =
        links.iter().find(|l| l["role"] == "onnxruntime-cuda-provider").expect("the CUDA provider is found");
    let mut doctor_says: Vec<String> = provider["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["soname"].as_str().unwrap().to_string())
        .collect();
    let mut oracle = needed_but_not_in_the_loader_cache(Path::new(provider["library"].as_str().unwrap()));
    doctor_says.sort();
    oracle.sort();
    assert!(!oracle.is_empty());
    assert_eq!(doctor_says, oracle);
    assert_eq!(links.iter().filter(|l| l["role"] == "onnxruntime-cuda-provider").count(), 1, "lib64 is lib");
    let f = finding(&report, "onnxruntime-provider-cannot-load");
    // No copy anywhere: the first fix installs the wheels that ship them.
    assert!(f["fixes"][0].as_str().unwrap().contains("-m pip install \"nvidia-"), "{f:#}");
    let extras = "/bin/python -m pip install \"onnxruntime-gpu[cuda,cudnn]==";
    assert!(f["fixes"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains(extras)), "{f:#}");
}

#[test]
fn forward_compat_libraries_on_a_geforce_gpu_are_an_error() {
    let t = tempfile::tempdir().unwrap();
    let lib = fake_nvml(t.path(), &["DRIVER=\"535.104.05\"", "CUDA_INT=13000"]);
    let compat = t.path().join("usr/local/cuda-13.0/compat");
    std::fs::create_dir_all(&compat).unwrap();
    std::fs::write(compat.join("libcuda.so.580.65.06"), "").unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &[]);
    let out = doctor()
        .env("LD_LIBRARY_PATH", &compat)
        .env("NVIDIA_VISIBLE_DEVICES", "all")
        .args(["--format", "json", "--fast", "--nvml-lib"])
        .arg(&lib)
        .arg("--python")
        .arg(&env)
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    let f = finding(&report, "forward-compat-on-unsupported-gpu");
    assert!(f["message"].as_str().unwrap().contains("libcuda.so.580.65.06"), "{f:#}");
    assert_eq!(nvidia(&report)["container"]["visible_devices"], "all");

    // A data-centre GPU supports forward compatibility.
    let lib =
        fake_nvml(t.path(), &["DRIVER=\"535.104.05\"", "GPU0_NAME=\"NVIDIA H100 80GB HBM3\"", "GPU0_CC=9,0"]);
    let out = fast_with_library_path(&lib, &env, &compat);
    assert!(!finding_codes(&json(&out.stdout)).contains(&"forward-compat-on-unsupported-gpu".to_string()));
}

#[test]
fn a_cuda_13_tensorrt_wheel_under_a_535_driver_is_too_old() {
    let mut m =
        Machine::new(&["DRIVER=\"535.104.05\"", "CUDA_INT=12020", "GPU0_NAME=\"NVIDIA L4\"", "GPU0_CC=8,9"]);
    let (code, report) = m.check(&["tensorrt_cu13-10.14.1.48"]);
    assert_eq!(code, 1);
    finding(&report, "driver-too-old-for-tensorrt-cu13");
    let (code, _) = m.check(&["tensorrt_cu12-10.14.1.48"]);
    assert_eq!(code, 0);
}

#[test]
fn onnxruntime_gpu_for_cuda_13_under_a_cuda_12_driver() {
    let mut m =
        Machine::new(&["DRIVER=\"550.54.14\"", "CUDA_INT=12040", "GPU0_NAME=\"NVIDIA L4\"", "GPU0_CC=8,9"]);
    let (code, report) = m.check(&["onnxruntime_gpu-1.28.0"]);
    assert_eq!(code, 1);
    let f = finding(&report, "driver-too-old-for-onnxruntime-gpu");
    assert!(f["message"].as_str().unwrap().contains("CUDA 13"), "{f:#}");
    let (_, report) = m.check(&["onnxruntime_gpu-1.20.1"]);
    assert!(!finding_codes(&report).contains(&"driver-too-old-for-onnxruntime-gpu".to_string()));
}

#[test]
fn a_kepler_gpu_after_the_r470_branch_is_dropped() {
    let mut m =
        Machine::new(&["DRIVER=\"535.104.05\"", "CUDA_INT=12020", "GPU0_NAME=\"Tesla K80\"", "GPU0_CC=3,7"]);
    let (_, report) = m.check(&[]);
    finding(&report, "kepler-gpu-dropped-by-driver-branch");
    let mut m =
        Machine::new(&["DRIVER=\"470.82.01\"", "CUDA_INT=11040", "GPU0_NAME=\"Tesla K80\"", "GPU0_CC=3,7"]);
    let (_, report) = m.check(&[]);
    assert!(!finding_codes(&report).contains(&"kepler-gpu-dropped-by-driver-branch".to_string()));
}

/// What decides whether CUDA sees a GPU is recorded: CUDA_VISIBLE_DEVICES
/// as set (empty counts), and the /dev/nvidiaN nodes under the root.
#[test]
fn gpu_visibility_is_read_from_the_environment_and_the_device_nodes() {
    let mut m = Machine::new(&[]);
    let env = m.env(&[]);
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("dev")).unwrap();
    for node in ["nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"] {
        std::fs::write(root.path().join("dev").join(node), "").unwrap();
    }
    let out = doctor()
        .env("CUDA_VISIBLE_DEVICES", "")
        .args(["--format", "json", "--fast", "--root", root.path().to_str().unwrap(), "--nvml-lib"])
        .arg(&m.nvml)
        .arg("--python")
        .arg(&env)
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let container = &nvidia(&report)["container"];
    assert_eq!(container["cuda_visible_devices"], "");
    assert_eq!(container["device_nodes"], 2);
}
