//! What the doctor leaves behind, removed however it ends.
//!
//! Every child runs in a process group of its own (so a terminal's Ctrl-C,
//! which goes to the foreground group, does not reach it). The groups still
//! alive and the scratch directories are registered here; on SIGINT, SIGTERM
//! or SIGHUP a thread kills each group and removes each directory before the
//! doctor dies of the signal. The signal handler itself only writes the
//! signal number to a pipe: everything else runs on that thread, where
//! locking and freeing memory are allowed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::thread;

static GROUPS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);
static INSTALL: Once = Once::new();

/// Notes a child's process group as started.
pub(super) fn group_started(pgid: libc::pid_t) {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pgid);
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

pub(super) fn scratch_made(dir: &Path) {
    SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).push(dir.to_path_buf());
}

/// Removes a scratch directory and what the children wrote into it.
pub(super) fn remove_scratch(dir: &Path) {
    let mut dirs = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    if dirs.iter().any(|d| d == dir) {
        let _ = std::fs::remove_dir_all(dir);
        dirs.retain(|d| d != dir);
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
            let mut groups: Vec<libc::pid_t> =
                GROUPS.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
            // A signal that lands between a spawn and its registration
            // still finds the child: each one leads its own group.
            groups.extend(own_children());
            for pgid in groups {
                // SAFETY: as in `end_group`; these leaders are all unreaped.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
            for dir in SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
                let _ = std::fs::remove_dir_all(dir);
            }
            // Die of the signal, as the shell that sent it expects.
            // SAFETY: resetting a disposition and raising are plain calls.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            std::process::exit(128 + signal);
        });
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
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
