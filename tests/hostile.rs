//! Hostile and unlucky input: FIFOs that would block forever, devices that
//! never end, directories where files were expected. The doctor refuses
//! each at once and says what it is.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::*;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs the doctor with a deadline far below what a hang would take.
fn quickly(args: &[&str]) -> std::process::Output {
    let started = Instant::now();
    let out = doctor().timeout(Duration::from_secs(20)).args(args).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", started.elapsed());
    out
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_device_as_a_paste_is_refused_instead_of_read_forever() {
    let out = quickly(&["diagnose", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("a device, not a regular file"), "{}", stderr(&out));
}

#[test]
fn fifos_given_as_a_model_a_snapshot_or_a_paste_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("f");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    for args in [vec!["model", f], vec!["--snapshot", f], vec!["diagnose", f]] {
        let out = quickly(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(stderr(&out).contains("FIFO"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_fifo_or_a_device_link_in_a_matrix_directory_is_an_error_with_its_name() {
    let t = tempfile::tempdir().unwrap();
    mkfifo(&t.path().join("a.yaml"));
    std::os::unix::fs::symlink("/dev/zero", t.path().join("b.yaml")).unwrap();
    let out = quickly(&["rules", "--matrix", t.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("a.yaml") && err.contains("FIFO"), "{err}");
}

#[test]
fn a_directory_named_like_a_model_says_it_is_a_directory() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("x.onnx");
    std::fs::create_dir(&dir).unwrap();
    let out = quickly(&["model", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("it is a directory"), "{}", stderr(&out));
}

#[test]
fn fifos_and_devices_under_root_and_in_metadata_do_not_block_the_fast_check() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    for dir in ["etc", "proc/driver/nvidia"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    mkfifo(&root.join("etc/os-release"));
    mkfifo(&root.join("proc/driver/nvidia/version"));
    std::os::unix::fs::symlink("/dev/zero", root.join("etc/ld.so.cache")).unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["onnx-1.17.0"]);
    let site = site_packages(&env);
    std::fs::remove_file(site.join("onnx-1.17.0.dist-info/METADATA")).unwrap();
    mkfifo(&site.join("onnx-1.17.0.dist-info/METADATA"));
    let out = quickly(&[
        "--fast",
        "--format",
        "json",
        "--root",
        root.to_str().unwrap(),
        "--nvml-lib",
        "/nonexistent/libnvidia-ml.so.1",
        "--python",
        env.to_str().unwrap(),
    ]);
    let report = json(&out.stdout);
    assert_eq!(report["snapshot"]["pythons"][0]["distributions"]["found"][0]["name"], "onnx");
}

/// A paste as hostile as a ticket can be: terminal escapes (an OSC 52 that
/// would write the reader's clipboard, a screen clear, 8-bit CSI), fake
/// workflow commands after newlines, HTML, code fences, table pipes,
/// percent signs and a noncharacter, inside lines the doctor quotes back.
const HOSTILE: &str = "PyTorch version: 2.1.0+cu121\x1b]52;c;ZXZpbA==\x07\n\
Nvidia driver version: 470.57.02\x1b]0;title\x07\n\
CUDA used to build PyTorch: 12.1\n\
[pip3] torch==2.3.1\n\
[pip3] onnxruntime==1.17.1\n\
RuntimeError: CUDA error: no kernel image is available for execution on the device\
\x1b]52;c;QUFBQQ==\x07\x1b[2J\u{9b}31m\u{202e} <img src=x onerror=alert(1)> ```` x|y%0A::error::pwned %25\u{ffff}\r::warning::cr\n\
ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory <script>x</script> ```\n";

fn render(args: &[&str], stdin: &str) -> String {
    let out = doctor().args(args).write_stdin(stdin.as_bytes().to_vec()).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// No byte a terminal acts on: ESC, BEL, 8-bit CSI, CR, bidi overrides.
fn assert_inert_for_terminals(what: &str, out: &str) {
    for bad in ['\x1b', '\x07', '\u{9b}', '\r', '\u{202e}', '\u{ffff}'] {
        assert!(!out.contains(bad), "{what} prints {bad:?} raw:\n{out}");
    }
}

/// Markdown where `<img` appears only inside a fenced block, and every
/// fence closes: a paste's backticks never end a block early.
fn assert_inert_markdown(out: &str) {
    let mut fence: Option<usize> = None;
    for line in out.lines() {
        let ticks = line.chars().take_while(|c| *c == '`').count();
        match fence {
            None if ticks >= 3 => fence = Some(ticks),
            Some(open) if ticks >= open && line.trim_matches('`').is_empty() => fence = None,
            None => assert!(
                !line.contains("<img") && !line.contains("<script"),
                "raw HTML outside a code block: {line}"
            ),
            Some(_) => {}
        }
    }
    assert_eq!(fence, None, "a code block is left open:\n{out}");
}

#[test]
fn a_hostile_paste_is_inert_in_every_renderer() {
    let diagnose = |extra: &[&str]| render(&[&["diagnose", "-"], extra].concat(), HOSTILE);
    for (what, args) in [("text", vec![]), ("-v", vec!["-v"]), ("-q", vec!["-q"])] {
        let out = diagnose(&args);
        assert_inert_for_terminals(what, &out);
        if what == "-v" {
            assert!(out.contains(r"\x1b]52;c;QUFBQQ==\x07"), "the escape is shown, not dropped:\n{out}");
        }
    }

    let md = diagnose(&["--format", "markdown"]);
    assert_inert_for_terminals("markdown", &md);
    assert_inert_markdown(&md);
    assert!(md.contains("`````text"), "the evidence fence outgrows the paste's ````:\n{md}");

    let gh = diagnose(&["--format", "github"]);
    assert_inert_for_terminals("github", &gh);
    let command = regex::Regex::new(r"^::(error|warning|notice) title=[^:,]*::").unwrap();
    for line in gh.lines() {
        assert!(command.is_match(line), "not one workflow command per line: {line:?}");
        assert_eq!(line.matches("::").count(), 2, "a second command inside: {line:?}");
    }

    let junit = diagnose(&["--format", "junit"]);
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("junit.xml"), &junit).unwrap();
    let parsed = std::process::Command::new(base_python())
        .args(["-c", "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])"])
        .arg(t.path().join("junit.xml"))
        .output()
        .unwrap();
    assert!(parsed.status.success(), "{}\n{junit}", String::from_utf8_lossy(&parsed.stderr));

    let report = diagnose(&["--format", "json"]);
    assert_inert_for_terminals("json", &report);
    let value: serde_json::Value = serde_json::from_str(&report).unwrap();
    let evidence = value["findings"][0]["evidence"].to_string();
    assert!(report.contains(r"\u001b]52") && evidence.contains("pwned"), "JSON keeps the text, escaped");

    // The same text reaching fleet through two nodes' reports.
    for node in ["n1", "n2\x1b]0;x\x07<img src=y>"] {
        std::fs::write(t.path().join(format!("{node}.json")), &report).unwrap();
    }
    for format in ["text", "markdown", "html", "json"] {
        let out = doctor().arg("fleet").arg(t.path()).args(["--format", format]).output().unwrap();
        let out = String::from_utf8(out.stdout).unwrap();
        assert!(out.contains("n1"), "{format}: {out}");
        assert_inert_for_terminals(format, &out);
        if format == "markdown" || format == "html" {
            assert!(!out.contains("<img"), "fleet {format} prints raw HTML:\n{out}");
        }
    }
}

/// A METADATA declaring 20,000 requirements, none installed: the planner
/// indexes fixes by package instead of scanning them per package, and the
/// message names the first few.
#[test]
fn twenty_thousand_unmet_requirements_are_planned_in_linear_time() {
    let t = tempfile::tempdir().unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["onnx-1.17.0"]);
    let metadata = site_packages(&env).join("onnx-1.17.0.dist-info/METADATA");
    let requires: String = (0..20_000).map(|i| format!("Requires-Dist: pkg{i}>=1.{i}\n")).collect();
    std::fs::write(&metadata, format!("Metadata-Version: 2.1\nName: onnx\nVersion: 1.17.0\n{requires}"))
        .unwrap();
    let started = Instant::now();
    let out = doctor()
        .args(["--fast", "--format", "json", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--python"])
        .arg(&env)
        .output()
        .unwrap();
    let took = started.elapsed();
    let report = json(&out.stdout);
    let f = finding(&report, "declared-requirement-missing");
    assert!(f["message"].as_str().unwrap().ends_with("pkg19>=1.19, and 19980 more"), "{}", f["message"]);
    assert!(f["fixes"][0].as_str().unwrap().contains("\"pkg19999>=1.19999\""), "the fix installs them all");
    // Planning was quadratic: 10,000 took 4 s in a debug build, 20,000 far more.
    assert!(took < Duration::from_secs(6), "took {took:?}");
}

/// 40,000 lines pinning numpy to as many versions: reading them is linear.
#[test]
fn forty_thousand_conflicting_pins_are_read_in_linear_time() {
    let paste: String = (0..40_000).map(|i| format!("numpy=={}.{}.0\n", 1 + i / 1000, i % 1000)).collect();
    let started = Instant::now();
    let out = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(paste).output().unwrap();
    let took = started.elapsed();
    let report = json(&out.stdout);
    assert!(report["snapshot"]["pasted"]["conflicts"].as_array().is_some_and(|c| !c.is_empty()), "{report}");
    assert!(took < Duration::from_secs(4), "took {took:?}");
}

/// A protobuf field: tag, then the varint or the length-delimited bytes.
fn field(number: u64, wire: u64, payload: &[u8]) -> Vec<u8> {
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let mut out = Vec::new();
    varint(number << 3 | wire, &mut out);
    if wire == 2 {
        varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
    } else {
        varint(u64::from_le_bytes(payload.try_into().unwrap()), &mut out);
    }
    out
}

/// A minimal model (IR 8, opset 17) whose initializers keep their data in
/// these external locations, one tensor each.
fn model_with_external_data(locations: &[&str]) -> Vec<u8> {
    let int = |v: u64| v.to_le_bytes();
    let mut graph = field(2, 2, b"g");
    for (i, location) in locations.iter().enumerate() {
        let entry = [field(1, 2, b"location"), field(2, 2, location.as_bytes())].concat();
        let tensor = [
            field(1, 0, &int(4)),
            field(2, 0, &int(1)),
            field(8, 2, format!("w{i}").as_bytes()),
            field(13, 2, &entry),
            field(14, 0, &int(1)),
        ]
        .concat();
        graph.extend(field(5, 2, &tensor));
    }
    let opset = [field(1, 2, b""), field(2, 0, &int(17))].concat();
    [field(1, 0, &int(8)), field(7, 2, &graph), field(8, 2, &opset)].concat()
}

#[test]
fn external_data_outside_the_model_folder_or_empty_is_named_for_what_it_is() {
    let t = tempfile::tempdir().unwrap();
    let outside = t.path().join("outside.bin");
    std::fs::write(&outside, [0u8; 16]).unwrap();
    let dir = t.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("w..bin"), [0u8; 16]).unwrap();
    std::fs::write(dir.join("empty.bin"), []).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link.bin")).unwrap();
    std::fs::create_dir(dir.join("sub.bin")).unwrap();
    let absolute = outside.to_str().unwrap();
    let locations = ["w..bin", absolute, "../outside.bin", "link.bin", "empty.bin", "sub.bin", "gone.bin"];
    std::fs::write(dir.join("m.onnx"), model_with_external_data(&locations)).unwrap();

    let out = quickly(&["model", "--format", "json", dir.join("m.onnx").to_str().unwrap()]);
    let report = json(&out.stdout);
    let files = report["snapshot"]["model"]["external_data"].as_array().expect("external data read").clone();
    let problem = |location: &str| {
        let file = files
            .iter()
            .find(|f| f["location"] == location)
            .unwrap_or_else(|| panic!("{location}: {files:?}"));
        (file["exists"].as_bool().unwrap(), file["problem"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(problem("w..bin"), (true, String::new()), "a name with two dots is a name");
    assert_eq!(problem(absolute), (false, "absolute".into()));
    assert_eq!(problem("../outside.bin"), (false, "outside_folder".into()));
    assert_eq!(problem("link.bin"), (false, "link_outside".into()));
    assert_eq!(problem("empty.bin"), (false, "empty".into()));
    assert_eq!(problem("sub.bin"), (false, "not_a_file".into()));
    assert_eq!(problem("gone.bin"), (false, "missing".into()));
    // Each kind of problem is its own finding, naming its files.
    let message = |code: &str| finding(&report, code)["message"].as_str().unwrap().to_string();
    let cases: [(&str, &[&str]); 3] = [
        ("model-external-data-missing", &["gone.bin"]),
        (
            "model-external-data-outside-folder",
            &[absolute, "../outside.bin (outside the model's folder", "link.bin (a link to a file outside"],
        ),
        ("model-external-data-unusable", &["empty.bin (an empty file)", "sub.bin (not a regular file)"]),
    ];
    for (code, said) in cases {
        let message = message(code);
        for said in said {
            assert!(message.contains(said), "{code}: {said}: {message}");
        }
        assert!(!message.contains("w..bin"), "{message}");
    }
    assert!(!message("model-external-data-missing").contains("empty.bin"));
}

/// What a hostile string carries: terminal escapes (OSC title, 8-bit CSI),
/// a bidi override, and a CI runner's commands at the start of lines.
const EVIL: &str = "\x1b]0;x\x07\u{9b}2J\n::error::pwned\u{202e}\n##[group]x";

/// Inert for a terminal, and no line a CI runner would obey but the
/// doctor's own annotations (one command per line, the value escaped).
fn assert_inert_everywhere(what: &str, out: &str) {
    assert_inert_for_terminals(what, out);
    let own = regex::Regex::new(r"^::(error|warning|notice) title=[^:,\n]*::").unwrap();
    for line in out.lines() {
        let t = line.trim_start();
        let command = t.starts_with("::") || t.starts_with("##[");
        assert!(!command || own.is_match(line), "{what} starts a line with a command: {line:?}");
    }
}

/// The formats a person or a CI log reads, and the flags that choose them.
const READ_FORMATS: [&[&str]; 5] =
    [&[], &["-v"], &["--format", "markdown"], &["--format", "junit"], &["--format", "github"]];

#[test]
fn a_saved_report_with_hostile_strings_is_inert_in_every_renderer() {
    let out = doctor()
        .args(["diagnose", "-", "--format", "json"])
        .write_stdin("torch==2.1.0+cu118\nnumpy==2.0.0\nonnxruntime==1.17.1\nDriver Version: 535.54.03\n")
        .output()
        .unwrap();
    let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Every string that can carry the text and still load, one at a time.
    fn strings(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            serde_json::Value::String(_) => out.push(path.clone()),
            serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
                path.push(i.to_string());
                strings(x, path, out);
                path.pop();
            }),
            serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| {
                path.push(k.clone());
                strings(x, path, out);
                path.pop();
            }),
            _ => {}
        }
    }
    let mut paths = Vec::new();
    strings(&report, &mut Vec::new(), &mut paths);
    let mut carried = 0;
    for path in paths {
        let pointer = format!("/{}", path.join("/"));
        let before = report.pointer(&pointer).unwrap().clone();
        *report.pointer_mut(&pointer).unwrap() = format!("{}{EVIL}", before.as_str().unwrap()).into();
        if onnx_doctor::snapshot::Snapshot::from_saved(&report.to_string()).is_ok() {
            carried += 1;
        } else {
            *report.pointer_mut(&pointer).unwrap() = before;
        }
    }
    assert!(carried > 50, "only {carried} strings carry the text");
    let t = tempfile::tempdir().unwrap();
    let saved = t.path().join("saved.json");
    std::fs::write(&saved, report.to_string()).unwrap();
    for args in READ_FORMATS {
        let out = doctor().args(["--snapshot", saved.to_str().unwrap()]).args(args).output().unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", stderr(&out));
        assert_inert_everywhere(&format!("{args:?}"), &String::from_utf8(out.stdout).unwrap());
    }
}

#[test]
fn a_model_with_hostile_names_is_inert_in_every_renderer() {
    let t = tempfile::tempdir().unwrap();
    let location = format!("w{EVIL}.bin");
    let mut model = model_with_external_data(&[&location]);
    let node = [
        field(1, 2, b"w0"),
        field(2, 2, EVIL.as_bytes()),
        field(4, 2, EVIL.as_bytes()),
        field(7, 2, EVIL.as_bytes()),
    ]
    .concat();
    model.extend(field(7, 2, &field(1, 2, &node)));
    model.extend(field(2, 2, EVIL.as_bytes()));
    let file = t.path().join("m.onnx");
    std::fs::write(&file, model).unwrap();
    for args in READ_FORMATS {
        let out = doctor()
            .args(["model", file.to_str().unwrap(), "--target", "onnxruntime==1.17.1"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", stderr(&out));
        let out = String::from_utf8(out.stdout).unwrap();
        assert!(out.contains("pwned"), "{args:?}: the names are shown:\n{out}");
        assert_inert_everywhere(&format!("model {args:?}"), &out);
    }
}

#[test]
fn what_a_probe_prints_on_stderr_is_inert_in_every_renderer() {
    let t = tempfile::tempdir().unwrap();
    let fake = script(t.path(), "python3", &format!("#!/bin/sh\nprintf '%s' '{EVIL}' >&2\nexit 1\n"));
    for args in READ_FORMATS {
        let out = doctor().args(["--timeout", "5", "--python"]).arg(&fake).args(args).output().unwrap();
        let out = String::from_utf8(out.stdout).unwrap();
        assert!(out.contains("pwned") || args.is_empty(), "{args:?}: stderr is quoted:\n{out}");
        assert_inert_everywhere(&format!("probe {args:?}"), &out);
    }
}

#[test]
fn an_invalid_snapshot_path_is_shown_not_obeyed_on_stderr() {
    let out = quickly(&["--snapshot", &format!("/nonexistent/{EVIL}")]);
    assert_eq!(out.status.code(), Some(3));
    assert_inert_everywhere("stderr", &stderr(&out));
}

#[test]
fn a_non_ascii_character_in_a_requirement_marker_is_not_a_crash() {
    // One odd METADATA in any installed package took the whole check down.
    let t = tempfile::tempdir().unwrap();
    let env = metadata_env(&t.path().join("env"), "3.11.9", &["onnx-1.0"]);
    let metadata = site_packages(&env).join("onnx-1.0.dist-info/METADATA");
    std::fs::write(
        &metadata,
        "Metadata-Version: 2.1\nName: onnx\nVersion: 1.0\nRequires-Dist: numpy>=2.1.0; python_version >= \"3.13\"\u{e9}\n",
    )
    .unwrap();
    let out = quickly(&["--fast", "--format", "json", "--python", env.to_str().unwrap()]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", stderr(&out));
    let report = json(&out.stdout);
    // The same text in a saved snapshot, judged again.
    let saved = t.path().join("saved.json");
    std::fs::write(&saved, report.to_string()).unwrap();
    let again = quickly(&["--snapshot", saved.to_str().unwrap()]);
    assert!(again.status.code().is_some_and(|c| c <= 1), "{}", stderr(&again));
}

#[test]
fn fleet_reads_an_endless_standard_input_in_bounded_memory() {
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let started = Instant::now();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("onnx-doctor"))
        .args(["fleet", "-"])
        .stdin(zero)
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // Endless blanks are not a report either: refused at the size of one.
    let blanks = "\n".repeat(1024 * 1024);
    let out = doctor().args(["fleet", "-"]).write_stdin(blanks).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn outputs_that_are_fifos_are_refused_instead_of_blocking() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    for args in
        [vec!["--fast", "-o", fifo], vec!["--fast", "--json", fifo], vec!["--fast", "--nvml-lib", fifo]]
    {
        let out = quickly(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("FIFO"), "{args:?}: {}", stderr(&out));
    }
    let started = Instant::now();
    let out = doctor()
        .args(["--fast", "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", fifo)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("job summary") && stderr(&out).contains("FIFO"), "{}", stderr(&out));
}

#[test]
fn json_over_the_input_is_refused_like_output_over_it() {
    let t = tempfile::tempdir().unwrap();
    let paste = t.path().join("paste.txt");
    std::fs::write(&paste, "torch==2.1.0\n").unwrap();
    let link = t.path().join("link.txt");
    std::os::unix::fs::symlink(&paste, &link).unwrap();
    for json_to in [&paste, &link] {
        let out = quickly(&["diagnose", paste.to_str().unwrap(), "--json", json_to.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&paste).unwrap(), "torch==2.1.0\n");
    let same = t.path().join("r.json");
    let out = quickly(&[
        "diagnose",
        paste.to_str().unwrap(),
        "-o",
        same.to_str().unwrap(),
        "--json",
        same.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_report_replaces_its_file_whole_through_a_link_and_leaves_nothing_beside_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("out");
    std::fs::create_dir(&dir).unwrap();
    let target = dir.join("report.txt");
    std::fs::write(&target, "an older, longer report ".repeat(10_000)).unwrap();
    let link = dir.join("latest.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = doctor()
        .args(["diagnose", "-", "-o", link.to_str().unwrap()])
        .write_stdin("torch==2.1.0\n")
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is kept");
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.contains("torch") && !written.contains("older"), "{written}");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
    names.sort();
    assert_eq!(names, ["latest.txt", "report.txt"]);
}

#[test]
fn a_paste_with_carriage_returns_only_is_read_line_by_line() {
    let lf = "PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n\
              Nvidia driver version: 470.57.02\n";
    let lf_report = doctor().args(["diagnose", "-", "--format", "json"]).write_stdin(lf).output().unwrap();
    let cr_report = doctor()
        .args(["diagnose", "-", "--format", "json"])
        .write_stdin(lf.replace('\n', "\r"))
        .output()
        .unwrap();
    assert_eq!(lf_report.status.code(), Some(1), "{}", stderr(&lf_report));
    assert_eq!(cr_report.status.code(), Some(1), "{}", stderr(&cr_report));
    let codes = |out: &[u8]| -> Vec<String> {
        json(out)["findings"].as_array().unwrap().iter().map(|f| f["code"].to_string()).collect()
    };
    assert_eq!(codes(&lf_report.stdout), codes(&cr_report.stdout));
}

#[test]
fn files_that_stand_where_a_model_should_are_named_for_what_they_are() {
    let t = tempfile::tempdir().unwrap();
    let cases: [(&[u8], &str); 4] = [
        (
            b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n",
            "Git LFS pointer",
        ),
        (b"<!DOCTYPE html><html><body>Sign in</body></html>", "HTML page"),
        (b"PK\x03\x04\x14\x00\x00\x00archive/data.pkl", "zip archive"),
        (b"\x80\x02\x8a\x0alZ\xfc\x9cF\xf9 j\xa8P\x19.", "pickle"),
    ];
    for (bytes, said) in cases {
        let file = t.path().join("model.onnx");
        std::fs::write(&file, bytes).unwrap();
        let out = quickly(&["model", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(3));
        assert!(stderr(&out).contains(said), "{said}: {}", stderr(&out));
    }
}

#[test]
fn an_output_of_a_dash_is_standard_output_and_writes_no_file() {
    let t = tempfile::tempdir().unwrap();
    let out = doctor()
        .current_dir(t.path())
        .args(["diagnose", "-", "--format", "json", "-o", "-"])
        .write_stdin("torch==2.1.0\n")
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", stderr(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the report on standard output");
    assert!(report["findings"].is_array(), "{report}");
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "no file named - is written");
}
