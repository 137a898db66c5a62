//! Runtime of [tickprof](https://docs.rs/tickprof): the clock, call sites,
//! guards, per-thread calling-context trees and reports.
//!
//! Use the `tickprof` crate; this one is its implementation.
//!
//! # Layout
//!
//! Modules follow the data flow: mark → call site → guard → clock →
//! per-thread tree node → registry → build → `Report` → writers. Each
//! imports only modules earlier in that flow (and the plain-data modules
//! `counters`, `tree`, `report`); nothing imports `exit`; there is no
//! cycle.
//!
//! The table of modules, what each owns and imports, is in the
//! repository's `docs/internals.md` (section *Modules*).
//!
//! (`snapshot` and the public functions in this file are the API over
//! `exit`.)

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod alloc;
#[cfg(feature = "enabled")]
mod build;
#[cfg(feature = "enabled")]
#[cfg(feature = "enabled")]
mod clock;
mod config;
#[cfg(feature = "enabled")]
mod counters;
#[cfg(feature = "enabled")]
mod coverage;
mod defaults;
mod digits;
#[cfg(feature = "enabled")]
mod exit;
pub mod export;
pub mod fail;
#[cfg(all(feature = "enabled", unix))]
mod fork_lock;
#[cfg(feature = "enabled")]
mod hist;
mod hook;
#[cfg(all(feature = "inlined", target_os = "linux"))]
mod inlined;
pub mod integrations;
pub mod log;
mod naming;
#[cfg(all(feature = "enabled", unix))]
mod nopipe;
#[cfg(feature = "enabled")]
mod pause;
mod process;
#[cfg(feature = "enabled")]
mod push;
#[cfg(feature = "enabled")]
mod record;
mod report;
#[cfg(feature = "enabled")]
mod serve;
mod site;
mod snapshot;
#[cfg(feature = "enabled")]
mod switches;
#[cfg(test)]
mod testing;
#[cfg(feature = "enabled")]
mod tree;

pub use alloc::Alloc;
pub use config::{Config, DumpMode, DumpSignal, Layout, ReportSections, SortKey, TimeMode};
pub use defaults::{DEFAULT_FAIL_SEED, DEFAULT_THREADS_KEPT, DEFAULT_TRACE_EVENTS};
pub use export::csv::CSV_HEADER;
pub use fail::Injected;
pub use hook::{Enter, Exit, Hook, SetHookError};
#[cfg(feature = "enabled")]
pub use record::guard::Guard;
pub use report::{
    fmt_ns, AllocStats, ClockSource, Coverage, Edge, Faults, Mark, Report, RunInfo, SiteKind,
    SiteStats, TextOptions, ThreadSite, ThreadStats, Timing, Trace, TraceEvent, TraceThread,
    TreeNode, FEW_PC_SAMPLES,
};
pub use site::CallSite;
pub use snapshot::{snapshot, Snapshot};

/// Times one activation of a call site until dropped (profiling is off:
/// an inert zero-sized value).
#[cfg(not(feature = "enabled"))]
#[must_use = "the guard times until it is dropped"]
pub struct Guard {
    _not_send: core::marker::PhantomData<*const ()>,
}

#[cfg(not(feature = "enabled"))]
impl Guard {
    /// The inert guard that `prof_guard!` gives when profiling is off.
    pub fn inert() -> Guard {
        Guard {
            _not_send: core::marker::PhantomData,
        }
    }
}

/// The profile so far: every call site that ran, on every thread.
///
/// Threads still running are included as they are now; threads that
/// finished are included in full. With profiling off (the `enabled` feature
/// off, or `TICKPROF=off`) the report is empty.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// for site in &report.sites {
///     println!("{} {} calls", site.name, site.calls);
/// }
/// ```
pub fn report() -> Report {
    #[cfg(feature = "enabled")]
    {
        exit::collect()
    }
    #[cfg(not(feature = "enabled"))]
    {
        Report::empty()
    }
}

/// Every mark compiled into the program with its figures so far: the
/// rows of [`report()`], plus an all-zero row for each mark that never ran
/// (coverage). tickprof's own sites are never listed. Sorted by name.
///
/// # Examples
///
/// ```
/// for site in tickprof_runtime::sites() {
///     if site.calls == 0 {
///         println!("never called: {} ({}:{})", site.name, site.file, site.line);
///     }
/// }
/// ```
pub fn sites() -> Vec<SiteStats> {
    #[cfg(feature = "enabled")]
    {
        coverage::sites(report().sites)
    }
    #[cfg(not(feature = "enabled"))]
    {
        Vec::new()
    }
}

/// Zeroes every call site's figures and restarts the run's wall clock.
///
/// Exact when no marked function is running on another thread; a call that
/// is running during the reset may keep part of its figures.
pub fn reset() {
    #[cfg(feature = "enabled")]
    exit::reset();
}

/// Pauses recording: until [`resume`], marked calls are neither timed nor
/// counted, and cost what they cost with `TICKPROF=off` (one load and one
/// predictable branch where `#[profile]` could duplicate the body: see
/// "Off and paused" in `docs/overhead.md`).
///
/// A call that began while recording is recorded in full, however long it
/// runs into the pause (its guard still pops its frame); a call that began
/// while paused is not recorded, even if it ends after [`resume`]. Hooks,
/// the trace log and failpoints are not paused: they are not the profile's.
/// The report says how often and how long recording was paused
/// ([`RunInfo::pauses`], [`RunInfo::paused_ns`]). `TICKPROF_PAUSED=on`
/// starts the program paused.
///
/// Returns whether this call paused: false when already paused, with
/// profiling off (`TICKPROF=off`, or the `enabled` feature off) or after
/// the final report. Any thread may pause and resume.
///
/// # Examples
///
/// ```
/// tickprof_runtime::pause();
/// // set-up that should not be in the profile
/// tickprof_runtime::resume();
/// ```
pub fn pause() -> bool {
    #[cfg(feature = "enabled")]
    {
        exit::set_paused(true)
    }
    #[cfg(not(feature = "enabled"))]
    {
        false
    }
}

/// Resumes recording after [`pause`] (or `TICKPROF_PAUSED=on`): calls that
/// begin from now on are recorded again.
///
/// Returns whether this call resumed: false when not paused, or with
/// profiling off. After the final report recording stays off.
///
/// # Examples
///
/// ```
/// assert!(!tickprof_runtime::resume()); // not paused
/// ```
pub fn resume() -> bool {
    #[cfg(feature = "enabled")]
    {
        exit::set_paused(false)
    }
    #[cfg(not(feature = "enabled"))]
    {
        false
    }
}

/// Writes the report now, where the exit report goes: its text to stderr
/// (unless `TICKPROF_STDERR=0`) and every `TICKPROF_OUT` file, each
/// replaced atomically. The program keeps running.
///
/// With `TICKPROF_DUMP=delta` the report covers what happened since the
/// previous dump (of any kind: this function, a signal, the interval); by
/// default (`total`) the run so far. The exit report is always the whole
/// run. Returns whether a report was written: not with profiling off, before
/// the first marked call, when nothing is to be written
/// (`TICKPROF_STDERR=0` and no `TICKPROF_OUT`), after the final report, or
/// when the copy of the process that writes a `total` report (on Linux:
/// the program's allocator then sees none of its allocations) died or
/// stalled, which one line on stderr says.
///
/// # Examples
///
/// ```no_run
/// // e.g. at the end of each phase of a long job:
/// tickprof_runtime::dump_now();
/// ```
pub fn dump_now() -> bool {
    #[cfg(feature = "enabled")]
    {
        exit::dump::dump("dump_now")
    }
    #[cfg(not(feature = "enabled"))]
    {
        false
    }
}

/// Writes the report (as [`dump_now`] does) each time `signal` arrives,
/// on a thread tickprof owns, never in the signal handler. The same as
/// `TICKPROF_DUMP_SIGNAL=USR1` (or `USR2`).
///
/// The handler is installed through `signal-hook`, which chains with
/// handlers already installed for the signal: a program that handles it
/// too keeps its handler. Nothing is installed with profiling off.
///
/// # Errors
/// The handler or the thread could not be set up; on non-Unix targets,
/// `Unsupported`.
///
/// # Examples
///
/// ```no_run
/// use tickprof_runtime::DumpSignal;
/// tickprof_runtime::dump_on_signal(DumpSignal::Usr1).expect("handler installed");
/// // `kill -USR1 <pid>` now writes the report.
/// ```
pub fn dump_on_signal(signal: DumpSignal) -> std::io::Result<()> {
    #[cfg(feature = "enabled")]
    {
        exit::dump::on_signal(signal)
    }
    #[cfg(not(feature = "enabled"))]
    {
        let _ = signal;
        Ok(())
    }
}

/// Installs `hook` for the rest of the process: it is called at every marked
/// call's entry and exit, on every thread, from now on (see [`Hook`] for
/// what it sees, re-entrancy and panics).
///
/// One hook per process (as with `log::set_logger`); compose several as a
/// tuple, `(A, B)` up to four, which calls them in order. The built-in trace
/// log (`TICKPROF_LOG`) is separate and does not take this place. With the
/// `enabled` feature off this does nothing and returns `Ok`.
///
/// # Errors
///
/// [`SetHookError`] if a hook was installed already (it stays installed).
///
/// # Examples
///
/// ```
/// struct Quiet;
/// impl tickprof_runtime::Hook for Quiet {}
/// static Q: Quiet = Quiet;
/// tickprof_runtime::set_hook(&Q).unwrap();
/// assert!(tickprof_runtime::set_hook(&Q).is_err());
/// ```
pub fn set_hook(hook: &'static dyn Hook) -> Result<(), SetHookError> {
    #[cfg(feature = "enabled")]
    {
        record::hook::set_user(hook)
    }
    #[cfg(not(feature = "enabled"))]
    {
        let _ = hook;
        Ok(())
    }
}

/// Writes the report (as [`dump_now`] does) every `period`, on a thread
/// tickprof owns; the same as `TICKPROF_DUMP_INTERVAL`. A period shorter
/// than 100 ms is taken as 100 ms (the variable's minimum). A later call
/// changes the period; `Duration::ZERO` stops the periodic reports.
///
/// # Examples
///
/// ```no_run
/// tickprof_runtime::dump_every(std::time::Duration::from_secs(30));
/// ```
pub fn dump_every(period: std::time::Duration) {
    #[cfg(feature = "enabled")]
    exit::dump::every(period);
    #[cfg(not(feature = "enabled"))]
    let _ = period;
}

/// Used by generated code, not public API.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
