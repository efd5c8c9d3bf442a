//! `matrix/schema.json` lets editors validate matrix YAML as it is typed. It
//! is only useful if it agrees with the loader: every shipped file passes
//! it, and the mistakes a team is likely to make in an overlay are refused
//! by both the schema and `onnx-doctor --matrix DIR`.

#![allow(clippy::disallowed_methods)]

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use assert_cmd::Command;

/// The reference validator: the `jsonschema` package from the package
/// registry, in a test venv, checking documents against draft 2020-12.
struct Validator {
    python: PathBuf,
    schema: PathBuf,
}

const VALIDATE: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
doc = json.load(sys.stdin)
for e in Draft202012Validator(schema).iter_errors(doc):
    print(f"{e.message} at /{'/'.join(str(p) for p in e.absolute_path)}")
"#;

fn schema() -> Validator {
    let venv = support::venv("jsonschema", &[&["jsonschema>=4.18,<5"]]);
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrix/schema.json");
    assert!(schema.is_file(), "matrix/schema.json exists");
    Validator { python: venv.join("bin/python"), schema }
}

/// YAML read the way an editor's YAML language server reads it.
fn as_json(yaml: &str) -> serde_json::Value {
    serde_saphyr::from_str(yaml).expect("the test YAML parses")
}

fn schema_errors(validator: &Validator, yaml: &str) -> Vec<String> {
    let mut child = Process::new(&validator.python)
        .args(["-c", VALIDATE])
        .arg(&validator.schema)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the venv's python runs");
    child.stdin.take().unwrap().write_all(as_json(yaml).to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the validator failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn every_shipped_matrix_file_validates() {
    let validator = schema();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrix");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# yaml-language-server: $schema=schema.json"),
            "{} does not point editors at the schema on its first line",
            path.display()
        );
        let errors = schema_errors(&validator, &text);
        assert!(errors.is_empty(), "{}:\n{}", path.display(), errors.join("\n"));
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} matrix files found");
}

const GOOD_RULE: &str = r#"
rules:
  - code: team-pins-numpy
    severity: warning
    components: [numpy]
    summary: Our images pin numpy below 2.
    message: "numpy {numpy} is installed"
    why: Our plugins are built against numpy 1.
    fixes: ['python -m pip install "numpy<2"']
    sources: [https://numpy.org/doc/stable/release/2.0.0-notes.html]
    since: "2024-06-16"
    when:
      numpy: ">=2"
"#;

fn overlay_accepted(yaml: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("team.yaml"), yaml).unwrap();
    Command::cargo_bin("onnx-doctor")
        .unwrap()
        .args(["rules", "--matrix"])
        .arg(dir.path())
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn schema_and_loader_agree_on_an_overlay_and_its_common_mistakes() {
    let validator = schema();
    assert!(schema_errors(&validator, GOOD_RULE).is_empty(), "{:?}", schema_errors(&validator, GOOD_RULE));
    assert!(overlay_accepted(GOOD_RULE), "the loader refuses the good overlay");

    let mistakes: &[(&str, String)] = &[
        ("an unknown key", GOOD_RULE.replace("    since:", "    severity_hint: high\n    since:")),
        ("no sources", GOOD_RULE.replace("    sources: [https://numpy.org/doc/stable/release/2.0.0-notes.html]\n", "")),
        ("a source that is not a URL", GOOD_RULE.replace("[https://numpy.org/doc/stable/release/2.0.0-notes.html]", "[numpy release notes]")),
        ("a code that is not kebab-case", GOOD_RULE.replace("team-pins-numpy", "Team_Pins_Numpy")),
        ("an unknown severity", GOOD_RULE.replace("severity: warning", "severity: fatal")),
        ("an unknown component", GOOD_RULE.replace("[numpy]", "[numpy, scipy]")),
        ("a `since` that is not a date", GOOD_RULE.replace("\"2024-06-16\"", "\"June 2024\"")),
        ("an impossible `since`", GOOD_RULE.replace("\"2024-06-16\"", "\"2024-13-01\"")),
        ("neither `when` nor `require`", GOOD_RULE.replace("    when:\n      numpy: \">=2\"\n", "")),
        ("a signature rule with `when`", GOOD_RULE.replace("    when:", "    signature: 'numpy'\n    when:")),
        ("`explained_by` on a fact rule", GOOD_RULE.replace("    when:", "    explained_by: [import-failed]\n    when:")),
        ("no summary", GOOD_RULE.replace("    summary: Our images pin numpy below 2.\n", "")),
        (
            "an unquoted version in a table",
            "tables:\n  team-table:\n    description: d\n    key: numpy\n    columns: [cuda]\n    sources: [https://numpy.org/]\n    rows:\n      - { versions: \"==2.*\", cuda: 12.10 }\n"
                .to_string(),
        ),
        (
            "a table row without `versions`",
            "tables:\n  team-table:\n    description: d\n    key: numpy\n    columns: [cuda]\n    sources: [https://numpy.org/]\n    rows:\n      - { cuda: \"12.4\" }\n"
                .to_string(),
        ),
        (
            "a table without sources anywhere",
            "tables:\n  team-table:\n    description: d\n    key: numpy\n    columns: [cuda]\n    rows:\n      - { versions: \"==2.*\", cuda: \"12.4\" }\n"
                .to_string(),
        ),
    ];
    for (what, yaml) in mistakes {
        assert_ne!(yaml, GOOD_RULE, "the mutation for {what} changed nothing");
        assert!(!schema_errors(&validator, yaml).is_empty(), "the schema accepts {what}");
        assert!(!overlay_accepted(yaml), "the loader accepts {what}");
    }
}

/// Components are data: the parts of the machine plus the embedded stack's
/// packages. The schema spells them out for editors, so it must list
/// exactly those.
#[test]
fn the_schema_lists_exactly_the_components_the_embedded_matrix_knows() {
    use onnx_doctor::matrix::{Component, Matrix};
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("matrix/schema.json")).unwrap(),
    )
    .unwrap();
    let mut listed: Vec<String> = schema["$defs"]["rule"]["properties"]["components"]["items"]["enum"]
        .as_array()
        .expect("the schema enumerates components")
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let matrix = Matrix::load(&[]).unwrap();
    let mut known: Vec<String> = Component::MACHINE
        .iter()
        .chain(matrix.stack.iter().map(|p| &p.component))
        .map(|c| c.as_str().to_string())
        .collect();
    for list in [&mut listed, &mut known] {
        list.sort();
        list.dedup();
    }
    assert_eq!(listed, known);
}
