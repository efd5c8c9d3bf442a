//! Redaction of reports meant to be attached to a public ticket.
//!
//! Applied to the rendered report as text, so nothing escapes it whatever
//! format or field a value ends up in. Each kind of personal or secret
//! value gets a stable placeholder: `<home>`, `<user>`, `<host>`,
//! `<gpu-uuid-0>`, `<ip>`, `<email>`, `<secret:NAME>`. Version numbers that
//! look like IPv4 addresses (cuDNN 8.9.2.26, TensorRT 10.3.0.26) are known
//! from the snapshot and left alone.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::host::Host;
use crate::snapshot::Snapshot;

static GPU_UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b").unwrap()
});
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b").unwrap());
static IPV4: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b(?:\d{1,3}\.){3}\d{1,3}\b").unwrap());
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:[0-9a-fA-F]{1,4}:){4,7}[0-9a-fA-F]{1,4}\b|\b[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*::(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?\b")
        .unwrap()
});

/// A home directory of any user, as a report judged from someone else's
/// snapshot names it: `/home/NAME`, `/Users/NAME`, `C:\Users\NAME`.
static OTHER_HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:/home|/Users)/[^/\s"'<>`]+|\b[A-Za-z]:\\Users\\[^\\\s"'<>`]+"#).unwrap()
});

const SECRET_WORDS: &[&str] = &["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"];

/// Credentials by their shape, wherever they stand: GitHub (`ghp_`, `gho_`,
/// `github_pat_`), Hugging Face (`hf_`), AWS access key ids, Slack
/// (`xoxb-`), JSON Web Tokens, bearer tokens, and PEM private keys.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}",
        r"|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9-]{10,}",
        r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)",
        r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}",
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
    ))
    .unwrap()
});

/// `NAME=value` or `NAME: value` where NAME says it holds a secret, as
/// pasted environment dumps and config lines have them.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\b([A-Za-z_][A-Za-z0-9_]*?(?i:token|key|secret|password|passwd|credential|auth)[A-Za-z0-9_]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;]+)"#,
    )
    .unwrap()
});

/// `scheme://user:password@host`.
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@").unwrap());

/// A value under a secret-sounding name that cannot be a secret, and that
/// replacing everywhere would wreck the report: short, a plain word
/// (`MY_API_KEY=python`), a number or version, a path.
fn innocuous(value: &str) -> bool {
    value.len() < 8
        || (value.len() <= 12 && value.chars().all(|c| c.is_ascii_alphabetic()))
        || value.chars().all(|c| c.is_ascii_digit() || c == '.')
        || value.starts_with('/')
        || value.starts_with('<')
}

pub struct Redactor {
    /// Literal values and their placeholders, longest first.
    literals: Vec<(String, String)>,
    /// Whole-word values (user and host names).
    words: Vec<(Regex, String)>,
    /// Strings that look like addresses but are versions.
    versions: BTreeSet<String>,
}

impl Redactor {
    pub fn new(host: &Host, snapshot: &Snapshot) -> Self {
        let mut literals: Vec<(String, String)> = Vec::new();
        for (name, value) in host.env_pairs() {
            let upper = name.to_ascii_uppercase();
            if SECRET_WORDS.iter().any(|w| upper.contains(w)) && !innocuous(&value) {
                literals.push((value, format!("<secret:{name}>")));
            }
        }
        if let Some(home) = host.env_str("HOME").filter(|h| h.len() > 1 && h != "/") {
            literals.push((home.trim_end_matches('/').to_string(), "<home>".into()));
        }
        literals.sort_by_key(|l| std::cmp::Reverse(l.0.len()));

        let mut words = Vec::new();
        let mut names: Vec<(String, &str)> = Vec::new();
        for var in ["USER", "LOGNAME", "USERNAME"] {
            if let Some(u) = host.env_str(var) {
                names.push((u, "<user>"));
            }
        }
        if let Some(home) = host.env_str("HOME")
            && let Some(base) = std::path::Path::new(&home).file_name().and_then(|b| b.to_str())
        {
            names.push((base.to_string(), "<user>"));
        }
        if let Some(h) = host.hostname() {
            names.push((h.clone(), "<host>"));
            if let Some(short) = h.split('.').next() {
                names.push((short.to_string(), "<host>"));
            }
        }
        names.sort();
        names.dedup();
        let vocabulary = report_words(snapshot);
        for (name, placeholder) in names {
            // Short names ("a", "ci") would eat ordinary words; account
            // names that are the report's own words ("root", "python",
            // "onnx") identify nobody and would wreck it.
            if name.len() >= 3
                && !(placeholder == "<user>" && vocabulary.contains(&name.to_ascii_lowercase()))
                && let Ok(re) = Regex::new(&format!(r"\b{}\b", regex::escape(&name)))
            {
                words.push((re, placeholder.to_string()));
            }
        }

        let versions = snapshot_versions(snapshot);
        Self { literals, words, versions }
    }

    /// Redacts one string of the report, the value of `field`. Fields that
    /// hold identifiers the doctor chose (`distro_id: debian`, a rule's
    /// code) keep their value even when it is also a user's name.
    pub fn apply_field(&self, field: Option<&str>, value: &str) -> String {
        match field {
            Some(f) if IDENTIFIERS.contains(&f) => self.apply_except_words(value),
            _ => self.apply(value),
        }
    }

    /// Redacts rendered output whose values [`Redactor::apply_field`]
    /// already redacted: everything but user and host names, which in
    /// rendered text are as likely JSON keys or ordinary words.
    pub fn apply_rendered(&self, text: &str) -> String {
        self.apply_except_words(text)
    }

    pub fn apply(&self, text: &str) -> String {
        let mut out = self.apply_except_words(text);
        for (re, placeholder) in &self.words {
            out = re.replace_all(&out, placeholder.as_str()).into_owned();
        }
        out
    }

    fn apply_except_words(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (value, placeholder) in &self.literals {
            out = out.replace(value, placeholder);
        }
        out = TOKEN.replace_all(&out, "<secret>").into_owned();
        out = URL_CREDENTIALS.replace_all(&out, "${1}<credentials>@").into_owned();
        out = ASSIGNMENT
            .replace_all(&out, |c: &regex::Captures<'_>| match innocuous(c[3].trim_matches(['"', '\''])) {
                true => c[0].to_string(),
                false => format!("{}{}<secret:{}>", &c[1], &c[2], &c[1]),
            })
            .into_owned();
        out = OTHER_HOME.replace_all(&out, "<home>").into_owned();
        let mut uuids: Vec<String> = Vec::new();
        out = GPU_UUID
            .replace_all(&out, |c: &regex::Captures<'_>| {
                let u = c[0].to_string();
                let i = uuids.iter().position(|x| *x == u).unwrap_or_else(|| {
                    uuids.push(u.clone());
                    uuids.len() - 1
                });
                format!("<gpu-uuid-{i}>")
            })
            .into_owned();
        out = EMAIL.replace_all(&out, "<email>").into_owned();
        out = IPV4
            .replace_all(&out, |c: &regex::Captures<'_>| {
                let m = c.get(0).expect("a match");
                let s = m.as_str();
                let octets_ok = s.split('.').all(|o| o.parse::<u16>().is_ok_and(|n| n <= 255));
                let version = self.versions.contains(s) || named_version(&out[..m.start()]);
                if octets_ok && !version { "<ip>".to_string() } else { s.to_string() }
            })
            .into_owned();
        out = IPV6
            .replace_all(&out, |c: &regex::Captures<'_>| {
                let m = c.get(0).expect("a match");
                // `c10::Error`, `at::Tensor`: a C++ scope, not an address.
                let next = out[m.end()..].chars().next();
                let scope =
                    m.as_str().ends_with("::") || next.is_some_and(|n| n.is_alphanumeric() || n == '_');
                if scope { m.as_str().to_string() } else { "<ip>".to_string() }
            })
            .into_owned();
        out
    }
}

/// Fields whose values are identifiers, never personal data.
const IDENTIFIERS: &[&str] = &[
    "distro_id",
    "code",
    "severity",
    "components",
    "kind",
    "mode",
    "status",
    "state",
    "fact",
    "outcome",
    "name",
    "package",
    "module",
    "version",
];

/// Whether the text before a dotted quad names it as a version, as a paste
/// that is not in the snapshot does: `TensorRT 8.6.1.6`, `cudnn==8.9.2.26`,
/// `libnvinfer.so.8.6.1.6`, `tensorrt-10.3.0.26`.
fn named_version(before: &str) -> bool {
    const NAMES: &[&str] =
        &["tensorrt", "cudnn", "nccl", "cuda", "driver", "version", "trt", "nvinfer", "cublas"];
    if before.ends_with(['.', '=', '-', '_', 'v', 'V']) {
        return true;
    }
    let word = before.trim_end_matches([' ', ':', '\t']);
    // The last word; what ends the one before may be several bytes long.
    let word = word.rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
    let word = word.to_ascii_lowercase();
    NAMES.iter().any(|n| word.contains(n))
}

/// Words a report is made of that are also account names: the generic
/// accounts of images and CI, the doctor's own words, and every
/// distribution installed.
fn report_words(s: &Snapshot) -> BTreeSet<String> {
    const ACCOUNTS: &[&str] = &[
        "root",
        "admin",
        "user",
        "ubuntu",
        "debian",
        "centos",
        "fedora",
        "python",
        "python3",
        "jovyan",
        "runner",
        "builder",
        "docker",
        "app",
        "vscode",
        "codespace",
        "nvidia",
        "cuda",
        "ec2-user",
        "onnx",
        "doctor",
        "torch",
        "onnxruntime",
        "tensorrt",
        "numpy",
        "protobuf",
    ];
    let mut words: BTreeSet<String> = ACCOUNTS.iter().map(|w| (*w).to_string()).collect();
    for env in &s.pythons {
        if let Some(dists) = env.distributions.found() {
            words.extend(dists.iter().map(|d| d.name.clone()));
        }
    }
    words
}

/// Every version string in the snapshot, so that `8.9.2.26` stays.
fn snapshot_versions(s: &Snapshot) -> BTreeSet<String> {
    let json = serde_json::to_value(s).unwrap_or_default();
    let mut out = BTreeSet::new();
    collect_strings(&json, &mut out);
    out.into_iter().filter(|v| IPV4.is_match(v) && !v.contains(' ') && !v.contains('/')).collect()
}

fn collect_strings(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::String(s) if s.len() < 32 => {
            out.insert(s.clone());
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multibyte_character_before_a_version_is_not_cut() {
        // Found by fuzzing diagnose: a replacement character ends the word.
        assert!(!named_version("see https://onnxruntime.ai/docs/executio\u{fffd}NX: "));
        assert!(named_version("\u{fffd}TensorRT "));
        assert!(!named_version("\u{fffd}"));
    }

    #[test]
    fn any_users_home_is_redacted_not_only_this_ones() {
        let env = [("HOME".into(), "/home/me".into())].into_iter().collect();
        let host = Host::new("/".into(), env, "/".into(), std::time::Duration::from_secs(1));
        let r = Redactor::new(&host, &Snapshot::new("test", crate::snapshot::ProbeMode::Pasted));
        let text = "/home/me/a /home/ada/venvs/x/bin/python /Users/bob/.venv C:\\Users\\eve\\env /homework";
        assert_eq!(r.apply(text), "<home>/a <home>/venvs/x/bin/python <home>/.venv <home>\\env /homework");
    }
}
