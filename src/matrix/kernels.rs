//! The operator kernels an onnxruntime execution provider registers,
//! release by release (`matrix/operator-kernels.yaml`), and the one
//! question asked of them: does release R run operator X at opset N on
//! this provider?
//!
//! onnxruntime picks a kernel by the node's *since version*, the newest
//! version of the operator's schema at or below the model's opset. A
//! kernel registered for a closed range `[a, b]` takes any since version
//! in it; one registered open-ended (`a+`) takes exactly `a`, since a newer
//! schema version may have come after the kernel was written
//! (onnxruntime's `KernelRegistry::VerifyVersion`). The doctor has no
//! schema history, but every range start (and every closed range's end
//! plus one) across all releases and providers is a schema version, which
//! is what finding the since version needs.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::version::Ver;

/// One provider's kernels over the releases read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProviderKernels {
    pub runtime: String,
    /// `CPUExecutionProvider`.
    pub provider: String,
    /// Oldest first.
    pub releases: Vec<KernelRelease>,
    /// domain (`ai.onnx`) → operator → its registered ranges.
    pub ops: BTreeMap<String, BTreeMap<String, Vec<KernelRange>>>,
}

/// One release read, as `1.17`, and the document it matches.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelRelease {
    /// The release line (`1.17`): patch releases register the same kernels.
    pub release: String,
    /// The exact release read (`1.17.3`).
    pub read: String,
    pub source: String,
}

/// A registered version range and the releases (indexes into `releases`)
/// that register it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct KernelRange {
    pub start: i64,
    /// None: open-ended (`14+`).
    pub end: Option<i64>,
    pub first: usize,
    pub last: usize,
}

/// What the matrix can say about one operator on one provider in one release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Has,
    Lacks,
    /// The release was not read, and its neighbours do not settle it.
    Unknown,
}

impl KernelRange {
    fn takes(&self, since: i64) -> bool {
        match self.end {
            None => self.start == since,
            Some(end) => (self.start..=end).contains(&since),
        }
    }

    /// `6-12`, `13`, `14+` with an optional `@1.17`, `@..1.16` or
    /// `@1.17..1.19`, against `releases` (as `1.17`).
    pub(crate) fn parse(token: &str, releases: &[String]) -> Result<Self, String> {
        let (range, mark) = token.split_once('@').unwrap_or((token, ""));
        let number = |s: &str| s.parse::<i64>().ok().filter(|n| (1..=i64::from(i32::MAX)).contains(n));
        let bad =
            || format!("{token:?} is not a kernel range (6-12, 13, 14+, with @1.17, @..1.16 or @1.17..1.19)");
        let (start, end) = if let Some(s) = range.strip_suffix('+') {
            (number(s).ok_or_else(bad)?, None)
        } else if let Some((a, b)) = range.split_once('-') {
            let (a, b) = (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?);
            if a > b {
                return Err(bad());
            }
            (a, Some(b))
        } else {
            let n = number(range).ok_or_else(bad)?;
            (n, Some(n))
        };
        let index = |r: &str| {
            releases
                .iter()
                .position(|x| x == r)
                .ok_or_else(|| format!("{token:?} names release {r:?}, which is not among `releases`"))
        };
        let (first, last) = match mark.split_once("..") {
            _ if token.find('@').is_none() => (0, releases.len().saturating_sub(1)),
            Some((a, b)) => (
                if a.is_empty() { 0 } else { index(a)? },
                if b.is_empty() { releases.len().saturating_sub(1) } else { index(b)? },
            ),
            None => (index(mark)?, releases.len().saturating_sub(1)),
        };
        if first > last {
            return Err(bad());
        }
        Ok(Self { start, end, first, last })
    }
}

impl ProviderKernels {
    /// The operator's since version at `opset`: the newest schema version
    /// at or below it that any provider's ranges reveal.
    /// `known` adds versions learnt elsewhere (the function bodies).
    pub(crate) fn since_version(
        all: &[&ProviderKernels],
        known: &[i64],
        domain: &str,
        op: &str,
        opset: i64,
    ) -> Option<i64> {
        let mut versions: BTreeSet<i64> = known.iter().copied().collect();
        for p in all {
            for r in p.ops.get(domain).and_then(|ops| ops.get(op)).into_iter().flatten() {
                versions.insert(r.start);
                versions.extend(r.end.map(|e| e + 1));
            }
        }
        versions.range(..=opset).next_back().copied()
    }

    /// Whether release index `i` registers a kernel taking `since`.
    fn registers(&self, i: usize, domain: &str, op: &str, since: i64) -> bool {
        self.ops
            .get(domain)
            .and_then(|ops| ops.get(op))
            .is_some_and(|ranges| ranges.iter().any(|r| (r.first..=r.last).contains(&i) && r.takes(since)))
    }

    /// Whether `release` runs `op` of `domain` at since version `since`.
    /// Kernels are only ever added, so a release between two that were
    /// read has what the older one has and lacks what the newer one
    /// lacks; before the first release read it lacks what that one lacks.
    pub(crate) fn kernel(&self, release: &Ver, domain: &str, op: &str, since: Option<i64>) -> Kernel {
        let Some(line) = release.release().get(..2).map(|r| (r[0], r[1])) else { return Kernel::Unknown };
        let lines: Vec<(u64, u64)> = self
            .releases
            .iter()
            .map(|r| {
                let v = Ver::new(r.release.as_str());
                let p = v.release();
                (p.first().copied().unwrap_or(0), p.get(1).copied().unwrap_or(0))
            })
            .collect();
        let Some(since) = since else { return Kernel::Lacks };
        let has = |i: usize| self.registers(i, domain, op, since);
        match lines.iter().position(|&l| l >= line) {
            Some(i) if lines[i] == line => {
                if has(i) {
                    Kernel::Has
                } else {
                    Kernel::Lacks
                }
            }
            Some(i) => match (i.checked_sub(1).is_some_and(has), has(i)) {
                (true, _) => Kernel::Has,
                (false, false) => Kernel::Lacks,
                (false, true) => Kernel::Unknown,
            },
            // Newer than every release read: it kept what the last one had.
            None if !lines.is_empty() && has(lines.len() - 1) => Kernel::Has,
            None => Kernel::Unknown,
        }
    }

    /// The index in `releases` of the first release read that runs the
    /// operator, if any.
    pub(crate) fn first_with(&self, domain: &str, op: &str, since: Option<i64>) -> Option<usize> {
        let since = since?;
        (0..self.releases.len()).find(|&i| self.registers(i, domain, op, since))
    }

    /// Whether this provider's table covers `domain` at all.
    pub(crate) fn knows_domain(&self, domain: &str) -> bool {
        self.ops.contains_key(domain)
    }
}

/// The operators onnxruntime runs without a kernel of their own: those
/// whose ONNX schema has a function body (it runs the body), and those it
/// turns into initializers when it loads the graph (Constant).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FunctionOps {
    /// domain → operator → the since versions that have a body.
    pub ops: BTreeMap<String, BTreeMap<String, Vec<i64>>>,
    /// domain → operators loaded as initializers.
    #[serde(default)]
    pub initializers: BTreeMap<String, BTreeSet<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(ranges: &str) -> ProviderKernels {
        let releases: Vec<String> = ["1.16", "1.18", "1.20"].iter().map(|r| r.to_string()).collect();
        let parsed = ranges.split_whitespace().map(|t| KernelRange::parse(t, &releases).unwrap()).collect();
        ProviderKernels {
            runtime: "onnxruntime".into(),
            provider: "CPUExecutionProvider".into(),
            releases: releases
                .iter()
                .map(|r| KernelRelease { release: r.clone(), read: r.clone(), source: String::new() })
                .collect(),
            ops: BTreeMap::from([("ai.onnx".into(), BTreeMap::from([("Op".into(), parsed)]))]),
        }
    }

    #[test]
    fn ranges_and_their_releases_are_read_and_bad_ones_refused() {
        let releases = vec!["1.16".to_string(), "1.18".to_string()];
        let r = KernelRange::parse("13-18@1.18", &releases).unwrap();
        assert_eq!(r, KernelRange { start: 13, end: Some(18), first: 1, last: 1 });
        let r = KernelRange::parse("19+@..1.16", &releases).unwrap();
        assert_eq!(r, KernelRange { start: 19, end: None, first: 0, last: 0 });
        for bad in ["", "+", "7-6", "1.5", "13@1.99", "13@1.18..1.16", "0"] {
            assert!(KernelRange::parse(bad, &releases).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_open_range_takes_only_its_own_version_as_onnxruntime_does() {
        // Read in 1.16: "13+"; from 1.18 on: "13-17" and "18+".
        let t = table("13+@..1.16 13-17@1.18 18+@1.18");
        let all = [&t];
        let since = |opset| ProviderKernels::since_version(&all, &[], "ai.onnx", "Op", opset);
        assert_eq!((since(12), since(17), since(20)), (None, Some(13), Some(18)));
        let v = |s: &str| Ver::new(s);
        // An opset-18 node: 1.16's open 13+ does not take version 18.
        assert_eq!(t.kernel(&v("1.16.3"), "ai.onnx", "Op", since(18)), Kernel::Lacks);
        assert_eq!(t.kernel(&v("1.18.0"), "ai.onnx", "Op", since(18)), Kernel::Has);
        // 1.17 was not read, and 1.16 lacks what 1.18 has: it cannot be told.
        assert_eq!(t.kernel(&v("1.17.1"), "ai.onnx", "Op", since(18)), Kernel::Unknown);
        // Before the first release read it lacks what that one lacks; after
        // the last it keeps what that one has.
        assert_eq!(t.kernel(&v("1.14.1"), "ai.onnx", "Op", since(18)), Kernel::Lacks);
        assert_eq!(t.kernel(&v("1.22.0"), "ai.onnx", "Op", since(18)), Kernel::Has);
        assert_eq!(t.kernel(&v("1.22.0"), "ai.onnx", "Op", None), Kernel::Lacks);
        assert_eq!(t.first_with("ai.onnx", "Op", since(18)), Some(1));
    }
}
