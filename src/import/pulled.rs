//! What a package's own requirements installed that the paste does not
//! list: the CPU package onnxruntime that rembg, faster-whisper and the like
//! require (the matrix's `onnxruntime-required-by` table), and the
//! onnxruntime-gpu an extra of theirs adds (`pip install "rembg[gpu]"`).
//! A ticket names the package it installed, not what pip pulled in with it.

use std::sync::LazyLock;

use regex::Regex;

use super::lines::holds;
use super::{Collector, KeptDist, Key};
use crate::matrix::Matrix;
use crate::snapshot::{PastedFact, normalize_name};
use crate::version::Ver;

/// The matrix table of packages that require the CPU onnxruntime.
const TABLE: &str = "onnxruntime-required-by";

/// `name==version` lines beyond this many are an environment's freeze, not
/// an app's requirements file: they list what is installed.
const FREEZE_IS_A_LIST: usize = 8;

/// Whether a word runs pip, before its `install`: `pip`, `pip3`, `pip3.12`,
/// `pip.exe`, a notebook's `!pip` or `%pip`, or `-mpip`.
fn runs_pip(word: &str) -> bool {
    let word = word.trim_start_matches(['`', '!', '%']);
    let word = word.strip_suffix(".exe").unwrap_or(word);
    let Some(rest) = word.strip_prefix("pip").or_else(|| word.strip_prefix("-mpip")) else {
        return false;
    };
    let mut parts = rest.split('.');
    let major = parts.next().unwrap_or_default();
    let minor = parts.next();
    parts.next().is_none()
        && major.bytes().all(|b| b.is_ascii_digit())
        && minor.is_none_or(|m| !major.is_empty() && !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the words before an install command leave it opening the line:
/// a prompt, `RUN`, `sudo`, a list marker or the Python that runs pip may
/// come before it; a sentence ("I did not pip install torch") may not.
fn opens_command(before: &[&str]) -> bool {
    before.iter().all(|w| {
        let w = w.trim_matches('`');
        w.is_empty()
            || w.ends_with(['>', '$', '#', '.'])
            || (w.starts_with('(') && w.ends_with(')'))
            || ["RUN", "sudo", "-", "*", "-m", "uv", "py", "python", "python3"].contains(&w)
            || w.to_ascii_lowercase().ends_with("python.exe")
    })
}

/// Whether a conda pin's version part names a version (`=1.12`, not `=*`).
fn versioned(version: &str) -> bool {
    version.starts_with(|ch: char| ch.is_ascii_digit())
}

/// The most distributions whose extras are remembered, and extras of each.
const MAX_EXTRAS: usize = 256;

impl Collector {
    /// Reads the extras an install command names (`pip install
    /// "rembg[gpu,cli]==2.0.55"`, `uv pip install rembg[gpu]`).
    pub(crate) fn install_extras(&mut self, line: &str) {
        static EXTRAS: LazyLock<Regex> = LazyLock::new(|| {
            super::prose_regex(r#"(?:^|[\s"'`(])([A-Za-z][A-Za-z0-9_.-]*)\[([A-Za-z0-9_,. -]+)\]"#).unwrap()
        });
        if !line.contains('[') || !line.contains("install") {
            return;
        }
        for m in EXTRAS.captures_iter(line) {
            self.extras_named(&m[1], &m[2]);
        }
    }

    /// Notes a pip command that installs torch from the default index:
    /// `pip install torch==1.7.1 torchvision`, without `--index-url`,
    /// `--extra-index-url` or `-f` and without a local version (`+cu118`).
    pub(crate) fn default_index_torch(&mut self, line: &str) {
        if self.default_index_torch.is_some() || !holds(line, "install") || !holds(line, "torch") {
            return;
        }
        // One command: up to the shell's next one.
        let command = line.split(['&', ';', '|']).find(|part| part.contains("install")).unwrap_or(line);
        let words: Vec<&str> = command.split_whitespace().collect();
        let Some(at) = words.windows(2).position(|w| runs_pip(w[0]) && w[1] == "install") else {
            return;
        };
        if !opens_command(&words[..at]) {
            return;
        }
        let args = &words[at + 2..];
        let index_option = |w: &&str| {
            ["-f", "-i", "--find-links", "--index-url", "--extra-index-url", "--index", "--extra-index"]
                .iter()
                .any(|o| w == o || w.starts_with(&format!("{o}=")))
        };
        let torch = |w: &&str| {
            let w = w.trim_matches(['"', '\'', '`']);
            let name = w.split(['=', '<', '>', '!', '~', '[', ';']).next().unwrap_or(w);
            name.eq_ignore_ascii_case("torch") && !w.contains('+')
        };
        if args.iter().any(torch) && !args.iter().any(index_option) {
            self.default_index_torch = Some(self.lines);
        }
    }

    /// What an install command says of the builds it installs: torch's
    /// own index (`--index-url https://download.pytorch.org/whl/cu121`:
    /// CUDA 12.1; `/whl/cpu`: none), and a conda command's versions
    /// (`conda install pytorch=1.12 cudatoolkit=11.3 -c pytorch`, with
    /// `cpuonly` for the CPU build).
    pub(crate) fn install_command_builds(&mut self, line: &str) {
        if !holds(line, "install") {
            return;
        }
        static INDEX: LazyLock<Regex> = LazyLock::new(|| {
            super::prose_regex(r"download\.pytorch\.org/whl/(?:nightly/|test/)?(cu\d{2,3}|cpu)\b").unwrap()
        });
        if !self.has_guess(&Key::TorchCuda)
            && holds(line, "download.pytorch.org/whl/")
            && holds(line, "torch")
            && let Some(m) = INDEX.captures(line)
        {
            let cuda = super::free::cuda_tag(&m[1]).unwrap_or_else(|| "None".into());
            self.guess(Key::TorchCuda, &cuda);
            self.torch_unversioned = true;
        }
        self.conda_install(line);
    }

    /// `conda install pytorch==1.12.1 torchvision cudatoolkit=11.3 -c
    /// pytorch` (mamba's alike): each package pinned, as a statement of
    /// what was installed.
    fn conda_install(&mut self, line: &str) {
        if !holds(line, "conda install") && !holds(line, "mamba install") {
            return;
        }
        let command = line.split(['&', ';', '|']).find(|part| part.contains("install")).unwrap_or(line);
        let words: Vec<&str> = command.split_whitespace().map(|w| w.trim_matches(['`', '"', '\''])).collect();
        let Some(at) = words.windows(2).position(|w| {
            ["conda", "mamba", "micromamba"].contains(&w[0].trim_start_matches('!')) && w[1] == "install"
        }) else {
            return;
        };
        if !opens_command(&words[..at]) {
            return;
        }
        let mut args = words[at + 2..].iter();
        while let Some(arg) = args.next() {
            if arg.starts_with('-') {
                // The options that take a value: the channel, the environment.
                if ["-c", "--channel", "-n", "--name", "-p", "--prefix"].contains(arg) {
                    args.next();
                }
                continue;
            }
            let (name, rest) = arg.split_once('=').unwrap_or((arg, ""));
            // `=1.12.1`, `==1.12.1`, `=11.3.*`, `=1.12.1=py3.9_cuda11.3_0`: the version.
            let version = rest.trim_start_matches('=').split('=').next().unwrap_or_default();
            let version = version.trim_end_matches(['*', '.']);
            match name.to_ascii_lowercase().as_str() {
                "cpuonly" => {
                    self.guess(Key::TorchCuda, "None");
                    self.torch_unversioned = true;
                }
                "pytorch" | "pytorch-gpu" if !versioned(version) => self.torch_unversioned = true,
                _ if !versioned(version) => {}
                "cudatoolkit" | "pytorch-cuda" | "cuda-version" => self.guess(Key::CondaCuda, version),
                "pytorch" | "pytorch-gpu" => self.guess(Key::Dist("torch".into()), version),
                other => self.guess(Key::Dist(normalize_name(other)), version),
            }
        }
    }

    /// The default index's torch for Windows and macOS is the CPU build
    /// (https://pytorch.org/get-started/locally/): where the paste puts
    /// such a command on either and states no build of torch, torch has
    /// no CUDA.
    pub(crate) fn settle_default_index_torch(&mut self) {
        let Some(line) = self.default_index_torch else { return };
        let os = self
            .values
            .get(&Key::Os)
            .map(|(v, _)| v.clone())
            .or_else(|| self.guesses.iter().find(|(k, _, _)| *k == Key::Os).map(|(_, v, _)| v.clone()))
            .unwrap_or_default()
            .to_ascii_lowercase();
        let cpu_only = ["windows", "macos", "mac os", "darwin"].iter().any(|w| os.contains(w));
        let torch_local = self.values.get(&Key::Dist("torch".into())).is_some_and(|(v, _)| v.contains('+'));
        if !cpu_only
            || torch_local
            || self.values.contains_key(&Key::TorchCuda)
            || self.has_guess(&Key::TorchCuda)
        {
            return;
        }
        let here = std::mem::replace(&mut self.lines, line);
        self.guess(Key::TorchCuda, "None");
        self.lines = here;
        self.torch_unversioned = true;
    }

    /// The extras of a requirement line (`rembg[gpu]==2.0.55`) whose
    /// distribution is `name`.
    pub(crate) fn install_extras_of(&mut self, name: &str, line: &str) {
        let Some(rest) = line.trim_start().strip_prefix(name) else { return };
        if let Some(extras) = rest.strip_prefix('[').and_then(|r| r.split_once(']')).map(|(e, _)| e) {
            self.extras_named(name, extras);
        }
    }

    fn extras_named(&mut self, dist: &str, extras: &str) {
        let lines = self.lines;
        if self.extras.len() >= MAX_EXTRAS && !self.extras.contains_key(&normalize_name(dist)) {
            return;
        }
        let list = self.extras.entry(normalize_name(dist)).or_default();
        for extra in extras.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if list.len() < MAX_EXTRAS && !list.iter().any(|(e, _)| e.eq_ignore_ascii_case(extra)) {
                list.push((extra.to_ascii_lowercase(), lines));
            }
        }
    }

    /// Where the paste lists no installed packages and names no onnxruntime,
    /// but names a release of a package that requires it: onnxruntime is
    /// installed, "required by" that release; and where an extra of that
    /// package adds onnxruntime-gpu, so is onnxruntime-gpu. A package list
    /// that shows the package without onnxruntime is what is installed
    /// (someone removed it), so nothing is added beside one.
    pub(crate) fn settle_pulled_onnxruntime(&mut self, matrix: &Matrix) {
        if self.list_rows > 0 || self.freeze_rows > FREEZE_IS_A_LIST || self.dists.contains_key("onnxruntime")
        {
            return;
        }
        let Some(table) = matrix.tables.get(TABLE) else { return };
        for row in &table.rows {
            let Some(package) = row.values.get("package") else { continue };
            let Some(installed) = self.dists.get(package.as_str()) else { continue };
            if !row.spec.contains(&installed.version) {
                continue;
            }
            let puller = format!("{package} {}", installed.version);
            let line = self.values.get(&Key::Dist(package.clone())).map_or(self.lines, |(_, l)| *l);
            let gpu_extras = row.values.get("gpu_extras").map_or("", String::as_str);
            let gpu_extra = self.extras.get(package.as_str()).and_then(|named| {
                named
                    .iter()
                    .find(|(e, _)| gpu_extras.split([' ', ',']).any(|g| g.eq_ignore_ascii_case(e)))
                    .cloned()
            });
            self.pulled("onnxruntime", format!("(required by {puller})"), line);
            if let Some((extra, at)) = gpu_extra
                && !self.dists.contains_key("onnxruntime-gpu")
            {
                self.pulled("onnxruntime-gpu", format!("(required by {package}[{extra}])"), at);
            }
            return;
        }
    }

    /// Records a distribution pip installed as a requirement: its "version"
    /// says by what, and no version clause accepts it.
    fn pulled(&mut self, name: &str, why: String, line: usize) {
        self.facts.push(PastedFact { fact: name.into(), value: why.clone(), line, guessed: true });
        self.values.insert(Key::Dist(name.into()), (why.clone(), line));
        self.kept.keep(name);
        self.dists.insert(name.into(), KeptDist { version: Ver::new(why.as_str()), stated: vec![why] });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_are_read_from_install_commands_only() {
        let mut c = Collector::default();
        c.install_extras(r#"pip install "rembg[gpu,cli]==2.0.55" onnxruntime-gpu"#);
        c.install_extras("the docs say rembg[gpu] is for GPUs");
        c.install_extras("uv pip install Faster_Whisper[ Extra ]");
        let named: Vec<&str> = c.extras["rembg"].iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(named, ["gpu", "cli"]);
        assert_eq!(c.extras["faster-whisper"][0].0, "extra");
        assert_eq!(c.extras.len(), 2);
    }

    #[test]
    fn pip_is_named_in_any_of_its_spellings() {
        for word in
            ["pip", "pip3", "pip3.13", "pip2.7", "`pip", "!pip3", "%pip", "pip.exe", "pip3.11.exe", "-mpip"]
        {
            assert!(runs_pip(word), "{word}");
        }
        for word in ["pipx", "pip3.", "pip.3", "pip3.1.2", "pipenv", "spip", "pip3.x", "-m", "uv"] {
            assert!(!runs_pip(word), "{word}");
        }
    }

    #[test]
    fn torch_from_the_default_index_is_the_cpu_build_on_windows_only() {
        let torch_cuda = |os: &str, lines: &[&str]| {
            let mut c = Collector::default();
            c.fact(Key::Os, os);
            for line in lines {
                c.default_index_torch(line);
            }
            c.settle_default_index_torch();
            c.guesses.iter().find(|(k, _, _)| *k == Key::TorchCuda).map(|(_, v, _)| v.clone())
        };
        let none = Some("None".to_string());
        assert_eq!(torch_cuda("Windows 10", &["pip install torch==1.7.1 torchvision==0.8.2"]), none);
        assert_eq!(torch_cuda("Windows 11", &["python -m pip install \"torch>=2\" && python app.py"]), none);
        assert_eq!(torch_cuda("macOS 14", &["!pip install torch"]), none);
        assert_eq!(torch_cuda("Windows 10", &["1. `pip install torch`"]), none);
        assert_eq!(torch_cuda("Windows 10", &[r"(venv) C:\app> py -m pip install -U torch"]), none);
        // An index option, a local version, another package, another OS.
        for (os, line) in [
            (
                "Windows 10",
                "pip install torch torchvision --index-url https://download.pytorch.org/whl/cu121",
            ),
            (
                "Windows 10",
                "pip3 install torch==1.5.0+cu92 -f https://download.pytorch.org/whl/torch_stable.html",
            ),
            ("Windows 10", "pip install torch-tensorrt"),
            ("Windows 10", "I did not pip install torch myself"),
            ("Ubuntu 22.04", "pip install torch==2.1.0"),
        ] {
            assert_eq!(torch_cuda(os, &[line]), None, "{os}: {line}");
        }
    }
}
