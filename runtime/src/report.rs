//! The `Report`: the same data as the exit report, as values. (The
//! writers are in the `export` module.)

pub(crate) use crate::process::process_id;
pub use crate::site::{SiteKind, Timing};
pub use coverage::{Coverage, Faults, Mark};
pub(crate) use run::{fmt_hz, instrumentation_measured, MIN_FOUND};
pub use run::{ClockSource, RunInfo};
pub use sites::{AllocStats, Edge, SiteStats, ThreadSite, ThreadStats, TreeNode, FEW_PC_SAMPLES};
pub use trace::{Trace, TraceEvent, TraceThread};

mod coverage;
mod run;
mod sites;
mod trace;

/// A profile: the run header and one row per call site that ran.
///
/// Obtain one with [`report()`](crate::report) at any time; the exit report
/// prints the same value.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct Report {
    /// The header.
    pub run: RunInfo,
    /// One entry per site that ran, sorted by total time, descending.
    pub sites: Vec<SiteStats>,
    /// Per-thread breakdown, in order of first marked call.
    pub threads: Vec<ThreadStats>,
    /// The calling-context tree of all threads merged: `tree[0]` is the
    /// root, and every parent comes before its children. Calls folded
    /// because a thread's tree was full are not in it (see
    /// [`RunInfo::folded_calls`]); their time is inside their nearest
    /// recorded ancestor's self time.
    pub tree: Vec<TreeNode>,
    /// Individual calls per thread, when tracing is on (`TICKPROF_TRACE=1`
    /// or a `.trace.json` output); `None` otherwise. Left out of the JSON
    /// export (the `.trace.json` output is its own format).
    #[cfg_attr(test, serde(skip))]
    pub trace: Option<Trace>,
    /// Which of the program's marks ran (reports of the whole run; `None`
    /// in snapshot differences and with profiling off).
    pub coverage: Option<Coverage>,
    /// Faults injected at failpoints, when any table was armed.
    pub faults: Option<Faults>,
}

impl Report {
    /// The path of tree node `i` as names from the root's child down to it.
    pub fn path(&self, mut i: usize) -> Vec<&str> {
        let mut v = Vec::new();
        while let Some(n) = self.tree.get(i) {
            match n.parent {
                Some(p) => {
                    v.push(n.name.as_str());
                    i = p;
                }
                None => break,
            }
        }
        v.reverse();
        v
    }
}

/// Report sort orders (`TICKPROF_SORT`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Total time, descending.
    Total,
    /// Self time, descending (the default).
    SelfTime,
    /// Number of calls, descending.
    Calls,
    /// Mean time per call, descending.
    Mean,
    /// Name, ascending.
    Name,
    /// Bytes allocated (`tickprof::Alloc`), marked callees included,
    /// descending.
    Bytes,
    /// Allocations, marked callees included, descending.
    Allocs,
}

/// Text report layouts (`TICKPROF_REPORT`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// The flat table (the default).
    #[default]
    Flat,
    /// The flat table, then a caller/callee section per site.
    Tree,
}

/// What the text writer shows.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TextOptions {
    /// At most this many rows (`None`: all).
    pub top: Option<usize>,
    /// Add a caller/callee section per site.
    pub tree: bool,
    /// Add the per-thread breakdown.
    pub threads: bool,
    /// List the marks that never ran (`TICKPROF_REPORT=coverage`); the
    /// one-line coverage summary is always shown.
    pub coverage: bool,
    /// A header line on marks placed after inlining: the functions
    /// marked, the functions left inlined (`TICKPROF_AFTER_INLINING`,
    /// set by `cargo tickprof`).
    pub after_inlining: Option<(u64, u64)>,
    /// The whole header (`TICKPROF_REPORT=verbose`), not its first three
    /// lines.
    pub verbose: bool,
}

impl TextOptions {
    /// Shows at most `top` rows (`None`: all).
    ///
    /// # Examples
    ///
    /// ```
    /// use tickprof_runtime::TextOptions;
    /// let opts = TextOptions::default().with_top(Some(10)).with_tree(true);
    /// assert_eq!((opts.top, opts.tree, opts.threads), (Some(10), true, false));
    /// ```
    #[must_use]
    pub fn with_top(mut self, top: Option<usize>) -> Self {
        self.top = top;
        self
    }

    /// Adds (or not) a caller/callee section per site.
    #[must_use]
    pub fn with_tree(mut self, tree: bool) -> Self {
        self.tree = tree;
        self
    }

    /// Adds (or not) the per-thread breakdown.
    #[must_use]
    pub fn with_threads(mut self, threads: bool) -> Self {
        self.threads = threads;
        self
    }

    /// Lists (or not) the marks that never ran.
    #[must_use]
    pub fn with_coverage(mut self, coverage: bool) -> Self {
        self.coverage = coverage;
        self
    }

    /// Shows the whole header, or (`false`) its first three lines.
    #[must_use]
    pub fn with_verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }
}

impl Report {
    /// A report with no sites (profiling off or nothing ran).
    pub fn empty() -> Report {
        Report {
            run: RunInfo::off(),
            sites: Vec::new(),
            threads: Vec::new(),
            tree: Vec::new(),
            trace: None,
            coverage: None,
            faults: None,
        }
    }

    /// The site with this exact name, if it ran.
    pub fn site(&self, name: &str) -> Option<&SiteStats> {
        self.sites.iter().find(|s| s.name == name)
    }

    /// The first site whose name ends with `suffix` (handy with full paths:
    /// `report.find("::parse")`).
    pub fn find(&self, suffix: &str) -> Option<&SiteStats> {
        self.sites.iter().find(|s| s.name.ends_with(suffix))
    }

    /// Sorts the sites: totals, self, calls, mean, bytes and allocations
    /// descending, names ascending; ties by name.
    pub fn sort(&mut self, key: SortKey) {
        self.sites.sort_by(|a, b| {
            let o = match key {
                SortKey::Total => b.total_ns.cmp(&a.total_ns),
                SortKey::SelfTime => b.self_ns.cmp(&a.self_ns),
                SortKey::Calls => b.calls.cmp(&a.calls),
                SortKey::Mean => b.mean_ns.total_cmp(&a.mean_ns),
                SortKey::Name => a.name.cmp(&b.name),
                SortKey::Bytes => b.alloc.bytes.cmp(&a.alloc.bytes),
                SortKey::Allocs => b.alloc.allocs.cmp(&a.alloc.allocs),
            };
            o.then_with(|| a.name.cmp(&b.name))
        });
    }
}

/// Human time: `850 ns`, `12.3 µs`, `4.56 ms`, `1.234 s`.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1e3 {
        if ns < 10.0 && ns.fract() != 0.0 {
            format!("{ns:.1} ns")
        } else {
            format!("{ns:.0} ns")
        }
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(3.25), "3.2 ns");
        assert_eq!(fmt_ns(12_300.0), "12.30 µs");
        assert_eq!(fmt_ns(4_560_000.0), "4.56 ms");
        assert_eq!(fmt_ns(1_234_000_000.0), "1.234 s");
        assert_eq!(run::fmt_hz(2_596_000_000.0), "2.596 GHz");
        assert_eq!(run::fmt_hz(24e6), "24.000 MHz");
    }
}
