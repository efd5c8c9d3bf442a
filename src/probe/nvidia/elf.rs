//! Which file the dynamic loader would load for each dependency of a
//! library, worked out the way glibc's ld.so does it, without loading
//! anything.
//!
//! For each object: its `DT_RPATH` (only when it has no `DT_RUNPATH`),
//! `LD_LIBRARY_PATH`, its `DT_RUNPATH`, the loader cache, then the default
//! directories; `$ORIGIN` is the object's own directory. A dependency
//! already found for another object is not searched again (the loader
//! reuses a loaded soname). Only the headers, the dynamic section and its
//! strings are read, so a 1 GB `libtorch_cuda.so` costs a few kilobytes.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use goblin::elf::Elf;
use goblin::elf::dynamic::{DT_NEEDED, DT_RPATH, DT_RUNPATH};
use goblin::elf::program_header::ProgramHeader;

use crate::host::read_at_most;
use crate::snapshot::nvidia::{Resolution, Unresolved};

/// The dynamic-section facts of one ELF file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dynamics {
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
}

/// The most bytes of program headers or of a dynamic section read; real
/// ones are a few kilobytes.
const MAX_TABLE: u64 = 1024 * 1024;
/// The longest string read from the dynamic string table (a path list).
const MAX_STRING: usize = 64 * 1024;

/// Reads DT_NEEDED, DT_RPATH and DT_RUNPATH; `Err` for a file that is not a
/// readable ELF object.
///
/// Only what is needed is read, with positioned reads: the ELF header, the
/// program headers, the dynamic section and the strings it names. A 1 GB
/// `libtorch_cuda.so` costs a few kilobytes, and a library truncated while
/// it is read is an error, not a crash (a memory map would fault).
pub(crate) fn read_dynamics(path: &Path) -> Result<Dynamics, String> {
    let file = crate::host::open_regular(path).map_err(|e| e.to_string())?;
    let read = |offset: u64, len: u64| -> Result<Vec<u8>, String> {
        let mut buf = vec![0u8; len.min(MAX_TABLE) as usize];
        let n = read_at_most(&file, &mut buf, offset).map_err(|e| e.to_string())?;
        buf.truncate(n);
        Ok(buf)
    };
    let head = read(0, 64)?;
    let header = Elf::parse_header(&head).map_err(|e| format!("not an ELF file: {e}"))?;
    let ctx = goblin::container::Ctx::new(
        if header.e_ident[4] == goblin::elf::header::ELFCLASS64 {
            goblin::container::Container::Big
        } else {
            goblin::container::Container::Little
        },
        if header.e_ident[5] == goblin::elf::header::ELFDATA2MSB {
            goblin::container::Endian::Big
        } else {
            goblin::container::Endian::Little
        },
    );
    let table = read(header.e_phoff, u64::from(header.e_phnum) * u64::from(header.e_phentsize))?;
    let phdrs = ProgramHeader::parse(&table, 0, header.e_phnum as usize, ctx)
        .map_err(|e| format!("bad program headers: {e}"))?;
    let Some(dynamic) = phdrs.iter().find(|p| p.p_type == goblin::elf::program_header::PT_DYNAMIC) else {
        return Ok(Dynamics::default()); // a static object
    };
    let section = read(dynamic.p_offset, dynamic.p_filesz)?;
    let entries = dynamic_entries(&section, ctx);
    let value = |tag| entries.iter().find(|(t, _)| *t == tag).map(|(_, v)| *v);
    let strtab = value(goblin::elf::dynamic::DT_STRTAB)
        .and_then(|vaddr| file_offset(&phdrs, vaddr))
        .ok_or("the dynamic section has no string table")?;
    let strsz = value(goblin::elf::dynamic::DT_STRSZ).unwrap_or(u64::MAX);
    let string = |at: u64| -> Option<String> {
        if at >= strsz {
            return None;
        }
        let bytes = read(strtab + at, (MAX_STRING as u64).min(strsz - at)).ok()?;
        let end = bytes.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
    };
    let mut d = Dynamics::default();
    for (tag, val) in &entries {
        if ![DT_NEEDED, DT_RPATH, DT_RUNPATH].contains(tag) {
            continue;
        }
        let Some(s) = string(*val) else { continue };
        match *tag {
            DT_NEEDED => d.needed.push(s),
            DT_RPATH => d.rpath.extend(s.split(':').filter(|p| !p.is_empty()).map(str::to_string)),
            _ => d.runpath.extend(s.split(':').filter(|p| !p.is_empty()).map(str::to_string)),
        }
    }
    Ok(d)
}

/// The (tag, value) entries of a dynamic section, up to DT_NULL.
fn dynamic_entries(section: &[u8], ctx: goblin::container::Ctx) -> Vec<(u64, u64)> {
    let size = if ctx.is_big() { 8 } else { 4 };
    let little = ctx.is_little_endian();
    let word = |at: usize| -> Option<u64> {
        let bytes = section.get(at..at + size)?;
        let mut b = [0u8; 8];
        if little {
            b[..size].copy_from_slice(bytes);
            Some(u64::from_le_bytes(b))
        } else {
            b[8 - size..].copy_from_slice(bytes);
            Some(u64::from_be_bytes(b))
        }
    };
    let mut out = Vec::new();
    let mut at = 0;
    while let (Some(tag), Some(val)) = (word(at), word(at + size)) {
        if tag == goblin::elf::dynamic::DT_NULL {
            break;
        }
        out.push((tag, val));
        at += 2 * size;
    }
    out
}

/// The file offset of a virtual address, through the loadable segment that maps it.
fn file_offset(phdrs: &[ProgramHeader], vaddr: u64) -> Option<u64> {
    phdrs
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
        .find(|p| vaddr >= p.p_vaddr && vaddr < p.p_vaddr + p.p_filesz)
        .map(|p| vaddr - p.p_vaddr + p.p_offset)
}

/// Where the loader looks besides an object's own paths.
pub(crate) struct SearchPath {
    pub ld_library_path: Vec<PathBuf>,
    /// soname → path, from the loader cache (already under the root).
    pub cache: BTreeMap<String, PathBuf>,
    pub defaults: Vec<PathBuf>,
    /// Sonames not worth following (the C library and friends): found by
    /// the cache in every sane system, and they need nothing we care about.
    pub leaf: fn(&str) -> bool,
    /// What each directory searched holds, listed once.
    pub listings: Listings,
}

/// The names in each directory the search looks in, listed the first time
/// it is asked about: a soname is then a set look-up, not a `stat` per
/// directory per soname.
#[derive(Default)]
pub(crate) struct Listings(RefCell<HashMap<PathBuf, Option<HashSet<OsString>>>>);

impl Listings {
    /// Whether `dir/name` exists (a symlink counts when its target does).
    pub(crate) fn has(&self, dir: &Path, name: &str) -> bool {
        if matches!(name, "" | "." | "..") {
            return dir.join(name).exists();
        }
        let mut map = self.0.borrow_mut();
        let names = map.entry(dir.to_path_buf()).or_insert_with(|| {
            crate::host::read_dir(dir).ok().map(|rd| rd.filter_map(|e| Some(e.ok()?.file_name())).collect())
        });
        // Listed, then checked: a dangling symlink is listed but loads nothing.
        names.as_ref().is_some_and(|n| n.contains(std::ffi::OsStr::new(name))) && dir.join(name).exists()
    }
}

/// The outcome for one library: every dependency found and how, and every
/// one nothing found.
pub(crate) struct Walk {
    pub resolved: Vec<Resolution>,
    pub unresolved: Vec<(String, PathBuf)>,
}

const MAX_OBJECTS: usize = 256;

/// Follows the dependencies of `root` breadth first.
pub(crate) fn resolve(root: &Path, search: &SearchPath) -> Result<Walk, String> {
    let first = read_dynamics(root)?;
    let mut walk = Walk { resolved: Vec::new(), unresolved: Vec::new() };
    let mut seen: BTreeMap<String, ()> = BTreeMap::new();
    let mut queue: VecDeque<(PathBuf, Dynamics)> = VecDeque::from([(root.to_path_buf(), first)]);
    let mut visited = 0;
    while let Some((object, dynamics)) = queue.pop_front() {
        visited += 1;
        for soname in &dynamics.needed {
            if seen.insert(soname.clone(), ()).is_some() {
                continue;
            }
            match find(soname, &object, &dynamics, search) {
                Some((path, via)) => {
                    if !(search.leaf)(soname)
                        && visited + queue.len() < MAX_OBJECTS
                        && let Ok(d) = read_dynamics(&path)
                    {
                        queue.push_back((path.clone(), d));
                    }
                    walk.resolved.push(Resolution { soname: soname.clone(), path, via: via.into() });
                }
                None => walk.unresolved.push((soname.clone(), object.clone())),
            }
        }
    }
    Ok(walk)
}

fn find(soname: &str, object: &Path, d: &Dynamics, search: &SearchPath) -> Option<(PathBuf, &'static str)> {
    if soname.contains('/') {
        let p = PathBuf::from(soname);
        return p.exists().then_some((p, "path in DT_NEEDED"));
    }
    let origin = object.parent().unwrap_or(Path::new("/"));
    let expand = |entry: &str| {
        PathBuf::from(
            entry
                .replace("$ORIGIN", &origin.to_string_lossy())
                .replace("${ORIGIN}", &origin.to_string_lossy()),
        )
    };
    let look = |dirs: &mut dyn Iterator<Item = PathBuf>| {
        dirs.filter(|dir| search.listings.has(dir, soname)).map(|dir| dir.join(soname)).next()
    };
    if d.runpath.is_empty()
        && let Some(p) = look(&mut d.rpath.iter().map(|e| expand(e)))
    {
        return Some((p, "RPATH"));
    }
    if let Some(p) = look(&mut search.ld_library_path.iter().cloned()) {
        return Some((p, "LD_LIBRARY_PATH"));
    }
    if let Some(p) = look(&mut d.runpath.iter().map(|e| expand(e))) {
        return Some((p, "RUNPATH"));
    }
    if let Some(p) = search.cache.get(soname).filter(|p| p.exists()) {
        return Some((p.clone(), "loader cache"));
    }
    look(&mut search.defaults.iter().cloned()).map(|p| (p, "default directory"))
}

/// Unresolved libraries, with copies that exist elsewhere on the machine:
/// `find(dir, name)` is the copy of `name` in `dir`, if any.
pub(crate) fn unresolved_with_hints(
    walk: &Walk,
    elsewhere: &[PathBuf],
    find: impl Fn(&Path, &str) -> Option<PathBuf>,
) -> Vec<Unresolved> {
    walk.unresolved
        .iter()
        .map(|(soname, needed_by)| Unresolved {
            soname: soname.clone(),
            needed_by: needed_by.clone(),
            available_in: elsewhere.iter().filter_map(|d| find(d, soname)).collect(),
        })
        .collect()
}
