//! The probe plan: which Python packages the probes import and read, and
//! which of their shared libraries they resolve. The matrix's `stack:`
//! section fills it (the application hands it to the probes), so adding a
//! package to probe is a matrix entry, and the probes know nothing of the
//! matrix.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Component;

/// A Python package the doctor imports and reports on (`stack:` in the
/// matrix): how to import it, which distributions provide it, which runtime
/// facts to read from it, and which of its shared libraries to resolve.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StackPackage {
    /// The doctor's name (`protobuf`): the prefix of its facts.
    pub package: String,
    /// What the probe imports (`google.protobuf`).
    pub module: String,
    pub component: Component,
    /// Distributions that provide the module, preferred first.
    pub distributions: Vec<String>,
    /// Names `conda list` gives it (`pytorch`).
    pub conda: Vec<String>,
    /// Fact name → probe expression (`torch.version.cuda`).
    pub facts: BTreeMap<String, String>,
    /// The experiment the probe runs with the package imported.
    pub trial: Option<String>,
    /// Facts read from the package's files, without importing it.
    pub files: BTreeMap<String, FileFact>,
    /// Facts taken from a table's row for the installed version:
    /// fact → (table, column).
    pub table_facts: BTreeMap<String, (String, String)>,
    /// Facts only a paste states (an install command's, a `conda list`'s):
    /// the probe reads none of them.
    #[serde(default)]
    pub stated: Vec<String>,
    pub libraries: Vec<StackLibrary>,
}

/// A fact read from a file inside a package: the first group of `pattern`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileFact {
    /// Relative to site-packages (`torch/version.py`).
    pub path: String,
    pub pattern: String,
}

/// A shared library inside a package whose dependencies the doctor resolves.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StackLibrary {
    /// A stable name for reports (`onnxruntime-cuda-provider`).
    pub role: String,
    /// Relative to site-packages; a trailing `*` takes the first match.
    pub path: String,
    /// The same library in a Windows wheel (a DLL), likewise.
    pub dll: Option<String>,
    /// The builtin rule that words a library that cannot load.
    pub check: String,
    /// How that text names the library ("onnxruntime-gpu's CUDA provider").
    pub what: String,
    /// A table whose row, for the installed version of this package, fills
    /// `{row.COLUMN}` in the check's fixes (`onnxruntime-gpu-builds`).
    pub table: Option<String>,
    /// A component this library serves (TensorRT for the TensorRT provider):
    /// when the machine has none of it, `check_without` words the finding.
    pub needs: Option<Component>,
    pub check_without: Option<String>,
    /// The package loads its pip wheels' libraries itself (torch does).
    pub preloads_wheels: bool,
    /// Words the finding when every missing library is in the
    /// environment's own pip wheels and the package does not load them.
    pub check_in_wheels: Option<String>,
}
