//! Every install command the doctor prints resolves against the real
//! package index, for the Python and the platform it is printed for.
//!
//! The commands come from every place the doctor speaks: each rule's fire
//! case, each error signature's sample, every ticket of the corpus and every
//! paste fixture (through `diagnose`), and the golden snapshots. Each `pip
//! install` / `uv pip install` in them (single fixes, plan steps, likely
//! causes) is asked of the index with `uv pip compile --no-deps` for the
//! environment's Python and platform, building nothing: every requirement
//! must name a release that ships a wheel there (TensorRT's front packages,
//! source distributions by design, excepted). A Python the
//! facts do not state is satisfied by any of three current ones.
//!
//! The answers come from the live index through uv's own HTTP cache, which
//! revalidates an index page once it is older than the index allows (ten
//! minutes), so nothing here goes stale; `uv cache clean` forgets it.
//! What cannot be asked here is counted and printed, never passed silently:
//! `conda install` lines (no conda channel in the test machines' reach),
//! local wheel files, and the build variant on the PyTorch index (its
//! release and Python are still checked on the default index).

#![allow(clippy::disallowed_methods)]

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use onnx_doctor::check::check;
use onnx_doctor::matrix::Matrix;
use onnx_doctor::snapshot::Snapshot;
use serde_json::{Value, json};
use support::*;

/// The Pythons a fix must work on when the facts do not state one.
const ANY_PYTHON: &[&str] = &["3.8", "3.10", "3.12"];

/// One printed text and what it was printed for.
struct Printed {
    source: String,
    text: String,
    python: Option<String>,
    platform: &'static str,
}

/// The texts a judgement prints: fixes, plan steps, likely causes.
fn printed_texts(findings: &[Value], plans: &[Value]) -> Vec<String> {
    let mut texts = Vec::new();
    for f in findings {
        texts
            .extend(f["fixes"].as_array().into_iter().flatten().filter_map(|x| x.as_str()).map(String::from));
        for l in f["likely"].as_array().into_iter().flatten() {
            texts.extend(["fix", "confirm"].iter().filter_map(|k| l[k].as_str()).map(String::from));
        }
    }
    for p in plans {
        texts
            .extend(p["steps"].as_array().into_iter().flatten().filter_map(|x| x.as_str()).map(String::from));
    }
    texts
}

fn version_at_least(v: &str, major: u32, minor: u32) -> bool {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
}

/// The Python version (major.minor) and uv's platform a snapshot states.
fn target_of(snapshot: &Value) -> (Option<String>, &'static str) {
    let python = snapshot["pythons"][0]["version"]["found"]
        .as_str()
        // "3.6" is some 3.6.x: the newest patch stands for it (torch 1.10
        // asks for 3.6.2).
        .map(|v| if v.split('.').count() == 2 { format!("{v}.99") } else { v.to_string() })
        // A Python uv cannot target (none before 3.6 runs the stack) is a misreading.
        .filter(|v| version_at_least(v, 3, 6));
    let system = &snapshot["system"]["found"];
    let os = system["os"]["found"].as_str().unwrap_or("").to_ascii_lowercase();
    let arch = system["arch"].as_str().unwrap_or("");
    let platform = if os.contains("windows") {
        "x86_64-pc-windows-msvc"
    } else if os.contains("mac") || os.contains("darwin") {
        "aarch64-apple-darwin"
    } else if arch == "aarch64" {
        "aarch64-unknown-linux-gnu"
    } else {
        "x86_64-unknown-linux-gnu"
    };
    (python, platform)
}

fn from_report(source: String, report: &Value, out: &mut Vec<Printed>) {
    let (python, platform) = target_of(&report["snapshot"]);
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let plans = report["fix_plan"].as_array().cloned().unwrap_or_default();
    for text in printed_texts(&findings, &plans) {
        out.push(Printed { source: source.clone(), text, python: python.clone(), platform });
    }
}

fn from_rules(out: &mut Vec<Printed>) {
    let m = Matrix::load(&[]).expect("the embedded matrix loads");
    for (code, world, _) in support::cases::cases() {
        let mut v = world.0.clone();
        if v.get("expectations").is_none() {
            v["expectations"] = json!([]);
        }
        let snap: Snapshot = serde_json::from_value(v.clone()).expect("the fixture is a snapshot");
        let j = check(&snap, &m);
        let report = json!({
            "snapshot": v,
            "findings": serde_json::to_value(&j.findings).unwrap(),
            "fix_plan": serde_json::to_value(&j.plans).unwrap(),
        });
        from_report(format!("rule {code}"), &report, out);
    }
}

fn diagnose(source: String, text: &[u8], out: &mut Vec<Printed>) {
    let o = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(text.to_vec()).output().unwrap();
    if let Ok(report) = serde_json::from_slice::<Value>(&o.stdout) {
        from_report(source, &report, out);
    }
}

fn from_files(dir: &Path, label: &str, out: &mut Vec<Printed>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|f| f.is_file() && f.file_name().is_some_and(|n| n != "MISSED" && n != "README.md"));
    files.sort();
    // Four at a time: each is a process of its own.
    let chunks: Vec<Vec<Printed>> = std::thread::scope(|s| {
        let workers: Vec<_> = files
            .chunks(files.len().div_ceil(4).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    let mut found = Vec::new();
                    for f in chunk {
                        let name = f.file_name().unwrap().to_string_lossy();
                        diagnose(format!("{label} {name}"), &std::fs::read(f).unwrap(), &mut found);
                    }
                    found
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    out.extend(chunks.into_iter().flatten());
}

fn from_goldens(out: &mut Vec<Printed>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        // GitHub and JUnit goldens hold the same lines encoded for their
        // consumers; `explain` shows a rule's fixes as templates.
        if ["github-", "junit-", "explain-"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        for line in std::fs::read_to_string(&f).unwrap().lines().filter(|l| l.contains(" install ")) {
            // JSON goldens hold the command as a JSON string.
            let text = line.trim().trim_end_matches(',');
            let text = serde_json::from_str::<String>(text).unwrap_or_else(|_| line.to_string());
            out.push(Printed {
                source: format!("golden {name}"),
                text,
                python: None,
                platform: "x86_64-unknown-linux-gnu",
            });
        }
    }
}

/// A shell word, or an operator that ends a command.
#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    End,
}

/// Splits a line as a POSIX shell would: quotes, `#` comments, and the
/// operators that end a command (`;`, `&&`, `||`, `|`, parentheses, which
/// prose around a command also uses). An unclosed quote is an error.
fn shell_words(text: &str) -> Result<Vec<Token>, String> {
    split(text, false)
}

/// The words up to the first operator: one command, and not the prose after it.
fn first_command(text: &str) -> Result<Vec<Token>, String> {
    split(text, true)
}

fn split(text: &str, stop_at_end: bool) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let flush = |tokens: &mut Vec<Token>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => word.extend(chars.next()),
                        Some(x) => word.push(x),
                        None => return Err(format!("an unclosed {c} quote")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '#' if !in_word => break,
            ';' | '&' | '|' | '(' | ')' => {
                flush(&mut tokens, &mut word, &mut in_word);
                tokens.push(Token::End);
                if stop_at_end {
                    return Ok(tokens);
                }
            }
            c if c.is_whitespace() => flush(&mut tokens, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    flush(&mut tokens, &mut word, &mut in_word);
    Ok(tokens)
}

/// A matrix placeholder (`{torch.release}`, `{row.fix}`) left in a
/// printed text; a shell's `${VAR}` is not one.
fn unfilled_placeholder(text: &str) -> Option<&str> {
    text.match_indices('{').find_map(|(at, _)| {
        let rest = &text[at + 1..];
        let name = &rest[..rest.find('}')?];
        let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._|-".contains(c));
        (is_name && !text[..at].ends_with('$')).then(|| &text[at..at + name.len() + 2])
    })
}

/// One install command, as the index would be asked it.
#[derive(Debug, Default)]
struct Install {
    conda: bool,
    requirements: Vec<String>,
    /// The PyTorch index: the variant it serves cannot be asked here.
    pytorch_index: bool,
    index: Option<String>,
    files: usize,
}

const PIP_VALUE_OPTIONS: &[&str] = &[
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "--python",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--only-binary",
    "--no-binary",
];
const CONDA_VALUE_OPTIONS: &[&str] = &["-c", "--channel", "-n", "--name", "-p", "--prefix"];

/// Where each install command in a printed text begins: at its tool's
/// name (`pip install`, `conda install`), so that prose before it (which
/// may hold an apostrophe) is not read as shell.
fn command_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    for tool in ["pip install", "pip3 install", "conda install", "mamba install"] {
        for (at, _) in text.match_indices(tool) {
            let word_start =
                at == 0 || text[..at].ends_with(|c: char| c.is_whitespace() || c == '/' || c == '(');
            if word_start {
                starts.push(at);
            }
        }
    }
    starts.sort_unstable();
    starts
}

/// The install commands in a printed text (which may be prose around one).
/// Each runs to the end of the text or to the operator that ends it.
fn installs(text: &str) -> Result<Vec<Install>, String> {
    let mut found = Vec::new();
    for start in command_starts(text) {
        let tokens = first_command(&text[start..])?;
        let mut words = tokens.iter().map_while(|t| match t {
            Token::Word(w) => Some(w.as_str()),
            Token::End => None,
        });
        let tool = words.next().unwrap_or_default();
        words.next(); // install
        let conda = matches!(tool, "conda" | "mamba");
        let mut install = Install { conda, ..Install::default() };
        let value_options = if conda { CONDA_VALUE_OPTIONS } else { PIP_VALUE_OPTIONS };
        while let Some(arg) = words.next() {
            if arg.starts_with('-') {
                let (name, inline) = arg.split_once('=').map_or((arg, None), |(n, v)| (n, Some(v)));
                if value_options.contains(&name) {
                    let value = inline.map(String::from).or_else(|| words.next().map(String::from));
                    let value = value.ok_or_else(|| format!("`{name}` without its value"))?;
                    if value.contains("download.pytorch.org") {
                        install.pytorch_index = true;
                    } else if name == "-i" || name == "--index-url" {
                        install.index = Some(value);
                    } else if matches!(name, "-r" | "--requirement" | "-f" | "--find-links") {
                        install.files += 1;
                    }
                }
            } else if !conda && (arg.ends_with(".whl") || arg.contains('/')) {
                install.files += 1;
            } else {
                install.requirements.push(arg.to_string());
            }
        }
        found.push(install);
    }
    Ok(found)
}

fn distribution_name(requirement: &str) -> &str {
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .unwrap_or(requirement.len());
    &requirement[..end]
}

/// TensorRT's front packages (`tensorrt`, `tensorrt-cu12`) are source
/// distributions by design: they fetch NVIDIA's wheels when installed.
/// Every other requirement must have a wheel.
fn is_tensorrt_front(name: &str) -> bool {
    name == "tensorrt"
        || name.strip_prefix("tensorrt-cu").is_some_and(|m| m.bytes().all(|b| b.is_ascii_digit()))
}

/// `torch==1.5.0+cu92` as the default index knows it: `torch==1.5.0`.
fn without_local(requirement: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for c in requirement.chars() {
        match c {
            '+' => skipping = true,
            ',' | ';' | ' ' => {
                skipping = false;
                out.push(c);
            }
            c if !skipping => out.push(c),
            _ => {}
        }
    }
    out
}

/// What the index answers for one set of requirements: `None` when some
/// Python among `pythons` has a wheel for each, else uv's reason.
fn resolve(
    uv: &Path,
    python_exe: &Path,
    requirements: &[String],
    index: Option<&str>,
    pythons: &[String],
    platform: &str,
) -> Option<String> {
    let mut reason = String::new();
    for python in pythons {
        let mut cmd = Command::new(uv);
        cmd.args(["pip", "compile", "-", "--no-deps", "--no-header", "--quiet"])
            .args(["--python-version", python, "--python-platform", platform])
            // Any interpreter: uv only needs one to run, and looking for one
            // of each version costs seconds.
            .arg("--python")
            .arg(python_exe)
            .env_remove("VIRTUAL_ENV")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(index) = index {
            cmd.args(["--index-url", index]);
        }
        for name in requirements.iter().map(|r| distribution_name(r)).filter(|n| !is_tensorrt_front(n)) {
            cmd.args(["--only-binary", name]);
        }
        let mut child = cmd.spawn().expect("uv runs");
        let mut stdin = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut stdin, requirements.join("\n").as_bytes()).unwrap();
        drop(stdin);
        let out = wait_bounded(child, Duration::from_secs(120));
        if out.0 {
            return None;
        }
        let why = out.1.lines().filter(|l| !l.starts_with("warning:")).collect::<Vec<_>>().join(" ");
        reason = format!("Python {python}: {}", why.trim());
    }
    Some(reason)
}

/// Waits for a child, killing it past `limit`: (succeeded, its stderr).
fn wait_bounded(mut child: std::process::Child, limit: Duration) -> (bool, String) {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (status.success(), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (false, format!("uv did not answer in {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What one source contributed: commands, resolved, not askable, failures.
#[derive(Default, Debug)]
struct Tally {
    installs: usize,
    resolved: usize,
    conda: usize,
    files: usize,
    pytorch_variant: usize,
}

#[test]
fn every_printed_install_command_resolves_against_the_package_index() {
    let mut printed = Vec::new();
    from_rules(&mut printed);
    for (code, line, _) in support::samples::SAMPLES {
        diagnose(
            format!("signature {code}"),
            format!("prose before\n{line}\nprose after\n").as_bytes(),
            &mut printed,
        );
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    from_files(&fixtures.join("tickets"), "ticket", &mut printed);
    from_files(&fixtures.join("pastes"), "paste", &mut printed);
    from_goldens(&mut printed);

    // Each distinct question once: (requirements, index, Pythons, platform).
    type Question = (Vec<String>, Option<String>, Vec<String>, &'static str);
    let mut questions: BTreeMap<Question, Vec<String>> = BTreeMap::new();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    for p in &printed {
        let kind = p.source.split(' ').next().unwrap().to_string();
        let tally = tallies.entry(kind).or_default();
        if let Some(hole) = unfilled_placeholder(&p.text) {
            failures.push(format!("{}: `{}` prints the placeholder {hole}", p.source, p.text));
        }
        let found = match installs(&p.text) {
            Ok(found) => found,
            Err(why) => {
                failures.push(format!("{}: `{}` is not a shell line: {why}", p.source, p.text));
                continue;
            }
        };
        for install in found {
            tally.installs += 1;
            if install.conda {
                tally.conda += 1;
                continue;
            }
            tally.files += install.files;
            if install.requirements.is_empty() {
                continue;
            }
            let mut requirements = install.requirements.clone();
            if install.pytorch_index {
                tally.pytorch_variant += 1;
                requirements = requirements.iter().map(|r| without_local(r)).collect();
            }
            let pythons = match &p.python {
                Some(v) => vec![v.clone()],
                None => ANY_PYTHON.iter().map(|v| v.to_string()).collect(),
            };
            let asked = format!("{}: `{}`", p.source, p.text);
            questions
                .entry((requirements, install.index.clone(), pythons, p.platform))
                .or_default()
                .push(asked);
            tally.resolved += 1;
        }
    }

    let tool = venv("uv-tool", &[&["uv"]]);
    let (uv, python_exe) = (tool.join("bin/uv"), tool.join("bin/python"));
    let queue = Mutex::new(questions.iter().collect::<Vec<_>>());
    let answers = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                loop {
                    let Some(((requirements, index, pythons, platform), asked)) = queue.lock().unwrap().pop()
                    else {
                        return;
                    };
                    if let Some(why) =
                        resolve(&uv, &python_exe, requirements, index.as_deref(), pythons, platform)
                    {
                        answers.lock().unwrap().push(format!(
                            "{} on {platform} does not resolve ({why})\n    printed by {}",
                            requirements.join(" "),
                            asked.join("\n    and by ")
                        ));
                    }
                }
            });
        }
    });
    failures.extend(answers.into_inner().unwrap());

    for (kind, t) in &tallies {
        eprintln!(
            "{kind}: {} install commands; {} asked of the index; not askable here: {} conda, {} local files, {} PyTorch-index variants (release checked on the default index)",
            t.installs, t.resolved, t.conda, t.files, t.pytorch_variant
        );
    }
    eprintln!("{} distinct questions asked of the index", questions.len());
    let asked: usize = tallies.values().map(|t| t.resolved).sum();
    assert!(asked >= 100, "only {asked} install commands were found: the collection is broken");
    failures.sort();
    assert!(failures.is_empty(), "{} printed commands do not work:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn shell_words_split_as_a_shell_would() {
    let words = |t: &str| shell_words(t).unwrap();
    let w = |s: &str| Token::Word(s.into());
    assert_eq!(
        words(r#"pip install "a>=1,<2" 'b' c   # note"#),
        [w("pip"), w("install"), w("a>=1,<2"), w("b"), w("c")]
    );
    assert_eq!(words("a && b; c"), [w("a"), Token::End, Token::End, w("b"), Token::End, w("c")]);
    assert!(shell_words(r#"pip install "torch"#).is_err());
}

#[test]
fn a_placeholder_left_in_a_printed_text_is_found() {
    assert_eq!(
        unfilled_placeholder(r#"pip install "torch=={torch.release}+cu110""#),
        Some("{torch.release}")
    );
    assert_eq!(unfilled_placeholder("echo ${HOME} {} {not a name} {1}"), None);
}

#[test]
fn installs_are_read_out_of_prose() {
    let found = installs(
        "upgrade the tool (for example: python -m pip install --upgrade --index-url https://download.pytorch.org/whl/cu128 \"torch>=2.7\" torchvision) and rerun",
    )
    .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].requirements, ["torch>=2.7", "torchvision"]);
    assert!(found[0].pytorch_index);
    let found =
        installs("python -m pip uninstall -y onnxruntime && python -m pip install \"onnxruntime==1.19.0\"")
            .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].requirements, ["onnxruntime==1.19.0"]);
    assert!(installs("conda install -c conda-forge \"libprotobuf=3.9\"").unwrap()[0].conda);
    assert_eq!(without_local("torch==1.5.0+cu92"), "torch==1.5.0");
}
