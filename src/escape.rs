//! Making untrusted text inert where it is printed.
//!
//! Pastes, snapshots and reports come from other people's machines and
//! tickets; any string in them may carry terminal escape sequences (an OSC 52
//! that writes the clipboard, a screen clear), bidirectional overrides that
//! reorder what a reader sees, HTML that a Markdown page would render, or a
//! code fence that ends the block it sits in. Each renderer passes what it
//! prints through the function for its syntax, here, once.

use std::borrow::Cow;

/// A character a terminal or a page would act on instead of showing: C0
/// controls other than tab and newline, DEL, C1 controls, the Unicode
/// bidirectional overrides and isolates, and the noncharacters U+FFFE/U+FFFF.
pub fn is_hidden(c: char) -> bool {
    matches!(c as u32,
        0..=8 | 0x0B..=0x1F | 0x7F..=0x9F | 0x202A..=0x202E | 0x2066..=0x2069 | 0xFFFE | 0xFFFF)
}

/// `s` with every hidden character written out as a visible escape
/// (`\x1b`, `\r`, `\u{202e}`); newlines and tabs are kept.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 && is_hidden(c) => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` with no line that a CI runner would obey as a command: GitHub
/// Actions reads a line that starts, after blanks, with `::` (`::error::`,
/// `::add-mask::`) or `##[` as one, wherever the line came from. Such a
/// line's first character is written as an escape (`\x3a:error::…`), so the
/// log shows it. Applied to whole rendered reports: a value that wraps can
/// start a line the value itself did not start.
pub fn no_commands(s: &str) -> Cow<'_, str> {
    let command = |line: &str| {
        let t = line.trim_start();
        t.starts_with("::") || t.starts_with("##[")
    };
    if !s.split('\n').any(command) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if command(line) {
            let at = line.len() - line.trim_start().len();
            // The first character is `:` or `#`: one byte.
            out.push_str(&line[..at]);
            out.push_str(&format!("\\x{:02x}", line.as_bytes()[at]));
            out.push_str(&line[at + 1..]);
        } else {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

/// `s` on one line: hidden characters visible, and newlines as `\n`.
pub(crate) fn one_line(s: &str) -> String {
    visible(s).replace('\n', "\\n")
}

/// Markdown prose or the text of an HTML element: visible, with `&`, `<`
/// and `>` as entities, so `<img src=...>` is shown, not loaded.
pub(crate) fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in visible(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Prose for a reply posted on a public tracker, where it notifies and
/// links: [`markdown_text`] on one line, every Markdown punctuation mark
/// backslash-escaped (no emphasis, link or list a value could open), and a
/// word joiner (U+2060) breaking what GitHub would turn into a mention
/// (`@user`), an issue reference (`#123`, `GH-123`) or a bare link
/// (`https://…`, `www.…`). The reader sees the same characters.
pub(crate) fn reply_text(s: &str) -> String {
    const JOINER: char = '\u{2060}';
    let flat = visible(s).replace(['\n', '\t'], " ");
    let chars: Vec<char> = flat.chars().collect();
    let mut out = String::with_capacity(flat.len() + 16);
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '!' | '|'
            | '~' | '$' | '^' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        let breaks = match c {
            '@' | '#' => next.is_some_and(|n| n.is_alphanumeric()),
            // `GH-123`: the joiner goes after the H, before the escaped dash.
            'H' => i > 0 && chars[i - 1] == 'G' && next == Some('-'),
            ':' => next == Some('/') && chars.get(i + 2) == Some(&'/'),
            'w' => i >= 2 && chars[i - 2..i] == ['w', 'w'] && next == Some('.'),
            _ => false,
        };
        if breaks {
            out.push(JOINER);
        }
    }
    out
}

/// A Markdown table cell: [`markdown_text`] on one line, `|` escaped.
pub(crate) fn markdown_cell(s: &str) -> String {
    markdown_text(s).replace('|', "\\|").replace('\n', " ")
}

/// A fenced code block of `lang` holding `body`: the fence is longer than
/// any run of backticks inside, so the block cannot be closed early.
pub(crate) fn code_block(lang: &str, body: &str) -> String {
    let fence = "`".repeat(longest_run(body, '`').max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}", visible(body))
}

/// JSON text (as serde_json writes it) with the hidden characters it leaves
/// raw written as `\uXXXX` escapes: still the same JSON, now inert.
pub(crate) fn json_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if is_hidden(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// An inline code span holding `s` on one line, delimited by more backticks
/// than any run inside.
pub(crate) fn code_span(s: &str) -> String {
    let s = one_line(s);
    let ticks = "`".repeat(longest_run(&s, '`') + 1);
    // A span that starts or ends with a backtick needs a space to keep it apart.
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_sequences_are_shown_not_obeyed() {
        assert_eq!(
            visible("a\x1b]52;c;QQ==\x07b\r\u{9b}\u{202e}\n"),
            "a\\x1b]52;c;QQ==\\x07b\\r\\x9b\\u{202e}\n"
        );
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn fences_outgrow_the_backticks_they_hold() {
        assert_eq!(code_block("text", "a ```` b"), "`````text\na ```` b\n`````");
        assert_eq!(code_block("sh", "x"), "```sh\nx\n```");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
    }

    #[test]
    fn json_keeps_its_meaning_without_raw_controls() {
        let raw = serde_json::to_string("a\u{9b}\u{ffff}b").unwrap();
        let inert = json_text(&raw);
        assert_eq!(inert, r#""a\u009b\uffffb""#);
        assert_eq!(serde_json::from_str::<String>(&inert).unwrap(), "a\u{9b}\u{ffff}b");
    }

    #[test]
    fn a_reply_mentions_links_and_marks_up_nothing() {
        let j = '\u{2060}';
        assert_eq!(reply_text("@octocat"), format!("@{j}octocat"));
        assert_eq!(reply_text("see #12 and GH-3"), format!("see \\#{j}12 and GH{j}\\-3"));
        assert_eq!(reply_text("https://x.y www.z.w"), format!("https:{j}//x.y www{j}.z.w"));
        assert_eq!(reply_text("[a](b) *c* <img>\nd"), "\\[a\\]\\(b\\) \\*c\\* &lt;img&gt; d");
        assert_eq!(reply_text("a@ b# c"), "a@ b\\# c");
    }

    #[test]
    fn html_in_markdown_is_shown_as_text() {
        assert_eq!(markdown_cell("<img src=x> | a\nb"), "&lt;img src=x&gt; \\| a b");
    }

    #[test]
    fn lines_that_a_ci_runner_would_obey_are_shown_instead() {
        assert_eq!(
            no_commands("a\n  ::error::x\n##[group]y\nok :: z"),
            "a\n  \\x3a:error::x\n\\x23#[group]y\nok :: z"
        );
        assert!(matches!(no_commands("plain\ntext"), Cow::Borrowed(_)));
    }
}
