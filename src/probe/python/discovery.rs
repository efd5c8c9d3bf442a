//! Which Python interpreters to judge, and why each one.
//!
//! The order is the order of intent: an interpreter the user named, then the
//! environment the user activated, then a project's `.venv`, then whatever
//! `python3`/`python` on `PATH` runs. Each candidate remembers its
//! [`PythonSource`] so the report can say why it looked there.
//!
//! Duplicates are dropped by identity, not by path string. A virtual
//! environment's `bin/python` is a symlink to the base interpreter, so its
//! real path is not its identity; the environment directory is. Outside a
//! venv the real path of the executable is.

use std::path::{Path, PathBuf};

use crate::host::Host;
use crate::snapshot::PythonSource;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub executable: PathBuf,
    pub source: PythonSource,
}

/// Finds the interpreters to probe, in priority order, without duplicates.
pub(crate) fn discover(host: &Host, explicit: &[PathBuf]) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = Vec::new();
    let mut push = |executable: PathBuf, source: PythonSource| {
        let id = identity(&executable);
        if !found.iter().any(|c| identity(&c.executable) == id) {
            found.push(Candidate { executable, source });
        }
    };

    if !explicit.is_empty() {
        for p in explicit {
            push(interpreter_in(p), PythonSource::Flag);
        }
        return found;
    }
    if let Some(venv) = host.env_str("VIRTUAL_ENV") {
        push(interpreter_in(Path::new(&venv)), PythonSource::VirtualEnv);
    }
    if let Some(conda) = host.env_str("CONDA_PREFIX") {
        push(interpreter_in(Path::new(&conda)), PythonSource::CondaPrefix);
    }
    let dot_venv = host.cwd().join(".venv");
    if dot_venv.join("pyvenv.cfg").is_file() {
        push(interpreter_in(&dot_venv), PythonSource::DotVenv);
    }
    for name in ["python3", "python"] {
        if let Some(p) = host.which(name) {
            push(p, PythonSource::SearchPath);
        }
    }
    found
}

/// Where an environment directory keeps its interpreter: `bin/` on Unix,
/// `Scripts\` in a Windows venv, the prefix itself in a Windows conda
/// environment or python.org install.
const INTERPRETERS_IN_ENV: [&[&str]; 5] = [
    &["bin", "python"],
    &["bin", "python3"],
    &["Scripts", "python.exe"],
    &["python.exe"],
    &["Scripts", "python"],
];

/// `--python` accepts an executable or an environment directory.
fn interpreter_in(path: &Path) -> PathBuf {
    if path.is_dir() {
        // Joined part by part, so that a Windows path keeps one separator.
        let join = |parts: &[&str]| parts.iter().fold(path.to_path_buf(), |p, part| p.join(part));
        for parts in INTERPRETERS_IN_ENV {
            let exe = join(parts);
            if exe.exists() {
                return exe;
            }
        }
        return join(if cfg!(windows) { &["Scripts", "python.exe"] } else { &["bin", "python"] });
    }
    path.to_path_buf()
}

/// The environment directory of a venv interpreter, else its real path.
fn identity(executable: &Path) -> PathBuf {
    if let Some(env) = venv_root(executable) {
        return crate::host::canonicalize(&env).unwrap_or(env);
    }
    crate::host::canonicalize(executable).unwrap_or_else(|_| executable.to_path_buf())
}

/// `<env>/bin/python` (`<env>\\Scripts\\python.exe`) with `<env>/pyvenv.cfg`
/// beside `bin` (`Scripts`).
pub(crate) fn venv_root(executable: &Path) -> Option<PathBuf> {
    let env = executable.parent()?.parent()?;
    env.join("pyvenv.cfg").is_file().then(|| env.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    fn make_venv(dir: &Path, base: &Path) -> PathBuf {
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        symlink(base, dir.join("bin/python")).unwrap();
        dir.join("bin/python")
    }

    fn host(env: &[(&str, &Path)], cwd: &Path) -> Host {
        let env: BTreeMap<OsString, OsString> =
            env.iter().map(|(k, v)| (OsString::from(k), v.as_os_str().to_owned())).collect();
        Host::new("/".into(), env, cwd.into(), Duration::from_secs(1))
    }

    #[test]
    fn active_venv_comes_first_and_is_not_merged_with_its_base_interpreter() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("usr/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let base = bin.join("python3");
        std::fs::write(&base, "").unwrap();
        let venv = t.path().join("venv");
        make_venv(&venv, &base);
        let h = host(&[("VIRTUAL_ENV", &venv), ("PATH", &bin)], t.path());
        let found = discover(&h, &[]);
        let sources: Vec<_> = found.iter().map(|c| c.source).collect();
        // The base python3 is not executable here, so `which` skips it.
        assert_eq!(sources, vec![PythonSource::VirtualEnv]);
        assert_eq!(found[0].executable, venv.join("bin/python"));
    }

    #[test]
    fn dot_venv_in_the_working_directory_is_found_and_deduplicated_with_virtual_env() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("python3");
        std::fs::write(&base, "").unwrap();
        let venv = t.path().join(".venv");
        make_venv(&venv, &base);
        let h = host(&[("VIRTUAL_ENV", &venv)], t.path());
        let found = discover(&h, &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].source, PythonSource::VirtualEnv);
    }

    #[test]
    fn explicit_pythons_replace_discovery_and_accept_environment_directories() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("python3");
        std::fs::write(&base, "").unwrap();
        let venv = t.path().join("env");
        make_venv(&venv, &base);
        let h = host(&[("VIRTUAL_ENV", &venv)], t.path());
        let found = discover(&h, &[venv.clone(), venv.join("bin/python")]);
        assert_eq!(
            found,
            vec![Candidate { executable: venv.join("bin/python"), source: PythonSource::Flag }]
        );
    }
}
