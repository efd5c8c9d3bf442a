//! Which released versions the matrix has a row for, table by table.
//!
//! Reads `TABLE VERSION` lines on stdin (bench/coverage.sh feeds it the
//! release lists of the package registry) and prints, per table, how many
//! of the releases some row covers, and the ones none does. A release no
//! row covers makes the rules that need the table report "not evaluated".

use std::collections::BTreeMap;
use std::io::BufRead;

use onnx_doctor::matrix::Matrix;
use onnx_doctor::version::Ver;

fn main() {
    let matrix = Matrix::load(&[]).expect("the embedded matrix loads");
    let mut wanted: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let mut words = line.split_whitespace();
        if let (Some(table), Some(version)) = (words.next(), words.next()) {
            wanted.entry(table.to_string()).or_default().push(version.to_string());
        }
    }
    for (table, versions) in wanted {
        let Some(t) = matrix.tables.get(&table) else {
            println!("{table}: no such table");
            continue;
        };
        let missing: Vec<&String> = versions
            .iter()
            .filter(|v| !t.rows.iter().any(|r| r.spec.contains(&Ver::new(v.as_str()))))
            .collect();
        println!(
            "{table}: {} of {} releases covered ({} rows){}",
            versions.len() - missing.len(),
            versions.len(),
            t.rows.len(),
            if missing.is_empty() {
                String::new()
            } else {
                format!("; not covered: {}", missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "))
            }
        );
    }
}
