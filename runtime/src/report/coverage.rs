//! The coverage and fault-injection parts of a report.

use super::{SiteKind, SiteStats};

/// One mark of the program (a marked function or scope), ran or not.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct Mark {
    /// The shown name, as in [`SiteStats::name`].
    pub name: String,
    /// Function or scope.
    pub kind: SiteKind,
    /// Source file of the mark.
    pub file: String,
    /// Source line of the mark.
    pub line: u32,
}

/// Which of the program's marks ran.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct Coverage {
    /// Marks compiled into the program (tickprof's own left out).
    pub marked: usize,
    /// Marks that completed at least one call (or were cancelled).
    pub ran: usize,
    /// The marks that never ran, by file and line.
    pub never_called: Vec<Mark>,
}

/// Faults injected at failpoints (`TICKPROF_FAIL` or `tickprof::fail`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct Faults {
    /// The seed of the probability prefixes (`TICKPROF_FAIL_SEED`).
    pub seed: u64,
    /// Faults injected per site name, most first (ties by name); only
    /// sites where at least one fired.
    pub sites: Vec<(String, u64)>,
}

impl Faults {
    /// Faults injected at the site with this exact name.
    pub fn at(&self, name: &str) -> u64 {
        self.sites
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, c)| *c)
    }

    /// Faults injected in all.
    pub fn total(&self) -> u64 {
        self.sites
            .iter()
            .fold(0u64, |a, (_, c)| a.saturating_add(*c))
    }
}

impl SiteStats {
    /// The all-zero row of a mark that never ran.
    pub fn never_called(m: &Mark) -> SiteStats {
        SiteStats {
            name: m.name.clone(),
            function: m.name.clone(),
            kind: m.kind,
            file: m.file.clone(),
            line: m.line,
            column: 0,
            calls: 0,
            timing: super::Timing::Timed,
            timed_calls: 0,
            total_ns: 0,
            self_ns: 0,
            p_self: 0.0,
            mean_ns: 0.0,
            resolved: true,
            min_ns: 0,
            max_ns: 0,
            total_ticks: 0,
            self_ticks: 0,
            min_ticks: 0,
            max_ticks: 0,
            raw_total_ns: 0,
            raw_self_ns: 0,
            compensated_total_ns: 0,
            compensated_self_ns: 0,
            self_sampled_ns: 0,
            total_sampled_ns: 0,
            reversed: 0,
            oversized: 0,
            unwound: 0,
            wall_ns: 0,
            cancelled: 0,
            callers: Vec::new(),
            callees: Vec::new(),
            alloc: crate::report::AllocStats::default(),
            self_alloc: crate::report::AllocStats::default(),
            p50_ns: 0,
            p90_ns: 0,
            p99_ns: 0,
            hist: Vec::new(),
            hist_sum_ns: 0,
            pc_samples: 0,
        }
    }
}
