//! `onnx-doctor rules` and `explain CODE`: the matrix's rules as a catalog
//! a person (or a script, in JSON) reads.

use std::fmt::Write as _;

use crate::matrix::{Matrix, Rule, RuleKind};

/// Every rule, one line each.
pub(crate) fn rules_text(matrix: &Matrix) -> String {
    let width = matrix.rules.iter().map(|r| r.code.len()).max().unwrap_or(0);
    let mut s = String::new();
    for r in &matrix.rules {
        let _ = writeln!(s, "{:<width$}  {:<7}  {}", r.code, r.severity.as_str(), r.summary);
    }
    let _ = writeln!(s, "\n{} rules · matrix {}", matrix.rules.len(), matrix.describe());
    s
}

/// Every rule, as a Markdown table.
pub(crate) fn rules_markdown(matrix: &Matrix) -> String {
    let mut s = String::from("| code | severity | summary |\n|---|---|---|\n");
    for r in &matrix.rules {
        let _ = writeln!(s, "| `{}` | {} | {} |", r.code, r.severity, r.summary);
    }
    s
}

/// Every rule in full, as JSON.
pub(crate) fn rules_json(matrix: &Matrix) -> String {
    serde_json::to_string_pretty(&matrix.rules).expect("rules serialise") + "\n"
}

/// The usage error for a code no rule has, with the codes it may have meant.
pub(crate) fn unknown_code(matrix: &Matrix, code: &str) -> String {
    let near: Vec<&str> = matrix
        .rules
        .iter()
        .map(|r| r.code.as_str())
        .filter(|c| code.split('-').filter(|w| w.len() > 2).any(|w| c.contains(w)))
        .take(5)
        .collect();
    let hint = if near.is_empty() { String::new() } else { format!("; did you mean {}?", near.join(", ")) };
    format!("no rule has the code {code:?}{hint} (`onnx-doctor rules` lists them all)")
}

/// One rule as JSON.
pub(crate) fn explain_json(rule: &Rule) -> String {
    serde_json::to_string_pretty(rule).expect("a rule serialises") + "\n"
}

/// One rule in full: why, when it fires, fixes, sources, where it is defined.
/// A fix or condition as a template a reader recognises:
/// `{row.pip_extras}` becomes `<row.pip_extras>`, `{a|b}` becomes `<a>`. A report fills these in; `explain`
/// has no machine to fill them from, and raw braces read as a bug.
fn as_template(fix: &str) -> String {
    let mut out = String::with_capacity(fix.len());
    let mut rest = fix;
    while let Some(open) = rest.find('{') {
        let Some(len) = rest[open..].find('}') else { break };
        let inner = &rest[open + 1..open + len];
        out.push_str(&rest[..open]);
        if inner.is_empty() || inner.contains(char::is_whitespace) {
            out.push_str(&rest[open..=open + len]);
        } else {
            let first = inner.split('|').next().unwrap_or(inner);
            out.push('<');
            out.push_str(first);
            out.push('>');
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out
}

pub(crate) fn explain(rule: &Rule) -> String {
    let mut s = format!("{} ({})\n\n{}\n\n", rule.code, rule.severity, as_template(&rule.summary));
    let components: Vec<&str> = rule.components.iter().map(|c| c.as_str()).collect();
    let _ = write!(s, "Involves: {}\n\n", components.join(", "));
    let _ = write!(s, "Why:\n  {}\n\n", super::text::wrap(&as_template(&rule.why), 88, 2));
    if let RuleKind::Facts { when, lookup, require, .. } = &rule.kind {
        s.push_str("Fires when:\n");
        for c in when {
            let _ = writeln!(s, "  {} {}", c.fact, as_template(&c.condition.to_string()));
        }
        if let Some(t) = lookup {
            let by = t.by.as_deref().map(|b| format!(" by {b}")).unwrap_or_default();
            let _ = writeln!(s, "  (looking up table {}{by})", t.table);
        }
        if !require.is_empty() {
            s.push_str("and any of these does not hold:\n");
            for c in require {
                let _ = writeln!(s, "  {} {}", c.fact, as_template(&c.condition.to_string()));
            }
        }
        s.push('\n');
    }
    if let RuleKind::Signature { likely, .. } = &rule.kind
        && !likely.is_empty()
    {
        s.push_str("Likely causes, most likely first (a report leaves out those its facts rule out):\n");
        for (n, l) in likely.iter().enumerate() {
            let _ = writeln!(s, "  {}. {}", n + 1, super::text::wrap(&as_template(&l.cause), 84, 5));
            let _ = writeln!(s, "     check: {}", as_template(&l.confirm));
            let _ = writeln!(s, "     fix:   {}", as_template(&l.fix));
            let _ = writeln!(s, "     see:   {}", l.source);
        }
        s.push('\n');
    }
    if !rule.fixes.is_empty() {
        let fixes: Vec<String> = rule.fixes.iter().map(|f| as_template(f)).collect();
        match fixes.iter().any(|f| f.contains('<')) {
            true => s.push_str("Fixes, best first (a report fills in each <value> from the machine):\n"),
            false => s.push_str("Fixes, best first:\n"),
        }
        for f in &fixes {
            let _ = writeln!(s, "  {f}");
        }
        s.push('\n');
    }
    s.push_str("Sources:\n");
    for src in &rule.sources {
        let _ = writeln!(s, "  {src}");
    }
    if let Some(since) = &rule.since {
        let _ = writeln!(s, "Known since {since}");
    }
    let _ = write!(s, "\nDefined at {}\n", rule.origin);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_shows_templates_never_raw_placeholders() {
        let matrix = crate::matrix::Matrix::load(&[]).unwrap();
        let placeholder = regex::Regex::new(r"\{[A-Za-z_][A-Za-z0-9_.|-]*\}").unwrap();
        for rule in &matrix.rules {
            let text = explain(rule);
            assert!(!placeholder.is_match(&text), "{}:\n{text}", rule.code);
        }
        assert_eq!(
            as_template("pip install \"x[{row.pip_extras}]=={version}\" {a|b}"),
            "pip install \"x[<row.pip_extras>]==<version>\" <a>"
        );
        assert_eq!(as_template("python -c \"d = {}\""), "python -c \"d = {}\"");
    }
}
