//! Redaction of reports meant to be attached to a public ticket.
//!
//! Applied to the rendered report as text, so nothing escapes it whatever
//! format or field a value ends up in. Each kind of personal or secret
//! value gets a stable placeholder: `<home>`, `<user>`, `<host>`,
//! `<gpu-uuid-0>`, `<ip>`, `<email>`, `<credentials>`, `<secret>` (a
//! credential known by its shape: [`SHAPES`]) and `<secret:NAME>` (one
//! assigned to a secret-sounding NAME). Version numbers that look like IPv4
//! addresses (cuDNN 8.9.2.26, TensorRT 10.3.0.26) are known from the
//! snapshot and left alone.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::host::Host;
use crate::snapshot::Snapshot;

// Word boundaries are ASCII (`(?-u:\b)`) throughout: a Unicode `\b` makes
// the regex engine leave its fast DFA at the first non-ASCII byte (a rich
// traceback's box drawing), twenty to fifty times slower over a big paste.
static GPU_UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?-u:\b)").unwrap()
});
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?-u:\b)").unwrap());
static IPV4: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?-u:\b)").unwrap());
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(?:[0-9a-fA-F]{1,4}:){4,7}[0-9a-fA-F]{1,4}(?-u:\b)|(?-u:\b)[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*::(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?(?-u:\b)")
        .unwrap()
});

/// A home directory of any user, as a report judged from someone else's
/// snapshot names it: `/home/NAME`, `/Users/NAME`, `C:\Users\NAME`.
static OTHER_HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:/home|/Users)/[^/\s"'<>`]+|(?-u:\b)[A-Za-z]:\\Users\\[^\\\s"'<>`]+"#).unwrap()
});

const SECRET_WORDS: &[&str] = &["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"];

/// One shape of secret: a credential known by its form (a provider's
/// prefix, a header, a PEM block) or by the name it is assigned to.
///
/// `pattern` is a regex; its capture groups say what is replaced:
/// none, the whole match (`<secret>`); one, that group (`<secret>`), the
/// rest of the match kept; two, the second group, and the first is the name
/// the value was given (`<secret:NAME>`). A pattern that starts with a word
/// boundary starts with `start!` instead, so that it also finds a secret
/// right after a `\n` escape in rendered JSON.
///
/// `example` is a made-up value of that shape, never a real credential:
/// the tests redact every one. Written in pieces (`concat!`) so that secret
/// scanners do not flag this file.
///
/// `loose`: the value is whatever word follows a name or a scheme, not a
/// form of its own, so it is kept when `innocuous` (`password: ********`,
/// `Bearer authentication`). A shape's own value is always replaced, even
/// one that starts like a path (base64 may start with `/`).
pub struct Shape {
    pub name: &'static str,
    pub pattern: &'static str,
    pub example: &'static str,
    pub loose: bool,
}

/// Where a token starts: a word boundary, or right after a `\n`, `\r` or
/// `\t` escape of rendered JSON (which the replacement keeps).
macro_rules! start {
    () => {
        r"(?:\\[nrt]|(?-u:\b))"
    };
}

/// Between a secret-sounding name and its value: `=`, `: `, `" : "`, and
/// the same with JSON's escaped quotes (`\": \"`).
macro_rules! sep {
    () => {
        r#"\\?["']?[ \t]*[=:][ \t]*"#
    };
}

/// A value: quoted (also with JSON's escaped quotes), or a run up to a
/// space, `,`, `;` or a `\n`, `\r` or `\t` escape of rendered JSON. A quote inside the run stays part of it unless it
/// ends a JSON string (followed by `,`, `]`, `}`, `:` or a space), so that
/// redacting rendered JSON leaves it JSON. Never starts with `=` or `:`
/// (`google-auth==2.23.0`, `key::Scope`); never holds a backtick or `<`
/// (a Markdown code span, an HTML tag, a placeholder).
macro_rules! value {
    () => {
        concat!(
            r#"(?:\\"(?:[^"\\\n]|\\[^"\n])*\\"|"[^"\n]*"|'[^'\n]*'"#,
            r#"|(?:\\[^\snrt]|"[^\s,;\]}:"`<]|[^\s,;"\\=:`<])(?:\\[^\snrt]|"[^\s,;\]}:"`<]|[^\s,;"\\`<])*)"#,
        )
    };
}

/// A name that says it holds a secret: `password`, `passwd`, `pwd`,
/// `token`, `secret`, `key`, `auth`, `credential` (and plurals, and a few
/// run together: `apikey`, `accesstoken`), as a whole part of the name
/// (`AWS_SECRET_ACCESS_KEY`, `--api-key`, `spring.datasource.password`,
/// `apiKey`, `DB_PASS`), last or followed only by `id`, `base`, `value`,
/// `hash`, `b64` or digits (`private_key_id`, `SECRET_KEY_BASE`,
/// `password2`). So `token_type_ids`, `key_padding_mask`, `KeyError`,
/// `monkey`, `tokenizer` and `keyring` are not.
macro_rules! secret_name {
    () => {
        concat!(
            r"(?:[A-Za-z0-9]+[_.-])*",
            r"(?:(?i-u:apikey|accesskey|secretkey|privatekey|authtoken|accesstoken|refreshtoken|passphrase",
            r"|password|passwd|pwd|token|key|secret|credential|auth)",
            r"|[A-Za-z0-9]*[a-z0-9](?:Token|Key|Secret|Password|Passwd|Pwd|Pass|Passphrase|Credential|Auth)",
            r"|(?:[A-Za-z0-9]+[_.-])(?i-u:pass))",
            r"(?i-u:s?(?:[_.-]?(?:id|base|value|hash|b64|base64|hex))?)[0-9]*",
        )
    };
}

/// Base64 lines and the headers of a PEM or PGP block (`Proc-Type: 4,ENCRYPTED`,
/// `Version: GnuPG v2`, `Comment: https://…`), also with JSON's `\n` escapes,
/// up to the `-----` of its end line. Stops at a double quote, a backtick or
/// `|`, so a block that lost its end line takes no more than its string,
/// code block or table cell. Holds a run of base64 at least: the header
/// alone, as code that looks for it has it, is no secret.
macro_rules! armored_body {
    () => {
        concat!(
            r"(?:[A-Za-z0-9+/=\s:,.()@'_]|\\+[nrt]|-{1,4}[A-Za-z0-9 ])*?",
            r"[A-Za-z0-9+/]{16}",
            r"(?:[A-Za-z0-9+/=\s:,.()@'_]|\\+[nrt]|-{1,4}[A-Za-z0-9 ])*",
        )
    };
}

/// Every shape of secret the redactor knows. The first that matches at a
/// place wins, so a provider's shape stands before the names that may hold
/// it.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "github-token",
        pattern: concat!(start!(), r"gh[pousr]_[A-Za-z0-9]{20,}"),
        example: concat!("gh", "p_", "FakeTokenForRedactionTests0123456789"),
        loose: false,
    },
    Shape {
        name: "github-fine-grained-token",
        pattern: concat!(start!(), r"github_pat_[A-Za-z0-9_]{20,}"),
        example: concat!(
            "github",
            "_pat_",
            "11FAKE0000000000000000_FakeFineGrainedTokenForRedactionTests0123456789ab"
        ),
        loose: false,
    },
    Shape {
        name: "huggingface-token",
        pattern: concat!(start!(), r"hf_[A-Za-z0-9]{20,}"),
        example: concat!("hf", "_", "FakeHuggingFaceTokenForTests012345"),
        loose: false,
    },
    Shape {
        name: "aws-access-key-id",
        pattern: concat!(start!(), r"(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)"),
        example: concat!("AKIA", "FAKE0000EXAMPLE1"),
        loose: false,
    },
    Shape {
        name: "aws-secret-access-key",
        pattern: concat!(
            start!(),
            r"((?i-u:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key))",
            sep!(),
            r#"\\?["']?([A-Za-z0-9/+=]{40,})"#,
        ),
        example: concat!("aws_secret_access_key = ", "FakeSecretAccessKey/ForRedactionTests+0123"),
        loose: false,
    },
    Shape {
        name: "slack-token",
        pattern: concat!(start!(), r"(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})"),
        example: concat!("xox", "b-", "000000000000-0000000000000-FakeSlackBotTokenForTests"),
        loose: false,
    },
    Shape {
        name: "slack-webhook",
        pattern: r"(?-u:\b)https://hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{20,})",
        example: concat!(
            "https://hooks.slack.com/",
            "services/",
            "T00000000/B00000000/FakeWebhookSecret012345"
        ),
        loose: false,
    },
    Shape {
        name: "discord-webhook",
        pattern: r"(?-u:\b)https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]{20,})",
        example: concat!(
            "https://discord.com/api/",
            "webhooks/",
            "000000000000000000/FakeDiscordWebhookTokenForTests_0123"
        ),
        loose: false,
    },
    Shape {
        name: "jwt",
        pattern: concat!(start!(), r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        example: concat!(
            "eyJhbGciOiJIUzI1NiJ9",
            ".eyJzdWIiOiJmYWtlLXVzZXIifQ",
            ".ZmFrZS1zaWduYXR1cmUtZm9yLXRlc3Rz"
        ),
        loose: false,
    },
    // Before the bearer: `Authorization: Bearer …` keeps its scheme word.
    Shape {
        name: "authorization-header",
        pattern: concat!(
            start!(),
            r"(?i-u:(?:proxy-)?authorization)",
            sep!(),
            r#"\\?["']?(?i-u:(?:basic|bearer|token|digest|apikey)[ \t]+)?([A-Za-z0-9_.~+/=-]{8,})"#,
        ),
        example: "Authorization: Basic ZmFrZXVzZXI6ZmFrZXBhc3N3b3JkMTIz",
        loose: true,
    },
    Shape {
        name: "bearer-token",
        pattern: concat!(start!(), r"(?i-u:bearer)[ \t]+([A-Za-z0-9_.~+/=-]{8,})"),
        example: "401 Unauthorized for Bearer FakeAccessToken-0123456789",
        loose: true,
    },
    Shape {
        name: "pem-private-key",
        pattern: concat!(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY-----",
            armored_body!(),
            r"(?:-----END[ A-Z0-9]*PRIVATE KEY-----)?",
        ),
        example: concat!(
            r#""private_key": "-----BEGIN PRIVATE"#,
            r#" KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCFakeKeyMaterial0123\nRmFrZSBrZXkgbWF0ZXJpYWw=\n-----END PRIVATE KEY-----\n""#,
        ),
        loose: false,
    },
    Shape {
        name: "pgp-private-key",
        pattern: concat!(
            r"-----BEGIN PGP PRIVATE KEY BLOCK-----",
            armored_body!(),
            r"(?:-----END PGP PRIVATE KEY BLOCK-----)?",
        ),
        example: concat!(
            "-----BEGIN PGP PRIVATE",
            " KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBFakeKeyMaterialForRedactionTests0123456789abcdef\n=FAKE\n",
            "-----END PGP PRIVATE KEY BLOCK-----",
        ),
        loose: false,
    },
    // Before OpenAI's: `sk-ant-` is also `sk-` and a run.
    Shape {
        name: "anthropic-key",
        pattern: concat!(start!(), r"sk-ant-[A-Za-z0-9_-]{20,}"),
        example: concat!(
            "sk-",
            "ant-",
            "api03-FakeAnthropicKeyForRedactionTests_0123456789-abcdefghijklmnopqrstuvwxyzAA"
        ),
        loose: false,
    },
    // `sk-` and letters and digits only, or a `proj-`-like kind then
    // anything: not `sk-learn` nor `sk-video-tools-for-something`.
    Shape {
        name: "openai-key",
        pattern: concat!(
            start!(),
            r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,}(?-u:\b))",
        ),
        example: concat!("sk-", "proj-", "FakeOpenAIProjectKeyForRedactionTests_0123456789-abcdefghijklmnop"),
        loose: false,
    },
    Shape {
        name: "gitlab-token",
        pattern: concat!(start!(), r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas)-[A-Za-z0-9_.-]{20,}"),
        example: concat!("gl", "pat-", "FakeGitLabToken01234"),
        loose: false,
    },
    Shape {
        name: "stripe-key",
        pattern: concat!(start!(), r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"),
        example: concat!("sk", "_live_", "FakeStripeKey0123456789ab"),
        loose: false,
    },
    // The npm registry's access tokens.
    Shape {
        name: "npm-token",
        pattern: concat!(start!(), r"npm_[A-Za-z0-9]{36,}(?-u:\b)"),
        example: concat!("npm", "_", "FakeNpmTokenForRedactionTests0123456"),
        loose: false,
    },
    // The Python Package Index's upload tokens: a macaroon, base64.
    Shape {
        name: "pypi-token",
        pattern: concat!(start!(), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
        example: concat!(
            "pypi",
            "-AgEI",
            "FakeUploadTokenForRedactionTests_0123456789-abcdefghijklmnopqrstuvwxyz"
        ),
        loose: false,
    },
    Shape {
        name: "google-api-key",
        pattern: concat!(start!(), r"AIza[0-9A-Za-z_-]{35}"),
        example: concat!("AIza", "SyFakeGoogleApiKeyForTests_012345678"),
        loose: false,
    },
    Shape {
        name: "google-oauth-secret",
        pattern: concat!(start!(), r"GOCSPX-[A-Za-z0-9_-]{28}"),
        example: concat!("GOCSPX", "-", "FakeClientSecretForTests0123"),
        loose: false,
    },
    // A GCP service account's JSON key file.
    Shape {
        name: "gcp-private-key-id",
        pattern: concat!(start!(), r"(private_key_id)", sep!(), r#"\\?["']?([0-9a-fA-F]{40})"#),
        example: r#""private_key_id": "0f0e0d0c0b0a09080706050403020100deadbeef""#,
        loose: false,
    },
    Shape {
        name: "azure-storage-key",
        pattern: concat!(start!(), r"((?:Account|SharedAccess)Key)=([A-Za-z0-9+/]{20,}={0,2})"),
        example: concat!(
            "DefaultEndpointsProtocol=https;AccountName=fakeaccount;AccountKey=",
            "FakeAzureStorageKeyForRedactionTests0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ+/==",
            ";EndpointSuffix=core.windows.net",
        ),
        loose: false,
    },
    Shape {
        name: "digitalocean-token",
        pattern: concat!(start!(), r"do[opr]_v1_[a-f0-9]{64}"),
        example: concat!("dop", "_v1_", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
        loose: false,
    },
    Shape {
        name: "docker-hub-token",
        pattern: concat!(start!(), r"dckr_pat_[A-Za-z0-9_-]{20,}"),
        example: concat!("dckr", "_pat_", "FakeDockerHubToken_0123456789"),
        loose: false,
    },
    Shape {
        name: "databricks-token",
        pattern: concat!(start!(), r"dapi[a-f0-9]{32}(?:-[0-9]+)?(?-u:\b)"),
        example: concat!("dapi", "0123456789abcdef0123456789abcdef"),
        loose: false,
    },
    Shape {
        name: "wandb-api-key",
        pattern: concat!(start!(), r"((?i-u:wandb_api_key))", sep!(), r#"\\?["']?([A-Za-z0-9_-]{40,})"#),
        example: concat!("WANDB_API_KEY=", "0123456789abcdef0123456789abcdef01234567"),
        loose: false,
    },
    Shape {
        name: "wandb-login",
        pattern: concat!(start!(), r"wandb[ \t]+login[ \t]+(?:--?[a-z-]+[ \t]+)*([A-Za-z0-9_-]{40,})"),
        example: concat!("wandb login ", "0123456789abcdef0123456789abcdef01234567"),
        loose: false,
    },
    Shape {
        name: "telegram-bot-token",
        pattern: concat!(start!(), r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?-u:\b)"),
        example: concat!("123456789", ":AA", "FakeTelegramBotTokenForTest012345"),
        loose: false,
    },
    Shape {
        name: "twilio-api-key",
        pattern: concat!(start!(), r"SK[0-9a-fA-F]{32}(?-u:\b)"),
        example: concat!("SK", "0123456789abcdef0123456789abcdef"),
        loose: false,
    },
    Shape {
        name: "sendgrid-key",
        pattern: concat!(start!(), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
        example: concat!("SG", ".FakeSendGridKeyId01234", ".FakeSendGridSecretForRedactionTests01234567"),
        loose: false,
    },
    // `machine HOST login USER password SECRET`, on one line or several.
    Shape {
        name: "netrc-password",
        pattern: concat!(
            start!(),
            r"(?:machine[ \t]+\S+|default)(?:\s+(?:login|account)[ \t]+\S+)*\s+(password)[ \t]+(",
            value!(),
            ")",
        ),
        example: "machine huggingface.co login fakeuser password FakeNetrcPassw0rd",
        loose: true,
    },
    // A `.netrc`'s password on a line of its own (or a JSON string's).
    Shape {
        name: "netrc-password-line",
        pattern: r#"(?:(?m:^)|\\n|")[ \t]*(password)[ \t]+([^\s"\\`<]+)[ \t\r]*(?:(?m:$)|\\[rn]|")"#,
        example: "  password FakeNetrcPassw0rd",
        loose: true,
    },
    // Last: any provider's token under a secret-sounding name has its own
    // shape first. `Bearer` or `Basic` before the value is kept.
    Shape {
        name: "assignment",
        pattern: concat!(
            start!(),
            "(",
            secret_name!(),
            ")",
            sep!(),
            r"(?i-u:(?:bearer|basic)[ \t]+)?(",
            value!(),
            ")",
        ),
        example: "password=Sunsh1ne!2024xyz",
        loose: true,
    },
];

/// [`SHAPES`] as one regex, one pass over the text whatever the number of
/// shapes: each shape's pattern in a group of its own, in order, after the
/// placeholders.
struct Table {
    regex: Regex,
    /// Per shape: the index of its group, how many groups it has inside, and
    /// whether it is [`Shape::loose`].
    groups: Vec<(usize, usize, bool)>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    // First, as group 1, a placeholder this pass or an earlier one wrote:
    // kept as it is, so that `password=<secret:password>` stays.
    let mut alternatives = vec![r"(<secret(?::[A-Za-z0-9_.-]+)?>)".to_string()];
    let mut groups = Vec::with_capacity(SHAPES.len());
    let mut next = 2;
    for shape in SHAPES {
        let inner =
            Regex::new(shape.pattern).unwrap_or_else(|e| panic!("shape {}: {e}", shape.name)).captures_len()
                - 1;
        alternatives.push(format!("({})", shape.pattern));
        groups.push((next, inner, shape.loose));
        next += 1 + inner;
    }
    Table { regex: Regex::new(&alternatives.join("|")).expect("the shapes compile together"), groups }
});

/// `scheme://user:password@host`.
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@").unwrap());

/// Every secret of [`SHAPES`] in `text` replaced by its placeholder.
fn redact_secrets(text: &str) -> Cow<'_, str> {
    TABLE.regex.replace_all(text, |c: &Captures<'_>| replacement(c))
}

/// What one match of [`TABLE`] becomes.
fn replacement(c: &Captures<'_>) -> String {
    let whole = c.get(0).expect("a match");
    let text = whole.as_str();
    let Some(&(group, inner, loose)) = TABLE.groups.iter().find(|(g, ..)| c.get(*g).is_some()) else {
        return text.to_string();
    };
    let (name, secret) = match inner {
        0 => (None, Some(whole)),
        1 => (None, c.get(group + 1)),
        _ => (c.get(group + 1), c.get(group + 2)),
    };
    let Some(secret) = secret else { return text.to_string() };
    let (mut from, mut to) = (secret.start() - whole.start(), secret.end() - whole.start());
    // The `\n` escape a shape may start after stays.
    if inner == 0 && text.len() > 2 && text.starts_with('\\') && text[1..].starts_with(['n', 'r', 't']) {
        from += 2;
    }
    let (open, close) = quotes(&text[from..to]);
    let value = &text[from..to];
    if loose && innocuous(&value[open..value.len() - close]) {
        // Kept, but what it holds may be a secret of its own shape.
        return format!("{}{}{}", &text[..from], redact_secrets(value), &text[to..]);
    }
    from += open;
    to -= close;
    let placeholder = match name {
        Some(n) => format!("<secret:{}>", n.as_str()),
        None => "<secret>".to_string(),
    };
    format!("{}{placeholder}{}", &text[..from], &text[to..])
}

/// How many bytes of quotes open and close `value`: `"…"`, `'…'`, JSON's
/// `\"…\"`, or an opening quote alone.
fn quotes(value: &str) -> (usize, usize) {
    for q in ["\\\"", "\"", "'"] {
        if value.len() >= 2 * q.len() && value.starts_with(q) && value.ends_with(q) {
            return (q.len(), q.len());
        }
        if value.starts_with(q) {
            return (q.len(), 0);
        }
    }
    (0, 0)
}

/// A value under a secret-sounding name that cannot be a secret, and that
/// replacing everywhere would wreck the report: short, a plain word or a
/// few (`MY_API_KEY=python`, `bearer authentication`, `"other value"`), an
/// identifier (`hidden_states`, `_Screen`, `ParserElement`, `X25519PublicKey`,
/// `self.k_proj`, `base64.decodebytes`, `self._lib.NID_aes_256_cbc`), code
/// (`id(self)`, `os.environ["K"]`, `self.prefix+name`, `b'PYTHONCASEOK'`,
/// `&TokenStream`, `Token![pub]`), a number, version or date, a path, a
/// placeholder or template (`<secret>`, `$HF_TOKEN`, `%(password)s`,
/// `{{ secrets.X }}`, `"-varied-%s"`, `#anchor`, `********`). What closes
/// around it in code or prose (`key=str.lower).`) is not part of it.
fn innocuous(value: &str) -> bool {
    let value =
        value.trim_end_matches([')', ']', '}', '.', ':', ',', '"', '\'']).trim_start_matches(['&', '*']);
    // C++ and Rust paths read as Python's: `token::Paren`, `c10::Error`.
    let value = &value.replace("::", ".");
    // A Python string literal's prefix and quotes: `b'…'`, `r"…"`.
    let value = match value.find(['"', '\'']) {
        Some(i @ 1..=2) if value[..i].chars().all(|c| "bBrRuUfF".contains(c)) => &value[i + 1..],
        _ => value,
    };
    let letters = value.chars().all(|c| c.is_ascii_alphabetic());
    let plain_word = letters && (value.len() <= 12 || value.chars().skip(1).all(|c| c.is_ascii_lowercase()));
    let phrase = value.contains(' ') && value.chars().all(|c| c.is_ascii_alphabetic() || c == ' ');
    // snake_case, CONSTANT_CASE, and Mixed_Case with an underscore: tokens
    // that are letters alone and an underscore are rare.
    let identifier = value.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        || value.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        || (value.contains('_') && value.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        || camel_words(value)
        || (value.contains('_') && word_start(value) && numbered(value));
    // `a.b.c` of identifiers with few digits each, or numbered
    // (`win32api.RegEnumKey`, `self._lib.NID_aes_256_cbc`); the parts of a
    // JSON Web Token have digits anywhere.
    let part = |s: &str| {
        let few_digits = s.chars().filter(char::is_ascii_digit).count() <= 2;
        word_start(s)
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && (few_digits || numbered(s) || camel_words(s))
    };
    let dotted = value.contains('.') && value.split('.').all(part);
    // A name, then a call or an index; an attribute, then an operator.
    // Never a bare word then `+` or `&`: base64 and query strings are so.
    let code = value.find(['(', '[', '+', '*', '%']).is_some_and(|i| {
        // A Rust macro's `!`: `Token![pub]`, `vec![]`.
        let name = value[..i].strip_suffix('!').unwrap_or(&value[..i]);
        let operator = !value[i..].starts_with(['(', '[']);
        name.len() >= 2 && name.split('.').all(part) && (!operator || name.contains('.'))
    });
    value.len() < 8
        || plain_word
        || phrase
        || identifier
        || dotted
        || code
        // A number, a version, a date or a time: `1979-05-27T07:32:00Z`.
        || (value.starts_with(|c: char| c.is_ascii_digit())
            && value.chars().all(|c| c.is_ascii_digit() || ".-:+TZ".contains(c)))
        || value.starts_with(['/', '<', '$', '%', '{', '(', '[', '#'])
        || value.contains("%s")
        || value.contains("{}")
        || value.chars().all(|c| c == '*' || c == 'x' || c == 'X')
}

/// Letters then digits, alone or between underscores: `ed25519`, `aes_256`,
/// `_bindgen_ty_7`. An opaque token has digits anywhere.
fn numbered(s: &str) -> bool {
    s.split('_')
        .all(|w| w.trim_start_matches(|c: char| c.is_ascii_alphabetic()).chars().all(|c| c.is_ascii_digit()))
}

fn word_start(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// `ParserElement`, `challengePassword`, `Ed25519PublicKey`: two words or
/// more, each a capital and small letters but the first, with digits only
/// after the first (a type's name). Not `Passw0rd`, `Summer2024` or
/// `FakeSecret0123` (a password's), nor a random mix of letters.
fn camel_words(value: &str) -> bool {
    let b = value.as_bytes();
    let mut i = usize::from(b.first().is_some_and(u8::is_ascii_uppercase));
    while i < b.len() && b[i].is_ascii_lowercase() {
        i += 1;
    }
    let mut words = usize::from(i >= 2);
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    while i < b.len() {
        let start = i;
        if !b[i].is_ascii_uppercase() {
            return false;
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_lowercase() {
            i += 1;
        }
        if i - start < 2 {
            return false;
        }
        words += 1;
    }
    words >= 2
}

pub struct Redactor {
    /// Literal values and their placeholders, longest first.
    literals: Vec<(String, String)>,
    /// Whole-word values (user and host names).
    words: Vec<(Regex, String)>,
    /// Strings that look like addresses but are versions.
    versions: BTreeSet<String>,
}

/// The names that identify whoever a report is about: literal values
/// (a home directory, a secret) and whole words (user and host names).
#[derive(Default)]
struct Names {
    literals: Vec<(String, String)>,
    words: Vec<(String, &'static str)>,
}

impl Names {
    /// This machine's: its secrets, home, user and host name.
    fn of_host(host: &Host) -> Self {
        let mut n = Self::default();
        for (name, value) in host.env_pairs() {
            let upper = name.to_ascii_uppercase();
            if SECRET_WORDS.iter().any(|w| upper.contains(w)) && !innocuous(&value) {
                n.literals.push((value, format!("<secret:{name}>")));
            }
        }
        if let Some(home) = host.env_str("HOME").filter(|h| h.len() > 1 && h != "/") {
            n.literals.push((home.trim_end_matches('/').to_string(), "<home>".into()));
        }
        for var in ["USER", "LOGNAME", "USERNAME"] {
            if let Some(u) = host.env_str(var) {
                n.words.push((u, "<user>"));
            }
        }
        if let Some(home) = host.env_str("HOME")
            && let Some(base) = std::path::Path::new(&home).file_name().and_then(|b| b.to_str())
        {
            n.words.push((base.to_string(), "<user>"));
        }
        if let Some(h) = host.hostname() {
            n.host(&h);
        }
        n
    }

    /// The ones a saved report or a paste shows of its own machine: the
    /// home directories in its paths and the user and host of a shell
    /// prompt. This machine's names say nothing about it.
    fn within(snapshot: &Snapshot) -> Self {
        let mut n = Self::default();
        let value = serde_json::to_value(snapshot).unwrap_or_default();
        let mut texts = Vec::new();
        strings_of(&value, &mut texts);
        for text in texts {
            for c in SAVED_HOME.captures_iter(text) {
                n.literals.push((c[1].to_string(), "<home>".into()));
                n.words.push((c[2].to_string(), "<user>"));
            }
            for c in PROMPT.captures_iter(text) {
                n.words.push((c[1].to_string(), "<user>"));
                n.host(&c[2]);
            }
        }
        n.literals.sort();
        n.literals.dedup();
        n
    }

    fn host(&mut self, h: &str) {
        self.words.push((h.to_string(), "<host>"));
        if let Some(short) = h.split('.').next() {
            self.words.push((short.to_string(), "<host>"));
        }
    }
}

/// Every string inside a JSON value.
fn strings_of<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings_of(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| strings_of(v, out)),
        _ => {}
    }
}

/// A home directory in a path of a saved report: the directory and the
/// account name (`/home/alice`, `/Users/alice`, `C:\Users\alice`).
static SAVED_HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)((?:/home|/Users|[A-Z]:\\Users)[/\\]([A-Za-z0-9][A-Za-z0-9._-]{2,31}))(?:[/\\]|\b)")
        .expect("a valid regex")
});

/// A shell prompt: `alice@gpu-box:~$`, `[alice@gpu-box project]$`.
static PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)(?:^|\[)([a-z_][a-z0-9_-]{2,31})@([A-Za-z0-9][A-Za-z0-9.-]{2,62})(?::[~/]| [^\]\s]*\][$#])",
    )
    .expect("a valid regex")
});

impl Redactor {
    /// For a report probed on this machine.
    pub fn new(host: &Host, snapshot: &Snapshot) -> Self {
        Self::with_names(Names::of_host(host), snapshot)
    }

    /// For a saved report or a paste, judged here but about another machine.
    pub(crate) fn for_saved(snapshot: &Snapshot) -> Self {
        Self::with_names(Names::within(snapshot), snapshot)
    }

    fn with_names(names: Names, snapshot: &Snapshot) -> Self {
        let Names { mut literals, words: mut names } = names;
        literals.sort_by_key(|l| std::cmp::Reverse(l.0.len()));
        let mut words = Vec::new();
        names.sort();
        names.dedup();
        let vocabulary = report_words(snapshot);
        for (name, placeholder) in names {
            // Short names ("a", "ci") would eat ordinary words; account
            // names that are the report's own words ("root", "python",
            // "onnx") identify nobody and would wreck it.
            if name.len() >= 3
                && !(placeholder == "<user>" && vocabulary.contains(&name.to_ascii_lowercase()))
                // An ASCII boundary keeps the regex fast; a name with other
                // letters needs Unicode's to end where its word ends.
                && let Ok(re) = Regex::new(&match name.is_ascii() {
                    true => format!(r"(?-u:\b){}(?-u:\b)", regex::escape(&name)),
                    false => format!(r"\b{}\b", regex::escape(&name)),
                })
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
    pub(crate) fn apply_field(&self, field: Option<&str>, value: &str) -> String {
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
        out = redact_secrets(&out).into_owned();
        out = URL_CREDENTIALS.replace_all(&out, "${1}<credentials>@").into_owned();
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

    #[test]
    fn a_saved_report_is_redacted_by_its_own_names_not_this_machines() {
        // A saved report of alice's machine, with a prompt in its evidence.
        let snapshot: Snapshot = serde_json::from_value(serde_json::json!({
            "schema_version": crate::snapshot::SCHEMA_VERSION, "probed_by": "test", "mode": "fast",
            "system": {"not_evaluated": "fixture"},
            "pythons": [
                {"executable": "/home/alice/venvs/x/bin/python", "source": "flag", "version": {"found": "3.11.9"},
                 "kind": "venv", "interpreter": {"not_evaluated": "fixture"}, "site_dirs": [], "imports": [],
                 "distributions": {"not_evaluated": "fixture"}}],
            "nvidia": {"not_evaluated": "fixture"},
            "pasted": {"facts": [], "lines": 2, "error_lines": [{"line": 1, "text": "alice@gpu-box:~/proj$ python"}]}
        }))
        .unwrap();
        let r = Redactor::for_saved(&snapshot);
        let text = "alice ran it on gpu-box.lab.example in /home/alice/venvs/x; someone else did not";
        assert_eq!(
            r.apply(text),
            "<user> ran it on <host>.lab.example in <home>/venvs/x; someone else did not"
        );
        // This machine's user is nobody in that report.
        assert_eq!(redactor().apply("someone"), "<user>");
        assert_eq!(r.apply("someone"), "someone");
    }

    fn redactor() -> Redactor {
        let env =
            [("HOME".into(), "/home/me".into()), ("USER".into(), "someone".into())].into_iter().collect();
        let host = Host::new("/".into(), env, "/".into(), std::time::Duration::from_secs(1));
        Redactor::new(&host, &Snapshot::new("test", crate::snapshot::ProbeMode::Pasted))
    }

    fn shape(name: &str) -> &'static Shape {
        SHAPES.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no shape {name}"))
    }

    /// The secret `shape` finds in `text` by itself, without its quotes.
    fn secret_in(shape: &Shape, text: &str) -> String {
        let re = Regex::new(shape.pattern).unwrap();
        let c = re.captures(text).unwrap_or_else(|| panic!("{}: no match in {text:?}", shape.name));
        let m = c.get(c.len() - 1).unwrap_or_else(|| panic!("{}: no value in {text:?}", shape.name));
        let value = m.as_str();
        let value = value.strip_prefix("\\n").unwrap_or(value);
        let (open, close) = quotes(value);
        value[open..value.len() - close].to_string()
    }

    /// `text` keeps nothing of `secret`: not it, and no ten bytes of it.
    fn assert_gone(what: &str, secret: &str, text: &str) {
        assert!(!text.contains(secret), "{what}: {secret:?} kept in {text:?}");
        let b = secret.as_bytes();
        for w in b.windows(10.min(b.len())) {
            let w = String::from_utf8_lossy(w);
            assert!(!text.contains(&*w), "{what}: {w:?} of {secret:?} kept in {text:?}");
        }
        assert!(text.contains("<secret"), "{what}: no placeholder in {text:?}");
    }

    /// `text` as one shape's example is redacted by every entry point, as
    /// it is and inside rendered JSON, which stays JSON.
    fn assert_redacted(name: &str, text: &str) {
        let r = redactor();
        let secret = secret_in(shape(name), text);
        assert_gone(name, &secret, &r.apply(text));
        assert_gone(name, &secret, &r.apply_rendered(text));
        assert_gone(name, &secret, &r.apply_field(Some("text"), text));
        assert_gone(name, &secret, &r.apply_field(Some("name"), text));
        assert_eq!(r.apply(&r.apply(text)), r.apply(text), "{name}: redacting twice changes {text:?}");
        let json =
            serde_json::to_string_pretty(&serde_json::json!({ "text": text, "lines": [text, "next"] }))
                .unwrap();
        let rendered = r.apply_rendered(&json);
        let escaped = serde_json::to_string(&secret).unwrap();
        assert_gone(name, escaped.trim_matches('"'), &rendered);
        let back: serde_json::Value =
            serde_json::from_str(&rendered).unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {rendered}"));
        assert_eq!(back["lines"][1], "next", "{name}: {rendered}");
    }

    /// One test per shape, of its example; [`every_shape_has_a_test`] checks
    /// that none is left out.
    macro_rules! shape_tests {
        ($($test:ident: $name:literal,)*) => {
            $(
                #[test]
                fn $test() {
                    assert_redacted($name, shape($name).example);
                }
            )*
            const TESTED: &[&str] = &[$($name),*];
        };
    }

    shape_tests! {
        github_token_is_redacted: "github-token",
        github_fine_grained_token_is_redacted: "github-fine-grained-token",
        huggingface_token_is_redacted: "huggingface-token",
        aws_access_key_id_is_redacted: "aws-access-key-id",
        aws_secret_access_key_is_redacted: "aws-secret-access-key",
        slack_token_is_redacted: "slack-token",
        slack_webhook_is_redacted: "slack-webhook",
        discord_webhook_is_redacted: "discord-webhook",
        jwt_is_redacted: "jwt",
        authorization_header_is_redacted: "authorization-header",
        bearer_token_is_redacted: "bearer-token",
        pem_private_key_is_redacted: "pem-private-key",
        pgp_private_key_is_redacted: "pgp-private-key",
        anthropic_key_is_redacted: "anthropic-key",
        openai_key_is_redacted: "openai-key",
        gitlab_token_is_redacted: "gitlab-token",
        stripe_key_is_redacted: "stripe-key",
        npm_token_is_redacted: "npm-token",
        pypi_token_is_redacted: "pypi-token",
        google_api_key_is_redacted: "google-api-key",
        google_oauth_secret_is_redacted: "google-oauth-secret",
        gcp_private_key_id_is_redacted: "gcp-private-key-id",
        azure_storage_key_is_redacted: "azure-storage-key",
        digitalocean_token_is_redacted: "digitalocean-token",
        docker_hub_token_is_redacted: "docker-hub-token",
        databricks_token_is_redacted: "databricks-token",
        wandb_api_key_is_redacted: "wandb-api-key",
        wandb_login_is_redacted: "wandb-login",
        telegram_bot_token_is_redacted: "telegram-bot-token",
        twilio_api_key_is_redacted: "twilio-api-key",
        sendgrid_key_is_redacted: "sendgrid-key",
        netrc_password_is_redacted: "netrc-password",
        netrc_password_line_is_redacted: "netrc-password-line",
        assignment_is_redacted: "assignment",
    }

    #[test]
    fn every_shape_has_a_test_and_an_example_the_whole_table_redacts() {
        let r = redactor();
        let mut names = BTreeSet::new();
        for s in SHAPES {
            assert!(names.insert(s.name), "two shapes named {}", s.name);
            assert!(TESTED.contains(&s.name), "shape {} has no test in shape_tests!", s.name);
            assert!(!s.example.is_empty(), "shape {} has no example", s.name);
            let groups = Regex::new(s.pattern).unwrap().captures_len() - 1;
            assert!(groups <= 2, "shape {}: {groups} groups; at most a name and a value", s.name);
            assert_gone(s.name, &secret_in(s, s.example), &r.apply(s.example));
        }
        for t in TESTED {
            assert!(names.contains(t), "shape_tests! names {t}, which SHAPES lacks");
        }
    }

    /// The issue's reproducer: the password was in the report twice.
    #[test]
    fn a_bare_password_assignment_loses_its_password() {
        let line = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version password=Sunsh1ne!2024xyz";
        let want = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version password=<secret:password>";
        let r = redactor();
        assert_eq!(r.apply(line), want);
        assert_eq!(r.apply_rendered(line), want);
        assert_eq!(r.apply_field(Some("text"), line), want);
        // Why it was kept: the name had to have a character before its
        // secret word (`[A-Za-z_][A-Za-z0-9_]*?` then the word), so
        // `MY_PASSWORD=` was redacted and `password=` was not.
        let old = Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*?(?i:token|key|secret|password|passwd|credential|auth)[A-Za-z0-9_]*)(\s*[=:]\s*)")
            .unwrap();
        assert!(!old.is_match("password=Sunsh1ne!2024xyz") && old.is_match("MY_PASSWORD=Sunsh1ne!2024xyz"));
    }

    #[test]
    fn secret_names_hold_secrets_quoted_or_not_at_a_line_start_or_after_a_space() {
        let r = redactor();
        for (text, want) in [
            ("password=Sunsh1ne!2024xyz", "password=<secret:password>"),
            ("passwd: Sunsh1ne!2024xyz", "passwd: <secret:passwd>"),
            ("token=0a1b2c3d4e5f6a7b", "token=<secret:token>"),
            ("secret=0a1b2c3d4e5f6a7b", "secret=<secret:secret>"),
            ("  api_key=0a1b2c3d4e5f6a7b", "  api_key=<secret:api_key>"),
            ("x key=0a1b2c3d4e5f6a7b y", "x key=<secret:key> y"),
            ("password = 'Sunsh1ne!2024xyz'", "password = '<secret:password>'"),
            (
                r#"{"password": "Sunsh1ne! 2024xyz", "user": "bob"}"#,
                r#"{"password": "<secret:password>", "user": "bob"}"#,
            ),
            ("export HF_TOKEN=\"hf_live_0a1b2c3d\"", "export HF_TOKEN=\"<secret:HF_TOKEN>\""),
            ("--password=Sunsh1ne!2024xyz --x-api-key 1", "--password=<secret:password> --x-api-key 1"),
            ("DB_PASS=Sunsh1ne!2024xyz", "DB_PASS=<secret:DB_PASS>"),
            // A password's words and digits are not a type's name.
            ("password: Summer2024", "password: <secret:password>"),
            ("password=FakePassw0rd", "password=<secret:password>"),
            ("token=sdlfkj452&state=x", "token=<secret:token>"),
            ("apiKey: 0a1b2c3d4e5f6a7b", "apiKey: <secret:apiKey>"),
            (
                "spring.datasource.password=Sunsh1ne!2024xyz",
                "spring.datasource.password=<secret:spring.datasource.password>",
            ),
            ("SECRET_KEY_BASE=0a1b2c3d4e5f6a7b", "SECRET_KEY_BASE=<secret:SECRET_KEY_BASE>"),
            ("https://x.example/f?token=0a1b2c3d4e5f6a7b", "https://x.example/f?token=<secret:token>"),
            ("auth: Bearer 0a1b2c3d4e5f6a7b", "auth: Bearer <secret:auth>"),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPx\"RfiCY\\EXAMPLEKEY",
                "AWS_SECRET_ACCESS_KEY=<secret:AWS_SECRET_ACCESS_KEY>",
            ),
        ] {
            assert_eq!(r.apply(text), want, "{text}");
            assert_eq!(r.apply(want), want, "{want} is redacted again");
        }
    }

    #[test]
    fn more_forms_of_the_shapes_are_redacted() {
        for (name, text) in [
            (
                "github-token",
                concat!(
                    "git clone https://x-access-token:",
                    "ghs_",
                    "FakeInstallationToken0123456789abcd",
                    "@github.com/o/r"
                ),
            ),
            ("github-token", concat!("token\\n", "gho_", "FakeOAuthToken0123456789abcdefghijkl")),
            (
                "authorization-header",
                concat!("-H 'Authorization: token ", "ghp_", "FakeTokenForRedactionTests0123456789'"),
            ),
            ("authorization-header", "authorization: Bearer FakeBearer.Token-0123456789"),
            ("authorization-header", "Proxy-Authorization: Basic ZmFrZXVzZXI6ZmFrZXBhc3N3b3JkMTIz"),
            (
                "pem-private-key",
                concat!(
                    "-----BEGIN RSA PRIVATE",
                    " KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D\n\nMIIEowIBAAKCAQEAfake0123456789\n-----END RSA PRIVATE KEY-----"
                ),
            ),
            (
                "pem-private-key",
                concat!("-----BEGIN OPENSSH PRIVATE", " KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAfake0123"),
            ),
            (
                "openai-key",
                concat!("OPENAI_API_KEY=", "sk-", "FakeOpenAILegacyKey0123456789abcdefghijklmnopqrstu"),
            ),
            ("gitlab-token", concat!("gl", "dt-", "FakeGitLabDeployToken012")),
            ("gitlab-token", concat!("gl", "rt-", "FakeGitLabRunnerToken012")),
            ("stripe-key", concat!("rk", "_live_", "FakeStripeKey0123456789ab")),
            ("stripe-key", concat!("sk", "_test_", "FakeStripeKey0123456789ab")),
            ("slack-token", concat!("xapp", "-1-", "A0000000000-0000000000000-fake0123456789")),
            (
                "netrc-password",
                concat!(
                    "machine api.wandb.ai\n  login user\n  password ",
                    "0123456789abcdef0123456789abcdef01234567"
                ),
            ),
            ("assignment", "MY_API_KEY='0a1b2c3d4e5f6a7b'"),
            ("assignment", "\"client_secret\": \"FakeClientSecret0123\""),
            // Base64 may start like a path: a shape's own value goes all the same.
            ("aws-secret-access-key", "aws_secret_access_key=/FakeSecretAccessKeyForRedactionTests+0123"),
        ] {
            assert_redacted(name, text);
        }
    }

    /// What the field pass keeps, the pass over the rendered report keeps:
    /// the same text as JSON, escapes and all.
    #[test]
    fn innocuous_values_stay_in_rendered_json_too() {
        let r = redactor();
        for text in [
            "key: value\nsecond line",
            "token = tokenizer.eos_token\n  File \"x.py\", line 3",
            "password: ********\tpassword combination.",
            "{'key': 'value', 'other key': 'other value'}",
        ] {
            assert_eq!(r.apply(text), text);
            let json = serde_json::to_string_pretty(&serde_json::json!({ "text": text })).unwrap();
            assert_eq!(r.apply_rendered(&json), json);
        }
    }

    /// Words of a report and of package lists that sound like secrets.
    #[test]
    fn ordinary_report_words_and_package_names_are_not_redacted() {
        let r = redactor();
        for text in [
            "scikit-learn 1.3.0",
            "scikit-learn==1.3.0 sk-learn",
            "cudnn 8.9.2.26 libcudnn.so.9 sm_86 torch-2.1.0+cu121",
            "key_padding_mask",
            "src_key_padding_mask: Optional[Tensor]",
            "key_padding_mask = _canonical_mask(mask=key_padding_mask)",
            "KeyError: 'onnx'",
            "KeyError: 'CUDAExecutionProvider'",
            "monkey=banana",
            "monkey=bananasplitwithcream",
            "CUDA_VISIBLE_DEVICES=0",
            "token_type_ids",
            "token_type_ids: tensor([[0, 0, 0]])",
            "tokenizers==0.15.0 keyring==24.3.0 google-auth==2.23.0 azure-keyvault-secrets==4.7.0",
            "google-auth: 2.23.0",
            "key = self.k_proj(hidden_states)",
            "token = tokenizer.eos_token",
            "password = getpass.getpass()",
            "secret = os.environ[\"SECRET\"]",
            "MY_API_KEY=python",
            "HF_TOKEN=$HF_TOKEN token: ${{ secrets.HF_TOKEN }}",
            "password: ********",
            "max_tokens=4096 num_tokens: 512 key_id: 3",
            "pass_rate: 0.95 PASS: test_onnx_export",
            "Authorization required; use a bearer token",
            "c10::Error at::Tensor",
            "hf_hub_download(repo_id=x)",
            "transformers.models.bert.modeling_bert",
            "secret: <secret> password=<secret:password> key: <secret:AWS_SECRET_ACCESS_KEY>",
            "task-1234567890abcdefghijklmnop",
            "sha256:4b3f52727d60a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5",
            "-----BEGIN CERTIFICATE-----",
            "_SK_START = b\"-----BEGIN OPENSSH PRIVATE KEY-----\"",
            "def dict_of(key: ParserElement, peer_public_key: X25519PublicKey) -> bytes:",
            "CHALLENGE_PASSWORD: \"challengePassword\" key = b'PYTHONCASEOK'",
            "key = self.attr_prefix+self._build_name(key) nid_key = self._lib.NID_aes_256_cbc",
            "sorted(items, key=lineno_sort_key) max(delims, key=delims.get) key = id(self), get_ident()",
            "let tokens = TokenStream::new(); pub_token: Token![pub], tokens: &TokenBuffer",
            "key = \"-varied-%s\" % header comment_key='#comment' created: key = 1979-05-27T07:32:00Z",
        ] {
            assert_eq!(r.apply(text), text);
        }
    }
}
