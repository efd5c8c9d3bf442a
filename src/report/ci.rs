//! CI-native output: GitHub Actions annotations and JUnit XML, from the
//! same report data as every other format.

use std::fmt::Write as _;

use super::Report;
use crate::check::Outcome;
use crate::matrix::Severity;

/// `::error title=CODE::message` lines, then a summary notice.
pub fn github(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let fix = f.fixes.first().map(|x| format!(" Fix: {x}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "::{level} title=onnx-doctor {}::{}{}",
            escape_data(&f.code),
            escape_data(&f.message),
            escape_data(&fix)
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "::notice title=onnx-doctor::{} errors, {} warnings, {} checks not evaluated ({}, {})",
        s.errors,
        s.warnings,
        s.not_evaluated,
        report.doctor,
        report.matrix_line()
    );
    out
}

/// GitHub's workflow-command escaping of the message part.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// One test case per rule evaluated (and subject); a fired rule is a
/// failure with its finding, a rule that could not be evaluated is skipped.
pub fn junit(report: &Report) -> String {
    let mut cases = String::new();
    let (mut failures, mut skipped) = (0, 0);
    for o in &report.outcomes {
        if o.outcome == Outcome::NotApplicable {
            continue;
        }
        let class = o.subject.as_deref().unwrap_or("machine");
        let _ = write!(cases, "    <testcase classname=\"{}\" name=\"{}\"", xml(class), xml(&o.code));
        match &o.outcome {
            Outcome::Fired => {
                let mut body = String::new();
                for f in report.findings.iter().filter(|f| f.code == o.code && f.subject == o.subject) {
                    failures += 1;
                    let _ = write!(
                        body,
                        "\n      <failure type=\"{}\" message=\"{}\">{}</failure>",
                        f.severity,
                        xml(&f.message),
                        xml(&format!(
                            "{}\nfix: {}\n{}",
                            f.why,
                            f.fixes.join("\nfix: "),
                            f.sources.join("\n")
                        ))
                    );
                }
                let _ = write!(cases, ">{body}\n    </testcase>\n");
            }
            Outcome::NotEvaluated { reason, .. } => {
                skipped += 1;
                let _ = writeln!(cases, ">\n      <skipped message=\"{}\"/>\n    </testcase>", xml(reason));
            }
            _ => cases.push_str("/>\n"),
        }
    }
    let tests = report.outcomes.iter().filter(|o| o.outcome != Outcome::NotApplicable).count();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"onnx-doctor\">\n  <testsuite name=\"onnx-doctor\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n{cases}  </testsuite>\n</testsuites>\n"
    )
}

fn xml(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(*c as u32, 0..=8 | 11 | 12 | 14..=31))
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
