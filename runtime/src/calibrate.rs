//! Overhead calibration: what one marked call costs, measured once per run.
//!
//! Two figures, in ticks:
//! - **inner** (α): the part of a guard's cost that lands inside its own
//!   measured interval — what an empty marked function reports per call.
//! - **call** (γ): the whole cost of one marked call as its caller sees it —
//!   a loop of empty marked calls minus the same loop of unmarked calls.
//!
//! Measured before `main` (the constructor), on the main thread, in
//! `BATCHES` batches of `BATCH` calls after `WARMUP_BATCHES` discarded ones;
//! each figure is the median of the batch means. Takes well under a
//! millisecond.

use crate::clock::ticks;
use crate::site::{path_of, CallSite};
use crate::thread::{site_totals_on_this_thread, Guard};
use std::hint::black_box;

/// Calls per batch.
const BATCH: u64 = 1000;
/// Batches kept.
const BATCHES: usize = 31;
/// Batches run first and discarded (caches, branch predictors, clock ramp).
const WARMUP_BATCHES: usize = 5;

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

#[inline(never)]
fn empty_marked(x: u64) -> u64 {
    let _g = Guard::enter(&CALIBRATION_SITE);
    black_box(x)
}

#[inline(never)]
fn empty_unmarked(x: u64) -> u64 {
    black_box(x)
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
    for round in 0..WARMUP_BATCHES + BATCHES {
        let (c0, t0) = site_totals_on_this_thread(&CALIBRATION_SITE);
        let m0 = ticks();
        for i in 0..BATCH {
            black_box(empty_marked(i));
        }
        let m1 = ticks();
        for i in 0..BATCH {
            black_box(empty_unmarked(i));
        }
        let u1 = ticks();
        let (c1, t1) = site_totals_on_this_thread(&CALIBRATION_SITE);
        if c1 - c0 != BATCH {
            return None;
        }
        if round >= WARMUP_BATCHES {
            inner.push((t1 - t0) as f64 / BATCH as f64);
            let marked = m1.wrapping_sub(m0) as f64;
            let unmarked = u1.wrapping_sub(m1) as f64;
            call.push(((marked - unmarked) / BATCH as f64).max(0.0));
        }
    }
    let inner_ticks = median(inner);
    let call_ticks = median(call).max(inner_ticks);
    Some(Calibration {
        inner_ticks,
        call_ticks,
        calls: BATCH * BATCHES as u64,
    })
}
