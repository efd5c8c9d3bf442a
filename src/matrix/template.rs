//! `{placeholder}` filling for rule texts and conditions.
//!
//! `{row.column}` takes a value from the looked-up table row; any other
//! `{name}` (letters, digits, `.`, `_`, `-`, `|`) asks the caller. Braces
//! that do not form a placeholder (`${HOME}` in a shell fix stays a shell
//! expansion only if written `$HOME`) are kept as they are.

use std::fmt;

use super::Row;
use crate::snapshot::FactKey;

/// What one alternative of a `{a|b}` placeholder names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    Fact(FactKey),
    /// A column of the rule's table row.
    Row(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Text(String),
    /// The first alternative that has a value.
    Slot(Vec<Slot>),
}

/// A text with its placeholders read once: filling it looks nothing up by
/// name. Facts are read leniently; the loader checks them against the
/// matrix's vocabulary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template {
    text: String,
    parts: Vec<Part>,
}

impl Template {
    pub(crate) fn parse(text: &str) -> Self {
        let mut parts = Vec::new();
        let mut literal = String::new();
        scan(text, |piece| match piece {
            Piece::Text(t) => literal.push_str(t),
            Piece::Name(name) => {
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                let slots = name
                    .split('|')
                    .map(|alt| match alt.strip_prefix("row.") {
                        Some(col) => Slot::Row(col.to_string()),
                        None => Slot::Fact(FactKey::lenient(alt)),
                    })
                    .collect();
                parts.push(Part::Slot(slots));
            }
        });
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Self { text: text.to_string(), parts }
    }

    /// Every placeholder's alternatives.
    pub(crate) fn slots(&self) -> impl Iterator<Item = &[Slot]> {
        self.parts.iter().filter_map(|p| match p {
            Part::Slot(s) => Some(s.as_slice()),
            Part::Text(_) => None,
        })
    }

    /// Whether every placeholder is a row column only.
    pub(crate) fn rows_only(&self) -> bool {
        self.slots().all(|alts| alts.iter().all(|s| matches!(s, Slot::Row(_))))
    }

    /// The text with each placeholder given by `value` (the first of its
    /// alternatives that has one); `Err` with the last reason none had.
    pub(crate) fn fill(
        &self,
        mut value: impl FnMut(&Slot) -> Result<String, String>,
    ) -> Result<String, String> {
        let mut out = String::with_capacity(self.text.len());
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Slot(alts) => {
                    let mut why = String::from("no value");
                    let found = alts.iter().find_map(|s| value(s).map_err(|e| why = e).ok());
                    out.push_str(&found.ok_or(why)?);
                }
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

enum Piece<'a> {
    Text(&'a str),
    Name(&'a str),
}

/// Splits a text into literal pieces and placeholder names.
fn scan<'a>(text: &'a str, mut each: impl FnMut(Piece<'a>)) {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        each(Piece::Text(&rest[..open]));
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            each(Piece::Text(&rest[open..]));
            return;
        };
        let name = &after[..close];
        let is_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '|'));
        if !is_name {
            each(Piece::Text("{"));
            rest = after;
            continue;
        }
        each(Piece::Name(name));
        rest = &after[close + 1..];
    }
    each(Piece::Text(rest));
}

pub(crate) fn render(text: &str, row: Option<&Row>, mut lookup: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    scan(text, |piece| match piece {
        Piece::Text(t) => out.push_str(t),
        Piece::Name(name) => match (name.strip_prefix("row."), row) {
            (Some(col), Some(row)) => out.push_str(row.values.get(col).map_or("?", String::as_str)),
            (_, _) => out.push_str(&lookup(name)),
        },
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_filled_and_other_braces_are_kept() {
        let got = render("pip install \"numpy{x}\" && echo {not a name} {}", None, |k| format!("<{k}>"));
        assert_eq!(got, "pip install \"numpy<x>\" && echo {not a name} {}");
    }

    #[test]
    fn a_template_reads_its_slots_once() {
        let t = Template::parse("torch=={torch.release}+{torch.local|row.label} {not a name}");
        let slots: Vec<&[Slot]> = t.slots().collect();
        assert_eq!(slots.len(), 2);
        assert_eq!(slots[1][1], Slot::Row("label".into()));
        let filled = t.fill(|s| match s {
            Slot::Row(c) => Ok(format!("<{c}>")),
            Slot::Fact(k) => Err(format!("no {k}")),
        });
        assert_eq!(filled, Err("no torch.release".into()));
        let filled = t.fill(|s| Ok(format!("{s:?}").len().to_string()));
        assert!(filled.unwrap().ends_with(" {not a name}"));
        assert!(Template::parse("no slots").rows_only());
    }

    #[test]
    fn an_unclosed_brace_is_left_alone() {
        assert_eq!(render("a {b", None, |_| String::new()), "a {b");
    }
}
