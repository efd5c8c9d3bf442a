//! Embeds every `matrix/*.yaml` file into the binary, so the doctor works
//! offline and a release carries exactly the knowledge it was tested with.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrix");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("matrix/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut out = String::from("&[\n");
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = format!("matrix/{}", f.file_name().unwrap().to_string_lossy());
        writeln!(out, "    ({name:?}, include_str!({:?})),", f.display().to_string()).unwrap();
    }
    out.push_str("]\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_matrix.rs");
    std::fs::write(dest, out).unwrap();
}
