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
//! holding the pipes open, and the doctor would wait for them.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

mod files;

pub use files::{FileKind, ReadError, open_regular, read_bytes, read_capped, read_text};

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
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    pub fn stdout_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// One line a user can read: "exited with status 1", "killed by signal 11",
    /// "timed out after 5.0 s".
    pub fn describe_exit(&self) -> String {
        match self.exit {
            Exit::Code(c) => format!("exited with status {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut(d) => format!("timed out after {:.1} s", d.as_secs_f64()),
        }
    }
}

/// Why a command could not be started at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{program} was not found")]
    NotFound { program: String },
    #[error("{program} is not executable (permission denied)")]
    PermissionDenied { program: String },
    #[error("could not start {program}: {source}")]
    Spawn { program: String, source: io::Error },
}

/// The machine as the probes see it.
#[derive(Clone, Debug)]
pub struct Host {
    root: PathBuf,
    env: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    timeout: Duration,
    scratch: Arc<Scratch>,
}

/// The empty working directory children run in, removed with the last Host
/// that shares it.
#[derive(Debug)]
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.0 != Path::new("/") {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
}

impl Host {
    /// The real machine: this process's environment and working directory.
    ///
    /// `root` is where system paths such as `/etc/os-release` are read from
    /// (`/` normally). Commands are not affected by it: they run here.
    pub fn from_process(root: PathBuf, timeout: Duration) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Self::new(root, std::env::vars_os().collect(), cwd, timeout)
    }

    pub fn new(root: PathBuf, env: BTreeMap<OsString, OsString>, cwd: PathBuf, timeout: Duration) -> Self {
        let scratch = Arc::new(Scratch(neutral_directory()));
        Self { root, env, cwd, timeout, scratch }
    }

    /// The directory the user ran the doctor from.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn env(&self, key: &str) -> Option<&OsStr> {
        self.env.get(OsStr::new(key)).map(OsString::as_os_str)
    }

    /// An environment variable as text, ignoring it when it is set but empty.
    pub fn env_str(&self, key: &str) -> Option<String> {
        self.env(key).map(|v| v.to_string_lossy().into_owned()).filter(|v| !v.is_empty())
    }

    /// Every environment variable that is valid text.
    pub fn env_pairs(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.env.iter().filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
    }

    /// This machine's host name, unless it is empty or `localhost`.
    pub fn hostname(&self) -> Option<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname NUL-terminates
        // or truncates within it.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        let name = if rc == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            String::from_utf8_lossy(&buf[..end]).trim().to_string()
        } else {
            String::new()
        };
        Some(name).filter(|n| !n.is_empty() && n != "localhost").or_else(|| self.env_str("HOSTNAME"))
    }

    /// Where a system path (`/etc/os-release`) lives under the root.
    pub fn system_path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// Reads a system file (`/etc/os-release`) under the root: a path the
    /// user gave is read with [`read_text`] as it is.
    pub fn read_system_file(&self, path: &str, kind: FileKind) -> Result<String, ReadError> {
        read_text(&self.system_path(path), kind)
    }

    /// The first `name` on this host's `PATH`.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        let path = self.env.get(OsStr::new("PATH"))?;
        which::which_in(name, Some(path), &self.cwd).ok()
    }

    /// Runs `program` with this host's environment, a closed stdin, the
    /// neutral working directory and the host's timeout.
    pub fn run(&self, program: &Path, args: &[OsString]) -> Result<CommandOutput, RunError> {
        self.run_with_timeout(program, args, self.timeout)
    }

    #[allow(clippy::disallowed_methods)] // the one place that spawns
    pub fn run_with_timeout(
        &self,
        program: &Path,
        args: &[OsString],
        timeout: Duration,
    ) -> Result<CommandOutput, RunError> {
        let name = program.display().to_string();
        // A path that names nothing is not worth a process: say so, the same
        // way everywhere (an emulated exec may report it as exit 127 instead).
        if program.components().count() > 1 && std::fs::symlink_metadata(program).is_err() {
            return Err(RunError::NotFound { program: name });
        }
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(&self.env)
            .current_dir(&self.scratch.0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let started = Instant::now();
        let child = spawn_retrying_busy(&mut cmd).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => RunError::NotFound { program: name.clone() },
            io::ErrorKind::PermissionDenied => RunError::PermissionDenied { program: name.clone() },
            _ => RunError::Spawn { program: name.clone(), source: e },
        })?;
        Ok(wait_bounded(child, started, timeout))
    }
}

/// An empty directory for children to run in; `/` if none can be made.
fn neutral_directory() -> PathBuf {
    let base = std::env::temp_dir();
    for attempt in 0..16u32 {
        let dir = base.join(format!("onnx-doctor-{}-{attempt}", std::process::id()));
        if std::fs::create_dir(&dir).is_ok() {
            return dir;
        }
    }
    PathBuf::from("/")
}

/// Spawning an executable that another thread has just written can fail with
/// ETXTBSY while a sibling fork still holds its write descriptor; it clears
/// within milliseconds.
fn spawn_retrying_busy(cmd: &mut Command) -> io::Result<Child> {
    let mut delay = Duration::from_millis(5);
    for _ in 0..5 {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                thread::sleep(delay);
                delay *= 2;
            }
            other => return other,
        }
    }
    cmd.spawn()
}

fn drain<R: Read + Send + 'static>(mut r: R) -> mpsc::Receiver<Vec<u8>> {
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

fn wait_bounded(mut child: Child, started: Instant, timeout: Duration) -> CommandOutput {
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let pgid = child.id() as libc::pid_t;

    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let exit = match rx.recv_timeout(timeout) {
        Ok(Ok(status)) => match (status.code(), status.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(s)) => Exit::Signal(s),
            (None, None) => Exit::Code(-1),
        },
        Ok(Err(_)) => Exit::Code(-1),
        Err(_) => {
            // SAFETY: plain syscall; a negative pid names our child's group,
            // which `process_group(0)` made distinct from ours.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
            let _ = rx.recv_timeout(Duration::from_secs(1));
            Exit::TimedOut(timeout)
        }
    };
    // The pipes close once every process holding them is gone. If the child
    // exited but left members of its group behind holding a pipe, the group
    // id is still theirs (it cannot be reused while they live), so killing it
    // is safe; a process that escaped into its own session is abandoned.
    let grace = Duration::from_millis(200);
    let collect = |rx: mpsc::Receiver<Vec<u8>>| match rx.recv_timeout(grace) {
        Ok(v) => v,
        Err(_) => {
            // SAFETY: see above.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
            rx.recv_timeout(grace).unwrap_or_default()
        }
    };
    let out = collect(stdout);
    let err = collect(stderr);
    CommandOutput { exit, stdout: out, stderr: err, elapsed: started.elapsed() }
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
