//! `onnx-doctor fleet`: many nodes' reports, one view.
//!
//! Teams already run the doctor on every node (a Kubernetes DaemonSet, a
//! Slurm allocation) and collect JSON reports. This reads them as a stream,
//! keeping per report only the findings' codes and a few versions, so
//! 10,000 reports fit in a few megabytes: which findings affect how many
//! nodes, and the drift table, nodes grouped by the versions that matter,
//! outliers (the smallest groups) first. Reports that do not parse, or that
//! another schema wrote, are listed, never fatal.
//!
//! Directories are walked without following links to directories, and a
//! file reached twice (a Kubernetes ConfigMap's `node.json -> ..data/node.json`)
//! counts once.

mod render;

pub use render::{render_html, render_markdown, render_text};

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::matrix::{Matrix, Severity};
use crate::snapshot::saved::{self, SavedReport};
use crate::snapshot::{Component, Probed, PythonEnv, Snapshot};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Fleet {
    pub nodes: usize,
    pub unreadable: Vec<Unreadable>,
    /// Most widespread first.
    pub findings: Vec<FleetFinding>,
    /// Nodes grouped by the findings they have: the rows of the nodes ×
    /// findings picture, the largest group first.
    #[serde(default)]
    pub profiles: Vec<Profile>,
    pub drift: Vec<Drift>,
}

/// The nodes that have exactly these findings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    /// Codes, sorted; empty for healthy nodes. The last profile may be
    /// [`OTHER_PROFILES`] when there are more than [`PROFILES`].
    pub findings: Vec<String>,
    pub nodes: usize,
    pub examples: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Unreadable {
    pub source: String,
    pub error: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FleetFinding {
    pub code: String,
    pub severity: Severity,
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

/// How many example nodes a finding or a version group keeps.
const EXAMPLES: usize = 5;

/// How many distinct sets of findings are drawn as rows; the rest are one
/// row, marked by the code [`OTHER_PROFILES`].
pub(crate) const PROFILES: usize = 40;
pub(crate) const OTHER_PROFILES: &str = "(other combinations)";

/// Nodes (count, examples) by something they share.
type Groups<K> = BTreeMap<K, (usize, Vec<String>)>;

struct Acc<'m> {
    matrix: &'m Matrix,
    fleet: Fleet,
    findings: BTreeMap<String, (Severity, (usize, Vec<String>))>,
    profiles: Groups<Vec<String>>,
    drift: BTreeMap<String, Groups<String>>,
}

fn count_in(group: &mut (usize, Vec<String>), node: &str) {
    group.0 += 1;
    if group.1.len() < EXAMPLES {
        group.1.push(node.into());
    }
}

impl Acc<'_> {
    fn unreadable(&mut self, source: impl Into<String>, error: impl Into<String>) {
        self.fleet.unreadable.push(Unreadable { source: source.into(), error: error.into() });
    }

    /// One report's text: parsed, checked for its schema, added.
    fn add_text(&mut self, node: &str, source: &str, text: &str) {
        match saved::read_report(text) {
            Ok(report) => self.add(node, &report),
            Err(why) => self.unreadable(source, why),
        }
    }

    fn add(&mut self, node: &str, report: &SavedReport) {
        self.fleet.nodes += 1;
        let mut seen = BTreeSet::new();
        for f in &report.findings {
            if !seen.insert(f.code.as_str()) {
                continue; // one node counts once per code
            }
            let e = self.findings.entry(f.code.clone()).or_insert((f.severity, (0, Vec::new())));
            e.0 = e.0.max(f.severity);
            count_in(&mut e.1, node);
        }
        count_in(self.profiles.entry(seen.iter().map(|c| c.to_string()).collect()).or_default(), node);
        for (component, version) in versions(&report.snapshot, self.matrix) {
            count_in(self.drift.entry(component).or_default().entry(version).or_default(), node);
        }
    }

    fn finish(mut self) -> Fleet {
        let mut findings: Vec<FleetFinding> = self
            .findings
            .into_iter()
            .map(|(code, (severity, (nodes, examples)))| FleetFinding { code, severity, nodes, examples })
            .collect();
        findings.sort_by(|a, b| b.nodes.cmp(&a.nodes).then(a.code.cmp(&b.code)));
        self.fleet.findings = findings;
        let mut profiles: Vec<Profile> = self
            .profiles
            .into_iter()
            .map(|(findings, (nodes, examples))| Profile { findings, nodes, examples })
            .collect();
        profiles.sort_by(|a, b| b.nodes.cmp(&a.nodes).then(a.findings.cmp(&b.findings)));
        if profiles.len() > PROFILES {
            let rest = profiles.split_off(PROFILES - 1);
            let nodes = rest.iter().map(|p| p.nodes).sum();
            let examples = rest.iter().flat_map(|p| p.examples.iter().cloned()).take(EXAMPLES).collect();
            profiles.push(Profile { findings: vec![OTHER_PROFILES.into()], nodes, examples });
        }
        self.fleet.profiles = profiles;
        let mut drift: Vec<Drift> = self
            .drift
            .into_iter()
            .filter(|(_, groups)| !(groups.len() == 1 && groups.contains_key(NONE)))
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
        drift.sort_by(|a, b| b.groups.len().cmp(&a.groups.len()).then(a.component.cmp(&b.component)));
        self.fleet.drift = drift;
        self.fleet
    }
}

/// What a node has none of.
const NONE: &str = "(none)";

/// The versions compared across nodes: the driver, the first GPU, the CUDA
/// toolkit, cuDNN, and each stack package of the first Python environment.
fn versions(s: &Snapshot, matrix: &Matrix) -> Vec<(String, String)> {
    let text = |v: Option<String>| v.unwrap_or_else(|| NONE.to_string());
    let n = s.nvidia.found();
    let mut out = vec![
        ("driver".to_string(), text(n.and_then(|n| n.driver.found()).map(|d| d.version.to_string()))),
        ("gpu".into(), text(n.and_then(|n| n.gpus.found()?.first().map(|g| g.name.clone())))),
        (
            "cuda toolkit".into(),
            text(n.and_then(|n| n.toolkits.iter().find_map(|t| t.version.found())).map(ToString::to_string)),
        ),
        (
            "cudnn".into(),
            text(
                n.and_then(|n| n.headers.iter().find(|h| h.component == Component::CUDNN))
                    .map(|h| h.version.to_string()),
            ),
        ),
    ];
    let env: Option<&PythonEnv> = s.pythons.first();
    for package in &matrix.stack {
        let installed = env.and_then(|e| e.first_installed(&matrix.distributions_of(&package.package)));
        let version = installed.map(|d| {
            if d.name == package.package {
                d.version.to_string()
            } else {
                format!("{} ({})", d.version, d.name)
            }
        });
        out.push((package.package.clone(), text(version)));
    }
    if let Probed::NotEvaluated(_) = &s.nvidia {
        out.retain(|(c, _)| !["driver", "gpu", "cuda toolkit", "cudnn"].contains(&c.as_str()));
    }
    out
}

/// Aggregates reports from files, directories (their `*.json`, recursively)
/// and `-` (standard input: concatenated JSON documents or JSON lines).
pub fn aggregate(inputs: &[PathBuf], matrix: &Matrix) -> Fleet {
    let mut acc = Acc {
        matrix,
        fleet: Fleet::default(),
        findings: BTreeMap::new(),
        profiles: BTreeMap::new(),
        drift: BTreeMap::new(),
    };
    let mut files = Vec::new();
    for input in inputs {
        if input == Path::new("-") {
            read_stream(&mut acc, std::io::stdin().lock(), "stdin");
        } else if input.is_dir() {
            collect_json(input, &mut files);
        } else {
            files.push(input.clone());
        }
    }
    // Each real file once, whatever links reach it.
    let mut seen = BTreeSet::new();
    files.retain(|f| seen.insert(crate::host::canonicalize(f).unwrap_or_else(|_| f.clone())));
    files.sort();
    for f in files {
        read_file(&mut acc, &f);
    }
    acc.finish()
}

/// The `*.json` files under `dir`, not following links to directories.
fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = crate::host::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            collect_json(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") && p.is_file() {
            out.push(p);
        }
    }
}

fn read_file(acc: &mut Acc<'_>, path: &Path) {
    let node =
        path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    let source = path.display().to_string();
    match crate::host::read_text(path, crate::host::FileKind::Report) {
        Ok(text) => acc.add_text(&node, &source, &text),
        Err(e) => acc.unreadable(source, e.to_string()),
    }
}

/// Reads concatenated JSON reports as they arrive, holding one at a time:
/// a stream of any length takes the memory of its largest report, and one
/// larger than a saved report may be (or endless whitespace, or
/// `/dev/zero`) ends the stream with an error instead of the memory.
fn read_stream(acc: &mut Acc<'_>, input: impl Read, source: &str) {
    let since = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let reader = PerItemCap { inner: input, since: since.clone(), cap: crate::host::FileKind::Report.cap() };
    let stream = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader))
        .into_iter::<serde_json::Value>();
    for (i, item) in stream.enumerate() {
        since.set(0);
        let name = format!("{source}#{}", i + 1);
        match item.map(saved::report_from_value) {
            Ok(Ok(report)) => acc.add(&name, &report),
            Ok(Err(why)) => acc.unreadable(name, why),
            Err(e) => {
                acc.unreadable(format!("{source} after report {i}"), e.to_string());
                break; // the rest of the stream cannot be trusted to resynchronise
            }
        }
    }
}

/// A reader that fails once more than `cap` bytes came since the count was
/// last reset (at each report of a stream).
struct PerItemCap<R> {
    inner: R,
    since: std::rc::Rc<std::cell::Cell<u64>>,
    cap: u64,
}

impl<R: Read> Read for PerItemCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_sub(self.since.get());
        if room == 0 {
            let mib = self.cap / (1024 * 1024);
            return Err(std::io::Error::other(format!(
                "a report larger than {mib} MiB, the most read of one report"
            )));
        }
        let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..len])?;
        self.since.set(self.since.get() + n as u64);
        Ok(n)
    }
}
