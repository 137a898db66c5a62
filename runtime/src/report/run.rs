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

/// The process id; 0 on wasm, which has none (`std::process::id` panics
/// there).
pub(crate) fn process_id() -> u32 {
    #[cfg(target_family = "wasm")]
    let id = 0;
    #[cfg(not(target_family = "wasm"))]
    let id = std::process::id();
    id
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
    /// Calibrated cost of one counted call (no clock read) as its caller
    /// sees it, in nanoseconds (0 when not calibrated).
    pub overhead_counted_ns: f64,
    /// Sites with counted calls ([`Timing::Counted`](super::Timing::Counted)):
    /// their calls are exact, their times estimates from a timed sample,
    /// and their calls' time is in their nearest timed callers' self time.
    pub counted_sites: u64,
    /// Calls of those sites that did not read the clock.
    pub counted_calls: u64,
    /// Whether tickprof was built with debug assertions (an unoptimised
    /// build, whose figures are far above a release build's).
    pub debug_build: bool,
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
            overhead_counted_ns: 0.0,
            counted_sites: 0,
            counted_calls: 0,
            debug_build: cfg!(debug_assertions),
            calibration: String::new(),
            overhead_share: 0.0,
            clamped: 0,
            carried: 0,
            tracing: false,
            trace_dropped: 0,
            pid: process_id(),
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
