//! The ticket corpus: real tickets from public trackers, each diagnosed as
//! pasted and judged against what the thread says the cause was
//! (`tests/fixtures/tickets/README.md` has the format). `bench/tickets.sh`
//! prints the summary this test computes.

#![allow(clippy::disallowed_methods)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::*;

const STYLES: &[&str] = &[
    "collect_env",
    "template",
    "markdown",
    "prose",
    "pip-list",
    "conda-list",
    "nvidia-smi",
    "traceback",
    "dockerfile",
    "mixed",
];

/// Host names the corpus must not carry (spelled in pieces so that this
/// file does not carry them either).
const REGISTRY_HOSTS: &[&[&str]] = &[
    &["pypi", ".org"],
    &["pythonhosted", ".org"],
    &["crates", ".io"],
    &["npmjs", ".com"],
    &["debian", ".org"],
];

#[derive(Debug)]
struct Ticket {
    name: String,
    source: String,
    year: u32,
    style: String,
    environment: bool,
    expect: Vec<String>,
    also: Vec<String>,
    text: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tickets")
}

fn list(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
}

fn parse(path: &Path) -> Result<Ticket, String> {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let raw = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let (head, text) = raw.split_once("\n---\n").ok_or(format!("{name}: no `---` line after the header"))?;
    let mut fields = BTreeMap::new();
    for line in head.lines().filter(|l| !l.trim().is_empty()) {
        let (k, v) = line.split_once(':').ok_or(format!("{name}: header line without `key:`: {line}"))?;
        fields.insert(k.trim().to_string(), v.trim().to_string());
    }
    let field = |k: &str| fields.get(k).cloned().ok_or(format!("{name}: no `{k}:` line"));
    let year = field("year")?.parse().map_err(|_| format!("{name}: year is not a number"))?;
    let cause = field("cause")?;
    let ticket = Ticket {
        source: field("source")?,
        year,
        style: field("style")?,
        environment: match cause.as_str() {
            "environment" => true,
            "not-environment" => false,
            other => return Err(format!("{name}: cause `{other}`")),
        },
        expect: list(&fields.get("expect").cloned().unwrap_or_default()),
        also: list(&fields.get("also").cloned().unwrap_or_default()),
        text: text.to_string(),
        name: name.clone(),
    };
    field("why")?;
    Ok(ticket)
}

fn load() -> Vec<Ticket> {
    let mut paths: Vec<_> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    let (tickets, errors): (Vec<_>, Vec<_>) = paths.iter().map(|p| parse(p)).partition(Result::is_ok);
    let errors: Vec<String> = errors.into_iter().map(Result::unwrap_err).collect();
    assert!(errors.is_empty(), "malformed tickets:\n{}", errors.join("\n"));
    tickets.into_iter().map(Result::unwrap).collect()
}

fn known_codes() -> BTreeSet<String> {
    let out = doctor().arg("rules").output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

#[test]
fn every_ticket_is_well_formed_and_cites_its_thread() {
    let codes = known_codes();
    let mut problems = vec![];
    for t in load() {
        let mut bad = |what: String| problems.push(format!("{}: {what}", t.name));
        if !t.source.starts_with("https://github.com/")
            || !t.source.contains(&t.name.rsplit('-').next().unwrap().to_string())
        {
            bad(format!("source {} is not the GitHub thread its name gives", t.source));
        }
        if !(2017..=2026).contains(&t.year) {
            bad(format!("year {}", t.year));
        }
        if !STYLES.contains(&t.style.as_str()) {
            bad(format!("style `{}`", t.style));
        }
        for code in t.expect.iter().chain(&t.also) {
            if !codes.contains(code) {
                bad(format!("`{code}` is no rule of the doctor"));
            }
        }
        if !t.environment && !t.expect.is_empty() {
            bad("a not-environment ticket expects findings".into());
        }
        for host in REGISTRY_HOSTS {
            if t.text.to_lowercase().contains(&host.concat()) {
                bad("names a package registry host".into());
            }
        }
        if t.text.trim().is_empty() {
            bad("no pasted text".into());
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What the doctor made of one ticket.
struct Outcome {
    diagnosed: bool,
    false_alarms: Vec<String>,
    codes: Vec<String>,
}

fn judge_ticket(t: &Ticket) -> Outcome {
    let report = diagnose_text(&t.text);
    // A ticket that sets several environments apart is judged per environment.
    let reports: Vec<&Value> = match report["environments"].as_array() {
        Some(envs) => envs.iter().map(|e| &e["report"]).collect(),
        None => vec![&report],
    };
    let findings: Vec<&Value> =
        reports.iter().flat_map(|r| r["findings"].as_array().into_iter().flatten()).collect();
    let with_fix = |code: &str| {
        findings.iter().any(|f| f["code"] == code && f["fixes"].as_array().is_some_and(|x| !x.is_empty()))
    };
    let errors = findings.iter().filter(|f| f["severity"] == "error");
    let false_alarms: Vec<String> = errors
        .map(|f| f["code"].as_str().unwrap().to_string())
        .filter(|c| !t.expect.contains(c) && !t.also.contains(c))
        .collect();
    let diagnosed = if t.environment {
        !t.expect.is_empty() && t.expect.iter().all(|c| with_fix(c))
    } else {
        false_alarms.is_empty()
    };
    Outcome {
        diagnosed,
        false_alarms,
        codes: findings.iter().map(|f| f["code"].as_str().unwrap().into()).collect(),
    }
}

/// The ticket names a list file of the corpus holds (`MISSED`, `SEEN`), one
/// per line, `#` starting a comment.
fn name_list(file: &str) -> BTreeSet<String> {
    std::fs::read_to_string(corpus_dir().join(file))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Which part of the corpus a ticket is in, fixed once by its source URL:
/// a third `test` (scored on every run, never tuned to one by one), the
/// rest `dev` (what readers, signatures, rules and hypotheses are written
/// from). FNV-1a, so the split never moves with a library's hasher.
fn part(source: &str) -> &'static str {
    let hash = source
        .trim_end_matches('/')
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    if hash % 3 == 0 { "test" } else { "dev" }
}

/// Per part: tickets, diagnosed, environment tickets, of them diagnosed,
/// other tickets, of them quiet.
#[derive(Default)]
struct Score {
    all: usize,
    diagnosed: usize,
    environment: usize,
    environment_diagnosed: usize,
    other: usize,
    other_quiet: usize,
}

impl Score {
    fn add(&mut self, t: &Ticket, o: &Outcome) {
        self.all += 1;
        self.diagnosed += usize::from(o.diagnosed);
        if t.environment {
            self.environment += 1;
            self.environment_diagnosed += usize::from(o.diagnosed);
        } else {
            self.other += 1;
            self.other_quiet += usize::from(o.diagnosed);
        }
    }
}

fn share(part: usize, all: usize) -> String {
    format!("{part}/{all} ({:.0} %)", 100.0 * part as f64 / all.max(1) as f64)
}

#[test]
fn the_corpus_is_diagnosed_with_no_false_alarm() {
    let tickets = load();
    let missed = name_list("MISSED");
    let seen = name_list("SEEN");
    let mut by_project: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_part: BTreeMap<&str, Score> = BTreeMap::new();
    let (mut diagnosed, mut alarms, mut regressions, mut now_passing) = (0, vec![], vec![], vec![]);
    for t in &tickets {
        let o = judge_ticket(t);
        by_part.entry(part(&t.source)).or_default().add(t, &o);
        if part(&t.source) == "test" && !seen.contains(&t.name) {
            by_part.entry("test, less SEEN").or_default().add(t, &o);
        }
        let project = t.name.rsplit_once('-').unwrap().0.to_string();
        let entry = by_project.entry(project).or_default();
        entry.1 += 1;
        if o.diagnosed {
            diagnosed += 1;
            entry.0 += 1;
        }
        if !o.false_alarms.is_empty() {
            alarms.push(format!("{}: {}", t.name, o.false_alarms.join(", ")));
        }
        match (o.diagnosed, missed.contains(&t.name)) {
            (false, false) => regressions.push(format!(
                "{}: expected [{}], got [{}]",
                t.name,
                t.expect.join(", "),
                o.codes.join(", ")
            )),
            (true, true) => now_passing.push(t.name.clone()),
            _ => {}
        }
    }
    let environment = tickets.iter().filter(|t| t.environment).count();
    println!(
        "corpus: {} tickets ({environment} environment, {} not)",
        tickets.len(),
        tickets.len() - environment
    );
    println!("diagnosed: {}", share(diagnosed, tickets.len()));
    println!("false alarms: {}", alarms.len());
    for (part, s) in &by_part {
        println!(
            "{part}: {} tickets, diagnosed {}; environment tickets diagnosed {}; others quiet {}",
            s.all,
            share(s.diagnosed, s.all),
            share(s.environment_diagnosed, s.environment),
            share(s.other_quiet, s.other)
        );
    }
    for (project, (hit, all)) in &by_project {
        println!("  {project:<16} {}", share(*hit, *all));
    }
    for a in &alarms {
        println!("  false alarm: {a}");
    }
    for m in &missed {
        let part = tickets.iter().find(|t| &t.name == m).map_or("?", |t| part(&t.source));
        println!("  missed ({part}): {m}");
    }
    // A ticket in MISSED may be missed by a false alarm: it is counted and
    // printed above, and any other ticket's false alarm fails the test.
    let new_alarms: Vec<&String> =
        alarms.iter().filter(|a| !missed.contains(a.split(':').next().unwrap_or(""))).collect();
    assert!(new_alarms.is_empty(), "false alarms:\n{new_alarms:?}");
    assert!(
        regressions.is_empty(),
        "no longer diagnosed (or missing from MISSED):\n{}",
        regressions.join("\n")
    );
    assert!(now_passing.is_empty(), "diagnosed now; take off MISSED:\n{}", now_passing.join("\n"));
    let unknown: Vec<_> = missed.iter().filter(|m| !tickets.iter().any(|t| &&t.name == m)).collect();
    assert!(unknown.is_empty(), "MISSED names no ticket: {unknown:?}");
}

/// `test` tickets are never a rule's source: a fact cites vendor documents,
/// releases and `dev` tickets. `SEEN` names the `test` tickets rules were
/// written from before the split, so that the score can be read without them.
#[test]
fn no_fact_cites_a_test_ticket() {
    let tickets = load();
    let test: BTreeMap<&str, &str> = tickets
        .iter()
        .filter(|t| part(&t.source) == "test")
        .map(|t| (t.source.trim_end_matches('/'), t.name.as_str()))
        .collect();
    let matrix = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrix");
    let mut cited = vec![];
    for entry in std::fs::read_dir(&matrix).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for url in text.split_whitespace().filter(|w| w.starts_with("https://")) {
            if let Some(name) = test.get(url.trim_end_matches('/')) {
                cited.push(format!("{}: {name}", path.display()));
            }
        }
    }
    assert!(cited.is_empty(), "facts cite test tickets:\n{}", cited.join("\n"));
    let not_test: Vec<_> =
        name_list("SEEN").into_iter().filter(|s| !test.values().any(|name| name == s)).collect();
    assert!(not_test.is_empty(), "SEEN names no test ticket: {not_test:?}");
}

#[test]
fn the_split_is_fixed_by_the_source_url() {
    // Pinned: a change of the hash would move tickets between the parts.
    let parts: Vec<&str> = [
        "https://github.com/pytorch/pytorch/issues/12345",
        "https://github.com/microsoft/onnxruntime/issues/9876",
        "https://github.com/NVIDIA/TensorRT/issues/3456",
    ]
    .iter()
    .map(|u| part(u))
    .collect();
    assert_eq!(parts, ["dev", "dev", "test"]);
    let tickets = load();
    let test = tickets.iter().filter(|t| part(&t.source) == "test").count();
    assert!(
        (tickets.len() / 4..=tickets.len() * 5 / 12).contains(&test),
        "{test} of {} in test",
        tickets.len()
    );
}
