//! The accuracy cases, shared by `tests/accuracy.rs` (asserts) and
//! `benches/accuracy.rs` (prints the exact errors).

use std::hint::black_box;
use std::time::Instant;
use tickprof::profile;

/// Median of some values.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// About 20 ns of dependent arithmetic in an optimised build.
#[inline(always)]
fn work(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..28 {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(7) ^ x;
    }
    h
}

#[inline(never)]
#[profile]
fn acc_leaf(x: u64) -> u64 {
    work(x)
}

#[inline(never)]
fn plain_leaf(x: u64) -> u64 {
    work(x)
}

/// About 4 ns: a few independent operations, so that successive calls
/// overlap in the CPU's pipeline.
#[inline(always)]
fn small(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..3 {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (h >> 29);
    }
    h
}

#[inline(never)]
#[profile]
fn acc_small(x: u64) -> u64 {
    small(x)
}

#[inline(never)]
fn plain_small(x: u64) -> u64 {
    small(x)
}

/// Case A: each call's argument depends on the previous call's result.
#[inline(never)]
#[profile]
fn acc_chain(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = acc_leaf(acc ^ i);
    }
    acc
}

#[inline(never)]
fn plain_chain(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = plain_leaf(acc ^ i);
    }
    acc
}

/// Case B: independent calls, their results summed.
#[inline(never)]
#[profile]
fn acc_overlap(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = acc.wrapping_add(acc_small(i));
    }
    acc
}

#[inline(never)]
fn plain_overlap(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = acc.wrapping_add(plain_small(i));
    }
    acc
}

/// The two leaf cases.
#[derive(Clone, Copy, Debug)]
pub enum Leaf {
    /// A: a ~20 ns leaf whose calls form one dependent chain
    /// (`acc = leaf(acc ^ i)`).
    Chain,
    /// B: a ~4 ns leaf whose calls overlap (`acc += leaf(i)`).
    Overlap,
}

/// Errors of a leaf case, medians over the rounds.
#[derive(Debug)]
// The bench prints every figure; the test asserts only the invariants.
#[allow(dead_code)]
pub struct LeafErrors {
    /// True leaf cost: the uninstrumented loop's time per call, ns.
    pub leaf_ns: f64,
    /// (parent compensated total − truth) ÷ truth.
    pub parent: f64,
    /// (parent raw total − truth) ÷ truth.
    pub parent_raw: f64,
    /// Leaf compensated mean ÷ true leaf cost.
    pub leaf_ratio: f64,
    /// Leaf raw mean ÷ true leaf cost.
    pub leaf_raw_ratio: f64,
    /// Whether the report called the leaf's calls resolved (every round).
    pub leaf_resolved: bool,
    /// Whether the report called the parent's calls resolved (every round).
    pub parent_resolved: bool,
    /// Invariants broken in any round (empty when all held).
    pub broken: Vec<String>,
}

/// The parent-child invariants of one report: self <= total, min <= mean
/// <= max, the child's total at most the parent's, raw and compensated.
fn invariants(parent: &tickprof::SiteStats, leaf: &tickprof::SiteStats) -> Vec<String> {
    let mut v = Vec::new();
    for s in [parent, leaf] {
        if s.self_ns > s.total_ns || s.raw_self_ns > s.raw_total_ns {
            v.push(format!("{}: self above total", s.name));
        }
        if !(s.min_ns as f64 <= s.mean_ns + 0.5 && s.mean_ns <= s.max_ns as f64 + 0.5) {
            v.push(format!(
                "{}: min {} mean {} max {}",
                s.name, s.min_ns, s.mean_ns, s.max_ns
            ));
        }
    }
    if leaf.total_ns > parent.total_ns || leaf.raw_total_ns > parent.raw_total_ns {
        v.push("child total above its only parent's".to_owned());
    }
    if parent.self_ns + leaf.self_ns > parent.total_ns {
        v.push("self times add up to more than the root's total".to_owned());
    }
    v
}

/// A leaf called `n` times from a marked parent, against the same loop
/// calling an unmarked copy, timed with `Instant`.
pub fn leaf_case(case: Leaf, n: u64, rounds: usize) -> LeafErrors {
    type Loop = fn(u64) -> u64;
    let (marked, plain, pname, lname): (Loop, Loop, _, _) = match case {
        Leaf::Chain => (acc_chain, plain_chain, "::acc_chain", "::acc_leaf"),
        Leaf::Overlap => (acc_overlap, plain_overlap, "::acc_overlap", "::acc_small"),
    };
    let (mut p, mut pr, mut l, mut lr, mut truths) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut leaf_resolved, mut parent_resolved, mut broken) = (true, true, Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let a = plain(n);
        let truth = t.elapsed().as_nanos() as f64;
        let before = tickprof::snapshot();
        let b = marked(n);
        let r = &tickprof::snapshot() - &before;
        assert_eq!(a, b);
        let parent = r.find(pname).expect("parent ran");
        let leaf = r.find(lname).expect("leaf ran");
        assert_eq!((parent.calls, leaf.calls), (1, n));
        leaf_resolved &= leaf.resolved;
        parent_resolved &= parent.resolved;
        broken.extend(invariants(parent, leaf));
        let leaf_truth = truth / n as f64;
        truths.push(leaf_truth);
        p.push((parent.compensated_total_ns as f64 - truth) / truth);
        pr.push((parent.raw_total_ns as f64 - truth) / truth);
        l.push(leaf.compensated_total_ns as f64 / n as f64 / leaf_truth);
        lr.push(leaf.raw_total_ns as f64 / n as f64 / leaf_truth);
    }
    LeafErrors {
        leaf_ns: median(truths),
        parent: median(p),
        parent_raw: median(pr),
        leaf_ratio: median(l),
        leaf_raw_ratio: median(lr),
        leaf_resolved,
        parent_resolved,
        broken,
    }
}

#[cfg(target_arch = "x86_64")]
fn now_ticks() -> u64 {
    // SAFETY: `rdtsc` exists on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Spins for `ticks` TSC ticks; returns the ticks actually spun (a
/// preemption at the end of the spin is in them, so it is in the truth too).
#[cfg(target_arch = "x86_64")]
fn spin_ticks(ticks: u64) -> u64 {
    let start = now_ticks();
    let end = start + ticks;
    let mut now = start;
    while now < end {
        std::hint::spin_loop();
        now = now_ticks();
    }
    now - start
}

#[cfg(target_arch = "x86_64")]
mod tree {
    use super::spin_ticks;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Ticks per microsecond, set before the tree runs.
    pub static TPU: AtomicU64 = AtomicU64::new(0);
    /// Ticks actually spun by each level's own body.
    pub static SPUN: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
    /// Ticks spun by the unmarked twins, kept apart from [`SPUN`].
    pub static PLAIN_SPUN: [AtomicU64; 3] =
        [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

    /// The three levels, each spinning then calling the next five times,
    /// with the attribute given and their spins counted in `$spun`.
    macro_rules! levels {
        (#[$attr:meta], $spun:ident, $l1:ident, $l2:ident, $l3:ident) => {
            #[$attr]
            pub fn $l1() {
                spin_us(&$spun[0], 100);
                for _ in 0..5 {
                    $l2();
                }
            }

            #[$attr]
            pub fn $l2() {
                spin_us(&$spun[1], 10);
                for _ in 0..5 {
                    $l3();
                }
            }

            #[$attr]
            pub fn $l3() {
                spin_us(&$spun[2], 1);
            }
        };
    }

    fn spin_us(spun: &AtomicU64, n: u64) {
        let t = spin_ticks(n * TPU.load(Ordering::Relaxed));
        spun.fetch_add(t, Ordering::Relaxed);
    }

    levels!(#[tickprof::profile], SPUN, level1, level2, level3);
    // The tree again, unmarked: what each level costs beyond its spinning
    // (the calls, the loop, the counter's locked add, the spin's first
    // clock read) with no instrumentation.
    levels!(#[inline(never)], PLAIN_SPUN, plain_level1, plain_level2, plain_level3);
}

/// Ticks per call each level of the tree spends beyond its own spinning,
/// unmarked: the lowest of five measurements of its unmarked twin (a
/// preempted one only comes out higher), its children's whole time taken
/// out.
#[cfg(target_arch = "x86_64")]
fn bookkeeping_ticks() -> [f64; 3] {
    use std::sync::atomic::Ordering;
    let spun = || -> [u64; 3] {
        let p = &tree::PLAIN_SPUN;
        [0, 1, 2].map(|k| p[k].load(Ordering::Relaxed))
    };
    // (function, calls per measurement, its level)
    let twins: [(fn(), u64, usize); 3] = [
        (tree::plain_level3, 200, 2),
        (tree::plain_level2, 20, 1),
        (tree::plain_level1, 4, 0),
    ];
    let mut bk = [f64::MAX; 3];
    for _ in 0..5 {
        for &(f, n, level) in &twins {
            let s0 = spun();
            let t0 = now_ticks();
            for _ in 0..n {
                f();
            }
            let elapsed = now_ticks() - t0;
            let s1 = spun();
            let spun_all: u64 = (0..3).map(|k| s1[k] - s0[k]).sum();
            // Calls of each deeper level made per call of this one.
            let below: f64 = (level + 1..3)
                .map(|k| 5f64.powi((k - level) as i32) * bk[k])
                .sum();
            let per_call = (elapsed - spun_all) as f64 / n as f64 - below;
            bk[level] = bk[level].min(per_call.max(0.0));
        }
    }
    bk
}

/// One figure of the tree case: (name, "total"/"self", compensated error,
/// raw error), medians over the rounds.
pub type TreeError = (&'static str, &'static str, f64, f64);

/// Case C: a 3-level tree of spins of known cost (100 µs → 5 × 10 µs →
/// 5 × 1 µs),
/// `calls` top-level calls per round; truth is the ticks actually spun,
/// plus each level's own work beyond its spinning as its unmarked twin
/// measures it (about 20 ns per call: the calls, a locked add, the spin's
/// first clock read).
#[cfg(target_arch = "x86_64")]
pub fn spin_tree(calls: u64, rounds: usize) -> Vec<TreeError> {
    use std::sync::atomic::Ordering;
    let hz = tickprof::report().run.frequency_hz;
    tree::TPU.store((hz / 1e6).round() as u64, Ordering::Relaxed);
    let bk = bookkeeping_ticks();
    let names = ["::tree::level1", "::tree::level2", "::tree::level3"];
    let mut errs: Vec<Vec<f64>> = vec![vec![]; 6];
    let mut raw: Vec<Vec<f64>> = vec![vec![]; 6];
    for _ in 0..rounds {
        let spun0: Vec<u64> = tree::SPUN
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        let before = tickprof::snapshot();
        for _ in 0..calls {
            tree::level1();
        }
        let r = &tickprof::snapshot() - &before;
        let ns = |k: usize| {
            (tree::SPUN[k].load(Ordering::Relaxed) - spun0[k]) as f64 * 1e9 / r.run.frequency_hz
        };
        // Self is each level's own spinning plus its own work beyond it
        // (measured unmarked); total adds the levels below.
        let per_level_calls = [calls, 5 * calls, 25 * calls];
        let own = |k: usize| ns(k) + (per_level_calls[k] as f64 * bk[k]) * 1e9 / r.run.frequency_hz;
        let selfs = [own(0), own(1), own(2)];
        let totals = [
            selfs[0] + selfs[1] + selfs[2],
            selfs[1] + selfs[2],
            selfs[2],
        ];
        for (k, name) in names.iter().enumerate() {
            let s = r.find(name).expect("tree ran");
            errs[2 * k].push((s.compensated_total_ns as f64 - totals[k]) / totals[k]);
            errs[2 * k + 1].push((s.compensated_self_ns as f64 - selfs[k]) / selfs[k]);
            raw[2 * k].push((s.raw_total_ns as f64 - totals[k]) / totals[k]);
            raw[2 * k + 1].push((s.raw_self_ns as f64 - selfs[k]) / selfs[k]);
        }
    }
    let mut out = Vec::new();
    for (k, name) in names.iter().enumerate() {
        for (j, what) in ["total", "self"].iter().enumerate() {
            out.push((
                *name,
                *what,
                median(errs[2 * k + j].clone()),
                median(raw[2 * k + j].clone()),
            ));
        }
    }
    out
}
