//! The boundary between the doctor and the machine.
//!
//! Every probe touches the machine through a [`Host`]: system files are read
//! under a root directory (so `--root /host` inspects a node's file system
//! mounted into a container, and tests aim the whole doctor at a fixture
//! tree), environment variables come from one captured map, executables are
//! found on that map's `PATH`, and commands run here and nowhere else.
//!
//! Running a command is the dangerous part, so it gets the care: stdin is
//! closed (nothing can prompt), the working directory is an empty scratch
//! directory (a stray `onnx.py` in the user's directory cannot change what a
//! probe sees), both pipes are drained on their own threads (a chatty child
//! cannot deadlock us), output is capped, and on timeout the whole process
//! *group* is killed: killing only the child leaves `sh → sleep` grandchildren
//! holding the pipes open, and the doctor would wait for them. The group is
//! killed after a normal exit too, so a daemon a probe started dies with it,
//! and on Ctrl-C or SIGTERM ([`clean_up_on_signals`]). A whole-run deadline
//! bounds the sum of all runs: a command due after it is not started.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

mod cleanup;
mod files;
#[cfg(unix)]
#[path = "unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "windows.rs"]
mod sys;
mod tree;
mod write;

pub use cleanup::interrupted;
pub use files::read_at_most;
pub use files::{FileKind, ReadError, open_regular, read_bytes, read_capped, read_text, same_file};
pub use sys::{clean_up_on_signals, sweep_orphans};
pub use tree::{DIR_ENTRIES_CAP, canonicalize, metadata, read_dir, symlink_metadata};
pub use write::{WriteError, append_regular, write_whole};

/// Largest amount of one stream we keep from a child. A fake executable that
/// prints garbage forever must not grow the doctor's memory.
const MAX_CAPTURE: usize = 8 * 1024 * 1024;

/// How a finished (or abandoned) command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut(Duration),
}

/// What a command printed, even when it was killed part-way.
#[derive(Clone, Debug)]
pub struct CommandOutput {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

impl CommandOutput {
    pub(crate) fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    pub(crate) fn stdout_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub(crate) fn stderr_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// One line a user can read: "exited with status 1", "killed by signal 11",
    /// "timed out after 5.0 s".
    pub(crate) fn describe_exit(&self) -> String {
        match self.exit {
            Exit::Code(c) => format!("exited with status {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut(d) => format!("timed out after {:.1} s", d.as_secs_f64()),
        }
    }
}

/// Why a command could not be started at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("{program} was not found")]
    NotFound { program: String },
    #[error("{program} is not executable (permission denied)")]
    PermissionDenied { program: String },
    #[error("could not start {program}: {source}")]
    Spawn { program: String, source: io::Error },
    #[error("{program} was not run: the run's deadline ({seconds} s, from --timeout) had passed")]
    Deadline { program: String, seconds: u64 },
}

/// The machine as the probes see it.
#[derive(Clone, Debug)]
pub struct Host {
    root: PathBuf,
    env: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    timeout: Duration,
    /// When every command must have finished, and how long the run had.
    deadline: Option<(Instant, Duration)>,
    scratch: Arc<Scratch>,
}

/// How many `--timeout`s a whole run may take: a probe of several Pythons
/// whose imports each take most of one still finishes; a machine where
/// everything hangs reports in bounded time what it could not ask.
pub(crate) const DEADLINE_TIMEOUTS: u32 = 4;

/// The empty working directory children run in, removed with the last Host
/// that shares it; `None` where no temporary directory can be made.
#[derive(Debug)]
struct Scratch(Option<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            cleanup::remove_scratch(dir);
        }
    }
}

/// A HOME no process can create anything under, even as root (a path
/// below a device): for children when there is no scratch directory.
const UNWRITABLE_HOME: &str =
    if cfg!(windows) { r"\\.\NUL\onnx-doctor-home" } else { "/dev/null/onnx-doctor-home" };

impl Host {
    /// The real machine: this process's environment and working directory.
    ///
    /// `root` is where system paths such as `/etc/os-release` are read from
    /// (`/` normally). Commands are not affected by it: they run here.
    pub(crate) fn from_process(root: PathBuf, timeout: Duration) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Self::new(root, std::env::vars_os().collect(), cwd, timeout)
    }

    pub fn new(root: PathBuf, env: BTreeMap<OsString, OsString>, cwd: PathBuf, timeout: Duration) -> Self {
        let scratch = Arc::new(Scratch(neutral_directory()));
        Self { root, env, cwd, timeout, deadline: None, scratch }
    }

    /// Starts no command after `budget` from now, and cuts one that would
    /// run past it.
    pub(crate) fn with_deadline(mut self, budget: Duration) -> Self {
        self.deadline = Some((Instant::now() + budget, budget));
        self
    }

    /// Environment for an interpreter that must write nothing in the user's
    /// home: HOME and the XDG directories inside the scratch directory
    /// (caches that importing a framework fills land there and are removed
    /// with it), with the user's own site directory still found where it is.
    pub(crate) fn private_home(&self) -> Vec<(OsString, OsString)> {
        // Without a scratch directory, a home nothing can be written under:
        // a framework's cache then fails to be made rather than landing in
        // some other directory of the user's.
        let home = match &self.scratch.0 {
            Some(dir) => dir.join("home"),
            None => PathBuf::from(UNWRITABLE_HOME),
        };
        let _ = std::fs::create_dir_all(&home);
        let mut env: Vec<(OsString, OsString)> = vec![("HOME".into(), home.clone().into())];
        for (var, dir) in
            [("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")]
        {
            env.push((var.into(), home.join(dir).into()));
        }
        if cfg!(windows) {
            // Windows programs find the home and their caches here; Python
            // finds the user's site directory under the real APPDATA.
            for (var, dir) in
                [("USERPROFILE", ""), ("APPDATA", "AppData/Roaming"), ("LOCALAPPDATA", "AppData/Local")]
            {
                env.push((var.into(), home.join(dir).into()));
            }
            if let (Some(real), None) = (self.env("APPDATA"), self.env("PYTHONUSERBASE")) {
                env.push(("PYTHONUSERBASE".into(), Path::new(real).join("Python").into()));
            }
        } else if let (Some(real), None) = (self.env("HOME"), self.env("PYTHONUSERBASE")) {
            env.push(("PYTHONUSERBASE".into(), Path::new(real).join(".local").into()));
        }
        env
    }

    /// The directory the user ran the doctor from.
    pub(crate) fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    pub(crate) fn env(&self, key: &str) -> Option<&OsStr> {
        self.env.get(OsStr::new(key)).map(OsString::as_os_str)
    }

    /// An environment variable as text, ignoring it when it is set but empty.
    pub(crate) fn env_str(&self, key: &str) -> Option<String> {
        self.env(key).map(|v| v.to_string_lossy().into_owned()).filter(|v| !v.is_empty())
    }

    /// Every environment variable that is valid text.
    pub(crate) fn env_pairs(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.env.iter().filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
    }

    /// This machine's host name, unless it is empty or `localhost`.
    pub(crate) fn hostname(&self) -> Option<String> {
        sys::hostname()
            .filter(|n| !n.is_empty() && n != "localhost")
            .or_else(|| self.env_str("HOSTNAME"))
            .or_else(|| self.env_str("COMPUTERNAME"))
    }

    /// Windows' version (major, minor, build) when the doctor runs on
    /// Windows; `None` elsewhere.
    pub(crate) fn windows_version(&self) -> Option<(u32, u32, u32)> {
        sys::windows_version()
    }

    /// Windows' System32 folder, as Windows reports it, when the doctor
    /// runs on Windows; `None` elsewhere.
    pub(crate) fn windows_system_directory(&self) -> Option<PathBuf> {
        sys::system_directory()
    }

    /// The System32 folder of a Windows drive given as the root
    /// (`--root /mnt/c`, a wine prefix's `drive_c`) when the doctor runs
    /// elsewhere: what that Windows would load its DLLs from.
    pub(crate) fn mounted_windows_system_directory(&self) -> Option<PathBuf> {
        if self.root == Path::new("/") {
            return None;
        }
        ["Windows/System32", "windows/system32"].into_iter().map(|d| self.system_path(d)).find(|d| d.is_dir())
    }

    /// Where a system path (`/etc/os-release`) lives under the root.
    pub(crate) fn system_path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// Reads a system file (`/etc/os-release`) under the root: a path the
    /// user gave is read with [`read_text`] as it is.
    pub(crate) fn read_system_file(&self, path: &str, kind: FileKind) -> Result<String, ReadError> {
        read_text(&self.system_path(path), kind)
    }

    /// The first `name` on this host's `PATH`.
    pub(crate) fn which(&self, name: &str) -> Option<PathBuf> {
        let path = self.env.get(OsStr::new("PATH"))?;
        which::which_in(name, Some(path), &self.cwd).ok()
    }

    /// Runs `program` with this host's environment, a closed stdin, the
    /// neutral working directory and the host's timeout.
    pub(crate) fn run(&self, program: &Path, args: &[OsString]) -> Result<CommandOutput, RunError> {
        self.run_with_timeout(program, args, self.timeout)
    }

    #[allow(clippy::disallowed_methods)] // the one place that spawns
    pub(crate) fn run_with_timeout(
        &self,
        program: &Path,
        args: &[OsString],
        timeout: Duration,
    ) -> Result<CommandOutput, RunError> {
        self.run_with_env(program, args, timeout, &[])
    }

    /// [`Host::run_with_timeout`] with some variables of the environment replaced.
    #[allow(clippy::disallowed_methods)] // the one place that spawns
    pub(crate) fn run_with_env(
        &self,
        program: &Path,
        args: &[OsString],
        timeout: Duration,
        replaced: &[(OsString, OsString)],
    ) -> Result<CommandOutput, RunError> {
        let name = program.display().to_string();
        // A path that names nothing is not worth a process: say so, the same
        // way everywhere (an emulated exec may report it as exit 127 instead).
        if program.components().count() > 1 && std::fs::symlink_metadata(program).is_err() {
            return Err(RunError::NotFound { program: name });
        }
        let timeout = match self.deadline {
            Some((at, budget)) => {
                let left = at.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(RunError::Deadline { program: name, seconds: budget.as_secs() });
                }
                timeout.min(left)
            }
            None => timeout,
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(&self.env)
            .envs(replaced.iter().map(|(k, v)| (k, v)))
            .current_dir(self.scratch.0.as_deref().unwrap_or(Path::new("/")))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let child = sys::spawn(&mut cmd).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => RunError::NotFound { program: name.clone() },
            io::ErrorKind::PermissionDenied => RunError::PermissionDenied { program: name.clone() },
            _ => RunError::Spawn { program: name.clone(), source: e },
        })?;
        Ok(sys::wait_bounded(child, started, timeout))
    }
}

/// An empty directory for children to run in, in the first temporary
/// directory that takes one (`TMPDIR` may name one that is gone or
/// read-only); `None` if none does.
fn neutral_directory() -> Option<PathBuf> {
    let bases = [std::env::temp_dir(), "/tmp".into(), "/var/tmp".into(), "/dev/shm".into()];
    for base in bases {
        for attempt in 0..16u32 {
            let dir = base.join(format!("onnx-doctor-{}-{attempt}", std::process::id()));
            match cleanup::make_scratch(&dir, || std::fs::create_dir(&dir)) {
                Ok(()) => return Some(dir),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(_) => break,
            }
        }
    }
    None
}

pub(super) fn drain<R: Read + Send + 'static>(mut r: R) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_CAPTURE.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
        let _ = tx.send(kept);
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn host() -> Host {
        Host::from_process(PathBuf::from("/"), Duration::from_secs(5))
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn a_hanging_grandchild_is_killed_with_its_group_within_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let p = script(dir.path(), "hang", "echo started; sleep 30; echo never");
        let out = host().run_with_timeout(&p, &[], Duration::from_millis(300)).unwrap();
        assert!(matches!(out.exit, Exit::TimedOut(_)));
        assert_eq!(out.stdout_lossy(), "started\n");
        assert!(out.elapsed < Duration::from_secs(2), "took {:?}", out.elapsed);
    }

    #[test]
    fn exit_status_and_both_streams_are_captured() {
        let dir = tempfile::tempdir().unwrap();
        let p = script(dir.path(), "fail", "echo out; echo err >&2; exit 3");
        let out = host().run(&p, &[]).unwrap();
        assert_eq!(out.exit, Exit::Code(3));
        assert_eq!(out.stdout_lossy(), "out\n");
        assert_eq!(out.stderr_lossy(), "err\n");
    }

    #[test]
    fn stdin_is_closed_so_a_prompt_gets_end_of_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = script(dir.path(), "ask", "read answer || echo no-input");
        let out = host().run(&p, &[]).unwrap();
        assert_eq!(out.stdout_lossy(), "no-input\n");
    }

    #[test]
    fn endless_output_is_capped_and_stopped_by_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let p = script(dir.path(), "spew", "exec cat /dev/zero");
        let out = host().run_with_timeout(&p, &[], Duration::from_millis(500)).unwrap();
        assert!(matches!(out.exit, Exit::TimedOut(_)));
        assert!(out.stdout.len() <= MAX_CAPTURE);
    }

    #[test]
    fn missing_programs_are_a_typed_error() {
        let err = host().run(Path::new("/nonexistent/python"), &[]).unwrap_err();
        assert!(matches!(err, RunError::NotFound { .. }));
    }

    #[test]
    fn system_paths_are_read_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("etc/os-release"), "ID=fixture\n").unwrap();
        let h = Host::new(dir.path().into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        assert_eq!(h.read_system_file("/etc/os-release", FileKind::System).unwrap(), "ID=fixture\n");
    }
}
