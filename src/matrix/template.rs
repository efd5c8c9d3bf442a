//! `{placeholder}` filling for rule texts and conditions.
//!
//! `{row.column}` takes a value from the looked-up table row; any other
//! `{name}` (letters, digits, `.`, `_`, `-`, `|`) asks the caller. Braces
//! that do not form a placeholder (`${HOME}` in a shell fix stays a shell
//! expansion only if written `$HOME`) are kept as they are.

use super::Row;

pub fn render(text: &str, row: Option<&Row>, mut lookup: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let name = &after[..close];
        let is_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '|'));
        if !is_name {
            out.push('{');
            rest = after;
            continue;
        }
        match (name.strip_prefix("row."), row) {
            (Some(col), Some(row)) => out.push_str(row.values.get(col).map_or("?", String::as_str)),
            (_, _) => out.push_str(&lookup(name)),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
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
    fn an_unclosed_brace_is_left_alone() {
        assert_eq!(render("a {b", None, |_| String::new()), "a {b");
    }
}
