//! CI-native output: GitHub Actions annotations and JUnit XML, from the
//! same report data as every other format.
//!
//! JUnit: one test suite per subject (the machine, each Python
//! environment), one test case per rule evaluated there, named by the rule's
//! code; the class is `onnx-doctor.<environment>` (one dot, so Jenkins reads
//! package `onnx-doctor`, class the environment). A case fails, with one
//! `<failure>` holding every finding of its rule, only when a finding is at
//! or above `--fail-on`, so the test report agrees with the exit code; a
//! finding below it is the case's `<system-out>`; a rule that could not be
//! judged is `<skipped>`. Attributes follow the JUnit schema Jenkins'
//! xUnit plugin validates against (junit-10.xsd):
//! https://github.com/jenkinsci/xunit-plugin/blob/master/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Report;
use crate::check::{Finding, Outcome};
use crate::matrix::Severity;

/// One annotation per finding, naming its environment and giving every
/// fix, then a summary notice.
pub fn github(report: &Report) -> String {
    let mut out = String::new();
    let names = short_names(report);
    for f in &report.findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let place = f.subject.as_ref().map(|s| names.get(s).map_or(s.as_str(), String::as_str));
        let title = match place {
            Some(env) => format!("onnx-doctor {} in {env}", f.code),
            None => format!("onnx-doctor {}", f.code),
        };
        let mut text = f.message.clone();
        if let Some(s) = &f.subject {
            let _ = write!(text, "\n(Python environment {s})");
        }
        for (i, fix) in f.fixes.iter().enumerate() {
            let _ = write!(text, "\n{} {fix}", if i == 0 { "Fix:" } else { "  or:" });
        }
        let _ = writeln!(out, "::{level} title={}::{}", escape_property(&title), escape_data(&text));
    }
    let s = &report.summary;
    let summary = format!(
        "{} errors, {} warnings, {} checks not evaluated ({}, {})",
        s.errors,
        s.warnings,
        s.not_evaluated,
        report.doctor,
        report.matrix_line()
    );
    let _ = writeln!(out, "::notice title=onnx-doctor::{}", escape_data(&summary));
    out
}

/// GitHub's workflow-command escaping of the message part.
fn escape_data(s: &str) -> String {
    crate::escape::visible(s).replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// ... and of a property's value (`title=`), where `:` and `,` end it.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A short, distinct name per environment: its directory (`.venv`, `ort117`)
/// for `…/NAME/bin/python`, else the interpreter's file name; the full
/// label where two would read the same.
fn short_names(report: &Report) -> BTreeMap<String, String> {
    let labels: Vec<String> = report.snapshot.pythons.iter().map(|p| p.label()).collect();
    let short = |label: &str| {
        let path = std::path::Path::new(label);
        let parent = path.parent().filter(|p| p.file_name().is_some_and(|n| n == "bin"));
        match parent.and_then(|bin| bin.parent()).and_then(|env| env.file_name()) {
            Some(env) => env.to_string_lossy().into_owned(),
            None => path.file_name().map_or_else(|| label.to_string(), |n| n.to_string_lossy().into_owned()),
        }
    };
    let mut names = BTreeMap::new();
    for label in &labels {
        let name = short(label);
        let clash = labels.iter().filter(|other| short(other) == name).count() > 1;
        names.insert(label.clone(), if clash { label.clone() } else { name });
    }
    names
}

/// One test case: a rule in one place, with what it found there.
struct Case<'r> {
    outcome: Option<&'r Outcome>,
    findings: Vec<&'r Finding>,
}

/// The test cases of one subject (the machine, or an environment), by code.
type Suite<'r> = (Option<&'r str>, BTreeMap<&'r str, Case<'r>>);

/// The report's outcomes and findings as suites of cases: the machine
/// first, then each environment in the order it was found.
fn suites(report: &Report) -> Vec<Suite<'_>> {
    let mut suites: Vec<Suite<'_>> = vec![(None, BTreeMap::new())];
    let order = |s: &Option<&str>| match s {
        None => 0,
        Some(label) => {
            1 + report.snapshot.pythons.iter().position(|p| p.label() == *label).unwrap_or(usize::MAX - 1)
        }
    };
    for o in report.outcomes.iter().filter(|o| o.outcome != Outcome::NotApplicable) {
        let subject = o.subject.as_deref();
        if !suites.iter().any(|(s, _)| *s == subject) {
            suites.push((subject, BTreeMap::new()));
        }
        let (_, cases) = suites.iter_mut().find(|(s, _)| *s == subject).expect("added above");
        // A rule evaluated several times in one place (one per --expect) is one case.
        let case = cases.entry(o.code.as_str()).or_insert(Case { outcome: None, findings: Vec::new() });
        if case.outcome.is_none_or(|_| o.outcome == Outcome::Fired) {
            case.outcome = Some(&o.outcome);
        }
    }
    for f in &report.findings {
        let subject = f.subject.as_deref();
        if !suites.iter().any(|(s, _)| *s == subject) {
            suites.push((subject, BTreeMap::new()));
        }
        let (_, cases) = suites.iter_mut().find(|(s, _)| *s == subject).expect("added above");
        cases.entry(f.code.as_str()).or_insert(Case { outcome: None, findings: Vec::new() }).findings.push(f);
    }
    suites.retain(|(_, cases)| !cases.is_empty());
    suites.sort_by_key(|(s, _)| order(s));
    suites
}

pub fn junit(report: &Report, fail_on: Severity) -> String {
    let names = short_names(report);
    let mut body = String::new();
    let (mut tests, mut failures, mut total_time) = (0, 0, 0.0);
    for (subject, cases) in suites(report) {
        let place = subject.map_or("machine", |s| names.get(s).map_or(s, String::as_str));
        let class = class_name(place);
        let time = suite_time(report, subject);
        total_time += time;
        let mut out = String::new();
        let (mut failed, mut skipped) = (0, 0);
        for (code, case) in &cases {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\"",
                xml(code),
                xml(&class)
            );
            let text = match case_body(case, fail_on) {
                CaseBody::Passed => None,
                CaseBody::Failed(text) => {
                    failed += 1;
                    Some(text)
                }
                CaseBody::Skipped(text) => {
                    skipped += 1;
                    Some(text)
                }
                CaseBody::Noted(text) => Some(text),
            };
            match text {
                None => out.push_str("/>\n"),
                Some(text) => {
                    let _ = write!(out, ">\n{text}    </testcase>\n");
                }
            }
        }
        tests += cases.len();
        failures += failed;
        let _ = write!(
            body,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">\n{out}  </testsuite>\n",
            xml(subject.unwrap_or("machine")),
            cases.len()
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"onnx-doctor\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{total_time:.3}\">\n{body}</testsuites>\n"
    )
}

enum CaseBody {
    Passed,
    Failed(String),
    Skipped(String),
    /// Passed, with findings below the fail level as its output.
    Noted(String),
}

fn case_body(case: &Case<'_>, fail_on: Severity) -> CaseBody {
    if let Some(Outcome::NotEvaluated { reason, .. }) = case.outcome
        && case.findings.is_empty()
    {
        return CaseBody::Skipped(format!("      <skipped message=\"{}\"/>\n", xml(reason)));
    }
    let Some(worst) = case.findings.iter().map(|f| f.severity).max() else { return CaseBody::Passed };
    let mut text = String::new();
    for f in &case.findings {
        let _ = writeln!(text, "{}: {}", f.severity, f.message);
        if let Some(s) = &f.subject {
            let _ = writeln!(text, "in {s}");
        }
        let _ = writeln!(text, "why: {}", f.why);
        for fix in &f.fixes {
            let _ = writeln!(text, "fix: {fix}");
        }
        for s in &f.sources {
            let _ = writeln!(text, "see: {s}");
        }
        text.push('\n');
    }
    if worst >= fail_on {
        let message = match case.findings.len() {
            1 => case.findings[0].message.clone(),
            n => format!("{} (and {} more)", case.findings[0].message, n - 1),
        };
        CaseBody::Failed(format!(
            "      <failure type=\"{worst}\" message=\"{}\">{}</failure>\n",
            xml(&message),
            xml(text.trim_end())
        ))
    } else {
        CaseBody::Noted(format!("      <system-out>{}</system-out>\n", xml(text.trim_end())))
    }
}

/// The time the probe spent in an environment: its imports' wall time.
fn suite_time(report: &Report, subject: Option<&str>) -> f64 {
    let Some(label) = subject else { return 0.0 };
    report
        .snapshot
        .pythons
        .iter()
        .filter(|p| p.label() == label)
        .flat_map(|p| &p.imports)
        .filter_map(|i| i.seconds)
        .filter(|s| s.is_finite() && *s >= 0.0)
        // A fold from +0.0: an empty f64 sum is -0.0, which prints "-0.000".
        .fold(0.0, |total, s| total + s)
}

/// `onnx-doctor.PLACE`, which Jenkins reads as package `onnx-doctor`,
/// class PLACE: PLACE keeps letters, digits, `-` and `_`, nothing else.
fn class_name(place: &str) -> String {
    let class: String =
        place.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("onnx-doctor.{}", class.trim_matches('_'))
}

/// Text for an XML attribute or element: hidden characters (C0 and C1
/// controls, bidi overrides, noncharacters) shown as escapes, markup
/// characters as entities.
fn xml(s: &str) -> String {
    crate::escape::visible(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
