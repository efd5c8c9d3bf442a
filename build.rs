//! Validates the embedded matrix at build time and stores it in the binary
//! already parsed, so the doctor works offline, a release carries exactly
//! the knowledge it was tested with, and a run starts without parsing YAML.
//! A mistake in `matrix/*.yaml` fails the build with `file:line:column`.
//!
//! The loader is the crate's own (`src/matrix/load.rs` and what it uses),
//! compiled into this script as well.

#![allow(dead_code, unused_imports, clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/version.rs"]
mod version;

#[path = "src/snapshot/vocab.rs"]
mod vocab;

#[path = "src/snapshot/key.rs"]
mod key;
#[path = "src/snapshot/plan.rs"]
mod plan;

mod snapshot {
    pub use crate::key::*;
    pub use crate::plan::*;
    pub use crate::vocab::*;
}

// The matrix module's files, at the root of this script: they name each
// other as `super::`.
#[path = "src/matrix/compile.rs"]
mod compile;
#[path = "src/matrix/kernels.rs"]
mod kernels;
#[path = "src/matrix/load.rs"]
mod load;
#[path = "src/matrix/template.rs"]
mod template;
#[path = "src/matrix/types.rs"]
mod types;
use kernels::*;
use snapshot::Component;
use types::*;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrix");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("matrix/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    let mut files = Vec::new();
    let mut listing = String::from("&[\n");
    for p in paths {
        println!("cargo:rerun-if-changed={}", p.display());
        let name = format!("matrix/{}", p.file_name().unwrap().to_string_lossy());
        writeln!(listing, "    ({name:?}, include_str!({:?})),", p.display().to_string()).unwrap();
        files.push((name, std::fs::read_to_string(&p).expect("a matrix file is text")));
    }
    listing.push_str("]\n");
    let builder = load::Builder::embedded(&files).unwrap_or_else(|errors| fail(&errors));
    // The checks that need every file at once, on a copy: what is stored is
    // the builder, so overlays can still replace rules and tables.
    let bytes = builder.to_bytes();
    if let Err(errors) = load::Builder::from_bytes(&bytes).finish_checking(Vec::new(), true) {
        fail(&errors);
    }
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).to_path_buf();
    std::fs::write(out.join("embedded_matrix.rs"), listing).unwrap();
    std::fs::write(out.join("matrix.bin"), bytes).unwrap();
}

fn fail(errors: &[load::MatrixError]) -> ! {
    let mut msg = String::from("the embedded matrix is invalid:");
    for e in errors {
        msg.push_str(&format!("\n  {e}"));
    }
    panic!("{msg}");
}
