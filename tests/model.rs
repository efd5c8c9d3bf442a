//! `onnx-doctor model`: real models written by the real onnx package, read
//! without loading weights, and judged the way the real onnxruntime judges
//! them.
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::*;

/// Writes the models once per test process into a temp dir.
fn models() -> (tempfile::TempDir, PathBuf) {
    let venv = healthy_venv();
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/make_models.py");
    let out = Command::new(venv.join("bin/python")).arg(&script).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path = dir.path().to_path_buf();
    (dir, path)
}

fn check(model: &Path, args: &[&str]) -> (i32, Value) {
    let out = doctor().args(["model", "--format", "json"]).arg(model).args(args).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

#[test]
fn model_facts_are_read_exactly() {
    let (_keep, dir) = models();
    let (_, r) = check(&dir.join("subgraph.onnx"), &["--target", "onnxruntime==1.31.1"]);
    let m = &r["snapshot"]["model"];
    assert_eq!(m["ir_version"], 8);
    assert_eq!(m["producer"], "onnx-doctor-tests");
    assert_eq!(m["opsets"]["ai.onnx"], 17);
    assert_eq!(m["ops"]["ai.onnx"], serde_json::json!({"If": 1, "Neg": 1, "Relu": 1}));
    assert_eq!(m["subgraphs"], 2);
    assert_eq!(m["inputs"][0]["shape"], serde_json::json!(["batch", "3"]));
    assert_eq!(m["initializers"], 1);

    let (_, r) = check(&dir.join("external.onnx"), &["--target", "onnxruntime==1.31.1"]);
    let m = &r["snapshot"]["model"];
    assert_eq!(
        m["external_data"],
        serde_json::json!([{"location": "external.data", "exists": true, "tensors": 1}])
    );
    assert_eq!(m["initializer_bytes"], 12);

    let (_, r) = check(&dir.join("aten.onnx"), &["--target", "onnxruntime==1.31.1"]);
    assert_eq!(r["snapshot"]["model"]["ops"]["org.pytorch.aten"]["ATen"], 1);

    // Shape operands not held as constants, with the graph inputs that feed them.
    let (_, r) = check(&dir.join("computed_shapes_opset13.onnx"), &["--target", "tensorrt==10.7.0"]);
    assert_eq!(
        r["snapshot"]["model"]["shape_operands"],
        serde_json::json!([
            {"operand": "Resize.scales", "nodes": 1, "first": "/up/Resize"},
            {"operand": "Reshape.shape", "nodes": 1, "first": "/head/Reshape", "inputs": ["new_shape"]}
        ])
    );
    // The overview says so too.
    let out = doctor()
        .args(["model", "--target", "tensorrt==10.7.0"])
        .arg(dir.join("computed_shapes_opset13.onnx"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("run-time shape operands  Resize.scales (/up/Resize), Reshape.shape (/head/Reshape)"),
        "{text}"
    );
    // Constants, initializers included, are not; nor a local function's
    // parameters, bound where it is called.
    for model in ["int64_weights.onnx", "function_reshape.onnx"] {
        let (_, r) = check(&dir.join(model), &["--target", "tensorrt==10.7.0"]);
        assert!(
            r["snapshot"]["model"].get("shape_operands").is_none(),
            "{model}: {:#}",
            r["snapshot"]["model"]
        );
    }
}

#[test]
fn each_kind_of_model_gets_its_finding() {
    let (_keep, dir) = models();
    let codes = |model: &str, targets: &[&str]| {
        let mut args = Vec::new();
        for t in targets {
            args.extend(["--target", t]);
        }
        let (_, r) = check(&dir.join(model), &args);
        finding_codes(&r)
    };
    assert_eq!(codes("ir8_opset17.onnx", &["onnxruntime==1.17.1"]), Vec::<String>::new());
    assert_eq!(
        codes("ir10_opset21.onnx", &["onnxruntime==1.17.1"]),
        vec!["model-ir-too-new-for-onnxruntime", "model-opset-too-new-for-onnxruntime"]
    );
    assert_eq!(codes("ir13_opset26.onnx", &["onnxruntime==1.31.1"]), Vec::<String>::new());
    assert_eq!(
        codes("ir13_opset27.onnx", &["onnxruntime==1.31.1"]),
        vec!["model-opset-too-new-for-onnxruntime"]
    );
    assert_eq!(codes("aten.onnx", &["onnxruntime==1.31.1"]), vec!["model-has-aten-fallback-ops"]);
    assert_eq!(codes("contrib.onnx", &["onnxruntime==1.31.1"]), Vec::<String>::new());
    // Every test model has a dynamic batch: TensorRT targets get a profile for it.
    let profile = "model-dynamic-inputs-need-tensorrt-profile";
    assert_eq!(codes("contrib.onnx", &["tensorrt==10.15.1"]), vec!["model-contrib-ops-on-tensorrt", profile]);
    assert_eq!(codes("custom.onnx", &["onnxruntime==1.31.1"]), vec!["model-custom-operator-domain"]);
    assert_eq!(
        codes("int64_weights.onnx", &["tensorrt==8.6.1"]),
        vec![profile, "model-int64-weights-on-tensorrt"]
    );
    assert_eq!(
        codes("ir10_opset21.onnx", &["tensorrt==8.6.1"]),
        vec!["model-opset-too-new-for-tensorrt", profile]
    );
    assert_eq!(codes("upsample.onnx", &["onnxruntime==1.31.1"]), Vec::<String>::new());
    // onnxruntime loads a Constant node as an initializer: no kernel is needed.
    assert_eq!(codes("constant_opset17.onnx", &["onnxruntime==1.17.1"]), Vec::<String>::new());
    // Resize scales computed at run time: TensorRT's parser takes them from 8.4 on.
    let shape_input = "model-shape-tensor-inputs-need-profile-values";
    assert_eq!(
        codes("computed_shapes_opset13.onnx", &["tensorrt==8.2.5"]),
        vec!["model-shape-computed-for-old-tensorrt", profile, shape_input]
    );
    assert_eq!(codes("computed_shapes_opset13.onnx", &["tensorrt==8.6.1"]), vec![profile, shape_input]);

    let fix = {
        let (_, r) = check(&dir.join("ir10_opset21.onnx"), &["--target", "onnxruntime==1.17.1"]);
        finding(&r, "model-opset-too-new-for-onnxruntime")["fixes"][0].as_str().unwrap().to_string()
    };
    assert_eq!(fix, "torch.onnx.export(..., opset_version=20)");
}

/// What TensorRT 6 refused in the torch 1.x notes is told from the model,
/// before anyone builds an engine; TensorRT 7 takes both.
#[test]
fn the_model_check_knows_what_the_old_tensorrt_parsers_refused() {
    let (_keep, dir) = models();
    let model = dir.join("bilinear_size_gather_opset9.onnx");
    let (code, r) = check(&model, &["--target", "tensorrt==6.0.1"]);
    assert_eq!(code, 1);
    let codes = finding_codes(&r);
    for c in ["model-linear-resize-on-old-tensorrt", "model-gather-on-shape-on-old-tensorrt"] {
        assert!(codes.contains(&c.to_string()), "{codes:?}");
    }
    let fixes = finding(&r, "model-linear-resize-on-old-tensorrt")["fixes"].to_string();
    assert!(fixes.contains("mode='nearest'"), "{fixes}");
    let (_, r) = check(&model, &["--target", "tensorrt==7.1.3"]);
    let codes = finding_codes(&r);
    assert!(!codes.iter().any(|c| c.contains("linear-resize") || c.contains("gather-on-shape")), "{codes:?}");
    // The ATen node names what it stands for; MaxUnpool gets its note.
    let (_, r) = check(&dir.join("aten.onnx"), &["--target", "onnxruntime==1.31.1"]);
    assert!(finding(&r, "model-has-aten-fallback-ops")["fixes"].to_string().contains("stand for cumsum"));
    let (code, r) = check(&dir.join("maxunpool_opset11.onnx"), &["--target", "onnxruntime==1.31.1"]);
    assert_eq!((code, finding_codes(&r)), (0, vec!["model-max-unpool-indices".to_string()]));
}

#[test]
fn missing_external_data_is_an_error() {
    let (_keep, dir) = models();
    std::fs::rename(dir.join("external.data"), dir.join("moved.data")).unwrap();
    let (code, r) = check(&dir.join("external.onnx"), &["--target", "onnxruntime==1.31.1"]);
    assert_eq!(code, 1);
    finding(&r, "model-external-data-missing");
}

/// What the real onnxruntime does with each model.
fn onnxruntime_loads(venv: &Path, dir: &Path) -> Vec<(String, bool)> {
    let script = "import sys, os, onnxruntime as ort\n\
        for f in sorted(os.listdir(sys.argv[1])):\n\
        \x20   if not f.endswith('.onnx'): continue\n\
        \x20   try:\n\
        \x20       ort.InferenceSession(os.path.join(sys.argv[1], f), providers=['CPUExecutionProvider']); print(f, 1)\n\
        \x20   except Exception: print(f, 0)\n";
    let out = Command::new(venv.join("bin/python")).args(["-c", script]).arg(dir).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (f, ok) = l.split_once(' ').unwrap();
            (f.to_string(), ok == "1")
        })
        .collect()
}

#[test]
fn the_doctor_agrees_with_the_real_onnxruntime_on_every_generated_model() {
    let (_keep, dir) = models();
    let venv = healthy_venv();
    let verdicts = onnxruntime_loads(&venv, &dir);
    assert!(verdicts.len() >= 10, "{verdicts:?}");
    for (file, loads) in verdicts {
        // Judged against the onnxruntime installed in that environment.
        let out = doctor()
            .args(["model", "--format", "json", "--fast", "--python"])
            .arg(venv.join("bin/python"))
            .arg(dir.join(&file))
            .output()
            .unwrap();
        let r = json(&out.stdout);
        let doctor_says_loads = !r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"].as_str().unwrap().starts_with("model-") && f["severity"] != "info");
        assert_eq!(
            doctor_says_loads,
            loads,
            "{file}: onnxruntime {} it, the doctor said {:#}",
            if loads { "loads" } else { "refuses" },
            r["findings"]
        );
    }
}

#[test]
fn the_installed_onnxruntime_is_asked_to_load_the_model_and_its_answer_wins() {
    let (_keep, dir) = models();
    let venv = healthy_venv();
    let verdicts = onnxruntime_loads(&venv, &dir);
    assert!(verdicts.iter().any(|(_, loads)| !loads), "{verdicts:?}");
    for (file, loads) in verdicts {
        let out = doctor()
            .args(["model", "--format", "json", "--nvml-lib", "/nonexistent.so", "--python"])
            .arg(venv.join("bin/python"))
            .arg(dir.join(&file))
            .output()
            .unwrap();
        let r = json(&out.stdout);
        let ort = import(&r, "onnxruntime").unwrap();
        let trial = ort["facts"]["trial_model"].as_str().unwrap_or_else(|| panic!("{file}: {ort:#}"));
        assert_eq!(trial == "loads", loads, "{file}: {trial}");
        let refused =
            r["findings"].as_array().unwrap().iter().find(|f| f["code"] == "onnxruntime-refuses-model");
        assert_eq!(refused.is_some(), !loads, "{file}: {:#}", r["findings"]);
        if let Some(f) = refused {
            // The runtime's own words, without its "Load model from … failed:" preamble.
            let message = f["message"].as_str().unwrap();
            assert!(message.contains(&file) && !message.contains("Load model from"), "{message}");
        }
    }
    // --no-trials: the versions are read from disk, nothing is loaded.
    let out = doctor()
        .args(["model", "--format", "json", "--no-trials", "--python"])
        .arg(venv.join("bin/python"))
        .arg(dir.join("subgraph.onnx"))
        .output()
        .unwrap();
    assert_eq!(json(&out.stdout)["snapshot"]["mode"], "fast");
}

#[test]
fn a_trial_that_loads_what_the_matrix_refuses_replaces_the_prediction() {
    // The matrix says onnxruntime 1.20.1 loads at most IR 10.
    let mut world = support::world::World::new();
    world = world.dists(&[("onnxruntime", "1.20.1")]).model(11, 20, &[("ai.onnx", "Conv")]);
    let report =
        judge(&world.clone().imported("onnxruntime", serde_json::json!({"trial_model": "refused: x"})));
    assert!(finding_codes(&report).contains(&"model-ir-too-new-for-onnxruntime".to_string()), "{report:#}");
    let report = judge(&world.imported("onnxruntime", serde_json::json!({"trial_model": "loads"})));
    let codes = finding_codes(&report);
    assert!(codes.contains(&"onnxruntime-loads-model-the-matrix-refused".to_string()), "{codes:?}");
    assert!(!codes.contains(&"model-ir-too-new-for-onnxruntime".to_string()), "{codes:?}");
}

#[test]
fn truncated_and_bit_flipped_real_models_are_errors_not_crashes() {
    let (_keep, dir) = models();
    let bytes = std::fs::read(dir.join("subgraph.onnx")).unwrap();
    for cut in 0..bytes.len() {
        let _ = onnx_doctor::model::read_bytes(Path::new("m.onnx"), &bytes[..cut]);
    }
    for i in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[i / 8] ^= 1 << (i % 8);
        let _ = onnx_doctor::model::read_bytes(Path::new("m.onnx"), &b);
    }
    let bad = dir.join("bad.onnx");
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let out = doctor().args(["model"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an ONNX model"));
}

#[test]
fn a_malformed_target_is_a_usage_error() {
    let (_keep, dir) = models();
    let out = doctor()
        .args(["model"])
        .arg(dir.join("ir8_opset17.onnx"))
        .args(["--target", "onnxruntime=1.17"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NAME==VERSION"));
}

#[test]
fn a_model_is_told_the_oldest_runtimes_that_take_it_and_why() {
    let needs = |world: support::world::World| {
        let report = judge(&world);
        report["model_needs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (n["package"].as_str().unwrap().to_string(), n["at_least"].clone(), n["because"].clone())
            })
            .collect::<Vec<_>>()
    };
    let w = support::world::World::new;
    // GridSample came to TensorRT's parser after the opset 16 it needs did.
    let grid = needs(w().model(8, 16, &[("ai.onnx", "GridSample")]));
    assert!(grid.contains(&("onnxruntime".into(), "1.11".into(), "opset 16".into())), "{grid:?}");
    assert!(grid.contains(&("tensorrt".into(), "8.5".into(), "operator GridSample".into())), "{grid:?}");
    assert!(grid.contains(&("onnx".into(), "1.10".into(), "IR 8".into())), "{grid:?}");
    // Resize scales computed at run time raise TensorRT's floor to 8.4.
    let computed = needs(w().model(8, 13, &[("ai.onnx", "Resize")]).model_set(
        "shape_operands",
        serde_json::json!([{"operand": "Resize.scales", "nodes": 1, "first": "r"}]),
    ));
    assert!(
        computed.contains(&("tensorrt".into(), "8.4".into(), "Resize.scales computed at run time".into())),
        "{computed:?}"
    );
    // The IR version can set the floor instead of the opset.
    let ir = needs(w().model(10, 13, &[("ai.onnx", "Relu")]));
    assert!(ir.contains(&("onnxruntime".into(), "1.18".into(), "IR 10".into())), "{ir:?}");
    // Beyond every release the matrix knows: said, not guessed.
    let future = needs(w().model(99, 99, &[("ai.onnx", "Relu")]));
    assert!(future.iter().all(|(_, at, _)| at.is_null()), "{future:?}");
}

#[test]
fn the_cuda_provider_is_judged_per_release_and_the_fix_names_the_first_release_with_kernels() {
    let w = support::world::World::new;
    let cuda = |world: support::world::World| {
        let report = judge(&world);
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "model-op-without-cuda-kernel")
            .cloned()
    };
    // GridSample-16: a CPU kernel from 1.11, a CUDA one from 1.18.
    let f = cuda(w().model(8, 16, &[("ai.onnx", "GridSample")]).target("onnxruntime", "1.12.1")).unwrap();
    assert!(f["message"].as_str().unwrap().contains("GridSample-16"), "{f:#}");
    assert!(
        f["fixes"][0]
            .as_str()
            .unwrap()
            .starts_with("python -m pip install --upgrade \"onnxruntime-gpu>=1.18\"")
    );
    assert!(cuda(w().model(8, 16, &[("ai.onnx", "GridSample")]).target("onnxruntime", "1.18.1")).is_none());
    // Unique has no CUDA kernel in any release read: no upgrade is offered.
    let f = cuda(w().model(8, 16, &[("ai.onnx", "Unique")]).target("onnxruntime", "1.22.0")).unwrap();
    assert!(f["fixes"].as_array().unwrap().iter().all(|x| !x.as_str().unwrap().contains("pip")), "{f:#}");
    // NonMaxSuppression's kernels declare no type constraint, so the
    // document has no row for them; the CUDA provider has them since 1.10.
    assert!(
        cuda(w().model(7, 12, &[("ai.onnx", "NonMaxSuppression")]).target("onnxruntime", "1.10.0")).is_none()
    );
}

/// The version of onnxruntime installed in `venv`.
fn onnxruntime_version(venv: &Path) -> String {
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", "import onnxruntime; print(onnxruntime.__version__)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn operator_kernels_are_judged_per_release_as_the_real_releases_judge_them() {
    let (_keep, dir) = models();
    // DeformConv-19 got its CPU kernel in 1.25: the release before refuses it.
    for release in ["1.24.4", "1.25.1"] {
        let venv = onnxruntime_venv(release);
        assert_eq!(onnxruntime_version(&venv), release);
        for (file, loads) in onnxruntime_loads(&venv, &dir) {
            let target = format!("onnxruntime=={release}");
            let (_, r) = check(&dir.join(&file), &["--target", &target]);
            let refused = r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"].as_str().unwrap().starts_with("model-") && f["severity"] != "info");
            assert_eq!(
                !refused,
                loads,
                "{file} on {release}: the real release {}; {:#}",
                if loads { "loads it" } else { "refuses it" },
                r["findings"]
            );
        }
    }
    let (_, r) = check(&dir.join("deformconv_opset19.onnx"), &["--target", "onnxruntime==1.24.4"]);
    let f = finding(&r, "model-op-without-onnxruntime-kernel");
    assert!(f["message"].as_str().unwrap().contains("DeformConv-19"), "{f:#}");
    assert_eq!(f["fixes"][0], "python -m pip install --upgrade \"onnxruntime>=1.25\"");
    let needs = &r["model_needs"][0];
    assert_eq!(
        (needs["at_least"].as_str(), needs["because"].as_str()),
        (Some("1.25"), Some("operator DeformConv-19"))
    );
    // Mish-18 has no kernel in any release, but a function body onnxruntime runs.
    let (_, r) = check(&dir.join("mish_opset18.onnx"), &["--target", "onnxruntime==1.24.4"]);
    assert_eq!(finding_codes(&r), Vec::<String>::new());
}

#[test]
fn a_model_with_dynamic_inputs_gets_a_tensorrt_profile_for_them() {
    let (_keep, dir) = models();
    let (_, r) = check(&dir.join("subgraph.onnx"), &["--target", "tensorrt==10.0.1"]);
    let f = finding(&r, "model-dynamic-inputs-need-tensorrt-profile");
    let model = dir.join("subgraph.onnx");
    assert_eq!(
        f["fixes"][0].as_str().unwrap(),
        format!(
            "trtexec --onnx={} --minShapes=x:1x3 --optShapes=x:1x3 --maxShapes=x:16x3 --saveEngine=model.engine",
            model.display()
        )
    );
    assert!(f["fixes"][1].as_str().unwrap().contains("profile.set_shape(\"x\", (1, 3), (1, 3), (16, 3))"));
    // Against onnxruntime alone nothing needs a profile.
    let (_, r) = check(&model, &["--target", "onnxruntime==1.31.1"]);
    assert_eq!(finding_codes(&r), Vec::<String>::new());
    // TensorRT 5 has no dynamic shapes at all.
    let (_, r) = check(&model, &["--target", "tensorrt==5.1.5"]);
    assert!(finding_codes(&r).contains(&"model-dynamic-inputs-on-implicit-batch-tensorrt".to_string()));
}

/// The release line before `1.18`: `1.17`.
fn line_before(line: &str) -> Option<String> {
    let (major, minor) = line.split_once('.')?;
    let minor: u32 = minor.parse().ok()?;
    Some(format!("{major}.{}", minor.checked_sub(1)?))
}

#[test]
fn what_the_real_torch_exports_loads_from_the_release_the_doctor_names_and_not_before() {
    let venv = torch_export_venv();
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export_models.py");
    let out = Command::new(venv.join("bin/python")).arg(&script).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut floors = std::collections::BTreeMap::<String, Vec<String>>::new();
    for name in ["grid_sample", "layer_norm", "adaptive_pool", "attention", "upsample", "encoder", "lstm"] {
        let model = dir.path().join(format!("{name}.onnx"));
        let (_, r) = check(&model, &["--target", "tensorrt==10.15.1"]);
        // Every input has the dynamic batch it was exported with, and
        // TensorRT gets a profile for it.
        let inputs = r["snapshot"]["model"]["inputs"].as_array().unwrap();
        assert!(inputs.iter().all(|i| i["shape"][0] == "batch"), "{name}: {inputs:#?}");
        let profile = finding(&r, "model-dynamic-inputs-need-tensorrt-profile");
        assert!(profile["fixes"][0].as_str().unwrap().contains("--minShapes="), "{profile:#}");
        let needs = r["model_needs"].as_array().unwrap();
        let ort = needs.iter().find(|n| n["package"] == "onnxruntime").unwrap();
        let floor = ort["at_least"].as_str().unwrap_or_else(|| panic!("{name}: {needs:#?}")).to_string();
        floors.entry(floor).or_default().push(name.to_string());
    }
    for (floor, names) in floors {
        let at = onnxruntime_venv(&format!("{floor}.*"));
        let loads: std::collections::BTreeMap<String, bool> =
            onnxruntime_loads(&at, dir.path()).into_iter().collect();
        for name in &names {
            assert!(
                loads[&format!("{name}.onnx")],
                "{name}: the doctor says onnxruntime {floor} loads it; it does not"
            );
        }
        let Some(before) = line_before(&floor) else { continue };
        let refused = onnxruntime_venv(&format!("{before}.*"));
        let loads: std::collections::BTreeMap<String, bool> =
            onnxruntime_loads(&refused, dir.path()).into_iter().collect();
        for name in &names {
            assert!(
                !loads[&format!("{name}.onnx")],
                "{name}: the doctor says it needs {floor}; {before} loads it"
            );
        }
    }
}

/// The text report of `world`, and its exit code.
fn text_of(world: &support::world::World) -> (i32, String) {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("snapshot.json");
    std::fs::write(&file, world.0.to_string()).unwrap();
    let out = doctor().arg("--snapshot").arg(&file).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn a_model_with_no_runtime_to_load_it_is_not_called_healthy() {
    let world =
        support::world::World::new().dists(&[("numpy", "2.1.0")]).model(8, 17, &[("ai.onnx", "Relu")]);
    let (code, text) = text_of(&world);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("model not tried") && !text.contains("healthy"), "{text}");
    // A target to judge it by, or an installed onnxruntime, answers it.
    let (code, text) = text_of(&world.clone().target("onnxruntime", "1.17.1"));
    assert_eq!(code, 0, "{text}");
    let installed = world.dists(&[("onnxruntime", "1.20.1")]);
    let (code, text) =
        text_of(&installed.clone().imported("onnxruntime", serde_json::json!({"trial_model": "loads"})));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("tried: onnxruntime 1.20.1 loads it"), "the trial's answer is said:\n{text}");
}
