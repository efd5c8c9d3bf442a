//! Cases for the corrections of the matrix audit: each fires on the situation it describes and stays quiet on its closest neighbour.
//!
//! They drive the real binary on a JSON snapshot (or on a paste, for what
//! only a paste carries: GPU names and error lines), so they depend on the
//! report's JSON and not on the crate's Rust API.

mod support;

use serde_json::{Value, json};
use support::world::World;
use support::{finding, finding_codes as codes};

/// The report of the doctor on a world's snapshot.
trait Judge {
    fn judge(self) -> Value;
}

impl Judge for World {
    fn judge(self) -> Value {
        support::judge(&self)
    }
}

fn world() -> World {
    World::new()
}

fn diagnose(text: &str) -> Value {
    support::diagnose_text(text)
}

/// `code` fired; returns its message.
fn fires(report: &Value, code: &str) -> String {
    finding(report, code)["message"].as_str().unwrap().to_string()
}

/// `code` did not fire, and was evaluated (passed or did not apply).
fn quiet(report: &Value, code: &str) {
    assert!(!codes(report).iter().any(|c| c == code), "{code} fired: {:#}", finding(report, code));
    let outcome = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["code"] == code)
        .map(|o| o.to_string())
        .unwrap_or_default();
    assert!(!outcome.contains("not_evaluated") && !outcome.contains("NotEvaluated"), "{code}: {outcome}");
}

// -- torch 2.9-2.15 export IR 10: onnxruntime 1.18 is the first to load it ------------------

#[test]
fn the_dynamo_export_of_torch_2_9_needs_onnxruntime_1_18() {
    let code = "torch-export-opset-newer-than-onnxruntime";
    let r = world().dists(&[("torch", "2.9.0"), ("onnxruntime", "1.17.3")]).judge();
    let msg = fires(&r, code);
    assert!(msg.contains("onnxruntime >=1.18"), "{msg}");
    assert!(finding(&r, code)["why"].as_str().unwrap().contains("IR version 10"), "{:#}", finding(&r, code));
    quiet(&world().dists(&[("torch", "2.9.0"), ("onnxruntime", "1.18.0")]).judge(), code);
}

#[test]
fn the_same_holds_up_to_torch_2_15_and_not_before_2_9() {
    let code = "torch-export-opset-newer-than-onnxruntime";
    for torch in ["2.10.0", "2.11.0", "2.12.0", "2.13.0", "2.14.0", "2.15.0"] {
        let r = world().python("3.12.4").dists(&[("torch", torch), ("onnxruntime", "1.17.3")]).judge();
        assert!(fires(&r, code).contains(">=1.18"), "torch {torch}");
        quiet(&world().python("3.12.4").dists(&[("torch", torch), ("onnxruntime", "1.18.1")]).judge(), code);
    }
    // torch 2.8's TorchScript export (opset 18, IR 8) still loads in 1.17.
    quiet(&world().dists(&[("torch", "2.8.0"), ("onnxruntime", "1.17.3")]).judge(), code);
}

// -- torch 2.11 +cu129 has no Volta ------------------------------------------------------------

#[test]
fn torch_2_11_cu129_does_not_run_on_volta() {
    let code = "gpu-not-supported-by-torch-build";
    let v100 = || world().gpu("Tesla V100-SXM2-16GB", "7.0");
    let r = v100().dists(&[("torch", "2.11.0+cu129")]).judge();
    let msg = fires(&r, code);
    assert!(msg.contains("7.5;8.0;8.6;9.0;10.0;12.0+PTX") && msg.contains("7.0"), "{msg}");
    quiet(&v100().dists(&[("torch", "2.10.0+cu129")]).judge(), code);
    // A Turing GPU runs 2.11's cu129 build.
    quiet(&world().gpu("Tesla T4", "7.5").dists(&[("torch", "2.11.0+cu129")]).judge(), code);
}

// -- GPU names: Ada Generation parts and RTX PRO 2000 ------------------------------------------

fn collect_env(torch: &str, gpu: &str) -> String {
    // cu124 -> 12.4, cu102 -> 10.2
    let digits = torch.split_once("+cu").map(|(_, d)| d).unwrap_or_default();
    let cuda = format!("{}.{}", &digits[..digits.len() - 1], &digits[digits.len() - 1..]);
    format!(
        "PyTorch version: {torch}\n\
         Is debug build: False\n\
         CUDA used to build PyTorch: {cuda}\n\
         OS: Ubuntu 22.04.4 LTS (x86_64)\n\
         Libc version: glibc-2.35\n\
         Python version: 3.10.14 (main) [GCC 11.4.0] (64-bit runtime)\n\
         Is CUDA available: True\n\
         GPU models and configuration: GPU 0: {gpu}\n\
         Nvidia driver version: 580.95.05\n"
    )
}

fn pasted_compute_capability(gpu: &str) -> String {
    let r = diagnose(&collect_env("2.5.1+cu124", gpu));
    let gpus = &r["snapshot"]["nvidia"]["found"]["gpus"]["found"];
    gpus[0]["compute_capability"].as_str().unwrap_or_else(|| panic!("{gpu}: {gpus:#}")).to_string()
}

#[test]
fn ada_generation_names_read_as_8_9_and_their_neighbours_keep_theirs() {
    for (name, cc) in [
        // Each of these was read through a shorter name: RTX 20, RTX 30, RTX 50, RTX 40.
        ("NVIDIA RTX 2000 Ada Generation", "8.9"),
        ("NVIDIA RTX 2000 Ada Generation Laptop GPU", "8.9"),
        ("NVIDIA RTX 3000 Ada Generation Laptop GPU", "8.9"),
        ("NVIDIA RTX 500 Ada Generation Laptop GPU", "8.9"),
        ("NVIDIA RTX 1000 Ada Generation Laptop GPU", "8.9"),
        ("NVIDIA RTX 3500 Ada Generation Laptop GPU", "8.9"),
        ("NVIDIA RTX 4500 Ada Generation", "8.9"),
        ("NVIDIA RTX 4000 SFF Ada Generation", "8.9"),
        ("NVIDIA RTX 5000 Ada Generation", "8.9"),
        ("NVIDIA RTX PRO 2000 Blackwell", "12.0"),
        // The neighbours the short names were made for.
        ("NVIDIA GeForce RTX 2080 Ti", "7.5"),
        ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
        ("NVIDIA GeForce RTX 5070", "12.0"),
        ("NVIDIA RTX A2000 12GB", "8.6"),
    ] {
        assert_eq!(pasted_compute_capability(name), cc, "{name}");
    }
}

#[test]
fn an_rtx_2000_ada_is_not_covered_by_a_cuda_10_2_build() {
    // torch 1.12 +cu102 carries sm_70 code only: a 7.5 GPU runs it, an 8.9 one
    // does not. Read as an RTX 20 (7.5), the Ada card looked fine.
    let code = "gpu-not-supported-by-torch-build";
    let r = diagnose(&collect_env("1.12.1+cu102", "NVIDIA RTX 2000 Ada Generation"));
    assert!(fires(&r, code).contains("8.9"), "{}", fires(&r, code));
    let r = diagnose(&collect_env("1.12.1+cu102", "Quadro RTX 5000"));
    assert!(!codes(&r).contains(&code.to_string()), "{:?}", codes(&r));
}

#[test]
fn an_rtx_500_ada_laptop_is_covered_by_a_build_without_blackwell() {
    // Read as an RTX 50 (12.0), it looked unsupported by torch 2.6 +cu124.
    let code = "gpu-not-supported-by-torch-build";
    let r = diagnose(&collect_env("2.6.0+cu124", "NVIDIA RTX 500 Ada Generation Laptop GPU"));
    assert!(!codes(&r).contains(&code.to_string()), "{:?}", codes(&r));
    let r = diagnose(&collect_env("2.6.0+cu124", "NVIDIA GeForce RTX 5090"));
    assert!(fires(&r, code).contains("12.0"));
}

// -- CUDA 11.0: the GA's driver ------------------------------------------------------------------

#[test]
fn cuda_11_0_needs_the_ga_driver_450_51_05() {
    let code = "driver-too-old-for-torch-cuda";
    let torch = || world().python("3.8.10").dists(&[("torch", "1.7.1+cu110")]);
    let msg = fires(&torch().driver("450.36.06").judge(), code);
    assert!(msg.contains(">= 450.51.05"), "{msg}");
    quiet(&torch().driver("450.51.05").judge(), code);

    let code = "driver-too-old-for-onnxruntime-gpu";
    let ort = || world().python("3.8.10").dists(&[("onnxruntime-gpu", "1.8.1")]);
    assert!(fires(&ort().driver("450.36.06").judge(), code).contains(">= 450.51.05"));
    quiet(&ort().driver("450.51.05").judge(), code);
}

// -- torchvision: another CUDA major is an error; another minor only before 0.16 ---------------

#[test]
fn torchvision_for_another_cuda_major_is_an_error() {
    let code = "torchvision-cuda-variant-differs";
    let r = world().dists(&[("torch", "2.5.1+cu124"), ("torchvision", "0.20.1+cu118")]).judge();
    let msg = fires(&r, code);
    assert!(msg.contains("CUDA 12.4") && msg.contains("cu118"), "{msg}");
    assert_eq!(finding(&r, code)["severity"], "error");
    assert!(finding(&r, code)["fixes"][0].as_str().unwrap().contains("torchvision==0.20.1+cu124"));
    // 12.4 and 13.0 are different majors too.
    let r = world().dists(&[("torch", "2.9.0+cu130"), ("torchvision", "0.24.0+cu128")]).judge();
    fires(&r, code);
    // Same major, another minor: torchvision 0.16 and later accept it.
    let r = world().dists(&[("torch", "2.5.1+cu124"), ("torchvision", "0.20.1+cu121")]).judge();
    quiet(&r, code);
    quiet(&r, "torchvision-cuda-minor-differs");
}

#[test]
fn torchvision_before_0_16_refuses_another_cuda_minor() {
    let code = "torchvision-cuda-minor-differs";
    let old =
        |torch: &str, tv: &str| world().python("3.10.14").dists(&[("torch", torch), ("torchvision", tv)]);
    let r = old("1.13.1+cu117", "0.14.1+cu116").judge();
    assert!(fires(&r, code).contains("cu116"));
    quiet(&r, "torchvision-cuda-variant-differs");
    quiet(&old("1.13.1+cu117", "0.14.1+cu117").judge(), code);
    // Another major on an old torchvision is the major rule's, reported once.
    let r = old("1.13.1+cu117", "0.14.1+cu102").judge();
    fires(&r, "torchvision-cuda-variant-differs");
    quiet(&r, code);
    // 0.16 is the first that accepts another minor.
    quiet(&old("2.1.0+cu121", "0.16.0+cu121").judge(), code);
    quiet(&world().dists(&[("torch", "2.6.0+cu126"), ("torchvision", "0.21.0+cu124")]).judge(), code);
}

// -- TensorRT: the INFO line about a plugin import is not an error ------------------------------

#[test]
fn the_tensorrt_plugin_info_line_is_not_an_unsupported_node() {
    let code = "error-tensorrt-unsupported-node";
    let info = "[04/14/2021-20:30:12] [I] [TRT] No importer registered for op: mySelu. Attempting to import as plugin.\n\
                [04/14/2021-20:30:12] [I] [TRT] Searching for plugin: mySelu, plugin_version: 1, plugin_namespace: \n\
                [04/14/2021-20:30:12] [I] [TRT] Successfully created plugin: mySelu\n";
    assert!(!codes(&diagnose(info)).contains(&code.to_string()));
    for failing in [
        // TensorRT 10: the fallback plugin lookup found nothing.
        "[E] [TRT] ModelImporter.cpp:954: ERROR: onnxOpCheckers.cpp:781 In function checkFallbackPluginImporter:\n\
         [6] creator && \"Plugin not found, are the plugin name, version, and namespace correct?\"\n",
        "Failed to parse ONNX file: In node 0 with name:  and operator: DummyOp (checkFallbackPluginImporter): INVALID_NODE: creator && \"Plugin not found, are the plugin name, version, and namespace correct?\"\n",
        // TensorRT 8.
        "In node 0 (importFallbackPluginImporter): UNSUPPORTED_NODE: Assertion failed: creator && \"Plugin not found, are the plugin name, version, and namespace correct?\"\n",
        // TensorRT 7.0, before the plugin fallback.
        "[E] [TRT] ModelImporter.cpp:726: ERROR: ModelImporter.cpp:185 In function parseGraph: [8] No importer registered for op: GridSample\n",
    ] {
        let r = diagnose(&format!("{info}{failing}"));
        assert!(codes(&r).contains(&code.to_string()), "{failing}: {:?}", codes(&r));
    }
}

// -- cuDNN 8.0-8.5 run from compute capability 3.0 ----------------------------------------------

#[test]
fn cudnn_8_0_to_8_5_run_on_compute_capability_3_0() {
    let code = "gpu-not-supported-by-cudnn";
    for cudnn in ["8.0.5", "8.4.1", "8.5.0"] {
        quiet(&world().gpu("Quadro K4000", "3.0").header("cudnn", cudnn).judge(), code);
        let msg = fires(&world().gpu("GeForce GTX 580", "2.0").header("cudnn", cudnn).judge(), code);
        assert!(msg.contains("3.0 and newer"), "{msg}");
    }
    // 8.9 still starts at Maxwell.
    fires(&world().gpu("Quadro K4000", "3.0").header("cudnn", "8.9.7").judge(), code);
}

// -- CUDA 13.4 ------------------------------------------------------------------------------------

#[test]
fn torch_built_for_cuda_13_4_needs_the_13_x_floor() {
    let code = "driver-too-old-for-torch-cuda";
    let torch = || world().dists(&[("torch", "2.15.0+cu134")]);
    let msg = fires(&torch().driver("575.57.08").judge(), code);
    assert!(msg.contains(">= 580.65.06"), "{msg}");
    quiet(&torch().driver("580.65.06").judge(), code);

    let code = "driver-below-cuda-toolkit-driver";
    let msg = fires(&torch().driver("580.95.05").judge(), code);
    assert!(msg.contains("615.71.09"), "{msg}");
    quiet(&torch().driver("615.71.09").judge(), code);
}

// -- onnxruntime 1.32 -----------------------------------------------------------------------------

#[test]
fn onnxruntime_1_32_loads_what_onnx_1_23_writes() {
    let onnx_1_23 =
        || world().dists(&[("onnx", "1.23.2")]).imported("onnx", json!({"ir_version": 14, "max_opset": 28}));
    let r = onnx_1_23().dists(&[("onnxruntime", "1.31.1")]).judge();
    assert!(fires(&r, "onnx-ir-newer-than-onnxruntime").contains("at most IR 13"));
    assert!(fires(&r, "onnx-opset-newer-than-onnxruntime").contains("up to 26"));
    let r = onnx_1_23().dists(&[("onnxruntime", "1.32.0")]).judge();
    quiet(&r, "onnx-ir-newer-than-onnxruntime");
    quiet(&r, "onnx-opset-newer-than-onnxruntime");
    // The next IR and opset are beyond 1.32, and its fix names onnx < 1.24.
    let r = world()
        .dists(&[("onnx", "1.24.0"), ("onnxruntime", "1.32.0")])
        .imported("onnx", json!({"ir_version": 15, "max_opset": 29}))
        .judge();
    assert!(fires(&r, "onnx-ir-newer-than-onnxruntime").contains("at most IR 14"));
    assert!(fires(&r, "onnx-opset-newer-than-onnxruntime").contains("up to 28"));
    let fix = finding(&r, "onnx-ir-newer-than-onnxruntime")["fixes"][0].as_str().unwrap().to_string();
    assert!(fix.contains("onnx<1.24"), "{fix}");
}

#[test]
fn onnxruntime_1_32_ships_for_python_3_11_to_3_14() {
    let code = "python-unsupported-by-onnxruntime";
    let msg = fires(&world().python("3.10.14").dists(&[("onnxruntime", "1.32.0")]).judge(), code);
    assert!(msg.contains(">=3.11,<3.15"), "{msg}");
    quiet(&world().python("3.14.0").dists(&[("onnxruntime", "1.32.0")]).judge(), code);
    quiet(&world().python("3.11.9").dists(&[("onnxruntime", "1.32.0")]).judge(), code);
}

// -- TensorRT 6 needs Reshape's shape as a constant; 7.0 takes Resize sizes at run time ----

fn computed(operand: &str, op: &str, tensorrt: &str) -> Value {
    world()
        .model(6, 11, &[("ai.onnx", op)])
        .model_set("shape_operands", json!([{"operand": operand, "nodes": 1, "first": "n"}]))
        .target("tensorrt", tensorrt)
        .judge()
}

#[test]
fn tensorrt_6_needs_a_constant_reshape_shape_and_7_0_computed_resize_sizes_do_not_matter() {
    let code = "model-shape-computed-for-old-tensorrt";
    let msg = fires(&computed("Reshape.shape", "Reshape", "6.0.1"), code);
    assert!(msg.contains("Reshape.shape"), "{msg}");
    quiet(&computed("Reshape.shape", "Reshape", "7.0.0"), code);
    quiet(&computed("Resize.sizes", "Resize", "7.0.0"), code);
    fires(&computed("Resize.scales", "Resize", "7.0.0"), code);
}

// -- GPU names the longest-name match used to misread -------------------------------------

#[test]
fn maxwell_and_kepler_parts_inside_wider_names_get_their_own_compute_capability() {
    for (name, cc) in [
        ("NVIDIA GeForce GTX 960M", "5.0"),
        ("GeForce GTX 950M", "5.0"),
        ("GeForce GTX 970", "5.2"),
        ("Quadro K620", "5.0"),
        ("Quadro K2200", "5.0"),
        ("Quadro K6000", "3.5"),
        ("Quadro K4000", "3.0"),
        ("Quadro M1000M", "5.0"),
        ("Quadro M4000", "5.2"),
        ("NVIDIA GeForce GT 730", "3.5"),
        ("GeForce GT 710", "3.5"),
        ("GeForce GT 740", "3.0"),
        ("GeForce GTX 745", "5.0"),
    ] {
        let r = diagnose(&format!("GPU 0: {name} (UUID: GPU-0)\ntorch==2.1.0+cu118\n"));
        let gpus = &r["snapshot"]["nvidia"]["found"]["gpus"]["found"];
        assert_eq!(gpus[0]["compute_capability"], cc, "{name}: {gpus:#}");
    }
}

#[test]
fn tensorrts_template_field_names_the_gpu() {
    let r = diagnose(
        "**TensorRT Version**: 8.6.1.6\n**NVIDIA GPU**: GT 730\n**NVIDIA Driver Version**: 470.223.02\n",
    );
    let gpus = &r["snapshot"]["nvidia"]["found"]["gpus"]["found"];
    assert_eq!(gpus[0]["compute_capability"], "3.5", "{gpus:#}");
    let codes: Vec<&str> =
        r["findings"].as_array().unwrap().iter().filter_map(|f| f["code"].as_str()).collect();
    assert!(codes.contains(&"gpu-not-supported-by-tensorrt"), "{codes:?}");
}

// -- TensorRT 10.8 to 11.1: the opsets and operators of their parsers ---------------------

#[test]
fn tensorrt_10_8_to_11_1_parsers_are_judged_by_their_own_operators_md() {
    let opset = |opset: i64, tensorrt: &str| {
        world().model(10, opset, &[("ai.onnx", "Conv")]).target("tensorrt", tensorrt).judge()
    };
    let code = "model-opset-too-new-for-tensorrt";
    fires(&opset(23, "10.8.0.43"), code);
    quiet(&opset(22, "10.8.0.43"), code);
    fires(&opset(24, "10.13.0.35"), code);
    quiet(&opset(23, "10.12.0.36"), code);
    quiet(&opset(24, "10.14.1.48"), code);
    quiet(&opset(24, "11.1.0.106"), code);

    let op = |name: &str, tensorrt: &str| {
        world().model(10, 20, &[("ai.onnx", name)]).target("tensorrt", tensorrt).judge()
    };
    let code = "model-op-unsupported-by-tensorrt";
    let r = op("Unique", "10.12.0.36");
    fires(&r, code);
    assert!(finding(&r, code)["evidence"].to_string().contains("Unique"), "{:#}", finding(&r, code));
    fires(&op("DFT", "11.1.0.106"), code);
    quiet(&op("STFT", "10.8.0.43"), code);
    quiet(&op("HannWindow", "10.13.0.35"), code);
}

#[test]
fn tensorrt_10_2_and_later_parsers_take_the_operators_their_release_notes_add() {
    let op = |name: &str, tensorrt: &str| {
        world().model(10, 20, &[("ai.onnx", name)]).target("tensorrt", tensorrt).judge()
    };
    let code = "model-op-unsupported-by-tensorrt";
    // 10.4 added the window operators, 10.5 STFT.
    fires(&op("HannWindow", "10.3.0.26"), code);
    quiet(&op("HannWindow", "10.4.0.26"), code);
    fires(&op("STFT", "10.4.0.26"), code);
    quiet(&op("STFT", "10.6.0.26"), code);
    fires(&op("Unique", "10.10.0.31"), code);
    quiet(&op("Conv", "10.2.0.post1"), code);
    // 11.2 added DFT through a cuFFT plugin; 11.3 to 11.5 added no operator.
    fires(&op("DFT", "11.1.0.106"), code);
    quiet(&op("DFT", "11.2.1.2"), code);
    quiet(&op("DFT", "11.4.0.106"), code);
    fires(&op("Unique", "11.4.0.106"), code);
}
