//! The `Report`: the same data as the exit report, as values. (The
//! writers are in the `export` module.)

pub use crate::site::SiteKind;
pub use coverage::{Coverage, Faults, Mark};
pub use trace::{Trace, TraceEvent, TraceThread};

mod coverage;
mod trace;

/// Where ticks come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ClockSource {
    /// The x86_64 time-stamp counter (`rdtsc`).
    Tsc,
    /// The OS monotonic clock (`std::time::Instant`), ticks in nanoseconds.
    Monotonic,
    /// Nothing was recorded (profiling off).
    Off,
}

impl ClockSource {
    /// A short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            ClockSource::Tsc => "rdtsc",
            ClockSource::Monotonic => "monotonic clock",
            ClockSource::Off => "off",
        }
    }
}

/// Facts about the run and the clock: the report header.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct RunInfo {
    /// The clock read at entry and exit.
    pub clock: ClockSource,
    /// Ticks per second used to convert ticks to time.
    pub frequency_hz: f64,
    /// How the frequency was obtained (cpuid leaf, measured, confirmed).
    pub frequency_source: String,
    /// Whether the TSC is invariant (`None`: cpuid does not say).
    pub invariant_tsc: Option<bool>,
    /// Wall time from process start (or the last `reset`) to this report.
    pub wall_ns: u64,
    /// Threads that recorded at least one call (finished ones included:
    /// the sum of the [`ThreadStats::count`]s).
    pub threads: usize,
    /// Deltas above this are rejected as oversized (`TICKPROF_MAX_DELTA`).
    pub max_delta_ns: u64,
    /// Guards dropped out of LIFO order (leaked, moved or dropped early):
    /// frames popped by a resynchronisation plus guards whose frame was gone.
    pub out_of_order: u64,
    /// Calls that could not be recorded: begun before and ended after their
    /// thread's profiler state was torn down (e.g. in another thread-local's
    /// destructor). Calls made entirely after it are still recorded, as
    /// calls with no marked caller.
    pub lost: u64,
    /// Calls made from inside the profiler's own bookkeeping: not recorded.
    pub reentrant: u64,
    /// Guards never dropped (leaked with `mem::forget`, or moved into
    /// something never dropped), counted when their thread exited; calls
    /// made after them on that thread were recorded beneath them.
    pub leaked: u64,
    /// Calls recorded on overflow nodes because a thread's calling-context
    /// tree reached `TICKPROF_MAX_NODES`: counted in their site's figures,
    /// their time attributed to the nearest recorded ancestor in the tree.
    pub folded_calls: u64,
    /// False when the report could not wait for a finishing thread and may
    /// miss that thread's calls.
    pub complete: bool,
    /// Whether the shown times (`total_ns`, `self_ns`, `mean_ns`, `min_ns`,
    /// `max_ns`) have the calibrated instrumentation cost subtracted
    /// (`TICKPROF_COMPENSATE`, default on). Raw and compensated values are
    /// both always in `SiteStats`.
    pub compensated: bool,
    /// Calibrated cost of a guard inside its own measured interval, in
    /// nanoseconds per call (0 when not calibrated).
    pub overhead_inner_ns: f64,
    /// The same in ticks.
    pub overhead_inner_ticks: f64,
    /// Calibrated cost of one marked call as its caller sees it, in
    /// nanoseconds (0 when not calibrated).
    pub overhead_call_ns: f64,
    /// The same in ticks.
    pub overhead_call_ticks: f64,
    /// How the overhead was calibrated.
    pub calibration: String,
    /// Estimated instrumentation cost of the whole run (every recorded call
    /// times `overhead_call_ns`), as a fraction of the time the threads
    /// spent: the wall time, or the roots' raw totals summed over threads
    /// when that is larger (several threads busy at once); at most 1.
    pub overhead_share: f64,
    /// Tree nodes whose compensated time would have been negative (set to 0).
    pub clamped: u64,
    /// Tree nodes whose own measured time was below the sum of their
    /// children's (a rejected call, out-of-order clock reads, or the
    /// compensation): their total is raised to their children's sum, so
    /// that no parent is shorter than its children and no self time is
    /// negative.
    pub carried: u64,
    /// Whether individual calls are recorded for the trace output.
    pub tracing: bool,
    /// Trace events past the per-thread bound (`TICKPROF_TRACE_EVENTS`),
    /// counted and not stored.
    pub trace_dropped: u64,
    /// The id of the process that made the report (a forked child's report
    /// covers only the child's calls).
    pub pid: u32,
    /// Whether `tickprof::Alloc` is the global allocator (it counted
    /// something): the reports then show allocation columns.
    pub alloc_installed: bool,
    /// Allocations made outside any marked call, on threads that made a
    /// marked call (the `<outside marked calls>` row).
    pub outside: AllocStats,
}

/// Allocation counts (from `tickprof::Alloc`): allocations, bytes, frees,
/// freed bytes. A reallocation is one allocation of the new size and one
/// free of the old size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct AllocStats {
    /// Allocations (reallocations included).
    pub allocs: u64,
    /// Bytes allocated.
    pub bytes: u64,
    /// Frees (reallocations included).
    pub frees: u64,
    /// Bytes freed.
    pub freed_bytes: u64,
}

impl AllocStats {
    /// Allocation counts with these figures.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = tickprof_runtime::AllocStats::new(2, 64, 1, 32);
    /// assert_eq!((a.allocs, a.bytes, a.frees, a.freed_bytes), (2, 64, 1, 32));
    /// ```
    pub fn new(allocs: u64, bytes: u64, frees: u64, freed_bytes: u64) -> AllocStats {
        AllocStats {
            allocs,
            bytes,
            frees,
            freed_bytes,
        }
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &AllocStats) {
        self.allocs += o.allocs;
        self.bytes += o.bytes;
        self.frees += o.frees;
        self.freed_bytes += o.freed_bytes;
    }
}

/// A caller or callee of a site.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct Edge {
    /// The other site's name; `<root>` for calls made with no marked caller.
    pub name: String,
    /// Calls along this edge.
    pub calls: u64,
    /// Time spent in the callee along this edge, in nanoseconds.
    pub total_ns: u64,
}

/// The figures of one call site.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct SiteStats {
    /// The shown name: function path, custom name, or scope name.
    pub name: String,
    /// Path of the enclosing function, e.g. `myapp::parser::Parser::next_token`.
    pub function: String,
    /// Function or scope.
    pub kind: SiteKind,
    /// Source file of the mark.
    pub file: String,
    /// Source line of the mark.
    pub line: u32,
    /// Source column of the mark (scopes; 0 for functions).
    pub column: u32,
    /// Completed calls, rejected ones included.
    pub calls: u64,
    /// Total time, counted once per outermost activation (recursion is not
    /// counted twice), in nanoseconds.
    pub total_ns: u64,
    /// Time not spent in marked callees, in nanoseconds.
    pub self_ns: u64,
    /// Self time as a share of the site's total, from 0 to 1 (0 when the
    /// total is 0).
    pub p_self: f64,
    /// Mean time of one accepted call, in nanoseconds. For a recursive
    /// site every activation counts with its own time, so `min_ns <= mean_ns
    /// <= max_ns` always holds.
    pub mean_ns: f64,
    /// Whether the site's calls are long enough to be timed: its shortest
    /// raw call is at least twice the calibrated cost of the
    /// instrumentation inside a timed call (`RunInfo::overhead_inner_ns`),
    /// so the call's own time is at least that cost, or its raw mean at
    /// least eight times that cost. When it is not, its times are estimates below
    /// what TSC instrumentation can resolve: the text and HTML reports show
    /// them as `~15 ns`. Always true without a calibration.
    pub resolved: bool,
    /// Shortest accepted call, in nanoseconds (0 if none).
    pub min_ns: u64,
    /// Longest accepted call, in nanoseconds.
    pub max_ns: u64,
    /// `total_ns` in raw ticks.
    pub total_ticks: u64,
    /// `self_ns` in raw ticks.
    pub self_ticks: u64,
    /// `min_ns` in raw ticks.
    pub min_ticks: u64,
    /// `max_ns` in raw ticks.
    pub max_ticks: u64,
    /// Total with the instrumentation cost left in, in nanoseconds.
    pub raw_total_ns: u64,
    /// Self with the instrumentation cost left in, in nanoseconds.
    pub raw_self_ns: u64,
    /// Total with the calibrated instrumentation cost subtracted.
    pub compensated_total_ns: u64,
    /// Self with the calibrated instrumentation cost subtracted (its own
    /// inner cost, and the cost of each marked call it made).
    pub compensated_self_ns: u64,
    /// Calls whose end stamp was before their start: not added to the times.
    pub reversed: u64,
    /// Calls longer than `TICKPROF_MAX_DELTA`: not added to the times.
    pub oversized: u64,
    /// Calls that ended by unwinding (a panic); their time is recorded.
    pub unwound: u64,
    /// async sites: first poll to completion, summed over completed calls,
    /// in nanoseconds (0 for other sites).
    pub wall_ns: u64,
    /// async sites: futures dropped before completion.
    pub cancelled: u64,
    /// Allocations during the site's calls, marked callees included
    /// (counted once per outermost activation, like `total_ns`).
    pub alloc: AllocStats,
    /// Allocations during the site's calls not made in marked callees.
    pub self_alloc: AllocStats,
    /// Who called this site, most time first.
    pub callers: Vec<Edge>,
    /// What this site called, most time first.
    pub callees: Vec<Edge>,
}

impl SiteStats {
    /// `reversed + oversized`.
    pub fn rejected(&self) -> u64 {
        self.reversed + self.oversized
    }

    /// `ns` per accepted call (0 when no call was accepted).
    pub fn per_call(&self, ns: u64) -> f64 {
        let accepted = self.calls.saturating_sub(self.rejected());
        if accepted == 0 {
            0.0
        } else {
            ns as f64 / accepted as f64
        }
    }
}

/// One site's figures on one thread.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct ThreadSite {
    /// The site's name.
    pub name: String,
    /// Calls on this thread.
    pub calls: u64,
    /// Total on this thread, in nanoseconds.
    pub total_ns: u64,
    /// Self time on this thread, in nanoseconds.
    pub self_ns: u64,
    /// Allocations on this thread, marked callees included.
    pub alloc: AllocStats,
}

/// One live thread's figures, or those of the finished threads of one
/// name, merged.
///
/// A finished thread is merged into the row of its name (all the finished
/// `tokio-runtime-worker`s are one row, with their number in `count`).
/// At most `TICKPROF_THREADS_KEPT` names (default 64) get a row; the
/// finished threads of later names are merged into one row named
/// `<other threads>`. So the rows stay bounded however many threads come
/// and go; the report's totals ([`Report::sites`], [`Report::tree`])
/// always include every thread.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct ThreadStats {
    /// The thread's name, or its `ThreadId` when unnamed; `<other threads>`
    /// for the finished threads past the bound on names.
    pub name: String,
    /// tickprof's number for the thread, in order of first marked call
    /// (for merged finished threads, the first one's).
    pub id: u64,
    /// Whether the row is of finished threads (a live thread has its own
    /// row until it finishes).
    pub finished: bool,
    /// Threads in this row: 1 for a live thread, the number of finished
    /// threads merged otherwise.
    pub count: u64,
    /// Its sites, most total time first.
    pub sites: Vec<ThreadSite>,
}

/// One node of the merged calling-context tree: a call path.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
#[non_exhaustive]
pub struct TreeNode {
    /// The site's name; empty for the root.
    pub name: String,
    /// Index of the parent node in [`Report::tree`] (`None` for the root).
    pub parent: Option<usize>,
    /// Depth below the root (the root is 0).
    pub depth: usize,
    /// Calls along this path.
    pub calls: u64,
    /// Time spent on this path, children included, in nanoseconds.
    pub total_ns: u64,
    /// Time on this path not spent in marked children, in nanoseconds.
    pub self_ns: u64,
    /// `total_ns` with the instrumentation cost left in.
    pub raw_total_ns: u64,
    /// `self_ns` with the instrumentation cost left in.
    pub raw_self_ns: u64,
    /// Allocations on this path, marked children included.
    pub alloc: AllocStats,
    /// Allocations on this path not made in marked children (for the root,
    /// those made outside marked calls).
    pub self_alloc: AllocStats,
}

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Total time, descending (the default).
    Total,
    /// Self time, descending.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The flat table (the default).
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
}

impl Report {
    /// A report with no sites (profiling off or nothing ran).
    pub fn empty() -> Report {
        Report {
            run: RunInfo {
                clock: ClockSource::Off,
                frequency_hz: 0.0,
                frequency_source: String::new(),
                invariant_tsc: None,
                wall_ns: 0,
                threads: 0,
                max_delta_ns: 0,
                out_of_order: 0,
                lost: 0,
                reentrant: 0,
                leaked: 0,
                folded_calls: 0,
                complete: true,
                compensated: false,
                overhead_inner_ns: 0.0,
                overhead_inner_ticks: 0.0,
                overhead_call_ns: 0.0,
                overhead_call_ticks: 0.0,
                calibration: String::new(),
                overhead_share: 0.0,
                clamped: 0,
                carried: 0,
                tracing: false,
                trace_dropped: 0,
                pid: std::process::id(),
                alloc_installed: false,
                outside: AllocStats::default(),
            },
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
    }
}
