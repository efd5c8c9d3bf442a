//! What people type by hand: issue templates filled in with any markup,
//! Markdown tables, image references, paths, and sentences.
//!
//! A field ("**PyTorch Version**: 2.2.0", "| ORT | 1.17.1 |", "CUDA =
//! 12.1") is read as surely as a collect_env line. A version found in a
//! sentence, a path or an image tag is weaker: it is kept aside and used
//! only where nothing structured stated the same fact (see
//! [`Collector::guess`]).

use std::sync::LazyLock;

use regex::Regex;

use super::lines::holds;
use super::{Collector, Key, is_none_word};
use crate::matrix::Platform;

/// A version as people write it: `2.2.0`, `v1.17.1`, `2.2.0+cu121`,
/// `2.2.0a0+81ea7a4`, `8.9.7.29`, `12.1`; not a bare integer.
static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    super::prose_regex(r"(?i)\bv?(\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|post|dev)\d*)?(?:\+[0-9a-z.]+)?)").unwrap()
});

/// What a field's key names, once markup, case and notes are gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Torch,
    Python,
    Cuda,
    Cudnn,
    CudaAndCudnn,
    Driver,
    Gpu,
    Os,
    Dist(&'static str),
    /// "Rembg version" as a heading: the distribution is the collector's
    /// `heading_dist`.
    Named,
    /// ONNX Runtime's own template ("ONNX Runtime Version or Commit ID"):
    /// a release of whichever onnxruntime package is installed; recorded
    /// as `onnxruntime` unless the paste installs another at that version.
    AnyOnnxRuntime,
}

/// Keys as the issue templates of PyTorch, ONNX Runtime, TensorRT, onnx
/// and their users write them, lower-cased, without "version".
const FIELDS: &[(&str, Field)] = &[
    ("pytorch", Field::Torch),
    ("torch", Field::Torch),
    ("python", Field::Python),
    ("cuda/cudnn", Field::CudaAndCudnn),
    ("cuda / cudnn", Field::CudaAndCudnn),
    ("cuda", Field::Cuda),
    ("cuda toolkit", Field::Cuda),
    ("cudnn", Field::Cudnn),
    ("nvidia driver", Field::Driver),
    ("driver", Field::Driver),
    ("gpu model and memory", Field::Gpu),
    ("gpu type", Field::Gpu),
    ("gpu model", Field::Gpu),
    ("gpu", Field::Gpu),
    // TensorRT's template: "**NVIDIA GPU**: GT 730".
    ("nvidia gpu", Field::Gpu),
    ("graphics card", Field::Gpu),
    ("operating system", Field::Os),
    ("os platform and distribution", Field::Os),
    ("os", Field::Os),
    ("onnx runtime", Field::AnyOnnxRuntime),
    ("onnx runtime or commit id", Field::AnyOnnxRuntime),
    ("onnxruntime", Field::Dist("onnxruntime")),
    ("onnxruntime-gpu", Field::Dist("onnxruntime-gpu")),
    ("ort", Field::AnyOnnxRuntime),
    ("onnx", Field::Dist("onnx")),
    ("tensorrt", Field::Dist("tensorrt")),
    ("trt", Field::Dist("tensorrt")),
    ("torchvision", Field::Dist("torchvision")),
    ("torchaudio", Field::Dist("torchaudio")),
    // LibTorch is torch's C++ distribution, one release line with it.
    ("libtorch", Field::Torch),
    ("torch-tensorrt", Field::Dist("torch-tensorrt")),
    ("torchtensorrt", Field::Dist("torch-tensorrt")),
    ("torch-xla", Field::Dist("torch-xla")),
    ("torchxla", Field::Dist("torch-xla")),
    ("pytorch/xla", Field::Dist("torch-xla")),
    ("numpy", Field::Dist("numpy")),
    ("protobuf", Field::Dist("protobuf")),
    ("onnxscript", Field::Dist("onnxscript")),
];

/// `**TensorRT Version**` → `tensorrt`: markup, notes in parentheses,
/// "version" and case removed.
fn normalize_key(key: &str) -> String {
    let head = key.split('(').next().unwrap_or_default();
    let mut k = String::with_capacity(head.len());
    let mut word = String::new();
    for w in head.split_whitespace() {
        word.clear();
        word.extend(
            w.chars().filter(|c| !matches!(c, '*' | '`' | '_' | '#')).map(|c| c.to_ascii_lowercase()),
        );
        if word.contains("version") || word.contains("used") {
            word = word.replace("version", "").replace("used", "");
        }
        if !word.is_empty() {
            if !k.is_empty() {
                k.push(' ');
            }
            k.push_str(&word);
        }
    }
    k
}

fn known_field(key: &str) -> Option<Field> {
    // Every key the templates use is short; a long one is a sentence.
    if key.len() > 64 {
        return None;
    }
    let key = normalize_key(key);
    FIELDS.iter().find(|(k, _)| *k == key).map(|&(_, f)| f)
}

/// A line that is only a field's key, as a Markdown heading ("### OS
/// Version") or in bold ("**Rembg version:**"): its value is the next line
/// that is not blank. A key the templates do not use reads as a field when
/// it is "<distribution> version".
pub(crate) fn heading(line: &str, c: &mut Collector) -> Option<Field> {
    let text = match line.strip_prefix('#') {
        Some(rest) => rest.trim_start_matches('#').strip_prefix(' ')?,
        None => {
            let inner = line.trim_end().strip_prefix("**")?;
            let inner = inner
                .strip_suffix(":**")
                .or_else(|| inner.strip_suffix("**:"))
                .or_else(|| inner.strip_suffix("**"))?;
            inner.trim_end_matches(':')
        }
    };
    if text.contains("**") {
        return None;
    }
    known_field(text).or_else(|| {
        let mut words = text.split_whitespace();
        let (name, version, rest) = (words.next()?, words.next()?, words.next());
        let name = name.trim_matches('`');
        let named = rest.is_none()
            && version.trim_end_matches(':').eq_ignore_ascii_case("version")
            && name.len() <= 64
            && name.starts_with(|ch: char| ch.is_ascii_alphabetic())
            && name.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-'));
        named.then(|| {
            c.heading_dist = crate::snapshot::normalize_name(name);
            Field::Named
        })
    })
}

/// A hand-written field; false when its key is not one the doctor knows,
/// or its value states no version where one belongs (a log line that
/// happens to start with "ONNX:"): then the line is read as a sentence.
pub(crate) fn field(key: &str, value: &str, c: &mut Collector) -> bool {
    let Some(what) = known_field(key) else { return false };
    field_value(what, value, c)
}

/// Records what a field's value states; false when a version field
/// holds none.
pub(crate) fn field_value(what: Field, value: &str, c: &mut Collector) -> bool {
    let value = value.trim().trim_matches(|ch| matches!(ch, '*' | '`' | '"' | '\'')).trim();
    // "2.1.2+cpu -> 2.2.1+cpu": an upgrade; what is installed now is the last.
    let arrow = value.rfind("->").map(|i| i + 2).or_else(|| value.rfind('→').map(|i| i + '→'.len_utf8()));
    let value = match arrow {
        Some(i) if leading_version(value[i..].trim()).is_some() => value[i..].trim(),
        _ => value,
    };
    if is_none_word(value) || value.eq_ignore_ascii_case("unknown") || value == "-" {
        return true;
    }
    match what {
        // "RTX 3060, CUDA 12.4, cuDNN 9.1": the GPU, then other facts.
        Field::Gpu if is_gpu_name(value) => {
            let (name, rest) = value.split_once([',', ';']).unwrap_or((value, ""));
            c.gpu(0, gpu_name(name), None);
            if !rest.is_empty() {
                sentence(rest, c);
            }
        }
        Field::Gpu => {}
        Field::Os => c.fact(Key::Os, value),
        Field::CudaAndCudnn => {
            let mut versions = VERSION.captures_iter(value).map(|m| m.get(1).expect("group 1").as_str());
            let cuda = versions.next();
            if let Some(cuda) = cuda {
                c.fact(Key::CudaToolkit, cuda);
            }
            // "11.0 / 11.2" names two CUDA releases (two machines, or a
            // toolkit and a driver's): a cuDNN has never shared its major
            // with the CUDA it was built for.
            let major = |v: &str| v.split('.').next().unwrap_or_default().to_string();
            if let Some(cudnn) = versions.next().filter(|v| cuda.is_none_or(|cuda| major(cuda) != major(v))) {
                c.fact(Key::Cudnn, cudnn);
            }
        }
        _ => {
            let Some(v) = leading_version(value).map(str::to_string).or_else(|| cuda_tag(value)) else {
                return false;
            };
            let v = v.as_str();
            match what {
                // Only the version: a field says nothing of the CUDA build
                // unless its local tag does (collect_env's line would).
                Field::Torch => c.dist("torch", v),
                Field::Python => c.fact(Key::Python, v),
                Field::Cuda => c.fact(Key::CudaToolkit, v),
                Field::Cudnn => c.fact(Key::Cudnn, v),
                Field::Driver => c.fact(Key::Driver, v),
                Field::Dist(name) => c.dist(&named_in_value(name, value), v),
                Field::AnyOnnxRuntime => {
                    let name = named_in_value("onnxruntime", value);
                    if name == "onnxruntime" {
                        c.any_onnxruntime(v);
                    }
                    c.dist(&name, v);
                }
                Field::Named => {
                    let name = std::mem::take(&mut c.heading_dist);
                    c.dist(&name, v);
                }
                // Read above, before a version was looked for.
                Field::Gpu | Field::Os | Field::CudaAndCudnn => {}
            }
        }
    }
    true
}

/// The distribution a field's value names itself, where it is another of
/// the same module's ("ONNX Runtime version: `onnxruntime_gpu==1.2.0`",
/// "1.17.1 (onnxruntime-gpu)"); else the field's own.
fn named_in_value(field: &str, value: &str) -> String {
    value
        .split(|ch: char| {
            ch.is_whitespace() || matches!(ch, '=' | '(' | ')' | ',' | '`' | ':' | '<' | '>' | '~')
        })
        .filter(|w| w.len() > field.len() && w.starts_with(|ch: char| ch.is_ascii_alphabetic()))
        // "tensorRT-8.2.4.2" is the field's name and its version, not another name.
        .filter(|w| !w.split('-').skip(1).any(|part| part.starts_with(|ch: char| ch.is_ascii_digit())))
        .map(crate::snapshot::normalize_name)
        .find(|w| w != field && super::same_module(w, field))
        .unwrap_or_else(|| field.to_string())
}

/// The version a field's value opens with, after at most two words
/// ("1.13.1", "v1.17.1", "onnxruntime-gpu 1.16", "Python 3.8.5"); not a
/// number further on or glued to a word ("export failure 0.1s").
fn leading_version(value: &str) -> Option<&str> {
    let m = VERSION.captures(value)?.get(1)?;
    let words_before = value[..m.start()].split_whitespace().count();
    let glued = value[m.end()..].starts_with(|ch: char| ch.is_ascii_alphabetic());
    (words_before <= 2 && !glued).then_some(m.as_str())
}

/// Whether a "GPU:" field names a GPU, not "No", "CPU only" or "0".
fn is_gpu_name(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let letters = lower.chars().filter(char::is_ascii_alphabetic).count();
    letters >= 2
        && !["no", "false", "true", "yes", "cpu", "cpu only", "none available"].contains(&lower.trim())
}

/// A GPU a line of prose or a hand-written list names ("- RTX2080TI,
/// Driver Version: 410.79"), kept unless the paste states its GPUs.
pub(crate) fn gpu_mention(line: &str, c: &mut Collector) {
    if !c.has_guess(&Key::GpuName(0))
        && let Some(name) = gpu_in_prose(line)
    {
        c.guess(Key::GpuName(0), &name);
    }
    // "Windows 11, RTX 3060": the OS, unless a field states it.
    if !c.has_guess(&Key::Os) && has(line, "windows") {
        static WINDOWS: LazyLock<Regex> =
            LazyLock::new(|| super::prose_regex(r"(?i)\bwindows\s?(1[01]|server\s+20\d\d)\b").unwrap());
        if let Some(m) = WINDOWS.captures(line) {
            c.guess(Key::Os, &format!("Windows {}", &m[1]));
        }
    }
}

/// An NVIDIA GPU a sentence names by its brand and model ("RTX2080TI",
/// "GeForce GTX 1080 Ti", "GTX 960M", "Tesla V100", "NVIDIA A100", "RTX
/// A4000", "MX450", "GeForce GT 730"), as the GPU table
/// spells such names. A bare "A100" or "T4" without NVIDIA or Tesla before
/// it is not read: prose names GPUs it compares against too.
fn gpu_in_prose(line: &str) -> Option<String> {
    static NAME: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"(?i)\b(?:(?:nvidia\s+)?(?:geforce\s+)?(rtx|gtx)\s?-?(\d{3,4}m?)(\s?(?:ti|super))?|(?:nvidia|tesla)\s+([ahlptvk]\d{1,3}[a-z]?)|(titan|quadro)\s+([a-z]*\d*[a-z]?)|(?:nvidia\s+)?rtx\s+(a\d{3,4})|(?:nvidia\s+)?(?:geforce\s+)?mx\s?(\d{3})|(?:(?:nvidia|geforce)\s+gt\s?|\bgt\s)(6[1-4]0|7[1-4]0|1030))\b",
        )
        .unwrap()
    });
    if !["rtx", "gtx", "nvidia", "tesla", "titan", "quadro", "mx", "gt "].iter().any(|w| has(line, w)) {
        return None;
    }
    let m = NAME.captures(line)?;
    let upper = |i: usize| m.get(i).map(|g| g.as_str().to_ascii_uppercase());
    Some(if let Some(brand) = upper(1) {
        let suffix = m.get(3).map(|s| format!(" {}", s.as_str().trim())).unwrap_or_default();
        format!("{brand} {}{}", &m[2].to_ascii_uppercase(), suffix.to_ascii_uppercase())
    } else if let Some(model) = upper(4) {
        model
    } else if let Some(brand) = m.get(5) {
        format!("{} {}", brand.as_str(), &m[6])
    } else if let Some(model) = upper(7) {
        format!("RTX {model}")
    } else if let Some(model) = m.get(8) {
        format!("MX{}", model.as_str())
    } else {
        format!("GT {}", m.get(9)?.as_str())
    })
}

/// "RTX 4090 24GB" → "RTX 4090": the memory is not part of the name.
fn gpu_name(value: &str) -> &str {
    static MEMORY: LazyLock<Regex> =
        LazyLock::new(|| super::prose_regex(r"(?i)[\s,(/]+\d+\s*(?:gb|gib|g)\b.*$").unwrap());
    MEMORY.find(value).map_or(value, |m| &value[..m.start()]).trim()
}

/// `cu121` → `12.1`, `cu118` → `11.8`, `cu92` → `9.2`. Two digits are a
/// tag only below CUDA 10 (`cu80`, `cu92`): `-cu12` in `nvidia-cudnn-cu12`
/// or `tensorrt-cu12` names a CUDA major, not a build.
pub(crate) fn cuda_tag(s: &str) -> Option<String> {
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| super::prose_regex(r"(?i)(?:\b|\+)cu(\d{3}|[7-9]\d)\b").unwrap());
    if !has(s, "cu") {
        return None;
    }
    let digits = TAG.captures(s)?.get(1)?.as_str();
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(format!("{major}.{minor}"))
}

/// `| PyTorch | 2.2.0 |` → ("PyTorch", "2.2.0"): a two-cell Markdown row.
pub(crate) fn table_row(line: &str) -> Option<(&str, &str)> {
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    let mut cells = inner.split('|');
    let (key, value) = (cells.next()?.trim(), cells.next()?.trim());
    (cells.next().is_none() && !key.is_empty() && !key.starts_with('-')).then_some((key, value))
}

/// `Key = value` (a filled-in template or a config dump).
pub(crate) fn equals(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once('=')?;
    let k = k.trim();
    (k.len() < 48 && k.split_whitespace().count() <= 4 && !v.starts_with('=')).then_some((k, v.trim()))
}

/// Image references: `pytorch/pytorch:2.1.0-cuda12.1-cudnn8-devel`,
/// `nvidia/cuda:12.1.0-cudnn8-runtime-ubuntu22.04`. Their tags are
/// structured, so what they say is a fact, not a guess.
pub(crate) fn image(line: &str, c: &mut Collector) -> bool {
    static TORCH: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"\bpytorch/pytorch:(\d+\.\d+(?:\.\d+)?)-cuda(\d+\.\d+)-cudnn(\d+)").unwrap()
    });
    static CUDA: LazyLock<Regex> =
        LazyLock::new(|| super::prose_regex(r"\bnvidia/cuda:(\d+\.\d+(?:\.\d+)?)(?:-cudnn(\d+))?").unwrap());
    // Most lines name no image: skip them without running a regex.
    if !holds(line, "pytorch/pytorch:") && !holds(line, "nvidia/cuda:") {
        return false;
    }
    if let Some(m) = TORCH.captures(line) {
        c.fact(Key::TorchVersion, &m[1]);
        c.dist("torch", &m[1]);
        c.fact(Key::TorchCuda, &m[2]);
        c.fact(Key::Cudnn, &m[3]);
        return true;
    }
    if let Some(m) = CUDA.captures(line) {
        c.fact(Key::CudaToolkit, &m[1]);
        if let Some(cudnn) = m.get(2) {
            c.fact(Key::Cudnn, cudnn.as_str());
        }
        return true;
    }
    false
}

/// A platform release: an NGC image (`nvcr.io/nvidia/pytorch:24.01-py3`,
/// "NGC PyTorch container 23.10"), a JetPack release ("JetPack 5.1.2") or
/// an L4T one ("L4T R35.4.1", `l4t-base:r32.7.1`, an image tag's
/// `pytorch-l4t-r32.5.0`, and
/// `/etc/nv_tegra_release`'s "# R32 (release), REVISION: 7.1"). Read
/// whatever else the line holds too.
pub(crate) fn platform(line: &str, c: &mut Collector) {
    static NGC: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"(?i)\bnvidia/(pytorch|tensorrt|tritonserver):(\d{2}\.\d{2})\b|\bngc\b\D{0,40}?\b(\d{2}\.\d{2})\b")
            .unwrap()
    });
    static JETSON: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"(?i)\bjet ?pack\s*(?:version|sdk)?(?:\s+is)?\s*[:=]?\s*v?(\d\.\d+(?:\.\d+)?)\b|\bl4t(?:\s*version)?\s*[:=-]?\s*r?(\d{2}\.\d+(?:\.\d+)?)\b|\bl4t-[a-z0-9-]+:\s?r(\d{2}\.\d+\.\d+)\b|\bR(\d{2}) \(release\), REVISION: (\d+\.\d+)|\bdustynv/[a-z0-9_.-]+:[a-z0-9_.-]*?\br(\d{2}\.\d+\.\d+)\b",
        )
        .unwrap()
    });
    // A Jetson board named without its JetPack: the machine is still an
    // aarch64 one.
    static BOARD: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"(?i)\bjetson[\s_-]*(?:nano|tx1|tx2|xavier|agx|nx|orin|thor)\b").unwrap()
    });
    // Most lines name no platform: one literal search rules them out.
    static NAMED: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"(?i)ngc|nvidia/|jet ?pack|l4t|REVISION|jetson|dustynv/").unwrap()
    });
    if !NAMED.is_match(line) {
        return;
    }
    if BOARD.is_match(line) {
        c.guess(Key::Arch, "aarch64");
    }
    if let Some(m) = NGC.captures(line) {
        let release = m.get(2).or(m.get(3)).map_or("", |r| r.as_str());
        let torch =
            m.get(1).map_or_else(|| has(line, "pytorch"), |i| i.as_str().eq_ignore_ascii_case("pytorch"));
        c.platform(Platform::Ngc, release, torch);
    }
    let mut named = vec![];
    for m in JETSON.captures_iter(line) {
        named.push(m.get(0).map_or(0..0, |w| w.range()));
        let release = match (m.get(4), m.get(5)) {
            (Some(major), Some(rest)) => format!("{}.{}", major.as_str(), rest.as_str()),
            _ => m
                .get(1)
                .or(m.get(2))
                .or(m.get(3))
                .or(m.get(6))
                .map_or_else(String::new, |r| r.as_str().to_string()),
        };
        // An L4T image's tag (`l4t-pytorch:r32.7.1`, `...-l4t-r32.5.0`,
        // `dustynv/pytorch:2.1-r36.2.0`): what runs is a container, and
        // the release is the image's.
        let image = m.get(3).is_some()
            || m.get(6).is_some()
            || line[..m.get(0).map_or(0, |w| w.start())].ends_with('-');
        if image {
            c.guess(Key::Container, "docker");
            c.guess(Key::ImageL4t, &release);
        } else if m.get(1).is_none() {
            // Named as L4T itself, not as the JetPack that ships it.
            c.guess(Key::L4t, &release);
        }
        c.platform(Platform::Jetpack, &release, false);
    }
    if has(line, "jetson") {
        bare_l4t(line, &named, c);
    }
}

/// On a line that names a Jetson, a release written bare ("on r32.6",
/// "the r35.4.1 image") is L4T's: the host's, or with "container" or
/// "image" after it, an image's. Releases already read as L4T's, JetPack's
/// or an image tag's (`:r34.1.0`, `-r32.5.0`) are left to that reading.
fn bare_l4t(line: &str, named: &[std::ops::Range<usize>], c: &mut Collector) {
    static BARE: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"(?i)\br((?:2[4-9]|3\d)\.\d+(?:\.\d+)?)\b(\s+(?:docker\s+)?(?:containers?|images?)\b)?",
        )
        .unwrap()
    });
    for m in BARE.captures_iter(line) {
        let whole = m.get(0).map_or(0..0, |w| w.range());
        let tagged = line[..whole.start].ends_with([':', '-', '/', '_']);
        if tagged || named.iter().any(|r| r.start <= whole.start && whole.start < r.end) {
            continue;
        }
        let release = m.get(1).map_or("", |r| r.as_str());
        if m.get(2).is_some() {
            c.guess(Key::ImageL4t, release);
        } else {
            c.guess(Key::L4t, release);
        }
        c.platform(Platform::Jetpack, release, false);
    }
}

/// A paste from inside a container or its build: docker's own commands
/// and messages, and a Dockerfile's FROM line.
pub(crate) fn container(line: &str, c: &mut Collector) {
    let t = line.trim_start_matches(['$', '#', '>', ' ', '`']);
    let docker = t.starts_with("FROM ")
        && t.split_whitespace().nth(1).is_some_and(|image| image.contains([':', '/']))
        || ["docker run ", "docker build ", "docker exec ", "nvidia-docker run ", "docker compose "]
            .iter()
            .any(|cmd| t.starts_with(cmd))
        || t.starts_with("Status: Downloaded newer image for ");
    if docker {
        c.guess(Key::Container, "docker");
    }
}

/// Whether the clause before `at` speaks of a version that is not the one
/// installed: "I tried pytorch==1.6.0", "I cannot upgrade to Pytorch 2.0",
/// "instead of onnx 1.16".
fn not_installed(line: &str, at: usize) -> bool {
    const WORDS: &[&str] = &[
        "tried",
        "trying",
        "try ",
        "upgrade to",
        "update to",
        "upgrading to",
        "updating to",
        "downgrade to",
        "downgraded to",
        "downgrading to",
        "instead of",
        "switch to",
        "switching to",
        "requires",
        "require ",
        "needs",
        "need ",
        "without",
    ];
    // One pass over the clause for all the words (a line of prose may
    // name a dozen versions, each asking).
    static ANY: LazyLock<Regex> = LazyLock::new(|| {
        let words: Vec<String> = WORDS.iter().map(|w| regex::escape(w)).collect();
        Regex::new(&format!("(?i:{})", words.join("|"))).unwrap()
    });
    let before = &line[..at];
    let clause = [". ", "; ", "! ", "? ", " but "].iter().filter_map(|b| before.rfind(b)).max().unwrap_or(0);
    ANY.is_match(&before[clause..])
}

/// Whether `line` holds `needle` (lower case), in any case.
/// Each candidate start is found by `memchr2` on the needle's first byte in
/// either case, so a line without that letter costs one vectorised scan.
fn has(line: &str, needle: &str) -> bool {
    let (hay, needle) = (line.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else { return true };
    let mut from = 0;
    while hay.len() - from >= needle.len() {
        let Some(i) =
            memchr::memchr2(first, first.to_ascii_uppercase(), &hay[from..=hay.len() - needle.len()])
        else {
            return false;
        };
        let at = from + i;
        if hay[at + 1..at + needle.len()].eq_ignore_ascii_case(rest) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// The words a version is read after, as written (case aside). A word that
/// begins another (`onnx`, `onnxruntime`) gives way to the longer one.
const WORDS: &[&str] = &[
    "pytorch",
    "torch",
    "torchvision",
    "python",
    "cuda",
    "cudnn",
    "driver",
    "onnx",
    "onnxruntime",
    "onnxruntime-gpu",
    "tensorrt",
    "numpy",
    "protobuf",
    "ctranslate2",
    "faster-whisper",
    "faster_whisper",
];

/// A version named by the word before it ("torch 2.1", "CUDA version: 12.1",
/// "torch.__version__ gives '2.1.0+cpu'").
static WORDED: LazyLock<Regex> = LazyLock::new(|| {
    let mut words: Vec<&str> = WORDS.to_vec();
    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
    let words: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    super::prose_regex(&format!(
        r#"(?i)\b({})(?:\.__version__\)?(?:\s*(?:returns?|gives|prints?|shows?|says|outputs?|->|→))?)?(?:\s+version)?(?:\s+is|\s*(?:==|[:=@])|\s+v|\s+)?\s*(?:\(\s*(?:version\s+)?)?['"`]?v?(\d+\.\d+(?:\.\d+)*(?:\+[0-9a-z.]+)?)"#,
        words.join("|")
    ))
    .unwrap()
});

/// A `WORDED` match taken apart: the word ("onnxruntime-gpu") and the
/// version after it, without its `v` ("torch v2.1.0+cu121" → "2.1.0+cu121").
fn worded_parts(m: &str) -> Option<(&str, &str)> {
    let word_end = WORDS
        .iter()
        .filter(|w| m.get(..w.len()).is_some_and(|p| p.eq_ignore_ascii_case(w)))
        .map(|w| w.len())
        .max()?;
    let start = m[word_end..]
        .rfind(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.' || ch == '+'))
        .map_or(word_end, |i| word_end + i + 1);
    let v = &m[start..];
    let v = v.strip_prefix(['v', 'V']).filter(|r| r.starts_with(|ch: char| ch.is_ascii_digit())).unwrap_or(v);
    v.starts_with(|ch: char| ch.is_ascii_digit()).then_some((&m[..word_end], v))
}

/// The Python a Windows path names: its installer's folder
/// (`...\Programs\Python\Python310\lib\site-packages`, `C:\Python37\Lib`,
/// `Python38-32` for the 32-bit one), or the Microsoft Store's package
/// (`PythonSoftwareFoundation.Python.3.10_qbz5n2kfra8p0`).
fn windows_python(line: &str, c: &mut Collector) {
    static FOLDER: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"(?i)\\python3(\d{1,2})(?:-32|-64)?\\+(?:lib\b|site-packages|scripts\b|python\.exe)|PythonSoftwareFoundation\.Python\.3\.(\d{1,2})_",
        )
        .unwrap()
    });
    if c.has_guess(&Key::Python) || !has(line, "python") {
        return;
    }
    if let Some(m) = FOLDER.captures(line) {
        let minor = m.get(1).or_else(|| m.get(2)).map_or("", |m| m.as_str());
        c.guess(Key::Python, &format!("3.{minor}"));
    }
}

/// Versions in a sentence or a path, each recognised by the word before it:
/// "torch 1.12 with cu113", "on CUDA 11.3", "driver 470.82",
/// ".../python3.8/site-packages", "/usr/local/cuda-11.0/", "libcudnn.so.8.9.2".
pub(crate) fn sentence(line: &str, c: &mut Collector) {
    // "I had installed both onnxruntime and onnxruntime-gpu": the one
    // installation problem people describe instead of listing.
    if has(line, "both") && has(line, "onnxruntime-gpu") {
        static BOTH: LazyLock<Regex> = LazyLock::new(|| {
            super::prose_regex(
                r"(?i)\bboth\s+(?:the\s+)?onnxruntime(?:-gpu)?\s+and\s+(?:the\s+)?onnxruntime(?:-gpu)?\b",
            )
            .unwrap()
        });
        if let Some(m) = BOTH.find(line)
            && !not_installed(line, m.start())
            && !line.trim_end().ends_with('?')
        {
            c.both_onnxruntimes();
        }
    }
    windows_python(line, c);
    // Most lines of a long paste hold no dotted version: skip them cheaply.
    if !line.as_bytes().windows(2).any(|w| w[0].is_ascii_digit() && w[1] == b'.') {
        return;
    }
    static PATHS: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"python(\d\.\d+)/(?:site|dist)-packages|/cuda-(\d+\.\d+)/|libcudnn\.so\.(\d+\.\d+\.\d+)|TensorRT-(\d+\.\d+\.\d+(?:\.\d+)?)").unwrap()
    });
    // Matches are found by the DFA and taken apart by hand: a capturing
    // search per match costs more than all the rest of a line's reading.
    // pip's refusals name what was not installed.
    let refused = ["satisfies the requirement", "No matching distribution", "not a supported wheel"]
        .iter()
        .any(|refusal| line.contains(refusal));
    for m in WORDED.find_iter(line).filter(|_| !refused) {
        let at = m.start();
        // `nvcr.io/nvidia/pytorch:24.01` is an image's tag, not torch's
        // version; `opencv-python : 4.1.1` and `pytorch_lightning 1.5` are
        // other packages' versions.
        let Some((word, v)) = worded_parts(m.as_str()) else { continue };
        let word = word.to_ascii_lowercase();
        let key = match word.as_str() {
            "pytorch" | "torch" => Key::Dist("torch".into()),
            "python" => Key::Python,
            "cuda" => Key::CudaToolkit,
            "cudnn" => Key::Cudnn,
            "driver" => Key::Driver,
            other => Key::Dist(crate::snapshot::normalize_name(other)),
        };
        if c.has_guess(&key) || not_installed(line, at) || line[..at].ends_with(['/', '-', '_', '.']) {
            continue;
        }
        c.guess(key, v);
    }
    if !c.has_guess(&Key::TorchCuda)
        && let Some(cuda) = cuda_tag(line)
        && has(line, "torch")
    {
        c.guess(Key::TorchCuda, &cuda);
    }
    // `pip install onnxruntime-gpu==1.19.2` (or `rembg[gpu]==2.0.55`,
    // extras and all) in a sentence names what was installed.
    static PINNED: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r#"(?:^|[\s"'`(])([A-Za-z][A-Za-z0-9_.-]*)(?:\[[A-Za-z0-9_,. -]*\])?==(\d+(?:\.\d+)+(?:\+[0-9a-z.]+)?)"#,
        )
            .unwrap()
    });
    if !refused && holds(line, "==") {
        for m in PINNED.captures_iter(line) {
            // "CUDA==12.1", "cuDNN==8.9", "pytorch==1.8": the words above
            // read them; they are not distributions of those names.
            let word = &m[1];
            if ["cuda", "cudnn", "python", "pytorch", "driver"].iter().any(|w| word.eq_ignore_ascii_case(w))
                || not_installed(line, m.get(1).map_or(0, |m| m.start()))
            {
                continue;
            }
            c.guess(Key::Dist(crate::snapshot::normalize_name(&m[1])), &m[2]);
        }
    }
    // Each path pattern holds one of these literals: most lines hold none.
    if !["python", "/cuda-", "libcudnn.so.", "TensorRT-"].iter().any(|w| holds(line, w)) {
        return;
    }
    for m in PATHS.captures_iter(line) {
        if let Some(py) = m.get(1) {
            c.guess(Key::Python, py.as_str());
        } else if let Some(cuda) = m.get(2) {
            c.guess(Key::CudaToolkit, cuda.as_str());
        } else if let Some(cudnn) = m.get(3) {
            c.guess(Key::Cudnn, cudnn.as_str());
        } else if let Some(trt) = m.get(4) {
            c.guess(Key::Dist("tensorrt".into()), trt.as_str());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worded_version_is_taken_apart_as_the_pattern_captured_it() {
        fn parts(s: &str) -> Option<(&str, &str)> {
            WORDED.find(s).and_then(|m| worded_parts(m.as_str()))
        }
        assert_eq!(parts("on torch v2.1.0+cu121 here"), Some(("torch", "2.1.0+cu121")));
        assert_eq!(parts("python3.8"), Some(("python", "3.8")));
        assert_eq!(parts("CUDA version: 12.1"), Some(("CUDA", "12.1")));
        assert_eq!(parts("CUDA Version is 11.8"), Some(("CUDA", "11.8")));
        assert_eq!(parts("cudnn=8.9.7"), Some(("cudnn", "8.9.7")));
        assert_eq!(parts("onnxruntime-gpu 1.17.1"), Some(("onnxruntime-gpu", "1.17.1")));
        assert_eq!(parts("tensorrt@10.0"), Some(("tensorrt", "10.0")));
        assert_eq!(parts("PyTorch V1.13"), Some(("PyTorch", "1.13")));
        assert_eq!(parts("faster-whisper (version `1.0.1`)"), Some(("faster-whisper", "1.0.1")));
        assert_eq!(parts("faster_whisper 1.0.3"), Some(("faster_whisper", "1.0.3")));
        assert_eq!(parts("ctranslate2==4.4.0"), Some(("ctranslate2", "4.4.0")));
        assert_eq!(parts("torch (2.1.0)"), Some(("torch", "2.1.0")));
    }

    #[test]
    fn a_field_value_naming_its_own_distribution_records_that_one() {
        let read = |key: &str, value: &str| {
            let mut c = Collector::default();
            assert!(field(key, value, &mut c));
            (
                c.dist_version("onnxruntime").map(str::to_string),
                c.dist_version("onnxruntime-gpu").map(str::to_string),
            )
        };
        assert_eq!(read("ONNX Runtime version", "`onnxruntime_gpu==1.2.0`"), (None, Some("1.2.0".into())));
        assert_eq!(read("ONNX Runtime version", "onnxruntime-gpu 1.16.3"), (None, Some("1.16.3".into())));
        assert_eq!(read("ONNX Runtime version", "1.17.1 (onnxruntime-gpu)"), (None, Some("1.17.1".into())));
        assert_eq!(read("ONNX Runtime version", "1.17.1"), (Some("1.17.1".into()), None));
        assert_eq!(read("ONNX Runtime version", "onnxruntime 1.17.1"), (Some("1.17.1".into()), None));
        // Another package's name is not the field's distribution.
        assert_eq!(read("onnxruntime", "1.17.1 with onnx 1.15"), (Some("1.17.1".into()), None));
    }

    #[test]
    fn a_cuda_and_cudnn_field_with_two_cuda_releases_names_no_cudnn() {
        let read = |value: &str| {
            let mut c = Collector::default();
            assert!(field("CUDA/cuDNN version", value, &mut c));
            let get = |k: Key| c.values.get(&k).map(|(v, _)| v.clone());
            (get(Key::CudaToolkit), get(Key::Cudnn))
        };
        assert_eq!(read("11.3 / 8.2.1"), (Some("11.3".into()), Some("8.2.1".into())));
        assert_eq!(read("11.0 / 11.2"), (Some("11.0".into()), None));
    }

    #[test]
    fn a_windows_path_names_its_python() {
        let read = |line: &str| {
            let mut c = Collector::default();
            windows_python(line, &mut c);
            c.guesses.first().map(|(_, v, _)| v.clone())
        };
        let some = |v: &str| Some(v.to_string());
        assert_eq!(
            read(
                r#"File "c:\Users\u\AppData\Local\Programs\Python\Python310\lib\site-packages\onnxruntime\capi\x.py""#
            ),
            some("3.10")
        );
        assert_eq!(read(r#"File "C:\Python37\lib\site-packages\torch\__init__.py""#), some("3.7"));
        assert_eq!(
            read(r"C:\Users\u\AppData\Local\Programs\Python\Python38-32\Scripts\pip.exe"),
            some("3.8")
        );
        assert_eq!(
            read(
                r"C:\Users\p\AppData\Local\Packages\PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0\LocalCache"
            ),
            some("3.11")
        );
        // A folder of another name, a Linux path, a sentence.
        assert_eq!(read(r"D:\projects\python3-tools\lib\x.py"), None);
        assert_eq!(read("/usr/lib/python310/site-packages"), None);
        assert_eq!(read("I use Python310 here"), None);
    }

    #[test]
    fn has_finds_a_needle_in_any_case_and_nowhere_else() {
        assert!(has("NVIDIA GeForce RTX 3090", "rtx"));
        assert!(has("rtx", "rtx"));
        assert!(has("an Rtx", "rtx"));
        assert!(has("xxRTX", "rtx"));
        assert!(!has("RT", "rtx"));
        assert!(!has("R T X", "rtx"));
        assert!(!has("", "rtx"));
        assert!(has("anything", ""));
        // A near miss at every start, then the needle at the very end.
        assert!(has("rtrtrtRTX", "rtx"));
        assert!(!has("rtrtrtRT", "rtx"));
        assert!(has("Ünïcode then Windows", "windows"));
    }

    #[test]
    fn keys_are_read_through_markup_and_notes() {
        assert_eq!(normalize_key("**TensorRT Version**"), "tensorrt");
        assert_eq!(normalize_key("Python Version (if applicable)"), "python");
        assert_eq!(normalize_key("`CUDA/cuDNN version`"), "cuda/cudnn");
        assert_eq!(normalize_key("ONNX Runtime version"), "onnx runtime");
        assert_eq!(gpu_name("RTX 4090 24GB"), "RTX 4090");
        assert_eq!(gpu_in_prose("- RTX2080TI, Driver Version: 410.79").as_deref(), Some("RTX 2080 TI"));
        assert_eq!(gpu_in_prose("on my NVIDIA GeForce GTX 1080 Ti").as_deref(), Some("GTX 1080 TI"));
        assert_eq!(gpu_in_prose("a Tesla V100 node").as_deref(), Some("V100"));
        assert_eq!(gpu_in_prose("it works on an A100"), None);
        assert_eq!(gpu_in_prose("NVIDIA driver 535"), None);
        assert_eq!(gpu_in_prose("a laptop GTX 960M").as_deref(), Some("GTX 960M"));
        assert_eq!(gpu_in_prose("I use an RTX A4000").as_deref(), Some("RTX A4000"));
        assert_eq!(gpu_in_prose("with the GeForce MX450").as_deref(), Some("MX450"));
        assert_eq!(gpu_in_prose("an old GT 730").as_deref(), Some("GT 730"));
        assert_eq!(gpu_in_prose("the GT 100 boxes match"), None);
        let mut c = Collector::default();
        gpu_mention("Windows 11, RTX 3060", &mut c);
        assert_eq!(c.guesses.len(), 2);
        assert!(is_gpu_name("TITAN V") && is_gpu_name("Tesla T4"));
        assert!(!is_gpu_name("No") && !is_gpu_name("0") && !is_gpu_name("CPU only"));
        assert_eq!(gpu_name("NVIDIA A100-SXM4-80GB"), "NVIDIA A100-SXM4-80GB");
        assert_eq!(cuda_tag("2.2.0+cu121").as_deref(), Some("12.1"));
        assert_eq!(leading_version("v1.17.1"), Some("1.17.1"));
        let mut c = Collector::default();
        sentence("Do I need both onnxruntime and onnxruntime-gpu?", &mut c);
        sentence("I had installed both onnxruntime and onnxruntime-gpu.", &mut c);
        assert!(field("ONNX Runtime version", "1.6.0", &mut c));
        c.settle_both_onnxruntimes();
        assert_eq!(c.dist_version("onnxruntime-gpu"), Some("1.6.0"), "the sentence names the second install");
        let mut c = Collector::default();
        sentence("Do I need both onnxruntime and onnxruntime-gpu?", &mut c);
        assert!(field("ONNX Runtime version", "1.6.0", &mut c));
        c.settle_both_onnxruntimes();
        assert_eq!(c.dist_version("onnxruntime-gpu"), None, "a question installs nothing");
        let mut c = Collector::default();
        sentence("I ran pip install \"rembg[gpu,cli]==2.0.55\" onnxruntime-gpu==1.17.1", &mut c);
        c.settle_guesses();
        assert_eq!(c.dist_version("onnxruntime-gpu"), Some("1.17.1"));
        assert_eq!(c.dist_version("rembg"), Some("2.0.55"), "extras do not hide the pin");
        let mut c = Collector::default();
        assert!(field("torch", "2.1.2+cpu -> 2.2.1+cpu (", &mut c));
        assert!(field("torchvision", "0.16.2 → 0.17.1", &mut c));
        assert_eq!(c.dist_version("torch"), Some("2.2.1+cpu"));
        assert_eq!(c.dist_version("torchvision"), Some("0.17.1"));
        assert_eq!(leading_version("2.2.0a0+81ea7a4"), Some("2.2.0a0+81ea7a4"));
        assert_eq!(leading_version("onnxruntime-gpu 1.16.3 (pip)"), Some("1.16.3"));
        assert_eq!(leading_version("export failure 0.1s"), None);
        assert_eq!(leading_version("starting export with onnx 1.13.1 opset 17"), None);
        assert_eq!(table_row("| PyTorch | 2.2.0 |"), Some(("PyTorch", "2.2.0")));
        assert_eq!(table_row("|---|---|"), None);
    }
}
