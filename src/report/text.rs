//! The terminal report: verdict by component, then findings with their
//! fixes, then one summary line. Colour only where the caller allows it.

use std::fmt::Write as _;

use console::Style;

use super::{Report, Status, Verdict, overview};
use crate::matrix::Matrix;
use crate::matrix::Severity;

/// Terminal styling, or none.
#[derive(Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    fn style(self, style: Style, s: &str) -> String {
        style.force_styling(self.0).apply_to(s).to_string()
    }
    pub fn bold(self, s: &str) -> String {
        self.style(Style::new().bold(), s)
    }
    pub fn dim(self, s: &str) -> String {
        self.style(Style::new().dim(), s)
    }
    fn red(self, s: &str) -> String {
        self.style(Style::new().red().bold(), s)
    }
    fn yellow(self, s: &str) -> String {
        self.style(Style::new().yellow(), s)
    }
    fn green(self, s: &str) -> String {
        self.style(Style::new().green(), s)
    }
    fn cyan(self, s: &str) -> String {
        self.style(Style::new().cyan(), s)
    }
    fn magenta(self, s: &str) -> String {
        self.style(Style::new().magenta(), s)
    }
    fn status(self, st: Status) -> String {
        let word = format!("{:<7}", st.word());
        match st {
            Status::Ok => self.green(&word),
            Status::Error => self.red(&word),
            Status::Warning => self.yellow(&word),
            Status::Info => self.cyan(&word),
            Status::NotEvaluated => self.magenta(&word),
            Status::Absent => self.dim(&word),
        }
    }
    fn severity(self, s: Severity) -> String {
        match s {
            Severity::Error => self.red("error"),
            Severity::Warning => self.yellow("warning"),
            Severity::Info => self.cyan("info"),
        }
    }
}

pub fn render(report: &Report, matrix: &Matrix, paint: Paint, exit_code: u8) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} · {}", paint.bold(&report.doctor), report.matrix_line());
    for section in overview(report, matrix) {
        let _ = writeln!(out, "\n{}", paint.bold(&section.title));
        for line in section.lines {
            let detail =
                if line.detail.is_empty() { String::new() } else { format!("  {}", paint.dim(&line.detail)) };
            let _ = writeln!(out, "  {} {}{}", paint.status(line.status), line.label, detail);
        }
    }
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\n{}", paint.bold("Findings"));
    }
    for f in &report.findings {
        let subject = f.subject.as_deref().map(|s| format!("  {}", paint.dim(s))).unwrap_or_default();
        let _ = writeln!(out, "\n  {}[{}]{}", paint.severity(f.severity), f.code, subject);
        let _ = writeln!(out, "  {}", f.message);
        let _ = writeln!(out, "    {} {}", paint.dim("why:"), wrap(&f.why, 88, 9));
        for (i, fix) in f.fixes.iter().enumerate() {
            let _ = writeln!(out, "    {} {}", paint.dim(if i == 0 { "fix:" } else { "    " }), fix);
        }
        for ev in &f.evidence {
            for (i, line) in ev.lines().filter(|l| !l.trim().is_empty()).take(12).enumerate() {
                let _ = writeln!(
                    out,
                    "    {} {}",
                    paint.dim(if i == 0 { "saw:" } else { "    " }),
                    line.trim_end()
                );
            }
        }
        for (i, s) in f.sources.iter().enumerate() {
            let _ = writeln!(out, "    {} {}", paint.dim(if i == 0 { "see:" } else { "    " }), s);
        }
    }
    for plan in report.fix_plan.iter().filter(|p| !p.conflicts.is_empty() || p.steps.len() > 1) {
        let subject = plan.subject.as_deref().unwrap_or("this machine");
        let _ = writeln!(out, "\n{} {}", paint.bold("Fix all at once:"), paint.dim(subject));
        for step in &plan.steps {
            let _ = writeln!(out, "  {step}");
        }
        for c in &plan.conflicts {
            let _ = writeln!(out, "  {} {c}", paint.dim("conflict:"));
        }
    }
    let s = &report.summary;
    let mut parts = vec![plural(s.errors, "error"), plural(s.warnings, "warning")];
    if s.infos > 0 {
        parts.push(plural(s.infos, "note"));
    }
    if s.not_evaluated > 0 {
        parts.push(format!("{} not evaluated", plural(s.not_evaluated, "check")));
    }
    parts.push(plural(s.python_environments, "Python environment"));
    let verdict = match s.verdict {
        Verdict::NotEvaluated => paint.magenta("nothing could be probed"),
        Verdict::Error => paint.red("problems found"),
        Verdict::Warning => paint.yellow("warnings"),
        Verdict::Unverified => paint.magenta("not fully verified"),
        Verdict::Info | Verdict::Ok => paint.green("healthy"),
    };
    let _ = writeln!(out, "\n{}: {} · exit {exit_code}", verdict, parts.join(", "));
    if let Some(days) = s.matrix_age_days {
        let _ = writeln!(
            out,
            "{} this matrix is from {}, {days} days ago: releases since are unknown to it; a newer onnx-doctor knows them",
            paint.yellow("note:"),
            report.matrix.version
        );
    }
    out
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// Wraps prose to `width` columns of text, indenting continuation lines by
/// `indent` (the first line's indent is the caller's).
pub fn wrap(text: &str, width: usize, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let options = textwrap::Options::new(width + indent).initial_indent(&pad).subsequent_indent(&pad);
    textwrap::fill(text, options).trim_start().to_string()
}
