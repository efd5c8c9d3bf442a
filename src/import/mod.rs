//! Snapshots from text people paste into support tickets.
//!
//! A ticket mixes PyTorch's `collect_env` (of any era since 2018), `pip
//! list` / `pip freeze` / `conda list`, the `nvidia-smi` banner or `-L`,
//! `nvcc --version`, `/proc/driver/nvidia/version`, tracebacks, the doctor's
//! own reports, and prose, quoted and fenced, with Windows line endings. The
//! importer reads it line by line, once (linear in the size of the paste),
//! recognises the lines it knows, and builds the same [`Snapshot`] a probe
//! would have: every fact remembers the line it came from, anything not
//! stated stays "not evaluated", and a fact stated twice with different
//! values is reported as a conflict rather than silently picked. What it
//! keeps is bounded whatever the paste's length: a package list of a
//! million lines keeps the distributions the matrix watches and the first
//! few thousand others, and counts the rest (see `kept`).

mod assemble;
mod free;
mod kept;
mod lines;
mod pulled;
mod repl;
mod split;

use std::collections::{BTreeMap, BTreeSet};

use crate::matrix::{Matrix, Platform};
use crate::snapshot::vocab::normalize_name_into;
use crate::snapshot::{PastedFact, PastedLine, Snapshot, normalize_name};
use crate::version::Ver;

/// The longest line we look at; the rest of a longer one is ignored.
const MAX_LINE: usize = 4096;
/// Error lines kept in the snapshot.
const MAX_ERROR_LINES: usize = 200;
/// Distinct lines remembered as read, which bounds the memory it takes.
const MAX_REMEMBERED_LINES: usize = 200_000;
/// GPUs kept; a machine has a few, a list of more is not one machine.
const MAX_GPUS: usize = 256;
/// Library paths kept (collect_env's cuDNN candidates).
const MAX_LIBRARIES: usize = 256;
/// Guessed versions of distributions the matrix does not watch.
const MAX_GUESSED_OTHERS: usize = 256;
/// Distributions the matrix does not watch whose requirements pip quoted
/// are kept with them; every requirement is judged once per planned fix.
const MAX_REQUIRING_OTHERS: usize = 256;

/// Builds a snapshot from pasted text. A doctor report (JSON, or Markdown
/// with its snapshot block) is taken as it is.
pub fn import(text: &str, matrix: &Matrix) -> Snapshot {
    // The doctor's own report (JSON, or Markdown with its snapshot block).
    if let Ok(s) = Snapshot::from_saved(text) {
        return s;
    }
    import_lines(text.split('\n').enumerate(), matrix)
}

/// Reads numbered lines (0-based), in the order given: a part of a paste
/// reads the shared lines before its own, so what it states wins.
fn import_lines<'t>(numbered: impl Iterator<Item = (usize, &'t str)>, matrix: &Matrix) -> Snapshot {
    let set = matrix.signature_set();
    let mut c = Collector { kept: kept::Kept::new(matrix), ..Collector::default() };
    let mut mode = lines::Mode::Prose;
    // Lines read outside any block: reading one again states nothing new
    // (a fact is judged at its last distinct statement), and logs repeat
    // lines a lot.
    let mut read_once: std::collections::HashSet<&str> = std::collections::HashSet::new();
    // An expression at an interpreter's prompt, whose value the next line shows.
    let mut asked: Option<(Vec<repl::Asked>, &str)> = None;
    for (i, raw) in numbered {
        c.lines = i + 1;
        let line = lines::clean(raw, MAX_LINE);
        if line.is_empty() {
            if !matches!(mode, lines::Mode::Heading(_)) {
                mode = lines::Mode::Prose;
            }
            continue;
        }
        if let Some((exprs, prompt)) = asked.take()
            && let Some(values) = repl::values(line, &exprs)
        {
            repl::record(&exprs, &values, &mut c);
            // The expression and its value, read as one statement
            // (`torch.cuda.is_available() -> False`).
            let said = format!("{prompt} -> {line}");
            if c.error_lines.len() < MAX_ERROR_LINES && set.is_match(&said) {
                c.error_lines.push(PastedLine { line: i + 1, text: said, near: Vec::new() });
            }
        }
        // Before cleaning: `>>>` reads as Markdown quoting.
        let raw = raw.trim();
        if (raw.starts_with(">>>") || raw.starts_with("In [")) && raw.len() <= MAX_LINE {
            asked = repl::prompt(raw).map(|exprs| (exprs, raw));
        }
        let outside = mode == lines::Mode::Prose;
        if outside && read_once.contains(line) {
            continue;
        }
        if c.error_lines.len() < MAX_ERROR_LINES && set.is_match(line) {
            c.error_lines.push(PastedLine { line: i + 1, text: line.to_string(), near: Vec::new() });
        }
        if c.frames.len() < MAX_FRAMES
            && let Some(package) = frame_package(line)
        {
            c.frames.push((i + 1, package.to_string()));
        } else if c.tree_frames.len() < MAX_FRAMES
            && let Some((package, folder)) = tree_frame(line)
        {
            c.tree_frames.push((i + 1, package.to_string(), folder.to_string()));
        }
        mode = lines::read(line, mode, &mut c);
        if outside && mode == lines::Mode::Prose && read_once.len() < MAX_REMEMBERED_LINES {
            read_once.insert(line);
        }
    }
    c.place_error_lines();
    c.settle_source_trees();
    c.facts_from_platforms(matrix);
    c.settle_image_l4t();
    c.glibc_from_os(matrix);
    c.settle_any_onnxruntime();
    c.settle_default_index_torch();
    c.settle_guesses();
    c.settle_both_onnxruntimes();
    c.settle_pulled_onnxruntime(matrix);
    c.into_snapshot(matrix)
}

/// A pattern for pasted text, compiled with ASCII word boundaries (see
/// [`crate::matrix::ascii_word_boundaries`]): with Unicode ones, regex
/// leaves its DFA for a backtracker on every line that holds a non-ASCII
/// character, and an issue template's emoji make a long paste slow.
pub(crate) fn prose_regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&crate::matrix::ascii_word_boundaries(pattern).unwrap_or_else(|| pattern.to_string()))
}

/// The most traceback frames remembered of one paste.
const MAX_FRAMES: usize = 10_000;

/// How many lines from an error line a traceback frame may be and still be
/// its traceback's (NumPy prints its message before the frames).
const FRAME_REACH: usize = 25;

/// The file a traceback frame names (`File "/x/onnx/__init__.py", line 6`),
/// to its closing quote or, on a line cut short, to the end.
fn frame_file(line: &str) -> Option<&str> {
    let path = line.trim_start().strip_prefix("File \"")?;
    Some(&path[..path.find('"').unwrap_or(path.len())])
}

/// The package a traceback frame's file is in: the directory under
/// `site-packages` or `dist-packages` (`File ".../site-packages/onnx/__init__.py"`).
fn frame_package(line: &str) -> Option<&str> {
    let path = frame_file(line)?;
    let at = ["site-packages", "dist-packages"].iter().find_map(|d| path.find(d).map(|i| i + d.len()))?;
    let rest = path[at..].strip_prefix(['/', '\\'])?;
    let name = &rest[..rest.find(['/', '\\', '"']).unwrap_or(rest.len())];
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(name)
}

/// A traceback frame in a package's `__init__.py` that no site directory
/// holds (`File "D:\code\Paddle2ONNX\paddle2onnx\__init__.py"`): the
/// package and its folder. A source checkout looks like this, and so does
/// an editable install.
fn tree_frame(line: &str) -> Option<(&str, &str)> {
    let path = frame_file(line)?;
    let folder = path.strip_suffix("__init__.py")?.strip_suffix(['/', '\\'])?;
    // Installed packages, and the standard library's own folder.
    let installed =
        ["site-packages", "dist-packages", ".egg", "<frozen", "/lib/python", "\\lib\\", "\\Lib\\"];
    if installed.iter().any(|d| folder.contains(d)) {
        return None;
    }
    let name = &folder[folder.rfind(['/', '\\']).map_or(0, |i| i + 1)..];
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, folder))
}

impl Collector {
    /// A package imported from a folder outside the site directories whose
    /// own submodule is then missing ("No module named 'paddle2onnx.version'",
    /// "No module named 'torch._C'"): the folder is a source tree whose
    /// built files are not there, and it shadows the installed package.
    fn settle_source_trees(&mut self) {
        for e in &self.error_lines {
            let Some(at) = e.text.find("No module named '") else { continue };
            let named = &e.text[at + "No module named '".len()..];
            let Some((package, _)) = named.split_once('.') else { continue };
            let frame = self
                .tree_frames
                .iter()
                .rev()
                .find(|(l, p, _)| *p == package && l.abs_diff(e.line) <= FRAME_REACH);
            if let Some((_, p, folder)) = frame
                && !self.shadowed.iter().any(|(q, _)| q == p)
            {
                self.shadowed.push((p.clone(), folder.clone()));
            }
        }
    }

    /// Each error line learns the packages of the traceback frames near it.
    fn place_error_lines(&mut self) {
        for e in &mut self.error_lines {
            let near = self.frames.iter().filter(|(l, _)| l.abs_diff(e.line) <= FRAME_REACH).map(|(_, p)| p);
            for p in near {
                if !e.near.contains(p) {
                    e.near.push(p.clone());
                }
            }
        }
    }
}

/// One of several environments a paste describes apart.
pub(crate) struct Environment {
    /// The paste's own heading ("Before", "Machine A").
    pub label: String,
    /// The lines under that heading, 1-based and inclusive.
    pub lines: (usize, usize),
    pub snapshot: Snapshot,
}

/// The environments of a paste whose headings set several apart
/// ("Before:" / "After:", "Machine A" / "Machine B"), each stating facts
/// of its own; empty when the paste is one environment.
pub(crate) fn import_environments(text: &str, matrix: &Matrix) -> Vec<Environment> {
    let envs: Vec<Environment> = split::split(text)
        .into_iter()
        .map(|p| {
            let snapshot = import_lines(p.order.into_iter(), matrix);
            Environment { label: p.label, lines: p.lines, snapshot }
        })
        .collect();
    let states_its_own = |e: &Environment| {
        e.snapshot
            .pasted
            .as_ref()
            .is_some_and(|p| p.facts.iter().any(|f| (e.lines.0..=e.lines.1).contains(&f.line)))
    };
    if envs.iter().all(states_its_own) { envs } else { Vec::new() }
}

/// A fact a paste can state. `Collector::into_snapshot` matches on every
/// key, so a key that is recorded but never read does not compile.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Key {
    Os,
    Arch,
    Glibc,
    /// A Jetson's L4T release: the machine's, or its container image's.
    L4t,
    /// The host's, where the paste also names an image's (`ImageL4t`).
    HostL4t,
    /// The L4T release an image's tag names (`l4t-ml:r35.4.1`).
    ImageL4t,
    /// The container engine the paste runs in ("docker").
    Container,
    Python,
    /// collect_env's "PyTorch version".
    TorchVersion,
    /// The CUDA torch was built with ("CUDA used to build PyTorch", a conda build string).
    TorchCuda,
    TorchHip,
    TorchCudaAvailable,
    Driver,
    /// The highest CUDA the driver supports (nvidia-smi's "CUDA Version").
    DriverMaxCuda,
    DriverKernelModule,
    CudaToolkit,
    /// The machine's cuDNN (collect_env's "cuDNN version").
    Cudnn,
    /// conda's `pytorch-cuda` / `cudatoolkit`: the CUDA of a conda torch.
    CondaCuda,
    GpuName(u32),
    /// An installed distribution's version.
    Dist(String),
}

impl Key {
    /// The name reports show for the fact.
    pub(crate) fn name(&self) -> String {
        match self {
            Self::Os => "os".into(),
            Self::Arch => "arch".into(),
            Self::Glibc => "glibc".into(),
            Self::L4t => "l4t".into(),
            Self::HostL4t => "host.l4t".into(),
            Self::ImageL4t => "image.l4t".into(),
            Self::Container => "container".into(),
            Self::Python => "python".into(),
            Self::TorchVersion => "torch.version".into(),
            Self::TorchCuda => "torch.cuda".into(),
            Self::TorchHip => "torch.hip".into(),
            Self::TorchCudaAvailable => "torch.cuda_available".into(),
            Self::Driver => "driver".into(),
            Self::DriverMaxCuda => "driver.max_cuda".into(),
            Self::DriverKernelModule => "driver.kernel_module".into(),
            Self::CudaToolkit => "cuda.toolkit".into(),
            Self::Cudnn => "cudnn".into(),
            Self::CondaCuda => "conda.cuda".into(),
            Self::GpuName(i) => format!("gpu.{i}.name"),
            Self::Dist(name) => name.clone(),
        }
    }
}

/// The most distinct values of one fact a conflict keeps; beyond them a
/// paste is not a ticket but a list, and counting is enough.
const MAX_CONFLICTING: usize = 16;

/// A distribution kept: its last version stated, and each distinct text stated
/// for it (a few), so that reading a line again costs one look-up and no
/// allocation.
struct KeptDist {
    version: Ver,
    stated: Vec<String>,
}

/// Facts as they are read; a fact stated twice is judged at its last
/// distinct value (a report states the machine as it is now last).
#[derive(Default)]
pub(crate) struct Collector {
    pub lines: usize,
    facts: Vec<PastedFact>,
    values: BTreeMap<Key, (String, usize)>,
    conflicts: BTreeMap<Key, Vec<(String, usize)>>,
    /// The distributions kept (see [`kept`]), by normalised name.
    dists: BTreeMap<String, KeptDist>,
    /// Which distributions to keep, and how many were left out.
    kept: kept::Kept,
    /// Reused to normalise each distribution name read.
    name_buf: String,
    gpus: BTreeMap<u32, (String, Option<String>)>,
    libraries: Vec<(String, usize)>,
    error_lines: Vec<PastedLine>,
    /// Traceback frames in an installed package: (line, the package's directory).
    frames: Vec<(usize, String)>,
    /// Traceback frames of a package's `__init__.py` outside any site
    /// directory: (line, the package, its folder).
    tree_frames: Vec<(usize, String, String)>,
    /// Packages a traceback imported from such a folder that lacks the
    /// package's own submodule (a source checkout): (package, folder).
    shadowed: Vec<(String, String)>,
    /// Facts read from sentences, paths and the like: (key, value, line),
    /// the first per key; used only where nothing structured stated them.
    guesses: Vec<(Key, String, usize)>,
    /// The keys of `guesses`, and how many name unwatched distributions.
    guessed: BTreeSet<Key>,
    guessed_others: usize,
    /// Platform releases named (an NGC image, a JetPack or L4T release):
    /// (platform, release, whether the image is the PyTorch one, line).
    platforms: Vec<(Platform, String, bool, usize)>,
    /// Distributions a `conda list` line (or collect_env's `[conda]`) named.
    from_conda: std::collections::BTreeSet<String>,
    /// torch is installed even where no line gives its version: a conda
    /// package that exists only beside its CPU build was listed
    /// (`pytorch-mutex … cpu`, `cpuonly`, `_pytorch_select … cpu_0`), or
    /// an install command named its build.
    pub(crate) torch_unversioned: bool,
    /// Requirements pip said a distribution declares ("requires torch==1.6.0").
    requires: BTreeMap<String, Vec<String>>,
    /// How many of those the matrix does not watch.
    requiring_others: usize,
    /// The line that says both onnxruntime and onnxruntime-gpu are installed.
    both_onnxruntimes: Option<usize>,
    /// The first line whose pip command installs torch from the default
    /// index (no index option, no local version).
    default_index_torch: Option<usize>,
    /// A template field gave onnxruntime's release without its package:
    /// (version, line).
    any_onnxruntime: Option<(String, usize)>,
    /// Inside `nvidia-smi -q` (after its `NVSMI LOG` banner): how many GPU
    /// sections (`GPU 00000000:00:06.0`) have begun.
    pub smi_query: Option<u32>,
    /// Rows of a package list (`pip list`, `conda list`, collect_env's
    /// `[pip3]`) read, and lines of `pip freeze` shape (a requirements
    /// file has them too): whether the paste lists what is installed.
    pub list_rows: usize,
    pub freeze_rows: usize,
    /// The extras an install command named per distribution
    /// (`pip install "rembg[gpu,cli]"`): (extra, line).
    extras: BTreeMap<String, Vec<(String, usize)>>,
    /// The distribution a field's heading names ("**Rembg version:**"),
    /// for the value on the lines after it.
    pub heading_dist: String,
}

impl Collector {
    /// Records `key = value` from the current line.
    pub(crate) fn fact(&mut self, key: Key, value: &str) {
        let value = value.trim();
        if value.is_empty() || !plausible(&key, value) {
            return;
        }
        let line = self.lines;
        match self.values.get(&key) {
            None => {
                self.facts.push(PastedFact { fact: key.name(), value: value.into(), line, guessed: false });
                self.values.insert(key, (value.into(), line));
            }
            // A value already recorded as it is written: nothing to compare.
            Some((first, _)) if first == value => {}
            Some(_)
                if self
                    .conflicts
                    .get(&key)
                    .is_some_and(|e| e.len() >= MAX_CONFLICTING || e.iter().any(|(v, _)| v == value)) => {}
            Some((first, first_line)) if !same_value(first, value) => {
                let first = (first.clone(), *first_line);
                let entry = self.conflicts.entry(key.clone()).or_insert_with(|| vec![first]);
                if entry.len() < MAX_CONFLICTING && !entry.iter().any(|(v, _)| same_value(v, value)) {
                    self.facts.push(PastedFact {
                        fact: key.name(),
                        value: value.into(),
                        line,
                        guessed: false,
                    });
                    entry.push((value.into(), line));
                }
                self.values.insert(key, (value.into(), line));
            }
            Some(_) => {}
        }
    }

    /// Records an installed distribution, if it is one to keep.
    /// Whether the matrix watches a distribution of this name.
    pub(crate) fn watches(&self, name: &str) -> bool {
        self.kept.watches(&normalize_name(name))
    }

    pub(crate) fn dist(&mut self, name: &str, version: &str) {
        let mut buf = std::mem::take(&mut self.name_buf);
        normalize_name_into(name, &mut buf);
        self.normalized_dist(&buf, version.trim());
        self.name_buf = buf;
    }

    fn normalized_dist(&mut self, name: &str, version: &str) {
        if name.is_empty() {
            return;
        }
        match self.dists.get(name) {
            // A long paste repeats its lines: a text already read for this
            // distribution states nothing new.
            Some(d) if d.stated.len() >= MAX_CONFLICTING || d.stated.iter().any(|v| v == version) => return,
            Some(_) => {}
            // Left out without reading its version: a long list costs no
            // allocation per line past what is kept.
            None if !self.kept.has_room_for(name) => return self.kept.leave_out(name, self.lines),
            None => {}
        }
        let v = Ver::new(version);
        if v.parsed().is_none() {
            return;
        }
        self.fact(Key::Dist(name.to_string()), version);
        match self.dists.get_mut(name) {
            Some(d) => {
                d.stated.push(version.to_string());
                d.version = v;
            }
            None => {
                self.kept.keep(name);
                self.dists
                    .insert(name.to_string(), KeptDist { version: v, stated: vec![version.to_string()] });
            }
        }
    }

    /// A field gave a release of whichever onnxruntime package is installed.
    pub(crate) fn any_onnxruntime(&mut self, version: &str) {
        self.any_onnxruntime.get_or_insert((version.to_string(), self.lines));
    }

    /// "ONNX Runtime Version: 1.19.2" beside "pip install
    /// onnxruntime-gpu==1.19.2": the release the field gave is of the
    /// package the sentence installed, not of the CPU package as well.
    fn settle_any_onnxruntime(&mut self) {
        let Some((version, line)) = self.any_onnxruntime.take() else { return };
        let installed = self.guesses.iter().find_map(|(key, v, _)| match key {
            Key::Dist(name) if name.starts_with("onnxruntime-") && same_value(v, &version) => {
                Some(name.clone())
            }
            _ => None,
        });
        let Some(name) = installed else { return };
        let key = Key::Dist("onnxruntime".into());
        let listed = self.dists.get("onnxruntime").map(|d| d.stated.len());
        if listed != Some(1) || self.conflicts.contains_key(&key) || self.dists.contains_key(&name) {
            return;
        }
        self.dists.remove("onnxruntime");
        self.values.remove(&key);
        self.facts.retain(|f| !(f.fact == "onnxruntime" && f.line == line));
        let here = std::mem::replace(&mut self.lines, line);
        self.dist(&name, &version);
        self.lines = here;
    }

    /// A sentence says onnxruntime and onnxruntime-gpu are both installed.
    pub(crate) fn both_onnxruntimes(&mut self) {
        self.both_onnxruntimes.get_or_insert(self.lines);
    }

    /// Where a sentence says both onnxruntimes are installed and the paste
    /// versions one of them: the other, at the same version, marked as
    /// read from that sentence (the two are released together).
    pub(crate) fn settle_both_onnxruntimes(&mut self) {
        let Some(line) = self.both_onnxruntimes else { return };
        let version = |c: &Self, name: &str| c.values.get(&Key::Dist(name.into())).map(|(v, _)| v.clone());
        let (cpu, gpu) = (version(self, "onnxruntime"), version(self, "onnxruntime-gpu"));
        let (missing, v) = match (cpu, gpu) {
            (Some(v), None) => ("onnxruntime-gpu", v),
            (None, Some(v)) => ("onnxruntime", v),
            _ => return,
        };
        let here = std::mem::replace(&mut self.lines, line);
        self.dist(missing, &v);
        if let Some(f) = self.facts.iter_mut().rev().find(|f| f.fact == missing && f.line == line) {
            f.guessed = true;
        }
        self.lines = here;
    }

    /// A requirement a distribution declares, as pip quoted it.
    pub(crate) fn requirement(&mut self, dist: &str, requirement: &str) {
        let name = normalize_name(dist);
        // Only a distribution kept carries its requirements into the snapshot.
        if !self.dists.contains_key(&name) {
            return;
        }
        if !self.requires.contains_key(&name) && !self.kept.watches(&name) {
            if self.requiring_others >= MAX_REQUIRING_OTHERS {
                return;
            }
            self.requiring_others += 1;
        }
        let list = self.requires.entry(name).or_default();
        let requirement = requirement.trim().to_string();
        if !list.contains(&requirement) && list.len() < 64 {
            list.push(requirement);
        }
    }

    /// A conda package that exists only beside torch's CPU build, or
    /// `torch.version.cuda` printing `None`: torch is the CPU build, and
    /// installed.
    pub(crate) fn cpu_torch_marker(&mut self) {
        self.fact(Key::TorchCuda, "None");
        self.torch_unversioned = true;
    }

    /// A distribution conda installed.
    pub(crate) fn conda_dist(&mut self, name: &str, version: &str) {
        self.dist(name, version);
        let name = normalize_name(name);
        if self.dists.contains_key(&name) {
            self.from_conda.insert(name);
        }
    }

    pub(crate) fn gpu(&mut self, index: u32, name: &str, uuid: Option<&str>) {
        let name = name.trim();
        if name.is_empty() || !self.gpus.contains_key(&index) && self.gpus.len() >= MAX_GPUS {
            return;
        }
        self.fact(Key::GpuName(index), name);
        let e = self.gpus.entry(index).or_insert_with(|| (name.to_string(), None));
        if e.1.is_none() {
            e.1 = uuid.map(str::to_string);
        }
    }

    /// Whether `key` already has its guess: the first one is kept, so a
    /// reader can skip the work of finding another.
    pub(crate) fn has_guess(&self, key: &Key) -> bool {
        self.guessed.contains(key)
    }

    /// Remembers a fact read from prose, a path or an image tag.
    pub(crate) fn guess(&mut self, key: Key, value: &str) {
        if self.guessed.contains(&key) || !plausible(&key, value.trim()) {
            return;
        }
        if let Key::Dist(name) = &key
            && !self.kept.watches(name)
        {
            if self.guessed_others >= MAX_GUESSED_OTHERS {
                return;
            }
            self.guessed_others += 1;
        }
        self.guessed.insert(key.clone());
        self.guesses.push((key, value.trim().to_string(), self.lines));
    }

    /// Remembers the first release of a platform the paste names.
    pub(crate) fn platform(&mut self, platform: Platform, release: &str, torch: bool) {
        if !self.platforms.iter().any(|(p, ..)| *p == platform) {
            self.platforms.push((platform, release.to_string(), torch, self.lines));
        }
    }

    /// What the named platform releases ship, as guesses tied to the line
    /// that named them: anything the paste states itself wins. The CUDA is
    /// the toolkit's, not torch's build: NGC images carry forward
    /// compatibility, so a driver older than it may still run them.
    fn facts_from_platforms(&mut self, matrix: &Matrix) {
        let here = self.lines;
        for (platform, release, torch, line) in std::mem::take(&mut self.platforms) {
            let Some(r) = matrix.platform_release(platform, &release) else { continue };
            self.lines = line;
            let shipped = [
                (Key::CudaToolkit, &r.cuda),
                (Key::Cudnn, &r.cudnn),
                (Key::Dist("tensorrt".into()), &r.tensorrt),
                (Key::Python, &r.python),
                (Key::Os, &r.os),
            ];
            for (key, value) in shipped {
                if let Some(v) = value {
                    self.guess(key, v);
                }
            }
            if let (true, Some(v)) = (torch, &r.torch) {
                self.guess(Key::Dist("torch".into()), v);
            }
            if platform == Platform::Jetpack {
                self.guess(Key::Arch, "aarch64");
                // A JetPack release names its L4T; an L4T release (prose,
                // or an image's tag) was read as itself where it was named.
                if let Some(l4t) = r.l4t.as_deref().filter(|l4t| !same_value(&release, l4t)) {
                    self.guess(Key::L4t, l4t);
                }
            }
        }
        self.lines = here;
    }

    /// The glibc of the Linux release the paste names, when it states no
    /// glibc itself: a guess, tied to the OS line.
    fn glibc_from_os(&mut self, matrix: &Matrix) {
        if self.values.contains_key(&Key::Glibc) {
            return;
        }
        let stated = self.values.get(&Key::Os).cloned();
        let Some((os, line)) = stated
            .or_else(|| self.guesses.iter().find(|(k, _, _)| *k == Key::Os).map(|(_, v, l)| (v.clone(), *l)))
        else {
            return;
        };
        if let Some(glibc) = matrix.glibc_of_os(&os) {
            let here = std::mem::replace(&mut self.lines, line);
            self.guess(Key::Glibc, glibc);
            self.lines = here;
        }
    }

    /// An image's L4T (its tag) is the release that runs in the container;
    /// another L4T the paste names beside it is the host's.
    fn settle_image_l4t(&mut self) {
        let Some(at) = self.guesses.iter().position(|(k, _, _)| *k == Key::ImageL4t) else { return };
        let (_, image, line) = self.guesses.remove(at);
        self.guessed.remove(&Key::ImageL4t);
        match self.guesses.iter_mut().find(|(k, _, _)| *k == Key::L4t) {
            Some(named) if same_value(&named.1, &image) => {}
            Some(named) => {
                named.0 = Key::HostL4t;
                self.guessed.insert(Key::HostL4t);
                self.guesses.push((Key::L4t, image, line));
            }
            None => {
                self.guessed.insert(Key::L4t);
                self.guesses.push((Key::L4t, image, line));
            }
        }
    }

    /// Takes the guesses nothing structured stated, marked as guessed.
    fn settle_guesses(&mut self) {
        let stated_line = self.lines;
        for (key, value, line) in std::mem::take(&mut self.guesses) {
            if self.values.contains_key(&key) {
                continue;
            }
            // "onnxruntime 1.19" in a sentence next to a listed
            // onnxruntime-gpu names the same install, not a second one.
            if let Key::Dist(name) = &key
                && self.states_module_of(name)
            {
                continue;
            }
            self.lines = line;
            match &key {
                Key::Dist(name) => self.dist(name, &value),
                // A GPU named in prose only when no GPU is stated at all.
                Key::GpuName(i) if self.gpus.is_empty() => self.gpu(*i, &value, None),
                Key::GpuName(_) => continue,
                _ => self.fact(key.clone(), &value),
            }
            if let Some(f) = self.facts.iter_mut().rev().find(|f| f.fact == key.name() && f.line == line) {
                f.guessed = true;
            }
        }
        self.lines = stated_line;
    }

    /// Whether a distribution that installs the same module as `name` was
    /// stated (kept ones only: a family's names share its prefix).
    fn states_module_of(&self, name: &str) -> bool {
        let family = name.split_once('-').map_or(name, |(head, _)| head);
        self.dists
            .range::<str, _>((std::ops::Bound::Included(family), std::ops::Bound::Unbounded))
            .take_while(|(n, _)| n.starts_with(family))
            .any(|(n, _)| same_module(n, name))
    }

    /// The version recorded for a distribution (tests).
    #[cfg(test)]
    pub(crate) fn dist_version(&self, name: &str) -> Option<&str> {
        self.values.get(&Key::Dist(name.into())).map(|(v, _)| v.as_str())
    }

    pub(crate) fn library(&mut self, path: &str) {
        if self.libraries.len() >= MAX_LIBRARIES {
            return;
        }
        self.libraries.push((path.trim().to_string(), self.lines));
    }
}

/// Two distributions that install the same module (`onnxruntime` and
/// `onnxruntime-gpu`, `tensorrt` and `tensorrt-cu12`).
pub(crate) fn same_module(a: &str, b: &str) -> bool {
    let family = |n: &str| match n.split_once('-') {
        Some((head @ ("onnxruntime" | "tensorrt"), _)) => head.to_string(),
        _ => n.to_string(),
    };
    family(a) == family(b)
}

/// "2.1.0" and "2.1.0+cu121" from two sources are one statement; "12.1"
/// and "12.1.105" too (collect_env's CUDA line vs nvcc's).
fn same_value(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (va, vb) = (Ver::new(a), Ver::new(b));
    match (va.parsed(), vb.parsed()) {
        (Some(x), Some(y)) => {
            let (x, y) = (x.clone().without_local(), y.clone().without_local());
            let (rx, ry) = (x.release(), y.release());
            let n = rx.len().min(ry.len());
            rx[..n] == ry[..n]
        }
        _ => a.eq_ignore_ascii_case(b),
    }
}

pub(crate) fn is_none_word(v: &str) -> bool {
    let v = v.trim();
    v.is_empty()
        || v.eq_ignore_ascii_case("none")
        || v.eq_ignore_ascii_case("n/a")
        || v.eq_ignore_ascii_case("could not collect")
        || v.eq_ignore_ascii_case("no cuda")
        || v.eq_ignore_ascii_case("no cudnn")
}

/// Whether a value can be what its key names: a Python is 2.x or 3.x
/// ("python 11.6" is a typo or another version, not a Python to judge).
fn plausible(key: &Key, value: &str) -> bool {
    match key {
        Key::Python => {
            let major = value.split(['.', ' ']).next().unwrap_or_default();
            major.is_empty() || !major.chars().all(|c| c.is_ascii_digit()) || matches!(major, "2" | "3")
        }
        _ => true,
    }
}
