//! The compatibility matrix: what the doctor knows, as data.
//!
//! No third-party version number lives in Rust. `matrix/*.yaml` holds
//! **tables** (one row per release, each row with its public source) and
//! **rules** over the facts of a snapshot. Rust implements the few kinds of
//! rule once (in the `check` module); the YAML says which facts, which tables
//! and which numbers. `matrix/README.md` documents the schema.
//!
//! The default matrix is embedded in the binary at build time, so the doctor
//! works offline on a fresh machine. `--matrix DIR` layers a team's own files
//! on top: a rule with an existing code replaces it, a table with an existing
//! name replaces it, everything else is added.

mod compile;
mod kernels;
mod load;
pub mod template;
mod types;

pub use crate::snapshot::Component;
pub(crate) use kernels::*;
pub use load::{MatrixError, Overlay};
pub use types::*;

/// The matrix files compiled into the binary: (path, contents), sorted.
/// The binary itself carries them validated and pre-parsed ([`PREBUILT`]);
/// the texts serve the tests that load a file beside them.
#[cfg(test)]
pub const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_matrix.rs"));

/// The embedded matrix, validated by the build script and stored in the
/// binary already parsed: a run starts without parsing YAML.
const PREBUILT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/matrix.bin"));

impl Matrix {
    /// The embedded matrix, plus any `--matrix` layers in order.
    pub fn load(overlays: &[Overlay]) -> Result<Self, Vec<MatrixError>> {
        load::load(PREBUILT, overlays)
    }

    /// The embedded matrix with one overlay file given as text (`name` is
    /// what errors call it): the loader without a directory, for fuzzing
    /// and for tools that hold a matrix file in memory.
    pub fn load_with_overlay_text(name: &str, text: &str) -> Result<Self, Vec<MatrixError>> {
        let files = vec![(name.to_string(), text.to_string())];
        load::load(PREBUILT, &[Overlay { name: "(text)".into(), files }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_map_to_their_component() {
        let m = Matrix::load(&[]).unwrap();
        assert_eq!(m.component_of("onnxruntime-gpu"), Component::new("onnxruntime"));
        assert_eq!(m.component_of("tensorrt-cu12"), Component::TENSORRT);
        assert_eq!(m.component_of("torch"), Component::new("torch"));
        assert_eq!(m.component_of("opencv-python"), Component::PYTHON);
        assert_eq!(m.component_of("onnxscript"), Component::new("onnx"));
    }

    #[test]
    fn conditions_read_words_and_specifiers() {
        assert!(matches!(Condition::parse("present"), Ok(Condition::Present)));
        assert!(matches!(Condition::parse("is not upb"), Ok(Condition::IsNot(t)) if t == "upb"));
        assert!(matches!(Condition::parse(">=2, <3"), Ok(Condition::Version(_))));
        assert!(Condition::parse("=>2").is_err());
        assert!(
            matches!(Condition::parse("runs on sm_80 compute_90"), Ok(Condition::RunsOn(l)) if l.len() == 2)
        );
        assert!(Condition::parse("runs on sm_x").is_err());
    }

    #[test]
    fn cuda_binary_compatibility_follows_major_and_minor() {
        let torch_cu126 = Arch::parse_list("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90").unwrap();
        let runs = |list: &[Arch], cc: (u64, u64)| list.iter().any(|a| a.runs_on(cc.0, cc.1, false));
        assert!(runs(&torch_cu126, (8, 9)), "sm_86 cubins run on an Ada 8.9");
        assert!(!runs(&torch_cu126, (12, 0)), "nothing runs on an RTX 5090");
        let cu128 = Arch::parse_list("7.5;8.0;8.6;9.0;10.0;12.0+PTX").unwrap();
        assert!(runs(&cu128, (12, 0)));
        assert!(runs(&cu128, (12, 1)), "PTX JITs forward");
        assert!(!runs(&cu128, (6, 1)), "a Pascal card has nothing");
        let on_orin = |list: &[Arch]| list.iter().any(|a| a.runs_on(8, 7, true));
        assert!(!on_orin(&cu128), "sm_80/sm_86 cubins do not run on an integrated 8.7");
        assert!(on_orin(&Arch::parse_list("8.7").unwrap()));
        assert!(on_orin(&Arch::parse_list("8.0+PTX").unwrap()), "PTX still JITs");
    }

    #[test]
    fn an_overlay_given_as_text_is_checked_like_a_file() {
        let errors = Matrix::load_with_overlay_text("team.yaml", "rules:\n  - code: Bad_Code\n").unwrap_err();
        assert!(errors.iter().any(|e| e.to_string().starts_with("team.yaml:")), "{errors:?}");
        let ok = "gpu_models:\n  sources: [https://developer.nvidia.com/cuda-gpus]\n  models:\n    - { name: \"Team GPU\", compute_capability: \"8.9\", architecture: \"Ada\" }\n";
        let m = Matrix::load_with_overlay_text("team.yaml", ok).unwrap();
        assert_eq!(m.gpu_model("Team GPU 48GB").unwrap().compute_capability, "8.9");
    }

    /// What the binary carries pre-parsed is what the YAML says.
    #[test]
    fn the_prebuilt_matrix_is_the_yaml_parsed() {
        let files: Vec<(String, String)> =
            EMBEDDED.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect();
        let from_yaml = load::Builder::embedded(&files).unwrap().finish(Vec::new()).unwrap();
        let prebuilt = Matrix::load(&[]).unwrap();
        assert_eq!(from_yaml.hash, prebuilt.hash);
        assert_eq!(format!("{:?}", from_yaml.rules), format!("{:?}", prebuilt.rules));
        assert_eq!(format!("{:?}", from_yaml.tables), format!("{:?}", prebuilt.tables));
        assert_eq!(format!("{:?}", from_yaml.stack), format!("{:?}", prebuilt.stack));
        assert_eq!(format!("{:?}", from_yaml.gpu_models), format!("{:?}", prebuilt.gpu_models));
    }

    #[test]
    fn the_embedded_matrix_loads() {
        let m = Matrix::load(&[])
            .unwrap_or_else(|e| panic!("{}", e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")));
        assert!(!m.rules.is_empty());
        assert_eq!(m.hash.len(), 64);
    }
}
