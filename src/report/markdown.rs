//! The Markdown report, meant to be pasted into an issue as it is: the
//! verdict and findings first, then the facts in collapsible blocks.
//!
//! Every value is printed through [`crate::escape`]: prose with HTML shown
//! as text, commands and evidence in fences longer than any backtick run
//! they hold, table cells on one line, so a paste cannot add markup to the
//! page it is posted on.

use std::fmt::Write as _;

use super::{Report, overview};
use crate::escape::{code_block, code_span, markdown_cell, markdown_text};
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
    let _ = writeln!(out, "{}\n", markdown_text(&format!("{} · {}", report.doctor, report.matrix_line())));
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
        let _ = writeln!(out, "#### {} {}\n", f.severity, code_span(&f.code));
        if let Some(subj) = &f.subject {
            let _ = writeln!(out, "In {}.\n", code_span(subj));
        }
        let _ = writeln!(out, "{}\n", markdown_text(&f.message));
        let _ = writeln!(out, "{}\n", markdown_text(&f.why));
        if !f.fixes.is_empty() {
            let _ = writeln!(out, "Fix:\n\n{}\n", code_block("sh", &f.fixes.join("\n")));
        }
        if !f.evidence.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>What was seen</summary>\n\n{}\n\n</details>\n",
                code_block("text", f.evidence.join("\n").trim_end())
            );
        }
        let _ = writeln!(
            out,
            "Sources: {}\n",
            f.sources.iter().map(|u| source_link(u)).collect::<Vec<_>>().join(", ")
        );
    }
    for plan in report.fix_plan.iter().filter(|p| !p.conflicts.is_empty() || p.steps.len() > 1) {
        let subject = plan.subject.as_deref().map_or("this machine".to_string(), code_span);
        let _ = writeln!(out, "### Fix all at once in {subject}\n");
        let _ = writeln!(out, "{}\n", code_block("sh", &plan.steps.join("\n")));
        for c in &plan.conflicts {
            let _ = writeln!(out, "- Conflict: {}", markdown_cell(c));
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
        let _ = writeln!(out, "<details><summary>{}</summary>\n", markdown_cell(&section.title));
        let _ = writeln!(out, "| status | component | detail |\n|---|---|---|");
        for line in section.lines {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                line.status.word(),
                markdown_cell(&line.label),
                markdown_cell(&line.detail)
            );
        }
        let _ = writeln!(out, "\n</details>\n");
    }
    let json = serde_json::to_string_pretty(&report.snapshot).unwrap_or_default();
    let _ = writeln!(
        out,
        "<details><summary>Snapshot (re-check with <code>onnx-doctor --snapshot FILE</code>)</summary>\n\n{}\n\n</details>",
        code_block("json", &crate::escape::json_text(&json))
    );
    out
}

/// An autolink for a source URL; anything that is not a plain URL is text.
fn source_link(u: &str) -> String {
    let plain = u.starts_with("http") && !u.chars().any(|c| c.is_whitespace() || "<>`\"".contains(c));
    if plain { format!("<{}>", crate::escape::visible(u)) } else { markdown_text(u) }
}
