//! Every fact rule and every builtin check of the embedded matrix fires on
//! a snapshot made for it, its fixes agree with the rest of the matrix, and
//! it stays quiet on its closest neighbour: one version across the
//! boundary, or the one fact that makes the difference.
//! A rule added to the matrix without a case here fails
//! `every_rule_has_a_case` (error signatures have theirs in signatures.rs).

use onnx_doctor::check::check;
use onnx_doctor::matrix::{Matrix, RuleKind};
use onnx_doctor::snapshot::Snapshot;
use serde_json::{Value, json};

/// A healthy machine: Ubuntu, driver 580.95.05 read through NVML, one
/// RTX 4090, and one Python 3.11 environment with nothing installed.
#[derive(Clone)]
struct World(Value);

impl World {
    fn new() -> Self {
        World(json!({
            "schema_version": 1,
            "probed_by": "every_rule",
            "mode": "fast",
            "system": {"found": {"os": {"found": "Ubuntu 24.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                                 "glibc": {"found": "2.39"}, "container": null, "wsl": false}},
            "pythons": [{"executable": "/env/bin/python", "source": "flag", "version": {"found": "3.11.9"},
                         "kind": "venv", "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [],
                         "distributions": {"found": []}, "imports": []}],
            "nvidia": {"found": {"nvml": {"state": "ok"},
                                 "driver": {"found": {"version": "580.95.05", "max_cuda": "13.0", "source": "nvml"}},
                                 "kernel_module": {"found": "580.95.05"},
                                 "gpus": {"found": [{"index": 0, "name": "NVIDIA GeForce RTX 4090",
                                                     "compute_capability": "8.9", "architecture": "Ada",
                                                     "memory_mib": 24564, "uuid": null}]}}}
        }))
    }

    fn env(&mut self) -> &mut Value {
        &mut self.0["pythons"][0]
    }

    fn nvidia(&mut self) -> &mut Value {
        &mut self.0["nvidia"]["found"]
    }

    fn python(mut self, v: &str) -> Self {
        self.env()["version"] = json!({"found": v});
        self
    }

    fn dist(mut self, name: &str, version: &str) -> Self {
        let dists = self.env()["distributions"]["found"].as_array_mut().unwrap();
        dists.retain(|d| d["name"] != name);
        dists
            .push(json!({"name": name, "version": version, "location": "/env/lib/python3.11/site-packages"}));
        self
    }

    fn dists(self, list: &[(&str, &str)]) -> Self {
        list.iter().fold(self, |w, (n, v)| w.dist(n, v))
    }

    fn with_dist(mut self, name: &str, key: &str, value: Value) -> Self {
        let dists = self.env()["distributions"]["found"].as_array_mut().unwrap();
        let d = dists.iter_mut().find(|d| d["name"] == name).expect("dist added first");
        d[key] = value;
        self
    }

    /// The probe imported `package` with these runtime facts.
    fn imported(mut self, package: &str, facts: Value) -> Self {
        self.0["mode"] = json!("full");
        self.env()["imports"]
            .as_array_mut()
            .unwrap()
            .push(json!({"package": package, "module": package, "status": {"state": "ok"}, "facts": facts}));
        self
    }

    fn import_status(mut self, package: &str, status: Value) -> Self {
        self.0["mode"] = json!("full");
        self.env()["imports"]
            .as_array_mut()
            .unwrap()
            .push(json!({"package": package, "module": package, "status": status}));
        self
    }

    fn driver(mut self, v: &str) -> Self {
        self.nvidia()["driver"]["found"]["version"] = json!(v);
        self.nvidia()["kernel_module"] = json!({"found": v});
        self
    }

    fn no_driver(mut self) -> Self {
        let n = self.nvidia();
        n["nvml"] = json!({"state": "no_library", "detail": "libnvidia-ml.so.1: not found"});
        n["driver"] = json!({"not_evaluated": "no NVIDIA driver"});
        n["kernel_module"] = json!({"not_evaluated": "no kernel module"});
        n["gpus"] = json!({"not_evaluated": "no driver"});
        self
    }

    fn gpu(mut self, name: &str, cc: &str) -> Self {
        self.nvidia()["gpus"]["found"][0]["name"] = json!(name);
        self.nvidia()["gpus"]["found"][0]["compute_capability"] = json!(cc);
        self
    }

    fn header(mut self, component: &str, version: &str) -> Self {
        let n = self.nvidia();
        if n.get("headers").is_none() {
            n["headers"] = json!([]);
        }
        n["headers"].as_array_mut().unwrap().push(
            json!({"component": component, "version": version, "path": format!("/usr/include/{component}.h")}),
        );
        self
    }

    fn toolkit(mut self, version: &str) -> Self {
        self.nvidia()["toolkits"] = json!([{"root": "/usr/local/cuda", "version": {"found": version},
                                            "found_via": "/usr/local/cuda"}]);
        self
    }

    fn link(mut self, role: &str, unresolved: &[&str]) -> Self {
        let n = self.nvidia();
        if n.get("links").is_none() {
            n["links"] = json!([]);
        }
        let missing: Vec<Value> = unresolved
            .iter()
            .map(|s| json!({"soname": s, "needed_by": "/env/lib/libprovider.so", "available_in": []}))
            .collect();
        n["links"].as_array_mut().unwrap().push(json!({
            "role": role, "library": "/env/lib/libprovider.so", "python": "/env/bin/python",
            "resolved": [], "unresolved": missing
        }));
        self
    }

    fn model(mut self, ir: i64, opset: i64, ops: &[(&str, &str)]) -> Self {
        let mut by_domain = serde_json::Map::new();
        for (domain, op) in ops {
            let entry = by_domain.entry(domain.to_string()).or_insert_with(|| json!({}));
            entry[*op] = json!(1);
        }
        self.0["model"] = json!({
            "path": "/models/model.onnx", "file_bytes": 1000, "ir_version": ir, "producer": "pytorch 2.15.0",
            "opsets": {"ai.onnx": opset}, "ops": by_domain, "inputs": [], "outputs": [],
            "initializers": 0, "initializer_bytes": 0, "int64_initializers": 0,
            "subgraphs": 0, "functions": 0
        });
        self
    }

    fn model_set(mut self, key: &str, value: Value) -> Self {
        self.0["model"][key] = value;
        self
    }

    fn target(mut self, runtime: &str, version: &str) -> Self {
        self.0["targets"][runtime] = json!(version);
        self
    }

    /// Sets the value at a JSON pointer, adding the last key if it is new.
    fn set(mut self, pointer: &str, value: Value) -> Self {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let parent = self.0.pointer_mut(parent).unwrap_or_else(|| panic!("{pointer}"));
        match parent {
            Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
            other => other[key] = value,
        }
        self
    }
}

/// (code, the world where it fires, its neighbour where it does not).
fn cases() -> Vec<(&'static str, World, World)> {
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
            "onnx-ir-newer-than-onnxruntime",
            w().dists(&[("onnx", "1.17.0"), ("onnxruntime", "1.17.3")])
                .imported("onnx", json!({"ir_version": 10, "max_opset": 20})),
            w().dists(&[("onnx", "1.17.0"), ("onnxruntime", "1.18.0")])
                .imported("onnx", json!({"ir_version": 10, "max_opset": 20})),
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
            "glibc-too-old-for-onnxruntime",
            w().set("/system/found/glibc", json!({"found": "2.27"})).dist("onnxruntime-gpu", "1.17.0"),
            w().set("/system/found/glibc", json!({"found": "2.28"})).dist("onnxruntime-gpu", "1.17.0"),
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
            "driver-too-old-for-onnxruntime-gpu",
            w().driver("525.60.13").dist("onnxruntime-gpu", "1.27.0"),
            w().driver("525.60.13").dist("onnxruntime-gpu", "1.26.0"),
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
            w().driver("575.57.08").dist("tensorrt-cu13", "10.14.1"),
            w().driver("580.65.06").dist("tensorrt-cu13", "10.14.1"),
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
            "model-op-unsupported-by-tensorrt",
            w().model(8, 17, &[("ai.onnx", "BlackmanWindow"), ("ai.onnx", "Conv")])
                .target("tensorrt", "8.6.1"),
            w().model(8, 17, &[("ai.onnx", "BlackmanWindow"), ("ai.onnx", "Conv")])
                .target("tensorrt", "10.15.1"),
        ),
        (
            "model-resize-on-old-tensorrt",
            w().model(6, 11, &[("ai.onnx", "Resize")]).target("tensorrt", "7.0.0"),
            w().model(6, 11, &[("ai.onnx", "Resize")]).target("tensorrt", "7.1.3"),
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
    ]
}

fn matrix() -> Matrix {
    Matrix::load(&[]).expect("the embedded matrix loads")
}

fn judge(world: &World, m: &Matrix) -> onnx_doctor::check::Judgement {
    let mut v = world.0.clone();
    if v.get("expectations").is_none() {
        v["expectations"] = json!([]);
    }
    let snap: Snapshot = serde_json::from_value(v).expect("the fixture is a snapshot");
    check(&snap, m)
}

/// What the fix plan of a world could not reconcile.
fn plan_conflicts(world: &World, m: &Matrix) -> Vec<String> {
    judge(world, m).plans.into_iter().flat_map(|p| p.conflicts).collect()
}

/// The codes that fired, and the rules not evaluated (with why).
fn codes(world: &World, m: &Matrix) -> (Vec<String>, Vec<(String, String)>) {
    let j = judge(world, m);
    let fired = j.findings.iter().map(|f| f.code.clone()).collect();
    let not_evaluated = j
        .outcomes
        .iter()
        .filter(|o| matches!(o.outcome, onnx_doctor::check::Outcome::NotEvaluated { .. }))
        .map(|o| (o.code.clone(), format!("{:?}", o.outcome)))
        .collect();
    (fired, not_evaluated)
}

#[test]
fn every_rule_fires_on_its_case_and_stays_quiet_on_the_neighbour() {
    let m = matrix();
    let mut failures = Vec::new();
    for (code, fire, quiet) in cases() {
        assert!(m.rule(code).is_some(), "{code} is not a rule of the matrix");
        let (fired, _) = codes(&fire, &m);
        if !fired.iter().any(|c| c == code) {
            failures.push(format!("{code} did not fire; fired: {fired:?}"));
        }
        let conflicts = plan_conflicts(&fire, &m);
        if !conflicts.is_empty() {
            failures.push(format!("{code}: its fixes conflict with the matrix: {conflicts:?}"));
        }
        let (fired, not_evaluated) = codes(&quiet, &m);
        if fired.iter().any(|c| c == code) {
            failures.push(format!("{code} fired on its quiet neighbour"));
        }
        if let Some((_, why)) = not_evaluated.iter().find(|(c, _)| c == code) {
            failures.push(format!("{code} was not evaluated on its quiet neighbour: {why}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_rule_has_a_case() {
    let m = matrix();
    let covered: Vec<&str> = cases().iter().map(|(c, _, _)| *c).collect();
    let missing: Vec<&str> = m
        .rules
        .iter()
        .filter(|r| !matches!(r.kind, RuleKind::Signature { .. }))
        .map(|r| r.code.as_str())
        .filter(|c| !covered.contains(c))
        .collect();
    assert!(missing.is_empty(), "rules without a fire/quiet case: {missing:?}");
}

#[test]
fn the_healthy_world_raises_nothing() {
    let m = matrix();
    let (fired, _) = codes(&World::new(), &m);
    assert!(fired.is_empty(), "{fired:?}");
}

#[test]
fn an_unsupported_operator_is_named_in_the_evidence() {
    let m = matrix();
    let world = World::new()
        .model(8, 17, &[("ai.onnx", "BlackmanWindow"), ("ai.onnx", "Conv"), ("ai.onnx", "Unique")])
        .target("tensorrt", "8.6.1");
    let j = judge(&world, &m);
    let f = j.findings.iter().find(|f| f.code == "model-op-unsupported-by-tensorrt").expect("fires");
    assert_eq!(f.evidence, ["model.ops: BlackmanWindow, Unique"]);
}
