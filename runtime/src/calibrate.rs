//! Overhead calibration: what one marked call costs, measured once per run.
//!
//! Two figures, in ticks:
//! - **inner** (α): the part of a guard's cost that lands inside its own
//!   measured interval — what a marked function with a ~20 ns body records
//!   per call beyond the time the same unmarked function takes.
//! - **call** (γ): the whole cost of one marked call as its caller sees it —
//!   a loop of marked calls minus the same loop of unmarked calls, both with
//!   an empty body. With an empty body the cost is the same whether the
//!   calls are independent or form one dependent chain (34.6 and 34.0 ns on
//!   the Intel host); a longer body gives different costs for the two shapes
//!   (29 ns in a dependent chain, 42-61 ns for overlapping calls), so the
//!   calibration takes the one figure they share.
//! - **counted call**: what a counted call (no clock read: a site that is
//!   counted, see `record::adapt`) costs its caller back to back around an
//!   empty body, the most it costs; compensation subtracts, for every
//!   counted call beneath a node, the part of it the node's own work does
//!   not hide (`build::figures::exposed`).
//! - **typical call**: the call cost around a ~10 ns body, calls independent:
//!   what code made of many small calls pays per call; only the header's
//!   instrumentation share uses it.
//!
//! Real bodies overlap the clock reads (`rdtsc` is not serialising), so the
//! inner cost is measured around a body rather than an empty function,
//! which would overstate it.
//!
//! Measured when the first report is built, on a thread of its own, in batches
//! of `BATCH` calls of each of the eight functions: at least `BATCHES` batches,
//! and until half of them fall in the machine's fast state (see
//! `fast_cluster`), at most `MAX_TIME`. Each figure is the median over the
//! fast batches. Takes a few milliseconds, 10 ms at most.

use crate::clock::ticks;
use crate::record::guard::{site_totals_on_this_thread, Guard};
use crate::site::{path_of, CallSite};
use std::hint::black_box;
use std::sync::OnceLock;

/// Rounds of the body the call cost is measured around: none (see the
/// module docs).
const CALL_ROUNDS: u32 = 0;
/// Rounds of the body the *typical* call cost is measured around (about
/// 10 ns, independent calls): what a marked call costs its caller in code
/// made of many small calls, such as a crate with every function marked.
/// Used for the header's instrumentation share only; compensation
/// subtracts the empty-body cost.
const TYPICAL_ROUNDS: u32 = 8;
/// Rounds of the body the inner cost is measured around (about 20 ns): the
/// end stamp overlaps more of a longer body, so the inner cost shrinks with
/// body length; below one clock read calls are not resolved anyway.
const INNER_ROUNDS: u32 = 24;

/// Calls per batch (marked, then as many unmarked).
const BATCH: u64 = 250;
/// Batches measured at least; at least half of them must fall in the fast
/// cluster, else measuring goes on until `MAX_TIME`.
const BATCHES: usize = 81;
/// Batches run first and discarded (caches, branch predictors).
const WARMUP_BATCHES: usize = 10;
/// Longest the calibration measures.
const MAX_TIME: std::time::Duration = std::time::Duration::from_millis(10);
/// Width of the fast cluster above its 10th percentile.
const CLUSTER: f64 = 0.04;

/// The calibrated costs, in ticks per call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Calibration {
    pub inner_ticks: f64,
    pub call_ticks: f64,
    /// What a counted call (no clock read) costs its caller back to back,
    /// around an empty body, like `call_ticks`: the most it costs.
    pub counted_call_ticks: f64,
    /// The call cost around a ~10 ns body (see `TYPICAL_ROUNDS`).
    pub typical_call_ticks: f64,
    pub calls: u64,
}

fn marker() {}

/// The site calibration times; internal, so left out of every report.
static CALIBRATION_SITE: CallSite = CallSite::internal(path_of(marker), file!(), line!());

/// The site whose calls are counted from the first (a counted call's
/// cost); internal too.
static COUNTED_SITE: CallSite = CallSite::internal_counted(path_of(marker), file!(), line!());

/// A marked function whose calls are counted (not timed), with an empty
/// body: back to back, nothing to overlap, the most a counted call costs.
#[inline(never)]
fn counted(x: u64) -> u64 {
    let g = Guard::enter(&COUNTED_SITE);
    let v = body::<CALL_ROUNDS>(x);
    g.exit();
    v
}

/// What the caller pays per counted call beyond the unmarked call: one
/// batch of each, back to back, in ticks.
fn marginal_counted() -> f64 {
    let marked = batch(counted);
    let unmarked = batch(unmarked::<CALL_ROUNDS>);
    (marked as f64 - unmarked as f64) / BATCH as f64
}

/// A dependent chain of `ROUNDS` multiply-xor steps: a body that, like real
/// ones, can overlap the clock reads.
#[inline(always)]
fn body<const ROUNDS: u32>(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..ROUNDS {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ x;
    }
    h
}

/// A marked function with `ROUNDS` rounds of the body. Ends its call as
/// `#[profile]` does, with [`Guard::exit`] (marked functions are what the
/// calibration stands for).
#[inline(never)]
fn marked<const ROUNDS: u32>(x: u64) -> u64 {
    let g = Guard::enter(&CALIBRATION_SITE);
    let v = body::<ROUNDS>(x);
    g.exit();
    v
}

/// The same body, unmarked.
#[inline(never)]
fn unmarked<const ROUNDS: u32>(x: u64) -> u64 {
    body::<ROUNDS>(x)
}

/// What the caller pays per marked call beyond the unmarked call, around
/// `ROUNDS` rounds of the body: one batch of each, back to back, in ticks.
fn marginal<const ROUNDS: u32>() -> f64 {
    let marked = batch(marked::<ROUNDS>);
    let unmarked = batch(unmarked::<ROUNDS>);
    (marked as f64 - unmarked as f64) / BATCH as f64
}

/// One batch's figures, in ticks per call.
#[derive(Clone, Copy)]
struct Sample {
    inner: f64,
    call: f64,
    counted: f64,
    typical: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Runs `f` on `BATCH` inputs; returns the ticks it took.
fn batch(f: fn(u64) -> u64) -> u64 {
    let t0 = ticks();
    for i in 0..BATCH {
        black_box(f(i));
    }
    ticks().wrapping_sub(t0)
}

/// The calibrated overhead, measured once on the first thread that can.
static CALIBRATION: OnceLock<Calibration> = OnceLock::new();

/// The calibration, measuring it on the calling thread if it was not
/// measured yet. `None` if this thread cannot record.
fn calibration() -> Option<Calibration> {
    if let Some(c) = CALIBRATION.get() {
        return Some(*c);
    }
    let c = calibrate()?;
    Some(*CALIBRATION.get_or_init(|| c))
}

/// The calibration, measured on first use on a short-lived thread of its
/// own (`tickprof calibration`): when the first report is built, so that a
/// process that never reports (it made no marked call) never pays for it,
/// and neither the program's threads nor its call tree see it. `None` if
/// no thread can be started.
pub(crate) fn ensure() -> Option<Calibration> {
    if let Some(c) = CALIBRATION.get() {
        return Some(*c);
    }
    std::thread::Builder::new()
        .name(crate::record::CALIBRATION_THREAD.to_owned())
        .spawn(calibration)
        .ok()?
        .join()
        .ok()
        .flatten()
}

/// Measures the costs on the calling thread. `None` if this thread cannot
/// record (profiling off, or its state is gone).
fn calibrate() -> Option<Calibration> {
    let start = std::time::Instant::now();
    for _ in 0..WARMUP_BATCHES {
        for f in [
            marked::<CALL_ROUNDS>,
            unmarked::<CALL_ROUNDS>,
            marked::<TYPICAL_ROUNDS>,
            unmarked::<TYPICAL_ROUNDS>,
            marked::<INNER_ROUNDS>,
            unmarked::<INNER_ROUNDS>,
            counted,
        ] {
            batch(f);
        }
    }
    let mut samples: Vec<Sample> = Vec::with_capacity(2 * BATCHES);
    loop {
        let call = marginal::<CALL_ROUNDS>();
        let counted = marginal_counted();
        let typical = marginal::<TYPICAL_ROUNDS>();
        // Inner: what the guard recorded beyond the body's own time.
        let (c0, t0) = site_totals_on_this_thread(&CALIBRATION_SITE);
        batch(marked::<INNER_ROUNDS>);
        let (c1, t1) = site_totals_on_this_thread(&CALIBRATION_SITE);
        let medium_unmarked_ticks = batch(unmarked::<INNER_ROUNDS>);
        if c1 - c0 != BATCH {
            return None;
        }
        let inner = ((t1 - t0) as f64 - medium_unmarked_ticks as f64) / BATCH as f64;
        samples.push(Sample {
            inner: inner.max(0.0),
            call: call.max(0.0),
            counted: counted.max(0.0),
            typical: typical.max(0.0),
        });
        if samples.len() >= BATCHES
            && (fast_cluster(&samples).len() >= BATCHES / 2 || start.elapsed() >= MAX_TIME)
        {
            break;
        }
    }
    let fast = fast_cluster(&samples);
    let inner_ticks = median(fast.iter().map(|s| s.inner).collect());
    let call_ticks = median(fast.iter().map(|s| s.call).collect()).max(inner_ticks);
    let typical_call_ticks = median(fast.iter().map(|s| s.typical).collect()).max(call_ticks);
    // A counted call reads no clock, so nothing serialises it: back to
    // back around an empty body it costs the most, and its caller's work
    // hides part or all of it (see `build::figures::exposed`). Never above
    // a timed call's cost.
    let counted_call_ticks = median(fast.iter().map(|s| s.counted).collect()).min(call_ticks);
    Some(Calibration {
        inner_ticks,
        call_ticks,
        counted_call_ticks,
        typical_call_ticks,
        calls: 8 * BATCH * samples.len() as u64,
    })
}

/// The batches of the machine's fast state: this VM (and shared machines in
/// general) runs in slower spells of a few milliseconds, during which every
/// instruction costs more; the calibration wants the usual, fast state. The
/// cluster is the batches whose call cost is within `CLUSTER` of the 10th
/// percentile.
fn fast_cluster(samples: &[Sample]) -> Vec<Sample> {
    let mut calls: Vec<f64> = samples.iter().map(|s| s.call).collect();
    calls.sort_by(f64::total_cmp);
    let low = calls.get(calls.len() / 10).copied().unwrap_or(0.0);
    samples
        .iter()
        .copied()
        .filter(|s| s.call <= low * (1.0 + CLUSTER))
        .collect()
}
