//! Pausing and resuming recording at run time, and how long it was paused.
//!
//! The switch itself is [`crate::switches`]' (a pause clears the mode's
//! record bit, so marked calls take the off path); this module keeps the
//! paused time and the number of pauses for the report.

use crate::switches;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

/// The pause figures since start-up or the last reset.
struct Tally {
    /// Pauses begun.
    pauses: u64,
    /// Paused time of the pauses that ended, in nanoseconds.
    ended_ns: u64,
    /// When the current pause began (`None`: not paused).
    since: Option<Instant>,
}

static TALLY: Mutex<Tally> = Mutex::new(Tally {
    pauses: 0,
    ended_ns: 0,
    since: None,
});

/// Pauses begun and paused nanoseconds, as last published: what a report
/// reads without taking the lock (the exit path never waits on one).
static PUBLISHED_PAUSES: AtomicU64 = AtomicU64::new(0);
static PUBLISHED_ENDED_NS: AtomicU64 = AtomicU64::new(0);
/// When the current pause began, in nanoseconds after [`origin`] plus one
/// (0: not paused).
static PUBLISHED_SINCE: AtomicU64 = AtomicU64::new(0);

/// The instant pause times are measured from.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

fn nanos_since(earlier: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(earlier).as_nanos()).unwrap_or(u64::MAX)
}

fn with_tally<T>(f: impl FnOnce(&mut Tally) -> T) -> T {
    // Set before any pause begins, so that no pause starts before it.
    origin();
    let mut tally = TALLY.lock().unwrap_or_else(PoisonError::into_inner);
    let out = f(&mut tally);
    PUBLISHED_PAUSES.store(tally.pauses, Ordering::Relaxed);
    PUBLISHED_ENDED_NS.store(tally.ended_ns, Ordering::Relaxed);
    let since = tally
        .since
        .map_or(0, |t| nanos_since(origin(), t).saturating_add(1));
    PUBLISHED_SINCE.store(since, Ordering::Relaxed);
    out
}

/// Pauses recording (profiling on). Returns whether this call paused.
pub(crate) fn pause() -> bool {
    with_tally(|tally| {
        let paused = switches::pause();
        if paused {
            tally.pauses = tally.pauses.saturating_add(1);
            tally.since = Some(Instant::now());
        }
        paused
    })
}

/// Resumes recording. Returns whether this call resumed.
pub(crate) fn resume() -> bool {
    with_tally(|tally| {
        let resumed = switches::resume();
        if resumed {
            if let Some(since) = tally.since.take() {
                let ns = nanos_since(since, Instant::now());
                tally.ended_ns = tally.ended_ns.saturating_add(ns);
            }
        }
        resumed
    })
}

/// Counts a pause from start-up (`TICKPROF_PAUSED=on`).
pub(crate) fn started_paused() {
    with_tally(|tally| {
        tally.pauses = 1;
        tally.since = Some(Instant::now());
    });
}

/// Zeroes the figures (a reset); a pause in progress counts as one,
/// begun now.
pub(crate) fn restart() {
    with_tally(|tally| {
        let paused = tally.since.is_some();
        tally.pauses = u64::from(paused);
        tally.ended_ns = 0;
        tally.since = paused.then(Instant::now);
    });
}

/// Pauses begun and the nanoseconds spent paused so far (a pause in
/// progress counted up to now). Lock-free.
pub(crate) fn totals() -> (u64, u64) {
    let pauses = PUBLISHED_PAUSES.load(Ordering::Relaxed);
    let ended = PUBLISHED_ENDED_NS.load(Ordering::Relaxed);
    let since = PUBLISHED_SINCE.load(Ordering::Relaxed);
    let current = if since == 0 {
        0
    } else {
        nanos_since(origin(), Instant::now()).saturating_sub(since - 1)
    };
    (pauses, ended.saturating_add(current))
}
