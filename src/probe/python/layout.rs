//! Where an interpreter keeps its packages, worked out without running it.
//!
//! `--fast` and the fallback for a broken interpreter both need the site
//! directories of an environment from the file system alone. The layouts are
//! the standard ones: a venv's `pyvenv.cfg` (which names the Python version
//! and whether the base interpreter's packages are visible), conda and
//! system prefixes with `lib/pythonX.Y/site-packages`, Debian's
//! `dist-packages`, the user site, and `PYTHONPATH` first of all.

use std::path::{Path, PathBuf};

use crate::host::{FileKind, Host, read_text};
use crate::snapshot::EnvKind;
use crate::version::Ver;

use super::discovery::venv_root;

#[derive(Debug)]
pub(crate) struct Layout {
    pub version: Option<Ver>,
    pub kind: EnvKind,
    pub site_dirs: Vec<PathBuf>,
}

/// Guesses the layout of the environment `executable` belongs to.
pub(crate) fn guess(host: &Host, executable: &Path) -> Result<Layout, String> {
    let resolved = through_pyenv_shim(host, executable);
    let executable = resolved.as_deref().unwrap_or(executable);
    let pythonpath: Vec<PathBuf> = host
        .env_str("PYTHONPATH")
        .map(|p| std::env::split_paths(&p).filter(|d| d.is_dir()).collect())
        .unwrap_or_default();
    let mut site_dirs = Vec::new();

    if let Some(env) = venv_root(executable) {
        let cfg = read_text(&env.join("pyvenv.cfg"), FileKind::System).unwrap_or_default();
        let get = |key: &str| {
            cfg.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        // `version = 3.11.7` (venv) or `version_info = 3.11.7.final.0` (virtualenv, uv).
        let version = get("version_info").or_else(|| get("version")).map(|v| {
            let numeric: String = v.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            Ver::new(numeric.trim_end_matches('.'))
        });
        let kind = if get("uv").is_some() { EnvKind::Uv } else { EnvKind::Venv };
        let xy = version.as_ref().and_then(major_minor);
        site_dirs.extend(lib_site_dirs(&env, xy.as_deref()));
        if get("include-system-site-packages").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            && let Some(home) = get("home")
        {
            // `home` is the base interpreter's directory: `/usr/bin` below
            // its prefix on Unix, the prefix itself on Windows.
            let home = PathBuf::from(home);
            if home.join("Lib").is_dir() {
                site_dirs.extend(lib_site_dirs(&home, xy.as_deref()));
            } else if let Some(base) = home.parent() {
                site_dirs.extend(lib_site_dirs(base, xy.as_deref()));
            }
        }
        return finish(version, kind, pythonpath, site_dirs, executable);
    }

    let real = crate::host::canonicalize(executable).map_err(|e| format!("{}: {e}", executable.display()))?;
    // A Windows install (python.org's, conda's) keeps python.exe in its
    // prefix, beside `Lib`; a Unix one keeps it in `bin/`.
    let windows = real.parent().filter(|dir| dir.join("Lib").is_dir());
    let prefix = windows
        .or_else(|| real.parent().and_then(Path::parent))
        .ok_or_else(|| format!("{} is not inside a Python installation", real.display()))?;
    let kind = if prefix.join("conda-meta").is_dir() { EnvKind::Conda } else { EnvKind::System };
    let xy = file_name_version(&real).or_else(|| single_lib_version(prefix)).or_else(|| dll_version(prefix));
    let version = xy.as_deref().map(Ver::new);
    if let Some(xy) = xy.as_deref()
        && host.env_str("PYTHONNOUSERSITE").is_none()
    {
        if windows.is_some() {
            // %APPDATA%\Python\Python311\site-packages
            if let Some(appdata) = host.env_str("APPDATA") {
                let nodot = xy.replace('.', "");
                site_dirs.push(
                    Path::new(&appdata).join("Python").join(format!("Python{nodot}")).join("site-packages"),
                );
            }
        } else if let Some(home) = host.env_str("HOME") {
            site_dirs.push(Path::new(&home).join(format!(".local/lib/python{xy}/site-packages")));
        }
    }
    site_dirs.extend(lib_site_dirs(prefix, xy.as_deref()));
    if prefix == Path::new("/usr") {
        // Debian and Ubuntu: pip installs to /usr/local, apt to /usr/lib/python3.
        if let Some(xy) = xy.as_deref() {
            site_dirs.push(PathBuf::from(format!("/usr/local/lib/python{xy}/dist-packages")));
        }
        site_dirs.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    }
    finish(version, kind, pythonpath, site_dirs, executable)
}

/// `~/.pyenv/shims/python3` is a script that picks an interpreter at run
/// time: `PYENV_VERSION`, else `.python-version` in the working directory or
/// a parent, else `$PYENV_ROOT/version`. Follow the same choice.
fn through_pyenv_shim(host: &Host, executable: &Path) -> Option<PathBuf> {
    let shims = executable.parent()?;
    if shims.file_name()? != "shims" {
        return None;
    }
    let root = shims.parent()?;
    let versions = root.join("versions");
    if !versions.is_dir() {
        return None;
    }
    let first_word = |text: String| text.split_whitespace().next().map(str::to_string);
    let name = host
        .env_str("PYENV_VERSION")
        .and_then(&first_word)
        .or_else(|| {
            host.cwd().ancestors().find_map(|d| {
                read_text(&d.join(".python-version"), FileKind::System).ok().and_then(first_word)
            })
        })
        .or_else(|| read_text(&root.join("version"), FileKind::System).ok().and_then(first_word))?;
    let candidate = versions.join(name).join("bin").join(executable.file_name()?);
    candidate.exists().then_some(candidate)
}

fn finish(
    version: Option<Ver>,
    kind: EnvKind,
    pythonpath: Vec<PathBuf>,
    site_dirs: Vec<PathBuf>,
    exe: &Path,
) -> Result<Layout, String> {
    let site_dirs = site_dirs.into_iter().filter(|d| d.is_dir()).flat_map(|d| with_pth_dirs(&d));
    let site_dirs = super::distinct_dirs(pythonpath.into_iter().chain(site_dirs));
    if site_dirs.is_empty() {
        return Err(format!(
            "found no site-packages for {} without running it; pass --python with the real interpreter",
            exe.display()
        ));
    }
    Ok(Layout { version, kind, site_dirs })
}

/// The most `.pth` files of one site directory that are read.
const PTH_FILES: usize = 1000;

/// A site directory followed by the directories its `.pth` files add, as
/// Python's `site` module adds them at start-up: each line that is not a
/// comment and not an `import` statement names a directory, relative to
/// the site directory, added when it exists. (The `import` lines run code;
/// without running the interpreter they are skipped.) An environment that
/// extends another through a `.pth` file (a venv layered on a shared
/// torch) then has the same packages with `--fast` as without.
fn with_pth_dirs(site: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![site.to_path_buf()];
    let Ok(entries) = crate::host::read_dir(site) else { return dirs };
    let mut pth: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "pth")
                && !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    pth.sort();
    for file in pth.iter().take(PTH_FILES) {
        let Ok(text) = read_text(file, FileKind::System) else { continue };
        for line in text.lines() {
            let line = line.trim_end();
            if line.is_empty()
                || line.starts_with('#')
                || line.starts_with("import ")
                || line.starts_with("import\t")
            {
                continue;
            }
            let dir = site.join(line);
            if dir.is_dir() {
                dirs.push(dir);
            }
        }
    }
    dirs
}

fn major_minor(v: &Ver) -> Option<String> {
    match v.release() {
        [major, minor, ..] => Some(format!("{major}.{minor}")),
        _ => None,
    }
}

/// `python3.11` → `3.11`.
fn file_name_version(exe: &Path) -> Option<String> {
    let name = exe.file_name()?.to_str()?;
    let v = name.strip_prefix("python")?;
    (v.contains('.') && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_string())
}

/// The one `lib/pythonX.Y` of a prefix, when there is exactly one.
fn single_lib_version(prefix: &Path) -> Option<String> {
    let mut found = crate::host::read_dir(prefix.join("lib"))
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| file_name_version(Path::new(&n)));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// `python311.dll` beside a Windows python.exe → `3.11`.
fn dll_version(prefix: &Path) -> Option<String> {
    crate::host::read_dir(prefix).ok()?.filter_map(|e| e.ok()?.file_name().into_string().ok()).find_map(|n| {
        let digits = n.to_ascii_lowercase().strip_prefix("python")?.strip_suffix(".dll")?.to_string();
        let (major, minor) = digits.split_at_checked(1)?;
        (major == "3" && !minor.is_empty() && minor.chars().all(|c| c.is_ascii_digit()))
            .then(|| format!("{major}.{minor}"))
    })
}

/// The site directories of a prefix: `lib/pythonX.Y/site-packages` (and
/// Debian's `dist-packages`, and `lib64`) on Unix, `Lib/site-packages` on
/// Windows.
fn lib_site_dirs(prefix: &Path, xy: Option<&str>) -> Vec<PathBuf> {
    let mut out = vec![prefix.join("Lib").join("site-packages")];
    for lib in ["lib", "lib64"] {
        let libdir = prefix.join(lib);
        let versions: Vec<String> = match xy {
            Some(xy) => vec![format!("python{xy}")],
            None => crate::host::read_dir(&libdir)
                .map(|rd| {
                    let mut v: Vec<String> = rd
                        .filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .filter(|n| n.starts_with("python3"))
                        .collect();
                    v.sort();
                    v
                })
                .unwrap_or_default(),
        };
        for v in versions {
            for leaf in ["site-packages", "dist-packages"] {
                let d = libdir.join(&v).join(leaf);
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::time::Duration;

    #[test]
    fn a_venv_layout_comes_from_pyvenv_cfg() {
        let t = tempfile::tempdir().unwrap();
        let env = t.path();
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::create_dir_all(env.join("lib/python3.11/site-packages")).unwrap();
        std::fs::write(env.join("bin/python"), "").unwrap();
        std::fs::write(
            env.join("pyvenv.cfg"),
            "home = /usr/bin\nversion_info = 3.11.7.final.0\nuv = 0.5.1\n",
        )
        .unwrap();
        let host = Host::new("/".into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        let l = guess(&host, &env.join("bin/python")).unwrap();
        assert_eq!(l.kind, EnvKind::Uv);
        assert_eq!(l.version.unwrap().release(), &[3, 11, 7]);
        assert_eq!(l.site_dirs, vec![env.join("lib/python3.11/site-packages")]);
    }

    #[test]
    fn a_pyenv_shim_is_followed_to_the_version_it_would_run() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join(".pyenv");
        std::fs::create_dir_all(root.join("shims")).unwrap();
        std::fs::write(root.join("shims/python3"), "#!/bin/bash\n").unwrap();
        std::fs::create_dir_all(root.join("versions/3.10.14/bin")).unwrap();
        std::fs::create_dir_all(root.join("versions/3.10.14/lib/python3.10/site-packages")).unwrap();
        std::fs::write(root.join("versions/3.10.14/bin/python3"), "").unwrap();
        std::fs::write(root.join("version"), "3.10.14\n").unwrap();
        let host = Host::new("/".into(), BTreeMap::new(), t.path().into(), Duration::from_secs(1));
        let l = guess(&host, &root.join("shims/python3")).unwrap();
        assert_eq!(l.version.unwrap().raw(), "3.10");
        assert_eq!(l.site_dirs, vec![root.join("versions/3.10.14/lib/python3.10/site-packages")]);
    }

    #[test]
    fn an_interpreter_without_any_site_directory_is_an_error_that_names_the_remedy() {
        let t = tempfile::tempdir().unwrap();
        let exe = t.path().join("bin/python3");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, "").unwrap();
        let host = Host::new("/".into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        let err = guess(&host, &exe).unwrap_err();
        assert!(err.contains("--python"), "{err}");
    }

    #[test]
    fn pth_files_add_the_directories_python_would_add_and_run_nothing() {
        let t = tempfile::tempdir().unwrap();
        let env = t.path().join("env");
        let site = env.join("lib/python3.11/site-packages");
        let shared = t.path().join("shared/site-packages");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::create_dir_all(&site).unwrap();
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::write(env.join("bin/python"), "").unwrap();
        std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\nversion = 3.11.7\n").unwrap();
        let line = format!(
            "# a comment\nimport os; os.system('touch /tmp/x')\n{}\n../../../nowhere\n",
            shared.display()
        );
        std::fs::write(site.join("shared.pth"), line).unwrap();
        std::fs::write(site.join(".hidden.pth"), "../../..\n").unwrap();
        let host = Host::new("/".into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        let l = guess(&host, &env.join("bin/python")).unwrap();
        assert_eq!(l.site_dirs, vec![site, shared]);
    }
}
