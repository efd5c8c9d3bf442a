//! The knowledge base checked as data: rows do not shadow each other, the
//! matrix is not dated in the future, and the official pairings the matrix
//! itself records raise no warning or error (no false alarms on known-good
//! stacks), and tables that describe the same thing do not contradict.

use std::str::FromStr;

use onnx_doctor::check::check;
use onnx_doctor::matrix::{Matrix, Severity};
use onnx_doctor::snapshot::Snapshot;
use pep440_rs::VersionSpecifiers;
use serde_json::json;

fn matrix() -> Matrix {
    Matrix::load(&[]).expect("the embedded matrix loads")
}

/// The lowest version a specifier set admits, as text: `==2.6.*` → 2.6,
/// `>=2.1,<2.6` → 2.1, `==2.7.1` → 2.7.1.
fn lowest(spec: &str) -> String {
    let specs = VersionSpecifiers::from_str(spec).unwrap();
    let v = specs
        .iter()
        .find(|s| matches!(s.operator().to_string().as_str(), "==" | ">=" | "==*" | "~="))
        .unwrap_or_else(|| panic!("no lower bound in {spec}"));
    v.version().to_string()
}

#[test]
fn no_table_row_is_shadowed_by_an_earlier_one() {
    let m = matrix();
    for table in m.tables.values() {
        for (i, row) in table.rows.iter().enumerate() {
            let probe = onnx_doctor::version::Ver::new(lowest(&row.versions));
            for earlier in &table.rows[..i] {
                // A table of several packages' releases keys each row by its `package` too.
                let same_match = table
                    .matches
                    .iter()
                    .map(|(_, col)| col.as_str())
                    .chain(["package"])
                    .all(|col| earlier.values.get(col) == row.values.get(col));
                assert!(
                    !(same_match && earlier.spec.contains(&probe)),
                    "table {}: the row at {} ({}) is shadowed by the row at {} ({})",
                    table.name,
                    row.origin,
                    row.versions,
                    earlier.origin,
                    earlier.versions
                );
            }
        }
    }
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date (Howard Hinnant's algorithm).
fn days_since_epoch(date: &str) -> i64 {
    let parts: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    assert_eq!(parts.len(), 3, "{date} is not a date");
    let (y, mo, d) = (parts[0], parts[1], parts[2]);
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (mo + if mo > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn today() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 / 86_400
}

#[test]
fn the_matrix_is_not_dated_in_the_future() {
    let m = matrix();
    assert!(days_since_epoch(&m.version) <= today(), "matrix dated {} is in the future", m.version);
}

#[test]
fn no_rule_is_known_since_a_date_in_the_future_or_after_the_matrix() {
    let m = matrix();
    let mut dated = 0;
    for rule in &m.rules {
        let Some(since) = &rule.since else { continue };
        dated += 1;
        let day = days_since_epoch(since);
        assert!(day <= today(), "{} is known since {since}, in the future", rule.code);
        assert!(
            day <= days_since_epoch(&m.version),
            "{} is known since {since}, after the matrix date {}",
            rule.code,
            m.version
        );
        // Nothing in this stack predates 2015.
        assert!(day >= days_since_epoch("2015-01-01"), "{} is known since {since}?", rule.code);
    }
    assert!(dated >= 38, "only {dated} rules carry a since date");
}

#[test]
fn every_rule_names_a_source_and_every_source_is_a_url() {
    for rule in matrix().rules {
        assert!(!rule.sources.is_empty(), "{}", rule.code);
        for s in &rule.sources {
            assert!(s.starts_with("https://") || s.starts_with("http://"), "{}: {s}", rule.code);
        }
    }
}

fn snapshot(python: &str, dists: &[(&str, String)], driver: &str, cc: &str) -> Snapshot {
    let distributions: Vec<_> = dists
        .iter()
        .map(|(n, v)| json!({"name": n, "version": v, "location": "/env/lib/python3/site-packages"}))
        .collect();
    serde_json::from_value(json!({
        "schema_version": 1,
        "probed_by": "known-good stacks",
        "mode": "fast",
        "system": {"found": {"os": {"found": "Ubuntu 22.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                             "glibc": {"found": "2.35"}, "container": null, "wsl": false}},
        "pythons": [{"executable": "/env/bin/python", "source": "flag", "version": {"found": python}, "kind": "venv",
                     "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [],
                     "distributions": {"found": distributions}, "imports": []}],
        "nvidia": {"found": {"nvml": {"state": "ok"},
                             "driver": {"found": {"version": driver, "max_cuda": null, "source": "nvml"}},
                             "kernel_module": {"found": driver},
                             "gpus": {"found": [{"index": 0, "name": "Test GPU", "compute_capability": cc,
                                                 "architecture": null, "memory_mib": null, "uuid": null}]}}}
    }))
    .unwrap()
}

#[test]
fn every_onnxruntime_gpu_build_on_its_minimum_driver_raises_no_error() {
    let m = matrix();
    for row in &m.tables["onnxruntime-gpu-builds"].rows {
        let ort = lowest(&row.versions);
        let ort_v = onnx_doctor::version::Ver::new(ort.as_str());
        let rel = m.tables["onnxruntime-releases"].rows.iter().find(|r| r.spec.contains(&ort_v)).unwrap();
        let python = lowest(&rel.values["python"]);
        let snap = snapshot(
            &python,
            &[("onnxruntime-gpu", ort.clone()), ("numpy", "1.26.4".into())],
            &row.values["min_driver"],
            "8.6",
        );
        let j = check(&snap, &m);
        let errors: Vec<_> =
            j.findings.iter().filter(|f| f.severity == Severity::Error).map(|f| &f.message).collect();
        assert!(errors.is_empty(), "onnxruntime-gpu {ort}: {errors:#?}");
    }
}

#[test]
fn torch_export_opsets_agree_with_what_onnxruntime_implements() {
    // torch-releases says which onnxruntime loads torch's default export
    // opset; onnxruntime-releases says which opset each onnxruntime
    // implements. The two tables must not contradict each other. The floor
    // is the first onnxruntime implementing the opset, or a later one where
    // a newer IR version starts: from 2.9 the default (dynamo) exporter
    // writes IR 10 at any opset.
    let m = matrix();
    let ort = &m.tables["onnxruntime-releases"];
    let ir = |i: usize| ort.rows[i].values["max_ir"].parse::<u32>().unwrap();
    for row in &m.tables["torch-releases"].rows {
        let opset: u32 = row.values["onnx_opset"].parse().unwrap();
        let max: u32 = row.values["onnx_max_opset"].parse().unwrap();
        assert!(opset <= max, "torch {}: default opset {opset} above its maximum {max}", row.versions);
        let first = ort
            .rows
            .iter()
            .position(|r| r.values["max_opset"].parse::<u32>().unwrap() >= opset)
            .unwrap_or_else(|| panic!("no onnxruntime implements opset {opset}"));
        let floor = lowest(&row.values["onnxruntime"]);
        let at = ort.rows.iter().position(|r| lowest(&r.versions) == floor).unwrap_or_else(|| {
            panic!("torch {}: onnxruntime {floor} starts no row of onnxruntime-releases", row.versions)
        });
        assert!(
            at >= first,
            "torch {}: opset {opset} is first implemented by onnxruntime {}, not {floor}",
            row.versions,
            ort.rows[first].versions
        );
        assert!(
            at == first || ir(at - 1) < ir(at),
            "torch {}: onnxruntime {floor} is later than {}, the first implementing opset {opset}, \
             but loads no newer IR version than the release before it",
            row.versions,
            ort.rows[first].versions
        );
    }
}

/// The oldest onnxruntime (GPU build for `cuda_major`, else CPU) that is
/// at least `min` and ships for `python`, with the onnx of its time: the
/// newest onnx whose defaults it loads and that ships for `python`.
fn runtime_of_its_time(
    m: &Matrix,
    python: &str,
    min: &str,
    cuda_major: Option<&str>,
) -> Vec<(&'static str, String)> {
    let v = |s: &str| onnx_doctor::version::Ver::new(s);
    let contains = |spec: &str, version: &str| {
        VersionSpecifiers::from_str(spec).unwrap().contains(v(version).parsed().unwrap())
    };
    let releases = &m.tables["onnxruntime-releases"];
    let gpu = &m.tables["onnxruntime-gpu-builds"];
    let mut candidates: Vec<String> =
        releases.rows.iter().chain(&gpu.rows).map(|r| lowest(&r.versions)).collect();
    candidates.push(lowest(min));
    candidates.sort_by(|a, b| v(a).parsed().cmp(&v(b).parsed()));
    for ort in candidates {
        if !contains(min, &ort) {
            continue;
        }
        let Some(rel) = releases.rows.iter().find(|r| r.spec.contains(&v(&ort))) else { continue };
        if !contains(&rel.values["python"], python) {
            continue;
        }
        let dist = match cuda_major {
            Some(major) => match gpu.rows.iter().find(|r| r.spec.contains(&v(&ort))) {
                Some(g) if g.values["cuda"] == major => "onnxruntime-gpu",
                _ => continue,
            },
            None => "onnxruntime",
        };
        let onnx = m.tables["onnx-releases"].rows.iter().rev().find(|o| {
            contains(&rel.values["onnx"], &lowest(&o.versions)) && contains(&o.values["python"], python)
        });
        let mut out = vec![(dist, ort.clone())];
        if let Some(o) = onnx {
            let protobuf = if contains(&o.values["protobuf"], "3.20.1") {
                "3.20.1".to_string()
            } else {
                lowest(&o.values["protobuf"])
            };
            out.push(("onnx", lowest(&o.versions)));
            out.push(("protobuf", protobuf));
        }
        return out;
    }
    Vec::new()
}

#[test]
fn every_torch_release_with_the_onnx_stack_of_its_time_raises_no_warning() {
    // torch + its torchvision + the minimum driver of its CUDA + a GPU it
    // compiles for + the oldest onnxruntime(-gpu) of the same CUDA major that
    // loads torch's default export opset + the newest onnx that onnxruntime
    // loads: the stack a user following the official tables ends up with.
    let m = matrix();
    let releases = &m.tables["torch-releases"];
    let cuda = &m.tables["cuda-releases"];
    let mut checked = 0;
    for row in &m.tables["torch-cuda-arch"].rows {
        let torch = lowest(&row.versions);
        let torch_v = onnx_doctor::version::Ver::new(torch.as_str());
        let cuda_version = lowest(&row.values["cuda"]);
        let label = format!("cu{}", cuda_version.replace('.', ""));
        let rel = releases.rows.iter().find(|r| r.spec.contains(&torch_v)).expect("torch release row");
        let cuda_row = cuda
            .rows
            .iter()
            .find(|r| r.spec.contains(&onnx_doctor::version::Ver::new(cuda_version.as_str())))
            .expect("cuda release row");
        let python = lowest(&rel.values["python"]);
        let major = cuda_version.split('.').next().unwrap();
        let gpu_major = (major != "9" && major != "10").then_some(major);
        // Before onnxruntime-gpu's table starts, the CPU package of its time.
        let mut stack = runtime_of_its_time(&m, &python, &rel.values["onnxruntime"], gpu_major);
        if stack.is_empty() {
            stack = runtime_of_its_time(&m, &python, &rel.values["onnxruntime"], None);
        }
        assert!(!stack.is_empty(), "torch {torch}+{label}: no onnxruntime of its time on Python {python}");
        // numpy 2 only where every compiled package of the stack supports it.
        let older = |name: &str, than: &[u64]| {
            stack
                .iter()
                .any(|(n, v)| *n == name && onnx_doctor::version::Ver::new(v.as_str()).release() < than)
        };
        let ort_old =
            older("onnxruntime-gpu", &[1, 19]) || older("onnxruntime", &[1, 19]) || older("onnx", &[1, 17]);
        let numpy = if torch_v.release() < [2, 3].as_slice() || ort_old { "1.26.4" } else { "2.1.0" };
        let gpu = onnx_doctor::matrix::Arch::parse_list(&row.values["arch_list"])
            .unwrap()
            .into_iter()
            .filter(|a| !a.ptx)
            .map(|a| format!("{}.{}", a.major, a.minor))
            .next_back()
            .unwrap();
        let mut dists = vec![
            ("torch", format!("{torch}+{label}")),
            ("torchvision", format!("{}+{label}", lowest(&rel.values["torchvision"]))),
            ("numpy", numpy.to_string()),
        ];
        dists.extend(stack.iter().map(|(n, v)| (*n, v.clone())));
        let snap = snapshot(&python, &dists, &cuda_row.values["toolkit_driver"], &gpu);
        let j = check(&snap, &m);
        let bad: Vec<_> =
            j.findings.iter().filter(|f| f.severity >= Severity::Warning).map(|f| &f.message).collect();
        assert!(
            bad.is_empty(),
            "{dists:?}, python {python}, driver {}, GPU {gpu}: {bad:#?}",
            cuda_row.values["toolkit_driver"]
        );
        checked += 1;
    }
    assert!(checked >= 48, "{checked}");
}
