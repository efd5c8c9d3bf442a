//! The Unix side of running commands and ending them.
//!
//! Every child runs in a process group of its own (so a terminal's Ctrl-C,
//! which goes to the foreground group, does not reach it). The groups still
//! alive are registered here; on SIGINT, SIGTERM, SIGHUP and the other
//! signals that end a process, a thread kills each group and removes each
//! scratch directory before the doctor dies of the signal. The signal
//! handler itself only writes the signal number to a pipe: everything else
//! runs on that thread, where locking and freeing memory are allowed.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::{CommandOutput, Exit, cleanup};

static GROUPS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);
static INSTALL: Once = Once::new();
/// Our children that are not reaped yet, each the leader of its group.
/// What else `/proc` lists as our child is an orphan a probe left behind
/// (reparented to us, the subreaper), which escaped its group with setsid.
static CHILDREN: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Spawns a child through `spawn` and notes it and its process group, under
/// the lock that [`sweep_orphans`] takes: a child is never seen unnoted.
fn spawn_noted<C>(spawn: impl FnOnce() -> std::io::Result<C>, id: impl Fn(&C) -> u32) -> std::io::Result<C> {
    let mut children = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
    let child = spawn()?;
    let pid = id(&child) as libc::pid_t;
    children.push(pid);
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    Ok(child)
}

/// Forgets a child once it is reaped (its id may be reused from now on).
fn reaped(pid: libc::pid_t) {
    let mut children = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
    // Once, not every entry: a new child may already have the same id.
    if let Some(at) = children.iter().position(|c| *c == pid) {
        children.swap_remove(at);
    }
}

/// Kills what is left of a child's group and forgets it. Call it while the
/// leader is unreaped (running or a zombie): until it is reaped its id, which
/// names the group, cannot be reused, so the signal cannot hit a stranger.
fn end_group(pgid: libc::pid_t) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: plain syscall; a negative pid names the child's group, which
    // `process_group(0)` made distinct from ours.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    groups.retain(|g| *g != pgid);
}

/// Kills and reaps every child of ours that we did not start: a daemon a
/// probe started in a session of its own (setsid), which the group kill
/// misses. It becomes our child when its parent dies, because the binary
/// makes itself the subreaper of its descendants ([`clean_up_on_signals`]).
pub fn sweep_orphans() {
    let children = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
    for pid in own_children().into_iter().filter(|p| !children.contains(p)) {
        kill_process_and_group(pid);
        // SAFETY: `pid` is our child and no `Child` handle owns it, so
        // reaping it takes no one's exit status; WNOHANG never blocks.
        unsafe {
            libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
}

/// SIGKILL to `pid` and to the group it may lead (an orphan that called
/// setsid leads one; one that did not, does not).
fn kill_process_and_group(pid: libc::pid_t) {
    // SAFETY: plain syscalls on an unreaped child of ours.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the descriptor is the pipe's
    // write end, open for the life of the process.
    unsafe {
        libc::write(SIGNAL_PIPE.load(Ordering::Relaxed), (&byte as *const u8).cast(), 1);
    }
}

/// The signals whose default action ends the process and that a person or a
/// supervisor sends to stop a run: each cleans up first. (SIGPIPE is
/// ignored by Rust's runtime; SIGKILL and SIGSTOP cannot be caught.)
const ENDING_SIGNALS: [libc::c_int; 9] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
];

/// Installs the handlers, once per process. Only the binary calls this: a
/// library user keeps its own signal handling.
pub fn clean_up_on_signals() {
    INSTALL.call_once(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        SIGNAL_PIPE.store(fds[1], Ordering::Relaxed);
        let reader = fds[0];
        thread::spawn(move || {
            let signal = wait_for_signal(reader);
            cleanup::set_interrupted();
            let mut groups: Vec<libc::pid_t> =
                GROUPS.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
            // A signal that lands between a spawn and its registration
            // still finds the child: each one leads its own group.
            groups.extend(own_children());
            for pid in groups {
                // These are all unreaped: leaders, or orphans of theirs.
                kill_process_and_group(pid);
            }
            cleanup::remove_all_scratch();
            // Die of the signal, as the shell that sent it expects.
            // SAFETY: resetting a disposition and raising are plain calls.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            std::process::exit(128 + signal);
        });
        // Daemons a probe starts in a session of their own become our
        // children when their parent dies, so they can be found and ended.
        // SAFETY: a plain prctl on this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
        for signal in ENDING_SIGNALS {
            // SAFETY: `on_signal` only calls write(2).
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

/// This process's children, as /proc lists them per thread (empty where
/// the kernel does not say).
#[allow(clippy::disallowed_methods)] // /proc files: small, regular, never FIFOs
fn own_children() -> Vec<libc::pid_t> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| list.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<libc::pid_t>>())
        .filter(|pid| *pid > 1)
        .collect()
}

fn wait_for_signal(reader: libc::c_int) -> libc::c_int {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into `byte`.
        let n = unsafe { libc::read(reader, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            return libc::c_int::from(byte);
        }
        if n == 0 || io_error_is_not_interrupt() {
            // The pipe is gone; nothing will ever arrive. Park forever.
            loop {
                thread::park();
            }
        }
    }
}

fn io_error_is_not_interrupt() -> bool {
    std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
}

/// Starts `cmd` as the leader of a process group of its own, noted for the
/// signal thread.
pub(super) fn spawn(cmd: &mut Command) -> io::Result<Child> {
    cmd.process_group(0);
    spawn_noted(|| spawn_retrying_busy(cmd), Child::id)
}

/// Windows' System32: none here.
pub(super) fn system_directory() -> Option<std::path::PathBuf> {
    None
}

/// Windows' own version: none here.
pub(super) fn windows_version() -> Option<(u32, u32, u32)> {
    None
}

/// This machine's host name, as the kernel has it.
pub(super) fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates
    // or truncates within it.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    (rc == 0).then(|| {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).trim().to_string()
    })
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

pub(super) fn wait_bounded(mut child: Child, started: Instant, timeout: Duration) -> CommandOutput {
    let stdout = super::drain(child.stdout.take().expect("stdout is piped"));
    let stderr = super::drain(child.stderr.take().expect("stderr is piped"));
    let pgid = child.id() as libc::pid_t;

    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(exited_unreaped(pgid));
    });
    let finished = rx.recv_timeout(timeout).is_ok();
    // Running or a zombie, the leader still holds its id, so the group is
    // ours to kill: on timeout, and after a normal exit too, which ends a
    // daemon the probe left behind holding a pipe (or not).
    end_group(pgid);
    let exit = if finished {
        match child.wait() {
            Ok(status) => match (status.code(), status.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                (None, None) => Exit::Code(-1),
            },
            Err(_) => Exit::Code(-1),
        }
    } else {
        // Reap it if SIGKILL takes effect soon; a child stuck in the kernel
        // is abandoned rather than waited for.
        if rx.recv_timeout(Duration::from_secs(1)).is_ok() {
            let _ = child.wait();
        }
        Exit::TimedOut(timeout)
    };
    reaped(pgid);
    // What the child left running in a session of its own is ours now.
    sweep_orphans();
    // The pipes close once every process holding them is gone; one that
    // escaped into a session of its own is abandoned after a grace period.
    let grace = Duration::from_millis(200);
    let out = stdout.recv_timeout(grace).unwrap_or_default();
    let err = stderr.recv_timeout(grace).unwrap_or_default();
    CommandOutput { exit, stdout: out, stderr: err, elapsed: started.elapsed() }
}

/// Waits until `pid` has exited, leaving it unreaped (a zombie).
fn exited_unreaped(pid: libc::pid_t) -> bool {
    loop {
        // SAFETY: `info` is a valid siginfo_t for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r =
            unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            return true;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
}
