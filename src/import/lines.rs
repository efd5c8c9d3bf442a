//! One line of pasted text at a time: what it says, if it is a line the
//! doctor knows.
//!
//! Table-shaped inputs (`pip list`, `conda list`, collect_env's GPU list and
//! cuDNN candidates) span lines, so the reader carries a small [`Mode`]
//! from one line to the next; a blank line ends any table.

use std::sync::LazyLock;

use regex::Regex;

use super::{Collector, Key, free, is_none_word};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Prose,
    PipList,
    CondaList,
    /// Lines after "GPU models and configuration:".
    GpuList,
    /// Paths after "cuDNN version: Probably one of the following:".
    CudnnCandidates,
    /// The line after a Markdown heading that names a field
    /// ("### ONNX Runtime Version or Commit ID"), blank lines between.
    Heading(free::Field),
}

/// Strips what wraps a line in a ticket: `\r`, Markdown quoting (`> `),
/// list bullets, surrounding white space; cuts very long lines.
pub(crate) fn clean(raw: &str, max: usize) -> &str {
    let mut line = raw.trim_end_matches(['\r', '\n']);
    if line.len() > max {
        let mut cut = max;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line = &line[..cut];
    }
    let mut line = line.trim();
    while let Some(rest) = line.strip_prefix('>') {
        line = rest.trim_start();
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            line = rest.trim_start();
        }
    }
    // A fence opens or closes a block; a line fenced on its own
    // (```Could not load library …```) keeps its text.
    if let Some(rest) = line.strip_prefix("```") {
        let inner = rest.trim_end_matches('`').trim();
        let info_string = !inner.contains(char::is_whitespace) && !inner.contains(['.', ':', '/']);
        return if info_string { "" } else { inner };
    }
    line
}

/// Where `line` holds `needle` first: each candidate start found by
/// `memchr` on the needle's first byte. `str::find` builds a two-way
/// searcher per call, and `memchr::memmem::find` a finder, each costing
/// more than searching a short line.
pub(crate) fn find_in(line: &str, needle: &str) -> Option<usize> {
    let (hay, needle) = (line.as_bytes(), needle.as_bytes());
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while hay.len() - from >= needle.len() {
        let at = from + memchr::memchr(first, &hay[from..=hay.len() - needle.len()])?;
        if &hay[at + 1..at + needle.len()] == rest {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Whether `line` holds `needle` (see [`find_in`]).
pub(crate) fn holds(line: &str, needle: &str) -> bool {
    find_in(line, needle).is_some()
}

/// A distribution name as pip and conda print it.
fn is_dist_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// `name==version` (pip freeze), with optional `[extras]`.
fn pip_freeze(line: &str) -> Option<(&str, &str)> {
    let at = find_in(line, "==")?;
    let (name, version) = (&line[..at], &line[at + 2..]);
    let name = name.trim_end();
    let name = match name.split_once('[') {
        Some((n, extras)) if extras.ends_with(']') => n,
        Some(_) => return None,
        None => name,
    };
    let version = version.trim_start();
    let ok = is_dist_name(name)
        && version.starts_with(|c: char| c.is_ascii_digit())
        && !version.contains(|c: char| c.is_whitespace() || c == ';' || c == ',');
    ok.then_some((name, version))
}

/// A `conda list` row pasted without its header: name, version, build,
/// and a channel conda knows.
fn conda_row(line: &str) -> Option<(&str, &str, &str)> {
    const CHANNELS: &[&str] = &["conda-forge", "defaults", "pytorch", "nvidia", "anaconda", "main", "pypi"];
    // The channel is the last column: most lines end with none.
    if !CHANNELS.iter().any(|ch| line.trim_end().ends_with(ch)) {
        return None;
    }
    let mut cols = line.split_whitespace();
    let (name, version, build, channel) = (cols.next()?, cols.next()?, cols.next()?, cols.next()?);
    (cols.next().is_none()
        && version.starts_with(|ch: char| ch.is_ascii_digit())
        && CHANNELS.contains(&channel))
    .then_some((name, version, build))
}

/// A line of conda's package plan ("The following NEW packages will be
/// INSTALLED"): `pytorch  pytorch/linux-64::pytorch-1.9.0-py3.8_cpu_0`,
/// or an update's `old --> new`, whose new side is what is installed.
/// The spec's name must be the first column's: a plan names each package
/// twice.
fn conda_plan(line: &str) -> Option<(&str, &str, &str)> {
    if !holds(line, "::") {
        return None;
    }
    let mut words = line.split_whitespace();
    let name = words.next()?;
    let spec = words.next_back()?;
    let (_, spec) = spec.split_once("::")?;
    let (rest, build) = spec.rsplit_once('-')?;
    let (spec_name, version) = rest.rsplit_once('-')?;
    let plausible = spec_name == name
        && version.starts_with(|c: char| c.is_ascii_digit())
        && !build.is_empty()
        && build.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    plausible.then_some((name, version, build))
}

/// `[pip3] torch==2.1.0` or `[conda] pytorch 2.1.0 py3.10_cuda12.1_cudnn8.9.2_0 pytorch`:
/// (manager, name, version, build).
fn bracketed(line: &str) -> Option<(&str, &str, &str, Option<&str>)> {
    let (manager, rest) = ["pip3", "pip", "conda"]
        .into_iter()
        .find_map(|m| line.strip_prefix('[')?.strip_prefix(m)?.strip_prefix(']').map(|r| (m, r)))?;
    let rest = rest.strip_prefix(char::is_whitespace)?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .unwrap_or(rest.len());
    let (name, rest) = rest.split_at(end);
    let rest = match rest.strip_prefix("==") {
        Some(r) => r,
        None => rest.strip_prefix(char::is_whitespace)?.trim_start(),
    };
    let mut tokens = rest.split_whitespace();
    let version = tokens.next()?;
    (is_dist_name(name) && version.starts_with(|c: char| c.is_ascii_digit())).then_some((
        manager,
        name,
        version,
        tokens.next(),
    ))
}

static SMI_DRIVER: LazyLock<Regex> =
    LazyLock::new(|| super::prose_regex(r"Driver Version:\s*([0-9][0-9.]*)").unwrap());
static SMI_CUDA: LazyLock<Regex> =
    LazyLock::new(|| super::prose_regex(r"CUDA Version:\s*([0-9][0-9.]*)").unwrap());
static SMI_ROW: LazyLock<Regex> =
    LazyLock::new(|| super::prose_regex(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|").unwrap());
static NVCC: LazyLock<Regex> = LazyLock::new(|| {
    super::prose_regex(r"Cuda compilation tools, release ([0-9.]+)(?:, V([0-9.]+))?").unwrap()
});
static CONDA_BUILD_CUDA: LazyLock<Regex> =
    LazyLock::new(|| super::prose_regex(r"cuda(\d+)\.(\d+)|^cuda(\d{3})py\d").unwrap());
static CONDA_BUILD_PYTHON: LazyLock<Regex> =
    LazyLock::new(|| super::prose_regex(r"^py(\d)\.(\d+)_|(?:^|[_a-z0-9])py(3\d{1,2})(?:h|_|$)").unwrap());

/// A line of `nvidia-smi -L`, `GPU 0: NVIDIA A100-SXM4-80GB (UUID:
/// GPU-…)`: (index, name, UUID). Read without a regex: a list of GPUs can
/// be a million lines long.
fn smi_l(line: &str) -> Option<(u32, &str, Option<&str>)> {
    let rest = line.strip_prefix("GPU ")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (index, rest) = rest.split_at(digits);
    let rest = rest.strip_prefix(':')?.trim_start();
    // `nvidia-smi -q` heads each GPU with its PCI bus id, `GPU 00000000:00:06.0`.
    let bus_id = |r: &str| r.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
    if index.is_empty() || rest.is_empty() || bus_id(rest) {
        return None;
    }
    let index = index.parse().unwrap_or(0);
    let is_uuid = |u: &str| {
        u.strip_prefix("GPU-")
            .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
    };
    // The first `(UUID: GPU-…)` that ends the line, after a name.
    for (at, _) in rest.match_indices("(UUID:") {
        let name = rest[..at].trim_end();
        let uuid = rest[at + "(UUID:".len()..].strip_suffix(')').map(str::trim_start);
        if let Some(uuid) = uuid.filter(|u| is_uuid(u))
            && !name.is_empty()
        {
            return Some((index, name, Some(uuid)));
        }
    }
    Some((index, rest, None))
}

/// Reads one cleaned, non-empty line; returns the mode for the next one.
pub(crate) fn read(line: &str, mode: Mode, c: &mut Collector) -> Mode {
    match mode {
        Mode::GpuList => {
            if let Some((index, name, uuid)) = smi_l(line) {
                c.gpu(index, name, uuid);
                return Mode::GpuList;
            }
        }
        Mode::CudnnCandidates => {
            if line.starts_with('/') || line.contains("cudnn") && line.contains(".so") {
                c.library(line);
                return Mode::CudnnCandidates;
            }
        }
        Mode::PipList => {
            if line.starts_with("---") {
                return Mode::PipList;
            }
            let mut cols = line.split_whitespace();
            if let (Some(name), Some(version)) = (cols.next(), cols.next())
                && version.starts_with(|ch: char| ch.is_ascii_digit())
                && !line.contains(':')
            {
                c.list_rows += 1;
                c.dist(name, version);
                return Mode::PipList;
            }
        }
        Mode::CondaList => {
            if line.starts_with('#') {
                return Mode::CondaList;
            }
            let mut cols = line.split_whitespace();
            if let (Some(name), Some(version), Some(build)) = (cols.next(), cols.next(), cols.next())
                && version.starts_with(|ch: char| ch.is_ascii_digit())
            {
                c.list_rows += 1;
                conda_package(c, name, version, Some(build));
                return Mode::CondaList;
            }
        }
        Mode::Heading(field) => {
            if !line.starts_with('#') {
                if !free::field_value(field, line, c) {
                    free::sentence(line, c);
                }
                return Mode::Prose;
            }
        }
        Mode::Prose => {}
    }
    if let Some(field) = free::heading(line, c) {
        return Mode::Heading(field);
    }
    prose(line, c)
}

/// A line of `conda list`: the package, and what its build string says.
/// pytorch's own channel writes `py3.9_cuda11.3_cudnn8.2.0_0` or
/// `py3.8_cpu_0`; conda-forge writes `cuda112py38h…` or `cpu_py38h…`;
/// `pytorch-mutex … cpu`, `cpuonly` (`cpu-only` in 2019's nightlies) and the defaults channel's
/// `_pytorch_select … cpu_0` mark a CPU-only install.
fn conda_package(c: &mut Collector, name: &str, version: &str, build: Option<&str>) {
    let build = build.unwrap_or_default();
    let name = match name {
        "pytorch" | "pytorch-nightly" => "torch",
        "pytorch-cuda" | "cudatoolkit" | "cuda-version" => {
            c.fact(Key::CondaCuda, version);
            return;
        }
        "pytorch-mutex" if build == "cpu" => {
            c.cpu_torch_marker();
            return;
        }
        "cpuonly" | "cpu-only" => {
            c.cpu_torch_marker();
            return;
        }
        "_pytorch_select" => {
            if build.starts_with("cpu") {
                c.cpu_torch_marker();
            }
            return;
        }
        other => other,
    };
    // `pypi_0` marks what pip installed into the conda environment.
    if build.starts_with("pypi") {
        c.dist(name, version);
    } else {
        c.conda_dist(name, version);
    }
    if let Some(m) = CONDA_BUILD_PYTHON.captures(build) {
        let python = match (m.get(1), m.get(2)) {
            (Some(major), Some(minor)) => format!("{}.{}", major.as_str(), minor.as_str()),
            _ => {
                let digits = &m[3];
                format!("{}.{}", &digits[..1], &digits[1..])
            }
        };
        c.guess(Key::Python, &python);
    }
    if name != "torch" {
        return;
    }
    if let Some(m) = CONDA_BUILD_CUDA.captures(build) {
        let (major, minor) = match (m.get(1), m.get(2)) {
            (Some(major), Some(minor)) => (major.as_str(), minor.as_str()),
            _ => m[3].split_at(m[3].len() - 1),
        };
        c.fact(Key::TorchCuda, &format!("{major}.{minor}"));
    } else if build.split('_').any(|part| part == "cpu") {
        c.fact(Key::TorchCuda, "None");
    }
}

/// pip's report of a broken requirement, both what it names installed and
/// the requirement: "torchvision 0.7.0 requires torch==1.6.0, but you have
/// torch 1.6.1 which is incompatible." (pip 20.3 on, after "pip's
/// dependency resolver does not currently take into account…"), and the
/// older "ERROR: torchvision 0.7.0 has requirement torch==1.6.0, but you'll
/// have torch 1.6.1 which is incompatible."
fn pip_conflict(line: &str, c: &mut Collector) -> bool {
    static CONFLICT: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"(?:^|ERROR: )([A-Za-z0-9][A-Za-z0-9_.-]*) (\S+) (?:requires|has requirement) (.+?), but you(?:'ll)? have ([A-Za-z0-9][A-Za-z0-9_.-]*) (\S+) which is incompatible",
        )
        .expect("the pip conflict pattern compiles")
    });
    let Some(m) = CONFLICT.captures(line) else { return false };
    c.dist(&m[1], &m[2]);
    c.dist(&m[4], &m[5]);
    c.requirement(&m[1], &m[3]);
    true
}

/// What pip printed about what is installed: "Successfully installed
/// torch-2.4.0+cu121 tensorrt-cu12-10.0.1" (each `name-version`, the name
/// itself may hold dashes) and "Requirement already satisfied: numpy in
/// /usr/lib/python3/dist-packages (1.19.5)" (the version in the last
/// parentheses, after an optional "(from …)").
fn pip_output(line: &str, c: &mut Collector) -> bool {
    static INSTALLED: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"^([A-Za-z0-9][A-Za-z0-9._-]*?)-(\d[0-9A-Za-z.+!]*)$")
            .expect("the wheel-name pattern compiles")
    });
    static SATISFIED: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"Requirement already satisfied: ([A-Za-z0-9][A-Za-z0-9._-]*)\S* in \S+(?: \(from [^)]*\))? \((\d[^)\s]*)\)")
            .expect("the already-satisfied pattern compiles")
    });
    if let Some(at) = find_in(line, "Successfully installed ") {
        let rest = &line[at + "Successfully installed ".len()..];
        for word in rest.split_whitespace().map(|w| w.trim_matches(|ch: char| ch == '`' || ch == ',')) {
            if let Some(m) = INSTALLED.captures(word) {
                c.dist(&m[1], &m[2]);
            }
        }
        return true;
    }
    if let Some(m) =
        holds(line, "Requirement already satisfied: ").then(|| SATISFIED.captures(line)).flatten()
    {
        c.dist(&m[1], &m[2]);
        // The site directory names the Python (`…/python3.10/site-packages`).
        free::sentence(line, c);
        return true;
    }
    false
}

/// The line ultralytics (YOLOv8 and later, and YOLOv5 since 2022) prints
/// when it picks a device: "Ultralytics 8.3.2 🚀 Python-3.11.4
/// torch-2.4.1+cu121 CUDA:0 (NVIDIA GeForce RTX 4090, 24217MiB)", or "CPU
/// (…)" at the end. Its `select_device` writes it
/// (https://github.com/ultralytics/ultralytics/blob/main/ultralytics/utils/torch_utils.py).
/// Later GPUs follow as "CUDA:1 (…)" on lines of their own.
fn ultralytics_banner(line: &str, c: &mut Collector) -> bool {
    static BANNER: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"\bPython-(\d+\.\d+(?:\.\d+)?)\s+torch-(\d+\.\d+(?:\.\d+)?(?:\+[0-9A-Za-z.]+)?)\s",
        )
        .expect("the ultralytics banner pattern compiles")
    });
    static DEVICE: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(r"(?:^|\s)CUDA:(\d+) \(([^,()]+), ?\d+ ?MiB\)")
            .expect("the device pattern compiles")
    });
    // Both patterns need one of two literals: most lines have neither.
    if !holds(line, "Python-") && !holds(line, "CUDA:") {
        return false;
    }
    let banner = BANNER.captures(line);
    if let Some(m) = &banner {
        c.fact(Key::Python, &m[1]);
        c.dist("torch", &m[2]);
    }
    let devices: Vec<(u32, String)> = DEVICE
        .captures_iter(line)
        .filter_map(|d| Some((d[1].parse().ok()?, d[2].trim().to_string())))
        .collect();
    if banner.is_none() && (devices.is_empty() || !line.trim_start().starts_with("CUDA:")) {
        return false;
    }
    for (index, name) in devices {
        c.gpu(index, &name, None);
    }
    true
}

/// A hand-written list's line that is nothing but a distribution and its
/// version: `onnxruntime-gpu  1.2.0`, `- onnx - 1.6.0`, `* torch 2.1.0`.
/// Each such line names an install of its own, unlike a sentence.
fn list_entry(line: &str) -> Option<(&str, &str)> {
    static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
        super::prose_regex(
            r"^\s*(?:[-*•]\s+)?([A-Za-z][A-Za-z0-9_.]*(?:-[A-Za-z][A-Za-z0-9_.]*)*)(?:\s+-\s+|\s+)v?(\d+(?:\.\d+)+(?:\+[0-9a-z.]+)?)\s*$",
        )
        .unwrap()
    });
    if line.len() > 80 || !line.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let m = ENTRY.captures(line)?;
    Some((m.get(1)?.as_str(), m.get(2)?.as_str()))
}

/// Splits "Key: value" lines of collect_env.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    // `nvidia-smi -q` pads its keys to a column.
    let k = k.trim();
    (k.len() < 48).then_some((k, v.trim()))
}

fn prose(line: &str, c: &mut Collector) -> Mode {
    c.install_extras(line);
    c.default_index_torch(line);
    c.install_command_builds(line);
    free::platform(line, c);
    free::container(line, c);
    free::gpu_mention(line, c);
    if line.starts_with("Package") && line.contains("Version") && line.split_whitespace().count() <= 4 {
        return Mode::PipList;
    }
    if line.starts_with('#') && line.contains("Name") && line.contains("Version") && line.contains("Build") {
        return Mode::CondaList;
    }
    if let Some((manager, name, version, build)) = bracketed(line) {
        c.list_rows += 1;
        if manager == "conda" {
            conda_package(c, name, version, build);
        } else {
            c.dist(name, version);
        }
        return Mode::Prose;
    }
    if let Some((name, version, build)) = conda_row(line).or_else(|| conda_plan(line)) {
        c.list_rows += 1;
        conda_package(c, name, version, Some(build));
        return Mode::Prose;
    }
    if let Some((name, version)) = pip_freeze(line) {
        c.freeze_rows += 1;
        c.install_extras_of(name, line);
        c.dist(name, version);
        return Mode::Prose;
    }
    if let Some((name, version)) = list_entry(line)
        && c.watches(name)
    {
        c.dist(name, version);
        return Mode::Prose;
    }
    if holds(line, "but you") && pip_conflict(line, c) {
        return Mode::Prose;
    }
    if pip_output(line, c) {
        return Mode::Prose;
    }
    if ultralytics_banner(line, c) {
        return Mode::Prose;
    }
    if holds(line, "Driver Version:") {
        if let Some(m) = SMI_DRIVER.captures(line) {
            c.fact(Key::Driver, &m[1]);
        }
        if let Some(m) = SMI_CUDA.captures(line) {
            c.fact(Key::DriverMaxCuda, &m[1]);
        }
        return Mode::Prose;
    }
    if let Some(m) = line.starts_with('|').then(|| SMI_ROW.captures(line)).flatten() {
        let name = m[2].trim();
        // Skip the header row ("GPU  Name  Persistence-M").
        if !name.contains("Persistence") && !name.starts_with("Name") {
            c.gpu(m[1].parse().unwrap_or(0), name, None);
        }
        return Mode::Prose;
    }
    if let Some((index, name, uuid)) = smi_l(line) {
        c.gpu(index, name, uuid);
        return Mode::Prose;
    }
    if holds(line, "NVSMI LOG") {
        c.smi_query = Some(0);
        return Mode::Prose;
    }
    if let Some(n) = c.smi_query
        && line.strip_prefix("GPU ").is_some_and(|r| r.contains(':') && smi_l(line).is_none())
    {
        c.smi_query = Some(n + 1);
        return Mode::Prose;
    }
    if let Some(m) = holds(line, "Cuda compilation tools").then(|| NVCC.captures(line)).flatten() {
        c.fact(Key::CudaToolkit, m.get(2).map_or(&m[1], |v| v.as_str()));
        return Mode::Prose;
    }
    if holds(line, "Kernel Module") && holds(line, "NVRM") {
        if let Some(v) = crate::formats::proc_driver_version(line) {
            c.fact(Key::DriverKernelModule, v.raw());
        }
        return Mode::Prose;
    }
    // An image's tag is no field, but the sentence around it may name more.
    let image = free::image(line, c);
    let field = (!image)
        .then(|| key_value(line).or_else(|| free::table_row(line)).or_else(|| free::equals(line)))
        .flatten();
    let Some((key, value)) = field else {
        free::sentence(line, c);
        return Mode::Prose;
    };
    collect_env(key, value, line, c)
}

/// A `Key: value` line: collect_env's own keys, else a hand-written field,
/// else a sentence that happens to hold a colon.
fn collect_env(key: &str, value: &str, line: &str, c: &mut Collector) -> Mode {
    let stated = !is_none_word(value);
    match key {
        "PyTorch version" if stated => {
            c.fact(Key::TorchVersion, value);
            c.dist("torch", value);
        }
        "CUDA used to build PyTorch" => c.fact(Key::TorchCuda, if stated { value } else { "None" }),
        "ROCM used to build PyTorch" if stated => c.fact(Key::TorchHip, value),
        "OS" if stated => c.fact(Key::Os, value),
        "Libc version" if stated => c.fact(Key::Glibc, value.trim_start_matches("glibc-")),
        "Python version" if stated => {
            // "3.8.5 (default, ...)"; some write "Python 3.8.5".
            if let Some(v) = value.split_whitespace().find(|w| w.starts_with(|ch: char| ch.is_ascii_digit()))
            {
                c.fact(Key::Python, v);
            }
        }
        "Python platform" if stated => {
            if let Some(arch) =
                ["x86_64", "aarch64", "ppc64le", "s390x"].into_iter().find(|a| value.contains(a))
            {
                c.fact(Key::Arch, arch);
            }
        }
        "Is CUDA available" if stated => c.fact(Key::TorchCudaAvailable, value),
        "CUDA runtime version" if stated => c.fact(Key::CudaToolkit, value),
        "Nvidia driver version" if stated => c.fact(Key::Driver, value),
        // `nvidia-smi -q`: its keys are padded to a column before the colon.
        "Driver Version" if stated && c.smi_query.is_some() => c.fact(Key::Driver, value),
        "CUDA Version" if stated && c.smi_query.is_some() => c.fact(Key::DriverMaxCuda, value),
        "Product Name" if stated && c.smi_query.is_some_and(|n| n > 0) => {
            c.gpu(c.smi_query.unwrap_or(1) - 1, value, None);
        }
        "GPU models and configuration" => {
            if stated {
                match smi_l(value) {
                    Some((index, name, uuid)) => c.gpu(index, name, uuid),
                    None => c.gpu(0, value, None),
                }
            }
            return Mode::GpuList;
        }
        "cuDNN version" => {
            if value.starts_with("Probably one of the following") {
                return Mode::CudnnCandidates;
            }
            if stated {
                c.fact(Key::Cudnn, value);
            }
        }
        _ => {
            if !free::field(key, value, c) {
                free::sentence(line, c);
            }
        }
    }
    Mode::Prose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_line_is_a_distribution_and_its_version_alone() {
        assert_eq!(list_entry("onnxruntime-gpu  1.2.0"), Some(("onnxruntime-gpu", "1.2.0")));
        assert_eq!(list_entry("onnx - 1.6.0"), Some(("onnx", "1.6.0")));
        assert_eq!(list_entry("- torch 2.1.0+cu121"), Some(("torch", "2.1.0+cu121")));
        assert_eq!(list_entry("tensorrt-8.6.1"), None, "a file name, not a list line");
        assert_eq!(list_entry("I upgraded onnx 1.6.0"), None);
        assert_eq!(list_entry("onnxruntime 1.2.0 fails"), None);
        assert_eq!(list_entry("step 12"), None);
    }

    #[test]
    fn nvidia_smi_l_lines_read_as_the_pattern_did() {
        let pattern =
            crate::import::prose_regex(r"^GPU (\d+):\s*(.+?)(?:\s*\(UUID:\s*(GPU-[0-9A-Fa-f-]+)\))?$")
                .expect("compiles");
        for line in [
            "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5e4f3c2a-1b2c-3d4e-5f60-718293a4b5c6)",
            "GPU 1: Tesla T4",
            "GPU 12:NVIDIA H100 80GB HBM3 (UUID:GPU-abc)",
            "GPU 0: (UUID: GPU-abc)",
            "GPU 0: Name (UUID: not-a-uuid)",
            "GPU 0: A (UUID: GPU-1) (UUID: GPU-2)",
            "GPU 0: A (UUID: GPU-1) trailing",
            "GPU 99999999999: Big",
            "GPU x: No",
            "GPU 0:",
            "GPU : A",
            "GPU 00000000:00:06.0",
        ] {
            let expected = pattern.captures(line).map(|m| {
                (m[1].parse().unwrap_or(0), m.get(2).map_or("", |n| n.as_str()), m.get(3).map(|u| u.as_str()))
            });
            let expected = expected.filter(|(_, name, _)| !name.starts_with("00:"));
            assert_eq!(smi_l(line), expected, "{line}");
        }
    }

    #[test]
    fn find_in_finds_what_str_find_finds() {
        let lines = [
            "",
            "=",
            "==",
            "a==b",
            "a=b==c",
            "===",
            "x Successfully installed y",
            "SSuccessfully installed ",
            "é==ü",
            "ab",
        ];
        for line in lines {
            for needle in ["==", "Successfully installed ", "b", "ab", "abc", "ü"] {
                assert_eq!(find_in(line, needle), line.find(needle), "{line:?} {needle:?}");
            }
        }
        assert_eq!(find_in("abc", ""), None);
    }

    #[test]
    fn a_conda_plan_line_names_the_package_installed() {
        let plan = [
            (
                "  pytorch-nightly    pytorch/linux-64::pytorch-nightly-1.2.0.dev20190805+cpu-py3.7_cpu_0",
                Some(("pytorch-nightly", "1.2.0.dev20190805+cpu", "py3.7_cpu_0")),
            ),
            (
                "  pytorch            pytorch/linux-64::pytorch-1.9.0-py3.8_cpu_0",
                Some(("pytorch", "1.9.0", "py3.8_cpu_0")),
            ),
            (
                "  pytorch   pytorch::pytorch-1.8.1-py3.8_cuda10.2_0 --> pkgs/main::pytorch-1.9.0-cpu_py38h4bbe6ce_0",
                Some(("pytorch", "1.9.0", "cpu_py38h4bbe6ce_0")),
            ),
            // Another package's spec, a prose line with "::", no version.
            ("  torchvision        pytorch/linux-64::pytorch-1.9.0-py3.8_cpu_0", None),
            ("see std::vector-of-things", None),
            ("  cpuonly            pytorch/noarch::cpuonly-x-0", None),
        ];
        for (line, expected) in plan {
            assert_eq!(conda_plan(line), expected, "{line}");
        }
    }
}
