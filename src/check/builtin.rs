//! Checks Rust performs itself, worded by the matrix's `builtin` rules.
//!
//! An import failure is always a finding, with the exception text, even when
//! no rule explains it. When a data rule already explains it (a finding on
//! the same component in the same environment), the exception text is added
//! to that finding as evidence instead of repeating the problem. The same
//! goes for declared requirements: `onnx 1.13.0 requires protobuf>=3.20.2`
//! is not worth a second line next to the rule that says why it breaks.

use std::str::FromStr;

use pep508_rs::{MarkerEnvironment, MarkerEnvironmentBuilder, Requirement};

use super::{Judgement, Outcome, RuleOutcome, builtin_finding};
use crate::matrix::{Component, Matrix};
use crate::snapshot::{ImportStatus, Library, ProbeMode, Probed, PythonEnv, Snapshot};

fn outcome(j: &mut Judgement, code: &str, subject: &Option<String>, outcome: Outcome) {
    j.outcomes.push(RuleOutcome { code: code.to_string(), subject: subject.clone(), outcome });
}

/// `first` is where this environment's findings start in `j.findings`.
pub(super) fn check_env(
    j: &mut Judgement,
    first: usize,
    snapshot: &Snapshot,
    env: &PythonEnv,
    matrix: &Matrix,
) {
    let subject = Some(env.label());
    let python = env.label();

    if let (Probed::NotEvaluated(reason), ProbeMode::Full) = (&env.interpreter, snapshot.mode)
        && let Some(rule) = matrix.rule("python-not-evaluated")
    {
        j.findings.push(builtin_finding(
            rule,
            Some(env),
            &[("python", python.clone()), ("reason", reason.clone())],
        ));
        outcome(j, &rule.code, &subject, Outcome::Fired);
    }

    // Imports.
    for import in &env.imports {
        let code = match &import.status {
            ImportStatus::Failed { .. } => "import-failed",
            ImportStatus::TimedOut { .. } => "import-timed-out",
            ImportStatus::Crashed { .. } => "import-crashed",
            _ => continue,
        };
        let Some(rule) = matrix.rule(code) else { continue };
        let component = matrix.component_of(&import.package);
        let mut evidence = vec![format!("import {}: {}", import.module, import.status.describe())];
        if let Some(out) = import.output.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
            evidence.push(out.to_string());
        }
        let explained = j.findings[first..]
            .iter_mut()
            .filter(|f| component != Component::PYTHON && f.components.contains(&component))
            .fold(false, |_, f| {
                f.evidence.extend(evidence.iter().cloned());
                true
            });
        if explained {
            outcome(j, code, &subject, Outcome::Passed);
            continue;
        }
        let (dist, version) = env
            .first_installed(&matrix.distributions_of(&import.package))
            .map_or((import.package.clone(), "?".into()), |d| (d.name.clone(), d.version.raw().to_string()));
        let (error, seconds, detail) = match &import.status {
            ImportStatus::Failed { error, message } => {
                (format!("{error}: {message}"), String::new(), String::new())
            }
            ImportStatus::TimedOut { seconds } => (String::new(), format!("{seconds:.0}"), String::new()),
            ImportStatus::Crashed { detail } => (String::new(), String::new(), detail.clone()),
            _ => Default::default(),
        };
        let mut f = builtin_finding(
            rule,
            Some(env),
            &[
                ("module", import.module.clone()),
                ("python", python.clone()),
                ("error", error),
                ("seconds", seconds),
                ("detail", detail),
                ("dist", dist),
                ("version", version),
            ],
        );
        if !f.components.contains(&component) {
            f.components.push(component);
        }
        f.evidence = evidence;
        j.findings.push(f);
        outcome(j, code, &subject, Outcome::Fired);
    }

    // Local files that shadow a package for scripts run from the user's directory.
    if let Some(rule) = matrix.rule("module-shadowed-by-local-file") {
        for import in &env.imports {
            let Some(path) = &import.shadowed_by else { continue };
            let shown = path.display().to_string();
            let mut f = builtin_finding(
                rule,
                Some(env),
                &[
                    ("path", shown.clone()),
                    ("path_renamed", format!("{shown}.local")),
                    ("module", import.module.clone()),
                    ("cwd", path.parent().map(|p| p.display().to_string()).unwrap_or_default()),
                ],
            );
            f.components.push(matrix.component_of(&import.package));
            j.findings.push(f);
            outcome(j, &rule.code, &subject, Outcome::Fired);
        }
    }

    check_links(j, snapshot, env, matrix);

    let Probed::Found(dists) = &env.distributions else { return };

    // Second copies of watched packages further down sys.path.
    if let Some(rule) = matrix.rule("distribution-shadowed") {
        for d in dists.iter().filter(|d| matrix.packages.contains(&d.name)) {
            for other in &d.shadowed {
                let mut f = builtin_finding(
                    rule,
                    Some(env),
                    &[
                        ("dist", d.name.clone()),
                        ("version", d.version.raw().to_string()),
                        ("location", d.location.display().to_string()),
                        ("other_version", other.version.raw().to_string()),
                        ("other_location", other.location.display().to_string()),
                    ],
                );
                f.components.push(matrix.component_of(&d.name));
                j.findings.push(f);
                outcome(j, &rule.code, &subject, Outcome::Fired);
            }
        }
    }

    // Declared requirements, like `pip check`, for the watched packages.
    let Some(markers) = marker_environment(snapshot, env) else {
        outcome(
            j,
            "declared-requirement-unmet",
            &subject,
            Outcome::NotEvaluated {
                reason: "the Python version is unknown, so requirement markers cannot be evaluated".into(),
            },
        );
        return;
    };
    for d in dists.iter().filter(|d| !d.requires.is_empty()) {
        for line in &d.requires {
            let Ok(req) = Requirement::<pep508_rs::VerbatimUrl>::from_str(line) else { continue };
            if !req.evaluate_markers(&markers, &[]) {
                continue;
            }
            let dep_name = crate::snapshot::normalize_name(req.name.as_ref());
            let spec_text = match &req.version_or_url {
                Some(pep508_rs::VersionOrUrl::VersionSpecifier(s)) => s.to_string(),
                _ => String::new(),
            };
            let requirement = format!("{dep_name}{spec_text}");
            let installed = env.distribution(&dep_name);
            let (code, installed_version) = match installed {
                None => ("declared-requirement-missing", String::new()),
                Some(dep) => {
                    let ok = match &req.version_or_url {
                        Some(pep508_rs::VersionOrUrl::VersionSpecifier(s)) => {
                            dep.version.parsed().is_none_or(|v| s.contains(v))
                        }
                        _ => true,
                    };
                    if ok {
                        continue;
                    }
                    ("declared-requirement-unmet", dep.version.raw().to_string())
                }
            };
            let (a, b) = (matrix.component_of(&d.name), matrix.component_of(&dep_name));
            let covered = j.findings[first..].iter().any(|f| {
                a != Component::PYTHON
                    && b != Component::PYTHON
                    && f.components.contains(&a)
                    && f.components.contains(&b)
            });
            let Some(rule) = matrix.rule(code) else { continue };
            if covered {
                outcome(j, code, &subject, Outcome::Passed);
                continue;
            }
            let mut f = builtin_finding(
                rule,
                Some(env),
                &[
                    ("dist", d.name.clone()),
                    ("version", d.version.raw().to_string()),
                    ("requirement", requirement),
                    ("dependency", dep_name.clone()),
                    ("installed", installed_version),
                ],
            );
            for c in [a, b] {
                if !f.components.contains(&c) {
                    f.components.push(c);
                }
            }
            j.findings.push(f);
            outcome(j, code, &subject, Outcome::Fired);
        }
    }
}

/// The GPU libraries of this environment's packages whose dependencies the
/// loader cannot find. The words and fixes are the matrix's, one rule per
/// kind of library.
fn check_links(j: &mut Judgement, snapshot: &Snapshot, env: &PythonEnv, matrix: &Matrix) {
    let Probed::Found(nvidia) = &snapshot.nvidia else { return };
    let subject = Some(env.label());
    // In a container without a driver the runtime mounts these from the host.
    let no_driver = nvidia.driver.found().is_none();
    for link in nvidia.links.iter().filter(|l| l.python.as_deref() == Some(env.label().as_str())) {
        let Some(lib) = matrix.stack.iter().flat_map(|p| &p.libraries).find(|l| l.role == link.role) else {
            continue;
        };
        let (code, what) = (lib.check.as_str(), lib.what.as_str());
        let Some(rule) = matrix.rule(code) else { continue };
        let missing: Vec<_> = link
            .unresolved
            .iter()
            .filter(|u| !(no_driver && (u.soname == "libcuda.so.1" || u.soname == "libnvidia-ml.so.1")))
            .collect();
        if missing.is_empty() {
            outcome(j, &rule.code, &subject, Outcome::Passed);
            continue;
        }
        let names: Vec<&str> = missing.iter().map(|u| u.soname.as_str()).collect();
        let mut dirs: Vec<String> = missing
            .iter()
            .flat_map(|u| u.available_in.iter().filter_map(|p| p.parent().map(|d| d.display().to_string())))
            .collect();
        dirs.sort();
        dirs.dedup();
        let version =
            env.distribution("onnxruntime-gpu").map(|d| d.version.raw().to_string()).unwrap_or_default();
        let params = [
            ("what", what.to_string()),
            ("library", link.library.display().to_string()),
            ("missing", names.join(", ")),
            ("dirs", dirs.join(":")),
            // Preloading helps only when the libraries exist somewhere.
            ("dirs_found", String::new()),
            ("version", version),
        ];
        let mut f = builtin_finding(rule, Some(env), &params);
        // Drop the fixes that need a value this case does not have.
        f.fixes = rule
            .fixes
            .iter()
            .zip(f.fixes)
            .filter(|(template, _)| {
                !(template.contains("{dirs}") && dirs.is_empty()
                    || template.contains("{dirs_found}") && dirs.is_empty()
                    || template.contains("{version}") && params[5].1.is_empty())
            })
            .map(|(_, fix)| fix)
            .collect();
        if names.iter().any(|n| n.starts_with("libcudnn")) && !f.components.contains(&Component::CUDNN) {
            f.components.push(Component::CUDNN);
        }
        f.evidence = missing
            .iter()
            .map(|u| {
                let at = if u.available_in.is_empty() {
                    "no copy found anywhere".to_string()
                } else {
                    format!(
                        "a copy exists at {}",
                        u.available_in.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                    )
                };
                format!("{} needed by {}: {at}", u.soname, u.needed_by.display())
            })
            .collect();
        j.findings.push(f);
        outcome(j, &rule.code, &subject, Outcome::Fired);
    }
}

/// Engines are tied to the TensorRT that built them: several versions on
/// one machine is worth knowing.
fn check_tensorrt_copies(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    let Some(rule) = matrix.rule("tensorrt-several-versions") else { return };
    let mut seen: Vec<(String, String)> = Vec::new(); // (major.minor or major, where)
    let mut add = |v: &crate::version::Ver, major: Option<u64>, place: String| {
        let key = match v.release() {
            [a, b, ..] => format!("{a}.{b}"),
            [a] => a.to_string(),
            [] => major.map(|m| m.to_string()).unwrap_or_default(),
        };
        if !key.is_empty() {
            seen.push((key, place));
        }
    };
    if let Probed::Found(n) = &snapshot.nvidia {
        for lib in n.libraries.iter().filter(|l| l.library == Library::Nvinfer) {
            let v = lib.version.clone().unwrap_or_else(|| crate::version::Ver::new(""));
            add(&v, lib.major, lib.path.display().to_string());
        }
        for h in n.headers.iter().filter(|h| h.component == Component::TENSORRT) {
            add(&h.version, None, h.path.display().to_string());
        }
    }
    for env in &snapshot.pythons {
        if let Some(d) = env.first_installed(&matrix.distributions_of("tensorrt")) {
            add(&d.version, None, format!("{} {} in {}", d.name, d.version, d.location.display()));
        }
    }
    // A major alone ("10", from libnvinfer.so.10) agrees with any 10.x.
    let mut distinct: Vec<&str> = Vec::new();
    for (k, _) in &seen {
        let major = k.split('.').next().unwrap_or(k);
        let clash = distinct.iter().any(|d| {
            let dm = d.split('.').next().unwrap_or(d);
            dm == major && (d == k || !d.contains('.') || !k.contains('.'))
        });
        if !clash {
            distinct.push(k);
        }
    }
    if distinct.len() < 2 {
        if !seen.is_empty() {
            outcome(j, &rule.code, &None, Outcome::Passed);
        }
        return;
    }
    let places: Vec<String> = seen.iter().map(|(k, p)| format!("{k}: {p}")).collect();
    let mut f =
        builtin_finding(rule, None, &[("versions", distinct.join(", ")), ("places", places.join("; "))]);
    f.evidence = places;
    j.findings.push(f);
    outcome(j, &rule.code, &None, Outcome::Fired);
}

/// `--expect` pins: `cuda` means the toolkit, else torch's CUDA; `driver`
/// and `python` are themselves; anything else is a distribution.
fn check_expectations(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    let Some(rule) = matrix.rule("expectation-not-met") else { return };
    let envs: Vec<Option<&PythonEnv>> =
        if snapshot.pythons.is_empty() { vec![None] } else { snapshot.pythons.iter().map(Some).collect() };
    for expect in &snapshot.expectations {
        let (name, spec) = (&expect.name, &expect.spec);
        let key = match name.as_str() {
            "cuda" => "cuda.toolkit|torch.cuda",
            other => other,
        };
        for env in &envs {
            let facts = super::facts::Facts::for_env(snapshot, *env, matrix);
            let subject = env.map(PythonEnv::label);
            let found = match facts.get(key) {
                super::facts::Fact::Text(t) => t,
                super::facts::Fact::Absent => "nothing (not installed)".into(),
                super::facts::Fact::List(l) => l.join(", "),
                super::facts::Fact::Unknown(r) => {
                    outcome(
                        j,
                        &rule.code,
                        &subject,
                        Outcome::NotEvaluated { reason: format!("{expect}: {r}") },
                    );
                    continue;
                }
            };
            if spec.contains(&crate::version::Ver::new(found.as_str())) {
                outcome(j, &rule.code, &subject, Outcome::Passed);
                continue;
            }
            let f = builtin_finding(
                rule,
                *env,
                &[("expect", expect.to_string()), ("name", name.clone()), ("found", found)],
            );
            j.findings.push(f);
            outcome(j, &rule.code, &subject, Outcome::Fired);
        }
    }
}

pub(super) fn check_machine(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    check_tensorrt_copies(j, snapshot, matrix);
    check_expectations(j, snapshot, matrix);
    if let (Some(pasted), Some(rule)) = (&snapshot.pasted, matrix.rule("pasted-facts-conflict")) {
        for c in &pasted.conflicts {
            let values: Vec<String> = c.values.iter().map(|(v, l)| format!("{v} (line {l})")).collect();
            let mut f =
                builtin_finding(rule, None, &[("fact", c.fact.clone()), ("values", values.join(" and "))]);
            f.evidence = values;
            j.findings.push(f);
            outcome(j, &rule.code, &None, Outcome::Fired);
        }
    }
    if snapshot.pythons.is_empty()
        && snapshot.pasted.is_none()
        && snapshot.targets.is_empty()
        && let Some(rule) = matrix.rule("no-python-found")
    {
        j.findings.push(builtin_finding(rule, None, &[]));
        outcome(j, &rule.code, &None, Outcome::Fired);
    }
}

/// The PEP 508 environment of an interpreter: what it reported, or, without
/// it (`--fast`), what the version and the machine imply for CPython.
pub(super) fn marker_environment(snapshot: &Snapshot, env: &PythonEnv) -> Option<MarkerEnvironment> {
    let reported = env.interpreter.found().map(|i| &i.markers).filter(|m| !m.is_empty());
    let version = env.version.found()?;
    let (major, minor, patch) = match version.release() {
        [a, b, c, ..] => (*a, *b, *c),
        [a, b] => (*a, *b, 0),
        _ => return None,
    };
    let full = format!("{major}.{minor}.{patch}");
    let short = format!("{major}.{minor}");
    let arch = snapshot.system.found().map_or(std::env::consts::ARCH, |s| s.arch.as_str()).to_string();
    let kernel = snapshot.system.found().and_then(|s| s.kernel.found().cloned()).unwrap_or_default();
    let get = |k: &str, default: &str| {
        reported.and_then(|m| m.get(k).cloned()).unwrap_or_else(|| default.to_string())
    };
    let values = [
        get("implementation_name", "cpython"),
        get("implementation_version", &full),
        get("os_name", "posix"),
        get("platform_machine", &arch),
        get("platform_python_implementation", "CPython"),
        get("platform_release", &kernel),
        get("platform_system", "Linux"),
        get("platform_version", ""),
        get("python_full_version", &full),
        get("python_version", &short),
        get("sys_platform", "linux"),
    ];
    MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
        implementation_name: &values[0],
        implementation_version: &values[1],
        os_name: &values[2],
        platform_machine: &values[3],
        platform_python_implementation: &values[4],
        platform_release: &values[5],
        platform_system: &values[6],
        platform_version: &values[7],
        python_full_version: &values[8],
        python_version: &values[9],
        sys_platform: &values[10],
    })
    .ok()
}
