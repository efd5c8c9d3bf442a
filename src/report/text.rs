//! The terminal report: verdict by component, then findings with their
//! fixes, then one summary line. Colour only where the caller allows it.

use std::fmt::Write as _;

use super::{Report, Status, overview};
use crate::matrix::Matrix;
use crate::matrix::Severity;

/// ANSI styling, or none.
#[derive(Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    fn wrap(self, code: &str, s: &str) -> String {
        if self.0 { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
    }
    pub fn bold(self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn dim(self, s: &str) -> String {
        self.wrap("2", s)
    }
    fn status(self, st: Status) -> String {
        let word = format!("{:<7}", st.word());
        match st {
            Status::Ok => self.wrap("32", &word),
            Status::Error => self.wrap("1;31", &word),
            Status::Warning => self.wrap("33", &word),
            Status::Info => self.wrap("36", &word),
            Status::NotEvaluated => self.wrap("35", &word),
            Status::Absent => self.dim(&word),
        }
    }
    fn severity(self, s: Severity) -> String {
        match s {
            Severity::Error => self.wrap("1;31", "error"),
            Severity::Warning => self.wrap("33", "warning"),
            Severity::Info => self.wrap("36", "info"),
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
    let verdict = match s.verdict.as_str() {
        "not_evaluated" => paint.wrap("35", "nothing could be probed"),
        "error" => paint.wrap("1;31", "problems found"),
        "warning" => paint.wrap("33", "warnings"),
        _ => paint.wrap("32", "healthy"),
    };
    let _ = writeln!(out, "\n{}: {} · exit {exit_code}", verdict, parts.join(", "));
    out
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// Wraps prose to `width`, indenting continuation lines by `indent`.
pub fn wrap(text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut col = 0;
    for word in text.split_whitespace() {
        if col > 0 && col + 1 + word.len() > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            col = 0;
        } else if col > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += word.len();
    }
    out
}
