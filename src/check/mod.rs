//! Rules judge and never probe.
//!
//! [`check`] evaluates every rule of the matrix against a snapshot and
//! returns the findings plus one outcome per rule and subject (passed,
//! fired, not applicable, or not evaluated with the reason), which is what
//! lets a report say "checked and fine" apart from "could not check".
//!
//! Data rules are evaluated here generically; the builtin checks (imports,
//! declared requirements, shadowing) live in [`builtin`] and take their text
//! from the matrix like every other rule.

mod builtin;
pub mod facts;
pub mod needs;
mod plan;
pub mod profile;
mod wheels;

use serde::{Deserialize, Serialize};

use std::borrow::Cow;

use crate::matrix::template::{self, Slot, Template};
use crate::matrix::{
    Clause, Component, Cond, Condition, Lookup, Matrix, Row, Rule, RuleKind, Severity, Table,
};
use crate::snapshot::{FactKey, FactRef, Probed, PythonEnv, Snapshot};

use crate::version::Ver;

use facts::{Fact, Facts};
pub use plan::FixPlan;

/// One problem found, with everything a user needs to act on it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable kebab-case code (`onnxruntime-built-against-numpy1`).
    pub code: String,
    pub severity: Severity,
    pub components: Vec<Component>,
    /// The Python environment it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub message: String,
    pub why: String,
    pub fixes: Vec<String>,
    pub sources: Vec<String>,
    /// Raw observations backing the finding (an import's exception text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// A symptom's likely causes, most likely first, where the facts do
    /// not decide between them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub likely: Vec<LikelyCause>,
}

/// One likely cause of a symptom, as reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LikelyCause {
    pub cause: String,
    /// The command that confirms or rules it out.
    pub confirm: String,
    pub fix: String,
    pub source: String,
}

impl Finding {
    /// The components the finding is about. `python`, which every check of
    /// an environment names, counts only when nothing else is named: a
    /// package's missing requirement is about the package, not the
    /// interpreter.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &Component> {
        let only_python = self.components.iter().all(|c| *c == Component::PYTHON);
        self.components.iter().filter(move |c| only_python || **c != Component::PYTHON)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Fired,
    NotApplicable,
    NotEvaluated {
        reason: String,
        /// The release the matrix has no row for, when that is why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unknown: Option<UnknownRelease>,
    },
}

impl Outcome {
    /// Not evaluated, for a reason that is not a missing matrix row.
    pub(crate) fn not_evaluated(reason: impl Into<String>) -> Self {
        Self::NotEvaluated { reason: reason.into(), unknown: None }
    }
}

/// A version of an installed component that no row of a matrix table
/// covers: the matrix is behind (or the release is unusual), and the rules
/// that need the row could not judge it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnknownRelease {
    /// The fact the table is looked up by (`onnxruntime|onnxruntime-gpu`, `torch.cuda`).
    pub fact: String,
    pub version: String,
    /// Above every release the table names.
    pub newer: bool,
}

/// How one rule went for one subject.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RuleOutcome {
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Judgement {
    pub findings: Vec<Finding>,
    pub outcomes: Vec<RuleOutcome>,
    /// The fixes chosen against each other, per environment.
    pub plans: Vec<FixPlan>,
}

/// Judges a snapshot against the matrix.
pub fn check(snapshot: &Snapshot, matrix: &Matrix) -> Judgement {
    let mut j = Judgement::default();
    let data_rules: Vec<&Rule> =
        matrix.rules.iter().filter(|r| matches!(r.kind, RuleKind::Facts { .. })).collect();

    // `model --target ...` judges the model alone: the machine was not probed.
    let model_only = !snapshot.targets.is_empty() && snapshot.pythons.is_empty();
    for rule in data_rules.iter().filter(|r| is_machine_rule(r) && (!model_only || is_model_rule(r))) {
        let facts = Facts::for_env(snapshot, None, matrix);
        record(&mut j, rule, None, evaluate(rule, &facts, matrix));
    }
    for env in &snapshot.pythons {
        let subject = Some(env.label());
        let first = j.findings.len();
        let facts = Facts::for_env(snapshot, Some(env), matrix);
        for rule in data_rules.iter().filter(|r| !is_machine_rule(r)) {
            record(&mut j, rule, subject.clone(), evaluate(rule, &facts, matrix));
        }
        builtin::check_env(&mut j, first, snapshot, env, matrix);
    }
    if snapshot.pythons.is_empty() && !model_only {
        for rule in data_rules.iter().filter(|r| !is_machine_rule(r)) {
            j.outcomes.push(RuleOutcome {
                code: rule.code.clone(),
                subject: None,
                outcome: Outcome::not_evaluated("no Python environment was found"),
            });
        }
    }
    builtin::check_machine(&mut j, snapshot, matrix);
    signatures(&mut j, snapshot, matrix);
    supersede(&mut j, matrix);

    rank(&mut j.findings, snapshot, matrix);
    j.findings.dedup();
    plan::plan(&mut j, snapshot, matrix);
    j.outcomes.sort_by(|a, b| (&a.code, &a.subject).cmp(&(&b.code, &b.subject)));
    j
}

/// Orders findings by what to fix first: the machine's, then each
/// environment's in the order they were found; within one, what is wrong
/// with a deeper layer of the stack before what it explains (protobuf
/// before onnx, the interpreter before any package), errors before
/// warnings at the same depth, and notes last.
fn rank(findings: &mut [Finding], snapshot: &Snapshot, matrix: &Matrix) {
    let subject_index = |s: &Option<String>| match s {
        None => 0,
        Some(label) => {
            1 + snapshot.pythons.iter().position(|p| &p.label() == label).unwrap_or(usize::MAX - 1)
        }
    };
    let depth = |f: &Finding| {
        let of = |c: &Component| {
            if *c == Component::PYTHON {
                0
            } else if let Some(i) = matrix.stack.iter().position(|p| &p.component == c) {
                1 + i
            } else {
                // Machine parts matter to an environment through a package.
                1 + matrix.stack.len()
            }
        };
        f.parts().map(of).min().unwrap_or(0)
    };
    findings.sort_by_cached_key(|f| {
        (
            subject_index(&f.subject),
            f.severity == Severity::Info,
            depth(f),
            std::cmp::Reverse(f.severity),
            f.code.clone(),
            f.message.clone(),
        )
    });
}

/// Rules about a model and the runtime it is judged against.
fn is_model_rule(rule: &Rule) -> bool {
    rule_facts(rule).all(FactKey::is_model)
}

/// Every fact a data rule reads: its clauses' and its lookup's.
pub(super) fn rule_facts(rule: &Rule) -> impl Iterator<Item = &FactKey> {
    let (clauses, lookup) = match &rule.kind {
        RuleKind::Facts { when, require, unless, lookup, .. } => {
            (Some(when.iter().chain(require).chain(unless)), lookup.as_ref())
        }
        _ => (None, None),
    };
    let by = lookup.and_then(|l| l.fact.as_ref());
    clauses.into_iter().flatten().map(|c| &c.fact).chain(by).flat_map(FactRef::keys)
}

/// Rules that name only facts of the machine are judged once.
fn is_machine_rule(rule: &Rule) -> bool {
    matches!(rule.kind, RuleKind::Facts { .. }) && rule_facts(rule).all(FactKey::is_machine)
}

/// Drops the findings a fired rule `supersedes` (the matrix's prediction,
/// where the runtime answered the same question itself), in the same place
/// or machine-wide. Their outcomes become "not applicable": the question
/// was answered, by the runtime.
fn supersede(j: &mut Judgement, matrix: &Matrix) {
    let mut dropped: Vec<&str> = Vec::new();
    // A fired rule whose finding came out under another code (a signature
    // that `wheels` answered) supersedes what it would have.
    let fired = j.outcomes.iter().filter(|o| o.outcome == Outcome::Fired).map(|o| &o.code);
    for code in j.findings.iter().map(|f| &f.code).chain(fired) {
        let Some(rule) = matrix.rules.iter().find(|r| &r.code == code) else { continue };
        dropped.extend(rule.supersedes.iter().map(String::as_str));
    }
    if dropped.is_empty() {
        return;
    }
    let superseded = |code: &str| dropped.contains(&code);
    j.findings.retain(|f| !superseded(&f.code));
    for o in j.outcomes.iter_mut().filter(|o| o.outcome == Outcome::Fired && superseded(&o.code)) {
        o.outcome = Outcome::NotApplicable;
    }
}

fn record(j: &mut Judgement, rule: &Rule, subject: Option<String>, result: (Outcome, Option<Finding>)) {
    let (outcome, finding) = result;
    if let Some(mut f) = finding {
        f.subject.clone_from(&subject);
        j.findings.push(f);
    }
    j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject, outcome });
}

/// Records that a signature matched no line of the paste, or none it is about.
fn not_applicable(j: &mut Judgement, rule: &Rule) {
    j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject: None, outcome: Outcome::NotApplicable });
}

/// Error lines of a paste against the matrix's signatures. A line that a
/// fired rule explains becomes evidence of that finding; otherwise each
/// signature gives one finding with all the lines it matched.
fn signatures(j: &mut Judgement, snapshot: &Snapshot, matrix: &Matrix) {
    let Some(pasted) = &snapshot.pasted else { return };
    // Which signatures some line matches, from the one-pass set: only those
    // are compiled and run on their own.
    let matching = matrix.signatures_matching(pasted.error_lines.iter().map(|l| l.text.as_str()));
    for rule in explainers_first(matrix) {
        let RuleKind::Signature { regex, explained_by, .. } = &rule.kind else { continue };
        let seen = matching.as_ref().is_none_or(|m| m.contains(rule.code.as_str()));
        let Some(regex) = seen.then(|| regex.get()).flatten() else {
            not_applicable(j, rule);
            continue;
        };
        let hits: Vec<(&crate::snapshot::PastedLine, regex::Captures<'_>)> =
            pasted.error_lines.iter().filter_map(|l| regex.captures(&l.text).map(|c| (l, c))).collect();
        if hits.is_empty() {
            not_applicable(j, rule);
            continue;
        }
        let evidence: Vec<String> =
            hits.iter().map(|(l, _)| format!("line {}: {}", l.line, l.text)).collect();
        // Where the traceback names the package that failed, the line
        // explains only the findings about that package.
        let failed = failing_components(&hits, matrix);
        let about_failed = |f: &Finding| f.components.iter().any(|c| failed.contains(c));
        let narrowed = !failed.is_empty()
            && j.findings.iter().any(|f| explained_by.contains(&f.code) && about_failed(f));
        let mut explained = false;
        for f in
            j.findings.iter_mut().filter(|f| explained_by.contains(&f.code) && (!narrowed || about_failed(f)))
        {
            // The paste shows the failure a warning predicts: it happened.
            f.severity = f.severity.max(rule.severity);
            // Two signatures may explain the same line with one finding.
            for e in &evidence {
                if !f.evidence.contains(e) {
                    f.evidence.push(e.clone());
                }
            }
            explained = true;
        }
        if explained {
            j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject: None, outcome: Outcome::Passed });
            continue;
        }
        let caps = &hits[0].1;
        let mut params: Vec<(&str, String)> = regex
            .capture_names()
            .flatten()
            .map(|n| (n, caps.name(n).map_or_else(|| "?".to_string(), |m| m.as_str().to_string())))
            .collect();
        if let RuleKind::Signature { aten: Some(names), .. } = &rule.kind {
            params.extend(aten_params(names, caps, snapshot, matrix));
        }
        let mut component = None;
        if let RuleKind::Signature { api: Some(change), .. } = &rule.kind {
            // A line about an API the matrix has no history of, or whose
            // history the installed release contradicts, is not this rule's.
            let Some(reading) = hits.iter().find_map(|(_, c)| api_params(*change, c, snapshot, matrix))
            else {
                not_applicable(j, rule);
                continue;
            };
            params.extend(reading.params);
            component = Some((reading.component, reading.source));
        }
        let row = rule.kind.lookup().and_then(|l| signature_row(l, caps, snapshot, matrix));
        // A release whose wheel fits after all: pip is what is wrong.
        let mut f = wheels::older_pip(rule, caps, snapshot, matrix)
            .unwrap_or_else(|| builtin_finding_with_row(rule, None, &params, row));
        // The API's own history is the source that decides.
        if let Some((c, source)) = component {
            f.components = vec![c];
            f.sources.insert(0, source);
        }
        f.evidence = evidence;
        if let RuleKind::Signature { likely, .. } = &rule.kind
            && !likely.is_empty()
            && !with_causes(&mut f, likely, snapshot, matrix)
        {
            not_applicable(j, rule);
            continue;
        }
        j.findings.push(f);
        j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject: None, outcome: Outcome::Fired });
    }
}

/// A symptom's finding with its causes: the one the facts decide, named
/// with its fix in place of the hypotheses, or those the facts leave
/// possible, the commands that tell them apart first. False when the
/// facts rule out every cause the matrix knows: nothing to say.
fn with_causes(
    f: &mut Finding,
    likely: &[crate::matrix::Likely],
    snapshot: &Snapshot,
    matrix: &Matrix,
) -> bool {
    if let Some(cause) = decided_cause(likely, snapshot, matrix) {
        f.message = format!("{}: {}", f.message, cause.cause);
        f.severity = f.severity.max(Severity::Warning);
        f.fixes = vec![cause.fix.clone()];
        f.sources.insert(0, cause.source.clone());
        return true;
    }
    // An error whose facts decide none of its causes stands as it is.
    if f.severity > Severity::Info {
        return true;
    }
    f.likely = likely_causes(likely, snapshot, matrix);
    if f.likely.is_empty() {
        return false;
    }
    let mut fixes: Vec<String> = f.likely.iter().map(|l| l.confirm.clone()).collect();
    fixes.dedup();
    fixes.append(&mut f.fixes);
    f.fixes = fixes;
    true
}

/// The likely cause of a symptom that the paste's facts decide: the first
/// whose `decided_by` clauses are all true of them.
fn decided_cause<'m>(
    likely: &'m [crate::matrix::Likely],
    snapshot: &Snapshot,
    matrix: &Matrix,
) -> Option<&'m crate::matrix::Likely> {
    let facts = Facts::for_env(snapshot, snapshot.pythons.first(), matrix);
    let ctx =
        Ctx { facts: &facts, integrated: matrix.integrated_compute_capabilities(), row: None, no_row: None };
    likely.iter().find(|l| {
        !l.decided_by.is_empty() && l.decided_by.iter().all(|c| matches!(test(c, &ctx), Truth::Yes))
    })
}

/// The likely causes of a symptom that the paste's facts leave possible,
/// most likely first: a cause whose clause the facts contradict is
/// dropped; one no fact decides stays.
fn likely_causes(likely: &[crate::matrix::Likely], snapshot: &Snapshot, matrix: &Matrix) -> Vec<LikelyCause> {
    let facts = Facts::for_env(snapshot, snapshot.pythons.first(), matrix);
    let ctx =
        Ctx { facts: &facts, integrated: matrix.integrated_compute_capabilities(), row: None, no_row: None };
    likely
        .iter()
        .filter(|l| l.when.iter().all(|c| !matches!(test(c, &ctx), Truth::No)))
        .map(|l| LikelyCause {
            cause: l.cause.clone(),
            confirm: l.confirm.clone(),
            fix: l.fix.clone(),
            source: l.source.clone(),
        })
        .collect()
}

/// The components of the stack packages whose files the traceback frames
/// around the matched lines are in.
fn failing_components(
    hits: &[(&crate::snapshot::PastedLine, regex::Captures<'_>)],
    matrix: &Matrix,
) -> Vec<Component> {
    let mut out = Vec::new();
    for dir in hits.iter().flat_map(|(l, _)| &l.near) {
        let package = matrix.stack.iter().find(|p| p.module.split('.').next() == Some(dir.as_str()));
        if let Some(p) = package.filter(|p| !out.contains(&p.component)) {
            out.push(p.component.clone());
        }
    }
    out
}

/// What the matrix's history of Python APIs says of the API a line names
/// (`No module named 'torch.fx'`, `cannot import name 'X' from 'm'`,
/// `module 'm' has no attribute 'X'`, `export() got an unexpected keyword
/// argument 'k'`), read for `change`: `{api}`, `{api.package}`,
/// `{api.added}`, `{api.removed}`, and `{api.here}` (the installed release
/// where the paste states it), with the component of the API's package and
/// the source of its history.
/// None when the matrix knows no such change of that API, or when the
/// installed release is one that has the API: then something else is wrong.
fn api_params(
    change: crate::matrix::ApiChange,
    caps: &regex::Captures<'_>,
    snapshot: &Snapshot,
    matrix: &Matrix,
) -> Option<ApiReading> {
    use crate::matrix::ApiChange;
    let group = |n: &str| caps.name(n).map(|m| m.as_str().trim_matches(['\'', '"', '.']));
    let removed = change == ApiChange::Removed;
    let (name, api) = if let (Some(func), Some(kwarg)) = (group("func"), group("kwarg")) {
        // A keyword argument is named by its function's last name, or a
        // method's class and name (`FaceAnalysis.__init__`, Python 3.10's
        // wording); a bare dunder (`__init__`) names no function.
        if func.starts_with("__") {
            return None;
        }
        let call = format!("{func}({kwarg})");
        let mut found =
            matrix.python_apis.iter().filter(|(k, _)| *k == &call || k.ends_with(&format!(".{call}")));
        let one = found.next()?;
        if found.next().is_some() {
            return None;
        }
        one
    } else {
        let of = |m: &str, a: &str| group(m).zip(group(a)).map(|(m, a)| format!("{m}.{a}"));
        // A pickle names the class it cannot find and the module it looked in.
        let name = group("module")
            .map(String::from)
            .or_else(|| of("from", "name"))
            .or_else(|| of("of", "attr"))
            .or_else(|| of("pickled_in", "pickled"))?;
        // What a removed module held went with it (`torch._six.string_classes`).
        std::iter::successors(Some(name.as_str()), |n| n.rsplit_once('.').map(|(p, _)| p))
            .enumerate()
            .find_map(|(i, n)| matrix.python_apis.get_key_value(n).filter(|_| i == 0 || removed))?
    };
    let window = change == ApiChange::Window;
    let at = match change {
        ApiChange::Removed => api.removed.as_ref()?,
        ApiChange::Added => api.added.as_ref()?,
        ApiChange::Window => api.removed.as_ref().and(api.added.as_ref())?,
    };
    let at = Ver::new(at.as_str());
    // A package of the stack is found under any of its distributions; one
    // outside it (insightface, lightgbm) under its own name.
    let stack =
        matrix.stack.iter().find(|p| p.package == api.package || p.distributions.contains(&api.package));
    let provides = |name: &str| {
        stack.map_or(name == api.package, |s| name == s.package || s.distributions.iter().any(|d| d == name))
    };
    let installed = snapshot.pythons.iter().find_map(|env| match &env.distributions {
        Probed::Found(list) => list
            .iter()
            .find(|d| provides(&d.name))
            .and_then(|d| d.version.parsed().map(|v| (d.version.to_string(), v.clone()))),
        Probed::NotEvaluated(_) => None,
    });
    let here = match &installed {
        Some(_) if window => return None,
        Some((shown, v)) => {
            let before = at.parsed().is_some_and(|a| v < a);
            // Added later than the installed release, or removed by it.
            if before == removed {
                return None;
            }
            format!("{} {shown}", api.package)
        }
        // An API added once and removed later, with no release stated:
        // which of the two the line shows is not known.
        None if api.added.is_some() && api.removed.is_some() && !window => return None,
        None => format!("the {} installed", api.package),
    };
    let mut params = vec![("api", name.clone()), ("api.package", api.package.clone()), ("api.here", here)];
    params.extend(api.added.clone().map(|a| ("api.added", a)));
    params.extend(api.removed.clone().map(|r| ("api.removed", r)));
    let component = stack.map_or(Component::PYTHON, |s| s.component.clone());
    Some(ApiReading { params, component, source: api.source.clone() })
}

/// What [`api_params`] read of a line: the texts' placeholders, the
/// component of the API's package, and the source of its history.
struct ApiReading {
    params: Vec<(&'static str, String)>,
    component: Component,
    source: String,
}

/// What the matrix's exporter history says of the ATen operator the first
/// of `names` (`op|op2`) captured, written with or without `aten::`:
/// `{aten.opset}` always; `{aten.torch}`, the release to move to, only
/// when the paste's torch is older than it (or unknown) and some release
/// before it lacked the operator; `{aten.at_opset}` only when the paste's
/// torch already exports it and the opset is all it lacks.
fn aten_params(
    names: &str,
    caps: &regex::Captures<'_>,
    snapshot: &Snapshot,
    matrix: &Matrix,
) -> Vec<(&'static str, String)> {
    let op = names.split('|').find_map(|n| caps.name(n)).map(|m| m.as_str().trim_start_matches("aten::"));
    let Some(s) = op.and_then(|op| matrix.torch_symbolics.get(op)) else { return Vec::new() };
    let first = Ver::new(s.torch.as_str());
    let (Some(first), Some(oldest)) = (first.parsed(), matrix.torch_symbolics_oldest()) else {
        return Vec::new();
    };
    let torch = snapshot.pythons.iter().find_map(|env| match &env.distributions {
        Probed::Found(list) => {
            list.iter().find(|d| d.name == "torch").and_then(|d| d.version.parsed().cloned())
        }
        Probed::NotEvaluated(_) => None,
    });
    // The opset the export asked for, when the error says it.
    let asked = caps.name("opset").and_then(|m| m.as_str().parse::<i64>().ok());
    let mut params = vec![("aten.opset", s.opset.to_string())];
    if torch.as_ref().is_some_and(|t| t >= first) || first <= &oldest {
        // This torch has the symbolic: only a lower opset can be missing.
        if asked.is_none_or(|a| a < s.opset) {
            params.push(("aten.at_opset", s.opset.to_string()));
        }
    } else {
        params.push(("aten.torch", s.torch.clone()));
    }
    params
}

/// A signature's table row, chosen by what the error line captured when
/// the lookup names one of its groups (`by soversion`), else by the first
/// environment of the paste (or the machine) whose facts have the table's key.
fn signature_row<'m>(
    lookup: &Lookup,
    caps: &regex::Captures<'_>,
    snapshot: &Snapshot,
    matrix: &'m Matrix,
) -> Option<&'m Row> {
    let table = matrix.tables.get(&lookup.table)?;
    let Some(key) = &lookup.fact else {
        // The loader made sure `by` names one of the signature's groups.
        let captured = caps.name(lookup.by.as_deref()?)?.as_str();
        // A compute capability as torch and nvcc write it (`sm_86`: 86).
        let by_cc = table.key_fact.as_ref().is_some_and(|k| k.to_string() == "gpu.compute_capability");
        let version = match captured.split_at_checked(captured.len().saturating_sub(1)) {
            Some((major, minor))
                if by_cc && !major.is_empty() && captured.bytes().all(|b| b.is_ascii_digit()) =>
            {
                Ver::new(format!("{major}.{minor}"))
            }
            _ => Ver::new(captured),
        };
        let facts = Facts::for_env(snapshot, None, matrix);
        return select_row(table, &version, &facts, matrix).ok().map(|(_, r)| r);
    };
    snapshot.pythons.iter().map(Some).chain([None]).find_map(|env| {
        let facts = Facts::for_env(snapshot, env, matrix);
        match facts.get(key) {
            Fact::Absent | Fact::Unknown(_) => None,
            fact => select_row(table, &Ver::new(fact.display()), &facts, matrix).ok().map(|(_, r)| r),
        }
    })
}

/// The signature rules, each after every signature its `explained_by`
/// names, so that a line two signatures match becomes one finding
/// whatever the rules' order in the matrix.
fn explainers_first(matrix: &Matrix) -> Vec<&Rule> {
    let mut pending: Vec<&Rule> =
        matrix.rules.iter().filter(|r| matches!(r.kind, RuleKind::Signature { .. })).collect();
    let mut ordered = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let waits_on = |r: &Rule| match &r.kind {
            RuleKind::Signature { explained_by, .. } => {
                explained_by.iter().any(|c| pending.iter().any(|p| &p.code == c && p.code != r.code))
            }
            _ => false,
        };
        let (ready, rest): (Vec<&Rule>, Vec<&Rule>) = pending.iter().partition(|r| !waits_on(r));
        if ready.is_empty() {
            // A cycle: take the rest as they come.
            ordered.extend(rest);
            break;
        }
        ordered.extend(ready);
        pending = rest;
    }
    ordered
}

enum Truth {
    Yes,
    No,
    Unknown(String),
}

/// Evaluates a data rule: `when` (all must hold), the table lookup, then
/// `require` (all must hold, else the rule fires). A rule that could not be
/// evaluated because its table has no row for the installed release says
/// which release.
fn evaluate(rule: &Rule, facts: &Facts<'_>, matrix: &Matrix) -> (Outcome, Option<Finding>) {
    let mut unknown_release = None;
    let (outcome, finding) = evaluate_rule(rule, facts, matrix, &mut unknown_release);
    match outcome {
        Outcome::NotEvaluated { reason, .. } => {
            (Outcome::NotEvaluated { reason, unknown: unknown_release }, finding)
        }
        other => (other, finding),
    }
}

fn evaluate_rule(
    rule: &Rule,
    facts: &Facts<'_>,
    matrix: &Matrix,
    unknown_release: &mut Option<UnknownRelease>,
) -> (Outcome, Option<Finding>) {
    let RuleKind::Facts { when, lookup, require, unless, texts } = &rule.kind else {
        return (Outcome::NotApplicable, None);
    };
    // Decide the lookup first: clauses may use the row. A missing row only
    // matters to the clauses and texts that need it.
    let mut row: Option<(usize, &Row)> = None;
    let mut no_row: Option<String> = None;
    if let Some(lookup) = lookup {
        let table = &matrix.tables[&lookup.table];
        let Some(key) = &lookup.fact else { return (Outcome::not_evaluated("the lookup has no fact"), None) };
        match facts.get(key) {
            Fact::Absent => return (Outcome::NotApplicable, None),
            Fact::Unknown(r) => no_row = Some(r),
            fact => {
                let version = Ver::new(fact.display());
                match select_row(table, &version, facts, matrix) {
                    Ok(r) => row = Some(r),
                    // A version the paste does not state is no gap in the matrix.
                    Err(_) if version.parsed().is_none() => {
                        no_row = Some(format!("{key} is {}, not a version", fact.display()))
                    }
                    Err(why) => {
                        if why.is_empty() {
                            let newer = newer_than_every_row(table, &version);
                            *unknown_release = Some(UnknownRelease {
                                fact: key.to_string(),
                                version: fact.display(),
                                newer,
                            });
                        }
                        no_row = Some(format!(
                            "the matrix has no row for {key} {}{why} in table {}",
                            fact.display(),
                            lookup.table
                        ))
                    }
                }
            }
        }
    }
    let ctx =
        Ctx { facts, integrated: matrix.integrated_compute_capabilities(), row, no_row: no_row.as_deref() };
    let mut unknown: Option<String> = None;
    for clause in when {
        match test(clause, &ctx) {
            Truth::No => return (Outcome::NotApplicable, None),
            Truth::Unknown(r) => unknown = unknown.or(Some(r)),
            Truth::Yes => {}
        }
    }
    if let Some(r) = unknown {
        return (Outcome::not_evaluated(r), None);
    }
    let mut failed = false;
    for clause in require {
        match test(clause, &ctx) {
            Truth::No => failed = true,
            Truth::Unknown(r) => return (Outcome::not_evaluated(r), None),
            Truth::Yes => {}
        }
    }
    if !require.is_empty() && !failed {
        return (Outcome::Passed, None);
    }
    if !unless.is_empty() && unless.iter().all(|c| matches!(test(c, &ctx), Truth::Yes)) {
        return (Outcome::NotApplicable, None);
    }
    if require.is_empty()
        && let Some(r) = ctx.no_row
    {
        // A known-bad combination whose message, or every fix, needs the
        // row it lacks. (A fix that needs it is left out below; the others
        // still help.)
        let reads_row = |t: &Template| t.slots().flatten().any(|s| matches!(s, Slot::Row(_)));
        if reads_row(&texts.message) || (!texts.fixes.is_empty() && texts.fixes.iter().all(reads_row)) {
            return (Outcome::not_evaluated(r), None);
        }
    }
    let fill = |t: &Template| t.fill(|s| ctx.slot(s)).unwrap_or_else(|_| fill_or_mark(t, &ctx));
    let finding = Finding {
        code: rule.code.clone(),
        severity: rule.severity,
        components: rule.components.clone(),
        subject: None,
        message: fill(&texts.message),
        why: fill(&texts.why),
        fixes: texts.fixes.iter().filter_map(|f| complete_fix(f, &ctx)).collect(),
        sources: rule.sources.clone(),
        evidence: require.iter().filter_map(|c| offending(c, &ctx)).collect(),
        likely: Vec::new(),
    };
    (Outcome::Fired, Some(finding))
}

/// A text with each placeholder that has no value written `?`.
fn fill_or_mark(t: &Template, ctx: &Ctx<'_>) -> String {
    t.fill(|s| Ok(ctx.slot(s).unwrap_or_else(|_| "?".into()))).unwrap_or_default()
}

/// A fix with every placeholder filled; a fix with a hole (`pip install
/// "onnx==?"`) helps nobody and is left out.
fn complete_fix(t: &Template, ctx: &Ctx<'_>) -> Option<String> {
    t.fill(|s| ctx.slot(s).and_then(|v| if v.is_empty() || v == "?" { Err(String::new()) } else { Ok(v) }))
        .ok()
}

/// What a clause is evaluated against.
struct Ctx<'a> {
    facts: &'a Facts<'a>,
    /// Integrated GPUs' compute capabilities (`runs on`).
    integrated: &'a [(u64, u64)],
    /// The looked-up row, with its index in its table.
    row: Option<(usize, &'a Row)>,
    /// Why there is no row, when the rule has a lookup that failed.
    no_row: Option<&'a str>,
}

impl Ctx<'_> {
    /// The value of one alternative of a placeholder: a fact, or a column
    /// of the row.
    fn slot(&self, slot: &Slot) -> Result<String, String> {
        match slot {
            Slot::Row(col) => match self.row {
                Some((_, r)) => r.values.get(col).cloned().ok_or_else(|| format!("no column {col}")),
                None => Err(self.no_row.unwrap_or("the rule has no table row").to_string()),
            },
            Slot::Fact(key) => match self.facts.key(key) {
                Fact::Text(t) => Ok(t),
                Fact::List(l) => Ok(l.join(" ")),
                Fact::Absent => Err(format!("`{key}` is not present")),
                Fact::Unknown(r) => Err(r),
            },
        }
    }
}

/// Whether `version` is above every release the table's rows name (their
/// specifiers' versions), so the matrix is older than the release.
fn newer_than_every_row(table: &Table, version: &Ver) -> bool {
    let Some(v) = version.parsed() else { return false };
    let highest = table.rows.iter().flat_map(|r| r.spec.versions()).max();
    highest.is_some_and(|h| v > &h)
}

/// The first row whose `versions` contains `version` and whose `match`
/// columns hold for the facts; `Err` says which match failed, if any.
fn select_row<'t>(
    table: &'t Table,
    version: &Ver,
    facts: &Facts<'_>,
    matrix: &Matrix,
) -> Result<(usize, &'t Row), String> {
    let integrated = matrix.integrated_compute_capabilities();
    let mut why = String::new();
    'rows: for (index, row) in table.rows.iter().enumerate().filter(|(_, r)| r.spec.contains(version)) {
        for ((fact, _), cond) in table.matches.iter().zip(&row.conditions) {
            let f = facts.get(fact);
            match truth(cond, &f, fact, integrated) {
                Truth::Yes => {}
                Truth::Unknown(r) => {
                    why = format!(" ({r})");
                    continue 'rows;
                }
                Truth::No => {
                    why = format!(" and {fact} {}", f.display());
                    continue 'rows;
                }
            }
        }
        return Ok((index, row));
    }
    Err(why)
}

fn test(clause: &Clause, ctx: &Ctx<'_>) -> Truth {
    match condition(clause, ctx) {
        Ok(c) => truth(&c, &ctx.facts.get(&clause.fact), &clause.fact, ctx.integrated),
        Err(r) => Truth::Unknown(r),
    }
}

/// The clause's condition: as compiled, for the looked-up row, or with
/// the facts it names filled in.
fn condition<'c>(clause: &'c Clause, ctx: &Ctx<'_>) -> Result<Cow<'c, Condition>, String> {
    match &clause.condition {
        Cond::Fixed(c) => Ok(Cow::Borrowed(c)),
        Cond::Template { template, per_row } if template.rows_only() => match ctx.row {
            Some((i, _)) => per_row.get(i).map(Cow::Borrowed).ok_or_else(|| "no row".to_string()),
            None => Err(ctx.no_row.unwrap_or("the rule has no table row").to_string()),
        },
        Cond::Template { template, .. } => {
            let text = template.fill(|s| ctx.slot(s))?;
            Condition::parse(&text).map(Cow::Owned).map_err(|e| format!("rule condition {text:?}: {e}"))
        }
    }
}

/// For a failed `none of` clause, the values that are in the list: the
/// evidence a user needs (which operators, not just that some are).
fn offending(clause: &Clause, ctx: &Ctx<'_>) -> Option<String> {
    let Ok(c) = condition(clause, ctx) else { return None };
    let Condition::NoneOf(words) = c.as_ref() else { return None };
    let fact = ctx.facts.get(&clause.fact);
    let hits = listed(words, &fact);
    (!hits.is_empty()).then(|| format!("{}: {}", clause.fact, hits.join(", ")))
}

/// The fact's values (its text, or its list) that are among `words`.
fn listed<'f>(words: &[String], fact: &'f Fact) -> Vec<&'f str> {
    let values: Vec<&str> = match fact {
        Fact::Text(t) => vec![t.as_str()],
        Fact::List(l) => l.iter().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    values.into_iter().filter(|v| words.iter().any(|w| w.eq_ignore_ascii_case(v))).collect()
}

fn truth(condition: &Condition, fact: &Fact, name: &FactRef, integrated: &[(u64, u64)]) -> Truth {
    match (condition, fact) {
        (_, Fact::Unknown(r)) => Truth::Unknown(r.clone()),
        (Condition::NoneOf(words), f) => bool_truth(listed(words, f).is_empty()),
        (Condition::OneOf(words), f) => bool_truth(!listed(words, f).is_empty()),
        (Condition::Present, f) => bool_truth(*f != Fact::Absent),
        (Condition::Absent, f) => bool_truth(*f == Fact::Absent),
        (
            Condition::Is(_) | Condition::Contains(_) | Condition::Version(_) | Condition::RunsOn(_),
            Fact::Absent,
        ) => Truth::No,
        (Condition::Contains(t), f) => {
            let t = t.to_lowercase();
            bool_truth(match f {
                Fact::Text(s) => s.to_lowercase().contains(&t),
                Fact::List(l) => l.iter().any(|s| s.to_lowercase().contains(&t)),
                _ => false,
            })
        }
        (Condition::IsNot(_), Fact::Absent) => Truth::Yes,
        (Condition::Is(t), f) => bool_truth(matches_text(f, t)),
        (Condition::IsNot(t), f) => bool_truth(!matches_text(f, t)),
        (Condition::Version(spec), Fact::Text(t)) => {
            let v = Ver::new(t.as_str());
            if v.parsed().is_none() {
                return Truth::Unknown(format!("`{name}` is {t:?}, which is not a version"));
            }
            bool_truth(spec.contains(&v))
        }
        (Condition::Version(spec), Fact::List(items)) => {
            bool_truth(items.iter().any(|t| spec.contains(&Ver::new(t.as_str()))))
        }
        (Condition::RunsOn(archs), f) => {
            let items = match f {
                Fact::List(l) => l.clone(),
                Fact::Text(t) => vec![t.clone()],
                _ => Vec::new(),
            };
            for cc in &items {
                let v = Ver::new(cc.as_str());
                let [major, minor, ..] = v.release() else {
                    return Truth::Unknown(format!("`{name}` has {cc:?}, which is not a compute capability"));
                };
                let tegra = integrated.contains(&(*major, *minor));
                if !archs.iter().any(|a| a.runs_on(*major, *minor, tegra)) {
                    return Truth::No;
                }
            }
            Truth::Yes
        }
    }
}

fn bool_truth(b: bool) -> Truth {
    if b { Truth::Yes } else { Truth::No }
}

fn matches_text(f: &Fact, t: &str) -> bool {
    match f {
        Fact::Text(s) => s.eq_ignore_ascii_case(t),
        Fact::List(l) => l.iter().any(|s| s.eq_ignore_ascii_case(t)),
        _ => false,
    }
}

/// The finding a builtin rule produces, with its placeholders filled from
/// `params`.
pub(crate) fn builtin_finding(rule: &Rule, env: Option<&PythonEnv>, params: &[(&str, String)]) -> Finding {
    builtin_finding_with_row(rule, env, params, None)
}

/// A builtin finding whose texts may also name `{row.COLUMN}` of a table row.
/// A fix that needs a value this case does not have (an empty or unknown
/// placeholder) is left out: a command with a hole in it helps nobody.
pub(crate) fn builtin_finding_with_row(
    rule: &Rule,
    env: Option<&PythonEnv>,
    params: &[(&str, String)],
    row: Option<&Row>,
) -> Finding {
    let one = |k: &str| -> Option<String> {
        match k.strip_prefix("row.") {
            Some(col) => row.and_then(|r| r.values.get(col)).cloned(),
            None => params.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()),
        }
    };
    // `{op|op2}`: the first that has a value (a signature's alternatives
    // capture into groups of different names; the one that did not match is "?").
    let value = |k: &str| -> Option<String> {
        let mut names = k.split('|');
        let first = names.next().and_then(one);
        match first {
            Some(v) if v != "?" => Some(v),
            _ => names.filter_map(one).find(|v| v != "?").or(first),
        }
    };
    let fill = |text: &str| template::render(text, None, |k| value(k).unwrap_or_else(|| format!("{{{k}}}")));
    let fix = |text: &str| -> Option<String> {
        let mut complete = true;
        // "?" is a signature group that did not take part in the match.
        let rendered =
            template::render(text, None, |k| match value(k).filter(|v| !v.is_empty() && v != "?") {
                Some(v) => v,
                None => {
                    complete = false;
                    String::new()
                }
            });
        complete.then_some(rendered)
    };
    Finding {
        code: rule.code.clone(),
        severity: rule.severity,
        components: rule.components.clone(),
        subject: env.map(PythonEnv::label),
        message: fill(&rule.message),
        why: fill(&rule.why),
        fixes: rule.fixes.iter().filter_map(|f| fix(f)).collect(),
        sources: rule.sources.clone(),
        evidence: Vec::new(),
        likely: Vec::new(),
    }
}
