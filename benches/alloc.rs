//! Cost of allocation counting: building and dropping a `Vec<String>` of
//! 1,000 short strings with the system allocator, with `tickprof::Alloc`
//! outside any marked call, and inside a marked call.
//!
//! Run: `cargo bench --bench alloc`. One binary has one global allocator,
//! so this one installs a switch that forwards each call either to
//! `System` or to `tickprof::Alloc<System>`: every variant pays the same
//! switch (a relaxed load and a predictable branch per call), so the ratios
//! slightly understate the wrapper's cost. The variants run interleaved,
//! round after round; each round times a batch of iterations, and the
//! summary gives the median, the spread (fastest and slowest round) and the
//! ratio of the medians to `System`'s.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Iterations per timed batch.
const BATCH: u32 = 200;
/// Interleaved rounds; the median is kept (`ALLOC_BENCH_ROUNDS` overrides,
/// e.g. 1 under callgrind).
const ROUNDS: usize = 41;

static COUNTING: AtomicBool = AtomicBool::new(false);
static WRAPPED: tickprof::Alloc = tickprof::Alloc::system();

/// Forwards to `System` or to `tickprof::Alloc<System>`.
struct Switch;

// SAFETY: forwards every call unchanged to one of two allocators; a block
// is always freed by the one that allocated it, since `COUNTING` only
// changes between batches, when every block of the workload is freed, and
// `tickprof::Alloc<System>` frees with `System`.
unsafe impl GlobalAlloc for Switch {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            // SAFETY: the caller's contract.
            unsafe { WRAPPED.alloc(l) }
        } else {
            // SAFETY: the caller's contract.
            unsafe { System.alloc(l) }
        }
    }
    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            // SAFETY: the caller's contract.
            unsafe { WRAPPED.dealloc(p, l) }
        } else {
            // SAFETY: the caller's contract.
            unsafe { System.dealloc(p, l) }
        }
    }
    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            // SAFETY: the caller's contract.
            unsafe { WRAPPED.realloc(p, l, n) }
        } else {
            // SAFETY: the caller's contract.
            unsafe { System.realloc(p, l, n) }
        }
    }
}

#[global_allocator]
static GLOBAL: Switch = Switch;

/// The workload: a `Vec<String>` of 1,000 short strings, built and dropped
/// (1,000 string allocations plus the vector's growth).
#[inline(never)]
fn build_and_drop() -> usize {
    let mut v: Vec<String> = Vec::new();
    for i in 0..1_000u32 {
        v.push(format!("s{i}"));
    }
    black_box(&v);
    v.len()
}

#[inline(never)]
#[tickprof::profile]
fn marked_build_and_drop() -> usize {
    build_and_drop()
}

/// Nanoseconds per iteration of one batch.
fn batch(counting: bool, marked: bool) -> f64 {
    COUNTING.store(counting, Ordering::Relaxed);
    let t = Instant::now();
    match (counting, marked) {
        (false, _) => batch_system(),
        (true, false) => batch_outside(),
        (true, true) => batch_inside(),
    }
    let ns = t.elapsed().as_nanos() as f64 / f64::from(BATCH);
    COUNTING.store(false, Ordering::Relaxed);
    ns
}

// One function per variant, so that an instruction count per variant can
// be read from `valgrind --tool=callgrind` (inclusive cost of each).

#[inline(never)]
fn batch_system() {
    for _ in 0..BATCH {
        black_box(build_and_drop());
    }
}

#[inline(never)]
fn batch_outside() {
    // Not the same code as `batch_system`, so the two are not merged.
    black_box(1u8);
    for _ in 0..BATCH {
        black_box(build_and_drop());
    }
}

#[inline(never)]
fn batch_inside() {
    for _ in 0..BATCH {
        black_box(marked_build_and_drop());
    }
}

fn main() {
    // This thread's tickprof state is set up by a first marked call, so
    // that "outside marked calls" measures the counting on the thread's
    // root, not the set-up.
    COUNTING.store(true, Ordering::Relaxed);
    marked_build_and_drop();
    COUNTING.store(false, Ordering::Relaxed);
    let variants: [(&str, bool, bool); 3] = [
        ("System", false, false),
        ("tickprof::Alloc, outside marked calls", true, false),
        ("tickprof::Alloc, inside a marked call", true, true),
    ];
    let rounds = std::env::var("ALLOC_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..3.min(rounds) {
        for &(_, c, m) in &variants {
            batch(c, m);
        }
    }
    for _ in 0..rounds {
        for (i, &(_, c, m)) in variants.iter().enumerate() {
            times[i].push(batch(c, m));
        }
    }
    for t in &mut times {
        t.sort_by(f64::total_cmp);
    }
    let median = |t: &[f64]| t[t.len() / 2];
    let base = median(&times[0]);
    println!(
        "Vec<String> of 1,000 short strings, built and dropped: {rounds} interleaved rounds of {BATCH}"
    );
    println!(
        "{:<40} {:>12} {:>24} {:>8}",
        "allocator", "median", "spread (fastest-slowest)", "ratio"
    );
    for (i, (name, _, _)) in variants.iter().enumerate() {
        let t = &times[i];
        println!(
            "{:<40} {:>9.1} µs {:>10.1} - {:>7.1} µs {:>7.3}x",
            name,
            median(t) / 1e3,
            t[0] / 1e3,
            t[t.len() - 1] / 1e3,
            median(t) / base
        );
    }
    let r = tickprof::report();
    if let Some(s) = r.find("marked_build_and_drop") {
        println!(
            "check: {} marked calls, {} allocations counted inside them ({} per call)",
            s.calls,
            s.alloc.allocs,
            s.alloc.allocs / s.calls.max(1)
        );
    }
}
