//! The layers of DESIGN.md, kept by a test: each module may use only the
//! modules below it, so judging never depends on the command line, the
//! matrix never on the judge, and the probes never on each other. Also: no
//! function in `src/` runs past 100 lines.
//!
//! Lowest first: `version`, `exit`, `escape`; `host`, `snapshot`; `matrix`, `formats`;
//! `probe`, `import`, `model`; `check`; `report`, `fleet`, `cli`; `app`;
//! `main`, `lib`.

#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["version", "exit", "escape"],
    &["host", "snapshot"],
    &["matrix", "formats"],
    &["probe", "import", "model"],
    &["check"],
    &["report", "fleet", "cli"],
    &["app"],
    &["main", "lib"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

/// The top-level module a source file belongs to (`src/probe/nvidia/elf.rs` → probe).
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The code before the file's tests: tests may reach anywhere.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.split("#[cfg(test)]").next().unwrap().to_string()
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    for path in sources() {
        let from = module_of(&path);
        let Some(from_rank) = rank(&from) else {
            wrong.push(format!("{}: module `{from}` is in no layer of this test", path.display()));
            continue;
        };
        let text = code(&path);
        for (at, _) in text.match_indices("crate::") {
            let target: String =
                text[at + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if target == from {
                continue;
            }
            match rank(&target) {
                Some(r) if r < from_rank => {}
                _ => wrong.push(format!("{} uses crate::{target}", path.display())),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "imports that run up or sideways:\n{}", wrong.join("\n"));
}

#[test]
fn no_function_runs_past_one_hundred_lines() {
    let mut long = Vec::new();
    for path in sources() {
        let lines: Vec<String> = code(&path).lines().map(strip_literals).collect();
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i].trim_start();
            let is_fn = l.starts_with("fn ")
                || l.starts_with("pub fn ")
                || l.starts_with("pub(crate) fn ")
                || l.starts_with("pub(super) fn ")
                || l.starts_with("const fn ")
                || l.starts_with("pub const fn ");
            if !is_fn {
                i += 1;
                continue;
            }
            let (mut depth, mut started, mut j) = (0i64, false, i);
            while j < lines.len() {
                depth += lines[j].matches('{').count() as i64 - lines[j].matches('}').count() as i64;
                started |= lines[j].contains('{');
                if (started && depth <= 0) || (!started && lines[j].contains(';')) {
                    break;
                }
                j += 1;
            }
            if j - i + 1 > 100 {
                long.push(format!("{}:{} ({} lines)", path.display(), i + 1, j - i + 1));
            }
            i = j + 1;
        }
    }
    assert!(long.is_empty(), "functions over 100 lines:\n{}", long.join("\n"));
}

/// The line without comments, string and char literals, whose braces are not code.
fn strip_literals(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        match (in_str, c) {
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, '"') => in_str = true,
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => in_str = false,
            (false, '\'') => {
                // A char literal ('{', '\'') or a lifetime ('a): skip a literal only.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    chars.next();
                    chars.next();
                    chars.next();
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            (false, c) => out.push(c),
            (true, _) => {}
        }
    }
    out
}
