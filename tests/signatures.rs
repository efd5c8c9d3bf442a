//! Every error signature of matrix/errors.yaml fires on the message users
//! really see, alone in a paste, and a near miss does not fire it.

mod support;

use support::*;

/// (code, a real message line, a line that must not match).
const SAMPLES: &[(&str, &str, &str)] = &[
    (
        "error-driver-too-old-for-torch",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver",
        "The NVIDIA driver on your system is new enough",
    ),
    (
        "error-cudnn-version-incompatible",
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime version (8, 3, 3). PyTorch already comes bundled with cuDNN.",
        "cuDNN version 8.5.0 is compatible",
    ),
    (
        "error-cudnn-version-incompatible",
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600",
        "cuDNN version mismatch was fixed",
    ),
    (
        "error-protobuf-file-already-exists",
        "[libprotobuf ERROR google/protobuf/descriptor_database.cc:644] File already exists in database: onnx/onnx-ml.proto",
        "File already exists: onnx-ml.proto was written",
    ),
    (
        "error-no-cuda-device",
        "RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at /pytorch/aten/src/THC/THCGeneral.cpp:50",
        "a CUDA-capable device is detected",
    ),
    ("error-no-cuda-device", "RuntimeError: No CUDA GPUs are available", "CUDA GPUs are available"),
    (
        "error-glibc-too-old",
        "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by /env/lib/python3.10/site-packages/torch/lib/libtorch_python.so)",
        "glibc 2.28 found",
    ),
    (
        "error-cuda-driver-insufficient",
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "the CUDA driver version is fine",
    ),
    (
        "error-no-kernel-image",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "a kernel image is available",
    ),
    (
        "error-torch-sm-not-compatible",
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        "CUDA capability sm_120 is compatible",
    ),
    (
        "error-gpu-library-missing",
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
        "libcudnn.so.9 loaded fine",
    ),
    ("error-nvml-mismatch", "Failed to initialize NVML: Driver/library version mismatch", "NVML initialized"),
    (
        "error-forward-compat-unsupported",
        "CUDA error: forward compatibility was attempted on non supported HW",
        "forward compatibility is supported",
    ),
    (
        "error-protobuf-descriptors",
        "TypeError: Descriptors cannot be created directly.",
        "Descriptors can be created",
    ),
    (
        "error-protobuf-builder",
        "ImportError: cannot import name 'builder' from 'google.protobuf.internal' (/x/__init__.py)",
        "import builder",
    ),
    (
        "error-libprotobuf-missing",
        "ImportError: libprotobuf.so.20: cannot open shared object file: No such file or directory",
        "libprotobuf is fine",
    ),
    ("error-numpy1-module-under-numpy2", "AttributeError: _ARRAY_API not found", "numpy imported"),
    (
        "error-unsupported-ir-version",
        "[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:Unsupported model IR version: 11, max supported IR version: 10",
        "IR version 10 is supported",
    ),
    (
        "error-opset-not-supported",
        "ONNX Runtime only *guarantees* support for models stamped with official released onnx opset versions. Opset 22 is under development and support for this is limited.",
        "opset 17 works",
    ),
    (
        "error-cuda-provider-not-available",
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: 'CPUExecutionProvider'",
        "CUDAExecutionProvider is available",
    ),
    (
        "error-cuda-provider-failed-to-load",
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open shared object file",
        "loaded libonnxruntime_providers_cuda.so",
    ),
    (
        "error-torchvision-nms-missing",
        "RuntimeError: operator torchvision::nms does not exist",
        "torchvision::nms exists",
    ),
    (
        "error-torch-not-compiled-with-cuda",
        "AssertionError: Torch not compiled with CUDA enabled",
        "Torch compiled with CUDA",
    ),
    (
        "error-tensorrt-engine-version",
        "[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::42] Error Code 1: Serialization (Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match.)",
        "version tag matches",
    ),
    (
        "error-tensorrt-unsupported-node",
        "[E] [TRT] ModelImporter.cpp:726: ERROR: ModelImporter.cpp:185 In function parseGraph: [8] No importer registered for op: GridSample",
        "importer registered",
    ),
    (
        "error-onnx-export-aten",
        "torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::grid_sampler' to ONNX opset version 11 is not supported.",
        "exported aten ops",
    ),
];

fn paste_codes(text: &str) -> Vec<String> {
    let out = doctor()
        .args(["diagnose", "-", "--format", "json"])
        .write_stdin(text.as_bytes().to_vec())
        .output()
        .unwrap();
    if out.stdout.is_empty() {
        return Vec::new();
    }
    finding_codes(&json(&out.stdout))
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
        let fired = paste_codes(&format!("prose before\n{line}\nprose after\n"));
        assert!(fired.contains(&code.to_string()), "{code} did not fire on {line:?}: {fired:?}");
        let quiet = paste_codes(&format!("{near_miss}\n"));
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
