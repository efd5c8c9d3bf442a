//! The reply to a ticket's reporter (`diagnose --reply`): a short Markdown
//! comment a triage bot posts on the issue. It speaks to the person who
//! filed it, not to an engineer: what the doctor found in the text, the
//! commands that fix it, what to run and paste back, and, folded away, the
//! lines it read and the sources.
//!
//! Precision before recall: a reply is written only for findings at or
//! above the maintainer's level, or for a symptom the doctor recognises
//! (whose likely causes it lists, with the command that tells them apart).
//! A ticket that shows neither gets no reply at all.
//!
//! The text is untrusted and the reply is public: every value is
//! written through [`crate::escape`] (prose with no markup, mention or
//! reference GitHub would act on; commands and evidence in fences longer
//! than any backtick run they hold).

use std::fmt::Write as _;

use super::markdown::{indent, source_link};
use super::{Ask, Report};
use crate::check::Finding;
use crate::escape::{code_block, code_span, reply_text};
use crate::matrix::{Cause, Matrix, Severity};

/// GitHub refuses a comment over 65,536 characters; the reply stays well
/// under it, with room for the bot's marker.
const MAX_CHARS: usize = 60_000;

/// Pasted lines shown per finding; the rest are counted.
const EVIDENCE_LINES: usize = 12;

/// The reply to post, or `None` when the ticket shows nothing worth a
/// reply at `post_at` or above.
pub fn render(report: &Report, matrix: &Matrix, post_at: Severity) -> Option<String> {
    let shown: Vec<&Finding> =
        report.findings.iter().filter(|f| f.severity >= post_at || !f.likely.is_empty()).collect();
    if shown.is_empty() {
        return None;
    }
    let asks = asks(&report.still_needed);
    let mut out = render_with(report, matrix, &shown, &asks, true);
    if out.chars().count() > MAX_CHARS {
        out = render_with(report, matrix, &shown, &asks, false);
    }
    Some(out)
}

/// What to ask for, the doctor's own report first: it holds all the rest.
fn asks(still_needed: &[Ask]) -> Vec<&Ask> {
    let (report, rest): (Vec<&Ask>, Vec<&Ask>) =
        still_needed.iter().partition(|a| a.command.starts_with("onnx-doctor "));
    report.into_iter().chain(rest).collect()
}

fn render_with(report: &Report, matrix: &Matrix, shown: &[&Finding], asks: &[&Ask], details: bool) -> String {
    let mut out = String::new();
    let found = shown.iter().any(|f| f.likely.is_empty());
    let _ = writeln!(
        out,
        "{}\n",
        if found {
            "**onnx-doctor** read this issue and recognised what it shows:"
        } else {
            "**onnx-doctor** read this issue and recognised its symptom, but not yet its cause:"
        }
    );
    for (i, f) in shown.iter().enumerate() {
        finding(&mut out, i + 1, f, matrix);
    }
    if !asks.is_empty() {
        let _ = writeln!(
            out,
            "**To tell more, please run these where the problem happens and paste what they print:**\n"
        );
        for a in asks {
            // First here, the doctor's own report holds what the others print.
            let unlocks = if a.command.starts_with("onnx-doctor ") {
                "all of the following at once, redacted for posting"
            } else {
                a.unlocks.as_str()
            };
            let _ = writeln!(out, "- {}: {}", code_span(&a.command), reply_text(unlocks));
        }
        out.push('\n');
    }
    if details {
        evidence(&mut out, shown);
    }
    let _ = writeln!(
        out,
        "<sub>An automated first look by {} ({}) at the text of this issue alone; a maintainer will still read it. \
         To reproduce it, save the issue's text to a file and run {}.</sub>",
        reply_text(&report.doctor),
        reply_text(&format!("matrix {}", report.matrix.version)),
        code_span("onnx-doctor diagnose FILE --reply"),
    );
    out
}

fn finding(out: &mut String, n: usize, f: &Finding, matrix: &Matrix) {
    let _ = writeln!(out, "**{n}. {}**\n", reply_text(&f.message));
    // A paste's one environment is named "(pasted environment)": nothing to say.
    if let Some(subject) = f.subject.as_deref().filter(|s| !s.starts_with('(')) {
        let _ = writeln!(out, "In {}.\n", code_span(subject));
    }
    let _ = writeln!(out, "{}\n", reply_text(&f.why));
    if matrix.rule(&f.code).is_some_and(|r| r.cause == Cause::Model) {
        let _ = writeln!(
            out,
            "This is about the model, or the code that exports or runs it, more than the installation.\n"
        );
    }
    if !f.likely.is_empty() {
        for (i, l) in f.likely.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}. {}\n\n   To check:\n\n{}\n\n   To fix:\n\n{}\n",
                i + 1,
                reply_text(&l.cause),
                indent(&code_block("", &l.confirm)),
                indent(&code_block("", &l.fix))
            );
        }
    } else if !f.fixes.is_empty() {
        let _ = writeln!(out, "To fix it:\n\n{}\n", code_block("", &f.fixes.join("\n")));
    }
}

fn evidence(out: &mut String, shown: &[&Finding]) {
    let _ = writeln!(out, "<details><summary>What was read, and the sources</summary>\n");
    for f in shown {
        let _ = writeln!(out, "{} ({})\n", code_span(&f.code), f.severity);
        if !f.evidence.is_empty() {
            let mut lines: Vec<&str> =
                f.evidence.iter().flat_map(|e| e.lines()).take(EVIDENCE_LINES + 1).collect();
            let more = lines.len() > EVIDENCE_LINES;
            lines.truncate(EVIDENCE_LINES);
            let _ = writeln!(out, "{}\n", code_block("text", lines.join("\n").trim_end()));
            if more {
                let _ = writeln!(out, "(and more lines)\n");
            }
        }
        let links: Vec<String> = f.sources.iter().map(|u| source_link(u, reply_text)).collect();
        if !links.is_empty() {
            let _ = writeln!(out, "Sources: {}\n", links.join(", "));
        }
    }
    let _ = writeln!(out, "</details>\n");
}
