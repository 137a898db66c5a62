//! Arming failpoints: names resolved to the marks of the program, the
//! `TICKPROF_FAIL` table installed for every thread, an API table entry
//! for the calling thread, and the faults part of a report. What a marked
//! call reads is in [`super::eval`].

use super::eval::{
    self, key, lock, update_bit, with_table, Point, Resolved, ARMED_EVER, GENERATION, GLOBAL,
    INJECTED, SEED,
};
use super::parse;
use crate::report::Faults;
use crate::site::CallSite;
use core::sync::atomic::Ordering;
use std::sync::Arc;

pub(crate) use eval::{remove, replace, reset_counts, set_seed, LocalEntry};

/// The marks whose name is `name`, or, failing that, whose name ends with
/// `::name`; an error if there is none, or several names end with it.
fn resolve(name: &str) -> Result<Vec<&'static CallSite>, String> {
    let marks = crate::coverage::marks();
    let exact: Vec<_> = marks.iter().copied().filter(|s| s.name() == name).collect();
    if !exact.is_empty() {
        return Ok(exact);
    }
    let suffix = format!("::{name}");
    let found: Vec<_> = marks
        .iter()
        .copied()
        .filter(|s| s.name().ends_with(&suffix))
        .collect();
    let mut names: Vec<String> = found.iter().map(|s| s.name()).collect();
    names.sort();
    names.dedup();
    match names.len() {
        0 => Err(format!(
            "no mark is named {name:?} or ends with \"::{name}\""
        )),
        1 => Ok(found),
        n => Err(format!(
            "{name:?} is ambiguous: {n} marks end with it ({}); write more of the path",
            names.join(", ")
        )),
    }
}

/// Parses and resolves `actions` for `name`.
fn point(name: &str, actions: &str) -> Result<(Vec<usize>, Arc<Point>), String> {
    let actions = parse::actions(actions)?;
    let sites = resolve(name.trim())?;
    Ok((
        sites.into_iter().map(key).collect(),
        Arc::new(Point { actions }),
    ))
}

/// Arms the `TICKPROF_FAIL` table for every thread; returns one warning
/// per bad entry (which arms nothing).
pub(crate) fn arm_global(table: &str, seed: u64) -> Vec<String> {
    set_seed(seed);
    let mut resolved = Resolved::new();
    let mut warnings = Vec::new();
    for e in parse::table(table) {
        let checked = e.parsed.and_then(|(name, actions)| {
            let sites = resolve(name.trim())?;
            let p = Arc::new(Point { actions });
            Ok(sites
                .into_iter()
                .map(|s| (key(s), Arc::clone(&p)))
                .collect::<Vec<_>>())
        });
        match checked {
            Ok(sites) => resolved.extend(sites),
            Err(why) => warnings.push(format!(
                "tickprof: warning: TICKPROF_FAIL entry {}: {}; not armed",
                crate::config::quoted(e.text),
                crate::config::named(&why)
            )),
        }
    }
    resolved.sort_by_key(|e| e.0);
    // A site named by two entries keeps the later one.
    resolved.reverse();
    resolved.dedup_by_key(|e| e.0);
    resolved.reverse();
    *lock(&GLOBAL) = (!resolved.is_empty()).then(|| Arc::new(resolved));
    GENERATION.fetch_add(1, Ordering::Relaxed);
    update_bit();
    warnings
}

/// Sets `name`'s actions in this thread's table.
pub(crate) fn cfg(name: &str, actions: &str) -> Result<(), String> {
    let (sites, p) = point(name, actions)?;
    with_table(|t| {
        t.retain(|e| e.0 != name);
        t.push((name.to_owned(), sites, p));
    });
    Ok(())
}

/// The faults part of a report: `None` if no table was ever armed.
pub(crate) fn faults() -> Option<Faults> {
    if !ARMED_EVER.load(Ordering::Relaxed) {
        return None;
    }
    let mut sites: Vec<(String, u64)> = lock(&INJECTED)
        .iter()
        .map(|(_, s, n)| (s.name(), *n))
        .collect();
    sites.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Some(Faults {
        seed: SEED.load(Ordering::Relaxed),
        sites,
    })
}
