//! One consistent set of fixes per environment.
//!
//! Each finding lists its fixes best first, written rule by rule. Printed
//! side by side they can contradict each other: one rule's "pin protobuf
//! below 4" breaks an onnx another package needs. So the fixes are chosen
//! against everything at once: the requirements the chosen fixes install,
//! the `Requires-Dist` of the packages the plan leaves in place, and the
//! matrix's own tables (onnx's protobuf range, torch's torchvision). For
//! each finding, worst first, the first fix that keeps the whole set
//! satisfiable is chosen and moved to the front of its list; the chosen pip
//! commands are merged into one. A finding whose every fix conflicts keeps
//! its best one, and the plan says what it conflicts with.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use pep508_rs::VersionOrUrl;
use serde::{Deserialize, Serialize};

use super::Judgement;
use crate::matrix::{Matrix, Severity, WheelPlatform};
use crate::snapshot::{EnvKind, PythonEnv, PythonSource, Snapshot, normalize_name};

/// The fixes chosen for one environment (or the machine), merged.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FixPlan {
    /// The Python environment, as findings name it; none for the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Commands to run in order.
    pub steps: Vec<String>,
    /// Conflicts no listed fix avoids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
}

/// One requirement a fix installs, with the pip options it needs
/// (`--upgrade`, `--index-url URL`): it is merged only with requirements
/// that need the same options.
#[derive(Clone, Debug)]
struct Install {
    options: String,
    name: String,
    /// `[cuda,cudnn]`: extras the command asks for, kept when merged.
    extras: Vec<String>,
    spec: Option<VersionSpecifiers>,
}

/// What one fix does to the packages of an environment.
#[derive(Clone, Debug, Default)]
struct Effect {
    installs: Vec<Install>,
    uninstalls: Vec<String>,
    /// Anything that is not a pip command (a driver upgrade, a code change).
    other: Vec<String>,
    /// What a comment says to do once the command has run ("then call
    /// onnxruntime.preload_dlls()"): a step of its own after the installs.
    then: Vec<String>,
}

impl Effect {
    /// Every package this fix installs or uninstalls.
    fn names(&self) -> impl Iterator<Item = &str> {
        self.installs.iter().map(|i| i.name.as_str()).chain(self.uninstalls.iter().map(String::as_str))
    }

    /// The packages this fix uninstalls and does not install again.
    fn removes(&self) -> Vec<&str> {
        let installs: BTreeSet<&str> = self.installs.iter().map(|i| i.name.as_str()).collect();
        self.uninstalls.iter().map(String::as_str).filter(|n| !installs.contains(n)).collect()
    }
}

/// pip options that take a value in the next word.
const VALUE_OPTIONS: &[&str] =
    &["-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint"];

/// Reads a fix command: `python -m pip install [--upgrade] [--index-url U] "req" ...`,
/// `pip uninstall -y a b`, chained with `&&`; a `# comment` is prose.
fn effect_of(fix: &str) -> Effect {
    let mut effect = Effect::default();
    if let Some(step) = follow_up(fix) {
        effect.then.push(step);
    }
    // Unbalanced quotes: not a command to reason about.
    let Some(words) = shlex::split(fix) else {
        effect.other.push(fix.to_string());
        return effect;
    };
    let parts: Vec<&[String]> = words.split(|w| w == "&&").filter(|p| !p.is_empty()).collect();
    let single = parts.len() == 1;
    for part in parts {
        let words: Vec<&str> = part.iter().map(String::as_str).collect();
        // What is not reasoned about is kept as written: alone, the fix
        // itself (so prose, `;` and comments survive); inside a chain, the
        // part re-quoted for the shell.
        let as_written = || match single {
            true => fix.trim().to_string(),
            false => shlex::try_join(words.iter().copied()).unwrap_or_else(|_| part.join(" ")),
        };
        let rest = match words.as_slice() {
            ["python" | "python3", "-m", "pip", rest @ ..] | ["pip" | "pip3", rest @ ..] => rest,
            _ => {
                effect.other.push(as_written());
                continue;
            }
        };
        match rest {
            ["install", args @ ..] => match pip_install(args) {
                Some(installs) => effect.installs.extend(installs),
                // A path, a URL, a -r file, a word that is no requirement:
                // not something to reason about.
                None => effect.other.push(as_written()),
            },
            ["uninstall", args @ ..] => effect
                .uninstalls
                .extend(args.iter().filter(|a| !a.starts_with('-')).map(|a| normalize_name(a))),
            _ => effect.other.push(as_written()),
        }
    }
    effect
}

/// The part of a fix's `# comment` that says what to do next, from its
/// "then": `... # NVIDIA's wheels; then call onnxruntime.preload_dlls()`.
fn follow_up(fix: &str) -> Option<String> {
    // The comment starts at a `#` outside quotes, after a space.
    let mut quote = None;
    let mut start = None;
    for (i, c) in fix.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if fix[..i].ends_with(' ') => {
                start = Some(i + 1);
                break;
            }
            _ => {}
        }
    }
    let comment = &fix[start?..];
    let at = comment.find("then ")?;
    let step = comment[at..].trim().trim_end_matches('.');
    (!step.is_empty()).then(|| step.to_string())
}

/// The requirements of one `pip install`, each with the command's options.
fn pip_install(args: &[&str]) -> Option<Vec<Install>> {
    let mut options = Vec::new();
    let mut names = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if VALUE_OPTIONS.contains(arg) {
            options.push(format!("{arg} {}", args.next()?));
        } else if arg.starts_with('-') {
            options.push(arg.to_string());
        } else {
            let r = crate::version::requirement(arg)?;
            let spec = match r.version_or_url {
                Some(VersionOrUrl::VersionSpecifier(s)) => Some(s),
                Some(VersionOrUrl::Url(_)) => return None,
                None => None,
            };
            let extras = r.extras.iter().map(ToString::to_string).collect();
            names.push((normalize_name(r.name.as_ref()), extras, spec));
        }
    }
    let options = options.join(" ");
    Some(
        names
            .into_iter()
            .map(|(name, extras, spec)| Install { options: options.clone(), name, extras, spec })
            .collect(),
    )
}

/// Whether some version meets every specifier. Candidates are the versions
/// the specifiers name and the points just above them, which include the
/// lowest member of any non-empty intersection of PEP 440 ranges.
fn satisfiable(specs: &[&VersionSpecifiers]) -> bool {
    let mut candidates = vec![Version::new([0])];
    for spec in specs {
        for s in spec.iter() {
            let release = s.version().release().to_vec();
            candidates.push(s.version().clone());
            let mut above = release.clone();
            above.push(1);
            candidates.push(Version::new(above));
            let mut above = release.clone();
            above.extend([0, 1]);
            candidates.push(Version::new(above));
            if let Some(last) = release.last() {
                let mut bumped = release.clone();
                *bumped.last_mut().expect("non-empty") = last + 1;
                candidates.push(Version::new(bumped));
            }
        }
    }
    candidates.iter().any(|v| specs.iter().all(|s| s.contains(v)))
}

/// Requirements in force while their package stays: what each installed
/// package declares, and what the matrix's tables say it needs of another.
/// Read once per environment; a constraint whose `source` a fix changes
/// no longer holds.
fn kept_constraints(snapshot: &Snapshot, env: &PythonEnv, matrix: &Matrix) -> Vec<Constraint> {
    let markers = super::builtin::marker_environment(snapshot, env);
    let mut out = Vec::new();
    for d in env.distributions.found().map(Vec::as_slice).unwrap_or_default() {
        for line in &d.requires {
            let Some(req) = crate::version::requirement(line) else { continue };
            // Only what applies to this interpreter, as pip would see it
            // (no extras); with unknown markers every line is kept, which
            // can only make the plan more careful.
            if markers.as_ref().is_some_and(|m| !req.evaluate_markers(m, &[])) {
                continue;
            }
            if let Some(VersionOrUrl::VersionSpecifier(spec)) = req.version_or_url {
                out.push(Constraint {
                    source: d.name.clone(),
                    package: normalize_name(req.name.as_ref()),
                    spec,
                    because: format!(
                        "{} {} requires {}",
                        d.name,
                        d.version.raw(),
                        line.split(';').next().unwrap_or(line).trim()
                    ),
                });
            }
        }
        for table in matrix.tables.values().filter(|t| t.key.split('|').any(|k| k.trim() == d.name)) {
            let Some(row) = table.rows.iter().find(|r| r.spec.contains(&d.version)) else { continue };
            for (column, value) in &row.values {
                let package = normalize_name(column);
                if matrix.packages.contains(&package)
                    && let Ok(spec) = VersionSpecifiers::from_str(value)
                {
                    out.push(Constraint {
                        source: d.name.clone(),
                        package,
                        spec,
                        because: format!(
                            "{} {} works with {column}{value} ({})",
                            d.name,
                            d.version.raw(),
                            table.name
                        ),
                    });
                }
            }
        }
    }
    out
}

struct Constraint {
    /// The installed package that imposes it.
    source: String,
    package: String,
    spec: VersionSpecifiers,
    because: String,
}

/// Planned ranges by name: the fixes chosen so far, and a candidate's.
type Ranges<'a> = BTreeMap<&'a str, Vec<&'a VersionSpecifiers>>;

/// The fixes chosen so far for one environment, indexed so that judging
/// one more fix costs what that fix touches, not what was chosen before:
/// planning stays linear in findings (one `--expect` each, or thousands of
/// declared requirements).
struct Chosen<'a> {
    matrix: &'a Matrix,
    python: Option<&'a crate::version::Ver>,
    effects: Vec<Effect>,
    /// Every package the chosen fixes install or uninstall.
    touched: BTreeSet<String>,
    /// What they uninstall and do not install again.
    removed: BTreeSet<String>,
    /// What they install, with the ranges asked (none for a bare name).
    specs: BTreeMap<String, Vec<VersionSpecifiers>>,
    /// Constraints of the installed packages, by the package constrained.
    kept: Vec<Constraint>,
    kept_by_name: BTreeMap<String, Vec<usize>>,
    /// A column of some table → the table keys whose release check reads it.
    dependents: BTreeMap<String, BTreeSet<&'a str>>,
    /// The planned names no release fits (with why), for the chosen fixes.
    failing: BTreeMap<String, String>,
}

impl<'a> Chosen<'a> {
    fn new(snapshot: &Snapshot, env: Option<&'a PythonEnv>, matrix: &'a Matrix) -> Self {
        let kept = env.map(|env| kept_constraints(snapshot, env, matrix)).unwrap_or_default();
        let mut kept_by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, c) in kept.iter().enumerate() {
            kept_by_name.entry(c.package.clone()).or_default().push(i);
        }
        let mut dependents: BTreeMap<String, BTreeSet<&'a str>> = BTreeMap::new();
        for table in matrix.tables.values() {
            for column in table.rows.iter().flat_map(|r| r.values.keys()) {
                dependents
                    .entry(normalize_name(column))
                    .or_default()
                    .extend(table.key.split('|').map(str::trim));
            }
        }
        Self {
            matrix,
            python: env.and_then(|e| e.version.found()),
            effects: Vec::new(),
            touched: BTreeSet::new(),
            removed: BTreeSet::new(),
            specs: BTreeMap::new(),
            kept,
            kept_by_name,
            dependents,
            failing: BTreeMap::new(),
        }
    }

    /// The planned ranges of the names given, with `candidate`'s added.
    fn ranges<'r>(&'r self, candidate: &'r Effect, names: &BTreeSet<&'r str>) -> Ranges<'r> {
        let mut planned: Ranges<'r> = BTreeMap::new();
        for &name in names {
            if let Some(specs) = self.specs.get(name) {
                planned.entry(name).or_default().extend(specs.iter());
            }
        }
        for i in &candidate.installs {
            planned.entry(i.name.as_str()).or_default().extend(i.spec.iter());
        }
        planned
    }

    /// The names whose release check reads the ranges of `names`.
    fn affected<'r>(&'r self, names: impl Iterator<Item = &'r str>) -> BTreeSet<&'r str> {
        let mut out = BTreeSet::new();
        for name in names {
            out.insert(name);
            if let Some(keys) = self.dependents.get(name) {
                out.extend(keys.iter().copied());
            }
        }
        out
    }

    /// Whether a release of each affected name fits the planned ranges,
    /// `extra` being the candidate's installs (none when accepting).
    fn release_checks<'r>(
        &'r self,
        extra: &'r Effect,
        affected: &BTreeSet<&'r str>,
    ) -> BTreeMap<&'r str, String> {
        // Every range a check may read: the affected names' and their tables' columns.
        let mut reads: BTreeSet<&str> = affected.clone();
        for table in self.matrix.tables.values() {
            if table.key.split('|').any(|k| affected.contains(k.trim())) {
                for column in table.rows.iter().flat_map(|r| r.values.keys()) {
                    if let Some((name, _)) = self.specs.get_key_value(normalize_name(column).as_str()) {
                        reads.insert(name.as_str());
                    }
                }
            }
        }
        let planned = self.ranges(extra, &reads);
        let lookup = |name: &str| planned.get(name).cloned();
        let mut failing = BTreeMap::new();
        for &name in affected {
            let Some(specs) = planned.get(name) else { continue };
            if let Some(why) = no_release_fits(name, specs, &lookup, self.python, self.matrix, None) {
                failing.insert(name, why);
            }
        }
        failing
    }

    /// What `candidate` would conflict with, given the fixes chosen so far.
    fn conflict(&self, candidate: &Effect) -> Option<String> {
        let mine: BTreeSet<&str> = candidate.names().collect();
        let touched = |name: &str| mine.contains(name) || self.touched.contains(name);
        let removes = candidate.removes();
        for Install { name, spec, .. } in &candidate.installs {
            if self.removed.contains(name) || removes.contains(&name.as_str()) {
                return Some(format!("another fix uninstalls {name}"));
            }
            let Some(spec) = spec else { continue };
            let mut specs: Vec<&VersionSpecifiers> = vec![spec];
            let mut reasons = Vec::new();
            for s in self.specs.get(name).into_iter().flatten() {
                specs.push(s);
                reasons.push(format!("another fix installs {name}{s}"));
            }
            let kept = self.kept_by_name.get(name).into_iter().flatten().map(|&i| &self.kept[i]);
            for c in kept.filter(|c| !touched(&c.source)) {
                specs.push(&c.spec);
                reasons.push(c.because.clone());
            }
            if !satisfiable(&specs) {
                // Name the first constraint that, alone, contradicts the fix.
                let culprit = specs[1..]
                    .iter()
                    .zip(&reasons)
                    .find(|(s, _)| !satisfiable(&[spec, s]))
                    .map_or_else(|| reasons.join("; "), |(_, r)| r.clone());
                return Some(format!("{name}{spec} conflicts with: {culprit}"));
            }
        }
        // The matrix's tables: some release in each planned range must work
        // with the other planned ranges and with this Python. Only the
        // checks that read the candidate's ranges can change; the first
        // failing name, in name order, is the answer.
        let affected = self.affected(candidate.installs.iter().map(|i| i.name.as_str()));
        let fresh = self.release_checks(candidate, &affected);
        let earlier = self.failing.iter().filter(|(n, _)| !affected.contains(n.as_str()));
        let first_fresh = fresh.iter().next().map(|(n, why)| (*n, why));
        let first_earlier = earlier.map(|(n, why)| (n.as_str(), why)).next();
        match (first_fresh, first_earlier) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a.1 } else { b.1 }.clone()),
            (Some((_, why)), None) | (None, Some((_, why))) => Some(why.clone()),
            (None, None) => None,
        }
    }

    /// Adds a fix to the chosen ones.
    fn choose(&mut self, effect: Effect) {
        self.touched.extend(effect.names().map(str::to_string));
        self.removed.extend(effect.removes().into_iter().map(str::to_string));
        for i in &effect.installs {
            self.specs.entry(i.name.clone()).or_default().extend(i.spec.iter().cloned());
        }
        let none = Effect::default();
        let affected: BTreeSet<String> = self
            .affected(effect.installs.iter().map(|i| i.name.as_str()))
            .into_iter()
            .map(str::to_string)
            .collect();
        let names: BTreeSet<&str> = affected.iter().map(String::as_str).collect();
        let fresh: BTreeMap<String, String> =
            self.release_checks(&none, &names).into_iter().map(|(n, why)| (n.to_string(), why)).collect();
        for name in &affected {
            self.failing.remove(name);
        }
        self.failing.extend(fresh);
        self.effects.push(effect);
    }
}

/// Whether the matrix knows a release of `name` inside `specs` whose table
/// row agrees with every other planned range (and with `python`). Tables
/// that say nothing about the range, or about the others, raise nothing.
fn no_release_fits<'s>(
    name: &str,
    specs: &[&'s VersionSpecifiers],
    planned: &dyn Fn(&str) -> Option<Vec<&'s VersionSpecifiers>>,
    python: Option<&crate::version::Ver>,
    matrix: &Matrix,
    published_for: Option<WheelPlatform>,
) -> Option<String> {
    // The compatibility tables, or the releases published for one platform.
    let tables = matrix.tables.values().filter(|t| match published_for {
        None => t.published.is_none(),
        Some(p) => t.published == Some(p),
    });
    for table in tables.filter(|t| t.key.split('|').any(|k| k.trim() == name)) {
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| {
                VersionSpecifiers::from_str(&r.versions).is_ok_and(|rs| {
                    let mut all = specs.to_vec();
                    all.push(&rs);
                    satisfiable(&all)
                })
            })
            .collect();
        if rows.is_empty() {
            if table.published.is_some() {
                let spec_text = specs.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
                return Some(format!("the package index has no {name} release {spec_text} ({})", table.name));
            }
            continue;
        }
        let mut blocker = None;
        let fits = rows.iter().any(|row| {
            row.values.iter().all(|(column, value)| {
                let Ok(bound) = VersionSpecifiers::from_str(value) else { return true };
                let ok = if column == "python" {
                    python.is_none_or(|p| p.parsed().is_none_or(|v| bound.contains(v)))
                } else if let Some(mut all) = planned(normalize_name(column).as_str()) {
                    all.push(&bound);
                    satisfiable(&all)
                } else {
                    true
                };
                if !ok && blocker.is_none() {
                    blocker = Some(column.clone());
                }
                ok
            })
        });
        if !fits {
            let spec_text = specs.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
            let blocker = blocker.unwrap_or_default();
            let other = if blocker == "python" {
                format!("Python {}", python.map(|p| p.raw()).unwrap_or("?"))
            } else {
                let s = planned(normalize_name(&blocker).as_str()).unwrap_or_default();
                format!("{blocker}{}", s.iter().map(ToString::to_string).collect::<Vec<_>>().join(","))
            };
            return Some(format!(
                "no {name}{} release works with {other} ({})",
                if spec_text.is_empty() { String::new() } else { format!(" {spec_text}") },
                table.name
            ));
        }
    }
    None
}

/// Why the package index cannot serve one of a fix's installs, by the
/// releases it publishes (`matrix/published.yaml`).
enum Unserved {
    /// No release in the range exists at all.
    NoRelease(String),
    /// Releases exist, but none has a wheel for this Python.
    NotForPython(String),
}

/// Whether the package index serves every install of a fix for this
/// Python. A nightly index serves what the published list does not know.
fn unpublished(effect: &Effect, target: Target<'_>, matrix: &Matrix) -> Option<Unserved> {
    let none = |_: &str| None;
    let platform = Some(target.platform);
    effect.installs.iter().filter(|i| !i.options.contains("nightly")).find_map(|i| {
        let specs: Vec<&VersionSpecifiers> = i.spec.iter().collect();
        if let Some(why) = no_release_fits(&i.name, &specs, &none, None, matrix, platform) {
            return Some(Unserved::NoRelease(why));
        }
        no_release_fits(&i.name, &specs, &none, target.python, matrix, platform).map(Unserved::NotForPython)
    })
}

/// The platform a snapshot's system is, as far as it says: Linux on
/// x86_64 unless it names Windows or aarch64.
fn wheel_platform(system: Option<&crate::snapshot::System>) -> WheelPlatform {
    let Some(system) = system else { return WheelPlatform::LinuxX86_64 };
    if system.os.found().is_some_and(|os| os.to_ascii_lowercase().contains("windows")) {
        WheelPlatform::WindowsX86_64
    } else if system.arch == "aarch64" {
        WheelPlatform::LinuxAarch64
    } else {
        WheelPlatform::LinuxX86_64
    }
}

/// What a fix is installed into: the environment's Python and platform.
#[derive(Clone, Copy)]
struct Target<'a> {
    python: Option<&'a crate::version::Ver>,
    platform: WheelPlatform,
}

/// Drops the fixes that ask for a release the package index does not
/// serve for this Python. When that leaves a finding without a fix, it
/// says so, with the first reason.
fn drop_unpublished(f: &mut super::Finding, target: Target<'_>, matrix: &Matrix) {
    let mut first_reason = None;
    f.fixes.retain(|fix| match unpublished(&effect_of(fix), target, matrix) {
        Some(why) => {
            first_reason.get_or_insert(why);
            false
        }
        None => true,
    });
    if !f.fixes.is_empty() {
        return;
    }
    match first_reason {
        Some(Unserved::NoRelease(why)) => {
            f.fixes.push(format!("no release on the package index fixes this yet: {why}"))
        }
        Some(Unserved::NotForPython(why)) => {
            f.fixes.push(format!("the fix needs a newer Python than this one: {why}"))
        }
        None => {}
    }
}

/// Chooses each finding's fix against the rest and merges the result.
pub(super) fn plan(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    let mut subjects: Vec<Option<String>> = Vec::new();
    for f in &j.findings {
        if !subjects.contains(&f.subject) {
            subjects.push(f.subject.clone());
        }
    }
    for subject in subjects {
        let env = subject.as_ref().and_then(|s| snapshot.pythons.iter().find(|p| &p.label() == s));
        let mut chosen = Chosen::new(snapshot, env, matrix);
        // A pasted ticket's own error lines have no subject; its one
        // Python is still the one they ran in.
        let only = match snapshot.pythons.as_slice() {
            [one] => one.version.found(),
            _ => None,
        };
        let target =
            Target { python: chosen.python.or(only), platform: wheel_platform(snapshot.system.found()) };
        for f in j.findings.iter_mut().filter(|f| f.subject == subject) {
            drop_unpublished(f, target, matrix);
        }
        let mut conflicts = Vec::new();
        // Notes (info) suggest, they do not need fixing.
        let needs_fixing = |f: &super::Finding| f.severity >= Severity::Warning && !f.fixes.is_empty();
        for f in j.findings.iter_mut().filter(|f| f.subject == subject && needs_fixing(f)) {
            let effects: Vec<Effect> = f.fixes.iter().map(|x| effect_of(x)).collect();
            let verdicts: Vec<Option<String>> = effects.iter().map(|e| chosen.conflict(e)).collect();
            match verdicts.iter().position(Option::is_none) {
                Some(i) => {
                    if i > 0 {
                        let fix = f.fixes.remove(i);
                        f.fixes.insert(0, fix);
                    }
                    chosen.choose(effects[i].clone());
                }
                None => {
                    conflicts.push(format!(
                        "[{}] {}",
                        f.code,
                        verdicts[0].as_deref().unwrap_or("its fixes conflict with the others")
                    ));
                    chosen.choose(effects[0].clone());
                }
            }
        }
        let installer = Installer::for_env(env, matrix);
        for f in j.findings.iter_mut().filter(|f| f.subject == subject) {
            for fix in &mut f.fixes {
                *fix = installer.rewrite(fix);
            }
        }
        let steps = merge(&chosen.effects, &installer);
        if !steps.is_empty() || !conflicts.is_empty() {
            j.plans.push(FixPlan { subject, steps, conflicts });
        }
    }
}

/// How to install into the environment that was checked. `python -m pip`
/// reaches the wrong interpreter when the checked one is not what `python`
/// runs (a `.venv` that is not active, a `--python` path), and fails in a uv
/// environment without pip; conda-installed packages are conda's to change.
pub(crate) struct Installer {
    /// The command before `install` / `uninstall` (`python -m pip`, `uv pip`).
    pip: String,
    /// Said after `install` / `uninstall` (` --python /env/bin/python` for uv).
    target: String,
    /// `conda install -p PREFIX`, for the packages conda installed.
    conda: Option<String>,
    /// Distributions conda installed here, with the name conda knows them by.
    conda_owned: BTreeMap<String, String>,
    /// What runs the next command after one succeeded: `&&`, which Windows
    /// PowerShell 5.1 (the shell a Windows terminal opens) refuses, so
    /// `;` for an interpreter at a Windows path.
    then: &'static str,
}

/// A path as one word of a command line: as it is when nothing in it needs
/// quoting; else quoted for POSIX shells, or for PowerShell (the shell a
/// Windows terminal opens) where it is a Windows path:
/// `& "C:\Users\Jo Doe\env\Scripts\python.exe"`, since PowerShell runs a
/// quoted path only after `&`.
fn shell_word(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/\\:._-+@%,=".contains(c);
    if path.chars().all(plain) {
        return path.to_string();
    }
    if is_windows_path(path) {
        return format!("& \"{}\"", path.replace('"', ""));
    }
    shlex::try_quote(path).map_or_else(|_| path.to_string(), |q| q.into_owned())
}

/// `C:\\Users\\…`: a path only Windows writes.
fn is_windows_path(path: &str) -> bool {
    path.as_bytes().get(1) == Some(&b':') && path.contains('\\')
}

impl Installer {
    pub(crate) fn for_env(env: Option<&PythonEnv>, matrix: &Matrix) -> Self {
        let plain = Self {
            pip: "python -m pip".into(),
            target: String::new(),
            conda: None,
            conda_owned: BTreeMap::new(),
            then: " && ",
        };
        let Some(env) = env else { return plain };
        let exe = shell_word(&env.executable.display().to_string());
        let has_pip = env.distribution("pip").is_some();
        let (pip, target) = match env.source {
            PythonSource::Pasted => return plain,
            // uv makes environments without pip; its own pip speaks for them.
            _ if !has_pip && env.kind == Some(EnvKind::Uv) => {
                ("uv pip".to_string(), format!(" --python {exe}"))
            }
            // The active environment's python is first on PATH.
            PythonSource::VirtualEnv | PythonSource::CondaPrefix => ("python -m pip".into(), String::new()),
            PythonSource::SearchPath => {
                let name =
                    env.executable.file_name().map_or("python".into(), |n| n.to_string_lossy().into_owned());
                (format!("{name} -m pip"), String::new())
            }
            PythonSource::Flag | PythonSource::DotVenv | PythonSource::PyLauncher => {
                (format!("{exe} -m pip"), String::new())
            }
        };
        let conda_owned: BTreeMap<String, String> = env
            .distributions
            .found()
            .into_iter()
            .flatten()
            .filter(|d| d.installer.as_deref() == Some("conda"))
            .map(|d| {
                let conda_name = matrix
                    .stack
                    .iter()
                    .find(|p| p.distributions.contains(&d.name))
                    .and_then(|p| p.conda.first().cloned())
                    .unwrap_or_else(|| d.name.clone());
                (d.name.clone(), conda_name)
            })
            .collect();
        let conda = env
            .interpreter
            .found()
            .map(|i| format!("conda install -p {}", shell_word(&i.prefix.display().to_string())));
        let then = if is_windows_path(&env.executable.display().to_string()) { "; " } else { " && " };
        Self { pip, target, conda: conda.filter(|_| !conda_owned.is_empty()), conda_owned, then }
    }

    fn install(&self) -> String {
        format!("{} install{}", self.pip, self.target)
    }

    fn uninstall(&self) -> String {
        format!("{} uninstall{}", self.pip, self.target)
    }

    /// A fix written for `python -m pip`, for this environment.
    pub(crate) fn rewrite(&self, fix: &str) -> String {
        fix.split(" && ")
            .map(|part| {
                let trimmed = part.trim_start();
                for (from, to) in [
                    ("python -m pip install", self.install()),
                    ("python -m pip uninstall", self.uninstall()),
                    ("pip install", self.install()),
                    ("pip uninstall", self.uninstall()),
                ] {
                    if let Some(rest) = trimmed.strip_prefix(from) {
                        return format!("{to}{rest}");
                    }
                }
                part.to_string()
            })
            .collect::<Vec<_>>()
            .join(self.then)
    }
}

/// One package's requirements merged: its extras and its specifiers.
type Merged<'a> = (Vec<&'a str>, Vec<String>);

/// Uninstalls first, then one `pip install` per index with every
/// requirement merged, then the rest in the order chosen.
fn merge(chosen: &[Effect], installer: &Installer) -> Vec<String> {
    let mut steps = Vec::new();
    let mut uninstall: Vec<&str> = Vec::new();
    let mut listed: BTreeSet<&str> = BTreeSet::new();
    for e in chosen {
        for n in &e.uninstalls {
            if listed.insert(n) {
                uninstall.push(n);
            }
        }
    }
    if !uninstall.is_empty() {
        steps.push(format!("{} -y {}", installer.uninstall(), uninstall.join(" ")));
    }
    // One `pip install` per set of options, requirements merged by name
    // (their extras and specifiers together).
    let mut by_options: BTreeMap<&str, BTreeMap<&str, Merged<'_>>> = BTreeMap::new();
    for e in chosen {
        for i in &e.installs {
            let (extras, specs) =
                by_options.entry(i.options.as_str()).or_default().entry(i.name.as_str()).or_default();
            for x in &i.extras {
                if !extras.contains(&x.as_str()) {
                    extras.push(x);
                }
            }
            for s in i.spec.iter().flat_map(|s| s.iter()).map(ToString::to_string) {
                if !specs.contains(&s) {
                    specs.push(s);
                }
            }
        }
    }
    let mut conda: Vec<String> = Vec::new();
    for (options, reqs) in by_options {
        let mut pip = Vec::new();
        for (name, (extras, specs)) in reqs {
            let extras = if extras.is_empty() { String::new() } else { format!("[{}]", extras.join(",")) };
            // A package conda installed (without pip's options or extras) is conda's to change.
            if let (Some(conda_name), true) =
                (installer.conda_owned.get(name), options.is_empty() && extras.is_empty())
            {
                conda.push(format!("\"{conda_name}{}\"", specs.join(",")));
            } else if specs.is_empty() && extras.is_empty() {
                pip.push(name.to_string());
            } else {
                pip.push(format!("\"{name}{extras}{}\"", specs.join(",")));
            }
        }
        if !pip.is_empty() {
            let options = if options.is_empty() { String::new() } else { format!(" {options}") };
            steps.push(format!("{}{options} {}", installer.install(), pip.join(" ")));
        }
    }
    if let (Some(command), false) = (&installer.conda, conda.is_empty()) {
        steps.push(format!("{command} {}", conda.join(" ")));
    }
    let mut said: BTreeSet<String> = steps.iter().cloned().collect();
    for e in chosen {
        for o in &e.other {
            if said.insert(o.clone()) {
                steps.push(o.clone());
            }
        }
    }
    // Said after a pip command, once every install has run.
    for e in chosen.iter().filter(|e| !e.installs.is_empty()) {
        for t in &e.then {
            if said.insert(t.clone()) {
                steps.push(t.clone());
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pip_commands_and_leaves_prose_alone() {
        let e = effect_of(
            r#"python -m pip uninstall -y onnxruntime onnxruntime-gpu && python -m pip install "onnxruntime-gpu==1.20.1"   # keep the GPU one"#,
        );
        assert_eq!(e.uninstalls, ["onnxruntime", "onnxruntime-gpu"]);
        assert_eq!(e.installs.len(), 1);
        assert_eq!(e.installs[0].name, "onnxruntime-gpu");
        assert!(e.other.is_empty());
        let e = effect_of(
            "python -m pip install --force-reinstall torch torchvision --index-url https://download.pytorch.org/whl/cu126",
        );
        assert_eq!(e.installs.len(), 2);
        assert_eq!(
            e.installs[1].options,
            "--force-reinstall --index-url https://download.pytorch.org/whl/cu126"
        );
        let e = effect_of(
            r#"python -m pip install "torch==1.8.1+cu111" -f https://download.pytorch.org/whl/torch_stable.html  # with torchvision"#,
        );
        assert_eq!(e.installs[0].options, "-f https://download.pytorch.org/whl/torch_stable.html");
        assert!(e.other.is_empty(), "{:?}", e.other);
        let e = effect_of("python -m pip install ./wheels/onnx-1.17.0-cp311-linux_x86_64.whl");
        assert!(e.installs.is_empty());
        assert_eq!(e.other.len(), 1);
        let e = effect_of("upgrade the NVIDIA driver to 580.65.06 or newer");
        assert_eq!(e.other, ["upgrade the NVIDIA driver to 580.65.06 or newer"]);
        assert!(e.installs.is_empty());
        // A `;` the shell splitter does not know stays where it was written.
        let fix = r#"python -m pip install --upgrade "torch>=1.12"; then export with opset 16"#;
        assert_eq!(effect_of(fix).other, [fix]);
    }

    #[test]
    fn a_comment_that_says_what_to_do_next_becomes_a_step() {
        let chosen = vec![
            effect_of(r#"python -m pip install "numpy<2""#),
            effect_of(
                r#"python -m pip install "nvidia-cublas"   # NVIDIA's wheels; then call onnxruntime.preload_dlls()"#,
            ),
            effect_of(r#"python -m pip install "protobuf>=3.20.2,<4"   # the range onnx declares"#),
        ];
        assert_eq!(
            merge(&chosen, &Installer::for_env(None, &Matrix::load(&[]).unwrap())),
            [
                r#"python -m pip install "numpy<2" nvidia-cublas "protobuf>=3.20.2,<4""#,
                "then call onnxruntime.preload_dlls()",
            ]
        );
        assert_eq!(follow_up(r#"python -m pip install "a#then b""#), None);
        assert_eq!(follow_up("python -m pip install a"), None);
    }

    #[test]
    fn satisfiability_of_pep440_ranges() {
        let s = |t: &str| VersionSpecifiers::from_str(t).unwrap();
        assert!(satisfiable(&[&s("<2"), &s(">=1.23.2")]));
        assert!(!satisfiable(&[&s(">=3.12.2,<=3.20.3"), &s(">=6.31.1")]));
        assert!(satisfiable(&[&s("==1.20.*"), &s(">=1.20.3")]));
        assert!(!satisfiable(&[&s("==1.20.*"), &s(">=1.21")]));
        assert!(satisfiable(&[&s(">1.2"), &s("<1.3")]));
        assert!(!satisfiable(&[&s("<1.2"), &s(">=1.2")]));
        assert!(satisfiable(&[&s("~=8.9"), &s("<9")]));
        assert!(!satisfiable(&[&s("==2.7.1"), &s("!=2.7.1")]));
    }

    #[test]
    fn a_windows_interpreter_gets_commands_powershell_5_runs() {
        let installer = Installer {
            pip: format!("{} -m pip", shell_word(r"C:\Users\Jo Doe\env\Scripts\python.exe")),
            target: String::new(),
            conda: None,
            conda_owned: BTreeMap::new(),
            then: "; ",
        };
        let fix =
            r#"python -m pip uninstall -y onnxruntime && python -m pip install "onnxruntime-gpu==1.20.1""#;
        assert_eq!(
            installer.rewrite(fix),
            r#"& "C:\Users\Jo Doe\env\Scripts\python.exe" -m pip uninstall -y onnxruntime; & "C:\Users\Jo Doe\env\Scripts\python.exe" -m pip install "onnxruntime-gpu==1.20.1""#
        );
        assert!(is_windows_path(r"C:\Python311\python.exe") && !is_windows_path("/usr/bin/python3"));
    }

    #[test]
    fn merges_requirements_of_several_fixes_and_keeps_their_options() {
        let chosen = vec![
            effect_of(r#"python -m pip install "numpy<2""#),
            effect_of(r#"python -m pip install "numpy<2""#),
            effect_of(r#"python -m pip install "protobuf>=3.20.2,<4"  # for onnx"#),
            effect_of(r#"python -m pip install --upgrade "onnxruntime""#),
        ];
        assert_eq!(
            merge(&chosen, &Installer::for_env(None, &Matrix::load(&[]).unwrap())),
            [
                r#"python -m pip install "numpy<2" "protobuf>=3.20.2,<4""#,
                "python -m pip install --upgrade onnxruntime",
            ]
        );
    }
}
