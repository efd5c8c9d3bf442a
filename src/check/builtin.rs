//! Checks Rust performs itself, worded by the matrix's `builtin` rules.
//!
//! An import failure is always a finding, with the exception text, even when
//! no rule explains it. When a data rule already explains it (a finding on
//! the same component in the same environment), the exception text is added
//! to that finding as evidence instead of repeating the problem. The same
//! goes for declared requirements: `onnx 1.13.0 requires protobuf>=3.20.2`
//! is not worth a second line next to the rule that says why it breaks.

use std::collections::BTreeMap;

use pep508_rs::{MarkerEnvironment, Requirement, VersionOrUrl};

use super::facts::{Fact, Facts};
use super::{Finding, Judgement, Outcome, RuleOutcome, builtin_finding};
use crate::matrix::{BuiltinCheck, Component, Matrix, Row, Rule, Severity, StackLibrary};
use crate::snapshot::nvidia::{LinkReport, VcRuntime};
use crate::snapshot::{
    Attr, FactKey, FactRef, ImportStatus, Library, MachineFact, ProbeMode, Probed, PythonEnv, Snapshot,
    normalize_name,
};
use crate::version::Ver;

/// The builtin checks of one Python environment, recording into the
/// judgement as they go.
struct EnvChecks<'a> {
    j: &'a mut Judgement,
    /// Where this environment's findings start in `j.findings`.
    first: usize,
    snapshot: &'a Snapshot,
    env: &'a PythonEnv,
    matrix: &'a Matrix,
    subject: Option<String>,
    /// Per distribution, the modules of the declared requirements that are
    /// not installed: an import failing for one of them is explained.
    missing: Vec<(Component, Vec<String>)>,
}

impl EnvChecks<'_> {
    fn record(&mut self, code: &str, outcome: Outcome) {
        self.j.outcomes.push(RuleOutcome { code: code.to_string(), subject: self.subject.clone(), outcome });
    }

    fn fire(&mut self, finding: Finding) {
        self.record(&finding.code.clone(), Outcome::Fired);
        self.j.findings.push(finding);
    }

    fn finding(&self, rule: &Rule, params: &[(&str, String)]) -> Finding {
        builtin_finding(rule, Some(self.env), params)
    }

    /// This environment's findings so far.
    fn findings_so_far(&mut self) -> &mut [Finding] {
        &mut self.j.findings[self.first..]
    }

    /// The row of `table` for the installed version of its key.
    fn row(&self, table: &str) -> Option<&Row> {
        let table = self.matrix.tables.get(table)?;
        let facts = Facts::for_env(self.snapshot, Some(self.env), self.matrix);
        let version = match facts.get(table.key_fact.as_ref()?) {
            Fact::Text(v) => Ver::new(v),
            _ => return None,
        };
        super::select_row(table, &version, &facts, self.matrix).ok().map(|(_, row)| row)
    }

    /// An interpreter the full check could not run.
    fn interpreter(&mut self) {
        if let (Probed::NotEvaluated(reason), ProbeMode::Full) = (&self.env.interpreter, self.snapshot.mode) {
            let rule = self.matrix.builtin(BuiltinCheck::PythonNotEvaluated);
            let f = self.finding(rule, &[("python", self.env.label()), ("reason", reason.clone())]);
            self.fire(f);
        }
    }

    /// Imports that failed, hung or crashed: evidence of a finding that
    /// explains them, else findings of their own.
    fn imports(&mut self) {
        for import in &self.env.imports {
            let check = match &import.status {
                ImportStatus::Failed { .. } => BuiltinCheck::ImportFailed,
                ImportStatus::TimedOut { .. } => BuiltinCheck::ImportTimedOut,
                ImportStatus::Crashed { .. } => BuiltinCheck::ImportCrashed,
                _ => continue,
            };
            let component =
                self.matrix.stack_package(&import.package).map_or(Component::PYTHON, |p| p.component.clone());
            let mut evidence = vec![format!("import {}: {}", import.module, import.status.describe())];
            if let Some(out) = import.output.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
                evidence.push(out.to_string());
            }
            let said = format!("{} {}", import.status.describe(), import.output.as_deref().unwrap_or(""));
            // A missing requirement explains the failure only when the
            // failure names it ("No module named 'numpy'").
            let names_missing = |f: &Finding| {
                self.missing.iter().any(|(c, modules)| {
                    f.components.contains(c)
                        && modules.iter().any(|m| {
                            said.contains(&format!("'{m}'")) || said.contains(&format!("import {m} "))
                        })
                })
            };
            let requirement = BuiltinCheck::DeclaredRequirementMissing.code();
            let explains: Vec<bool> = self.j.findings[self.first..]
                .iter()
                .map(|f| {
                    // A note suggests; it is no cause of a failure.
                    component != Component::PYTHON
                        && f.severity != Severity::Info
                        && f.components.contains(&component)
                        && (f.code != requirement || names_missing(f))
                })
                .collect();
            let mut explained = false;
            for (f, _) in self.findings_so_far().iter_mut().zip(explains).filter(|(_, e)| *e) {
                f.evidence.extend(evidence.iter().cloned());
                // The import fails for it: no longer a warning of what will fail.
                if f.code == requirement {
                    f.severity = f.severity.max(Severity::Error);
                }
                explained = true;
            }
            if explained {
                self.record(check.code(), Outcome::Passed);
                continue;
            }
            let (dist, version) = self
                .env
                .first_installed(&self.matrix.distributions_of(&import.package))
                .map_or((import.package.clone(), "?".into()), |d| {
                    (d.name.clone(), d.version.raw().to_string())
                });
            let (error, seconds, detail) = match &import.status {
                ImportStatus::Failed { error, message } => {
                    (format!("{error}: {message}"), String::new(), String::new())
                }
                ImportStatus::TimedOut { seconds } => (String::new(), format!("{seconds:.0}"), String::new()),
                ImportStatus::Crashed { detail } => (String::new(), String::new(), detail.clone()),
                _ => Default::default(),
            };
            let rule = self.matrix.builtin(check);
            let mut f = self.finding(
                rule,
                &[
                    ("module", import.module.clone()),
                    ("python", self.env.label()),
                    ("error", error),
                    ("seconds", seconds),
                    ("detail", detail),
                    ("dist", dist),
                    ("version", version),
                ],
            );
            add_component(&mut f, component);
            f.evidence = evidence;
            self.fire(f);
        }
    }

    /// Local files that shadow a package for scripts run from the user's directory.
    fn local_shadowing(&mut self) {
        let rule = self.matrix.builtin(BuiltinCheck::ModuleShadowedByLocalFile);
        for import in &self.env.imports {
            let Some(path) = &import.shadowed_by else { continue };
            let shown = path.display().to_string();
            let mut f = self.finding(
                rule,
                &[
                    ("path", shown.clone()),
                    // The command's words, quoted where a shell would split them.
                    ("path_word", path_word(&shown)),
                    ("path_renamed", path_word(&format!("{shown}.local"))),
                    ("module", import.module.clone()),
                    // A pasted Windows path is split by its own separator.
                    ("cwd", shown.rfind(['/', '\\']).map(|at| shown[..at].to_string()).unwrap_or_default()),
                ],
            );
            let component =
                self.matrix.stack_package(&import.package).map_or(Component::PYTHON, |p| p.component.clone());
            add_component(&mut f, component);
            self.fire(f);
        }
    }

    /// The GPU libraries of this environment's packages whose dependencies
    /// the loader cannot find. The words and fixes are the matrix's, one
    /// rule per kind of library.
    fn links(&mut self) {
        let Probed::Found(nvidia) = &self.snapshot.nvidia else { return };
        // In a container without a driver the runtime mounts these from the host.
        let no_driver = nvidia.driver.found().is_none();
        let label = self.env.label();
        for link in nvidia.links.iter().filter(|l| l.python.as_deref() == Some(label.as_str())) {
            let Some(lib) = self.matrix.stack.iter().flat_map(|p| &p.libraries).find(|l| l.role == link.role)
            else {
                continue;
            };
            // A library for a runtime the machine has no trace of (the
            // TensorRT provider without TensorRT) is worded as a note.
            let absent =
                lib.needs.as_ref().is_some_and(|c| !component_present(self.snapshot, self.matrix, c));
            // Every missing library in this environment's own pip wheels:
            // fine for a package that loads them itself.
            let in_wheels = in_own_wheels(self.env, link, no_driver);
            if in_wheels && lib.preloads_wheels {
                self.record(&lib.check, Outcome::Passed);
                continue;
            }
            let code = match (absent, in_wheels) {
                (true, _) => lib.check_without.as_ref().unwrap_or(&lib.check),
                (false, true) => lib.check_in_wheels.as_ref().unwrap_or(&lib.check),
                _ => &lib.check,
            };
            let Some(rule) = self.matrix.rule(code) else { continue };
            match unloadable(self, rule, lib, link, no_driver) {
                Some(f) => self.fire(f),
                None => self.record(&rule.code, Outcome::Passed),
            }
        }
    }

    /// On Windows, the Visual C++ runtime the GPU libraries' DLLs import:
    /// one Windows would not find, or one older than the newest toolset
    /// that built them (Microsoft supports only a runtime at least that
    /// new). One finding of each per environment, whatever the libraries.
    fn vc_runtime(&mut self) {
        let Probed::Found(nvidia) = &self.snapshot.nvidia else { return };
        let label = self.env.label();
        let links: Vec<(&LinkReport, &VcRuntime)> = nvidia
            .links
            .iter()
            .filter(|l| l.python.as_deref() == Some(label.as_str()))
            .filter_map(|l| Some((l, l.vc_runtime.as_ref()?)))
            .collect();
        if links.is_empty() {
            return;
        }
        let components: Vec<Component> = links
            .iter()
            .filter_map(|(link, _)| {
                self.matrix.stack.iter().find(|p| p.libraries.iter().any(|l| l.role == link.role))
            })
            .map(|p| p.component.clone())
            .collect();
        let with_components = |mut f: Finding| {
            add_component(&mut f, Component::SYSTEM);
            for c in &components {
                add_component(&mut f, c.clone());
            }
            f
        };
        let major_minor = |v: &Ver| v.release().get(..2).map(<[u64]>::to_vec);

        let rule = self.matrix.builtin(BuiltinCheck::VcRuntimeMissing);
        let (mut needing, mut missing, mut evidence) = (Vec::new(), Vec::<&str>::new(), Vec::new());
        for (link, vc) in &links {
            let absent: Vec<&str> =
                vc.dlls.iter().filter(|d| d.path.is_none()).map(|d| d.name.as_str()).collect();
            if absent.is_empty() {
                continue;
            }
            needing.push(link.library.display().to_string());
            evidence.push(format!("{} imports {}", vc.built.display(), absent.join(", ")));
            for name in absent {
                if !missing.iter().any(|m| m.eq_ignore_ascii_case(name)) {
                    missing.push(name);
                }
            }
        }
        if missing.is_empty() {
            self.record(&rule.code, Outcome::Passed);
        } else {
            let mut f =
                self.finding(rule, &[("library", needing.join(" and ")), ("dlls", missing.join(", "))]);
            f.evidence = evidence;
            self.fire(with_components(f));
        }

        // The newest toolset among the libraries, against each runtime DLL found.
        let rule = self.matrix.builtin(BuiltinCheck::VcRuntimeOlderThanBuild);
        let Some(newest) = links.iter().map(|(_, vc)| *vc).max_by_key(|vc| major_minor(&vc.built_with))
        else {
            return;
        };
        let Some(built) = major_minor(&newest.built_with) else { return };
        let older = links.iter().flat_map(|(_, vc)| &vc.dlls).find(|d| {
            d.path.is_some() && d.version.as_ref().and_then(major_minor).is_some_and(|have| have < built)
        });
        let Some(dll) = older else {
            self.record(&rule.code, Outcome::Passed);
            return;
        };
        let path = dll.path.as_deref().map_or_else(String::new, |p| p.display().to_string());
        let version = dll.version.as_ref().map_or_else(String::new, |v| v.raw().to_string());
        let built_file =
            newest.built.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let mut f = self.finding(
            rule,
            &[
                ("dll", dll.name.clone()),
                ("dll_path", path.clone()),
                ("version", version.clone()),
                ("built", built_file),
                ("built_with", newest.built_with.raw().to_string()),
            ],
        );
        f.evidence = vec![format!(
            "{} was linked by the {} toolset; Windows would load {path}, version {version}",
            newest.built.display(),
            newest.built_with.raw()
        )];
        self.fire(with_components(f));
    }

    /// Second copies of watched packages further down sys.path.
    fn shadowed_distributions(&mut self, dists: &[crate::snapshot::Distribution]) {
        let rule = self.matrix.builtin(BuiltinCheck::DistributionShadowed);
        for d in dists.iter().filter(|d| self.matrix.packages.contains(&d.name)) {
            for other in &d.shadowed {
                let mut f = self.finding(
                    rule,
                    &[
                        ("dist", d.name.clone()),
                        ("version", d.version.raw().to_string()),
                        ("location", d.location.display().to_string()),
                        ("other_version", other.version.raw().to_string()),
                        ("other_location", other.location.display().to_string()),
                    ],
                );
                add_component(&mut f, self.matrix.component_of(&d.name));
                self.fire(f);
            }
        }
    }

    /// Declared requirements, like `pip check`, for the watched packages.
    /// (A METADATA may declare thousands; the message names the first few,
    /// the fix installs them all.)
    fn declared_requirements(&mut self, dists: &[crate::snapshot::Distribution]) {
        let markers = marker_environment(self.snapshot, self.env);
        // Without the Python version, only requirements without markers
        // (those pip quoted in a paste) can be judged.
        if markers.is_none() && !dists.iter().flat_map(|d| &d.requires).any(|r| !r.contains(';')) {
            let reason = "the Python version is unknown, so requirement markers cannot be evaluated";
            self.record(BuiltinCheck::DeclaredRequirementUnmet.code(), Outcome::not_evaluated(reason));
            return;
        }
        for d in dists.iter().filter(|d| !d.requires.is_empty()) {
            let mut missing = Vec::new();
            for line in &d.requires {
                let Some(req) = crate::version::requirement(line) else { continue };
                let applies = match &markers {
                    Some(m) => req.evaluate_markers(m, &[]),
                    None => !line.contains(';'),
                };
                if !applies {
                    continue;
                }
                if let Some(m) = self.requirement(d, &req) {
                    missing.push(m);
                }
            }
            if !missing.is_empty() {
                self.missing_requirements(d, missing);
            }
        }
    }

    /// One requirement of `d`, judged against what is installed: a finding
    /// when another version is installed, the requirement and its
    /// component when nothing is.
    fn requirement(
        &mut self,
        d: &crate::snapshot::Distribution,
        req: &Requirement<pep508_rs::VerbatimUrl>,
    ) -> Option<(String, String, Component)> {
        let dep_name = normalize_name(req.name.as_ref());
        let spec = match &req.version_or_url {
            Some(VersionOrUrl::VersionSpecifier(s)) => Some(s),
            _ => None,
        };
        let (check, installed) = match self.env.distribution(&dep_name) {
            None => (BuiltinCheck::DeclaredRequirementMissing, String::new()),
            Some(dep) if spec.is_none_or(|s| dep.version.parsed().is_none_or(|v| s.contains(v))) => {
                return None;
            }
            Some(dep) => (BuiltinCheck::DeclaredRequirementUnmet, dep.version.raw().to_string()),
        };
        let (a, b) = (self.matrix.component_of(&d.name), self.matrix.component_of(&dep_name));
        // A rule about these two components already says it, with the why.
        // So does a rule that reads both distributions' versions (a table of
        // torchaudio releases and the torch each requires).
        let matrix = self.matrix;
        let reads_both = |code: &str| {
            matrix.rules.iter().find(|r| r.code == code).is_some_and(|r| {
                let reads =
                    |dist: &str| super::rule_facts(r).any(|k| matches!(k, FactKey::Version(n) if n == dist));
                reads(&d.name) && reads(&dep_name)
            })
        };
        let covered = self.findings_so_far().iter().any(|f| {
            (a != Component::PYTHON
                && b != Component::PYTHON
                && f.components.contains(&a)
                && f.components.contains(&b))
                || reads_both(&f.code)
        });
        if covered {
            self.record(check.code(), Outcome::Passed);
            return None;
        }
        let requirement = format!("{dep_name}{}", spec.map(ToString::to_string).unwrap_or_default());
        if check == BuiltinCheck::DeclaredRequirementMissing {
            return Some((dep_name, requirement, b));
        }
        let mut f = self.finding(
            self.matrix.builtin(check),
            &[
                ("dist", d.name.clone()),
                ("version", d.version.raw().to_string()),
                ("requirement", requirement),
                ("dependency", dep_name),
                ("installed", installed),
            ],
        );
        add_component(&mut f, a);
        add_component(&mut f, b);
        self.fire(f);
        None
    }

    /// One finding for every requirement of `d` that is not installed:
    /// one `pip install` brings them all.
    fn missing_requirements(
        &mut self,
        d: &crate::snapshot::Distribution,
        missing: Vec<(String, String, Component)>,
    ) {
        let listed: Vec<&str> = missing.iter().map(|(_, r, _)| r.as_str()).collect();
        let quoted: Vec<String> = listed.iter().map(|r| shell_quote(r)).collect();
        let mut f = self.finding(
            self.matrix.builtin(BuiltinCheck::DeclaredRequirementMissing),
            &[
                ("dist", d.name.clone()),
                ("version", d.version.raw().to_string()),
                ("requirement", first_of(&listed, LISTED_REQUIREMENTS)),
                ("requirements", quoted.join(" ")),
            ],
        );
        let component = self.matrix.component_of(&d.name);
        add_component(&mut f, component.clone());
        for (_, _, c) in &missing {
            add_component(&mut f, c.clone());
        }
        // The module a missing distribution provides, as an import names it.
        let modules = missing.iter().map(|(name, _, _)| name.replace('-', "_")).collect();
        self.missing.push((component, modules));
        self.fire(f);
    }
}

/// A path as one word for a POSIX shell or PowerShell: quoted when it holds
/// anything but letters, digits and `-_.:/\` (a space, most often).
fn path_word(path: &str) -> String {
    if path.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/\\".contains(c)) {
        path.to_string()
    } else {
        format!("\"{path}\"")
    }
}

/// A requirement as one shell word: quoted when it holds a character the
/// shell would read (`numpy>=1.21.6`).
fn shell_quote(requirement: &str) -> String {
    if requirement.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        requirement.to_string()
    } else {
        format!("\"{requirement}\"")
    }
}

/// The builtin checks of one Python environment. `first` is where this
/// environment's findings start in `j.findings`.
pub(super) fn check_env(
    j: &mut Judgement,
    first: usize,
    snapshot: &Snapshot,
    env: &PythonEnv,
    matrix: &Matrix,
) {
    let mut c =
        EnvChecks { j, first, snapshot, env, matrix, subject: Some(env.label()), missing: Vec::new() };
    c.interpreter();
    // Requirements first: a missing one explains the import that fails for it.
    if let Probed::Found(dists) = &env.distributions {
        c.declared_requirements(dists);
    }
    c.imports();
    c.local_shadowing();
    c.links();
    c.vc_runtime();
    if let Probed::Found(dists) = &env.distributions {
        c.shadowed_distributions(dists);
    }
}

fn add_component(f: &mut Finding, c: Component) {
    if !f.components.contains(&c) {
        f.components.push(c);
    }
}

/// Whether any trace of a component is on the machine: a library copy, a
/// header, or a distribution in some environment.
fn component_present(snapshot: &Snapshot, matrix: &Matrix, c: &Component) -> bool {
    let in_nvidia = snapshot.nvidia.found().is_some_and(|n| {
        n.libraries.iter().any(|l| &l.library.component() == c) || n.headers.iter().any(|h| &h.component == c)
    });
    let in_python = snapshot.pythons.iter().any(|env| {
        env.distributions
            .found()
            .is_some_and(|dists| dists.iter().any(|d| &matrix.component_of(&d.name) == c))
    });
    in_nvidia || in_python
}

/// The driver's own libraries (`libcuda.so.1`, Windows' `nvcuda.dll`),
/// which a container without a driver gets from the host.
fn is_driver_library(name: &str) -> bool {
    crate::formats::library_file(name)
        .is_some_and(|f| matches!(f.library, Library::Cuda | Library::NvidiaMl) && f.version.is_none())
}

/// Whether every library the loader cannot find has a copy inside the
/// environment's own site directories (its nvidia-* and TensorRT wheels).
fn in_own_wheels(env: &PythonEnv, link: &LinkReport, no_driver: bool) -> bool {
    let mut missing =
        link.unresolved.iter().filter(|u| !(no_driver && is_driver_library(&u.soname))).peekable();
    missing.peek().is_some()
        && missing.all(|u| u.available_in.iter().any(|p| env.site_dirs.iter().any(|s| p.starts_with(s))))
}

/// The CUDA major a library is built for, from the CUDA runtime or cuBLAS
/// soname it needs (`libcudart.so.13`).
fn cuda_major_of(link: &LinkReport) -> Option<String> {
    let sonames = link
        .resolved
        .iter()
        .map(|r| r.soname.as_str())
        .chain(link.unresolved.iter().map(|u| u.soname.as_str()));
    sonames
        .filter_map(crate::formats::library_file)
        .find(|f| matches!(f.library, Library::Cudart | Library::Cublas))
        .and_then(|f| f.major)
        .map(|m| m.to_string())
}

/// The finding for a library whose dependencies the loader cannot find, if
/// any are missing. Its fixes are the rule's, best first: installing the
/// wheels that ship the missing sonames when some have no copy anywhere,
/// else putting the copies that exist on the loader's path.
fn unloadable(
    c: &EnvChecks<'_>,
    rule: &Rule,
    lib: &StackLibrary,
    link: &LinkReport,
    no_driver: bool,
) -> Option<Finding> {
    let missing: Vec<_> =
        link.unresolved.iter().filter(|u| !(no_driver && is_driver_library(&u.soname))).collect();
    if missing.is_empty() {
        return None;
    }
    let names: Vec<&str> = missing.iter().map(|u| u.soname.as_str()).collect();
    let mut dirs: Vec<String> = missing
        .iter()
        .flat_map(|u| u.available_in.iter().filter_map(|p| p.parent().map(|d| d.display().to_string())))
        .collect();
    dirs.sort();
    dirs.dedup();
    let cuda_major = cuda_major_of(link);
    let mut wheels: Vec<String> = missing
        .iter()
        .filter(|u| u.available_in.is_empty())
        .filter_map(|u| c.matrix.wheel_for(&u.soname, cuda_major.as_deref()))
        .map(|w| format!("\"{w}\""))
        .collect();
    wheels.sort();
    wheels.dedup();
    let uncopied = missing.iter().any(|u| u.available_in.is_empty());
    let version =
        c.env.distribution("onnxruntime-gpu").map(|d| d.version.raw().to_string()).unwrap_or_default();
    // A DLL is searched for on Windows' PATH, set here for PowerShell
    // (single quotes: nothing in a path is expanded).
    let windows = link.library.extension().is_some_and(|e| e.eq_ignore_ascii_case("dll"));
    let mut params = vec![
        ("cuda_major", cuda_major.clone().unwrap_or_default()),
        ("what", lib.what.clone()),
        ("library", link.library.display().to_string()),
        ("missing", names.join(", ")),
        ("version", version),
    ];
    // Installing helps only the sonames no copy exists of; a path only
    // helps when every missing one has a copy. A fix naming a parameter
    // that is left out is not printed.
    if uncopied {
        params.push(("wheels", wheels.join(" ")));
    } else {
        params.push(("folders", dirs.join("; ")));
        if windows {
            let quoted: Vec<String> = dirs.iter().map(|d| d.replace('\'', "''")).collect();
            params.push(("win_path", quoted.join(";")));
        } else {
            params.push(("dirs", dirs.join(":")));
        }
    }
    let row = lib.table.as_deref().and_then(|t| c.row(t));
    let mut f = super::builtin_finding_with_row(rule, Some(c.env), &params, row);
    if names.iter().any(|n| n.starts_with("libcudnn")) {
        add_component(&mut f, Component::CUDNN);
    }
    f.evidence = missing
        .iter()
        .map(|u| {
            let at = if u.available_in.is_empty() {
                "no copy found anywhere".to_string()
            } else {
                let copies: Vec<String> = u.available_in.iter().map(|p| p.display().to_string()).collect();
                format!("a copy exists at {}", copies.join(", "))
            };
            format!("{} needed by {}: {at}", u.soname, u.needed_by.display())
        })
        .collect();
    Some(f)
}

/// Records a machine-wide outcome (no subject).
fn outcome(j: &mut Judgement, code: &str, outcome: Outcome) {
    j.outcomes.push(RuleOutcome { code: code.to_string(), subject: None, outcome });
}

/// Engines are tied to the TensorRT that built them: several versions on
/// one machine is worth knowing.
fn check_tensorrt_copies(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    let rule = matrix.builtin(BuiltinCheck::TensorrtSeveralVersions);
    let seen = tensorrt_copies(snapshot, matrix);
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
            outcome(j, &rule.code, Outcome::Passed);
        }
        return;
    }
    let places: Vec<String> = seen.iter().map(|(k, p)| format!("{k}: {p}")).collect();
    let mut f =
        builtin_finding(rule, None, &[("versions", distinct.join(", ")), ("places", places.join("; "))]);
    f.evidence = places;
    j.findings.push(f);
    outcome(j, &rule.code, Outcome::Fired);
}

/// Every TensorRT on the machine as (major.minor, or the major alone; where).
fn tensorrt_copies(snapshot: &Snapshot, matrix: &Matrix) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    let mut add = |v: Option<&Ver>, major: Option<u64>, place: String| {
        let key = match v.map(Ver::release).unwrap_or_default() {
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
            add(lib.version.as_ref(), lib.major, lib.path.display().to_string());
        }
        for h in n.headers.iter().filter(|h| h.component == Component::TENSORRT) {
            add(Some(&h.version), None, h.path.display().to_string());
        }
    }
    for env in &snapshot.pythons {
        if let Some(d) = env.first_installed(&matrix.distributions_of("tensorrt")) {
            add(Some(&d.version), None, format!("{} {} in {}", d.name, d.version, d.location.display()));
        }
    }
    seen
}

/// `--expect` pins: `cuda` means the toolkit, else torch's CUDA; `driver`
/// and `python` are themselves; anything else is a distribution.
///
/// Linear in pins and distributions: each environment's distributions are
/// indexed by name once, so a pin on a distribution is one look-up rather
/// than a scan of the environment.
fn check_expectations(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    if snapshot.expectations.is_empty() {
        return;
    }
    let rule = matrix.builtin(BuiltinCheck::ExpectationNotMet);
    let envs: Vec<Option<&PythonEnv>> =
        if snapshot.pythons.is_empty() { vec![None] } else { snapshot.pythons.iter().map(Some).collect() };
    let indexes: Vec<Option<DistIndex<'_>>> = envs.iter().map(|e| e.map(DistIndex::new)).collect();
    for expect in &snapshot.expectations {
        let key = match expect.name.as_str() {
            "cuda" => FactRef(vec![
                FactKey::Machine(MachineFact::CudaToolkit),
                FactKey::Of("torch".into(), Attr::Declared("cuda".into())),
            ]),
            other => FactRef::one(FactKey::lenient(other)),
        };
        for (env, index) in envs.iter().zip(&indexes) {
            let subject = env.map(PythonEnv::label);
            let fact = match index {
                Some(index) if let Some(name) = distribution(&key) => index.version(name),
                _ => Facts::for_env(snapshot, *env, matrix).get(&key),
            };
            let found = match fact {
                Fact::Text(t) => t,
                Fact::Absent => String::new(),
                Fact::List(l) => l.join(", "),
                Fact::Unknown(r) => {
                    let outcome = Outcome::not_evaluated(format!("{expect}: {r}"));
                    j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject, outcome });
                    continue;
                }
            };
            let outcome = if !found.is_empty() && expect.spec.contains(&Ver::new(found.as_str())) {
                Outcome::Passed
            } else {
                let params = expectation_params(expect, found);
                j.findings.push(builtin_finding(rule, *env, &params));
                Outcome::Fired
            };
            j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject, outcome });
        }
    }
}

/// The texts of an unmet pin: what was expected, what was found, and the
/// value of the one fix that is about what the pin names.
fn expectation_params(expect: &crate::snapshot::Expectation, found: String) -> [(&'static str, String); 3] {
    let shown = if found.is_empty() {
        match expect.name.as_str() {
            "driver" => "no NVIDIA driver".to_string(),
            "cuda" => "no CUDA (neither a toolkit nor a CUDA build of torch)".to_string(),
            "python" => "no Python".to_string(),
            name => format!("{name} not installed"),
        }
    } else {
        format!("{} {found}", expect.name)
    };
    let slot = match expect.name.as_str() {
        "driver" => "driver_expect",
        "cuda" => "cuda_expect",
        "python" => "python_expect",
        _ => "package_expect",
    };
    [("expect", expect.to_string()), ("found", shown), (slot, expect.to_string())]
}

/// The distribution whose version `key` is, when it is one alone.
fn distribution(key: &FactRef) -> Option<&str> {
    match key.keys() {
        [one] => one.distribution(),
        _ => None,
    }
}

/// An environment's distributions by name, the first of a name winning as
/// in [`PythonEnv::distribution`].
struct DistIndex<'e> {
    by_name: Result<std::collections::HashMap<&'e str, &'e Ver>, &'e str>,
}

impl<'e> DistIndex<'e> {
    fn new(env: &'e PythonEnv) -> Self {
        let by_name = match &env.distributions {
            Probed::Found(list) => {
                let mut map = std::collections::HashMap::with_capacity(list.len());
                for d in list {
                    map.entry(d.name.as_str()).or_insert(&d.version);
                }
                Ok(map)
            }
            Probed::NotEvaluated(r) => Err(r.as_str()),
        };
        Self { by_name }
    }

    /// What [`Facts::get`] says of a distribution's version.
    fn version(&self, name: &str) -> Fact {
        match &self.by_name {
            Ok(map) => map.get(name).map_or(Fact::Absent, |v| Fact::Text(v.raw().to_string())),
            Err(r) => Fact::Unknown((*r).to_string()),
        }
    }
}

pub(super) fn check_machine(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    check_tensorrt_copies(j, snapshot, matrix);
    check_expectations(j, snapshot, matrix);
    if let Some(pasted) = &snapshot.pasted {
        let rule = matrix.builtin(BuiltinCheck::PastedFactsConflict);
        for c in &pasted.conflicts {
            let values: Vec<String> = c.values.iter().map(|(v, l)| format!("{v} (line {l})")).collect();
            let mut f =
                builtin_finding(rule, None, &[("fact", c.fact.clone()), ("values", values.join(" and "))]);
            f.evidence = values;
            j.findings.push(f);
            outcome(j, &rule.code, Outcome::Fired);
        }
    }
    if snapshot.pythons.is_empty() && snapshot.pasted.is_none() && snapshot.targets.is_empty() {
        let rule = matrix.builtin(BuiltinCheck::NoPythonFound);
        j.findings.push(builtin_finding(rule, None, &[]));
        outcome(j, &rule.code, Outcome::Fired);
    }
}

/// The PEP 508 environment of an interpreter: what it reported, or, without
/// it (`--fast`), what the version and the machine imply for CPython.
pub(super) fn marker_environment(snapshot: &Snapshot, env: &PythonEnv) -> Option<MarkerEnvironment> {
    let version = env.version.found()?;
    let (major, minor, patch) = match version.release() {
        [a, b, c, ..] => (*a, *b, *c),
        [a, b] => (*a, *b, 0),
        _ => return None,
    };
    let full = format!("{major}.{minor}.{patch}");
    let system = snapshot.system.found();
    let mut values: BTreeMap<String, String> = [
        ("implementation_name", "cpython".to_string()),
        ("implementation_version", full.clone()),
        ("os_name", "posix".into()),
        ("platform_machine", system.map_or(std::env::consts::ARCH, |s| s.arch.as_str()).into()),
        ("platform_python_implementation", "CPython".into()),
        ("platform_release", system.and_then(|s| s.kernel.found().cloned()).unwrap_or_default()),
        ("platform_system", "Linux".into()),
        ("platform_version", String::new()),
        ("python_full_version", full),
        ("python_version", format!("{major}.{minor}")),
        ("sys_platform", "linux".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let Some(reported) = env.interpreter.found().map(|i| &i.markers) {
        for (k, v) in reported {
            if let Some(slot) = values.get_mut(k) {
                slot.clone_from(v);
            }
        }
    }
    serde_json::to_value(values).ok().and_then(|v| serde_json::from_value(v).ok())
}
/// How many missing requirements a message names before "and N more".
const LISTED_REQUIREMENTS: usize = 20;

/// `a, b, c` for a short list; the first `n` and a count for a long one.
fn first_of(items: &[&str], n: usize) -> String {
    match items.len() {
        len if len <= n => items.join(", "),
        len => format!("{}, and {} more", items[..n].join(", "), len - n),
    }
}

#[cfg(test)]
mod expectation_tests {
    use super::*;

    #[test]
    fn a_pin_reads_the_same_fact_through_the_index_as_through_facts() {
        let snapshot: Snapshot = serde_json::from_value(serde_json::json!({
            "schema_version": crate::snapshot::SCHEMA_VERSION, "probed_by": "test", "mode": "fast",
            "system": {"found": {"os": {"found": "Ubuntu 22.04"}, "kernel": {"found": "6.8.0"}, "arch": "x86_64",
                                 "glibc": {"found": "2.35"}, "container": null, "wsl": false}},
            "pythons": [
                {"executable": "/a/bin/python", "source": "flag", "version": {"found": "3.11.9"}, "kind": "venv",
                 "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [], "imports": [],
                 "distributions": {"found": [
                     {"name": "numpy", "version": "1.26.4", "location": "/a"},
                     {"name": "torch", "version": "2.4.1+cu121", "location": "/a"},
                     {"name": "numpy", "version": "2.0.0", "location": "/b"}]}},
                {"executable": "/b/bin/python", "source": "flag", "version": {"found": "3.12.1"}, "kind": "venv",
                 "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [], "imports": [],
                 "distributions": {"not_evaluated": "no site-packages"}}],
            "nvidia": {"not_evaluated": "no driver"}
        }))
        .expect("a snapshot");
        let matrix = Matrix::load(&[]).expect("the embedded matrix");
        for env in &snapshot.pythons {
            let index = DistIndex::new(env);
            for name in ["numpy", "torch", "onnx", "tensorrt-cu12", "os", "glibc", "driver", "nvml", "python"]
            {
                let key = FactRef::one(FactKey::lenient(name));
                let through_facts = Facts::for_env(&snapshot, Some(env), &matrix).get(&key);
                if distribution(&key).is_some() {
                    assert_eq!(index.version(name), through_facts, "{name} in {}", env.label());
                } else {
                    assert!(["os", "glibc", "driver", "nvml", "python"].contains(&name), "{name}");
                }
            }
        }
        assert!(distribution(&"cuda.toolkit|torch.cuda".parse().unwrap()).is_none());
    }
}
