//! The process-wide switches the hot path reads, and the one function that
//! sets them from a [`Config`].
//!
//! Each is a relaxed atomic read at most once per call (most only on a cold
//! path); they are written before `main` by the constructor and, for
//! `MODE`, when the exit report starts and by a pause or resume.

use crate::config::Config;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// [`MODE`] bit: marked calls are recorded. `MODE == RECORD` (no other bit)
/// is the fast path; `MODE == OFF` (no bit) makes a marked call inert.
pub(crate) const RECORD: u8 = 1;
/// [`MODE`]: no bit set: marked calls cost one predictable branch and do
/// nothing.
pub(crate) const OFF: u8 = 0;
/// [`MODE`] bit: recorded calls are also appended to the trace buffers.
pub(crate) const TRACE: u8 = 1 << 1;
/// [`MODE`] bit: entry/exit hooks are installed (issue 10).
pub(crate) const HOOK: u8 = 1 << 2;
/// [`MODE`] bit: the trace log utility is on (issue 10).
pub(crate) const LOG: u8 = 1 << 3;
/// [`MODE`] bit: failpoints are armed (`TICKPROF_FAIL` or the API).
#[cfg_attr(not(feature = "failpoints"), allow(dead_code))]
pub(crate) const FAIL: u8 = 1 << 4;

/// What a marked call does, read once at its entry: a set of bits. Exactly
/// [`RECORD`] is the fast path; [`OFF`] is inert; any other value (tracing,
/// hooks, the log, armed failpoints, each with or without `RECORD`) takes
/// one cold path that looks at the bits, so the fast path pays one compare
/// for all of them.
pub(crate) static MODE: AtomicU32 = AtomicU32::new(RECORD as u32);
/// Deltas above this many ticks are rejected as oversized.
pub(crate) static MAX_TICKS: AtomicU64 = AtomicU64::new(i64::MAX as u64);
/// Calling-context tree nodes per thread.
pub(crate) static MAX_NODES: AtomicUsize = AtomicUsize::new(crate::defaults::DEFAULT_MAX_NODES);
/// Trace events kept per thread.
pub(crate) static TRACE_LIMIT: AtomicUsize =
    AtomicUsize::new(crate::defaults::DEFAULT_TRACE_EVENTS);
/// Distinct names of finished threads that keep a per-thread row.
pub(crate) static THREADS_KEPT: AtomicUsize =
    AtomicUsize::new(crate::defaults::DEFAULT_THREADS_KEPT);
/// The sampler's rate, per second (`TICKPROF_SAMPLE`; 0: no sampler).
pub(crate) static SAMPLE_HZ: AtomicU64 = AtomicU64::new(crate::defaults::DEFAULT_SAMPLE_HZ);
/// Set when a site that is not internal gets its first tree node: the exit
/// report is skipped for programs that never made a marked call.
pub(crate) static RECORDED_ANY: AtomicBool = AtomicBool::new(false);

/// Sets the switches from `config`; `hz` converts the maximum delta to
/// ticks. Tracing is switched on separately ([`set_tracing`]), once
/// start-up is done.
pub(crate) fn apply(config: &Config, nominal_hz: Option<f64>) {
    {
        let _toggle = toggle();
        let paused = config.enabled && config.paused;
        PAUSED.store(paused, Ordering::SeqCst);
        SAVED.store(if paused { RECORD } else { 0 }, Ordering::Relaxed);
        set_bit(RECORD, config.enabled && !paused);
    }
    let ns = u64::try_from(config.max_delta.as_nanos()).unwrap_or(u64::MAX);
    MAX_DELTA_NS.store(ns, Ordering::Relaxed);
    if let Some(hz) = nominal_hz {
        set_max_ticks(hz);
    }
    MAX_NODES.store(config.max_nodes, Ordering::Relaxed);
    TRACE_LIMIT.store(config.trace_events, Ordering::Relaxed);
    THREADS_KEPT.store(config.threads_kept, Ordering::Relaxed);
    SAMPLE_HZ.store(config.sample_hz, Ordering::Relaxed);
}

/// `TICKPROF_MAX_DELTA` in nanoseconds, until converted to [`MAX_TICKS`].
static MAX_DELTA_NS: AtomicU64 = AtomicU64::new(u64::MAX);
/// Whether [`MAX_TICKS`] holds the converted maximum.
static MAX_TICKS_SET: AtomicBool = AtomicBool::new(false);

fn set_max_ticks(hz: f64) {
    let secs = MAX_DELTA_NS.load(Ordering::Relaxed) as f64 / 1e9;
    let max = (secs * hz).min(i64::MAX as f64) as u64;
    MAX_TICKS.store(max, Ordering::Relaxed);
    MAX_TICKS_SET.store(true, Ordering::Relaxed);
}

/// Converts `TICKPROF_MAX_DELTA` to ticks, once: called when a thread
/// records for the first time (a cold path), so that a process that never
/// makes a marked call never measures the clock for it.
pub(crate) fn settle_max_ticks() {
    if !MAX_TICKS_SET.load(Ordering::Relaxed) {
        set_max_ticks(crate::clock::rough_hz());
    }
}

/// Sets or clears one [`MODE`] bit, leaving the others.
pub(crate) fn set_bit(bit: u8, on: bool) {
    if on {
        MODE.fetch_or(u32::from(bit), Ordering::Relaxed);
    } else {
        MODE.fetch_and(!u32::from(bit), Ordering::Relaxed);
    }
}

/// Turns the trace buffers on or off (while recording; while paused, from
/// the resume on).
pub(crate) fn set_tracing(on: bool) {
    let _toggle = toggle();
    if PAUSED.load(Ordering::SeqCst) {
        let saved = SAVED.load(Ordering::Relaxed);
        SAVED.store(
            if on { saved | TRACE } else { saved & !TRACE },
            Ordering::Relaxed,
        );
    } else {
        set_bit(TRACE, on);
    }
}

/// Whether recording is paused ([`pause`]).
static PAUSED: AtomicBool = AtomicBool::new(false);
/// The [`MODE`] bits a pause cleared ([`RECORD`], [`TRACE`]), for the
/// resume.
static SAVED: AtomicU8 = AtomicU8::new(0);
/// Set when the final report has its data: no resume records again.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// Serialises pauses, resumes and the changes of the bits they save (never
/// taken on the hot path or by [`stop_recording`], so never on the exit
/// path).
static TOGGLE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn toggle() -> std::sync::MutexGuard<'static, ()> {
    TOGGLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Pauses recording: clears [`RECORD`] and [`TRACE`], so marked calls
/// take the off path, and keeps them for [`resume`]. Returns whether this
/// call paused (false: already paused, or the final report was taken).
pub(crate) fn pause() -> bool {
    let _toggle = toggle();
    if PAUSED.load(Ordering::SeqCst) || STOPPED.load(Ordering::SeqCst) {
        return false;
    }
    let saved =
        (MODE.fetch_and(!u32::from(RECORD | TRACE), Ordering::SeqCst) as u8) & (RECORD | TRACE);
    SAVED.store(saved, Ordering::Relaxed);
    PAUSED.store(true, Ordering::SeqCst);
    true
}

/// Resumes recording: restores the bits [`pause`] cleared, unless the
/// final report has been taken meanwhile. Returns whether this call resumed
/// recording (false: not paused, or the final report was taken).
pub(crate) fn resume() -> bool {
    let _toggle = toggle();
    if STOPPED.load(Ordering::SeqCst) || !PAUSED.swap(false, Ordering::SeqCst) {
        return false;
    }
    MODE.fetch_or(u32::from(SAVED.load(Ordering::Relaxed)), Ordering::SeqCst);
    // `stop_recording` sets `STOPPED` before it clears the bits: either it
    // clears them after the `fetch_or` above, or this load sees `STOPPED`.
    if STOPPED.load(Ordering::SeqCst) {
        MODE.fetch_and(!u32::from(RECORD | TRACE), Ordering::SeqCst);
        return false;
    }
    true
}

/// The mode, read at every marked call's entry.
#[inline(always)]
pub(crate) fn mode() -> u8 {
    mode_word() as u8
}

/// The mode as it is stored (a word: a marked function compares it with
/// no widening).
#[inline(always)]
pub(crate) fn mode_word() -> u32 {
    MODE.load(Ordering::Relaxed)
}

/// Whether marked calls are recorded.
#[inline(always)]
pub(crate) fn recording() -> bool {
    mode() & RECORD != 0
}

/// Whether recorded calls are traced.
#[inline(always)]
pub(crate) fn tracing() -> bool {
    mode() & (RECORD | TRACE) == RECORD | TRACE
}

/// Stops recording (the exit report has its data). Other bits (hooks,
/// failpoints) stay: they are not the profile's.
pub(crate) fn stop_recording() {
    STOPPED.store(true, Ordering::SeqCst);
    MODE.fetch_and(!u32::from(RECORD | TRACE), Ordering::SeqCst);
}

/// Whether any marked call other than tickprof's own was ever made.
pub(crate) fn recorded_any() -> bool {
    RECORDED_ANY.load(Ordering::Relaxed)
}
