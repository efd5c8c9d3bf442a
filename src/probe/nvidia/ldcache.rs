//! Reads the dynamic loader's cache, `/etc/ld.so.cache`, without running
//! `ldconfig -p`.
//!
//! The format glibc writes since 2.32 (and next to the old one before) is a
//! header `glibc-ld.so.cache1.1`, an entry count, the string-table length,
//! then fixed 24-byte entries whose key (soname) and value (path) are offsets
//! from the start of that header. Anything malformed yields what was read so
//! far: the cache is a hint for resolution, never trusted to be well formed.

use std::path::PathBuf;

const MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const HEADER: usize = 48;
const ENTRY: usize = 24;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheEntry {
    pub soname: String,
    pub path: PathBuf,
}

pub(crate) fn parse(bytes: &[u8]) -> Vec<CacheEntry> {
    let Some(start) = memchr::memmem::find(bytes, MAGIC) else { return Vec::new() };
    let data = &bytes[start..];
    let u32_at = |off: usize| data.get(off..off + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let Some(count) = u32_at(20) else { return Vec::new() };
    let string_at = |off: usize| -> Option<String> {
        let tail = data.get(off..)?;
        let end = memchr::memchr(0, tail)?;
        std::str::from_utf8(&tail[..end]).ok().map(str::to_string)
    };
    let mut out = Vec::new();
    // A corrupt count must not make us loop billions of times.
    let max = (data.len().saturating_sub(HEADER)) / ENTRY;
    for i in 0..(count as usize).min(max) {
        let base = HEADER + i * ENTRY;
        let (Some(key), Some(value)) = (u32_at(base + 4), u32_at(base + 8)) else { break };
        if let (Some(soname), Some(path)) = (string_at(key as usize), string_at(value as usize)) {
            out.push(CacheEntry { soname, path: PathBuf::from(path) });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read the files they wrote
mod tests {
    use super::*;

    #[test]
    fn a_cache_written_by_the_real_ldconfig_is_read() {
        let Some(ldconfig) =
            ["/sbin/ldconfig", "/usr/sbin/ldconfig"].into_iter().find(|p| std::path::Path::new(p).exists())
        else {
            return; // not a glibc system
        };
        let t = tempfile::tempdir().unwrap();
        let libdir = t.path().join("lib");
        std::fs::create_dir_all(&libdir).unwrap();
        // ldconfig only lists real ELF shared objects: copy one from the system.
        let libc =
            ["/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"]
                .into_iter()
                .find(|p| std::path::Path::new(p).exists())
                .unwrap();
        std::fs::copy(libc, libdir.join("libc.so.6")).unwrap();
        let conf = t.path().join("ld.so.conf");
        std::fs::write(&conf, format!("{}\n", libdir.display())).unwrap();
        let cache = t.path().join("ld.so.cache");
        #[allow(clippy::disallowed_methods)] // building a fixture, not probing
        std::process::Command::new(ldconfig)
            .arg("-C")
            .arg(&cache)
            .arg("-f")
            .arg(&conf)
            .arg("-X")
            .status()
            .unwrap();
        let entries = parse(&std::fs::read(&cache).unwrap());
        assert!(
            entries.iter().any(|e| e.soname == "libc.so.6" && e.path == libdir.join("libc.so.6")),
            "{entries:?}"
        );
    }

    #[test]
    fn garbage_and_truncation_give_no_entries_and_no_panic() {
        assert!(parse(b"not a cache").is_empty());
        let mut fake = MAGIC.to_vec();
        fake.extend_from_slice(&[0xff; 40]);
        assert!(parse(&fake).is_empty());
    }
}
