//! The report: one data model, several renderers.
//!
//! [`Report`] holds everything a run produced (the doctor and matrix that
//! judged, the snapshot, the findings, every rule's outcome, a summary) and
//! is what `--format json` prints. The text and Markdown renderers only
//! format it; [`overview`] computes the per-component verdict lines they
//! share, so the terminal and a ticket never disagree.

pub mod catalog;
pub mod ci;
pub mod markdown;
mod overview;
pub mod redact;
pub mod reply;
pub mod text;

pub use overview::{Fold, Line, Section, Status, overview};

use serde::{Deserialize, Serialize};

use crate::check::needs::{Need, needs};
use crate::check::{Finding, FixPlan, Judgement, Outcome, RuleOutcome};
use crate::matrix::{Matrix, Severity};
use crate::snapshot::{ProbeMode, Snapshot};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// "onnx-doctor 0.1.0".
    pub doctor: String,
    pub matrix: MatrixInfo,
    pub summary: Summary,
    pub findings: Vec<Finding>,
    /// Every finding's chosen fix, merged per environment: one consistent
    /// set of commands (see `check::plan`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fix_plan: Vec<FixPlan>,
    pub outcomes: Vec<RuleOutcome>,
    /// For a paste that leaves checks unjudged: what to ask its reporter
    /// to run, and what each answer would let the doctor check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub still_needed: Vec<Ask>,
    /// For `model FILE`: the oldest release of each runtime that loads it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_needs: Vec<Need>,
    pub snapshot: Snapshot,
}

/// One command to ask a ticket's reporter for.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Ask {
    pub command: String,
    /// The checks its output unlocks.
    pub unlocks: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MatrixInfo {
    pub version: String,
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<String>,
}

/// The word for a whole run.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Info,
    Warning,
    Error,
    /// No errors or warnings, but an installed release is one the matrix
    /// does not know and no trial covered what it could not check.
    Unverified,
    /// Nothing could be probed, so nothing was judged.
    NotEvaluated,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Unverified => "unverified",
            Self::NotEvaluated => "not_evaluated",
        }
    }
}

/// An installed release the matrix has no row for.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MatrixGap {
    /// The Python environment, when the release is installed in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The stack package the release belongs to, if any (`onnxruntime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// "onnxruntime|onnxruntime-gpu 1.33.0".
    pub fact: String,
    pub version: String,
    /// Newer than every release the matrix names.
    pub newer: bool,
    /// The rules that could not judge it.
    pub checks: Vec<String>,
    /// A trial of the runtime answered what those rules would have asked.
    pub covered_by_trial: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// The worst severity found, or that nothing could be probed.
    pub verdict: Verdict,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Rule evaluations that could not be made (missing facts).
    pub not_evaluated: usize,
    pub python_environments: usize,
    /// Installed releases the matrix does not know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matrix_gaps: Vec<MatrixGap>,
    /// How old the matrix is, in days, when that is more than
    /// [`STALE_MATRIX_DAYS`]: releases after it are unknown to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_age_days: Option<u64>,
}

/// After this many days a report says its matrix is getting old.
pub(crate) const STALE_MATRIX_DAYS: u64 = 180;

/// Days from 1970-01-01 to a `YYYY-MM-DD` date (the civil calendar).
pub(crate) fn days_since_epoch(date: &str) -> Option<i64> {
    let mut parts = date.split('-').map(|p| p.parse::<i64>());
    let (y, m, d) = (parts.next()?.ok()?, parts.next()?.ok()?, parts.next()?.ok()?);
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

impl Report {
    pub fn new(snapshot: Snapshot, matrix: &Matrix, judgement: Judgement) -> Self {
        let count = |s: Severity| judgement.findings.iter().filter(|f| f.severity == s).count();
        let (errors, warnings, infos) =
            (count(Severity::Error), count(Severity::Warning), count(Severity::Info));
        let matrix_gaps = matrix_gaps(&snapshot, matrix, &judgement.outcomes);
        let verdict = if !snapshot_has_facts(&snapshot) {
            Verdict::NotEvaluated
        } else if errors > 0 {
            Verdict::Error
        } else if warnings > 0 {
            Verdict::Warning
        } else if model_without_runtime(&snapshot, matrix) {
            // "Will this model load here?" has no answer without a runtime.
            Verdict::NotEvaluated
        } else if matrix_gaps.iter().any(|g| !g.covered_by_trial) {
            Verdict::Unverified
        } else if infos > 0 {
            Verdict::Info
        } else {
            Verdict::Ok
        };
        let not_evaluated =
            judgement.outcomes.iter().filter(|o| matches!(o.outcome, Outcome::NotEvaluated { .. })).count();
        Self {
            doctor: format!("onnx-doctor {}", env!("CARGO_PKG_VERSION")),
            matrix: MatrixInfo {
                version: matrix.version.clone(),
                sha256: matrix.hash.clone(),
                overlays: matrix.overlays.clone(),
            },
            summary: Summary {
                verdict,
                errors,
                warnings,
                infos,
                not_evaluated,
                python_environments: snapshot.pythons.len(),
                matrix_gaps,
                matrix_age_days: None,
            },
            findings: judgement.findings,
            fix_plan: judgement.plans,
            outcomes: judgement.outcomes,
            still_needed: still_needed(&snapshot),
            model_needs: snapshot.model.as_ref().map(|m| needs(m, matrix)).unwrap_or_default(),
            snapshot,
        }
    }

    /// This report with `f` applied to every string it holds: the one
    /// place a renderer makes pasted text inert ([`crate::escape`]) and
    /// [`redact::Redactor`] removes secrets, before anything is serialised.
    /// Map keys are mapped only when `keys` is set. A result that no longer
    /// reads as a report is an error, never the report as it was: a
    /// redaction that cannot be applied must not let the secrets through.
    pub(crate) fn map_strings(&self, keys: bool, f: &dyn Fn(&str) -> String) -> Result<Report, String> {
        self.map_strings_in(keys, &|_, s| f(s))
    }

    /// Like [`Report::map_strings`], with the name of the field each string
    /// is the value of (or an element of), so that identifiers (`distro_id`,
    /// `code`) can be left as they are.
    pub(crate) fn map_strings_in(
        &self,
        keys: bool,
        f: &dyn Fn(Option<&str>, &str) -> String,
    ) -> Result<Report, String> {
        fn walk(
            v: serde_json::Value,
            field: Option<&str>,
            keys: bool,
            f: &dyn Fn(Option<&str>, &str) -> String,
        ) -> serde_json::Value {
            use serde_json::Value;
            match v {
                Value::String(s) => Value::String(f(field, &s)),
                Value::Array(a) => Value::Array(a.into_iter().map(|x| walk(x, field, keys, f)).collect()),
                Value::Object(o) => Value::Object(
                    o.into_iter()
                        .map(|(k, x)| {
                            let x = walk(x, Some(&k), keys, f);
                            (if keys { f(None, &k) } else { k }, x)
                        })
                        .collect(),
                ),
                other => other,
            }
        }
        let value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        serde_json::from_value(walk(value, None, keys, f)).map_err(|e| e.to_string())
    }

    /// Notes the matrix's age when `today` (days since 1970) is more than
    /// [`STALE_MATRIX_DAYS`] after it.
    pub(crate) fn with_today(mut self, today: i64) -> Self {
        if let Some(made) = days_since_epoch(&self.matrix.version) {
            let age = today - made;
            if age > STALE_MATRIX_DAYS as i64 {
                self.summary.matrix_age_days = Some(age as u64);
            }
        }
        self
    }

    /// 0: nothing at or above `fail_on`; 1: findings at or above it;
    /// 3: nothing could be probed, so nothing was judged.
    pub(crate) fn exit_code(&self, fail_on: Severity) -> u8 {
        if self.summary.verdict == Verdict::NotEvaluated {
            crate::exit::NOT_EVALUATED
        } else if self.findings.iter().any(|f| f.severity >= fail_on) {
            crate::exit::FINDINGS
        } else {
            crate::exit::OK
        }
    }

    pub(crate) fn matrix_line(&self) -> String {
        let mut s = format!(
            "matrix {} (sha256 {})",
            self.matrix.version,
            &self.matrix.sha256[..12.min(self.matrix.sha256.len())]
        );
        for o in &self.matrix.overlays {
            s.push_str(&format!(" + {o}"));
        }
        s
    }
}

/// Whether a model was given with no runtime to judge it by: no `--target`,
/// and no onnxruntime or TensorRT in any environment probed.
fn model_without_runtime(snapshot: &Snapshot, matrix: &Matrix) -> bool {
    let runtimes = [matrix.distributions_of("onnxruntime"), matrix.distributions_of("tensorrt")];
    snapshot.model.is_some()
        && snapshot.targets.is_empty()
        && !snapshot.pythons.iter().any(|env| runtimes.iter().any(|r| env.first_installed(r).is_some()))
}

/// The installed releases the matrix had no row for, each with the rules
/// that could not judge it and whether a trial answered for them: the
/// package imported and its trial ran without a refusal or a failure.
fn matrix_gaps(snapshot: &Snapshot, matrix: &Matrix, outcomes: &[RuleOutcome]) -> Vec<MatrixGap> {
    let mut gaps: Vec<MatrixGap> = Vec::new();
    for o in outcomes {
        let Outcome::NotEvaluated { unknown: Some(u), .. } = &o.outcome else { continue };
        if let Some(g) =
            gaps.iter_mut().find(|g| g.subject == o.subject && g.fact == u.fact && g.version == u.version)
        {
            g.checks.push(o.code.clone());
            continue;
        }
        let env = snapshot.pythons.iter().find(|e| Some(e.label()) == o.subject);
        let package = u.fact.split('|').find_map(|alt| {
            let name = alt.split('.').next().unwrap_or(alt);
            matrix.stack.iter().find(|p| p.package == name || p.distributions.iter().any(|d| d == name))
        });
        let covered = match (env, package) {
            (Some(env), Some(p)) => trial_answered(env, &p.package),
            _ => false,
        };
        gaps.push(MatrixGap {
            subject: o.subject.clone(),
            package: package.map(|p| p.package.clone()),
            fact: u.fact.clone(),
            version: u.version.clone(),
            newer: u.newer,
            checks: vec![o.code.clone()],
            covered_by_trial: covered,
        });
    }
    gaps
}

/// Whether a package imported and its trial ran without a refusal, a
/// failure or being skipped.
fn trial_answered(env: &crate::snapshot::PythonEnv, package: &str) -> bool {
    let Some(import) = env.import(package).filter(|i| i.status == crate::snapshot::ImportStatus::Ok) else {
        return false;
    };
    let trials: Vec<String> = import
        .facts
        .iter()
        .filter(|(k, _)| k.starts_with("trial_") && k.as_str() != "trial_seconds")
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    !trials.is_empty()
        && !trials.iter().any(|t| {
            t.starts_with("trial_error")
                || t.contains("refused")
                || t.contains("failed:")
                || t.contains("skipped")
        })
}

/// Whether any probe besides the system one produced facts.
/// What a paste lacks, as the commands that would supply it, each with the
/// checks it unlocks: the support engineer's next message.
fn still_needed(s: &Snapshot) -> Vec<Ask> {
    if s.mode != ProbeMode::Pasted {
        return Vec::new();
    }
    let env = s.pythons.first();
    let dists = env.and_then(|e| e.distributions.found());
    let has = |name: &str| dists.is_some_and(|d| d.iter().any(|d| d.name == name));
    let torch_build = env.is_some_and(|e| e.imports.iter().any(|i| i.package == "torch"));
    let nvidia = s.nvidia.found();
    let driver = nvidia.is_some_and(|n| n.driver.found().is_some());
    let gpus = nvidia.is_some_and(|n| n.gpus.found().is_some_and(|g| !g.is_empty()));
    let ask = |command: &str, unlocks: &str| Ask { command: command.into(), unlocks: unlocks.into() };
    let mut asks = Vec::new();
    if !torch_build && (has("torch") || dists.is_none()) {
        asks.push(ask(
            "python -m torch.utils.collect_env",
            "torch's version and CUDA build, the driver, the GPUs and cuDNN: torch against the machine",
        ));
    }
    let cuda_build = env.is_some_and(|e| {
        e.imports.iter().any(|i| i.package == "torch" && i.facts.get("cuda").is_some_and(|c| !c.is_null()))
    });
    let wants_gpu = cuda_build || has("onnxruntime-gpu") || has("tensorrt") || gpus || driver;
    if (wants_gpu || dists.is_none()) && !(driver && gpus) {
        asks.push(ask("nvidia-smi", "the driver and the GPUs: whether they run the CUDA builds installed"));
    }
    if dists.is_none_or(|d| d.len() < 2) {
        asks.push(ask(
            "python -m pip list",
            "onnx, onnxruntime, protobuf and numpy: the packages that break together",
        ));
    }
    if env.is_none_or(|e| e.version.found().is_none()) && dists.is_some() {
        asks.push(ask("python --version", "the Python the packages must have wheels for"));
    }
    if !asks.is_empty() {
        asks.push(ask("onnx-doctor report", "all of the above at once, redacted, in one attachment"));
    }
    asks
}

fn snapshot_has_facts(s: &Snapshot) -> bool {
    s.pythons.iter().any(|p| p.interpreter.found().is_some() || p.distributions.found().is_some())
        || s.nvidia
            .found()
            .is_some_and(|n| n.driver.found().is_some() || n.gpus.found().is_some_and(|g| !g.is_empty()))
        || s.pasted.as_ref().is_some_and(|p| !p.error_lines.is_empty() || !p.facts.is_empty())
        || s.model.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_count_days_from_the_epoch() {
        assert_eq!(days_since_epoch("1970-01-01"), Some(0));
        assert_eq!(days_since_epoch("2000-03-01"), Some(11_017));
        assert_eq!(days_since_epoch("2026-11-23"), Some(20_780));
        assert_eq!(
            days_since_epoch("2024-02-29").zip(days_since_epoch("2024-03-01")).map(|(a, b)| b - a),
            Some(1)
        );
        assert_eq!(days_since_epoch("garbage"), None);
    }

    #[test]
    fn a_mapping_the_report_cannot_take_is_an_error_not_the_original() {
        let matrix = Matrix::load(&[]).unwrap();
        let snapshot = crate::import::import("torch==2.1.0\nnumpy==2.0.0\nonnxruntime==1.17.1\n", &matrix);
        let report = Report::new(snapshot.clone(), &matrix, crate::check::check(&snapshot, &matrix));
        assert!(!report.findings.is_empty());
        // A severity is one of three words: a mapping that changes every
        // string (as a redaction gone wrong would) cannot round-trip.
        let broken = report.map_strings(false, &|s| format!("{s} <redacted>"));
        assert!(broken.is_err(), "a report that cannot be redacted came back");
        assert!(report.map_strings(false, &|s| s.to_string()).is_ok());
    }

    #[test]
    fn every_saved_form_reads_back_through_the_one_owner_of_the_format() {
        use crate::snapshot::saved;
        let matrix = Matrix::load(&[]).unwrap();
        let snapshot = crate::import::import("torch==2.1.0\nnumpy==2.0.0\nonnxruntime==1.17.1\n", &matrix);
        let report = Report::new(snapshot.clone(), &matrix, crate::check::check(&snapshot, &matrix));
        let json = serde_json::to_string_pretty(&report).unwrap();
        let back = saved::read_report(&json).unwrap();
        let codes = |f: &[Finding]| f.iter().map(|f| (f.code.clone(), f.severity)).collect::<Vec<_>>();
        let read: Vec<_> = back.findings.iter().map(|f| (f.code.clone(), f.severity)).collect();
        assert_eq!(read, codes(&report.findings));
        assert!(saved::looks_saved(&json));
        let from_json = saved::read_snapshot(&json).unwrap();
        let markdown = markdown::render(&report, &matrix, 1);
        assert!(saved::looks_saved(&markdown), "{markdown}");
        let from_markdown = saved::read_snapshot(&markdown).unwrap();
        let same = |s: &crate::snapshot::Snapshot| serde_json::to_value(s).unwrap();
        assert_eq!(same(&from_json), same(&report.snapshot));
        assert_eq!(same(&from_markdown), same(&report.snapshot));
    }
}
