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
    if cfg!(windows)
        && let Some(default) = host.which("py").and_then(|py| py_launcher_default(host, &py))
    {
        push(default, PythonSource::PyLauncher);
    }
    // Windows' Store placeholders (`python.exe` in WindowsApps) only matter
    // when nothing else was found: then the report says what they are.
    if found.iter().any(|c| !is_store_alias(&c.executable)) {
        found.retain(|c| c.source != PythonSource::SearchPath || !is_store_alias(&c.executable));
    }
    found
}

/// Whether `exe` is one of the App Execution Aliases Windows puts in
/// `%LOCALAPPDATA%\Microsoft\WindowsApps`: the Store's placeholder for a
/// Python that is not installed, or the entry point of the Store's Python.
pub(crate) fn is_store_alias(exe: &Path) -> bool {
    let text = exe.to_string_lossy().to_ascii_lowercase().replace('/', "\\");
    text.contains("\\microsoft\\windowsapps\\")
}

/// The interpreter the `py` launcher runs by default, from `py -0p`.
fn py_launcher_default(host: &Host, py: &Path) -> Option<PathBuf> {
    let out = host.run(py, &["-0p".into()]).ok().filter(|o| o.success())?;
    parse_py_list(&out.stdout_lossy())
}

/// The default interpreter in `py -0p`'s list (marked `*`), else the first.
/// The launcher of Python 3.11 and later writes ` -V:3.12 *   C:\...\python.exe`,
/// older ones ` -3.9-64   C:\...\python.exe *`; paths may hold spaces.
pub(crate) fn parse_py_list(text: &str) -> Option<PathBuf> {
    let mut first = None;
    for line in text.lines() {
        let bytes = line.as_bytes();
        let Some(at) = (1..bytes.len())
            .find(|&i| {
                bytes[i] == b':' && bytes[i - 1].is_ascii_alphabetic() && bytes.get(i + 1) == Some(&b'\\')
            })
            .map(|i| i - 1)
        else {
            continue;
        };
        let (head, path) = line.split_at(at);
        let path = path.trim_end();
        let (path, star_after) = match path.strip_suffix('*') {
            Some(p) => (p.trim_end(), true),
            None => (path, false),
        };
        if !path.to_ascii_lowercase().ends_with(".exe") {
            continue;
        }
        let exe = PathBuf::from(path);
        if star_after || head.contains(" * ") || head.trim_end().ends_with('*') {
            return Some(exe);
        }
        first.get_or_insert(exe);
    }
    first
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

    #[test]
    fn the_store_placeholder_is_dropped_when_a_real_python_is_on_path() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let store = t.path().join("AppData/Local/Microsoft/WindowsApps");
        let real = t.path().join("Python311");
        for (dir, name) in [(&store, "python3"), (&real, "python")] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(name), "").unwrap();
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::env::join_paths([&store, &real]).unwrap();
        let h = host(&[("PATH", Path::new(&path))], t.path());
        let found = discover(&h, &[]);
        assert_eq!(
            found,
            vec![Candidate { executable: real.join("python"), source: PythonSource::SearchPath }]
        );
        // Alone, it stays: the report then says what it is.
        let h = host(&[("PATH", &store)], t.path());
        assert_eq!(discover(&h, &[]).len(), 1);
    }

    #[test]
    fn the_py_launchers_default_is_read_from_either_format() {
        let new = " -V:3.12 *        C:\\Users\\Jo Doe\\AppData\\Local\\Programs\\Python\\Python312\\python.exe\r\n \
                   -V:3.11          C:\\Python311\\python.exe\r\n";
        assert_eq!(
            parse_py_list(new),
            Some(PathBuf::from("C:\\Users\\Jo Doe\\AppData\\Local\\Programs\\Python\\Python312\\python.exe"))
        );
        let old = "Installed Pythons found by py Launcher for Windows\n \
                   -3.10-64       C:\\Python310\\python.exe\n -3.9-64        D:\\Py39\\python.exe *\n";
        assert_eq!(parse_py_list(old), Some(PathBuf::from("D:\\Py39\\python.exe")));
        assert_eq!(
            parse_py_list(" -V:3.11  C:\\Python311\\python.exe\n"),
            Some(PathBuf::from("C:\\Python311\\python.exe"))
        );
        assert_eq!(parse_py_list("No installed Pythons found!\n"), None);
        assert_eq!(parse_py_list("garbage: C:\\x\\notes.txt\n"), None);
    }
}
