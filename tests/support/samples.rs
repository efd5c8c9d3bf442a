//! A real message line for every error signature of matrix/errors.yaml, and
//! a near miss that must not fire it. signatures.rs pastes them;
//! resolution.rs resolves the commands their findings print.

/// (code, a real message line, a line that must not match).
pub const SAMPLES: &[(&str, &str, &str)] = &[
    (
        "error-pip-building-from-source",
        r"LINK : fatal error LNK1104: cannot open file 'python311.lib' [C:\Users\Ann Lee\AppData\Local\Temp\build-via-sdist-x1y2z3\somepkg-2.1.0\build\ext.vcxproj]",
        "CUDA Error: no kernel image is available for execution on the device (209) /tmp/build-via-sdist-iemil769/flashinfer-0.1.4/include/flashinfer/handler.cuh: line 169",
    ),
    (
        "error-pip-building-from-source",
        "/tmp/pip-install-q1w2e3/onnx_simplifier_0c75b038f7aa4c5c8b569939b97aedb5/third_party/onnx/onnx/common/status.h:12:10: fatal error: string_view: No such file or directory",
        "/tmp/pip-install-q1w2e3/onnx_simplifier_0c75b038f7aa4c5c8b569939b97aedb5/setup.py:12: UserWarning: the error handler is deprecated",
    ),
    (
        "error-pip-building-from-source",
        r"C:\Users\me\AppData\Local\Temp\pip-install-9k8j7h\insightface_4ffeffe9075840efafff372063afc9bd\insightface\thirdparty\face3d\mesh\cython\mesh_core.cpp(4): fatal error C1083: Cannot open include file: 'iostream'",
        r"RuntimeError: C:\Users\me\AppData\Local\Temp\pip-install-9k8j7h\insightface_4ffeffe9075840efafff372063afc9bd\model.onnx not found",
    ),
    (
        "likely-onnxruntime-module-broken",
        "AttributeError: module 'onnxruntime' has no attribute 'InferenceSession'",
        "AttributeError: 'InferenceSession' object has no attribute 'eval'",
    ),
    (
        "error-torch-extension-built-for-other-torch",
        "ImportError: /opt/conda/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationESs",
        "ImportError: /usr/lib/x86_64-linux-gnu/libopencv_core.so.4.2: undefined symbol: _ZN2cv3Mat10deallocateEv",
    ),
    (
        "error-protobuf-older-than-generated-code",
        "TypeError: __new__() got an unexpected keyword argument 'serialized_options'",
        "TypeError: __init__() got an unexpected keyword argument 'serialized'",
    ),
    (
        "error-tensorrt-engine-version",
        "[E] 1: [runtime.cpp::parsePlan::314] Error Code 1: Serialization (Serialization assertion plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.)",
        "[I] [TRT] Loaded engine size: 29 MiB",
    ),
    (
        "error-pip-placeholder-project",
        "ERROR: Could not find a version that satisfies the requirement torch-tensorrt==1.2.0 (from versions: 0.0.0, 0.0.0.post1)",
        "ERROR: Could not find a version that satisfies the requirement torch-tensorrt==1.2.0 (from versions: 0.0.0, 1.0.0)",
    ),
    (
        "error-dll-load-failed",
        "FileNotFoundError: Could not find module 'C:\\Python38\\lib\\site-packages\\torch\\lib\\c10.dll' (or one of its dependencies). Try using the full path with constructor syntax.",
        "FileNotFoundError: [Errno 2] No such file or directory: 'model.onnx'",
    ),
    (
        "error-torchvision-video-reader-not-built",
        "video_reader video backend is not available. Please compile torchvision from source and try again",
        "the video_reader video backend is available in this build",
    ),
    (
        "error-torchaudio-ffmpeg-missing",
        "ImportError: FFmpeg libraries are not found. Please install FFmpeg.",
        "FFmpeg libraries are found in /usr/lib/x86_64-linux-gnu",
    ),
    (
        "error-torchaudio-soundfile-backend-missing",
        "RuntimeError: Backend \"soundfile\" is not one of available backends: ['sox', 'sox_io'].",
        "RuntimeError: Backend \"ffmpeg\" is not one of available backends: ['soundfile'].",
    ),
    (
        "error-provider-in-another-package",
        "UserWarning: Specified provider 'OpenVINOExecutionProvider' is not in available provider names.Available providers: 'CPUExecutionProvider'",
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: 'CPUExecutionProvider'",
    ),
    (
        "likely-provider-in-another-package",
        "I am trying to run inference using OpenVINO execution provider but it is not found when running get_available_providers()",
        "the OpenVINO execution provider runs the model faster than the CPU one",
    ),
    (
        "error-gpu-library-missing",
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}",
        "Unable to load any of {model.bin, model.safetensors}",
    ),
    (
        "error-opset-not-supported",
        "backward compatibility. Current official support for domain com.ms.internal.nhwc is till opset 18.",
        "Current official support for the ai.onnx domain is documented per release",
    ),
    (
        "error-torch-export-opset-unsupported",
        "Unsupported ONNX opset Version: 17 .",
        "Unsupported ONNX opset versions are listed in the docs",
    ),
    (
        "error-pip-version-not-for-python",
        "ERROR: Could not find a version that satisfies the requirement onnxruntime~=1.11.0 (from versions: 1.12.0, 1.12.1, 1.13.1, 1.14.0, 1.14.1, 1.15.0)",
        "ERROR: Could not find a version that satisfies the requirement onnxruntime>=1.11.0 (from versions: none)",
    ),
    (
        "likely-onnxruntime-without-cuda-provider",
        "facefusion EXECUTION PROVIDERS NOT cuda options?",
        "execution providers: cuda, tensorrt and cpu are all listed; cuda is not the fastest",
    ),
    (
        "likely-runs-on-cpu",
        "Already installed onnxruntime-gpu, but the model still runs using cpu",
        "the export still runs on a machine without a GPU: the CPU does the tracing",
    ),
    (
        "error-tensorrt-gather-on-shape-tensor",
        "Error: In node 2 (importGather): UNSUPPORTED_NODE: Assertion failed: !(data->getType() == nvinfer1::DataType::kINT32 && nbDims == 1) && \"Cannot perform gather on a shape tensor!\"",
        "Error: In node 2 (importGather): UNSUPPORTED_NODE: Assertion failed: axis >= 0 && axis < nbDims",
    ),
    (
        "error-tensorrt-upsample-dims",
        "Error: In node 1 (importUpsample): UNSUPPORTED_NODE: Assertion failed: (nbDims >= 1) && (nbDims <= 3)",
        "Error: In node 1 (importConv): UNSUPPORTED_NODE: Assertion failed: (nbDims >= 1) && (nbDims <= 3)",
    ),
    (
        "error-onnx-export-needs-constant",
        "RuntimeError: ONNX symbolic expected a constant value in the trace",
        "RuntimeError: ONNX symbolic expected a tensor value",
    ),
    (
        "error-onnx-export-adaptive-pool-not-factor",
        "UserWarning: ONNX export failed on adaptive_avg_pool2d because output size that are not factor of input size not supported",
        "UserWarning: ONNX export failed on adaptive_avg_pool2d because something else not supported",
    ),
    (
        "error-onnx-export-align-corners",
        "UserWarning: ONNX export failed on upsample_bilinear2d because align_corners == True not supported",
        "UserWarning: ONNX export failed on upsample_bilinear2d because scale_factor not supported",
    ),
    (
        "error-onnx-export-needs-newer-opset",
        "torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::tril' to ONNX opset version 13 is not supported. Support for this operator was added in version 14, try exporting with this version.",
        "Exporting the operator 'aten::tril' to ONNX opset version 14 succeeded",
    ),
    (
        "error-onnx-export-opset-stub",
        "RuntimeError: Unsupported: ONNX export of cumsum in opset 9. Please try opset version 11.",
        "ONNX export of cumsum in opset 11 succeeded",
    ),
    (
        "likely-illegal-instruction",
        "Illegal instruction (core dumped)",
        "the illegal-instruction handler of the emulator was rewritten",
    ),
    (
        "error-onnx-export-index-put",
        "RuntimeError: Unsupported: ONNX export of index_put in opset 9. Please try opset version 11.",
        "data[index] = new_data exported fine with index_put at opset 11",
    ),
    (
        "error-onnx-model-aten-node",
        "onnx.onnx_cpp2py_export.checker.ValidationError: No Op registered for ATen with domain_version of 9",
        "ATen nodes are registered by torch for PyTorch's own runtime",
    ),
    (
        "error-onnx-export-never-supported",
        "torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::fft_fft' to ONNX opset version 12 is not supported.",
        "Exporting the operator 'aten::fft_fft' with the dynamo exporter",
    ),
    (
        "error-onnx-export-adaptive-pool-not-factor",
        "RuntimeError: Unsupported: ONNX export of operator adaptive_avg_pool2d, since output size is not factor of input size. Please feel free to request support or submit a pull request on PyTorch GitHub.",
        "ONNX export of operator adaptive_avg_pool2d with output size 1",
    ),
    (
        "error-onnx-export-align-corners",
        "UnsupportedOperatorError: Unsupported: ONNX export of operator upsample_bilinear2d, align_corners == True. Please feel free to request support or submit a pull request on PyTorch GitHub.",
        "upsample_bilinear2d exported at opset 11 with align_corners",
    ),
    (
        "error-protobuf-older-than-generated-code",
        "E   AttributeError: module 'google.protobuf.descriptor' has no attribute '_internal_create_key' on Windows Platform.",
        "module 'google.protobuf.descriptor' has _internal_create_key",
    ),
    (
        "error-onnx-compose-missing",
        "AttributeError: module 'onnx' has no attribute 'compose'",
        "module 'onnx' has compose",
    ),
    (
        "error-api-newer-than-installed",
        "TypeError: FaceAnalysis.__init__() got an unexpected keyword argument 'providers'",
        "TypeError: __init__() got an unexpected keyword argument 'providers'",
    ),
    (
        "error-api-newer-than-installed",
        "ModuleNotFoundError: No module named 'torch.fx'",
        "ModuleNotFoundError: No module named 'torch.fxx'",
    ),
    (
        "error-api-newer-than-installed",
        "AttributeError: module 'torch' has no attribute 'compile'",
        "AttributeError: module 'torch' has no attribute '_six'",
    ),
    (
        "error-api-newer-than-installed",
        "AttributeError: Can't get attribute 'SiLU' on <module 'torch.nn.modules.activation' from '/opt/venv/lib/python3.8/site-packages/torch/nn/modules/activation.py'>",
        "AttributeError: Can't get attribute 'Model' on <module '__main__'>",
    ),
    (
        // Added in 1.5 and removed in 1.11; which side, the line alone does not say.
        "error-api-only-in-some-releases",
        "TypeError: export() got an unexpected keyword argument 'use_external_data_format'",
        "TypeError: export() got an unexpected keyword argument 'example_outputs'",
    ),
    (
        "error-api-removed-in-installed",
        "ModuleNotFoundError: No module named 'torch._six'",
        "ModuleNotFoundError: No module named 'torch.fx'",
    ),
    (
        "error-api-removed-in-installed",
        "ImportError: cannot import name 'string_classes' from 'torch._six' (/usr/lib/python3/site-packages/torch/_six.py)",
        "ImportError: cannot import name 'string_classes' from 'torch.sixth'",
    ),
    (
        "error-tensorrt-7-api-removed",
        "AttributeError: 'tensorrt.tensorrt.Builder' object has no attribute 'max_workspace_size'",
        "AttributeError: 'tensorrt_bindings.tensorrt.IBuilderConfig' object has no attribute 'max_workspace_size'",
    ),
    (
        "error-tensorrt-api-removed",
        "AttributeError: 'tensorrt.tensorrt.Builder' object has no attribute 'build_engine'",
        "AttributeError: 'tensorrt.tensorrt.Builder' object has no attribute 'fp16_mode'",
    ),
    (
        "error-numpy-older-than-module",
        "RuntimeError: module compiled against API version 0xf but this version of numpy is 0xd",
        "RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000",
    ),
    (
        "error-numpy-older-than-module",
        "RuntimeError: module compiled against API version 0x13 but this version of numpy is 0x12",
        "ImportError: numpy.core.multiarray failed to import",
    ),
    (
        "error-pip-building-from-source",
        "  ERROR: Failed building wheel for onnx",
        "Successfully built onnxruntime wheel cache",
    ),
    (
        "error-pip-building-from-source",
        "  × Building wheel for insightface (pyproject.toml) did not run successfully.",
        "  Building wheel for insightface (pyproject.toml) ... done",
    ),
    (
        "error-pip-building-from-source",
        "ERROR: Failed to build installable wheels for some pyproject.toml based projects (thinc)",
        "[E] Failed to build the serialized network",
    ),
    (
        "error-pip-building-from-source",
        "  Downloading onnx-1.12.0.tar.gz (10.1 MB)",
        "  Downloading onnx-1.12.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (13.1 MB)",
    ),
    (
        "error-pip-building-from-source",
        "it builds from source using `opencv-python-4.5.3.56.tar.gz` instead of a wheel",
        "Downloading tensorrt-8.6.1.tar.gz (16 kB)",
    ),
    (
        "error-pip-building-from-source",
        "Command \"python setup.py egg_info\" failed with error code 1 in /tmp/pip-build-_5tw3dku/onnx/",
        "Command \"python setup.py egg_info\" failed with error code 1 in /home/me/src/",
    ),
    (
        "error-pip-building-from-source",
        "       cwd: /tmp/pip-install-a0lvtwea/onnx_c45de343f3594a2e8234a79bec06932f/",
        "       cwd: /home/me/project/",
    ),
    (
        "error-pip-building-from-source",
        "  × Failed to download and build `onnx==1.16.0`",
        "[E] Failed to build `model.plan` from model.onnx",
    ),
    (
        "error-pip-building-from-source",
        "When adding it with poetry or pip, it attempts to build it locally instead of downloading the wheel",
        "I tried to build onnxruntime from source with CUDA 12.4",
    ),
    (
        "error-pip-building-from-source",
        "Building wheels for collected packages: antlr4-python3-runtime, onnxsim",
        "Building wheels for collected packages: antlr4-python3-runtime",
    ),
    (
        "error-tensorrt-api-removed",
        "AttributeError: 'tensorrt_bindings.tensorrt.IBuilderConfig' object has no attribute 'max_workspace_size'",
        "'tensorrt.IBuilderConfig' object has attribute 'set_memory_pool_limit'",
    ),
    (
        "error-tensorrt-resize-scales-not-constant",
        "ERROR: builtin_op_importers.cpp:2540 In function importResize:\n[8] Assertion failed: scales.is_weights() && \"Resize scales must be an initializer!\"",
        "Resize scales are read from the initializer",
    ),
    (
        "error-tensorrt-python-api-too-old",
        "AttributeError: module 'tensorrt' has no attribute 'Logger'",
        "module 'tensorrt' has attribute Logger",
    ),
    (
        "error-tensorrt-mixed-libraries",
        "2: [builder.cpp::nvinfer1::builder::createCaskKernelLibraryImpl::137] Error Code 2: Internal Error (Assertion validateCaskKLibSize(buffer.size) failed. )",
        "createCaskKernelLibraryImpl succeeded",
    ),
    (
        "error-pip-no-release-for-python",
        "  Could not find a version that satisfies the requirement ultralytics>=8.0.232 (from -r requirements.txt (line 18)) (from versions: )",
        "Could not find a version that satisfies the requirement ultralytics>=8.0.232 (from versions: 8.0.232, 8.1.0)",
    ),
    (
        "error-tensorrt-unknown-jetson-module",
        "[TRT] [E] 2: [utils.cpp::checkMemLimit::380] Error Code 2: Internal Error (Assertion upperBound != 0 failed. Unknown embedded device detected. Please update the table with the entry: {{1794, 6, 16}, 12653},)",
        "Embedded device detected: Jetson Xavier NX",
    ),
    (
        "error-onnxscript-missing",
        "ModuleNotFoundError: No module named 'onnxscript'",
        "onnxscript 0.5.4 is installed",
    ),
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
        "likely-onnxruntime-without-cuda-provider",
        "['AzureExecutionProvider', 'CPUExecutionProvider']",
        "['CUDAExecutionProvider', 'CPUExecutionProvider']",
    ),
    (
        "likely-onnxruntime-without-cuda-provider",
        "1.3.1   EXECUTION PROVIDERS only azure  and cpu,not have cuda",
        "execution providers: cuda and cpu",
    ),
    (
        "likely-onnxruntime-without-cuda-provider",
        "run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'cpu')",
        "run.py: error: argument --execution-provider: invalid choice: 'gpu' (choose from 'cuda', 'cpu')",
    ),
    (
        "likely-onnxruntime-without-cuda-provider",
        "onnxruntime.get_device() returns 'CPU'",
        "onnxruntime.get_device() returns 'GPU'",
    ),
    (
        "likely-half-precision-on-gtx-16",
        "I only get black images on my GTX 1660 Ti with the default settings",
        "I only get black images on my RTX 3060 with the default settings",
    ),
    (
        "likely-half-precision-on-gtx-16",
        "training on a 1650 SUPER gives loss=nan after the first step",
        "training on a 1650 step schedule gives loss 0.3 after the first step",
    ),
    ("likely-torch-cuda-unavailable", "torch.cuda.is_available() returns False", "Is CUDA available: False"),
    (
        "likely-torch-cuda-unavailable",
        "torch.cuda.is_available=**False**",
        "torch.cuda.is_available=**True**",
    ),
    (
        "likely-torch-cuda-unavailable",
        "AssertionError: CUDA unavailable, invalid device 0 requested",
        "device 0 requested: CUDA available",
    ),
    (
        "error-pip-no-matching-distribution",
        "ERROR: No matching distribution found for onnxruntime-directml>=1.20.1",
        "Found a matching distribution for onnxruntime-directml>=1.20.1",
    ),
    (
        "error-genai-config-from-another-release",
        "RuntimeError: Unsupported model_type in config.json: phi3small",
        "the model_type in config.json is phi3small",
    ),
    (
        "error-genai-config-from-another-release",
        "JSON Error: Unknown value: eos_token_id at line 34 index 27",
        "JSON Error: Unexpected character at line 34 index 27",
    ),
    (
        "likely-runs-on-cpu",
        "It has started training but it is not using GPU (TITAN X) at all",
        "It has started training and it is using the GPU (TITAN X) fully",
    ),
    (
        "likely-runs-on-cpu",
        "the library refuses to run on GPU no matter what I try",
        "the library refuses to run without a GPU, no matter what I try",
    ),
    (
        "likely-torch-cuda-unavailable",
        "            But your machine only has: []",
        "            But your machine only has: [0, 1]",
    ),
    (
        "likely-torch-cuda-unavailable",
        "/site-packages/whisper/transcribe.py:114: UserWarning: FP16 is not supported on CPU; using FP32 instead",
        "FP16 is supported on CUDA",
    ),
    (
        "likely-torch-cuda-unavailable",
        "It says CUDA is not available.",
        "CUDAExecutionProvider is not available",
    ),
    (
        "error-gpu-library-missing",
        "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
        "Library libcublas.so.12 was loaded",
    ),
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
    (
        "error-cuda-unknown-error",
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.",
        "an unknown error in CUDA code of mine",
    ),
    (
        "error-cuda-unknown-error",
        "RuntimeError: cuda runtime error (999) : unknown error at /opt/conda/conda-bld/pytorch_1573049306803/work/aten/src/THC/THCGeneral.cpp:50",
        "cuda runtime error (99) : unknown",
    ),
    (
        "error-torchvision-undefined-symbol",
        "ImportError: /env/lib/python3.6/site-packages/torchvision/_C.cpython-36m-x86_64-linux-gnu.so: undefined symbol: _ZN3c106Device8validateEv",
        "ImportError: /env/lib/python3.6/site-packages/maskrcnn/_C.so: undefined symbol: _ZN3c106Device8validateEv",
    ),
    (
        "error-torchvision-cuda-differs",
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch install.",
        "PyTorch and torchvision were compiled with the same CUDA version",
    ),
    (
        "error-nvjitlink-too-old",
        "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
        "undefined symbol: cusparseSpMM, version libcusparse.so.12",
    ),
    (
        "error-cuda-libraries-mixed",
        "OSError: /home/gpu/anaconda3/envs/FXM/lib/python3.7/lib-dynload/../../libcublas.so.11: symbol free_gemm_select version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference",
        "OSError: libcublasLt.so.11: cannot open shared object file: No such file or directory",
    ),
    (
        "error-torch-libraries-mixed",
        "ImportError: /usr/local/lib/python3.6/dist-packages/torch/lib/libtorch_python.so: undefined symbol: _ZTIN3c1014WarningHandlerE",
        "ImportError: /env/site-packages/torch/lib/libtorch_python.so: undefined symbol: _ZN6google8protobuf8internal9ArenaImpl",
    ),
    (
        "error-cudnn-crash-on-windows",
        "Exception thrown at 0x00007FFF94A23A48 (cudnn_cnn_infer64_8.dll) in app.exe: 0xC0000005: Access violation reading location",
        "Exception thrown at 0x00007FFF94A23A48 (KernelBase.dll) in app.exe: Microsoft C++ exception",
    ),
    (
        "error-libcuda-missing",
        "/server: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory",
        "libcudart.so.1 loaded",
    ),
    (
        "error-pip-torch-local-version",
        "ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu113 (from versions: none)",
        "ERROR: Could not find a version that satisfies the requirement torch==1.10.0 (from versions: 1.13.0)",
    ),
    (
        "error-pip-torch-local-version",
        "ERROR: No matching distribution found for torch==1.13.1+cu117; Could not find a version that satisfies the requirement torch==1.13.1+cu117",
        "ERROR: Could not find a version that satisfies the requirement torch==1.13.1+cu117 (from versions: 2.0.0, 2.0.0+cu117)",
    ),
    (
        "error-gpu-library-missing",
        "Could not load library cudnn_ops_infer64_8.dll. Error code 126",
        "Loaded library cudnn_ops_infer64_8.dll",
    ),
    (
        "error-numpy2-removed-name",
        "AttributeError: `np.cast` was removed in the NumPy 2.0 release. Use `np.asarray(arr, dtype=dtype)` instead.",
        "DeprecationWarning: `np.cast` is deprecated and will be removed in a future release.",
    ),
    (
        "error-torchvision-functional-tensor-removed",
        "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
        "ModuleNotFoundError: No module named 'torchvision.transforms.v2'",
    ),
    (
        "error-openmp-runtime-twice",
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "OMP: Info #276: omp_set_nested routine deprecated, please use omp_set_max_active_levels instead.",
    ),
    (
        "error-onnxruntime-api-newer-than-library",
        "The given version [16] is not supported, only version 1 to 10 is supported in this build.",
        "The given version [16] of the model is not supported by this build.",
    ),
    (
        "error-torch-gpu-too-old",
        "    Found GPU0 GeForce GTX 670M which is of cuda capability 2.1.",
        "    Found GPU0 GeForce GTX 670M with 3 GB of memory.",
    ),
    (
        "error-opencv-without-gui",
        "cv2.error: OpenCV(4.2.0) /io/opencv/modules/highgui/src/window.cpp:634: error: (-2:Unspecified error) The function is not implemented. Rebuild the library with Windows, GTK+ 2.x or Cocoa support. If you are on Ubuntu or Debian, install libgtk2.0-dev and pkg-config",
        "cv2.error: OpenCV(4.2.0) /io/opencv/modules/imgproc/src/resize.cpp:3720: error: (-215:Assertion failed) !ssize.empty() in function 'resize'",
    ),
    (
        "error-tensorrt-python-missing",
        "ModuleNotFoundError: No module named 'tensorrt'",
        "ModuleNotFoundError: No module named 'tensorrt_llm'",
    ),
    (
        "error-sherpa-onnx-without-gpu",
        "/project/sherpa-onnx/csrc/session.cc:GetSessionOptionsImpl:167 Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, . Fallback to cpu!",
        "cmake -DCMAKE_BUILD_TYPE=Release -DSHERPA_ONNX_ENABLE_GPU=ON ..",
    ),
    (
        "error-ctranslate2-without-cuda",
        "ValueError: This CTranslate2 package was not compiled with CUDA support",
        "ValueError: This CTranslate2 binary was not compiled with Intel MKL",
    ),
    (
        "error-pip-placeholder-project",
        "      The package you are trying to install is only a placeholder project on the package registry.",
        "      The package you are trying to install is not available for this platform.",
    ),
    (
        "error-pip-torch-no-wheel-for-python",
        "ERROR: Could not find a version that satisfies the requirement torch==1.5.1+cpu (from versions: 0.1.2, 0.1.2.post1, 0.1.2.post2)",
        "ERROR: Could not find a version that satisfies the requirement torch==1.5.1+cpu (from versions: 0.1.2, 1.4.0)",
    ),
    (
        "error-pip-no-release-for-python",
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)",
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: 2.0.0, 2.0.1)",
    ),
    (
        "error-pip-version-not-for-python",
        "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.0.0, 2.0.1, 2.1.0)",
        "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: none)",
    ),
    (
        "error-pip-version-not-for-python",
        "ERROR: Could not find a version that satisfies the requirement onnxruntime==1.17.0 (from versions: 1.15.0, 1.15.1, 1.16.0, 1.16.3)",
        "ERROR: No matching distribution found for onnxruntime==1.17.0",
    ),
    (
        "error-pip-version-not-for-python",
        "ERROR: Could not find a version that satisfies the requirement torch==1.13.1+cu117 (from versions: 2.0.0, 2.0.0+cu117)",
        "ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu113 (from versions: 0.1.2, 0.1.2.post1, 0.1.2.post2)",
    ),
    (
        "error-wheel-not-for-this-python",
        "ERROR: onnxruntime_gpu-1.16.0-cp38-cp38m-linux_aarch64.whl is not a supported wheel on this platform.",
        "onnxruntime_gpu-1.16.0-cp38-cp38-linux_aarch64.whl installed",
    ),
    (
        "error-dll-load-failed",
        "ImportError: DLL load failed while importing onnxruntime_pybind11_state: A dynamic link library (DLL) initialization routine failed.",
        "the DLL loaded",
    ),
    (
        "error-tensorrt-engine-other-gpu",
        "[TensorRT] ERROR: INVALID_CONFIG: The engine plan file is generated on an incompatible device, expecting compute 6.1 got compute 7.5, please rebuild.",
        "The engine plan file is generated on this device",
    ),
    (
        "error-no-kernel-image",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasCreate(handle)`",
        "CUBLAS_STATUS_SUCCESS",
    ),
    (
        "error-gpu-library-missing",
        "OSError: libnvJitLink.so.12: cannot open shared object file: No such file or directory",
        "libnvJitLink.so.12 found",
    ),
    (
        "error-cuda-provider-requires",
        "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. Please install all dependencies as mentioned in the GPU requirements page",
        "Created CUDAExecutionProvider. cuDNN 9 and CUDA 12 found",
    ),
    (
        "error-cuda-provider-not-created",
        "EP Error C:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:866 onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded.",
        "CUDA_PATH is set and CUDA was loaded",
    ),
    (
        "error-tensorrt-unsupported-sm",
        "[04/25/2024-15:52:54] [TRT] [E] 1: [caskUtils.cpp::trtSmToCask::193] Error Code 1: Internal Error (Unsupported SM: 0x601)",
        "Supported SM: 0x601",
    ),
    (
        "error-tensorrt-bindings-missing",
        "ModuleNotFoundError: No module named 'tensorrt_bindings'",
        "No module named 'tensorrt'",
    ),
    (
        "error-cuda-provider-failed-to-load",
        "Error loading \"C:\\venv\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\" which depends on \"cublasLt64_12.dll\" which is missing. (Error 126)",
        "onnxruntime_providers_cuda.dll loaded",
    ),
    (
        "error-ctranslate2-compute-type-unsupported",
        "ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.",
        "ValueError: Requested float16 compute type, using int8_float16 instead.",
    ),
    (
        "error-torchvision-from-torch-hub",
        "model = torch.hub.load(\"pytorch/vision\", \"alexnet\", weights=\"IMAGENET1K_V1\")",
        "model = torch.hub.load(\"ultralytics/yolov5\", \"yolov5s\")",
    ),
    (
        "error-protobuf-runtime-version",
        "ImportError: cannot import name 'runtime_version' from 'google.protobuf' (/x/site-packages/google/protobuf/__init__.py)",
        "from google.protobuf import runtime_version as _runtime_version",
    ),
    (
        "error-libprotobuf-missing",
        "ImportError: dlopen(/x/onnx_cpp2py_export.cpython-38-darwin.so, 2): Library not loaded: @rpath/libprotobuf.20.dylib",
        "Library not loaded: @rpath/libonnx.dylib",
    ),
    (
        "error-numpy124-removed-alias",
        "`np.bool` support was dropped on numpy 1.24.0",
        "`np.bool_` support was dropped on numpy 1.24.0",
    ),
    (
        "error-numpy124-removed-alias",
        "AttributeError: module 'numpy' has no attribute 'int'.",
        "AttributeError: module 'numpy' has no attribute 'int8x'",
    ),
    (
        "error-torch-hip-dll-cannot-load",
        "OSError: [WinError 126] The specified module could not be found. Error loading \"F:\\ComfyUI\\python_embeded\\Lib\\site-packages\\torch\\lib\\c10_hip.dll\" or one of its dependencies.",
        "OSError: [WinError 126] The specified module could not be found. Error loading \"F:\\ComfyUI\\python_embeded\\Lib\\site-packages\\torch\\lib\\c10_cuda.dll\" or one of its dependencies.",
    ),
    (
        "error-windows-paging-file-too-small",
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading \"C:\\env\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or one of its dependencies.",
        "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\env\\lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies.",
    ),
    (
        "error-libprotobuf-missing",
        "ImportError: /env/lib/python3.6/site-packages/onnx/onnx_cpp2py_export.cpython-36m-x86_64-linux-gnu.so: undefined symbol: _ZNK6google8protobuf7Message11GetTypeNameB5cxx11Ev",
        "ImportError: /env/lib/python3.6/site-packages/onnx/onnx_cpp2py_export.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jS2_",
    ),
    (
        "error-gpu-library-missing",
        "ValueError: libnvrtc.so.*[0-9].*[0-9] not found in the system path ['/x/site-packages']",
        "libnvrtc.so.12 found in the system path",
    ),
    (
        "error-onnx-export-aten",
        "RuntimeError: Exporting the operator hardswish to ONNX opset version 12 is not supported. Please open a bug to request ONNX export support for the missing operator.",
        "Exporting the operator hardswish to ONNX opset version 14",
    ),
    (
        "error-dll-load-failed",
        "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\x\\torch\\lib\\fbgemm.dll\" or one of its dependencies.",
        "Loaded \"fbgemm.dll\" and its dependencies",
    ),
    (
        "error-torch-export-opset-unsupported",
        "ONNX: export failure  0.1s: Unsupported ONNX opset version: 17",
        "ONNX: export success  2.1s, saved as best.onnx (opset 17)",
    ),
    (
        "error-libstdcxx-too-old",
        "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.20' not found (required by /x/onnxruntime_pybind11_state.so)",
        "GLIBCXX_3.4.20 found",
    ),
    (
        "error-glibc-too-old",
        "ImportError: /lib64/libc.so.6: version 'GLIBC_2.14' not found (required by /x/onnxruntime_pybind11_state.so)",
        "GLIBC_2.14 found",
    ),
    (
        "error-onnxruntime-tensorrt-symbol",
        "ImportError: /usr/local/lib/python3.8/dist-packages/onnxruntime/capi/libonnxruntime_providers_tensorrt.so: undefined symbol: getBuilderPluginRegistry",
        "libonnxruntime_providers_tensorrt.so loaded",
    ),
    (
        "error-dll-load-failed",
        "System.DllNotFoundException: Unable to load DLL 'onnxruntime' or one of its dependencies: The specified module could not be found. (0x8007007E)",
        "Loaded DLL onnxruntime",
    ),
];
