//! The process-wide switches the hot path reads, and the one function that
//! sets them from a [`Config`].
//!
//! Each is a relaxed atomic read at most once per call (most only on a cold
//! path); they are written before `main` by the constructor and, for
//! `RECORDING`, when the exit report starts.

use crate::config::Config;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Whether marked calls are recorded (`TICKPROF=off` clears it before
/// `main`; the exit report clears it once it has collected the data).
pub(crate) static RECORDING: AtomicBool = AtomicBool::new(true);
/// Deltas above this many ticks are rejected as oversized.
pub(crate) static MAX_TICKS: AtomicU64 = AtomicU64::new(i64::MAX as u64);
/// Calling-context tree nodes per thread.
pub(crate) static MAX_NODES: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_MAX_NODES);
/// Whether every finished call is also appended to its thread's trace
/// buffer.
pub(crate) static TRACE_ON: AtomicBool = AtomicBool::new(false);
/// Trace events kept per thread.
pub(crate) static TRACE_LIMIT: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_TRACE_EVENTS);
/// Set when a site that is not internal gets its first tree node: the exit
/// report is skipped for programs that never made a marked call.
pub(crate) static RECORDED_ANY: AtomicBool = AtomicBool::new(false);

/// Sets the switches from `config`; `hz` converts the maximum delta to
/// ticks. Tracing is switched on separately ([`set_tracing`]), after the
/// start-up calibration, whose calls are not the program's.
pub(crate) fn apply(config: &Config, hz: f64) {
    RECORDING.store(config.enabled, Ordering::Relaxed);
    let max = (config.max_delta.as_secs_f64() * hz).min(i64::MAX as f64) as u64;
    MAX_TICKS.store(max, Ordering::Relaxed);
    MAX_NODES.store(config.max_nodes, Ordering::Relaxed);
    TRACE_LIMIT.store(config.trace_events, Ordering::Relaxed);
}

/// Turns the trace buffers on or off.
pub(crate) fn set_tracing(on: bool) {
    TRACE_ON.store(on, Ordering::Relaxed);
}

/// Whether calls are traced (read on the hot path).
#[inline(always)]
pub(crate) fn tracing() -> bool {
    TRACE_ON.load(Ordering::Relaxed)
}

/// Stops recording (the exit report has its data).
pub(crate) fn stop_recording() {
    RECORDING.store(false, Ordering::Relaxed);
}

/// Whether any marked call other than tickprof's own was ever made.
pub(crate) fn recorded_any() -> bool {
    RECORDED_ANY.load(Ordering::Relaxed)
}
