//! What the doctor leaves behind, removed however it ends.
//!
//! Every child runs in a process group of its own (so a terminal's Ctrl-C,
//! which goes to the foreground group, does not reach it). The groups still
//! alive and the scratch directories are registered here; on SIGINT,
//! SIGTERM, SIGHUP and the other signals that end a process, a thread kills
//! each group and removes each directory before the doctor dies of the
//! signal. The signal handler itself only writes the
//! signal number to a pipe: everything else runs on that thread, where
//! locking and freeing memory are allowed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::thread;

static GROUPS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);
static INSTALL: Once = Once::new();
/// Set as soon as a signal ends the run, before its children are killed:
/// a report written after that could only describe killed probes.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a signal is ending this run.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Our children that are not reaped yet, each the leader of its group.
/// What else `/proc` lists as our child is an orphan a probe left behind
/// (reparented to us, the subreaper), which escaped its group with setsid.
static CHILDREN: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Spawns a child through `spawn` and notes it and its process group, under
/// the lock that [`sweep_orphans`] takes: a child is never seen unnoted.
pub(super) fn spawn_noted<C>(
    spawn: impl FnOnce() -> std::io::Result<C>,
    id: impl Fn(&C) -> u32,
) -> std::io::Result<C> {
    let mut children = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
    let child = spawn()?;
    let pid = id(&child) as libc::pid_t;
    children.push(pid);
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    Ok(child)
}

/// Forgets a child once it is reaped (its id may be reused from now on).
pub(super) fn reaped(pid: libc::pid_t) {
    let mut children = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
    // Once, not every entry: a new child may already have the same id.
    if let Some(at) = children.iter().position(|c| *c == pid) {
        children.swap_remove(at);
    }
}

/// Kills what is left of a child's group and forgets it. Call it while the
/// leader is unreaped (running or a zombie): until it is reaped its id, which
/// names the group, cannot be reused, so the signal cannot hit a stranger.
pub(super) fn end_group(pgid: libc::pid_t) {
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

/// Makes a scratch directory or temporary file at `path` with `make`, and
/// notes it for removal, under the lock the signal thread takes to remove
/// them: once a signal is ending the run nothing new is made, and what was
/// made is always found.
pub(super) fn make_scratch<T>(path: &Path, make: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut paths = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    if interrupted() {
        return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "the run was interrupted"));
    }
    let made = make()?;
    paths.push(path.to_path_buf());
    Ok(made)
}

/// Removes a scratch directory and what the children wrote into it, or a
/// temporary file.
pub(super) fn remove_scratch(dir: &Path) {
    let mut dirs = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    if dirs.iter().any(|d| d == dir) {
        remove(dir);
        dirs.retain(|d| d != dir);
    }
}

fn remove(path: &Path) {
    if std::fs::remove_dir_all(path).is_err() {
        let _ = std::fs::remove_file(path);
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
            INTERRUPTED.store(true, Ordering::SeqCst);
            let mut groups: Vec<libc::pid_t> =
                GROUPS.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
            // A signal that lands between a spawn and its registration
            // still finds the child: each one leads its own group.
            groups.extend(own_children());
            for pid in groups {
                // These are all unreaped: leaders, or orphans of theirs.
                kill_process_and_group(pid);
            }
            for path in SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
                remove(&path);
            }
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
