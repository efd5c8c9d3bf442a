//! The Markdown report, meant to be pasted into an issue as it is: the
//! verdict and findings first, then the facts in collapsible blocks.

use std::fmt::Write as _;

use super::{Report, overview};
use crate::matrix::Matrix;

pub fn render(report: &Report, matrix: &Matrix, exit_code: u8) -> String {
    let mut out = String::new();
    let s = &report.summary;
    let _ = writeln!(out, "## onnx-doctor report\n");
    let _ = writeln!(
        out,
        "**Verdict: {}** — {} errors, {} warnings, {} checks not evaluated (exit {exit_code})\n",
        s.verdict.as_str(),
        s.errors,
        s.warnings,
        s.not_evaluated
    );
    let _ = writeln!(out, "{} · {}\n", report.doctor, report.matrix_line());
    if let Some(days) = s.matrix_age_days {
        let _ = writeln!(
            out,
            "> Note: this matrix is from {}, {days} days ago; releases since are unknown to it.\n",
            report.matrix.version
        );
    }
    if report.findings.is_empty() {
        let _ = writeln!(out, "No findings.\n");
    } else {
        let _ = writeln!(out, "### Findings\n");
    }
    for f in &report.findings {
        let _ = writeln!(out, "#### {} `{}`\n", f.severity, f.code);
        if let Some(subj) = &f.subject {
            let _ = writeln!(out, "In `{subj}`.\n");
        }
        let _ = writeln!(out, "{}\n", f.message);
        let _ = writeln!(out, "{}\n", f.why);
        if !f.fixes.is_empty() {
            let _ = writeln!(out, "Fix:\n\n```sh\n{}\n```\n", f.fixes.join("\n"));
        }
        if !f.evidence.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>What was seen</summary>\n\n```text\n{}\n```\n\n</details>\n",
                f.evidence.join("\n").trim_end()
            );
        }
        let _ = writeln!(
            out,
            "Sources: {}\n",
            f.sources.iter().map(|u| format!("<{u}>")).collect::<Vec<_>>().join(", ")
        );
    }
    for plan in report.fix_plan.iter().filter(|p| !p.conflicts.is_empty() || p.steps.len() > 1) {
        let subject = plan.subject.as_deref().map_or("this machine".to_string(), |s| format!("`{s}`"));
        let _ = writeln!(out, "### Fix all at once in {subject}\n");
        let _ = writeln!(out, "```sh\n{}\n```\n", plan.steps.join("\n"));
        for c in &plan.conflicts {
            let _ = writeln!(out, "- Conflict: {c}");
        }
        if !plan.conflicts.is_empty() {
            out.push('\n');
        }
    }
    if !report.still_needed.is_empty() {
        let _ = writeln!(out, "### To judge more, please run\n");
        for a in &report.still_needed {
            let _ = writeln!(out, "- `{}`: {}", a.command, a.unlocks);
        }
        out.push('\n');
    }
    let _ = writeln!(out, "### Facts\n");
    for section in overview(report, matrix) {
        let _ = writeln!(out, "<details><summary>{}</summary>\n", section.title);
        let _ = writeln!(out, "| status | component | detail |\n|---|---|---|");
        for line in section.lines {
            let _ =
                writeln!(out, "| {} | {} | {} |", line.status.word(), cell(&line.label), cell(&line.detail));
        }
        let _ = writeln!(out, "\n</details>\n");
    }
    let json = serde_json::to_string_pretty(&report.snapshot).unwrap_or_default();
    let _ = writeln!(
        out,
        "<details><summary>Snapshot (re-check with <code>onnx-doctor --snapshot FILE</code>)</summary>\n\n```json\n{json}\n```\n\n</details>"
    );
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
