//! A fleet as text, as Markdown for a GitHub issue or pull request, and as
//! one self-contained HTML page: the nodes × findings picture (nodes that
//! share the same findings are one row) and the version drift.
//!
//! Everything in a fleet came from reports, which anyone can write: node
//! names, codes and versions are escaped for the format they land in.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::{Fleet, OTHER_PROFILES, Profile};
use crate::matrix::Severity;

pub fn render_text(f: &Fleet) -> String {
    let mut out = format!("{} node reports", f.nodes);
    if !f.unreadable.is_empty() {
        let _ = write!(out, ", {} unreadable", f.unreadable.len());
    }
    out.push_str("\n\nFindings (nodes affected)\n");
    for x in &f.findings {
        let _ = writeln!(
            out,
            "  {:>6}  {:<7}  {}  e.g. {}",
            x.nodes,
            x.severity,
            plain(&x.code),
            plain(&x.examples.join(", "))
        );
    }
    out.push_str("\nDrift (outliers first)\n");
    for d in &f.drift {
        let _ = writeln!(out, "  {}", plain(&d.component));
        for g in &d.groups {
            let _ = writeln!(
                out,
                "    {:>6}  {}  e.g. {}",
                g.nodes,
                plain(&g.version),
                plain(&g.examples.join(", "))
            );
        }
    }
    if !f.unreadable.is_empty() {
        out.push_str("\nUnreadable\n");
        for u in &f.unreadable {
            let _ = writeln!(out, "  {}: {}", plain(&u.source), plain(&u.error));
        }
    }
    out
}

fn is_other(p: &Profile) -> bool {
    p.findings.len() == 1 && p.findings[0] == OTHER_PROFILES
}

/// The codes drawn as columns, most widespread first, each with the worst
/// severity it has on any node.
fn columns(f: &Fleet) -> Vec<(&str, Severity)> {
    f.findings.iter().map(|x| (x.code.as_str(), x.severity)).collect()
}

/// Each column's mark for one row: the severity where the row's nodes have
/// that finding. One pass over the columns with the row's codes in a set,
/// so a table costs rows × columns, not that times the codes per row.
fn row_marks<'c>(
    p: &Profile,
    cols: &'c [(&'c str, Severity)],
) -> impl Iterator<Item = (&'c str, Option<Severity>)> + 'c {
    let has: HashSet<&str> = p.findings.iter().map(String::as_str).collect();
    let marks: Vec<bool> = cols.iter().map(|(c, _)| has.contains(c)).collect();
    cols.iter().zip(marks).map(|(&(c, sev), marked)| (c, marked.then_some(sev)))
}

fn healthy_nodes(f: &Fleet) -> usize {
    f.profiles.iter().filter(|p| p.findings.is_empty()).map(|p| p.nodes).sum()
}

pub fn render_markdown(f: &Fleet) -> String {
    let mut out = format!("## onnx-doctor fleet: {} nodes\n\n", f.nodes);
    let _ = writeln!(
        out,
        "{} healthy · {} with findings · {} reports unreadable\n",
        healthy_nodes(f),
        f.nodes - healthy_nodes(f),
        f.unreadable.len()
    );
    let cols = columns(f);
    if !f.profiles.is_empty() {
        out.push_str("### Nodes × findings\n\nEach row is the nodes that have exactly the same findings: ");
        out.push_str("🔴 error · 🟡 warning · 🔵 note.\n\n| nodes | e.g. |");
        for (c, _) in &cols {
            let _ = write!(out, " `{}` |", md_code(c));
        }
        out.push_str("\n|---:|---|");
        out.push_str(&":-:|".repeat(cols.len()));
        out.push('\n');
        for p in &f.profiles {
            let examples = if is_other(p) {
                format!("{} ({})", OTHER_PROFILES, md_cell(&p.examples.join(", ")))
            } else {
                md_cell(&p.examples.join(", "))
            };
            let _ = write!(out, "| {} | {examples} |", p.nodes);
            for (_, severity) in row_marks(p, &cols) {
                let mark = match severity {
                    Some(Severity::Error) => "🔴",
                    Some(Severity::Warning) => "🟡",
                    Some(Severity::Info) => "🔵",
                    None => "",
                };
                let _ = write!(out, " {mark} |");
            }
            out.push('\n');
        }
    }
    out.push_str(
        "\n### Drift (outliers first)\n\n| component | version | nodes | e.g. |\n|---|---|---:|---|\n",
    );
    for d in &f.drift {
        for g in &d.groups {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                md_cell(&d.component),
                md_cell(&g.version),
                g.nodes,
                md_cell(&g.examples.join(", "))
            );
        }
    }
    if !f.unreadable.is_empty() {
        out.push_str("\n### Unreadable reports\n\n");
        for u in &f.unreadable {
            let _ = writeln!(out, "- {}: {}", md_cell(&u.source), md_cell(&u.error));
        }
    }
    out
}

const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#1f2328}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}
table{border-collapse:collapse}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:bottom}
td.count{text-align:right;font-variant-numeric:tabular-nums}
th.code{writing-mode:vertical-rl;transform:rotate(180deg);font:12px ui-monospace,monospace;white-space:nowrap}
td.mark{text-align:center;font-weight:bold}
td.error{background:#ffd7d5;color:#a40e26}td.warning{background:#fff1c2;color:#7d4e00}td.info{background:#ddf4ff;color:#0550ae}
tr.healthy td:first-child{border-left:4px solid #1a7f37}
.bar{display:flex;width:480px;height:20px;border:1px solid #d0d7de}
.bar span{display:block;overflow:hidden;white-space:nowrap;font-size:11px;padding:2px 4px;box-sizing:border-box}
.v0{background:#ddf4ff}.v1{background:#fff1c2}.v2{background:#ffd7d5}.v3{background:#e6dcfd}.v4{background:#d2f4dc}
";

/// One HTML page, with no script and nothing fetched.
pub fn render_html(f: &Fleet) -> String {
    let mut out = String::from("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        out,
        "<title>onnx-doctor fleet: {} nodes</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        f.nodes
    );
    let _ = writeln!(out, "<h1>onnx-doctor fleet: <span id=\"nodes\">{}</span> nodes</h1>", f.nodes);
    let _ = writeln!(
        out,
        "<p>{} healthy · {} with findings · {} reports unreadable</p>",
        healthy_nodes(f),
        f.nodes - healthy_nodes(f),
        f.unreadable.len()
    );
    html_matrix(&mut out, f);
    html_drift(&mut out, f);
    if !f.unreadable.is_empty() {
        out.push_str("<h2>Unreadable reports</h2>\n<ul id=\"unreadable\">\n");
        for u in &f.unreadable {
            let _ = writeln!(out, "<li><code>{}</code>: {}</li>", html(&u.source), html(&u.error));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// Rows: the nodes that share a set of findings; columns: the findings.
fn html_matrix(out: &mut String, f: &Fleet) {
    let cols = columns(f);
    out.push_str("<h2>Nodes × findings</h2>\n<table id=\"matrix\">\n<thead><tr><th>nodes</th><th>e.g.</th>");
    for (c, _) in &cols {
        let _ = write!(out, "<th class=\"code\" title=\"{0}\">{0}</th>", html(c));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for p in &f.profiles {
        let class = if p.findings.is_empty() { " class=\"healthy\"" } else { "" };
        let label = if is_other(p) { format!("{OTHER_PROFILES}: ") } else { String::new() };
        let _ = write!(
            out,
            "<tr{class}><td class=\"count\">{}</td><td>{}{}</td>",
            p.nodes,
            html(&label),
            html(&p.examples.join(", "))
        );
        for (c, severity) in row_marks(p, &cols) {
            if let Some(sev) = severity {
                let mark = match sev {
                    Severity::Error => "✖",
                    Severity::Warning => "▲",
                    Severity::Info => "●",
                };
                let _ = write!(out, "<td class=\"mark {sev}\" title=\"{sev}: {}\">{mark}</td>", html(c));
            } else {
                out.push_str("<td></td>");
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n<tfoot><tr><th colspan=\"2\">nodes affected</th>");
    for x in &f.findings {
        let _ = write!(out, "<td class=\"count\">{}</td>", x.nodes);
    }
    out.push_str("</tr></tfoot>\n</table>\n");
}

/// Per component, a bar of its versions, each as wide as its share of nodes.
fn html_drift(out: &mut String, f: &Fleet) {
    out.push_str("<h2>Version drift</h2>\n<table id=\"drift\">\n<tr><th>component</th><th>versions (outliers first)</th></tr>\n");
    for d in &f.drift {
        let total: usize = d.groups.iter().map(|g| g.nodes).sum::<usize>().max(1);
        let _ = write!(out, "<tr><td>{}</td><td><div class=\"bar\">", html(&d.component));
        for (i, g) in d.groups.iter().enumerate() {
            let percent = g.nodes as f64 * 100.0 / total as f64;
            let _ = write!(
                out,
                "<span class=\"v{}\" style=\"width:{percent:.2}%\" title=\"{}: {} nodes, e.g. {}\">{} ({})</span>",
                i % 5,
                html(&g.version),
                g.nodes,
                html(&g.examples.join(", ")),
                html(&g.version),
                g.nodes
            );
        }
        out.push_str("</div></td></tr>\n");
    }
    out.push_str("</table>\n");
}

/// Text for an HTML element or a quoted attribute.
fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() || crate::escape::is_hidden(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text for a Markdown table cell: no line breaks, no cell separators, no
/// HTML or inline markup that could change the page.
fn md_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '!' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || crate::escape::is_hidden(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a Markdown code span: no backticks, no cell separators.
fn md_code(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '`' | '|' => '\'',
            c if c.is_control() || crate::escape::is_hidden(c) => ' ',
            c => c,
        })
        .collect()
}

/// Text for a terminal: no control characters (escape sequences) from a report.
fn plain(s: &str) -> String {
    s.chars().map(|c| if c.is_control() || crate::escape::is_hidden(c) { ' ' } else { c }).collect()
}
