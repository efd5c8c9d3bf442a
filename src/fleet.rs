//! `onnx-doctor fleet`: many nodes' reports, one view.
//!
//! Teams already run the doctor on every node (a Kubernetes DaemonSet, a
//! Slurm allocation) and collect JSON reports. This reads them as a stream,
//! keeping per report only the findings' codes and a few versions, so
//! 10,000 reports fit in a few megabytes: which findings affect how many
//! nodes, and the drift table, nodes grouped by the versions that matter,
//! outliers (the smallest groups) first. Reports that do not parse are
//! listed, never fatal.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The versions compared across nodes, and where each is in a report.
const DRIFT: &[(&str, &[&str])] = &[
    ("driver", &["snapshot", "nvidia", "found", "driver", "found", "version"]),
    ("gpu", &["snapshot", "nvidia", "found", "gpus", "found", "0", "name"]),
    ("cuda toolkit", &["snapshot", "nvidia", "found", "toolkits", "0", "version", "found"]),
    ("cudnn", &["snapshot", "nvidia", "found", "headers", "0", "version"]),
];
const PACKAGES: &[&str] = &["torch", "onnxruntime", "onnxruntime-gpu", "onnx", "numpy", "tensorrt"];

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Fleet {
    pub nodes: usize,
    pub unreadable: Vec<Unreadable>,
    /// Most widespread first.
    pub findings: Vec<FleetFinding>,
    pub drift: Vec<Drift>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Unreadable {
    pub source: String,
    pub error: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FleetFinding {
    pub code: String,
    pub severity: String,
    pub nodes: usize,
    /// Up to five of them.
    pub examples: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Drift {
    pub component: String,
    /// Smallest groups (the outliers) first.
    pub groups: Vec<Group>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Group {
    pub version: String,
    pub nodes: usize,
    pub examples: Vec<String>,
}

#[derive(Default)]
struct Acc {
    fleet: Fleet,
    findings: BTreeMap<String, (String, usize, Vec<String>)>,
    drift: BTreeMap<String, BTreeMap<String, (usize, Vec<String>)>>,
}

impl Acc {
    fn add(&mut self, node: &str, report: &Value) {
        if report.get("snapshot").is_none() || report.get("findings").is_none() {
            self.fleet
                .unreadable
                .push(Unreadable { source: node.into(), error: "not an onnx-doctor JSON report".into() });
            return;
        }
        self.fleet.nodes += 1;
        let mut seen = Vec::new();
        for f in report["findings"].as_array().into_iter().flatten() {
            let code = f["code"].as_str().unwrap_or("?").to_string();
            if seen.contains(&code) {
                continue; // one node counts once per code
            }
            let e = self
                .findings
                .entry(code.clone())
                .or_insert_with(|| (f["severity"].as_str().unwrap_or("?").to_string(), 0, Vec::new()));
            e.1 += 1;
            if e.2.len() < 5 {
                e.2.push(node.into());
            }
            seen.push(code);
        }
        for (component, path) in DRIFT {
            let value = path.iter().try_fold(report, |v, k| match k.parse::<usize>() {
                Ok(i) => v.get(i),
                Err(_) => v.get(*k),
            });
            self.group(component, value.and_then(Value::as_str).unwrap_or("(none)"), node);
        }
        let dists = report["snapshot"]["pythons"][0]["distributions"]["found"].as_array();
        for name in PACKAGES {
            let v = dists
                .and_then(|d| d.iter().find(|x| x["name"] == *name))
                .and_then(|x| x["version"].as_str())
                .unwrap_or("(none)");
            self.group(name, v, node);
        }
    }

    fn group(&mut self, component: &str, version: &str, node: &str) {
        let g = self.drift.entry(component.into()).or_default().entry(version.into()).or_default();
        g.0 += 1;
        if g.1.len() < 5 {
            g.1.push(node.into());
        }
    }

    fn finish(mut self) -> Fleet {
        let mut findings: Vec<FleetFinding> = self
            .findings
            .into_iter()
            .map(|(code, (severity, nodes, examples))| FleetFinding { code, severity, nodes, examples })
            .collect();
        findings.sort_by(|a, b| b.nodes.cmp(&a.nodes).then(a.code.cmp(&b.code)));
        self.fleet.findings = findings;
        self.fleet.drift = self
            .drift
            .into_iter()
            .filter(|(_, groups)| !(groups.len() == 1 && groups.contains_key("(none)")))
            .map(|(component, groups)| {
                let mut groups: Vec<Group> = groups
                    .into_iter()
                    .map(|(version, (nodes, examples))| Group { version, nodes, examples })
                    .collect();
                groups.sort_by(|a, b| a.nodes.cmp(&b.nodes).then(a.version.cmp(&b.version)));
                Drift { component, groups }
            })
            .collect();
        // Components that differ across nodes come first.
        self.fleet
            .drift
            .sort_by(|a, b| b.groups.len().cmp(&a.groups.len()).then(a.component.cmp(&b.component)));
        self.fleet
    }
}

/// Aggregates reports from files, directories (their `*.json`, recursively)
/// and `-` (standard input: concatenated JSON documents or JSON lines).
pub fn aggregate(inputs: &[PathBuf]) -> Fleet {
    let mut acc = Acc::default();
    for input in inputs {
        if input == Path::new("-") {
            let mut text = String::new();
            if let Err(e) = std::io::stdin().lock().read_to_string(&mut text) {
                acc.fleet.unreadable.push(Unreadable { source: "-".into(), error: e.to_string() });
                continue;
            }
            read_stream(&mut acc, &text, "stdin");
        } else if input.is_dir() {
            let mut files = Vec::new();
            collect_json(input, &mut files);
            files.sort();
            for f in files {
                read_file(&mut acc, &f);
            }
        } else {
            read_file(&mut acc, input);
        }
    }
    acc.finish()
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_json(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn read_file(acc: &mut Acc, path: &Path) {
    let node =
        path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    match std::fs::read(path) {
        Err(e) => {
            acc.fleet.unreadable.push(Unreadable { source: path.display().to_string(), error: e.to_string() })
        }
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => acc.add(&node, &v),
            Err(e) => acc
                .fleet
                .unreadable
                .push(Unreadable { source: path.display().to_string(), error: e.to_string() }),
        },
    }
}

fn read_stream(acc: &mut Acc, text: &str, source: &str) {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut i = 0;
    loop {
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                i += 1;
                acc.add(&format!("{source}#{i}"), &v);
            }
            Some(Err(e)) => {
                acc.fleet
                    .unreadable
                    .push(Unreadable { source: format!("{source} after report {i}"), error: e.to_string() });
                break; // the rest of the stream cannot be trusted to resynchronise
            }
        }
    }
}

pub fn render_text(f: &Fleet) -> String {
    let mut out = format!("{} node reports", f.nodes);
    if !f.unreadable.is_empty() {
        let _ = write!(out, ", {} unreadable", f.unreadable.len());
    }
    out.push_str("\n\nFindings (nodes affected)\n");
    for x in &f.findings {
        let _ =
            writeln!(out, "  {:>6}  {:<7}  {}  e.g. {}", x.nodes, x.severity, x.code, x.examples.join(", "));
    }
    out.push_str("\nDrift (outliers first)\n");
    for d in &f.drift {
        let _ = writeln!(out, "  {}", d.component);
        for g in &d.groups {
            let _ = writeln!(out, "    {:>6}  {}  e.g. {}", g.nodes, g.version, g.examples.join(", "));
        }
    }
    if !f.unreadable.is_empty() {
        out.push_str("\nUnreadable\n");
        for u in &f.unreadable {
            let _ = writeln!(out, "  {}: {}", u.source, u.error);
        }
    }
    out
}

pub fn render_markdown(f: &Fleet) -> String {
    let mut out = format!(
        "## onnx-doctor fleet: {} nodes\n\n| nodes | severity | finding | e.g. |\n|---|---|---|---|\n",
        f.nodes
    );
    for x in &f.findings {
        let _ = writeln!(out, "| {} | {} | `{}` | {} |", x.nodes, x.severity, x.code, x.examples.join(", "));
    }
    out.push_str(
        "\n### Drift (outliers first)\n\n| component | version | nodes | e.g. |\n|---|---|---|---|\n",
    );
    for d in &f.drift {
        for g in &d.groups {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                d.component,
                g.version,
                g.nodes,
                g.examples.join(", ")
            );
        }
    }
    if !f.unreadable.is_empty() {
        out.push_str("\n### Unreadable reports\n\n");
        for u in &f.unreadable {
            let _ = writeln!(out, "- `{}`: {}", u.source, u.error);
        }
    }
    out
}
