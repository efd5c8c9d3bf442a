//! One version model for every component.
//!
//! Python packages use PEP 440 (`2.1.0+cu118`, `2.2.0a0+81ea7a4`); CUDA, the
//! driver (`535.104.05`), cuDNN (`8.9.2.26`) and TensorRT (`8.6.1.6`) use plain
//! dotted releases, which PEP 440 also parses. Cargo's semver rejects several
//! of these, so the whole doctor compares through `pep440_rs` and nothing else:
//! the matrix, the probes and (later) the importers share [`Ver`] and [`Spec`].
//!
//! Both keep the text they were made from. PEP 440 normalises `535.104.05` to
//! `535.104.5`; a report must show what the machine said, so display uses the
//! raw text and comparison uses the parsed value.

use std::fmt;
use std::str::FromStr;

pub use pep440_rs::Version;
use pep440_rs::{LocalSegment, VersionSpecifiers};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A version as it was written, with its PEP 440 reading when there is one.
///
/// Legacy strings that PEP 440 cannot read (`1.0-custom-build`) are kept so a
/// report can still show them; rules treat them as "unknown".
#[derive(Clone, Debug)]
pub struct Ver {
    raw: String,
    parsed: Option<Version>,
}

impl Ver {
    pub fn new(raw: impl Into<String>) -> Self {
        let mut raw: String = raw.into();
        // A NUL read from a binary file or a broken paste is never part of a version.
        raw.retain(|c| c != '\0');
        let trimmed = raw.trim();
        let parsed = Version::from_str(trimmed.strip_prefix('v').unwrap_or(trimmed)).ok();
        Self { raw: trimmed.to_string(), parsed }
    }

    pub(crate) fn raw(&self) -> &str {
        &self.raw
    }

    pub fn parsed(&self) -> Option<&Version> {
        self.parsed.as_ref()
    }

    /// The release numbers (`[2, 1, 0]` for `2.1.0+cu118`).
    pub fn release(&self) -> &[u64] {
        self.parsed.as_ref().map_or(&[], |v| v.release())
    }

    /// The local label as text (`cu118` for `2.1.0+cu118`), if any.
    pub(crate) fn local(&self) -> Option<String> {
        let v = self.parsed.as_ref()?;
        if v.local().is_empty() {
            return None;
        }
        let parts: Vec<String> = v
            .local()
            .iter()
            .map(|seg| match seg {
                LocalSegment::String(s) => s.clone(),
                LocalSegment::Number(n) => n.to_string(),
            })
            .collect();
        Some(parts.join("."))
    }

    /// Builds a version from an NVML/CUDA-style integer such as `12020`
    /// (major × 1000 + minor × 10), which is how the CUDA runtime and NVML
    /// report CUDA versions.
    pub(crate) fn from_cuda_int(v: u64) -> Self {
        Self::new(format!("{}.{}", v / 1000, (v % 1000) / 10))
    }
}

impl PartialEq for Ver {
    fn eq(&self, other: &Self) -> bool {
        match (&self.parsed, &other.parsed) {
            (Some(a), Some(b)) => a == b,
            _ => self.raw == other.raw,
        }
    }
}

impl fmt::Display for Ver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl Serialize for Ver {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.raw)
    }
}

impl<'de> Deserialize<'de> for Ver {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::new(String::deserialize(d)?))
    }
}

/// A PEP 508 requirement line (`numpy>=1.21; python_version < "3.12"`), or
/// `None` when the text is not one. Total on any text, and one odd
/// `METADATA` must not take the doctor down: pep508_rs 0.9 panics on some
/// text it half accepts (a multi-byte character after a marker's quote, an
/// extra ending in `-` as in `torch[opt-]`), so non-ASCII text (no
/// requirement pip writes has any) is refused before the parser sees it,
/// and a panic inside the parser is caught, silently, and read as "not a
/// requirement".
pub(crate) fn requirement(text: &str) -> Option<pep508_rs::Requirement<pep508_rs::VerbatimUrl>> {
    if !text.is_ascii() {
        return None;
    }
    quietly(|| pep508_rs::Requirement::from_str(text).ok()).flatten()
}

std::thread_local! {
    /// Set while [`quietly`] runs: the panic hook then says nothing.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic into `None` without printing it. The first call
/// wraps the panic hook once, so that it stays silent only inside `f`, on
/// this thread; every other panic is reported as before.
fn quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
    QUIET.with(|q| q.set(false));
    result
}

/// A PEP 440 specifier set (`>=2.1,<2.3`, `==12.*`), kept with its text.
#[derive(Clone, Debug)]
pub struct Spec {
    raw: String,
    parsed: VersionSpecifiers,
}

impl Spec {
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Whether `v` satisfies every specifier. A version PEP 440 cannot read
    /// satisfies nothing: the caller decides what "unknown" means.
    ///
    /// Pre-releases are admitted like any other version: a torch nightly
    /// `2.4.0.dev20240501` is inside `>=2.3`, which is what a compatibility
    /// rule wants (an installer's "skip pre-releases" policy does not apply).
    pub fn contains(&self, v: &Ver) -> bool {
        v.parsed().is_some_and(|p| self.parsed.contains(p))
    }

    /// The versions the specifiers name (`1.20` for `==1.20.*`), without
    /// their local labels.
    pub(crate) fn versions(&self) -> impl Iterator<Item = Version> + '_ {
        self.parsed.iter().map(|s| s.version().clone().without_local())
    }

    /// The versions the specifiers admit as their lowest (`1.25` for
    /// `>=1.25,<1.32`, `1.20` for `==1.20.*`): releases the row is about,
    /// where an upper bound (`<1.32`) names one it is not.
    pub(crate) fn floors(&self) -> impl Iterator<Item = Version> + '_ {
        use pep440_rs::Operator::{Equal, EqualStar, ExactEqual, GreaterThanEqual, TildeEqual};
        self.parsed
            .iter()
            .filter(|s| {
                matches!(s.operator(), Equal | EqualStar | ExactEqual | GreaterThanEqual | TildeEqual)
            })
            .map(|s| s.version().clone().without_local())
    }
}

impl FromStr for Spec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let raw = s.trim();
        if raw.is_empty() {
            return Err("empty version specifier".to_string());
        }
        // pep440_rs draws a caret diagram on following lines; keep the sentence.
        let parsed = VersionSpecifiers::from_str(raw).map_err(|e| {
            e.to_string().lines().next().unwrap_or_default().trim_end_matches(':').to_string()
        })?;
        Ok(Self { raw: raw.to_string(), parsed })
    }
}

impl Serialize for Spec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.raw)
    }
}

impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Spec {
        s.parse().unwrap()
    }

    #[test]
    fn driver_versions_keep_their_zero_padding_for_display() {
        let v = Ver::new("535.104.05");
        assert_eq!(v.to_string(), "535.104.05");
        assert!(spec(">=535.104.5").contains(&v));
        assert!(spec(">535.54.03").contains(&v));
    }

    #[test]
    fn torch_local_label_is_readable_and_ignored_by_equality_specifiers() {
        let v = Ver::new("2.1.0+cu118");
        assert_eq!(v.local().as_deref(), Some("cu118"));
        assert!(spec("==2.1.0").contains(&v));
        assert!(spec("==2.1.*").contains(&v));
    }

    #[test]
    fn four_part_nvidia_versions_compare_numerically() {
        assert!(spec("<8.9.10").contains(&Ver::new("8.9.2.26")));
        assert!(spec("==8.6.1.*").contains(&Ver::new("8.6.1.6")));
        // `==8.6.1` means 8.6.1.0: matrix authors must write `==8.6.1.*`.
        assert!(!spec("==8.6.1").contains(&Ver::new("8.6.1.6")));
    }

    #[test]
    fn nightlies_are_inside_lower_bounds_but_not_below_exclusive_upper_bounds() {
        let nightly = Ver::new("2.2.0a0+81ea7a4");
        assert!(spec(">=2.1").contains(&nightly));
        assert!(!spec("<2.2").contains(&nightly));
    }

    #[test]
    fn unparsable_versions_satisfy_nothing() {
        let v = Ver::new("not-a-version");
        assert!(v.parsed().is_none());
        assert!(!spec(">=0").contains(&v));
    }

    #[test]
    fn cuda_integers_become_major_minor() {
        assert_eq!(Ver::from_cuda_int(12020).raw(), "12.2");
        assert_eq!(Ver::from_cuda_int(11080).raw(), "11.8");
    }

    #[test]
    fn bad_specifiers_are_rejected_with_a_reason() {
        assert!(Spec::from_str(">=2.1,<2.3,=2").is_err());
        assert!(Spec::from_str("").is_err());
    }

    /// Every character boundary of a real `Requires-Dist` line, with a
    /// multi-byte character or a hostile ASCII byte inserted or replacing
    /// one: parsed or refused, never a panic.
    #[test]
    fn requirement_lines_with_odd_characters_are_refused_not_a_crash() {
        let lines = [
            r#"numpy>=2.1.0; python_version >= "3.13""#,
            r#"protobuf<4,>=3.20.2; extra == "test" and platform_system != 'Windows'"#,
            "nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"",
            "torch[opt-einsum] @ https://example.com/t.whl ; os_name == 'nt'",
        ];
        let inserts =
            ["\u{e9}", "\u{1f600}", "\u{202e}", "\u{0}", "(", ")", "'", "\"", ";", "@", "[", "~=", "=="];
        for line in lines {
            assert!(requirement(line).is_some(), "{line}");
            for at in (0..=line.len()).filter(|&i| line.is_char_boundary(i)) {
                for ins in inserts {
                    let inserted = format!("{}{ins}{}", &line[..at], &line[at..]);
                    let _ = requirement(&inserted);
                    if let Some(c) = line[at..].chars().next() {
                        let _ = requirement(&format!("{}{ins}{}", &line[..at], &line[at + c.len_utf8()..]));
                    }
                }
                let _ = requirement(&line[..at]);
            }
        }
        let marker = "numpy>=2.1.0; python_version >= \"3.13\"\u{e9}";
        assert!(requirement(marker).is_none());
        // Found by fuzzing METADATA: the extra's name check panics.
        assert!(requirement("torch[opt- numpy>=1.20").is_none());
        assert!(requirement("x[a-] ; extra == \"b-\"").is_none());
    }
}
