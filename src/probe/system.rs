//! The operating system: distribution, kernel, architecture, glibc,
//! container and WSL markers.
//!
//! Everything is read from files under the host's root, so `--root /host`
//! describes the node rather than the container the doctor runs in, and tests
//! describe any machine with a fixture tree. The glibc version is read from
//! `libc.so.6` itself ("... release version 2.36."), which is what the
//! loader will use, rather than asked of the doctor's own process.

use crate::host::{FileKind, Host, read_bytes};
use crate::snapshot::{Probed, System};
use crate::version::Ver;

const LIBC_CANDIDATES: &[&str] = &[
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/aarch64-linux-gnu/libc.so.6",
    "/usr/lib/aarch64-linux-gnu/libc.so.6",
    "/lib64/libc.so.6",
    "/usr/lib64/libc.so.6",
    "/lib/libc.so.6",
    "/usr/lib/libc.so.6",
];

pub(crate) fn probe(host: &Host) -> System {
    if let Some(version) = host.windows_version() {
        return windows(version);
    }
    let os_release = host
        .read_system_file("/etc/os-release", FileKind::System)
        .or_else(|_| host.read_system_file("/usr/lib/os-release", FileKind::System))
        .ok();
    let field = |key: &str| os_release.as_deref().and_then(|t| os_release_field(t, key));
    let os = match field("PRETTY_NAME").or_else(|| field("NAME")) {
        Some(name) => Probed::Found(name),
        None => Probed::NotEvaluated("no /etc/os-release".into()),
    };
    let kernel = match host.read_system_file("/proc/sys/kernel/osrelease", FileKind::System) {
        Ok(k) if !k.trim().is_empty() => Probed::Found(k.trim().to_string()),
        _ => Probed::NotEvaluated("/proc/sys/kernel/osrelease is not readable".into()),
    };
    let wsl = kernel.found().is_some_and(|k| {
        let k = k.to_ascii_lowercase();
        k.contains("microsoft") || k.contains("wsl")
    });
    System {
        os,
        distro_id: field("ID"),
        distro_version: field("VERSION_ID"),
        kernel,
        arch: std::env::consts::ARCH.to_string(),
        glibc: glibc(host),
        container: container(host),
        wsl,
        l4t: host
            .read_system_file("/etc/nv_tegra_release", FileKind::System)
            .ok()
            .and_then(|t| l4t_release(&t)),
        // Inside a container the release file is the image's; the host's
        // cannot be read from there.
        host_l4t: None,
    }
}

/// A Jetson's L4T release from /etc/nv_tegra_release's first line:
/// "# R32 (release), REVISION: 7.1, GCID: ..." is 32.7.1.
pub(crate) fn l4t_release(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let major = line.trim_start_matches(['#', ' ']).strip_prefix('R')?.split_whitespace().next()?;
    let revision = line.split("REVISION:").nth(1)?.split(',').next()?.trim();
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    (major.chars().all(|c| c.is_ascii_digit()) && numeric(revision)).then(|| format!("{major}.{revision}"))
}

/// Windows: its release from the kernel's version (6.1 is Windows 7; build
/// 22000 and later is Windows 11, which still reports 10.0); no glibc, no
/// container.
fn windows((major, minor, build): (u32, u32, u32)) -> System {
    let release = match (major, minor) {
        (10, 0) if build >= 22000 => "11".to_string(),
        (10, 0) => "10".to_string(),
        (6, 3) => "8.1".to_string(),
        (6, 2) => "8".to_string(),
        (6, 1) => "7".to_string(),
        _ => format!("{major}.{minor}"),
    };
    System {
        os: Probed::Found(format!("Windows {release} (build {build})")),
        distro_id: Some("windows".into()),
        distro_version: Some(release),
        kernel: Probed::Found(format!("Windows NT {major}.{minor}.{build}")),
        arch: std::env::consts::ARCH.to_string(),
        glibc: Probed::NotEvaluated("Windows has no glibc".into()),
        container: None,
        wsl: false,
        l4t: None,
        host_l4t: None,
    }
}

fn os_release_field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
        })
        .filter(|v| !v.is_empty())
}

fn glibc(host: &Host) -> Probed<Ver> {
    for candidate in LIBC_CANDIDATES {
        let path = host.system_path(candidate);
        let Ok(bytes) = read_bytes(&path, FileKind::Library) else { continue };
        if let Some(v) = glibc_version_in(&bytes) {
            return Probed::Found(v);
        }
    }
    Probed::NotEvaluated("no glibc found (a musl-based system, or an unusual layout)".into())
}

/// Finds "release version X.Y" in libc.so.6's banner string.
fn glibc_version_in(bytes: &[u8]) -> Option<Ver> {
    let needle = b"release version ";
    let at = memchr::memmem::find(bytes, needle)? + needle.len();
    let digits: String = bytes[at..]
        .iter()
        .take(16)
        .map(|&b| b as char)
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let v = digits.trim_end_matches('.');
    (!v.is_empty()).then(|| Ver::new(v))
}

fn container(host: &Host) -> Option<String> {
    if host.env_str("KUBERNETES_SERVICE_HOST").is_some() {
        return Some("kubernetes".into());
    }
    if host.system_path("/run/.containerenv").exists() {
        return Some("podman".into());
    }
    if host.system_path("/.dockerenv").exists() {
        return Some("docker".into());
    }
    if let Some(engine) = host.env_str("container") {
        return Some(engine);
    }
    let cgroup = host.read_system_file("/proc/1/cgroup", FileKind::System).unwrap_or_default();
    if cgroup.contains("kubepods") {
        Some("kubernetes".into())
    } else if cgroup.contains("docker") {
        Some("docker".into())
    } else if cgroup.contains("containerd") || cgroup.contains("lxc") {
        Some("container".into())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::time::Duration;

    fn write(root: &Path, path: &str, content: &[u8]) {
        let p = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    #[test]
    fn a_fixture_root_describes_an_ubuntu_container_under_wsl() {
        let t = tempfile::tempdir().unwrap();
        write(
            t.path(),
            "/etc/os-release",
            b"NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n",
        );
        write(t.path(), "/proc/sys/kernel/osrelease", b"5.15.153.1-microsoft-standard-WSL2\n");
        write(t.path(), "/.dockerenv", b"");
        write(
            t.path(),
            "/lib/x86_64-linux-gnu/libc.so.6",
            b"\x7fELF....GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable release version 2.35.\n...",
        );
        let host = Host::new(t.path().into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        let s = probe(&host);
        assert_eq!(s.os, Probed::Found("Ubuntu 22.04.4 LTS".into()));
        assert_eq!(s.distro_id.as_deref(), Some("ubuntu"));
        assert_eq!(s.distro_version.as_deref(), Some("22.04"));
        assert_eq!(s.glibc.found().map(Ver::raw), Some("2.35"));
        assert_eq!(s.container.as_deref(), Some("docker"));
        assert!(s.wsl);
    }

    #[test]
    fn a_jetson_names_its_l4t_release() {
        let line = "# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t186ref, EABI: aarch64, DATE: Sat Feb 19\n";
        assert_eq!(l4t_release(line).as_deref(), Some("32.7.1"));
        assert_eq!(
            l4t_release("# R36 (release), REVISION: 4.0, GCID: 37537400\n").as_deref(),
            Some("36.4.0")
        );
        for garbage in
            ["", "R", "# R32 (release)", "# Rx (release), REVISION: 7.1", "# R32, REVISION: ;", "\u{0}"]
        {
            assert_eq!(l4t_release(garbage), None, "{garbage:?}");
        }
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "/etc/nv_tegra_release", line.as_bytes());
        let host = Host::new(tmp.path().into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        assert_eq!(probe(&host).l4t.as_deref(), Some("32.7.1"));
    }

    #[test]
    fn an_empty_root_is_not_evaluated_rather_than_guessed() {
        let t = tempfile::tempdir().unwrap();
        let host = Host::new(t.path().into(), BTreeMap::new(), "/".into(), Duration::from_secs(1));
        let s = probe(&host);
        assert!(s.os.reason().is_some());
        assert!(s.glibc.reason().is_some());
        assert!(s.kernel.reason().is_some());
        assert_eq!(s.container, None);
    }
}
