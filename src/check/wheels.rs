//! pip's "no wheel here" read against what the package index serves.
//!
//! pip falls back to a source build, or lists only older releases, when no
//! wheel of the wanted release fits this interpreter and platform. Where
//! `matrix/published.yaml` shows that the release does have a wheel for this
//! Python on this platform (on every platform the matrix knows, when the
//! paste names none), the wheel was there and this pip did not accept its
//! platform tag: pip older than the manylinux tag, the usual cause.

use pep440_rs::Version;

use super::Finding;
use crate::matrix::{BuiltinCheck, Matrix, Rule, WheelPlatform};
use crate::snapshot::{Snapshot, normalize_name};
use crate::version::Ver;

/// The signatures whose finding this one replaces, with the groups naming
/// the package each captures (the first that matched counts).
const READS: &[(&str, &[&str])] = &[
    ("error-pip-version-not-for-python", &["package"]),
    (
        "error-pip-building-from-source",
        &["package", "projects", "sdist_package", "pip_dir", "uv_built", "built", "collected"],
    ),
];

/// The finding that replaces `rule`'s, when the release pip wanted has a
/// wheel for this Python on this platform: `None` otherwise, or when the
/// paste does not say enough to tell.
pub(super) fn older_pip(
    rule: &Rule,
    caps: &regex::Captures<'_>,
    snapshot: &Snapshot,
    matrix: &Matrix,
) -> Option<Finding> {
    let (_, groups) = READS.iter().find(|(code, _)| *code == rule.code)?;
    let package = normalize_name(groups.iter().find_map(|g| caps.name(g))?.as_str());
    let env = snapshot.pythons.first()?;
    let python = env.version.found()?;
    let version = match caps.name("version") {
        Some(v) => {
            // pip listed releases: only older ones say the new wheels were
            // passed over (newer ones say this Python is too new).
            let newest = caps.name("last").or_else(|| caps.name("first"))?;
            let (wanted, listed) = (Ver::new(v.as_str()), Ver::new(newest.as_str()));
            if listed.parsed()? >= wanted.parsed()? {
                return None;
            }
            wanted
        }
        None => {
            env.distributions.found()?.iter().find(|d| normalize_name(&d.name) == package)?.version.clone()
        }
    };
    let platforms = platforms(snapshot)?;
    if !platforms.iter().all(|p| has_wheel(matrix, &package, &version, python, *p) == Some(true)) {
        return None;
    }
    if glibc_too_old(matrix, &package, &version, snapshot) {
        return None;
    }
    let builtin = matrix.builtin(BuiltinCheck::PipOlderThanWheelTags);
    let named: Vec<&str> = platforms.iter().map(|p| platform_name(*p)).collect();
    let params = [
        ("package", package.clone()),
        ("version", version.raw().to_string()),
        ("python", python.raw().to_string()),
        ("platform", named.join(", ")),
    ];
    Some(super::builtin_finding_with_row(builtin, None, &params, None))
}

/// The platforms the paste's system may be: the one it names, or every
/// one the matrix knows wheels for when it names none. `None` for a system
/// the matrix has no wheel lists of (macOS, 32-bit).
fn platforms(snapshot: &Snapshot) -> Option<Vec<WheelPlatform>> {
    let all = vec![WheelPlatform::LinuxX86_64, WheelPlatform::LinuxAarch64, WheelPlatform::WindowsX86_64];
    let Some(system) = snapshot.system.found() else { return Some(all) };
    let arch = system.arch.to_ascii_lowercase();
    let os = system.os.found().map(|o| o.to_ascii_lowercase());
    let platform = match (os.as_deref(), arch.as_str()) {
        (Some(os), _)
            if os.contains("windows") && (arch.is_empty() || arch == "unknown" || arch.contains("64")) =>
        {
            WheelPlatform::WindowsX86_64
        }
        (Some(os), _) if os.contains("windows") => return None,
        (Some(os), _) if !(system.distro_id.is_some() || LINUX.iter().any(|l| os.contains(l))) => {
            return None;
        }
        (_, "aarch64" | "arm64") => WheelPlatform::LinuxAarch64,
        (_, "x86_64" | "amd64") => WheelPlatform::LinuxX86_64,
        (None, _) => return Some(all),
        (Some(_), a) if a.is_empty() || a == "unknown" => WheelPlatform::LinuxX86_64,
        _ => return None,
    };
    Some(vec![platform])
}

/// Words that name a Linux system in an OS field.
const LINUX: &[&str] = &[
    "linux", "ubuntu", "debian", "centos", "fedora", "red hat", "rhel", "rocky", "alma", "suse", "mint",
    "manjaro",
];

fn platform_name(p: WheelPlatform) -> &'static str {
    match p {
        WheelPlatform::LinuxX86_64 => "Linux x86_64",
        WheelPlatform::LinuxAarch64 => "Linux aarch64",
        WheelPlatform::WindowsX86_64 => "Windows x86_64",
    }
}

/// Whether the index serves a wheel of `name` `version` for `python` on
/// `platform`; `None` where the matrix keeps no list of that package there.
fn has_wheel(
    matrix: &Matrix,
    name: &str,
    version: &Ver,
    python: &Ver,
    platform: WheelPlatform,
) -> Option<bool> {
    let table = matrix
        .tables
        .values()
        .find(|t| t.published == Some(platform) && t.key.split('|').any(|k| k.trim() == name))?;
    let python = python.parsed()?;
    let python = Version::new(python.release().iter().take(2).copied());
    Some(table.rows.iter().any(|row| {
        row.spec.contains(version)
            && row
                .values
                .get("python")
                .is_some_and(|p| p.parse::<pep440_rs::VersionSpecifiers>().is_ok_and(|s| s.contains(&python)))
    }))
}

/// Whether the paste's glibc is older than the release's Linux wheels need
/// (`<package>-linux-glibc`): then pip was right to refuse them.
fn glibc_too_old(matrix: &Matrix, name: &str, version: &Ver, snapshot: &Snapshot) -> bool {
    let Some(glibc) = snapshot.system.found().and_then(|s| s.glibc.found()).and_then(Ver::parsed) else {
        return false;
    };
    let Some(table) = matrix.tables.get(&format!("{name}-linux-glibc")) else { return false };
    table.rows.iter().filter(|r| r.spec.contains(version)).any(|r| {
        r.values
            .get("glibc")
            .and_then(|g| Ver::new(g.as_str()).parsed().cloned())
            .is_some_and(|need| *glibc < need)
    })
}
