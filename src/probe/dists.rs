//! Installed distributions, read from package metadata on disk.
//!
//! This is the fast path: no Python process, so it works when the
//! interpreter itself is broken and takes milliseconds for a thousand
//! packages. The name and version come from the `*.dist-info` directory name
//! (`onnxruntime_gpu-1.17.1.dist-info`), which installers write escaped so the
//! first `-` separates them; `METADATA` is opened only for the packages the
//! matrix watches (to read `Requires-Dist`) or when the directory name is not
//! enough (`foo.egg-info` from a develop install).
//!
//! Site directories are read in import order; the first copy of a name is the
//! one `import` sees and later copies are recorded as shadowed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::host::{FileKind, read_text};
use crate::snapshot::{Distribution, ShadowedCopy, normalize_name};
use crate::version::Ver;

/// Reads every distribution in `site_dirs`. `watched` names (normalised) get
/// their `Requires-Dist` read as well.
pub fn read_distributions(site_dirs: &[PathBuf], watched: &BTreeSet<String>) -> Vec<Distribution> {
    let mut by_name: BTreeMap<String, Distribution> = BTreeMap::new();
    for dir in site_dirs {
        let Ok(entries) = crate::host::read_dir(dir) else { continue };
        let mut names: Vec<String> =
            entries.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect();
        // Deterministic even when one directory holds two copies of a name.
        names.sort();
        for entry in names {
            let Some(meta) = MetaDir::from_entry(dir, &entry) else { continue };
            let Some((name, version)) = meta.name_and_version() else { continue };
            match by_name.get_mut(&name) {
                Some(first) => first.shadowed.push(ShadowedCopy { version, location: dir.clone() }),
                None => {
                    let (requires, installer) = if watched.contains(&name) {
                        (meta.requires(), meta.installer())
                    } else {
                        (Vec::new(), None)
                    };
                    let location = dir.clone();
                    let d = Distribution {
                        name: name.clone(),
                        version,
                        location,
                        requires,
                        shadowed: Vec::new(),
                        installer,
                    };
                    by_name.insert(name, d);
                }
            }
        }
    }
    by_name.into_values().collect()
}

/// A `.dist-info` or `.egg-info` entry in a site directory.
struct MetaDir {
    path: PathBuf,
    stem: String,
    egg: bool,
}

impl MetaDir {
    fn from_entry(dir: &Path, entry: &str) -> Option<Self> {
        let (stem, egg) = if let Some(s) = entry.strip_suffix(".dist-info") {
            (s, false)
        } else if let Some(s) = entry.strip_suffix(".egg-info") {
            (s, true)
        } else {
            return None;
        };
        Some(Self { path: dir.join(entry), stem: stem.to_string(), egg })
    }

    fn name_and_version(&self) -> Option<(String, Ver)> {
        let mut parts = self.stem.splitn(3, '-');
        let name = parts.next().filter(|n| !n.is_empty());
        let version = parts.next().filter(|v| !v.is_empty());
        if let (Some(n), Some(v)) = (name, version) {
            // egg-info names carry a trailing `-py3.8`, which splitn(3) drops.
            return Some((normalize_name(n), Ver::new(v)));
        }
        // Develop installs (`foo.egg-info`) have no version in the name.
        let headers = self.headers()?;
        Some((
            normalize_name(headers.get("name")?.first()?),
            Ver::new(headers.get("version")?.first()?.clone()),
        ))
    }

    fn metadata_file(&self) -> PathBuf {
        if self.egg {
            // An egg-info can be a directory or (old setuptools) a single file.
            if self.path.is_dir() { self.path.join("PKG-INFO") } else { self.path.clone() }
        } else {
            self.path.join("METADATA")
        }
    }

    /// The RFC 822 header block of METADATA / PKG-INFO, keys lower-cased.
    fn headers(&self) -> Option<BTreeMap<String, Vec<String>>> {
        let text = read_text(&self.metadata_file(), FileKind::Metadata).ok()?;
        Some(parse_headers(&text))
    }

    /// The tool that installed it, from the dist-info's INSTALLER file.
    fn installer(&self) -> Option<String> {
        let text = read_text(&self.path.join("INSTALLER"), FileKind::Metadata).ok()?;
        text.lines().next().map(str::trim).filter(|t| !t.is_empty()).map(str::to_string)
    }

    fn requires(&self) -> Vec<String> {
        if self.egg {
            return read_text(&self.path.join("requires.txt"), FileKind::Metadata)
                .map(|t| parse_requires_txt(&t))
                .unwrap_or_default();
        }
        self.headers().and_then(|mut h| h.remove("requires-dist")).unwrap_or_default()
    }
}

fn parse_headers(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            break; // the body (the long description) starts here
        }
        if line.starts_with([' ', '\t']) {
            continue; // a folded continuation; none of the fields we read fold
        }
        if let Some((k, v)) = line.split_once(':') {
            out.entry(k.trim().to_ascii_lowercase()).or_default().push(v.trim().to_string());
        }
    }
    out
}

/// setuptools' `requires.txt`: plain requirements, then `[extra]` and
/// `[:marker]` / `[extra:marker]` sections.
fn parse_requires_txt(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section: Option<Option<String>> = None; // None = top level
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some(match inner.split_once(':') {
                Some(("", marker)) => Some(marker.to_string()),
                _ => None, // an extra: not installed by default
            });
            continue;
        }
        match &section {
            None => out.push(line.to_string()),
            Some(Some(marker)) => out.push(format!("{line}; {marker}")),
            Some(None) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist_info(site: &Path, dir: &str, metadata: &str) {
        let d = site.join(dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("METADATA"), metadata).unwrap();
    }

    #[test]
    fn names_and_versions_come_from_the_directory_name() {
        let t = tempfile::tempdir().unwrap();
        dist_info(t.path(), "onnxruntime_gpu-1.17.1.dist-info", "");
        dist_info(t.path(), "torch-2.1.0+cu118.dist-info", "");
        std::fs::create_dir_all(t.path().join("numpy")).unwrap();
        let d = read_distributions(&[t.path().into()], &BTreeSet::new());
        let got: Vec<_> = d.iter().map(|d| (d.name.as_str(), d.version.raw())).collect();
        assert_eq!(got, vec![("onnxruntime-gpu", "1.17.1"), ("torch", "2.1.0+cu118")]);
    }

    #[test]
    fn watched_packages_get_their_requires_dist_and_the_body_is_ignored() {
        let t = tempfile::tempdir().unwrap();
        dist_info(
            t.path(),
            "onnx-1.13.0.dist-info",
            "Metadata-Version: 2.1\nName: onnx\nVersion: 1.13.0\nRequires-Dist: numpy (>=1.16.6)\n\
             Requires-Dist: protobuf (<4,>=3.20.2)\n\nRequires-Dist: not-a-header\n",
        );
        let watched = BTreeSet::from(["onnx".to_string()]);
        let d = read_distributions(&[t.path().into()], &watched);
        assert_eq!(d[0].requires, vec!["numpy (>=1.16.6)", "protobuf (<4,>=3.20.2)"]);
    }

    #[test]
    fn the_first_copy_on_the_path_wins_and_later_ones_are_shadowed() {
        let user = tempfile::tempdir().unwrap();
        let venv = tempfile::tempdir().unwrap();
        dist_info(user.path(), "onnx-1.12.0.dist-info", "");
        dist_info(venv.path(), "onnx-1.17.0.dist-info", "");
        let d = read_distributions(&[user.path().into(), venv.path().into()], &BTreeSet::new());
        assert_eq!(d[0].version.raw(), "1.12.0");
        assert_eq!(d[0].shadowed[0].version.raw(), "1.17.0");
    }

    #[test]
    fn develop_egg_info_without_a_version_in_its_name_reads_pkg_info() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("My_Pkg.egg-info");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("PKG-INFO"), "Name: My_Pkg\nVersion: 0.3.dev0\n").unwrap();
        std::fs::write(
            d.join("requires.txt"),
            "numpy\n[test]\npytest\n[:python_version < \"3.8\"]\nimportlib-metadata\n",
        )
        .unwrap();
        let watched = BTreeSet::from(["my-pkg".to_string()]);
        let got = read_distributions(&[t.path().into()], &watched);
        assert_eq!(got[0].name, "my-pkg");
        assert_eq!(got[0].version.raw(), "0.3.dev0");
        assert_eq!(got[0].requires, vec!["numpy", "importlib-metadata; python_version < \"3.8\""]);
    }

    #[test]
    fn garbage_entries_and_unreadable_metadata_are_skipped() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".dist-info")).unwrap();
        std::fs::create_dir_all(t.path().join("broken.dist-info")).unwrap();
        let d = read_distributions(&[t.path().into(), "/nonexistent".into()], &BTreeSet::new());
        assert!(d.is_empty());
    }
}
