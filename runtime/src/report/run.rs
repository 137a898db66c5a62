//! The report header: the run and its clock.

use super::AllocStats;

/// Where ticks come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ClockSource {
    /// The x86_64 time-stamp counter (`rdtsc`).
    Tsc,
    /// The aarch64 generic timer's virtual count (`CNTVCT_EL0`).
    Cntvct,
    /// The OS monotonic clock (`std::time::Instant`), ticks in nanoseconds:
    /// the fallback on targets with no counter tickprof reads.
    Monotonic,
    /// Nothing was recorded (profiling off).
    Off,
}

impl ClockSource {
    /// A short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            ClockSource::Tsc => "rdtsc",
            ClockSource::Cntvct => "cntvct_el0",
            ClockSource::Monotonic => "monotonic clock",
            ClockSource::Off => "off",
        }
    }
}

/// Sampling periods of the program's time the sampler must have found in
/// a counted node's subtree for its figure to be shown (good to about
/// half of it), and of instrumentation for its cost per call to be
/// measured; below, the node's timed sample's estimate, and a bound in
/// the header.
pub(crate) const MIN_FOUND: f64 = 4.0;

/// The instrumentation's share of the run from which the header says what
/// the share leaves out ([`RunInfo::unseen_cost_note`]): the quickstart's
/// handful of marks (4.5%) need no such line, a crate marked whole
/// (26–65%) does.
pub(crate) const UNSEEN_NOTE_SHARE: f64 = 0.10;

/// Whether instrumentation of `inside_ns` found by a sampler at
/// `sample_hz` is enough to measure it: [`MIN_FOUND`] sampling periods at
/// least, else the header gives a bound.
pub(crate) fn instrumentation_measured(inside_ns: u64, sample_hz: u64) -> bool {
    sample_hz > 0 && inside_ns as f64 * sample_hz as f64 >= MIN_FOUND * 1e9
}

/// A frequency for the report header: `2.596 GHz`, `24.000 MHz`.
pub(crate) fn fmt_hz(hz: f64) -> String {
    if hz >= 1e9 {
        format!("{:.3} GHz", hz / 1e9)
    } else {
        format!("{:.3} MHz", hz / 1e6)
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
    /// Whether the TSC is invariant (`None`: cpuid does not say, or the
    /// clock is not a TSC).
    pub invariant_tsc: Option<bool>,
    /// Wall time from process start (or the last `reset`) to this report.
    pub wall_ns: u64,
    /// Threads that recorded at least one call (finished ones included:
    /// the sum of the [`ThreadStats::count`](super::ThreadStats::count)s).
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
    /// `max_ns`, the percentiles) have the instrumentation the sampler
    /// measured in this run taken out (`TICKPROF_COMPENSATE`, default on;
    /// false when the sampler measured nothing). Raw and measured values
    /// are both always in `SiteStats`.
    pub compensated: bool,
    /// What the clock can resolve (one read's cost, or the counter's step
    /// when larger), in nanoseconds: the part of a timed call's
    /// instrumentation inside its own measured time.
    pub overhead_inner_ns: f64,
    /// The same in ticks.
    pub overhead_inner_ticks: f64,
    /// The instrumentation per marked call the sampler measured in this
    /// run (its share of the sampled time over the marked calls), in
    /// nanoseconds (0 when nothing was sampled).
    pub overhead_call_ns: f64,
    /// The same in ticks.
    pub overhead_call_ticks: f64,
    /// The instrumentation per call of a timed node, in nanoseconds: what
    /// the sampler found in timed nodes' own instrumentation, per call,
    /// scaled with [`overhead_counted_ns`](Self::overhead_counted_ns) so
    /// that the two over their calls make all it found. Where either
    /// kind that made calls had its own found in fewer than 4 sampling
    /// periods, the two are not measured apart and both are
    /// `overhead_call_ns`; 0 when nothing was measured. (A report written
    /// before this field reads 0: see [`Self::per_kind_ns`].)
    pub overhead_timed_ns: f64,
    /// The instrumentation per call of a counted node (one whose calls
    /// were counted, its timed sample included), in nanoseconds, measured
    /// the same way: a counted call reads no clock and costs a fraction of
    /// a timed one (0 when nothing was measured or no call was counted,
    /// and when what was found is no more than the timed calls' calibrated
    /// cost: too little to measure a counted call, which the text says).
    pub overhead_counted_ns: f64,
    /// Sites most of whose calls were counted
    /// ([`Timing::Counted`](super::Timing::Counted)): their calls are
    /// exact, their times the sampler's.
    pub counted_sites: u64,
    /// Calls of those sites that did not read the clock.
    pub counted_calls: u64,
    /// Whether tickprof was built with debug assertions (an unoptimised
    /// build, whose figures are far above a release build's).
    pub debug_build: bool,
    /// How the instrumentation was measured (or why it was not).
    pub calibration: String,
    /// The instrumentation's share of the recording threads' time, as the
    /// sampler measured it (from 0 to 1): the time it found in tickprof's
    /// own code, the program's own time being the rest. What the marks
    /// cost the program's code (functions no longer inlined, caches
    /// shared) is in the program's time, as the report's header says
    /// where this share is 10% or more.
    pub overhead_share: f64,
    /// The recording threads' time the sampler looked at, summed over
    /// threads, in nanoseconds: what the sampled figures rest on.
    pub sampled_ns: u64,
    /// Of which the instrumentation's (`overhead_share` of it).
    pub instrumentation_ns: u64,
    /// Time the recording threads waited for a CPU that other programs
    /// held (ready but not running: their run-queue delay), summed over
    /// threads, in nanoseconds, as the sampler found it. The figures are
    /// wall time and keep it (shared between the program and the
    /// instrumentation in proportion); the instrumentation's share and
    /// its cost per call leave it out.
    pub waited_ns: u64,
    /// What setting threads up took, in nanoseconds: each thread's first
    /// marked call sets it up (its tree, its stack) before the call's time
    /// starts, so this is in no call's time.
    pub setup_ns: u64,
    /// Threads set up (`setup_ns` is theirs).
    pub setup_threads: u64,
    /// The sampler's rate, per second and thread (`TICKPROF_SAMPLE`; 0:
    /// off). A sampled figure of `x` ns rests on about `x * sample_hz /
    /// 1e9` samples, and its standard error is about its square root.
    pub sample_hz: u64,
    /// Tree nodes whose compensated time, less the instrumentation
    /// estimated inside, came out below what their calls measurably took
    /// (the clock's resolution a call, or their raw time when shorter),
    /// and is held at that: never 0 for calls that took time.
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
    /// Profiles `TICKPROF_PUSH` posted that the receiver accepted (in a
    /// report of the whole run; the exit report's count includes the
    /// final push when it finished within its 2 s).
    pub pushed: u64,
    /// Profiles `TICKPROF_PUSH` gave up on: the receiver answered an error
    /// status or did not answer, or was still unreachable at the final
    /// push.
    pub push_failed: u64,
    /// Profiles dropped, unsent, from `TICKPROF_PUSH`'s full queue.
    pub push_dropped: u64,
    /// Times recording was paused (`tickprof::pause`, or
    /// `TICKPROF_PAUSED=on` at start-up), since start-up or the last reset.
    /// Calls made while paused are not in the report.
    pub pauses: u64,
    /// Time recording was paused, in nanoseconds (a pause in progress
    /// counted up to the report), since start-up or the last reset. A dump
    /// of the difference since the previous one (`TICKPROF_DUMP=delta`)
    /// still gives the run's total.
    pub paused_ns: u64,
}

impl RunInfo {
    /// The instrumentation per timed call and per counted call, in
    /// nanoseconds: `overhead_timed_ns` and `overhead_counted_ns`; where
    /// no timed figure was found (and in a report written before the
    /// per-kind figures), `overhead_call_ns` for both.
    pub fn per_kind_ns(&self) -> (f64, f64) {
        if self.overhead_timed_ns > 0.0 {
            (self.overhead_timed_ns, self.overhead_counted_ns)
        } else {
            (self.overhead_call_ns, self.overhead_call_ns)
        }
    }

    /// [`Self::per_kind_ns`] where calls were counted and the two
    /// figures differ (measured apart); `None` where one figure stands for
    /// every call.
    pub fn per_kind_apart_ns(&self) -> Option<(f64, f64)> {
        let (timed, counted) = self.per_kind_ns();
        (self.counted_calls > 0 && timed != counted).then_some((timed, counted))
    }

    /// Where the sampler measured the instrumentation at
    /// [`UNSEEN_NOTE_SHARE`] of the run or more: what that share leaves out,
    /// for the report's header. A mark also slows the program's own code
    /// (a function no longer inlined, its arguments spilled, the caches and
    /// branch predictors shared with tickprof's tables), which no sample
    /// tells apart from the program's: it is in the times, not in the
    /// share. On whole crates marked every function, the share read 8–30
    /// points under the measured one (docs/measured.md).
    pub(crate) fn unseen_cost_note(&self) -> Option<&'static str> {
        (self.compensated
            && self.overhead_share >= UNSEEN_NOTE_SHARE
            && instrumentation_measured(self.instrumentation_ns, self.sample_hz))
        .then_some(
            "the marks also slow the program's own code (calls no longer inlined, caches shared with tickprof's tables), which no sample tells apart: that is in the times below, not in the share above — unmarked, the program is likely shorter than they say",
        )
    }

    /// The header of a report with nothing recorded (profiling off).
    pub(crate) fn off() -> RunInfo {
        RunInfo {
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
            overhead_timed_ns: 0.0,
            overhead_counted_ns: 0.0,
            counted_sites: 0,
            counted_calls: 0,
            debug_build: cfg!(debug_assertions),
            calibration: String::new(),
            overhead_share: 0.0,
            sampled_ns: 0,
            instrumentation_ns: 0,
            waited_ns: 0,
            setup_ns: 0,
            setup_threads: 0,
            sample_hz: 0,
            clamped: 0,
            carried: 0,
            tracing: false,
            trace_dropped: 0,
            pid: crate::process::program_pid(),
            alloc_installed: false,
            outside: AllocStats::default(),
            pushed: 0,
            push_failed: 0,
            push_dropped: 0,
            pauses: 0,
            paused_ns: 0,
        }
    }
}
