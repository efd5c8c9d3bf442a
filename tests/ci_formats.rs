//! `--format junit` and `--format github` as CI systems read them.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};

use support::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshots").join(format!("{name}.json"))
}

/// The JUnit schema Jenkins' xUnit plugin validates against (junit-10.xsd,
/// https://github.com/jenkinsci/xunit-plugin/blob/master/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd):
/// its elements, their allowed and required attributes and the time
/// pattern, checked with Python's ElementTree; plus what makes a report
/// read right: one failure per case at most, counts that add up, unique
/// case names, a class name with one dot. Prints "tests failures skipped".
const VALIDATE: &str = r#"
import re, sys, xml.etree.ElementTree as ET
TIME = re.compile(r'(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?\Z')
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == 'testsuites', root.tag
assert set(root.attrib) <= {'name', 'time', 'tests', 'failures', 'errors'}, root.attrib
assert TIME.match(root.get('time', '')), root.get('time')
SUITE = {'name', 'tests', 'failures', 'errors', 'group', 'time', 'skipped', 'timestamp', 'hostname', 'id',
         'package', 'file', 'log', 'url'}
T = F = S = 0
for s in root:
    assert s.tag == 'testsuite', s.tag
    assert {'name', 'tests', 'failures', 'errors'} <= set(s.attrib) <= SUITE, s.attrib
    assert TIME.match(s.get('time', '')), s.get('time')
    assert all(c.tag in ('testcase', 'properties', 'system-out', 'system-err', 'testsuite') for c in s)
    cases = s.findall('testcase')
    fails = sum(1 for c in cases if c.find('failure') is not None)
    skips = sum(1 for c in cases if c.find('skipped') is not None)
    assert int(s.get('tests')) == len(cases), (s.get('tests'), len(cases))
    assert int(s.get('failures')) == fails and int(s.get('skipped')) == skips and s.get('errors') == '0'
    names = [(c.get('classname'), c.get('name')) for c in cases]
    assert len(names) == len(set(names)), names
    for c in cases:
        assert 'name' in c.attrib and set(c.attrib) <= {'name', 'time', 'classname', 'group'}, c.attrib
        assert c.get('classname').count('.') == 1, c.get('classname')
        assert TIME.match(c.get('time', '')), c.get('time')
        assert len(c.findall('failure')) <= 1
        for x in c:
            assert x.tag in ('skipped', 'error', 'failure', 'system-out', 'system-err'), x.tag
            assert set(x.attrib) <= {'type', 'message'}, x.attrib
    T, F, S = T + len(cases), F + fails, S + skips
assert int(root.get('tests')) == T and int(root.get('failures')) == F and root.get('errors') == '0'
print(T, F, S)
"#;

/// Runs the doctor on `args`, validates its JUnit output, and gives the
/// exit code, the XML, and the (tests, failures, skipped) counts.
fn junit(args: &[&str]) -> (i32, String, [usize; 3]) {
    let out = doctor().args(args).args(["--format", "junit"]).output().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.xml");
    std::fs::write(&file, &out.stdout).unwrap();
    let check = std::process::Command::new(base_python()).args(["-c", VALIDATE]).arg(&file).output().unwrap();
    let xml = String::from_utf8(out.stdout).unwrap();
    assert!(check.status.success(), "{}\n{xml}", String::from_utf8_lossy(&check.stderr));
    let counts: Vec<usize> =
        String::from_utf8(check.stdout).unwrap().split_whitespace().map(|n| n.parse().unwrap()).collect();
    (out.status.code().unwrap(), xml, [counts[0], counts[1], counts[2]])
}

#[test]
fn junit_follows_the_schema_and_fails_what_the_exit_code_fails() {
    let snap = fixture("gpu-rtx5090-cu126");
    let snap = snap.to_str().unwrap();
    // Two missed pins: one case, one failure holding both.
    let args = ["--snapshot", snap, "--expect", "numpy>=9", "--expect", "numpy<1"];
    let (code, xml, [tests, failures, skipped]) = junit(&args);
    assert_eq!(code, 1);
    assert_eq!(xml.matches("name=\"expectation-not-met\"").count(), 1, "{xml}");
    assert!(xml.contains("(and 1 more)"), "{xml}");
    // The error fails; the warning is output of a passing case.
    assert_eq!(failures, 2, "{xml}");
    assert!(xml.contains("<system-out>warning: onnx 1.17.0 defaults to opset 22"), "{xml}");
    assert!(tests > 10 && skipped >= 1, "{tests} {skipped}");
    assert!(xml.contains("classname=\"onnx-doctor.gpu\""), "{xml}");

    let strict = ["--snapshot", snap, "--fail-on", "warning"];
    let (code, xml, [_, failures, _]) = junit(&strict);
    assert_eq!((code, failures), (1, 2), "{xml}");
    assert!(xml.contains("<failure type=\"warning\" message=\"onnx 1.17.0 defaults to opset 22"), "{xml}");

    // Nothing at the fail level: no failure, exit 0.
    let healthy = fixture("healthy");
    let (code, xml, [_, failures, _]) = junit(&["--snapshot", healthy.to_str().unwrap()]);
    assert_eq!((code, failures), (0, 0), "{xml}");
}

#[test]
fn junit_names_each_environment_apart() {
    let snap = fixture("five-envs");
    let (_, xml, [_, failures, _]) = junit(&["--snapshot", snap.to_str().unwrap()]);
    // `/usr/bin/python3` holds none of the stack: no rule applies, no suite.
    for class in ["ort117-numpy2", "onnx113-protobuf319", "onnxruntime-gpu-nodeps", "healthy"] {
        assert!(xml.contains(&format!("classname=\"onnx-doctor.{class}\"")), "{class}\n{xml}");
    }
    assert_eq!(failures, 4, "{xml}");
}

#[test]
fn github_annotations_name_the_environment_give_every_fix_and_fill_the_job_summary() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let snap = fixture("five-envs");
    let out = doctor()
        .args(["--format", "github", "--snapshot"])
        .arg(&snap)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let gh = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = gh.lines().collect();
    // One line per finding, and the summary notice; no raw line breaks.
    assert_eq!(lines.len(), 6 + 1, "{gh}");
    let provider = lines
        .iter()
        .find(|l| l.contains("onnxruntime-provider-cannot-load"))
        .unwrap_or_else(|| panic!("{gh}"));
    assert!(provider.starts_with(
        "::error title=onnx-doctor onnxruntime-provider-cannot-load in onnxruntime-gpu-nodeps::"
    ));
    assert!(provider.contains("%0AFix: "), "{provider}");
    assert!(provider.contains("%0A  or: "), "every fix: {provider}");
    // A title is a property: its colons and commas are escaped.
    assert!(lines.iter().all(|l| l.split("::").count() == 3), "{gh}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.starts_with("earlier step\n## onnx-doctor report"), "{written}");
    assert!(written.contains("onnxruntime-provider-cannot-load"), "{written}");
    // Public on a public repository: redacted like any Markdown report.
    assert!(!written.contains("/home/ada/"), "{written}");
}
