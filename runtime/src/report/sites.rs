//! The rows of a report: per site (with its callers and callees), per
//! thread, per node of the calling-context tree; and allocation counts.

use super::{SiteKind, Timing};

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

/// A row of an inlined function resting on fewer program-counter samples
/// than this reads `too few` in the text and HTML reports
/// ([`SiteStats::too_few_samples`]).
pub const FEW_PC_SAMPLES: u64 = 4;

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
    /// Completed calls, rejected and counted ones included: exact.
    pub calls: u64,
    /// Whether the site's calls were timed or counted (most of them): a
    /// counted site's times are the sampler's (`~` in the text and HTML
    /// reports), from the time the sampler found its calls on top of the
    /// stack (`self_sampled_ns`) and in them (`total_sampled_ns`).
    pub timing: Timing,
    /// Calls that read the clock (all of them for a timed site, the
    /// sample and the learning calls for a counted one).
    pub timed_calls: u64,
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
    /// raw call is at least twice the clock's resolution (what one read
    /// costs, or the counter's step if larger: `RunInfo::overhead_inner_ns`),
    /// or its raw mean at least eight times that. When it is not, or the
    /// site is counted, its times are estimates below what the clock can
    /// resolve: the text and HTML reports show them as `~15 ns`.
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
    /// Total with the instrumentation the sampler measured taken out.
    pub compensated_total_ns: u64,
    /// Self with the instrumentation the sampler measured taken out.
    pub compensated_self_ns: u64,
    /// The program's time the sampler found with this site's calls on
    /// top of the stack, in nanoseconds: what a counted site's self time
    /// rests on (about `self_sampled_ns * sample_hz / 1e9` samples).
    pub self_sampled_ns: u64,
    /// The program's time the sampler found inside this site's outermost
    /// calls, in nanoseconds: what a counted site's total rests on.
    pub total_sampled_ns: u64,
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
    /// Median time of one accepted call, in nanoseconds, from the site's
    /// latency histogram ([`SiteStats::hist`]): the midpoint of the bucket
    /// holding it (within 6.25% of the call's raw time), kept within
    /// `min_ns..=max_ns` and compensated like them and `mean_ns` when the
    /// report is (`RunInfo::compensated`). 0 when the histogram is empty.
    pub p50_ns: u64,
    /// The 90th percentile of the accepted calls' times (as `p50_ns`).
    pub p90_ns: u64,
    /// The 99th percentile of the accepted calls' times (as `p50_ns`).
    pub p99_ns: u64,
    /// The site's latency histogram, raw (the instrumentation cost left
    /// in), every activation of a recursive site counted: `(upper_ns,
    /// count)` in increasing order, where `count` calls took at most
    /// `upper_ns` and more than the previous entry's `upper_ns`; empty
    /// buckets are left out. Internally a bucket is 1/8 of a power of two
    /// of clock ticks wide (one tick below 16 ticks), so `upper_ns` is
    /// within 12.5% of the bucket's lower end.
    pub hist: Vec<(u64, u64)>,
    /// The sum of the raw times counted in [`SiteStats::hist`], in
    /// nanoseconds (Prometheus' `_sum`).
    pub hist_sum_ns: u64,
    /// Program-counter samples (feature `inlined`) the site's share of its
    /// callers' time rests on: for a row of an inlined function
    /// ([`SiteKind::Inlined`]), the samples that found it; for a marked
    /// site, those that found its own code. 0 without the feature.
    pub pc_samples: u64,
}

impl SiteStats {
    /// `reversed + oversized`.
    pub fn rejected(&self) -> u64 {
        self.reversed.saturating_add(self.oversized)
    }

    /// Whether the site ran but its time could not be measured: its calls
    /// are below the clock's resolution (not [`SiteStats::resolved`]) and
    /// their estimate is 0 ns, as the sampler found them too seldom (too
    /// few samples) and their timed calls are all clock read. Its times
    /// and percentiles are then 0, and the text and HTML reports show
    /// `too few` in their place, not a time of 0. A row of an inlined
    /// function: fewer than [`FEW_PC_SAMPLES`] program-counter samples
    /// found it.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = tickprof_runtime::Report::empty();
    /// assert!(r.sites.iter().all(|s| !s.too_few_samples()));
    /// ```
    pub fn too_few_samples(&self) -> bool {
        if self.kind == SiteKind::Inlined {
            return self.pc_samples < FEW_PC_SAMPLES;
        }
        !self.resolved && self.calls > 0 && self.total_ns == 0
    }

    /// Calls counted in [`SiteStats::hist`].
    pub fn hist_count(&self) -> u64 {
        self.hist
            .iter()
            .fold(0u64, |a, &(_, n)| a.saturating_add(n))
    }

    /// What the site's marks cost, in nanoseconds: its timed calls at
    /// `run.overhead_timed_ns` and its counted calls at
    /// `run.overhead_counted_ns` (0 when the sampler did not run; a report
    /// without the per-kind figures: every call at `run.overhead_call_ns`).
    pub fn instrumentation_ns(&self, run: &super::RunInfo) -> f64 {
        let counted = self.calls.saturating_sub(self.timed_calls);
        let (timed_ns, counted_ns) = run.per_kind_ns();
        self.timed_calls as f64 * timed_ns + counted as f64 * counted_ns
    }

    /// `ns` per accepted call (0 when no call was accepted).
    pub fn per_call(&self, ns: u64) -> f64 {
        if self.timing == Timing::Counted {
            return if self.calls == 0 {
                0.0
            } else {
                ns as f64 / self.calls as f64
            };
        }
        let accepted = self.timed_calls.saturating_sub(self.rejected());
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
/// and go; the report's totals ([`Report::sites`](super::Report::sites), [`Report::tree`](super::Report::tree))
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
    /// Index of the parent node in [`Report::tree`](super::Report::tree) (`None` for the root).
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
