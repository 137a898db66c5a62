//! Coverage: every mark compiled into the program, known at start-up, so a
//! report can say which ones never ran.
//!
//! Each `static CallSite` the macros emit is also put in a list of every
//! mark by `mark!` (`__private::mark`): a link section where the platform
//! has one that works (`section.rs`), else a constructor per mark
//! (`constructors.rs`: wasm and windows-gnu). Either way the list is
//! complete when `main` starts.
//!
//! Internal sites (tickprof's own, in its tests) are registered nowhere
//! and filtered out regardless.

use crate::report::{Coverage, Mark, SiteStats};
use crate::site::CallSite;
use std::collections::HashSet;

/// The list of every mark, and what `mark!` expands to.
#[cfg_attr(
    not(any(target_family = "wasm", all(windows, target_env = "gnu"))),
    path = "coverage/section.rs"
)]
#[cfg_attr(
    any(target_family = "wasm", all(windows, target_env = "gnu")),
    path = "coverage/constructors.rs"
)]
pub(crate) mod list;

/// The program's marks, tickprof's own left out, each once, in a stable
/// order (file, line, column, name).
pub(crate) fn marks() -> Vec<&'static CallSite> {
    let mut all: Vec<&'static CallSite> = list::all().filter(|s| !s.is_internal()).collect();
    all.sort_by_key(|s| *s as *const CallSite as usize);
    all.dedup_by_key(|s| *s as *const CallSite as usize);
    let mut keyed: Vec<_> = all.into_iter().map(|s| (key(s), s)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, s)| s).collect()
}

fn key(s: &CallSite) -> (&'static str, u32, u32, String) {
    (s.file(), s.line(), s.column(), s.name())
}

/// The coverage of `sites` (a report's rows) against every mark.
pub(crate) fn coverage(sites: &[SiteStats]) -> Coverage {
    of(&marks(), sites)
}

fn mark_of(s: &CallSite) -> Mark {
    Mark {
        name: s.name(),
        kind: s.kind(),
        file: s.file().to_owned(),
        line: s.line(),
    }
}

/// The coverage of `sites` against `marks`: a mark ran if a row with its
/// name, file and line has calls (or was cancelled, for async marks).
fn of(marks: &[&'static CallSite], sites: &[SiteStats]) -> Coverage {
    let ran: HashSet<(&str, &str, u32)> = sites
        .iter()
        .filter(|s| s.calls > 0 || s.cancelled > 0)
        .map(|s| (s.name.as_str(), s.file.as_str(), s.line))
        .collect();
    let all: Vec<Mark> = marks.iter().map(|s| mark_of(s)).collect();
    let marked = all.len();
    let never_called: Vec<Mark> = all
        .into_iter()
        .filter(|m| !ran.contains(&(m.name.as_str(), m.file.as_str(), m.line)))
        .collect();
    Coverage {
        marked,
        ran: marked - never_called.len(),
        never_called,
    }
}

/// Every mark with its figures: the report's rows, plus a zero row for each
/// mark that never ran, sorted by name.
pub(crate) fn sites(mut rows: Vec<SiteStats>) -> Vec<SiteStats> {
    let cov = coverage(&rows);
    rows.extend(cov.never_called.iter().map(SiteStats::never_called));
    rows.sort_by(|a, b| a.name.cmp(&b.name).then(a.line.cmp(&b.line)));
    rows
}

#[cfg(test)]
mod tests;
