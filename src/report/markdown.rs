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

/// GitHub refuses an issue body or comment over 65,536 characters; the
/// report stays under it with room for redaction's placeholders.
pub(crate) const MAX_CHARS: usize = 64_000;

/// How much a report too long for an issue leaves out, least useful first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Cut {
    Nothing,
    /// The snapshot on one line, and of the distributions the matrix does
    /// not watch only their names and versions (all the checks read).
    CompactSnapshot,
    /// The Facts tables, which the snapshot holds too.
    Facts,
    /// The lines each finding was seen on.
    Evidence,
    /// The snapshot itself.
    Snapshot,
}

const CUTS: [Cut; 5] = [Cut::Nothing, Cut::CompactSnapshot, Cut::Facts, Cut::Evidence, Cut::Snapshot];

pub fn render(report: &Report, matrix: &Matrix, exit_code: u8) -> String {
    let mut out = String::new();
    for cut in CUTS {
        out = render_cut(report, matrix, exit_code, cut);
        if out.chars().count() <= MAX_CHARS {
            break;
        }
    }
    out
}

fn render_cut(report: &Report, matrix: &Matrix, exit_code: u8, cut: Cut) -> String {
    let mut out = String::new();
    header(&mut out, report, exit_code);
    findings(&mut out, report, cut);
    plans(&mut out, report);
    if cut >= Cut::Facts {
        let _ = writeln!(
            out,
            "### Facts\n\nLeft out to fit an issue's 65,536 characters{}; `onnx-doctor --format json` prints everything.\n",
            if cut >= Cut::Snapshot { ", with the snapshot" } else { "; the snapshot below holds them" }
        );
    } else {
        facts(&mut out, report, matrix);
    }
    snapshot(&mut out, report, matrix, cut);
    out
}

fn header(out: &mut String, report: &Report, exit_code: u8) {
    let s = &report.summary;
    let _ = writeln!(out, "{}\n", crate::snapshot::saved::MARKDOWN_HEADING);
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
}

/// A block indented to sit inside a numbered list item.
pub(super) fn indent(block: &str) -> String {
    block.lines().map(|l| format!("   {l}")).collect::<Vec<_>>().join("\n")
}

fn findings(out: &mut String, report: &Report, cut: Cut) {
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
        for (i, l) in f.likely.iter().enumerate() {
            if i == 0 {
                let _ = writeln!(out, "Likely causes, most likely first:\n");
            }
            let _ = writeln!(
                out,
                "{}. {} ({})\n\n   Check:\n\n{}\n\n   Fix:\n\n{}\n",
                i + 1,
                markdown_text(&l.cause),
                source_link(&l.source, markdown_text),
                indent(&code_block("sh", &l.confirm)),
                indent(&code_block("sh", &l.fix))
            );
        }
        if !f.fixes.is_empty() && f.likely.is_empty() {
            let _ = writeln!(out, "Fix:\n\n{}\n", code_block("sh", &f.fixes.join("\n")));
        }
        if !f.evidence.is_empty() && cut < Cut::Evidence {
            let _ = writeln!(
                out,
                "<details><summary>What was seen</summary>\n\n{}\n\n</details>\n",
                code_block("text", f.evidence.join("\n").trim_end())
            );
        }
        let _ = writeln!(
            out,
            "Sources: {}\n",
            f.sources.iter().map(|u| source_link(u, markdown_text)).collect::<Vec<_>>().join(", ")
        );
    }
}

fn plans(out: &mut String, report: &Report) {
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
}

fn facts(out: &mut String, report: &Report, matrix: &Matrix) {
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
}

fn snapshot(out: &mut String, report: &Report, matrix: &Matrix, cut: Cut) {
    if cut >= Cut::Snapshot {
        let _ = writeln!(
            out,
            "The snapshot was left out to fit an issue; attach `onnx-doctor --format json > report.json` for a re-check."
        );
        return;
    }
    let json = if cut >= Cut::CompactSnapshot {
        let mut snapshot = report.snapshot.clone();
        let left_out = snapshot.trim_unwatched(&matrix.packages);
        if left_out > 0 {
            let _ = writeln!(
                out,
                "To fit an issue, the snapshot leaves out {left_out} installed distributions that no check reads.\n"
            );
        }
        serde_json::to_string(&snapshot).unwrap_or_default()
    } else {
        serde_json::to_string_pretty(&report.snapshot).unwrap_or_default()
    };
    let fenced = code_block("json", &crate::escape::json_text(&json));
    let _ = writeln!(out, "{}", crate::snapshot::saved::markdown_block(&fenced));
}

/// An autolink for a source URL; anything that is not a plain URL is
/// written as `prose` writes text.
pub(super) fn source_link(u: &str, prose: fn(&str) -> String) -> String {
    let plain = u.starts_with("http") && !u.chars().any(|c| c.is_whitespace() || "<>`\"".contains(c));
    if plain { format!("<{}>", crate::escape::visible(u)) } else { prose(u) }
}
