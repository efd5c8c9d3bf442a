//! Which distributions a paste's snapshot keeps.
//!
//! A paste can list a million packages; a report about them must not grow
//! with it. Every distribution the matrix watches is kept (the packages it
//! reads in full, the stack's distributions and conda names, the pip wheels
//! that ship libraries, and every name a rule or table reads a fact of),
//! and so are the first [`MAX_OTHERS`] others the paste names. The rest are
//! only counted, distinct names up to [`MAX_COUNTED`], so that the report
//! can say how many it left out; memory follows what is kept, not what is
//! read.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use crate::matrix::{Matrix, RuleKind};
use crate::snapshot::{FactKey, FactRef, normalize_name};

/// Distributions the matrix does not watch that a snapshot keeps, first
/// stated first.
pub(crate) const MAX_OTHERS: usize = 4096;
/// Distinct names left out that are counted exactly; past it the count is
/// a lower bound.
pub(crate) const MAX_COUNTED: usize = 1 << 16;

/// The pasted fact that records how many distributions were left out.
pub(crate) const NOT_KEPT_FACT: &str = "distributions.not_kept";

#[derive(Default)]
pub(crate) struct Kept {
    /// Normalised names the matrix reads facts of.
    watched: HashSet<String>,
    /// Unwatched distributions admitted so far.
    others: usize,
    /// Hashes of the distinct names left out (at most [`MAX_COUNTED`]).
    left_out: HashSet<u64>,
    /// More distinct names were left out than were counted.
    saturated: bool,
    /// The first line that named a distribution left out.
    first_left_out: Option<usize>,
}

impl Kept {
    /// What `matrix` watches.
    pub(crate) fn new(matrix: &Matrix) -> Self {
        let mut watched: HashSet<String> = matrix.packages.iter().cloned().collect();
        for p in &matrix.stack {
            let names = std::iter::once(&p.package).chain(&p.distributions).chain(&p.conda);
            watched.extend(names.map(|n| normalize_name(n)));
        }
        watched.extend(matrix.library_wheels.iter().map(|w| normalize_name(&w.package)));
        let mut facts: Vec<&FactRef> = Vec::new();
        for rule in &matrix.rules {
            if let RuleKind::Facts { when, require, .. } = &rule.kind {
                facts.extend(when.iter().chain(require).map(|c| &c.fact));
            }
            facts.extend(rule.kind.lookup().and_then(|l| l.fact.as_ref()));
        }
        for table in matrix.tables.values() {
            facts.extend(&table.key_fact);
            facts.extend(table.matches.iter().map(|(fact, _)| fact));
        }
        for key in facts.iter().flat_map(|f| f.keys()) {
            match key {
                FactKey::Version(name) | FactKey::Of(name, _) => {
                    watched.insert(normalize_name(name));
                }
                _ => {}
            }
        }
        Self { watched, ..Self::default() }
    }

    /// Whether a distribution not yet kept may be: the matrix watches it,
    /// or the others have room.
    pub(crate) fn has_room_for(&self, name: &str) -> bool {
        self.watched.contains(name) || self.others < MAX_OTHERS
    }

    /// Counts a distribution now kept.
    pub(crate) fn keep(&mut self, name: &str) {
        if !self.watched.contains(name) {
            self.others += 1;
        }
    }

    /// Counts a distribution left out, named at `line`.
    pub(crate) fn leave_out(&mut self, name: &str, line: usize) {
        self.first_left_out.get_or_insert(line);
        if self.left_out.len() < MAX_COUNTED {
            // A hasher with fixed keys: the count is the same on every run.
            let mut h = std::hash::DefaultHasher::new();
            name.hash(&mut h);
            self.left_out.insert(h.finish());
        } else {
            self.saturated = true;
        }
    }

    /// Whether the matrix watches a (normalised) name.
    pub(crate) fn watches(&self, name: &str) -> bool {
        self.watched.contains(name)
    }

    /// How many distinct distributions were left out ("at least N" past
    /// what is counted), and the first line that named one.
    pub(crate) fn left_out(&self) -> Option<(String, usize)> {
        let line = self.first_left_out?;
        let n = self.left_out.len();
        Some((if self.saturated { format!("at least {n}") } else { n.to_string() }, line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn those_left_out_are_counted_once_each_and_then_bounded() {
        let mut kept = Kept { watched: HashSet::from(["torch".to_string()]), ..Kept::default() };
        for i in 0..MAX_OTHERS {
            let name = format!("pkg{i}");
            assert!(kept.has_room_for(&name));
            kept.keep(&name);
        }
        assert!(!kept.has_room_for("one-more") && kept.has_room_for("torch"));
        assert_eq!(kept.left_out(), None);
        for line in [10, 11, 12] {
            kept.leave_out("one-more", line);
        }
        assert_eq!(kept.left_out(), Some(("1".to_string(), 10)), "a name repeated is one distribution");
        for i in 0..MAX_COUNTED + 10 {
            kept.leave_out(&format!("extra{i}"), 20);
        }
        assert_eq!(kept.left_out(), Some((format!("at least {MAX_COUNTED}"), 10)));
    }
}
