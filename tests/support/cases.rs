//! Every fact rule and every builtin check with the world it fires in and
//! its closest neighbour where it does not: one version across the
//! boundary, or the one fact that makes the difference. every_rule.rs
//! judges them; resolution.rs resolves the commands their findings print.

use super::world::World;
use serde_json::json;

/// (code, the world where it fires, its neighbour where it does not).
pub fn cases() -> Vec<(&'static str, World, World)> {
    let w = World::new;
    let torch_cuda = |cudnn: &str| json!({"version": "2.4.1", "cuda": "12.1", "cudnn_version": cudnn});
    vec![
        // -- Python packages ---------------------------------------------------------------
        (
            "onnxruntime-built-against-numpy1",
            w().dists(&[("onnxruntime", "1.18.1"), ("numpy", "2.0.0")]),
            w().dists(&[("onnxruntime", "1.19.0"), ("numpy", "2.0.0")]),
        ),
        (
            "onnx-untested-with-numpy2",
            w().dists(&[("onnx", "1.16.2"), ("numpy", "2.0.0")]),
            w().dists(&[("onnx", "1.17.0"), ("numpy", "2.0.0")]),
        ),
        (
            "torch-built-against-numpy1",
            w().dists(&[("torch", "2.2.2"), ("numpy", "2.0.0")]),
            w().dists(&[("torch", "2.3.0"), ("numpy", "2.0.0")]),
        ),
        (
            "onnx-protobuf-too-old-for-generated-code",
            w().python("3.10.14").dists(&[("onnx", "1.12.0"), ("protobuf", "3.19.6")]),
            w().python("3.10.14").dists(&[("onnx", "1.12.0"), ("protobuf", "3.20.1")]),
        ),
        (
            "onnx-protobuf4-descriptors",
            w().python("3.9.19").dists(&[("onnx", "1.11.0"), ("protobuf", "4.21.0")]),
            w().python("3.9.19").dists(&[("onnx", "1.11.0"), ("protobuf", "3.20.3")]),
        ),
        (
            "onnxruntime-cpu-and-gpu-both-installed",
            w().dists(&[("onnxruntime", "1.20.1"), ("onnxruntime-gpu", "1.20.1")]),
            w().dists(&[("onnxruntime-gpu", "1.20.1")]),
        ),
        (
            // A paste names rembg[gpu] 2.0.55 and no package list: its
            // requirements installed the CPU onnxruntime too.
            "onnxruntime-required-beside-gpu",
            w().dists(&[("onnxruntime", "(required by rembg 2.0.55)"), ("onnxruntime-gpu", "1.20.1")]),
            w().dists(&[("onnxruntime", "(required by rembg 2.0.55)")]),
        ),
        (
            "opencv-gui-and-headless-both-installed",
            w().dists(&[("opencv-python", "4.10.0.84"), ("opencv-python-headless", "4.10.0.84")]),
            w().dists(&[("opencv-python", "4.10.0.84"), ("numpy", "1.26.4")]),
        ),
        (
            "onnx-ir-newer-than-onnxruntime",
            w().dists(&[("onnx", "1.17.0"), ("onnxruntime", "1.17.3")])
                .imported("onnx", json!({"ir_version": 10, "max_opset": 20})),
            w().dists(&[("onnx", "1.17.0"), ("onnxruntime", "1.18.0")])
                .imported("onnx", json!({"ir_version": 10, "max_opset": 20})),
        ),
        (
            "onnxruntime-refuses-onnx-default",
            w().dists(&[("onnx", "1.20.0"), ("onnxruntime", "1.31.1")])
                .imported("onnx", json!({"ir_version": 14, "max_opset": 28}))
                .imported("onnxruntime", json!({"trial_onnx_default": "refused: Unsupported model IR version: 14, max supported IR version: 13"})),
            w().dists(&[("onnx", "1.20.0"), ("onnxruntime", "1.32.0")])
                .imported("onnx", json!({"ir_version": 14, "max_opset": 28}))
                .imported("onnxruntime", json!({"trial_onnx_default": "loads"})),
        ),
        (
            "onnxruntime-refuses-torch-export",
            w().dists(&[("torch", "2.9.0"), ("onnxruntime", "1.17.3")])
                .imported("torch", json!({"export_ir": 10, "export_opset": 18}))
                .imported("onnxruntime", json!({"trial_torch_export": "refused: Unsupported model IR version: 10, max supported IR version: 9"})),
            w().dists(&[("torch", "2.9.0"), ("onnxruntime", "1.18.0")])
                .imported("torch", json!({"export_ir": 10, "export_opset": 18}))
                .imported("onnxruntime", json!({"trial_torch_export": "loads"})),
        ),
        (
            "matrix-disagrees-with-onnxruntime",
            w().dists(&[("onnx", "1.17.0"), ("onnxruntime", "1.17.3")])
                .imported("onnx", json!({"ir_version": 10, "max_opset": 20}))
                .imported("onnxruntime", json!({"trial_onnx_default": "loads"})),
            w().dists(&[("onnx", "1.15.0"), ("onnxruntime", "1.17.3")])
                .imported("onnx", json!({"ir_version": 9, "max_opset": 20}))
                .imported("onnxruntime", json!({"trial_onnx_default": "loads"})),
        ),
        (
            "onnxruntime-refuses-model",
            w().dists(&[("onnxruntime", "1.32.0")]).model(10, 20, &[("com.acme", "Foo")]).imported(
                "onnxruntime",
                json!({"trial_model": "refused: Fatal error: com.acme:Foo(-1) is not a registered function/op"}),
            ),
            w().dists(&[("onnxruntime", "1.32.0")])
                .model(10, 20, &[("ai.onnx", "Conv")])
                .imported("onnxruntime", json!({"trial_model": "loads"})),
        ),
        (
            // The matrix says 1.20.1 loads at most IR 10: a model at IR 11
            // that loads there is the runtime's word against the matrix's.
            "onnxruntime-loads-model-the-matrix-refused",
            w().dists(&[("onnxruntime", "1.20.1")])
                .model(11, 20, &[("ai.onnx", "Conv")])
                .imported("onnxruntime", json!({"trial_model": "loads"})),
            w().dists(&[("onnxruntime", "1.20.1")])
                .model(10, 20, &[("ai.onnx", "Conv")])
                .imported("onnxruntime", json!({"trial_model": "loads"})),
        ),
        (
            "torch-cuda-kernel-failed",
            w().dists(&[("torch", "2.6.0+cu126")]).imported(
                "torch",
                json!({"cuda": "12.6", "trial_cuda": "failed: cuda:0 CUDA error: no kernel image is available for execution on the device"}),
            ),
            w().dists(&[("torch", "2.6.0+cu126")]).imported("torch", json!({"cuda": "12.6", "trial_cuda": "ran on 1 devices"})),
        ),
        (
            "torch-loaded-other-cudnn-major",
            w().dists(&[("torch", "2.6.0+cu126")]).imported(
                "torch",
                json!({"cuda": "12.6", "cuda_major": "12", "cudnn_version": "8.9.2", "cudnn_compiled": "9.5.1", "cudnn_compiled_major": "9"}),
            ),
            w().dists(&[("torch", "2.6.0+cu126")]).imported(
                "torch",
                json!({"cuda": "12.6", "cuda_major": "12", "cudnn_version": "9.10.2", "cudnn_compiled": "9.5.1", "cudnn_compiled_major": "9"}),
            ),
        ),
        (
            "tensorrt-builder-failed",
            w().dists(&[("tensorrt-cu12", "10.3.0")])
                .imported("tensorrt", json!({"trial_builder": "failed: [TRT] CUDA initialization failure with error: 35"})),
            w().dists(&[("tensorrt-cu12", "10.3.0")]).imported("tensorrt", json!({"trial_builder": "ok"})),
        ),
        (
            "onnx-opset-newer-than-onnxruntime",
            w().dists(&[("onnx", "1.16.0"), ("onnxruntime", "1.17.3")])
                .imported("onnx", json!({"ir_version": 9, "max_opset": 21})),
            w().dists(&[("onnx", "1.16.0"), ("onnxruntime", "1.18.0")])
                .imported("onnx", json!({"ir_version": 9, "max_opset": 21})),
        ),
        (
            "glibc-too-old-for-torch",
            w().set("/system/found/glibc", json!({"found": "2.17"})).dist("torch", "2.7.0"),
            w().set("/system/found/glibc", json!({"found": "2.17"})).dist("torch", "2.6.0"),
        ),
        (
            // The CPU wheels of 1.17 need GLIBC_2.27 (manylinux_2_27): Ubuntu 18.04 takes them.
            "glibc-too-old-for-onnxruntime",
            w().set("/system/found/glibc", json!({"found": "2.17"})).dist("onnxruntime", "1.17.0"),
            w().set("/system/found/glibc", json!({"found": "2.27"})).dist("onnxruntime", "1.17.0"),
        ),
        (
            "glibc-too-old-for-onnxruntime-gpu",
            w().set("/system/found/glibc", json!({"found": "2.27"})).dist("onnxruntime-gpu", "1.17.0"),
            w().set("/system/found/glibc", json!({"found": "2.27"})).dist("onnxruntime-gpu", "1.18.1"),
        ),
        (
            "python-unsupported-by-onnx",
            w().python("3.12.4").dist("onnx", "1.14.1"),
            w().python("3.11.9").dist("onnx", "1.14.1"),
        ),
        (
            "python-unsupported-by-onnxruntime",
            w().python("3.13.1").dist("onnxruntime", "1.17.3"),
            w().python("3.12.4").dist("onnxruntime", "1.17.3"),
        ),
        (
            "python-unsupported-by-torch",
            w().python("3.13.1").dist("torch", "2.4.1"),
            w().python("3.12.4").dist("torch", "2.4.1"),
        ),
        (
            "torchvision-not-paired-with-torch",
            w().dists(&[("torch", "2.5.1"), ("torchvision", "0.19.1")]),
            w().dists(&[("torch", "2.5.1"), ("torchvision", "0.20.1")]),
        ),
        (
            "torchaudio-not-paired-with-torch",
            w().dists(&[("torch", "2.5.1+cu124"), ("torchaudio", "2.4.1+cu124")]),
            w().dists(&[("torch", "2.5.1+cu124"), ("torchaudio", "2.5.1+cu124")]),
        ),
        (
            "torch-tensorrt-not-paired-with-torch",
            w().dists(&[("torch", "1.9.0"), ("torch-tensorrt", "1.1.0")]),
            w().dists(&[("torch", "2.3.1"), ("torch-tensorrt", "2.3.0")]),
        ),
        (
            "torch-tensorrt-placeholder",
            w().dists(&[("torch", "1.10.2"), ("torch-tensorrt", "0.0.0")]),
            w().dists(&[("torch", "1.10.2"), ("torch-tensorrt", "1.0.0")]),
        ),
        (
            "torch-xla-not-paired-with-torch",
            w().dists(&[("torch", "2.6.0"), ("torch-xla", "2.5.1")]),
            w().dists(&[("torch", "2.5.1"), ("torch-xla", "2.5.1")]),
        ),
        (
            // torchvision refuses another CUDA major; from 0.16 another minor is fine.
            "torchvision-cuda-variant-differs",
            w().dists(&[("torch", "2.5.1+cu124"), ("torchvision", "0.20.1+cu118")]),
            w().dists(&[("torch", "2.5.1+cu124"), ("torchvision", "0.20.1+cu121")]),
        ),
        (
            // Up to 0.15 torchvision refuses another CUDA minor as well.
            "torchvision-cuda-minor-differs",
            w().python("3.10.14").dists(&[("torch", "2.0.1+cu118"), ("torchvision", "0.15.2+cu117")]),
            w().python("3.10.14").dists(&[("torch", "2.0.1+cu118"), ("torchvision", "0.15.2+cu118")]),
        ),
        (
            "torch-export-opset-newer-than-onnxruntime",
            // 1.17 implements opset 20 but refuses the IR 10 of the dynamo export.
            w().dists(&[("torch", "2.9.0"), ("onnxruntime", "1.17.3")]),
            w().dists(&[("torch", "2.9.0"), ("onnxruntime", "1.18.0")]),
        ),
        // -- torch against the GPU and the driver ---------------------------------------------
        (
            "gpu-not-supported-by-torch-build",
            w().gpu("NVIDIA GeForce RTX 5090", "12.0").dist("torch", "2.6.0+cu124"),
            w().gpu("NVIDIA GeForce RTX 5090", "12.0").dist("torch", "2.7.0+cu128"),
        ),
        (
            // Integrated GPUs run only cubins of exactly their compute
            // capability: the sm_80/sm_86 code of a desktop build does not
            // run on a Jetson Orin, although it runs on a desktop 8.9.
            "gpu-not-supported-by-torch-build",
            w().gpu("Orin (nvgpu)", "8.7").dist("torch", "2.7.0+cu128"),
            w().gpu("NVIDIA L4", "8.9").dist("torch", "2.7.0+cu128"),
        ),
        ("torch-cpu-build-on-gpu-machine", w().dist("torch", "2.5.1+cpu"), w().dist("torch", "2.5.1+cu124")),
        (
            "torch-cpu-build-despite-conda-cuda",
            w().dist("torch", "1.9.0").imported("torch", json!({"cuda": null, "conda_cuda": "11.3"})),
            w().dist("torch", "1.9.0").imported("torch", json!({"cuda": "11.1", "conda_cuda": "11.1"})),
        ),
        (
            "onnx-1-16-1-crashes-on-macos",
            w().dist("onnx", "1.16.1").set("/system/found/os/found", json!("macOS Big Sur 11.7.10")),
            w().dist("onnx", "1.16.0").set("/system/found/os/found", json!("macOS Big Sur 11.7.10")),
        ),
        (
            "torch-cpu-build-beside-cuda-toolkit",
            w().no_driver().dist("torch", "2.5.1+cpu").toolkit("12.4"),
            w().no_driver().dist("torch", "2.5.1+cu124").toolkit("12.4"),
        ),
        (
            "torch-dynamo-export-needs-onnxscript",
            w().dists(&[("torch", "2.9.1+cu128"), ("onnx", "1.19.1")]),
            w().dists(&[("torch", "2.9.1+cu128"), ("onnx", "1.19.1"), ("onnxscript", "0.5.4")]),
        ),
        (
            "image-requires-gpu",
            w().no_driver().dist("torch", "2.5.1+cu124"),
            w().no_driver().dist("torch", "2.5.1+cpu"),
        ),
        (
            "image-requires-driver",
            w().no_driver().dist("torch", "2.5.1+cu124"),
            w().dist("torch", "2.5.1+cu124"),
        ),
        (
            "driver-too-old-for-torch-cuda",
            w().driver("520.61.05").dist("torch", "2.7.0+cu126"),
            w().driver("525.60.13").dist("torch", "2.7.0+cu126"),
        ),
        (
            "driver-below-cuda-toolkit-driver",
            w().driver("525.60.13").dist("torch", "2.7.0+cu126"),
            w().driver("560.28.03").dist("torch", "2.7.0+cu126"),
        ),
        (
            "cudnn-major-differs-torch-onnxruntime",
            w().dists(&[("torch", "2.4.1"), ("onnxruntime-gpu", "1.18.1")])
                .imported("torch", torch_cuda("9.1.0")),
            w().dists(&[("torch", "2.4.1"), ("onnxruntime-gpu", "1.19.0")])
                .imported("torch", torch_cuda("9.1.0")),
        ),
        (
            "onnxruntime-gpu-without-driver",
            w().no_driver().dist("onnxruntime-gpu", "1.20.1"),
            w().dist("onnxruntime-gpu", "1.20.1"),
        ),
        (
            "driver-too-old-for-onnxruntime-gpu",
            w().driver("525.60.13").dist("onnxruntime-gpu", "1.27.0"),
            w().driver("525.60.13").dist("onnxruntime-gpu", "1.26.0"),
        ),
        (
            "onnxruntime-gpu-cuda10-minor-differs",
            w().python("3.7.3").toolkit("10.0.130").dist("onnxruntime-gpu", "1.2.0"),
            w().python("3.7.3").toolkit("10.1.243").dist("onnxruntime-gpu", "1.2.0"),
        ),
        (
            "onnxruntime-gpu-cuda-major-differs-toolkit",
            w().python("3.8.10").toolkit("10.1.243").dist("onnxruntime-gpu", "1.9.0"),
            w().python("3.8.10").toolkit("11.4.152").dist("onnxruntime-gpu", "1.9.0"),
        ),
        (
            // A Jetson's onnxruntime-gpu is built for JetPack's own CUDA.
            "onnxruntime-gpu-cuda-major-differs-toolkit",
            w().python("3.6.9").toolkit("10.2.89").dist("onnxruntime-gpu", "1.8.0"),
            w().python("3.6.9")
                .toolkit("10.2.89")
                .dist("onnxruntime-gpu", "1.8.0")
                .set("/system/found/arch", json!("aarch64")),
        ),
        (
            // cuDNN 8 from NVIDIA's wheel under a cuDNN 9 build; quiet with cuDNN 9.
            "onnxruntime-gpu-cudnn-major-differs",
            w().python("3.10.12").dist("onnxruntime-gpu", "1.19.2").dist("nvidia-cudnn-cu12", "8.9.2.26"),
            w().python("3.10.12").dist("onnxruntime-gpu", "1.19.2").dist("nvidia-cudnn-cu12", "9.1.0.70"),
        ),
        (
            // The machine's cuDNN 8 under a cuDNN 8 build; quiet.
            "onnxruntime-gpu-cudnn-major-differs",
            w().python("3.10.12").dist("onnxruntime-gpu", "1.20.1").header("cudnn", "8.9.7"),
            w().python("3.10.12").dist("onnxruntime-gpu", "1.16.3").header("cudnn", "8.9.7"),
        ),
        (
            // torch 2.4's cuDNN 9 under CTranslate2 4.4, built for cuDNN 8; quiet under 4.5.
            "ctranslate2-cudnn-major-differs",
            w().dists(&[("torch", "2.4.1"), ("ctranslate2", "4.4.0")]).imported("torch", torch_cuda("9.1.0")),
            w().dists(&[("torch", "2.4.1"), ("ctranslate2", "4.5.0")]).imported("torch", torch_cuda("9.1.0")),
        ),
        (
            // The machine's cuDNN 8 beside torch's 9 serves CTranslate2 4.4; quiet.
            "ctranslate2-cudnn-major-differs",
            w().python("3.10.12").dist("ctranslate2", "4.5.0").header("cudnn", "8.9.7"),
            w().dists(&[("torch", "2.4.1"), ("ctranslate2", "4.4.0")])
                .header("cudnn", "8.9.7")
                .imported("torch", torch_cuda("9.1.0")),
        ),
        (
            // 4.6.3 on is built without cuDNN: quiet whatever the cuDNN.
            "ctranslate2-cudnn-major-differs",
            w().python("3.10.12").dist("ctranslate2", "4.6.2").dist("nvidia-cudnn-cu12", "8.9.2.26"),
            w().python("3.10.12").dist("ctranslate2", "4.6.3").dist("nvidia-cudnn-cu12", "8.9.2.26"),
        ),
        (
            "ctranslate2-cuda-major-differs-toolkit",
            w().python("3.10.12").dist("ctranslate2", "4.0.0").toolkit("11.8.89"),
            w().python("3.10.12").dist("ctranslate2", "3.24.0").toolkit("11.8.89"),
        ),
        (
            // NVIDIA's cuBLAS wheel brings CUDA 12's library; quiet.
            "ctranslate2-cuda-major-differs-toolkit",
            w().python("3.10.12").dist("ctranslate2", "4.4.0").toolkit("11.8.89"),
            w().python("3.10.12").dist("ctranslate2", "4.4.0").toolkit("11.8.89").dist("nvidia-cublas-cu12", "12.1.3.1"),
        ),
        (
            "ctranslate2-cuda-major-differs-torch",
            w().python("3.10.12").dist("ctranslate2", "4.4.0").dist("torch", "2.0.1+cu118"),
            w().python("3.10.12").dist("ctranslate2", "4.4.0").dist("torch", "2.1.2+cu121"),
        ),
        (
            "ctranslate2-cuda-major-differs-torch",
            w().python("3.10.12").dist("ctranslate2", "3.24.0").dist("torch", "2.1.2+cu121"),
            w().python("3.10.12")
                .dist("ctranslate2", "3.24.0")
                .dist("torch", "2.1.2+cu121")
                .dist("nvidia-cublas-cu12", "12.1.3.1"),
        ),
        (
            // faster-whisper 1.0 requires CTranslate2 4 (CUDA 12); 0.10.1 went back to 3.
            "faster-whisper-cuda-major-differs-toolkit",
            w().python("3.10.12").dist("faster-whisper", "1.0.1").toolkit("11.8.89"),
            w().python("3.10.12").dist("faster-whisper", "0.10.1").toolkit("11.8.89"),
        ),
        (
            // A pasted CTranslate2 decides, with its own rule.
            "faster-whisper-cuda-major-differs-toolkit",
            w().python("3.10.12").dist("faster-whisper", "0.10.0").toolkit("11.8.89"),
            w().python("3.10.12").dist("faster-whisper", "0.10.0").dist("ctranslate2", "3.24.0").toolkit("11.8.89"),
        ),
        (
            "driver-too-old-for-ctranslate2",
            w().python("3.10.12").driver("470.82.01").dist("ctranslate2", "4.0.0"),
            w().python("3.10.12").driver("470.82.01").dist("ctranslate2", "3.24.0"),
        ),
        (
            // A JetPack 5 image on a JetPack 6 host; quiet on a host of its line.
            "l4t-image-not-for-host",
            w().set("/system/found/l4t", json!("35.4.1")).set("/system/found/host_l4t", json!("36.4.0")),
            w().set("/system/found/l4t", json!("35.4.1")).set("/system/found/host_l4t", json!("35.2.1")),
        ),
        (
            "l4t-image-not-for-host",
            w().set("/system/found/l4t", json!("34.1.0")).set("/system/found/host_l4t", json!("32.6.1")),
            w().set("/system/found/l4t", json!("32.6.1")).set("/system/found/host_l4t", json!("32.6.1")),
        ),
        (
            // r36.4 hosts run only r36.4 images.
            "l4t-image-not-for-host",
            w().set("/system/found/l4t", json!("36.2.0")).set("/system/found/host_l4t", json!("36.4.3")),
            w().set("/system/found/l4t", json!("36.4.0")).set("/system/found/host_l4t", json!("36.4.3")),
        ),
        (
            "torchvision-cuda-build-beside-cpu-torch",
            w().python("3.10.12").dist("torch", "2.2.1+cpu").dist("torchvision", "0.17.1"),
            w().python("3.10.12").dist("torch", "2.2.1+cpu").dist("torchvision", "0.17.1+cpu"),
        ),
        // -- driver and GPU ---------------------------------------------------------------------
        (
            "driver-kernel-module-mismatch",
            w().set("/nvidia/found/kernel_module", json!({"found": "570.133.20"})),
            w(),
        ),
        (
            "nvml-driver-library-mismatch",
            w().set("/nvidia/found/nvml", json!({"state": "version_mismatch"})),
            w(),
        ),
        (
            "gpu-dropped-by-driver-branch",
            w().driver("590.44.01").gpu("Tesla V100-SXM2-16GB", "7.0"),
            w().driver("580.95.05").gpu("Tesla V100-SXM2-16GB", "7.0"),
        ),
        (
            "kepler-gpu-dropped-by-driver-branch",
            w().driver("495.29.05").gpu("Tesla K80", "3.7"),
            w().driver("470.256.02").gpu("Tesla K80", "3.7"),
        ),
        (
            "forward-compat-on-unsupported-gpu",
            w().set(
                "/nvidia/found/container",
                json!({"compat_libraries": ["/usr/local/cuda/compat/libcuda.so.1"]}),
            ),
            w().gpu("NVIDIA A100-SXM4-80GB", "8.0").set(
                "/nvidia/found/container",
                json!({"compat_libraries": ["/usr/local/cuda/compat/libcuda.so.1"]}),
            ),
        ),
        // -- cuDNN and TensorRT ------------------------------------------------------------------
        (
            "gpu-not-supported-by-cudnn",
            w().gpu("NVIDIA GeForce GTX 1080 Ti", "6.1").dist("nvidia-cudnn-cu12", "9.11.0.98"),
            w().gpu("NVIDIA GeForce GTX 1080 Ti", "6.1").dist("nvidia-cudnn-cu12", "9.10.2.21"),
        ),
        (
            "gpu-not-supported-by-tensorrt",
            w().gpu("NVIDIA GeForce GTX 1080 Ti", "6.1").dist("tensorrt", "10.0.1"),
            w().gpu("NVIDIA GeForce GTX 1080 Ti", "6.1").dist("tensorrt", "8.6.1"),
        ),
        (
            "driver-too-old-for-tensorrt-cu12",
            w().driver("520.61.05").dist("tensorrt-cu12", "10.7.0"),
            w().driver("525.60.13").dist("tensorrt-cu12", "10.7.0"),
        ),
        (
            "driver-too-old-for-tensorrt-cu13",
            w().driver("575.57.08").dist("tensorrt-cu13", "10.14.1.48"),
            w().driver("580.65.06").dist("tensorrt-cu13", "10.14.1.48"),
        ),
        (
            "onnxruntime-tensorrt-major-differs",
            w().dists(&[("onnxruntime-gpu", "1.20.1"), ("tensorrt-cu12", "11.0.0.114")]),
            w().dists(&[("onnxruntime-gpu", "1.20.1"), ("tensorrt-cu12", "10.16.1.11")]),
        ),
        (
            "gpu-not-supported-by-cuda-toolkit",
            w().gpu("NVIDIA GeForce GTX 1080 Ti", "6.1").toolkit("13.0.88"),
            w().gpu("NVIDIA GeForce GTX 1080 Ti", "6.1").toolkit("12.9.86"),
        ),
        (
            "cudnn-built-for-other-cuda",
            w().toolkit("12.4.131").header("cudnn", "8.6.0"),
            w().toolkit("11.8.89").header("cudnn", "8.6.0"),
        ),
        (
            "tensorrt-built-for-other-cuda",
            w().toolkit("11.8.89").header("tensorrt", "10.14.1"),
            w().toolkit("12.9.86").header("tensorrt", "10.14.1"),
        ),
        (
            "tensorrt-several-versions",
            w().dist("tensorrt-cu12", "10.7.0").header("tensorrt", "8.6.1"),
            w().dist("tensorrt-cu12", "10.7.0").header("tensorrt", "10.7.0"),
        ),
        // -- a model against its runtime -------------------------------------------------------
        (
            "model-ir-too-new-for-onnxruntime",
            w().model(11, 20, &[("ai.onnx", "Conv")]).target("onnxruntime", "1.20.1"),
            w().model(10, 20, &[("ai.onnx", "Conv")]).target("onnxruntime", "1.20.1"),
        ),
        (
            "model-opset-too-new-for-onnxruntime",
            w().model(10, 22, &[("ai.onnx", "Conv")]).target("onnxruntime", "1.20.1"),
            w().model(10, 21, &[("ai.onnx", "Conv")]).target("onnxruntime", "1.20.1"),
        ),
        (
            "model-opset-too-new-for-tensorrt",
            w().model(8, 18, &[("ai.onnx", "Conv")]).target("tensorrt", "8.6.1"),
            w().model(8, 17, &[("ai.onnx", "Conv")]).target("tensorrt", "8.6.1"),
        ),
        (
            "model-contrib-ops-on-tensorrt",
            w().model(8, 17, &[("com.microsoft", "FusedConv")]).target("tensorrt", "10.7.0"),
            w().model(8, 17, &[("com.microsoft", "FusedConv")]).target("onnxruntime", "1.20.1"),
        ),
        (
            "model-custom-operator-domain",
            w().model(8, 17, &[("com.acme", "Mystery")]).target("onnxruntime", "1.20.1"),
            w().model(8, 17, &[("ai.onnx", "Conv")]).target("onnxruntime", "1.20.1"),
        ),
        (
            "model-has-aten-fallback-ops",
            w().model(8, 17, &[("ai.onnx", "ATen")]).target("onnxruntime", "1.20.1"),
            w().model(8, 17, &[("ai.onnx", "Conv")]).target("onnxruntime", "1.20.1"),
        ),
        (
            "model-int64-weights-on-tensorrt",
            w().model(8, 17, &[("ai.onnx", "Gather")])
                .model_set("int64_initializers", json!(2))
                .target("tensorrt", "10.7.0"),
            w().model(8, 17, &[("ai.onnx", "Gather")])
                .model_set("int64_initializers", json!(2))
                .target("onnxruntime", "1.20.1"),
        ),
        (
            "model-external-data-missing",
            w().model(8, 17, &[("ai.onnx", "MatMul")])
                .model_set(
                    "external_data",
                    json!([{"location": "weights.bin", "exists": false, "tensors": 3}]),
                )
                .target("onnxruntime", "1.20.1"),
            w().model(8, 17, &[("ai.onnx", "MatMul")])
                .model_set(
                    "external_data",
                    json!([{"location": "weights.bin", "exists": true, "tensors": 3}]),
                )
                .target("onnxruntime", "1.20.1"),
        ),
        (
            "model-external-data-outside-folder",
            w().model(8, 17, &[("ai.onnx", "MatMul")])
                .model_set(
                    "external_data",
                    json!([{"location": "../w.bin", "exists": false, "tensors": 1, "problem": "outside_folder"}]),
                )
                .target("onnxruntime", "1.20.1"),
            w().model(8, 17, &[("ai.onnx", "MatMul")])
                .model_set("external_data", json!([{"location": "w..bin", "exists": true, "tensors": 1}]))
                .target("onnxruntime", "1.20.1"),
        ),
        (
            "model-external-data-unusable",
            w().model(8, 17, &[("ai.onnx", "MatMul")])
                .model_set(
                    "external_data",
                    json!([{"location": "w.bin", "exists": false, "tensors": 1, "problem": "empty"}]),
                )
                .target("onnxruntime", "1.20.1"),
            w().model(8, 17, &[("ai.onnx", "MatMul")])
                .model_set("external_data", json!([{"location": "w.bin", "exists": true, "tensors": 1}]))
                .target("onnxruntime", "1.20.1"),
        ),
        (
            "model-near-protobuf-limit",
            w().model(8, 17, &[("ai.onnx", "MatMul")]).model_set("file_bytes", json!(1900u64 << 20)),
            w().model(8, 17, &[("ai.onnx", "MatMul")]).model_set("file_bytes", json!(1800u64 << 20)),
        ),
        (
            "model-over-protobuf-limit",
            w().model(8, 17, &[("ai.onnx", "MatMul")]).model_set("file_bytes", json!(2048u64 << 20)),
            w().model(8, 17, &[("ai.onnx", "MatMul")]).model_set("file_bytes", json!((2048u64 << 20) - 1)),
        ),
        (
            "model-op-unsupported-by-tensorrt",
            w().model(8, 17, &[("ai.onnx", "BlackmanWindow"), ("ai.onnx", "Conv")])
                .target("tensorrt", "8.6.1"),
            w().model(8, 17, &[("ai.onnx", "BlackmanWindow"), ("ai.onnx", "Conv")])
                .target("tensorrt", "10.15.1"),
        ),
        (
            "model-linear-resize-on-old-tensorrt",
            w().model(6, 9, &[("ai.onnx", "Upsample")]).model_set("linear_resizes", json!(1)).target("tensorrt", "6.0.1"),
            w().model(6, 9, &[("ai.onnx", "Upsample")]).model_set("linear_resizes", json!(1)).target("tensorrt", "7.0.0"),
        ),
        (
            "model-gather-on-shape-on-old-tensorrt",
            w().model(6, 9, &[("ai.onnx", "Gather")]).model_set("shape_gathers", json!(1)).target("tensorrt", "6.0.1"),
            w().model(6, 9, &[("ai.onnx", "Gather")]).model_set("shape_gathers", json!(1)).target("tensorrt", "7.0.0"),
        ),
        (
            "model-max-unpool-indices",
            w().model(6, 11, &[("ai.onnx", "MaxUnpool")]).target("onnxruntime", "1.20.1"),
            w().model(6, 11, &[("ai.onnx", "MaxPool")]).target("onnxruntime", "1.20.1"),
        ),
        (
            "model-resize-on-old-tensorrt",
            w().model(6, 11, &[("ai.onnx", "Resize")]).target("tensorrt", "7.0.0"),
            w().model(6, 11, &[("ai.onnx", "Resize")]).target("tensorrt", "7.1.3"),
        ),
        (
            "model-op-without-onnxruntime-kernel",
            w().model(9, 19, &[("ai.onnx", "DeformConv")]).target("onnxruntime", "1.24.4"),
            w().model(9, 19, &[("ai.onnx", "DeformConv")]).target("onnxruntime", "1.25.1"),
        ),
        (
            "model-op-without-cuda-kernel",
            w().model(8, 17, &[("ai.onnx", "Conv"), ("ai.onnx", "Unique")]).target("onnxruntime", "1.24.4"),
            // NonMaxSuppression declares no type constraint, so onnxruntime's
            // document has no row for it; its CUDA kernel exists all the same.
            w().model(8, 17, &[("ai.onnx", "Conv"), ("ai.onnx", "NonMaxSuppression")])
                .target("onnxruntime", "1.24.4"),
        ),
        (
            "onnxruntime-runs-operators-the-matrix-lacks",
            w().dists(&[("onnxruntime", "1.24.4")])
                .model(9, 19, &[("ai.onnx", "DeformConv")])
                .imported("onnxruntime", json!({"trial_model": "loads"})),
            w().dists(&[("onnxruntime", "1.25.1")])
                .model(9, 19, &[("ai.onnx", "DeformConv")])
                .imported("onnxruntime", json!({"trial_model": "loads"})),
        ),
        (
            "model-dynamic-inputs-need-tensorrt-profile",
            w().model(8, 17, &[("ai.onnx", "Conv")]).model_set("inputs", dynamic_input()).target("tensorrt", "10.7.0"),
            w().model(8, 17, &[("ai.onnx", "Conv")])
                .model_set("inputs", dynamic_input())
                .target("onnxruntime", "1.20.1"),
        ),
        (
            "model-shape-computed-for-old-tensorrt",
            w().model(8, 13, &[("ai.onnx", "Resize")])
                .model_set("shape_operands", json!([{"operand": "Resize.scales", "nodes": 2, "first": "/up/Resize"}]))
                .target("tensorrt", "8.2.5"),
            // 8.4's parser takes scales computed at run time.
            w().model(8, 13, &[("ai.onnx", "Resize")])
                .model_set("shape_operands", json!([{"operand": "Resize.scales", "nodes": 2, "first": "/up/Resize"}]))
                .target("tensorrt", "8.4.3"),
        ),
        (
            "model-shape-tensor-inputs-need-profile-values",
            w().model(8, 13, &[("ai.onnx", "Reshape")])
                .model_set(
                    "shape_operands",
                    json!([{"operand": "Reshape.shape", "nodes": 1, "first": "r", "inputs": ["new_shape"]}]),
                )
                .target("tensorrt", "10.7.0"),
            // Computed, not a graph input: no shape tensor to bound.
            w().model(8, 13, &[("ai.onnx", "Reshape")])
                .model_set("shape_operands", json!([{"operand": "Reshape.shape", "nodes": 1, "first": "r"}]))
                .target("tensorrt", "10.7.0"),
        ),
        (
            "model-dynamic-inputs-on-implicit-batch-tensorrt",
            w().model(6, 9, &[("ai.onnx", "Conv")]).model_set("inputs", dynamic_input()).target("tensorrt", "5.1.5"),
            w().model(6, 9, &[("ai.onnx", "Conv")]).model_set("inputs", dynamic_input()).target("tensorrt", "6.0.1"),
        ),
        (
            "model-upsample-deprecated",
            w().model(6, 10, &[("ai.onnx", "Upsample")]).target("onnxruntime", "1.20.1"),
            w().model(6, 9, &[("ai.onnx", "Upsample")]).target("onnxruntime", "1.20.1"),
        ),
        // -- builtin checks ---------------------------------------------------------------------
        (
            "import-failed",
            w().dist("onnx", "1.17.0").import_status(
                "onnx",
                json!({"state": "failed", "error": "ImportError", "message": "DLL load failed"}),
            ),
            w().dist("onnx", "1.17.0").import_status("onnx", json!({"state": "ok"})),
        ),
        (
            "import-timed-out",
            w().dist("torch", "2.5.1").import_status("torch", json!({"state": "timed_out", "seconds": 30.0})),
            w().dist("torch", "2.5.1").import_status("torch", json!({"state": "ok"})),
        ),
        (
            "import-crashed",
            w().dist("onnx", "1.17.0")
                .import_status("onnx", json!({"state": "crashed", "detail": "killed by signal 11"})),
            w().dist("onnx", "1.17.0").import_status("onnx", json!({"state": "ok"})),
        ),
        (
            "module-shadowed-by-local-file",
            w().dist("onnx", "1.17.0")
                .import_status("onnx", json!({"state": "ok"}))
                .set("/pythons/0/imports/0/shadowed_by", json!("/work/onnx.py")),
            w().dist("onnx", "1.17.0").import_status("onnx", json!({"state": "ok"})),
        ),
        ("python-not-evaluated", w().set("/mode", json!("full")), w()),
        (
            "distribution-shadowed",
            w().dist("onnx", "1.12.0").with_dist(
                "onnx",
                "shadowed",
                json!([{"version": "1.17.0", "location": "/usr/lib/python3/dist-packages"}]),
            ),
            w().dist("onnx", "1.12.0"),
        ),
        (
            "declared-requirement-unmet",
            w().dists(&[("onnxscript", "0.5.4"), ("onnx", "1.16.2")]).with_dist(
                "onnxscript",
                "requires",
                json!(["onnx>=1.17"]),
            ),
            w().dists(&[("onnxscript", "0.5.4"), ("onnx", "1.17.0")]).with_dist(
                "onnxscript",
                "requires",
                json!(["onnx>=1.17"]),
            ),
        ),
        (
            "declared-requirement-missing",
            w().dist("onnxscript", "0.5.4").with_dist("onnxscript", "requires", json!(["ml-dtypes"])),
            w().dists(&[("onnxscript", "0.5.4"), ("ml-dtypes", "0.5.1")]).with_dist(
                "onnxscript",
                "requires",
                json!(["ml-dtypes"]),
            ),
        ),
        (
            "onnxruntime-provider-cannot-load",
            w().dist("onnxruntime-gpu", "1.20.1").link("onnxruntime-cuda-provider", &["libcudnn.so.9"]),
            w().dist("onnxruntime-gpu", "1.20.1").link("onnxruntime-cuda-provider", &[]),
        ),
        (
            "gpus-hidden-by-cuda-visible-devices",
            w().dist("torch", "2.6.0+cu126")
                .imported("torch", json!({"cuda": "12.6", "cuda_available": false}))
                .set("/nvidia/found/container", json!({"cuda_visible_devices": ""})),
            w().dist("torch", "2.6.0+cu126")
                .imported("torch", json!({"cuda": "12.6", "cuda_available": false}))
                .set("/nvidia/found/container", json!({"cuda_visible_devices": "0"})),
        ),
        (
            "container-started-without-gpus",
            w().dist("torch", "2.6.0+cu126")
                .imported("torch", json!({"cuda": "12.6", "cuda_available": false}))
                .set("/nvidia/found/container", json!({"device_nodes": 0})),
            w().dist("torch", "2.6.0+cu126")
                .imported("torch", json!({"cuda": "12.6", "cuda_available": false}))
                .set("/nvidia/found/container", json!({"device_nodes": 1})),
        ),
        (
            "container-gpus-void",
            w().dist("torch", "2.6.0+cu126").set("/nvidia/found/container", json!({"visible_devices": "void"})),
            w().dist("torch", "2.6.0+cu126").set("/nvidia/found/container", json!({"visible_devices": "all"})),
        ),
        (
            "torch-cuda-not-available",
            w().dist("torch", "2.6.0+cu126").imported("torch", json!({"cuda": "12.6", "cuda_available": false})),
            w().dist("torch", "2.6.0+cu126").imported("torch", json!({"cuda": "12.6", "cuda_available": true})),
        ),
        (
            "vc-runtime-missing",
            w().dist("onnxruntime-gpu", "1.31.1")
                .vc_runtime("14.44", &[("MSVCP140.dll", None), ("VCRUNTIME140.dll", Some("14.44.35211.0"))]),
            w().dist("onnxruntime-gpu", "1.31.1").vc_runtime(
                "14.44",
                &[("MSVCP140.dll", Some("14.44.35211.0")), ("VCRUNTIME140.dll", Some("14.44.35211.0"))],
            ),
        ),
        (
            "vc-runtime-older-than-build",
            w().dist("onnxruntime-gpu", "1.31.1").vc_runtime("14.44", &[("MSVCP140.dll", Some("14.38.33130.0"))]),
            w().dist("onnxruntime-gpu", "1.31.1").vc_runtime("14.44", &[("MSVCP140.dll", Some("14.44.35211.0"))]),
        ),
        (
            "onnxruntime-provider-needs-preload",
            w().dist("onnxruntime-gpu", "1.31.1").link_in_wheels("onnxruntime-cuda-provider", &["libcurand.so.10"]),
            w().dist("onnxruntime-gpu", "1.31.1").link("onnxruntime-cuda-provider", &[]),
        ),
        (
            "onnxruntime-tensorrt-provider-without-tensorrt",
            w().dist("onnxruntime-gpu", "1.20.1").link("onnxruntime-tensorrt-provider", &["libnvinfer.so.10"]),
            // With TensorRT installed, a provider that cannot find it is an error of the other rule.
            w().dists(&[("onnxruntime-gpu", "1.20.1"), ("tensorrt-cu12", "10.3.0")])
                .link("onnxruntime-tensorrt-provider", &["libnvinfer.so.10"]),
        ),
        (
            "torch-cuda-library-cannot-load",
            w().dist("torch", "2.5.1+cu124").link("torch-cuda", &["libcudnn.so.9"]),
            w().dist("torch", "2.5.1+cu124").link("torch-cuda", &[]),
        ),
        (
            "tensorrt-library-cannot-load",
            w().dist("tensorrt-cu12", "10.7.0").link("tensorrt", &["libcublas.so.12"]),
            w().dist("tensorrt-cu12", "10.7.0").link("tensorrt", &[]),
        ),
        (
            "expectation-not-met",
            w().dist("numpy", "2.1.0").set("/expectations", json!(["numpy<2"])),
            w().dist("numpy", "1.26.4").set("/expectations", json!(["numpy<2"])),
        ),
        (
            "pasted-facts-conflict",
            w().set("/mode", json!("pasted")).set(
                "/pasted",
                json!({"facts": [], "lines": 2, "conflicts": [
                {"fact": "driver", "values": [["550.54.14", 1], ["535.104.05", 2]]}]}),
            ),
            w().set("/mode", json!("pasted")).set("/pasted", json!({"facts": [], "lines": 2})),
        ),
        ("no-python-found", w().set("/pythons", json!([])), w()),
        // onnxruntime 1.13.1 has cp38 wheels for Linux x86_64, none for cp311.
        (
            "pip-older-than-wheel-tags",
            w().python("3.8.10").set("/mode", json!("pasted")).set("/pasted", json!({"facts": [], "lines": 1,
                "error_lines": [{"line": 1, "text": OLD_PIP}]})),
            w().set("/mode", json!("pasted")).set("/pasted", json!({"facts": [], "lines": 1,
                "error_lines": [{"line": 1, "text": OLD_PIP}]})),
        ),
    ]
}

/// pip's refusal of a release with wheels for Python 3.8, listing older ones.
const OLD_PIP: &str = "Could not find a version that satisfies the requirement onnxruntime==1.13.1 (from versions: 1.2.0, 1.3.0)";

/// One image input with a dynamic batch and size.
fn dynamic_input() -> serde_json::Value {
    json!([{"name": "images", "elem_type": "float32", "shape": ["batch", "3", "height", "width"]}])
}
