//! The terminal report, in three lengths.
//!
//! The default fits a screen: the verdict by component (what is fine folded
//! into one line per section), and under each section its findings, worst
//! layer first, each as a headline, one line of what was seen and the fix;
//! when an environment has several, the fixes merged into one numbered
//! plan. `--verbose` adds every line, the why, every fix, all the evidence
//! and the sources. `--quiet` prints only the findings and the summary, for
//! CI logs. Evidence is shown once: a finding whose evidence is one already
//! shown points to it.

use std::fmt::Write as _;

use console::Style;

use super::{Fold, Report, Section, Status, Verdict, overview};
use crate::check::{Finding, FixPlan};
use crate::matrix::{Matrix, Severity};
use crate::snapshot::ProbeMode;

/// Terminal styling, or none.
#[derive(Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    fn style(self, style: Style, s: &str) -> String {
        style.force_styling(self.0).apply_to(s).to_string()
    }
    pub(crate) fn bold(self, s: &str) -> String {
        self.style(Style::new().bold(), s)
    }
    pub(crate) fn dim(self, s: &str) -> String {
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

/// How much the report says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Findings, their fixes and the summary line.
    Quiet,
    /// One screen: see the module documentation.
    Default,
    /// Everything the report holds.
    Verbose,
}

/// How to print: colour, length and the width prose is wrapped to.
#[derive(Clone, Copy)]
pub struct Look<'a> {
    pub paint: Paint,
    pub detail: Detail,
    /// Columns; commands are never wrapped, whatever their length.
    pub width: usize,
    /// The command that shows everything: the one the user ran, with `-v`.
    pub verbose_command: &'a str,
}

pub fn render(report: &Report, matrix: &Matrix, look: Look<'_>, exit_code: u8) -> String {
    // Pasted and saved text reaches the terminal with its control
    // characters shown, never obeyed; the only escapes printed are Paint's.
    let Ok(report) = &report.map_strings(true, &|s| crate::escape::visible(s).into_owned()) else {
        // A value whose visible form its type refuses: the whole text, with
        // no paint of ours in it, is made visible instead.
        let plain = Look { paint: Paint(false), ..look };
        return crate::escape::visible(&render_values(report, matrix, plain, exit_code)).into_owned();
    };
    render_values(report, matrix, look, exit_code)
}

/// The text of a report whose values are already inert.
fn render_values(report: &Report, matrix: &Matrix, look: Look<'_>, exit_code: u8) -> String {
    let mut r = Renderer { look, out: String::new(), shown: Vec::new(), sites: Vec::new() };
    let sections = overview(report, matrix);
    if look.detail != Detail::Quiet {
        let _ = writeln!(r.out, "{} · {}", look.paint.bold(&report.doctor), report.matrix_line());
    }
    let subjects: Vec<Option<&str>> = sections.iter().map(|s| s.subject.as_deref()).collect();
    // The machine's sections, then its findings (and any whose environment
    // has no section), then each environment with its own.
    for section in sections.iter().filter(|s| s.subject.is_none()) {
        r.section(section);
    }
    let machine: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.subject.is_none() || !subjects.contains(&f.subject.as_deref()))
        .collect();
    r.findings(&machine, plan_for(report, None));
    for section in sections.iter().filter(|s| s.subject.is_some()) {
        r.section(section);
        let mine: Vec<&Finding> =
            report.findings.iter().filter(|f| f.subject.as_deref() == section.subject.as_deref()).collect();
        // Under its environment's heading, a path into its site directory
        // says enough from there.
        let env = report.snapshot.pythons.iter().find(|p| Some(p.label()) == section.subject);
        r.sites =
            env.map(|e| e.site_dirs.iter().map(|d| d.display().to_string()).collect()).unwrap_or_default();
        r.findings(&mine, plan_for(report, section.subject.as_deref()));
    }
    r.still_needed(report);
    r.summary(report, exit_code);
    r.out
}

fn plan_for<'r>(report: &'r Report, subject: Option<&str>) -> Option<&'r FixPlan> {
    report.fix_plan.iter().find(|p| p.subject.as_deref() == subject)
}

struct Renderer<'a> {
    look: Look<'a>,
    out: String,
    /// Evidence already printed, so a second finding can point to it.
    shown: Vec<String>,
    /// The site directories of the environment whose findings are printed.
    sites: Vec<String>,
}

impl Renderer<'_> {
    fn paint(&self) -> Paint {
        self.look.paint
    }

    /// `/env/lib/python3.11/site-packages/onnxruntime/...` as
    /// `site-packages/onnxruntime/...`, in the short report.
    fn short_paths(&self, text: &str) -> String {
        let mut text = text.to_string();
        for site in &self.sites {
            let name = site.rsplit('/').next().unwrap_or(site);
            if !name.is_empty() && name != site.as_str() {
                text = text.replace(&format!("{site}/"), &format!("{name}/"));
            }
        }
        text
    }

    fn section(&mut self, section: &Section) {
        let p = self.paint();
        match self.look.detail {
            Detail::Quiet => {}
            Detail::Default => {
                let _ = writeln!(self.out, "\n{}", p.bold(&section.title));
                for (status, text, detail) in short_lines(section) {
                    self.status_line(status, &text, &detail);
                }
            }
            Detail::Verbose => {
                let _ = writeln!(self.out, "\n{}", p.bold(&section.title));
                for line in &section.lines {
                    self.status_line(line.status, &line.label, &line.detail);
                }
            }
        }
    }

    /// `  status  label  detail`: a label too long for the line wraps; in
    /// the short report the detail is cut to what is left of the line.
    fn status_line(&mut self, status: Status, label: &str, detail: &str) {
        let p = self.paint();
        let width = self.look.width;
        let verbose = self.look.detail == Detail::Verbose;
        let label = if verbose { label.to_string() } else { wrap(label, width.saturating_sub(10), 10) };
        let last = label.rsplit('\n').next().unwrap_or("");
        let room = width
            .saturating_sub(console::measure_text_width(last) + if label.contains('\n') { 2 } else { 12 });
        let detail = match detail {
            "" => String::new(),
            d if verbose => format!("  {}", p.dim(d)),
            _ if room < 16 => String::new(),
            d => format!("  {}", p.dim(&console::truncate_str(d, room, "…"))),
        };
        let _ = writeln!(self.out, "  {} {label}{detail}", p.status(status));
    }

    /// One group's findings, the fix plan after those that need fixing,
    /// notes last (they come ranked that way).
    fn findings(&mut self, findings: &[&Finding], plan: Option<&FixPlan>) {
        let needing =
            findings.iter().filter(|f| f.severity >= Severity::Warning && !f.fixes.is_empty()).count();
        // One finding with one fix says it best itself, comment and all.
        let merged = plan.filter(|p| needing > 1 || p.steps.len() > 1 || !p.conflicts.is_empty());
        let mut plan_shown = false;
        for f in findings {
            if f.severity == Severity::Info && !plan_shown {
                plan_shown = true;
                self.plan(merged);
            }
            let fix_shown_in_plan = merged.is_some() && f.severity >= Severity::Warning;
            self.finding(f, fix_shown_in_plan);
        }
        if !plan_shown {
            self.plan(merged);
        }
    }

    fn finding(&mut self, f: &Finding, fix_in_plan: bool) {
        let p = self.paint();
        let width = self.look.width;
        let head = format!("{}[{}]: {}", p.severity(f.severity), f.code, f.message);
        match self.look.detail {
            Detail::Quiet => {
                let _ = writeln!(self.out, "{head}");
                if let Some(s) = &f.subject {
                    let _ = writeln!(self.out, "  {} {s}", p.dim("-->"));
                }
                if !fix_in_plan && let Some(fix) = f.fixes.first() {
                    let _ = writeln!(self.out, "  {} {fix}", p.dim("fix:"));
                }
            }
            Detail::Default => {
                let head = self.short_paths(&head);
                let _ = writeln!(self.out, "\n  {}", wrap(&head, width.saturating_sub(4), 4));
                // A note suggests; what backs it is for -v.
                let evidence = if f.severity == Severity::Info { None } else { self.key_evidence(f) };
                if let Some(seen) = evidence {
                    let line = format!("    {} {}", p.dim("saw:"), self.short_paths(&seen));
                    let _ = writeln!(self.out, "{}", console::truncate_str(&line, width, "…"));
                }
                if !f.likely.is_empty() {
                    self.likely(f);
                } else if !fix_in_plan && let Some(fix) = f.fixes.first() {
                    let _ = writeln!(self.out, "    {} {fix}", p.dim("fix:"));
                }
            }
            Detail::Verbose => {
                let _ = writeln!(self.out, "\n  {}", wrap(&head, width.saturating_sub(4), 4));
                let _ =
                    writeln!(self.out, "    {} {}", p.dim("why:"), wrap(&f.why, width.saturating_sub(9), 9));
                self.likely(f);
                for (i, fix) in f.fixes.iter().enumerate().filter(|_| f.likely.is_empty()) {
                    let _ = writeln!(self.out, "    {} {fix}", p.dim(if i == 0 { "fix:" } else { "    " }));
                }
                self.all_evidence(f);
                for (i, s) in f.sources.iter().enumerate() {
                    let _ = writeln!(self.out, "    {} {s}", p.dim(if i == 0 { "see:" } else { "    " }));
                }
            }
        }
    }

    /// A symptom's likely causes, numbered, each with the command that
    /// tells it from the others and its fix.
    fn likely(&mut self, f: &Finding) {
        if f.likely.is_empty() {
            return;
        }
        let p = self.paint();
        let width = self.look.width;
        let verbose = self.look.detail == Detail::Verbose;
        let _ = writeln!(self.out, "    {}", p.dim("likely causes, most likely first:"));
        for (i, l) in f.likely.iter().enumerate() {
            let _ = writeln!(self.out, "    {}. {}", i + 1, wrap(&l.cause, width.saturating_sub(7), 7));
            let _ = writeln!(self.out, "       {} {}", p.dim("check:"), l.confirm);
            let _ = writeln!(self.out, "       {}   {}", p.dim("fix:"), l.fix);
            if verbose {
                let _ = writeln!(self.out, "       {}   {}", p.dim("see:"), l.source);
            }
        }
    }

    /// The one line of evidence a short report shows: the first line of
    /// the first block, or of the next when the first says only an
    /// exception's name; a pointer when the block was shown before.
    fn key_evidence(&mut self, f: &Finding) -> Option<String> {
        let first = f.evidence.first()?;
        if self.shown.contains(first) {
            return Some(see_above(first));
        }
        self.shown.push(first.clone());
        let line = |e: &String| e.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
        let head = line(first)?;
        let bare_exception = head.rsplit(": ").next().is_some_and(|last| {
            last.ends_with("Error") && !last.contains(' ')
                || last.ends_with("Exception") && !last.contains(' ')
        });
        match f.evidence.get(1) {
            Some(next) if bare_exception => {
                self.shown.push(next.clone());
                line(next).or(Some(head))
            }
            _ => Some(head),
        }
    }

    fn all_evidence(&mut self, f: &Finding) {
        let p = self.paint();
        for ev in &f.evidence {
            if self.shown.contains(ev) {
                let _ = writeln!(self.out, "    {} {}", p.dim("saw:"), see_above(ev));
                continue;
            }
            self.shown.push(ev.clone());
            let lines: Vec<&str> = ev.lines().filter(|l| !l.trim().is_empty()).collect();
            for (i, line) in lines.iter().take(12).enumerate() {
                let _ = writeln!(
                    self.out,
                    "    {} {}",
                    p.dim(if i == 0 { "saw:" } else { "    " }),
                    line.trim_end()
                );
            }
            if lines.len() > 12 {
                let _ = writeln!(
                    self.out,
                    "         {}",
                    p.dim(&format!("… {} more lines (--format json)", lines.len() - 12))
                );
            }
        }
    }

    /// The merged fixes of one environment, numbered in the order to run them.
    fn plan(&mut self, plan: Option<&FixPlan>) {
        let Some(plan) = plan else { return };
        let p = self.paint();
        let indent = if self.look.detail == Detail::Quiet { "" } else { "  " };
        if self.look.detail != Detail::Quiet {
            self.out.push('\n');
        }
        match plan.steps.as_slice() {
            [] => {}
            [one] => {
                let _ = writeln!(self.out, "{indent}{} {one}", p.bold("fix all at once:"));
            }
            steps => {
                let _ = writeln!(self.out, "{indent}{}", p.bold("fix all at once, in this order:"));
                for (i, step) in steps.iter().enumerate() {
                    let _ = writeln!(self.out, "{indent}  {}. {step}", i + 1);
                }
            }
        }
        for c in &plan.conflicts {
            let _ = writeln!(self.out, "{indent}  {} {c}", p.dim("conflict:"));
        }
    }

    /// What a paste lacks: the commands to ask its reporter for.
    fn still_needed(&mut self, report: &Report) {
        if report.still_needed.is_empty() || self.look.detail == Detail::Quiet {
            return;
        }
        let p = self.paint();
        let _ = writeln!(self.out, "\n{}", p.bold("To judge more, ask the reporter to run:"));
        let width = report.still_needed.iter().map(|a| a.command.len()).max().unwrap_or(0);
        for a in &report.still_needed {
            let _ = writeln!(self.out, "  {:width$}  {}", a.command, p.dim(&a.unlocks));
        }
    }

    fn summary(&mut self, report: &Report, exit_code: u8) {
        let p = self.paint();
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
            Verdict::NotEvaluated if report.snapshot.model.is_some() => p.magenta("model not tried"),
            Verdict::NotEvaluated if report.snapshot.mode == ProbeMode::Pasted => {
                p.magenta("not enough in the paste to judge")
            }
            Verdict::NotEvaluated => p.magenta("nothing could be probed"),
            Verdict::Error => p.red("problems found"),
            Verdict::Warning => p.yellow("warnings"),
            Verdict::Unverified => p.magenta("not fully verified"),
            // A symptom with its likely causes is a question, not a clean bill.
            Verdict::Info if report.findings.iter().any(|f| !f.likely.is_empty()) => {
                p.yellow("a symptom whose cause the paste does not show")
            }
            Verdict::Info | Verdict::Ok => p.green("healthy"),
        };
        let gap = if self.look.detail == Detail::Quiet { "" } else { "\n" };
        let _ = writeln!(self.out, "{gap}{verdict}: {} · exit {exit_code}", parts.join(", "));
        if s.verdict == Verdict::NotEvaluated && report.snapshot.model.is_some() {
            let _ = writeln!(
                self.out,
                "no onnxruntime or TensorRT here to load it: install one, or judge the model against the release you deploy on with --target onnxruntime==VERSION (or tensorrt==VERSION)"
            );
        }
        if let Some(days) = s.matrix_age_days {
            let _ = writeln!(
                self.out,
                "{} this matrix is from {}, {days} days ago: releases since are unknown to it; a newer onnx-doctor knows them",
                p.yellow("note:"),
                report.matrix.version
            );
        }
        if self.look.detail == Detail::Default && has_more(report) {
            let hint = format!("why, every fix, all evidence and sources: {}", self.look.verbose_command);
            let _ = writeln!(self.out, "{}", p.dim(&hint));
        }
    }
}

/// Whether `-v` would show more than the default did.
fn has_more(report: &Report) -> bool {
    !report.findings.is_empty()
}

/// A pointer to evidence printed above: the import that failed, or the
/// block's first line.
fn see_above(evidence: &str) -> String {
    let first = evidence.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    match first.strip_prefix("import ").and_then(|rest| rest.split_once(':')) {
        Some((module, _)) => format!("{module} could not be imported: see above"),
        None => {
            let short = console::truncate_str(first, 60, "…");
            format!("the same as above ({short})")
        }
    }
}

/// A section's lines for the short report: the ok lines that fold joined
/// into one (where the first of them was), the absent ones into one at the
/// end, the hidden ones left out.
fn short_lines(section: &Section) -> Vec<(Status, String, String)> {
    let mut lines = Vec::new();
    let mut ok: Vec<&str> = Vec::new();
    let mut ok_at = None;
    let mut absent: Vec<&str> = Vec::new();
    for line in &section.lines {
        match &line.fold {
            Fold::Hide => {}
            Fold::Into(short) if line.status == Status::Ok => {
                ok_at.get_or_insert(lines.len());
                ok.push(short);
            }
            Fold::Into(short) if line.status == Status::Absent => absent.push(short),
            _ => lines.push((line.status, line.label.clone(), line.detail.clone())),
        }
    }
    if let Some(at) = ok_at {
        lines.insert(at, (Status::Ok, ok.join(", "), String::new()));
    }
    // What an environment lacks matters when it lacks everything; what the
    // machine lacks, always.
    match (&section.subject, absent.is_empty()) {
        (_, true) => {}
        (None, false) => {
            lines.push((Status::Absent, format!("not found: {}", absent.join(", ")), String::new()))
        }
        // The interpreter's line comes first; any package line that is not
        // "absent" means some package of the stack is there.
        (Some(_), false) if section.lines.iter().skip(1).any(|l| l.status != Status::Absent) => {}
        (Some(_), false) => {
            lines.push((Status::Absent, "no package of the stack is installed".into(), String::new()))
        }
    }
    lines
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// Wraps prose to `width` columns of text, indenting continuation lines by
/// `indent` (the first line's indent is the caller's).
pub(crate) fn wrap(text: &str, width: usize, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let options = textwrap::Options::new(width.max(20) + indent)
        .initial_indent(&pad)
        .subsequent_indent(&pad)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(false);
    textwrap::fill(text, options).trim_start().to_string()
}
