//! Every fact rule and every builtin check of the embedded matrix fires on
//! a snapshot made for it, its fixes agree with the rest of the matrix, and
//! it stays quiet on its closest neighbour: one version across the
//! boundary, or the one fact that makes the difference.
//! A rule added to the matrix without a case here fails
//! `every_rule_has_a_case` (error signatures have theirs in signatures.rs).

use onnx_doctor::check::check;
use onnx_doctor::matrix::{Matrix, RuleKind};
use onnx_doctor::snapshot::Snapshot;
use serde_json::json;

mod support;
use support::cases::cases;
use support::world::World;

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

/// torch and TensorRT load their own pip wheels' libraries; a copy there is
/// not a library the loader misses.
#[test]
fn packages_that_load_their_wheels_themselves_are_not_blamed_for_it() {
    let m = matrix();
    let torch = World::new().dist("torch", "2.15.0").link_in_wheels("torch-cuda", &["libcublas.so.13"]);
    assert!(!codes(&torch, &m).0.contains(&"torch-cuda-library-cannot-load".to_string()));
    let trt =
        World::new().dist("tensorrt-cu13", "10.14.1.48").link_in_wheels("tensorrt", &["libcudart.so.13"]);
    assert!(!codes(&trt, &m).0.contains(&"tensorrt-library-cannot-load".to_string()));
    // Elsewhere on disk (not this environment's wheels) they are.
    let elsewhere = World::new().dist("torch", "2.15.0").link("torch-cuda", &["libcublas.so.13"]);
    assert!(codes(&elsewhere, &m).0.contains(&"torch-cuda-library-cannot-load".to_string()));
}

#[test]
fn a_trial_that_refused_is_reported_for_releases_the_matrix_does_not_know() {
    let m = matrix();
    let world = World::new()
        .dists(&[("onnx", "1.99.0"), ("onnxruntime", "1.99.0")])
        .imported("onnx", json!({"ir_version": 99, "max_opset": 99}))
        .imported("onnxruntime", json!({"trial_onnx_default": "refused: Unsupported model IR version: 99"}));
    let j = judge(&world, &m);
    let f = j.findings.iter().find(|f| f.code == "onnxruntime-refuses-onnx-default");
    let f = f.unwrap_or_else(|| panic!("no trial finding: {:?}", j.findings));
    // No row to name an onnx for: the fixes that remain need none.
    assert!(f.fixes.iter().all(|x| !x.contains("{row")), "{:?}", f.fixes);
    assert!(!f.fixes.is_empty());
}

#[test]
fn a_check_with_trials_and_one_without_plan_alike() {
    let m = matrix();
    let steps = |w: &World| judge(w, &m).plans.iter().flat_map(|p| p.steps.clone()).collect::<Vec<_>>();
    let refused =
        |what: &str| json!({what: "refused: Unsupported model IR version: 14, max supported IR version: 13"});
    // onnx's defaults, judged by the matrix or by onnxruntime itself.
    let onnx = || {
        World::new()
            .dists(&[("onnx", "1.23.1"), ("onnxruntime", "1.30.0")])
            .imported("onnx", json!({"ir_version": 14, "max_opset": 28}))
    };
    let (static_plan, trial_plan) =
        (steps(&onnx()), steps(&onnx().imported("onnxruntime", refused("trial_onnx_default"))));
    assert!(!static_plan.is_empty());
    assert_eq!(static_plan, trial_plan);
    // torch's export defaults.
    let torch = || {
        World::new()
            .dists(&[("torch", "2.9.0"), ("onnxruntime", "1.17.3")])
            .imported("torch", json!({"export_ir": 10, "export_opset": 18}))
    };
    let (static_plan, trial_plan) =
        (steps(&torch()), steps(&torch().imported("onnxruntime", refused("trial_torch_export"))));
    assert!(!static_plan.is_empty());
    assert_eq!(static_plan, trial_plan);
}
