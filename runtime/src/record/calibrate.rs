//! What one timed call costs its caller at least: measured once, on the
//! sampler's thread 50 ms after it starts, as a floor under the instrumentation the sampler
//! finds inside a timed node (see `build::figures::floor`).
//!
//! The sampler tells the instrumentation from the program by the tags of
//! the thread's current-node word, set around a call's entry and exit
//! code; a call's cost outside those windows (the mode test, what the CPU
//! has not retired when the sampler looks) it reads as the program's. A
//! loop of
//! timed calls around an empty body, less the same loop of unmarked calls,
//! measures the least a timed call costs (its two clock reads serialise
//! it: real code pays at least that), and a timed node's calls lose at
//! least that much per timed call made beneath them.
//!
//! Batches of [`BATCH`] calls, at least [`BATCHES`] (at most
//! [`MAX_BATCHES`]), until half of them
//! fall in the machine's fast state (see [`fast_cluster`]) or [`MAX_TIME`]
//! passed; the figure is the median of the fast batches. The calls are
//! made on tickprof's own site (left out of every report) by the
//! sampler's thread, which is neither sampled nor counted as one of the
//! program's threads.

use crate::clock::ticks;
use crate::site::{path_of, CallSite};
use core::sync::atomic::{AtomicU64, Ordering};
use std::hint::black_box;

/// Calls per batch (timed, then as many unmarked).
const BATCH: u64 = 200;
/// Batches measured at least.
const BATCHES: usize = 61;
/// Batches measured at most.
const MAX_BATCHES: usize = 256;
/// Batches run first and discarded (caches, branch predictors).
const WARMUP_BATCHES: usize = 8;
/// Longest the calibration measures.
const MAX_TIME: std::time::Duration = std::time::Duration::from_millis(8);
/// Width of the fast cluster above its 10th percentile.
const CLUSTER: f64 = 0.05;

/// The calibrated cost, in ticks per call (0 until measured).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Calibration {
    /// A timed call's whole cost to its caller, around an empty body.
    pub timed: f64,
}

fn marker() {}

/// The timed site (tickprof's own: left out of every report).
static TIMED_SITE: CallSite = CallSite::internal(path_of(marker), file!(), line!());

/// A marked function with an empty body, its recording path as
/// `#[profile]` expands one.
#[inline(never)]
fn timed(x: u64) -> u64 {
    let g = super::guard::Guard::enter(&TIMED_SITE);
    let v = black_box(x);
    black_box(&v);
    g.exit();
    v
}

/// The same body, unmarked.
#[inline(never)]
fn unmarked(x: u64) -> u64 {
    black_box(x)
}

/// Runs `f` on `BATCH` inputs, direct calls whose results are summed
/// (independent calls, free to overlap); returns the ticks it took.
#[inline(always)]
fn batch(f: impl Fn(u64) -> u64) -> u64 {
    let t0 = ticks();
    let mut acc = 0u64;
    for i in 0..BATCH {
        acc = acc.wrapping_add(f(i));
    }
    black_box(acc);
    ticks().wrapping_sub(t0)
}

/// The cost (as `f64` bits; 0: not measured).
static TIMED_COST: AtomicU64 = AtomicU64::new(0);

/// The calibration, if measured (zero else: no floor).
pub(crate) fn costs() -> Calibration {
    Calibration {
        timed: f64::from_bits(TIMED_COST.load(Ordering::Relaxed)),
    }
}

/// Whether the costs are measured.
pub(crate) fn measured() -> bool {
    TIMED_COST.load(Ordering::Relaxed) != 0
}

/// Measures the cost on the calling thread (the sampler's) if it is not
/// measured yet and the recorder records plainly (no hook, log or
/// pause: their paths are not the one to measure). `between` runs after
/// each batch pair, when the CPU has been offered to the program: the
/// sampler sweeps there on its schedule (on a busy machine each offer can
/// cost a time slice, and the calibration took hundreds of milliseconds
/// without a sweep: the next one credited all of it to the node then on
/// top, a timed parent's self holding a counted child's time).
pub(crate) fn ensure(between: &mut dyn FnMut()) {
    if measured() || crate::switches::mode() != crate::switches::RECORD {
        return;
    }
    if let Some(c) = measure(between) {
        TIMED_COST.store(c.timed.max(f64::MIN_POSITIVE).to_bits(), Ordering::Relaxed);
    }
}

/// [`ensure`] as the sampler thread's job: whether the cost is measured
/// (else it is tried again on the sampler's next round).
pub(crate) fn job(between: &mut dyn FnMut()) -> bool {
    ensure(between);
    measured()
}

#[inline(always)]
fn marginal(f: impl Fn(u64) -> u64) -> f64 {
    let marked = batch(f);
    let plain = batch(unmarked);
    (marked as f64 - plain as f64) / BATCH as f64
}

/// Between two batch pairs (~10 µs each): the CPU offered to any thread
/// of the program waiting for it (on a busy machine, the calibration must
/// not hold a core the program wants), then `between` run.
fn offer(between: &mut dyn FnMut()) {
    std::thread::yield_now();
    between();
}

fn measure(between: &mut dyn FnMut()) -> Option<Calibration> {
    let start = std::time::Instant::now();
    for _ in 0..WARMUP_BATCHES {
        batch(timed);
        batch(unmarked);
        offer(between);
    }
    // On the stack: the sampler allocates nothing from the program's
    // allocator.
    let mut samples = [0.0f64; MAX_BATCHES];
    let mut n = 0;
    while n < MAX_BATCHES {
        samples[n] = marginal(timed).max(0.0);
        n += 1;
        offer(between);
        if n >= BATCHES
            && (fast_cluster(&mut samples[..n]).len() >= BATCHES / 2 || start.elapsed() >= MAX_TIME)
        {
            break;
        }
    }
    if crate::switches::mode() != crate::switches::RECORD {
        return None;
    }
    let fast = fast_cluster(&mut samples[..n]);
    Some(Calibration {
        timed: fast.get(fast.len() / 2).copied().unwrap_or(0.0),
    })
}

/// The batches of the machine's fast state, sorted: a shared machine
/// runs in slower spells of a few milliseconds, in which every
/// instruction costs more; the floor wants the usual, fast state (it must
/// not exceed what a call costs). The cluster: the batches within
/// [`CLUSTER`] of the 10th percentile (`samples` is sorted in place; the
/// cluster is its first part).
fn fast_cluster(samples: &mut [f64]) -> &[f64] {
    samples.sort_by(f64::total_cmp);
    let low = samples.get(samples.len() / 10).copied().unwrap_or(0.0);
    let k = samples.partition_point(|&s| s <= low * (1.0 + CLUSTER));
    &samples[..k]
}

#[cfg(test)]
mod tests {
    use super::fast_cluster;

    #[test]
    fn the_fast_cluster_is_the_batches_near_the_tenth_percentile() {
        // Ten batches: the 10th percentile is 20.0 (the second smallest);
        // within 5% of it: 19.5, 20.0, 20.9; the slow spells are left out.
        let mut v = [31.0, 20.0, 45.0, 20.9, 19.5, 22.0, 60.0, 21.5, 33.0, 25.0];
        assert_eq!(fast_cluster(&mut v), &[19.5, 20.0, 20.9]);
        assert!(fast_cluster(&mut []).is_empty());
    }

    #[test]
    fn the_cost_is_measured_once_and_plausible() {
        // The unit tests record plainly (no hook, log or pause set).
        assert_eq!(crate::switches::mode(), crate::switches::RECORD);
        let mut between = 0u32;
        super::ensure(&mut || between += 1);
        let c = super::costs();
        // Two clock reads at least; well under a microsecond.
        assert!(c.timed > 0.0 && c.timed < 1e5, "{c:?}");
        // Run after every batch pair (the sampler sweeps there), warm-up
        // included, unless another test measured first.
        assert!(
            between == 0 || between as usize > super::WARMUP_BATCHES,
            "{between}"
        );
        let before = between;
        super::ensure(&mut || between += 1);
        assert_eq!(super::costs(), c, "measured once");
        assert_eq!(between, before, "nothing run when measured");
    }
}
