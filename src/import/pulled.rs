//! What a package's own requirements installed that the paste does not
//! list: the CPU package onnxruntime that rembg, faster-whisper and the like
//! require (the matrix's `onnxruntime-required-by` table), and the
//! onnxruntime-gpu an extra of theirs adds (`pip install "rembg[gpu]"`).
//! A ticket names the package it installed, not what pip pulled in with it.

use std::sync::LazyLock;

use regex::Regex;

use super::{Collector, KeptDist, Key};
use crate::matrix::Matrix;
use crate::snapshot::{PastedFact, normalize_name};
use crate::version::Ver;

/// The matrix table of packages that require the CPU onnxruntime.
const TABLE: &str = "onnxruntime-required-by";

/// `name==version` lines beyond this many are an environment's freeze, not
/// an app's requirements file: they list what is installed.
const FREEZE_IS_A_LIST: usize = 8;

/// The most distributions whose extras are remembered, and extras of each.
const MAX_EXTRAS: usize = 256;

impl Collector {
    /// Reads the extras an install command names (`pip install
    /// "rembg[gpu,cli]==2.0.55"`, `uv pip install rembg[gpu]`).
    pub(crate) fn install_extras(&mut self, line: &str) {
        static EXTRAS: LazyLock<Regex> = LazyLock::new(|| {
            super::prose_regex(r#"(?:^|[\s"'`(])([A-Za-z][A-Za-z0-9_.-]*)\[([A-Za-z0-9_,. -]+)\]"#).unwrap()
        });
        if !line.contains('[') || !line.contains("install") {
            return;
        }
        for m in EXTRAS.captures_iter(line) {
            self.extras_named(&m[1], &m[2]);
        }
    }

    /// The extras of a requirement line (`rembg[gpu]==2.0.55`) whose
    /// distribution is `name`.
    pub(crate) fn install_extras_of(&mut self, name: &str, line: &str) {
        let Some(rest) = line.trim_start().strip_prefix(name) else { return };
        if let Some(extras) = rest.strip_prefix('[').and_then(|r| r.split_once(']')).map(|(e, _)| e) {
            self.extras_named(name, extras);
        }
    }

    fn extras_named(&mut self, dist: &str, extras: &str) {
        let lines = self.lines;
        if self.extras.len() >= MAX_EXTRAS && !self.extras.contains_key(&normalize_name(dist)) {
            return;
        }
        let list = self.extras.entry(normalize_name(dist)).or_default();
        for extra in extras.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if list.len() < MAX_EXTRAS && !list.iter().any(|(e, _)| e.eq_ignore_ascii_case(extra)) {
                list.push((extra.to_ascii_lowercase(), lines));
            }
        }
    }

    /// Where the paste lists no installed packages and names no onnxruntime,
    /// but names a release of a package that requires it: onnxruntime is
    /// installed, "required by" that release; and where an extra of that
    /// package adds onnxruntime-gpu, so is onnxruntime-gpu. A package list
    /// that shows the package without onnxruntime is what is installed
    /// (someone removed it), so nothing is added beside one.
    pub(crate) fn settle_pulled_onnxruntime(&mut self, matrix: &Matrix) {
        if self.list_rows > 0 || self.freeze_rows > FREEZE_IS_A_LIST || self.dists.contains_key("onnxruntime")
        {
            return;
        }
        let Some(table) = matrix.tables.get(TABLE) else { return };
        for row in &table.rows {
            let Some(package) = row.values.get("package") else { continue };
            let Some(installed) = self.dists.get(package.as_str()) else { continue };
            if !row.spec.contains(&installed.version) {
                continue;
            }
            let puller = format!("{package} {}", installed.version);
            let line = self.values.get(&Key::Dist(package.clone())).map_or(self.lines, |(_, l)| *l);
            let gpu_extras = row.values.get("gpu_extras").map_or("", String::as_str);
            let gpu_extra = self.extras.get(package.as_str()).and_then(|named| {
                named
                    .iter()
                    .find(|(e, _)| gpu_extras.split([' ', ',']).any(|g| g.eq_ignore_ascii_case(e)))
                    .cloned()
            });
            self.pulled("onnxruntime", format!("(required by {puller})"), line);
            if let Some((extra, at)) = gpu_extra
                && !self.dists.contains_key("onnxruntime-gpu")
            {
                self.pulled("onnxruntime-gpu", format!("(required by {package}[{extra}])"), at);
            }
            return;
        }
    }

    /// Records a distribution pip installed as a requirement: its "version"
    /// says by what, and no version clause accepts it.
    fn pulled(&mut self, name: &str, why: String, line: usize) {
        self.facts.push(PastedFact { fact: name.into(), value: why.clone(), line, guessed: true });
        self.values.insert(Key::Dist(name.into()), (why.clone(), line));
        self.kept.keep(name);
        self.dists.insert(name.into(), KeptDist { version: Ver::new(why.as_str()), stated: vec![why] });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_are_read_from_install_commands_only() {
        let mut c = Collector::default();
        c.install_extras(r#"pip install "rembg[gpu,cli]==2.0.55" onnxruntime-gpu"#);
        c.install_extras("the docs say rembg[gpu] is for GPUs");
        c.install_extras("uv pip install Faster_Whisper[ Extra ]");
        let named: Vec<&str> = c.extras["rembg"].iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(named, ["gpu", "cli"]);
        assert_eq!(c.extras["faster-whisper"][0].0, "extra");
        assert_eq!(c.extras.len(), 2);
    }
}
