//! The process-wide switches the hot path reads, and the one function that
//! sets them from a [`Config`].
//!
//! Each is a relaxed atomic read at most once per call (most only on a cold
//! path); they are written before `main` by the constructor and, for
//! `MODE`, when the exit report starts.

use crate::config::Config;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// [`MODE`]: marked calls cost one predictable branch and are not recorded.
pub(crate) const OFF: u8 = 0;
/// [`MODE`]: marked calls are recorded (the fast path).
pub(crate) const RECORD: u8 = 1;
/// [`MODE`]: marked calls are recorded and also traced (a cold path).
pub(crate) const RECORD_TRACE: u8 = 2;

/// What a marked call does, read once at its entry: [`OFF`] (`TICKPROF=off`,
/// or the exit report has collected its data), [`RECORD`], or
/// [`RECORD_TRACE`]. Every mode but `RECORD` takes a cold path, so the
/// recording fast path pays one compare for all the others.
pub(crate) static MODE: AtomicU8 = AtomicU8::new(RECORD);
/// Deltas above this many ticks are rejected as oversized.
pub(crate) static MAX_TICKS: AtomicU64 = AtomicU64::new(i64::MAX as u64);
/// Calling-context tree nodes per thread.
pub(crate) static MAX_NODES: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_MAX_NODES);
/// Trace events kept per thread.
pub(crate) static TRACE_LIMIT: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_TRACE_EVENTS);
/// Distinct names of finished threads that keep a per-thread row.
pub(crate) static THREADS_KEPT: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_THREADS_KEPT);
/// Set when a site that is not internal gets its first tree node: the exit
/// report is skipped for programs that never made a marked call.
pub(crate) static RECORDED_ANY: AtomicBool = AtomicBool::new(false);

/// Sets the switches from `config`; `hz` converts the maximum delta to
/// ticks. Tracing is switched on separately ([`set_tracing`]), after the
/// start-up calibration, whose calls are not the program's.
pub(crate) fn apply(config: &Config, hz: f64) {
    MODE.store(if config.enabled { RECORD } else { OFF }, Ordering::Relaxed);
    let max = (config.max_delta.as_secs_f64() * hz).min(i64::MAX as f64) as u64;
    MAX_TICKS.store(max, Ordering::Relaxed);
    MAX_NODES.store(config.max_nodes, Ordering::Relaxed);
    TRACE_LIMIT.store(config.trace_events, Ordering::Relaxed);
    THREADS_KEPT.store(config.threads_kept, Ordering::Relaxed);
}

/// Turns the trace buffers on or off (while recording).
pub(crate) fn set_tracing(on: bool) {
    let to = if on { RECORD_TRACE } else { RECORD };
    let _ = MODE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| {
        (m != OFF).then_some(to)
    });
}

/// The mode, read at every marked call's entry.
#[inline(always)]
pub(crate) fn mode() -> u8 {
    MODE.load(Ordering::Relaxed)
}

/// Whether marked calls are recorded.
#[inline(always)]
pub(crate) fn recording() -> bool {
    mode() != OFF
}

/// Whether calls are traced.
#[inline(always)]
pub(crate) fn tracing() -> bool {
    mode() == RECORD_TRACE
}

/// Stops recording (the exit report has its data).
pub(crate) fn stop_recording() {
    MODE.store(OFF, Ordering::Relaxed);
}

/// Whether any marked call other than tickprof's own was ever made.
pub(crate) fn recorded_any() -> bool {
    RECORDED_ANY.load(Ordering::Relaxed)
}
