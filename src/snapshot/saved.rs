//! The saved report: the one place its shape is known.
//!
//! A report is saved as JSON (`--format json`, what `fleet` folds) or as
//! Markdown (`report -o report.md`, to attach to an issue) whose snapshot
//! sits in a fenced block under a fixed summary line. Everything that
//! writes one or reads one back (`--snapshot`, `diagnose` of a pasted
//! report, `fleet`) takes the schema version, the marker and the fields it
//! relies on from here.

use serde::Deserialize;

use super::{Severity, Snapshot};

/// Bumped whenever a saved snapshot would be read differently.
pub const SCHEMA_VERSION: u32 = 1;

/// The first line of a Markdown report.
pub(crate) const MARKDOWN_HEADING: &str = "## onnx-doctor report";

/// The summary line of a Markdown report's snapshot block.
pub(crate) const SNAPSHOT_SUMMARY: &str = "Snapshot (re-check with <code>onnx-doctor --snapshot FILE</code>)";

/// What a reader relies on in a JSON report: its findings' codes and
/// severities, and the snapshot they were judged from.
#[derive(Deserialize)]
pub(crate) struct SavedReport {
    pub findings: Vec<SavedFinding>,
    pub snapshot: Snapshot,
}

#[derive(Deserialize)]
pub(crate) struct SavedFinding {
    pub code: String,
    pub severity: Severity,
}

/// A JSON report of the schema this doctor reads; the error says what the
/// text is instead.
pub(crate) fn read_report(text: &str) -> Result<SavedReport, String> {
    checked(serde_json::from_str(text))
}

/// A JSON report already parsed as a value (one of a stream).
pub(crate) fn report_from_value(value: serde_json::Value) -> Result<SavedReport, String> {
    checked(serde_json::from_value(value))
}

fn checked(parsed: serde_json::Result<SavedReport>) -> Result<SavedReport, String> {
    let report = parsed.map_err(|e| format!("not an onnx-doctor JSON report ({e})"))?;
    let version = report.snapshot.schema_version;
    if version != SCHEMA_VERSION {
        return Err(format!(
            "skipped: snapshot schema {version}, and this doctor reads schema {SCHEMA_VERSION}"
        ));
    }
    Ok(report)
}

/// Reads a saved snapshot: a bare snapshot, the JSON report that holds
/// one, or the Markdown report with its snapshot block. The error says
/// what the text is instead.
pub(crate) fn read_snapshot(text: &str) -> Result<Snapshot, String> {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    let json = if trimmed.starts_with('{') {
        trimmed
    } else {
        markdown_snapshot_block(text)
            .ok_or("neither JSON nor an onnx-doctor Markdown report (its snapshot block is missing)")?
    };
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("not JSON ({e})"))?;
    let value = match value.get("snapshot") {
        Some(inner) if value.get("findings").is_some() => inner.clone(),
        _ => value,
    };
    let version = value.get("schema_version").and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(SCHEMA_VERSION)) {
        return Err(format!(
            "schema version {} is not {SCHEMA_VERSION}, the one this doctor reads",
            version.map_or("missing".into(), |v| v.to_string())
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("not an onnx-doctor snapshot ({e})"))
}

/// The Markdown block that carries a snapshot: the summary line and the
/// snapshot's JSON in `fenced` (a code block as long as the JSON needs).
pub(crate) fn markdown_block(fenced: &str) -> String {
    format!("<details><summary>{SNAPSHOT_SUMMARY}</summary>\n\n{fenced}\n\n</details>")
}

/// The JSON inside a Markdown report's snapshot block.
fn markdown_snapshot_block(text: &str) -> Option<&str> {
    let rest = &text[text.find(SNAPSHOT_SUMMARY)?..];
    // The fence is as long as it had to be to hold the JSON's own backticks.
    let open = rest.find("```")?;
    let ticks = rest[open..].chars().take_while(|c| *c == '`').count();
    let start = open + ticks + rest[open + ticks..].find('\n')?;
    let fence = format!("\n{}", "`".repeat(ticks));
    let end = rest[start..].find(&fence)?;
    Some(&rest[start..start + end])
}

/// Whether pasted text is a doctor report or snapshot rather than a log:
/// then it is read as one, and a schema it cannot read is an error, not a
/// paste with no facts in it.
pub fn looks_saved(text: &str) -> bool {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    (trimmed.starts_with('{') && trimmed.contains("\"schema_version\""))
        || (trimmed.starts_with(MARKDOWN_HEADING) && markdown_snapshot_block(text).is_some())
}
