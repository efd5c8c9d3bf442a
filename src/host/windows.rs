//! The Windows side of running commands and ending them.
//!
//! Windows has no process groups to kill; it has job objects. Every child
//! is put in a job of its own as soon as it starts, and what it starts is in
//! the same job, so ending the job ends the whole tree: on timeout, after a
//! normal exit (a server a probe left behind, holding a pipe), and when the
//! doctor itself ends, because each job is made to kill its processes when
//! its last handle closes. A child starts with no console of its own, so a
//! console's Ctrl-C reaches only the doctor, whose handler ends every job
//! and removes the scratch directories before the process exits.
//!
//! The child runs a few instructions before it is in its job (std starts it
//! running); a process it starts in that window escapes the tree kill, but
//! not the pipes' grace period.

use std::io;
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{CloseHandle, FALSE, HANDLE, TRUE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{CREATE_NO_WINDOW, WaitForSingleObject};

use super::{CommandOutput, Exit, cleanup};

/// The jobs of children still running, as raw handle values, for the
/// console handler to end.
static JOBS: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// A job object that kills its processes when its last handle closes.
struct Job(HANDLE);

impl Job {
    fn new() -> Option<Self> {
        // SAFETY: no name and no security attributes: a new anonymous job.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return None;
        }
        let job = Job(handle);
        // SAFETY: zeroed is a valid JOBOBJECT_EXTENDED_LIMIT_INFORMATION;
        // the size passed is its size.
        unsafe {
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            );
        }
        JOBS.lock().unwrap_or_else(|e| e.into_inner()).push(job.0 as usize);
        Some(job)
    }

    fn terminate(&self) {
        // SAFETY: a job handle of ours, open until drop.
        unsafe {
            TerminateJobObject(self.0, 1);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        JOBS.lock().unwrap_or_else(|e| e.into_inner()).retain(|j| *j != self.0 as usize);
        // SAFETY: closing our own handle once.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// A started child and the job that holds it and what it starts.
pub(super) struct Running {
    child: Child,
    job: Option<Job>,
}

/// Starts `cmd` without a console window, in a job of its own.
pub(super) fn spawn(cmd: &mut Command) -> io::Result<Running> {
    cmd.creation_flags(CREATE_NO_WINDOW);
    let job = Job::new();
    let child = cmd.spawn()?;
    if let Some(job) = &job {
        // SAFETY: both handles are open; a failure (a job that forbids
        // nesting, on old Windows) leaves the child to be killed alone.
        unsafe {
            AssignProcessToJobObject(job.0, child.as_raw_handle() as HANDLE);
        }
    }
    Ok(Running { child, job })
}

/// Windows keeps the host name in the environment the host was made from.
pub(super) fn hostname() -> Option<String> {
    None
}

/// The System32 folder (`C:\Windows\System32`), from Windows itself rather
/// than from an environment variable anyone can set.
pub(super) fn system_directory() -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW;
    let mut buf = [0u16; 1024];
    // SAFETY: the buffer's length in characters is what is passed.
    let n = unsafe { GetSystemDirectoryW(buf.as_mut_ptr(), buf.len() as u32) } as usize;
    (n > 0 && n < buf.len()).then(|| std::ffi::OsString::from_wide(&buf[..n]).into())
}

/// Windows' own version (major, minor, build), as the kernel reports it
/// whatever compatibility mode the program runs in.
pub(super) fn windows_version() -> Option<(u32, u32, u32)> {
    use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
    use windows_sys::Win32::System::SystemInformation::OSVERSIONINFOW;
    // SAFETY: the structure is zeroed with its size set, as RtlGetVersion asks.
    unsafe {
        let mut info: OSVERSIONINFOW = std::mem::zeroed();
        info.dwOSVersionInfoSize = size_of::<OSVERSIONINFOW>() as u32;
        (RtlGetVersion(&mut info) == 0).then_some((
            info.dwMajorVersion,
            info.dwMinorVersion,
            info.dwBuildNumber,
        ))
    }
}

fn wait_for(child: &Child, limit: Duration) -> bool {
    let ms = u32::try_from(limit.as_millis()).unwrap_or(u32::MAX - 1);
    // SAFETY: the child's process handle is open while `child` lives.
    unsafe { WaitForSingleObject(child.as_raw_handle() as HANDLE, ms) == WAIT_OBJECT_0 }
}

pub(super) fn wait_bounded(running: Running, started: Instant, timeout: Duration) -> CommandOutput {
    let Running { mut child, job } = running;
    let stdout = super::drain(child.stdout.take().expect("stdout is piped"));
    let stderr = super::drain(child.stderr.take().expect("stderr is piped"));
    let finished = wait_for(&child, timeout);
    // On timeout, and after a normal exit too: what the child left running
    // ends with it.
    match &job {
        Some(job) => job.terminate(),
        None => {
            let _ = child.kill();
        }
    }
    let exit = if finished {
        match child.wait() {
            Ok(status) => Exit::Code(status.code().unwrap_or(-1)),
            Err(_) => Exit::Code(-1),
        }
    } else {
        let _ = child.kill();
        if wait_for(&child, Duration::from_secs(1)) {
            let _ = child.wait();
        }
        Exit::TimedOut(timeout)
    };
    drop(job);
    let grace = Duration::from_millis(200);
    let out = stdout.recv_timeout(grace).unwrap_or_default();
    let err = stderr.recv_timeout(grace).unwrap_or_default();
    CommandOutput { exit, stdout: out, stderr: err, elapsed: started.elapsed() }
}

/// Nothing to sweep: what a child started is in its job, ended with it.
pub fn sweep_orphans() {}

/// On Ctrl-C, Ctrl-Break or the console window closing: ends every job and
/// removes the scratch directories, then lets Windows end the process.
unsafe extern "system" fn on_console_event(_event: u32) -> i32 {
    cleanup::set_interrupted();
    for job in JOBS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        // SAFETY: handles in JOBS are open until their Job drops, which
        // removes them under this lock first.
        unsafe {
            TerminateJobObject(*job as HANDLE, 1);
        }
    }
    cleanup::remove_all_scratch();
    // Not handled: the default handler ends the process.
    FALSE
}

/// Installs the console handler, once per process. Only the binary calls
/// this: a library user keeps its own.
pub fn clean_up_on_signals() {
    INSTALL.call_once(|| {
        // SAFETY: a plain registration of a handler with the right signature.
        unsafe {
            SetConsoleCtrlHandler(Some(on_console_event), TRUE);
        }
    });
}
