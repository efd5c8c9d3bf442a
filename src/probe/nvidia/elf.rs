//! Which file the dynamic loader would load for each dependency of a
//! library, worked out the way glibc's ld.so does it, without loading
//! anything.
//!
//! For each object: its `DT_RPATH` (only when it has no `DT_RUNPATH`),
//! `LD_LIBRARY_PATH`, its `DT_RUNPATH`, the loader cache, then the default
//! directories; `$ORIGIN` is the object's own directory. A dependency
//! already found for another object is not searched again (the loader
//! reuses a loaded soname). Files are memory-mapped and goblin reads only
//! the headers and the dynamic section, so a 1 GB `libtorch_cuda.so` costs a
//! few pages.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use goblin::elf::Elf;
use goblin::elf::dynamic::{DT_NEEDED, DT_RPATH, DT_RUNPATH, Dynamic};
use goblin::elf::program_header::ProgramHeader;
use goblin::strtab::Strtab;

use crate::snapshot::nvidia::{Resolution, Unresolved};

/// The dynamic-section facts of one ELF file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dynamics {
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
}

/// Reads DT_NEEDED, DT_RPATH and DT_RUNPATH; `Err` for a file that is not a
/// readable ELF object.
pub fn read_dynamics(path: &Path) -> Result<Dynamics, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    // SAFETY: the map is read-only and dropped before returning; a file
    // truncated underneath us could fault, which a doctor reading installed
    // libraries accepts (installers do not rewrite them in place).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?;
    let bytes: &[u8] = &map;
    let header = Elf::parse_header(bytes).map_err(|e| format!("not an ELF file: {e}"))?;
    let elf = Elf::lazy_parse(header).map_err(|e| e.to_string())?;
    let ctx = goblin::container::Ctx::new(
        if elf.is_64 { goblin::container::Container::Big } else { goblin::container::Container::Little },
        if elf.little_endian { goblin::container::Endian::Little } else { goblin::container::Endian::Big },
    );
    let phdrs = ProgramHeader::parse(bytes, header.e_phoff as usize, header.e_phnum as usize, ctx)
        .map_err(|e| format!("bad program headers: {e}"))?;
    let Some(dynamic) =
        Dynamic::parse(bytes, &phdrs, ctx).map_err(|e| format!("bad dynamic section: {e}"))?
    else {
        return Ok(Dynamics::default()); // a static object
    };
    let strtab = Strtab::parse(bytes, dynamic.info.strtab, dynamic.info.strsz, 0)
        .map_err(|e| format!("bad string table: {e}"))?;
    let mut d = Dynamics::default();
    for entry in &dynamic.dyns {
        let Some(s) = strtab.get_at(entry.d_val as usize) else { continue };
        match entry.d_tag {
            DT_NEEDED => d.needed.push(s.to_string()),
            DT_RPATH => d.rpath.extend(s.split(':').filter(|p| !p.is_empty()).map(str::to_string)),
            DT_RUNPATH => d.runpath.extend(s.split(':').filter(|p| !p.is_empty()).map(str::to_string)),
            _ => {}
        }
    }
    Ok(d)
}

/// Where the loader looks besides an object's own paths.
pub struct SearchPath {
    pub ld_library_path: Vec<PathBuf>,
    /// soname → path, from the loader cache (already under the root).
    pub cache: BTreeMap<String, PathBuf>,
    pub defaults: Vec<PathBuf>,
    /// Sonames not worth following (the C library and friends): found by
    /// the cache in every sane system, and they need nothing we care about.
    pub leaf: fn(&str) -> bool,
}

/// The outcome for one library: every dependency found and how, and every
/// one nothing found.
pub struct Walk {
    pub resolved: Vec<Resolution>,
    pub unresolved: Vec<(String, PathBuf)>,
}

const MAX_OBJECTS: usize = 256;

/// Follows the dependencies of `root` breadth first.
pub fn resolve(root: &Path, search: &SearchPath) -> Result<Walk, String> {
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
    let look =
        |dirs: &mut dyn Iterator<Item = PathBuf>| dirs.map(|dir| dir.join(soname)).find(|p| p.exists());
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

/// Unresolved sonames, with copies that exist elsewhere on the machine.
pub fn unresolved_with_hints(walk: &Walk, elsewhere: &[PathBuf]) -> Vec<Unresolved> {
    walk.unresolved
        .iter()
        .map(|(soname, needed_by)| Unresolved {
            soname: soname.clone(),
            needed_by: needed_by.clone(),
            available_in: elsewhere.iter().map(|d| d.join(soname)).filter(|p| p.exists()).collect(),
        })
        .collect()
}
