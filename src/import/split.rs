//! Several environments in one paste, kept apart where the text says so:
//! "Before:" / "After:", "Machine A" / "Machine B", "Working: torch 1.11,
//! onnx 1.16" / "Not working: torch 2.2.1, onnx 1.16". Without such
//! headings the paste is one environment, and a fact stated twice is a
//! conflict, as before.
//!
//! A part keeps the paste's line numbers, so every fact still names the
//! line it came from. What comes before the first heading (the error, the
//! prose) belongs to every part, read after the part's own lines: what the
//! part states wins.

use std::sync::LazyLock;

use regex::Regex;

/// Pastes larger than this are logs, not tickets comparing machines.
const MAX_SPLIT_BYTES: usize = 4 << 20;
/// More headings than this make a list, not a comparison.
const MAX_PARTS: usize = 6;

/// A heading's words, after markup: the whole line, or a label before `:`.
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    let kinds = r"(?:environment|env|machine|system|server|host|computer|setup|pc|node|container|device|config(?:uration)?|versions?)";
    let states = r"(?:working|not\s+working|broken|failing|good|bad|old|new|original|upgraded|downgraded)";
    super::prose_regex(&format!(
        r"(?ix)^(?:
            (?:before|after)(?:\s+(?:the\s+)?(?:upgrade|update|downgrade|installation|install|reinstall|change|fix))?
          | {kinds}\s*(?:\#?\d{{1,2}}|[a-d]|one|two|three)(?:\s*\(\s*{states}\s*\))?
          | (?:first|second|third)\s+{kinds}
          | {states}(?:\s+{kinds})?
          | (?:on\s+(?:my|the)\s+)?(?:laptop|desktop|workstation|server|local\s+machine|remote\s+machine|colab)
        )$"
    ))
    .expect("the heading pattern compiles")
});

/// Where a part starts: its line (0-based), its label, and the text after
/// the label's colon on that line, if any.
struct Heading<'t> {
    line: usize,
    label: String,
    rest: &'t str,
}

fn heading(line: &str) -> Option<(String, &str)> {
    let line = super::lines::clean(line, 200);
    let line = line.trim_start_matches('#').trim();
    let (label, rest) = match line.split_once(':') {
        Some((label, rest)) => (label, rest.trim()),
        None => (line, ""),
    };
    let label = label.trim().trim_matches(|c| matches!(c, '*' | '_' | '`')).trim();
    (label.len() <= 40 && HEADING.is_match(label)).then(|| (label.to_string(), rest))
}

/// One environment's lines: the shared ones, then its own.
pub(crate) struct Part<'t> {
    pub label: String,
    /// 1-based, inclusive.
    pub lines: (usize, usize),
    /// (0-based line number, text), in reading order.
    pub order: Vec<(usize, &'t str)>,
}

/// The parts of a paste that names several environments, or nothing when
/// it names fewer than two (or is not a ticket's size).
pub(crate) fn split(text: &str) -> Vec<Part<'_>> {
    if text.len() > MAX_SPLIT_BYTES {
        return Vec::new();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let headings: Vec<Heading<'_>> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| heading(l).map(|(label, rest)| Heading { line: i, label, rest }))
        .collect();
    let mut labels: Vec<String> = headings.iter().map(|h| h.label.to_ascii_lowercase()).collect();
    labels.dedup();
    if headings.len() < 2 || headings.len() > MAX_PARTS || labels.len() != headings.len() {
        return Vec::new();
    }
    let preamble = headings[0].line;
    headings
        .iter()
        .enumerate()
        .map(|(k, h)| {
            let mut end = headings.get(k + 1).map_or(lines.len(), |next| next.line);
            while end > h.line + 1 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
            // The shared lines first and the part's own last: the last
            // statement of a fact wins, so what the part states wins.
            let mut order: Vec<(usize, &str)> = (0..preamble).map(|i| (i, lines[i])).collect();
            // A blank line between, so nothing read in the preamble runs on.
            order.push((preamble.saturating_sub(1), ""));
            order.push((h.line, h.rest));
            order.extend((h.line + 1..end).map(|i| (i, lines[i])));
            Part { label: h.label.clone(), lines: (h.line + 1, end), order }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_people_write_are_recognised_and_prose_is_not() {
        for h in [
            "Before:",
            "**After the upgrade:**",
            "### Machine A",
            "Machine 2 (working):",
            "Working: pytorch 1.11, onnx 1.16",
            "Not working: pytorch 2.2.1, onnx 1.16",
            "Second environment",
            "Old environment:",
            "Server:",
        ] {
            assert!(heading(h).is_some(), "{h}");
        }
        for p in [
            "After running below code -",
            "After the following upgrade",
            "Environment: Ubuntu 22.04",
            "Working on a fix",
            "before I upgraded torch it worked",
            "torch: 2.1.2 -> 2.2.1",
        ] {
            assert!(heading(p).is_none(), "{p}");
        }
    }

    #[test]
    fn two_labelled_lines_make_two_parts_with_the_lines_they_came_from() {
        let text = "the export differs\n---\nNot working: pytorch 2.2.1, onnx 1.16\nWorking: pytorch 1.11, onnx 1.16\n";
        let parts = split(text);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].label, "Not working");
        assert_eq!(parts[0].lines, (3, 3));
        let order = &parts[1].order;
        assert_eq!(order.last(), Some(&(3, "pytorch 1.11, onnx 1.16")), "its own lines last, so they win");
        assert!(order.contains(&(0, "the export differs")), "the preamble belongs to every part");
        assert!(!order.iter().any(|(_, l)| l.contains("2.2.1")), "not the other part's lines");
    }

    #[test]
    fn one_heading_or_a_repeated_one_is_not_a_split() {
        assert!(split("Before:\ntorch==2.1.0\n").is_empty());
        assert!(split("Server:\ntorch==2.1.0\nServer:\ntorch==2.2.0\n").is_empty());
    }
}
