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
mod template;

use serde::{Deserialize, Serialize};

use crate::matrix::{Clause, Component, Condition, Matrix, Row, Rule, RuleKind, Severity};
use crate::snapshot::{PythonEnv, Snapshot};
use crate::version::Ver;

use facts::{Fact, Facts};

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
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Fired,
    NotApplicable,
    NotEvaluated { reason: String },
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
}

/// Judges a snapshot against the matrix.
pub fn check(snapshot: &Snapshot, matrix: &Matrix) -> Judgement {
    let mut j = Judgement::default();
    let data_rules: Vec<&Rule> =
        matrix.rules.iter().filter(|r| matches!(r.kind, RuleKind::Facts { .. })).collect();

    for rule in data_rules.iter().filter(|r| is_machine_rule(r)) {
        let facts = Facts::for_env(snapshot, None);
        record(&mut j, rule, None, evaluate(rule, &facts, matrix));
    }
    for env in &snapshot.pythons {
        let subject = Some(env.label());
        let first = j.findings.len();
        let facts = Facts::for_env(snapshot, Some(env));
        for rule in data_rules.iter().filter(|r| !is_machine_rule(r)) {
            record(&mut j, rule, subject.clone(), evaluate(rule, &facts, matrix));
        }
        builtin::check_env(&mut j, first, snapshot, env, matrix);
    }
    if snapshot.pythons.is_empty() {
        for rule in data_rules.iter().filter(|r| !is_machine_rule(r)) {
            let reason = "no Python environment was found".to_string();
            j.outcomes.push(RuleOutcome {
                code: rule.code.clone(),
                subject: None,
                outcome: Outcome::NotEvaluated { reason },
            });
        }
    }
    builtin::check_machine(&mut j, snapshot, matrix);

    j.findings.sort_by(|a, b| {
        (b.severity, &a.subject, &a.code, &a.message).cmp(&(a.severity, &b.subject, &b.code, &b.message))
    });
    j.findings.dedup();
    j.outcomes.sort_by(|a, b| (&a.code, &a.subject).cmp(&(&b.code, &b.subject)));
    j
}

const MACHINE_FACTS: &[&str] = &["os", "arch", "glibc", "kernel", "container"];

fn is_machine_rule(rule: &Rule) -> bool {
    let RuleKind::Facts { when, require, .. } = &rule.kind else { return false };
    when.iter().chain(require).flat_map(|c| c.fact.split('|')).all(|f| MACHINE_FACTS.contains(&f.trim()))
}

fn record(j: &mut Judgement, rule: &Rule, subject: Option<String>, result: (Outcome, Option<Finding>)) {
    let (outcome, finding) = result;
    if let Some(mut f) = finding {
        f.subject.clone_from(&subject);
        j.findings.push(f);
    }
    j.outcomes.push(RuleOutcome { code: rule.code.clone(), subject, outcome });
}

enum Truth {
    Yes,
    No,
    Unknown(String),
}

/// Evaluates a data rule: `when` (all must hold), the table lookup, then
/// `require` (all must hold, else the rule fires).
fn evaluate(rule: &Rule, facts: &Facts<'_>, matrix: &Matrix) -> (Outcome, Option<Finding>) {
    let RuleKind::Facts { when, lookup, require } = &rule.kind else {
        return (Outcome::NotApplicable, None);
    };
    // Decide the lookup first: `when` clauses may use the row.
    let mut row: Option<&Row> = None;
    let mut lookup_unknown: Option<String> = None;
    if let Some(name) = lookup {
        let table = &matrix.tables[name];
        match facts.get(&table.key) {
            Fact::Absent => return (Outcome::NotApplicable, None),
            Fact::Unknown(r) => lookup_unknown = Some(r),
            fact => {
                let v = Ver::new(fact.display());
                match table.row_for(&v) {
                    Some(r) => row = Some(r),
                    None => {
                        lookup_unknown = Some(format!(
                            "the matrix has no row for {} {} in table {name}",
                            table.key,
                            fact.display()
                        ))
                    }
                }
            }
        }
    }
    let mut unknown: Option<String> = None;
    for clause in when {
        match test(clause, facts, row) {
            Truth::No => return (Outcome::NotApplicable, None),
            Truth::Unknown(r) => unknown = unknown.or(Some(r)),
            Truth::Yes => {}
        }
    }
    if let Some(r) = unknown.or(lookup_unknown) {
        return (Outcome::NotEvaluated { reason: r }, None);
    }
    let mut failed = false;
    for clause in require {
        match test(clause, facts, row) {
            Truth::No => failed = true,
            Truth::Unknown(r) => return (Outcome::NotEvaluated { reason: r }, None),
            Truth::Yes => {}
        }
    }
    if !require.is_empty() && !failed {
        return (Outcome::Passed, None);
    }
    let fill = |text: &str| template::render(text, row, |k| facts.get(k).display());
    let finding = Finding {
        code: rule.code.clone(),
        severity: rule.severity,
        components: rule.components.clone(),
        subject: None,
        message: fill(&rule.message),
        why: fill(&rule.why),
        fixes: rule.fixes.iter().map(|f| fill(f)).collect(),
        sources: rule.sources.clone(),
        evidence: Vec::new(),
    };
    (Outcome::Fired, Some(finding))
}

fn test(clause: &Clause, facts: &Facts<'_>, row: Option<&Row>) -> Truth {
    // Conditions may name row columns or other facts: `"is {torch.local}"`.
    let mut missing = None;
    let text = template::render(&clause.condition, row, |k| match facts.get(k) {
        Fact::Text(t) => t,
        Fact::List(l) => l.join(","),
        Fact::Absent => {
            missing.get_or_insert_with(|| format!("`{k}` is not present"));
            String::new()
        }
        Fact::Unknown(r) => {
            missing.get_or_insert(r);
            String::new()
        }
    });
    if let Some(r) = missing {
        return Truth::Unknown(r);
    }
    let condition = match Condition::parse(&text) {
        Ok(c) => c,
        Err(e) => return Truth::Unknown(format!("rule condition {text:?}: {e}")),
    };
    let fact = facts.get(&clause.fact);
    match (&condition, &fact) {
        (_, Fact::Unknown(r)) => Truth::Unknown(r.clone()),
        (Condition::Present, f) => bool_truth(*f != Fact::Absent),
        (Condition::Absent, f) => bool_truth(*f == Fact::Absent),
        (Condition::Is(_) | Condition::Version(_), Fact::Absent) => Truth::No,
        (Condition::IsNot(_), Fact::Absent) => Truth::Yes,
        (Condition::Is(t), f) => bool_truth(matches_text(f, t)),
        (Condition::IsNot(t), f) => bool_truth(!matches_text(f, t)),
        (Condition::Version(spec), Fact::Text(t)) => {
            let v = Ver::new(t.as_str());
            if v.parsed().is_none() {
                return Truth::Unknown(format!("`{}` is {t:?}, which is not a version", clause.fact));
            }
            bool_truth(spec.contains(&v))
        }
        (Condition::Version(_), Fact::List(_)) => {
            Truth::Unknown(format!("`{}` is a list, not a version", clause.fact))
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
    let fill = |text: &str| {
        template::render(text, None, |k| {
            params.iter().find(|(n, _)| *n == k).map_or_else(|| format!("{{{k}}}"), |(_, v)| v.clone())
        })
    };
    Finding {
        code: rule.code.clone(),
        severity: rule.severity,
        components: rule.components.clone(),
        subject: env.map(PythonEnv::label),
        message: fill(&rule.message),
        why: fill(&rule.why),
        fixes: rule.fixes.iter().map(|f| fill(f)).collect(),
        sources: rule.sources.clone(),
        evidence: Vec::new(),
    }
}
