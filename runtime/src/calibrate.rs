//! Overhead calibration: what one marked call costs, measured once per run.
//!
//! Two figures, in ticks:
//! - **inner** (α): the part of a guard's cost that lands inside its own
//!   measured interval — what a marked function records per call beyond
//!   the time the same unmarked function takes.
//! - **call** (γ): the whole cost of one marked call as its caller sees it —
//!   a loop of marked calls minus the same loop of unmarked calls, both with
//!   the same few-nanosecond body (real bodies overlap the clock reads a
//!   little; an empty body would overstate the cost).
//!
//! Measured before `main` (the constructor), on the main thread: a warm-up
//! of at least `WARMUP` (an idle core runs slower for a moment), then
//! `BATCHES` batches of `BATCH` marked and `BATCH` unmarked calls; each
//! figure is the median of the batch means. Takes about 4 ms.

use crate::clock::ticks;
use crate::site::{path_of, CallSite};
use crate::thread::{site_totals_on_this_thread, Guard};
use std::hint::black_box;

/// Multiply-xor rounds in the reference body (a few nanoseconds).
const REFERENCE_ROUNDS: u32 = 8;

/// Calls per batch.
const BATCH: u64 = 250;
/// Batches kept.
const BATCHES: usize = 81;
/// Batches run first and discarded (caches, branch predictors), at least.
const WARMUP_BATCHES: usize = 10;
/// Warm-up time, at least (an idle core ramping up its clock).
const WARMUP: std::time::Duration = std::time::Duration::from_millis(3);

/// The calibrated costs, in ticks per call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Calibration {
    pub inner_ticks: f64,
    pub call_ticks: f64,
    pub calls: u64,
}

fn marker() {}

/// The site calibration times; left out of every report.
pub(crate) static CALIBRATION_SITE: CallSite = CallSite::function(
    path_of(marker),
    Some("tickprof calibration"),
    file!(),
    line!(),
);

/// A short dependent chain (a few nanoseconds), so the caller-side cost is
/// measured around a body that, like real ones, can overlap the clock reads.
#[inline(always)]
fn small_body(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..REFERENCE_ROUNDS {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ x;
    }
    h
}

#[inline(never)]
fn small_marked(x: u64) -> u64 {
    let _g = Guard::enter(&CALIBRATION_SITE);
    small_body(x)
}

#[inline(never)]
fn small_unmarked(x: u64) -> u64 {
    small_body(x)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Measures the costs on the calling thread. `None` if this thread cannot
/// record (profiling off, or its state is gone).
pub(crate) fn calibrate() -> Option<Calibration> {
    let mut inner = Vec::with_capacity(BATCHES);
    let mut call = Vec::with_capacity(BATCHES);
    // Warm up for a bounded time first: a core that was idle runs slower
    // for a moment, which would overstate both costs.
    let warm = std::time::Instant::now();
    let mut round = 0usize;
    while round < WARMUP_BATCHES || warm.elapsed() < WARMUP {
        for i in 0..BATCH {
            black_box(small_marked(i));
            black_box(small_unmarked(i));
        }
        round += 1;
    }
    for _ in 0..BATCHES {
        // The same small body, marked then unmarked, back to back.
        let (c0, t0) = site_totals_on_this_thread(&CALIBRATION_SITE);
        let m0 = ticks();
        for i in 0..BATCH {
            black_box(small_marked(i));
        }
        let m1 = ticks();
        for i in 0..BATCH {
            black_box(small_unmarked(i));
        }
        let u1 = ticks();
        let (c1, t1) = site_totals_on_this_thread(&CALIBRATION_SITE);
        if c1 - c0 != BATCH {
            return None;
        }
        let n = BATCH as f64;
        let unmarked = u1.wrapping_sub(m1) as f64 / n;
        let marked = m1.wrapping_sub(m0) as f64 / n;
        let recorded = (t1 - t0) as f64 / n;
        // Inner: what the guard recorded beyond the body's own time.
        inner.push((recorded - unmarked).max(0.0));
        // Call: what the caller paid beyond the unmarked call.
        call.push((marked - unmarked).max(0.0));
    }
    let inner_ticks = median(inner);
    let call_ticks = median(call).max(inner_ticks);
    Some(Calibration {
        inner_ticks,
        call_ticks,
        calls: 2 * BATCH * BATCHES as u64,
    })
}
