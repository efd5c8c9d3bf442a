//! The loader's second pass, once every layer is read: the names rules
//! speak in are checked against what the matrix declares.
//!
//! Every fact a clause, lookup, table key, table match or `{placeholder}`
//! names must be one the [`Vocabulary`] knows (a misspelt one is refused
//! with the nearest known name), every `{row.column}` a column of the
//! rule's table, and every templated condition is compiled for each row it
//! can meet. What is left for a rule to do when it runs is reading facts
//! by key.

use std::collections::{BTreeMap, BTreeSet};

use super::load::MatrixError;
use super::template::{Slot, Template};
use super::{Cond, Condition, LibraryWheel, Origin, Rule, RuleKind, StackPackage, Table, Texts};
use crate::snapshot::{FactRef, PackageFacts, Vocabulary};

/// The names the matrix gives facts: its stack packages with what each
/// declares, and the distributions it watches.
pub(crate) fn vocabulary(
    packages: &BTreeSet<String>,
    stack: &[(StackPackage, Origin)],
    wheels: &[LibraryWheel],
) -> Vocabulary {
    let mut v = Vocabulary::default();
    v.distributions.extend(packages.iter().cloned());
    v.distributions.extend(wheels.iter().map(|w| w.package.clone()));
    for (p, _) in stack {
        v.distributions.extend(p.distributions.iter().cloned());
        v.distributions.insert(p.package.clone());
        let mut declared: BTreeSet<String> = p.facts.keys().cloned().collect();
        declared.extend(p.files.keys().cloned());
        declared.extend(p.table_facts.keys().cloned());
        declared.extend(p.stated.iter().cloned());
        v.packages.insert(p.package.clone(), PackageFacts { declared, trial: p.trial.is_some() });
    }
    v
}

/// The tables whose key is no fact: such a table can only be looked up by
/// a signature's group. (Why is worked out only when it is an error: the
/// nearest name costs a distance to every name.)
pub(crate) type KeyErrors = BTreeSet<String>;

/// Compiles each table's key, its `match` facts and, for every row, the
/// conditions in its `match` columns.
pub(crate) fn tables(
    errors: &mut Vec<MatrixError>,
    tables: &mut BTreeMap<String, Table>,
    v: &Vocabulary,
) -> KeyErrors {
    let mut keys = KeyErrors::new();
    for (name, table) in tables.iter_mut() {
        match v.parse_quietly(&table.key) {
            Some(k) => table.key_fact = Some(k),
            None => {
                keys.insert(name.clone());
            }
        }
        for (fact, _) in &table.matches {
            if let Err(why) = v.check(fact) {
                errors.push(MatrixError {
                    origin: table.origin.clone(),
                    message: format!("table `{name}` match: {why}"),
                });
            }
        }
        let columns: Vec<String> = table.matches.iter().map(|(_, c)| c.clone()).collect();
        for row in &mut table.rows {
            // convert_table reported any that does not parse.
            row.conditions = columns
                .iter()
                .filter_map(|c| row.values.get(c).and_then(|text| Condition::parse(text).ok()))
                .collect();
        }
    }
    keys
}

/// A stack package's tables are looked up by their key fact.
pub(crate) fn stack(
    errors: &mut Vec<MatrixError>,
    stack: &[(StackPackage, Origin)],
    tables: &BTreeMap<String, Table>,
    keys: &KeyErrors,
    v: &Vocabulary,
) {
    for (package, origin) in stack {
        let names = package
            .table_facts
            .values()
            .map(|(t, _)| t)
            .chain(package.libraries.iter().filter_map(|l| l.table.as_ref()));
        for table in names {
            if keys.contains(table) {
                let why = tables.get(table).and_then(|t| v.parse(&t.key).err()).unwrap_or_default();
                let message = format!("`{}` reads table `{table}`, whose key {why}", package.package);
                errors.push(MatrixError { origin: origin.clone(), message });
            }
        }
    }
}

/// Compiles one rule's facts, lookup, conditions and texts.
pub(crate) fn rule(
    errors: &mut Vec<MatrixError>,
    rule: &mut Rule,
    tables: &BTreeMap<String, Table>,
    keys: &KeyErrors,
    v: &Vocabulary,
) {
    let code = rule.code.clone();
    let mut fail =
        |origin: &Origin, message: String| errors.push(MatrixError { origin: origin.clone(), message });
    match &mut rule.kind {
        RuleKind::Builtin => {}
        RuleKind::Signature { regex, lookup, likely, .. } => {
            for clause in likely.iter().flat_map(|l| l.when.iter().chain(&l.decided_by)) {
                if let Err(why) = v.check(&clause.fact) {
                    fail(&clause.origin, why);
                }
                if matches!(clause.condition, Cond::Template { .. }) {
                    fail(&clause.origin, format!("a likely cause of `{code}` compares with no other fact"));
                }
            }
            let Some(lookup) = lookup else { return };
            let Some(table) = tables.get(&lookup.table) else {
                fail(&lookup.origin, format!("rule `{code}` looks up unknown table `{}`", lookup.table));
                return;
            };
            let by_group = lookup.by.as_deref().is_some_and(|b| regex_has_group(regex.as_str(), b));
            if !by_group {
                lookup.fact = lookup_fact(lookup, table, keys, v).map_err(|m| fail(&lookup.origin, m)).ok();
            }
            for text in std::iter::once(&rule.message).chain(&rule.fixes) {
                for slot in Template::parse(text).slots().flatten() {
                    if let Slot::Row(col) = slot
                        && !table.columns.contains(col)
                    {
                        fail(
                            &lookup.origin,
                            format!("`{{row.{col}}}` names no column of table `{}`", table.name),
                        );
                    }
                }
            }
        }
        RuleKind::Facts { when, lookup, require, unless, texts } => {
            let table = match lookup {
                Some(l) => match tables.get(&l.table) {
                    Some(t) => {
                        l.fact = lookup_fact(l, t, keys, v).map_err(|m| fail(&l.origin, m)).ok();
                        Some(t)
                    }
                    None => {
                        fail(&l.origin, format!("rule `{code}` looks up unknown table `{}`", l.table));
                        return;
                    }
                },
                None => None,
            };
            for clause in when.iter_mut().chain(require.iter_mut()).chain(unless.iter_mut()) {
                if let Err(why) = v.check(&clause.fact) {
                    fail(&clause.origin, why);
                }
                if let Cond::Template { template, per_row } = &mut clause.condition {
                    match compile_condition(template, table, v) {
                        Ok(rows) => *per_row = rows,
                        Err(why) => fail(&clause.origin, why),
                    }
                }
            }
            let mut compile = |text: &str| {
                let t = Template::parse(text);
                if let Err(why) = check_slots(&t, table, v) {
                    fail(&rule.origin, format!("rule `{code}`: {why}"));
                }
                t
            };
            *texts = Texts {
                message: compile(&rule.message),
                why: compile(&rule.why),
                fixes: rule.fixes.iter().map(|f| compile(f)).collect(),
            };
        }
    }
}

/// The fact a lookup chooses its row by: `by`, else the table's key.
fn lookup_fact(
    lookup: &super::Lookup,
    table: &Table,
    keys: &KeyErrors,
    v: &Vocabulary,
) -> Result<FactRef, String> {
    match (&lookup.by, &table.key_fact) {
        (Some(by), _) => v.parse(by).map_err(|why| format!("lookup by {why}")),
        (None, Some(key)) => Ok(key.clone()),
        (None, None) => Err(format!(
            "table `{}` is looked up by its key, and {}",
            table.name,
            v.parse(&table.key).err().filter(|_| keys.contains(&table.name)).unwrap_or_default()
        )),
    }
}

/// Checks a template's placeholders: facts the vocabulary knows, columns
/// of the rule's table.
fn check_slots(t: &Template, table: Option<&Table>, v: &Vocabulary) -> Result<(), String> {
    for slot in t.slots().flatten() {
        match (slot, table) {
            (Slot::Fact(k), _) => v.check(&FactRef::one(k.clone()))?,
            (Slot::Row(col), None) => {
                return Err(format!("`{{row.{col}}}` is used but the rule has no `lookup`"));
            }
            (Slot::Row(col), Some(t)) if !t.columns.contains(col) => {
                return Err(format!("`{{row.{col}}}` names no column of table `{}`", t.name));
            }
            (Slot::Row(_), Some(_)) => {}
        }
    }
    Ok(())
}

/// A templated condition, checked against every row it can meet: with
/// only row columns, the condition of each row; with facts too, only
/// its syntax (the facts are known when the rule runs).
fn compile_condition(t: &Template, table: Option<&Table>, v: &Vocabulary) -> Result<Vec<Condition>, String> {
    check_slots(t, table, v)?;
    let rows: Vec<Option<&super::Row>> = match table {
        Some(table) if t.slots().flatten().any(|s| matches!(s, Slot::Row(_))) => {
            table.rows.iter().map(Some).collect()
        }
        _ => vec![None],
    };
    let mut compiled = Vec::new();
    for row in rows {
        let text = t
            .fill(|slot| match (slot, row) {
                (Slot::Row(col), Some(row)) => row.values.get(col).cloned().ok_or_else(String::new),
                // `{fact|row.column}`: the row's value shows the syntax.
                (Slot::Fact(_), Some(_)) => Err(String::new()),
                // A stand-in for a fact, for the syntax alone.
                _ => Ok("0".into()),
            })
            .unwrap_or_default();
        match Condition::parse(&text) {
            Ok(c) => compiled.push(c),
            Err(why) => {
                return Err(match row {
                    Some(r) => format!("for the row at {}: {why}", r.origin),
                    None => why,
                });
            }
        }
    }
    // Conditions that name facts are filled when the rule runs.
    if !t.rows_only() {
        compiled.clear();
    }
    Ok(compiled)
}

/// Whether a regex has a group of this name (either syntax), without
/// compiling it: signatures are compiled only when a paste is read.
fn regex_has_group(pattern: &str, name: &str) -> bool {
    [format!("(?P<{name}>"), format!("(?<{name}>")].iter().any(|g| pattern.contains(g.as_str()))
}
