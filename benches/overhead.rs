//! Overhead of tickprof against the physical floor of a TSC profiler.
//!
//! Run: `cargo bench --bench overhead`. Two parts:
//!
//! 1. criterion benchmarks of each variant (statistics, regressions).
//! 2. A side-by-side summary: the variants run interleaved, round after
//!    round, in one process, and the median of each is reported as ns and
//!    TSC ticks per call, overhead (minus the unmarked function) and the
//!    ratio of that overhead to the floor's — with 1 thread, and with 2
//!    threads calling the same function at once.
//!
//! The floor is a hand-written guard that reads `rdtsc` at entry and at drop
//! and `black_box`es the delta: the least any TSC profiler can do per call.

use criterion::{black_box, Criterion};
use std::time::Instant;
use tickprof::{prof_scope, profile};

/// Calls per timed batch in the summary.
const BATCH: u64 = 200_000;
/// Interleaved rounds in the summary; the median is kept.
const ROUNDS: usize = 31;

#[path = "support/floor.rs"]
mod floor;
use floor::{rdtsc, Floor};

#[inline(never)]
fn unmarked(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
fn floor(x: u64) -> u64 {
    let _g = Floor::new();
    black_box(x) + 1
}

#[inline(never)]
#[profile]
fn marked(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
#[profile]
fn marked_other(x: u64) -> u64 {
    black_box(x) + 1
}

/// A marked parent calling a marked child: the hierarchy case.
#[inline(never)]
#[profile]
fn parent_loop(n: u64) -> u64 {
    let mut s = 0;
    for i in 0..n {
        s += marked_other(i);
    }
    s
}

macro_rules! alternating_children {
    ($($name:ident / $plain:ident),*) => {
        $(
            #[inline(never)]
            #[profile]
            fn $name(x: u64) -> u64 {
                black_box(x) + 1
            }
            #[inline(never)]
            fn $plain(x: u64) -> u64 {
                black_box(x) + 1
            }
        )*
        /// Sixteen marked leaves with the same body.
        const CHILDREN: [fn(u64) -> u64; 16] = [$($name),*];
        /// The same sixteen unmarked: what the alternation costs without
        /// tickprof (an indirect call whose target changes each time).
        const PLAIN_CHILDREN: [fn(u64) -> u64; 16] = [$($plain),*];
    };
}

alternating_children!(
    child0 / plain0,
    child1 / plain1,
    child2 / plain2,
    child3 / plain3,
    child4 / plain4,
    child5 / plain5,
    child6 / plain6,
    child7 / plain7,
    child8 / plain8,
    child9 / plain9,
    child10 / plain10,
    child11 / plain11,
    child12 / plain12,
    child13 / plain13,
    child14 / plain14,
    child15 / plain15
);

/// Calls `k` of `children` in turn (A, B, A, B… for `k = 2`), through
/// the same indirect call for every `k`, so that the variants differ only
/// in how many children the caller alternates between (`k` a power of
/// two).
#[inline(always)]
fn alternate(children: &[fn(u64) -> u64; 16], n: u64, k: usize) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_add(children[(i as usize) & (k - 1)](black_box(i)));
    }
    s
}

/// A marked parent alternating between `k` marked children.
#[inline(never)]
#[profile]
fn alternating_parent(n: u64, k: usize) -> u64 {
    alternate(&CHILDREN, n, k)
}

/// [`alternating_parent`] unmarked, calling the unmarked children.
#[inline(never)]
fn alternating_plain(n: u64, k: usize) -> u64 {
    alternate(&PLAIN_CHILDREN, n, k)
}

/// The alternating-children summary: ns per child call with the parent
/// alternating between 1, 2, 4 and 16 children, marked and unmarked
/// (interleaved), and the overhead (their difference) against 1 child's.
fn alternating_summary() {
    let ks = [1usize, 2, 4, 16];
    let mut marked: Vec<Vec<f64>> = vec![Vec::new(); ks.len()];
    let mut plain: Vec<Vec<f64>> = vec![Vec::new(); ks.len()];
    for _ in 0..ROUNDS {
        for (j, &k) in ks.iter().enumerate() {
            let t = Instant::now();
            black_box(alternating_parent(BATCH, k));
            marked[j].push(t.elapsed().as_nanos() as f64 / BATCH as f64);
            let t = Instant::now();
            black_box(alternating_plain(BATCH, k));
            plain[j].push(t.elapsed().as_nanos() as f64 / BATCH as f64);
        }
    }
    let marked: Vec<f64> = marked.into_iter().map(median).collect();
    let plain: Vec<f64> = plain.into_iter().map(median).collect();
    println!("-- a marked parent alternating between k marked children (1 thread)");
    println!(
        "{:<10} {:>14} {:>16} {:>12} {:>12}",
        "children", "marked ns/call", "unmarked ns/call", "overhead ns", "÷ 1 child"
    );
    let base = marked[0] - plain[0];
    for (j, k) in ks.iter().enumerate() {
        let over = marked[j] - plain[j];
        println!(
            "{:<10} {:>14.2} {:>16.2} {:>12.2} {:>11.2}x",
            k,
            marked[j],
            plain[j],
            over,
            over / base
        );
    }
}

fn run_fn(f: fn(u64) -> u64, n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_add(f(black_box(i)));
    }
    s
}

fn run_scope(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        prof_scope!();
        s = s.wrapping_add(black_box(i) + 1);
    }
    s
}

#[derive(Clone, Copy)]
enum Variant {
    Unmarked,
    Floor,
    Profile,
    Scope,
    Nested,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Unmarked => "unmarked fn",
            Variant::Floor => "floor (2x rdtsc guard)",
            Variant::Profile => "#[profile]",
            Variant::Scope => "prof_scope! in loop",
            Variant::Nested => "#[profile] under marked parent",
        }
    }

    fn run(self, n: u64) -> u64 {
        match self {
            Variant::Unmarked => run_fn(unmarked, n),
            Variant::Floor => run_fn(floor, n),
            Variant::Profile => run_fn(marked, n),
            Variant::Scope => run_scope(n),
            Variant::Nested => parent_loop(n),
        }
    }
}

/// Nanoseconds per call of one batch on `threads` threads at once (the mean
/// of the threads' own figures).
fn batch(v: Variant, threads: usize) -> f64 {
    if threads == 1 {
        let t = Instant::now();
        black_box(v.run(BATCH));
        return t.elapsed().as_nanos() as f64 / BATCH as f64;
    }
    let barrier = std::sync::Barrier::new(threads);
    let per: Vec<f64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let t = Instant::now();
                    black_box(v.run(BATCH));
                    t.elapsed().as_nanos() as f64 / BATCH as f64
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or(f64::NAN))
            .collect()
    });
    per.iter().sum::<f64>() / per.len() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn tsc_ghz() -> f64 {
    let (t0, i0) = (rdtsc(), Instant::now());
    std::thread::sleep(std::time::Duration::from_millis(50));
    (rdtsc() - t0) as f64 / i0.elapsed().as_nanos() as f64
}

fn summary() {
    let ghz = tsc_ghz();
    let variants = [
        Variant::Unmarked,
        Variant::Floor,
        Variant::Profile,
        Variant::Scope,
        Variant::Nested,
    ];
    println!("\n== tickprof overhead summary (median of {ROUNDS} interleaved rounds of {BATCH} calls; TSC {ghz:.3} GHz)");
    let mut one_thread_profile = 0.0;
    let mut one_thread_nested = 0.0;
    for threads in [1usize, 2] {
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        for _ in 0..ROUNDS {
            for (i, v) in variants.iter().enumerate() {
                samples[i].push(batch(*v, threads));
            }
        }
        let med: Vec<f64> = samples.into_iter().map(median).collect();
        let base = med[0];
        let floor_over = med[1] - base;
        println!(
            "-- {threads} thread{}",
            if threads == 1 {
                ""
            } else {
                "s, both calling the same functions"
            }
        );
        println!(
            "{:<32} {:>9} {:>10} {:>13} {:>10}",
            "variant", "ns/call", "ticks/call", "overhead ns", "÷ floor"
        );
        for (i, v) in variants.iter().enumerate() {
            let over = med[i] - base;
            let ratio = if i == 0 {
                String::from("-")
            } else {
                format!("{:.2}x", over / floor_over)
            };
            println!(
                "{:<32} {:>9.2} {:>10.1} {:>13.2} {:>10}",
                v.name(),
                med[i],
                med[i] * ghz,
                over,
                ratio
            );
        }
        let profile_over = med[2] - base;
        let nested_over = med[4] - base;
        if threads == 1 {
            one_thread_profile = profile_over;
            one_thread_nested = nested_over;
        } else {
            println!(
                "2-thread overhead ÷ 1-thread overhead: #[profile] {:.2}x, under marked parent {:.2}x",
                profile_over / one_thread_profile,
                nested_over / one_thread_nested
            );
        }
    }
}

fn criterion_benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("overhead");
    g.bench_function("unmarked", |b| b.iter(|| unmarked(black_box(1))));
    g.bench_function("floor", |b| b.iter(|| floor(black_box(1))));
    g.bench_function("profile", |b| b.iter(|| marked(black_box(1))));
    g.bench_function("prof_scope", |b| b.iter(|| run_scope(black_box(1))));
    g.bench_function("report_build", |b| {
        b.iter(|| black_box(tickprof::report().sites.len()))
    });
    g.finish();
}

/// The counted call beside the floor, in a process of its own (the timing
/// mode is the process's): `TICKPROF_TIME=counted`, every site counted
/// after its learning calls. Interleaved rounds of the unmarked function,
/// the floor and the marked one, each the median of [`ROUNDS`]; 1 thread.
fn counted_summary() {
    let variants = [Variant::Unmarked, Variant::Floor, Variant::Profile];
    // The learning calls, before any round.
    black_box(Variant::Profile.run(BATCH));
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..ROUNDS {
        for (i, v) in variants.iter().enumerate() {
            samples[i].push(batch(*v, 1));
        }
    }
    let med: Vec<f64> = samples.into_iter().map(median).collect();
    let over = med[2] - med[0];
    println!("-- a counted call (TICKPROF_TIME=counted, in a child process; 1 thread)");
    println!(
        "unmarked {:.2} ns, floor {:.2} ns, counted #[profile] {:.2} ns: overhead {:.2} ns, {:.3}x the floor's",
        med[0],
        med[1],
        med[2],
        over,
        over / (med[1] - med[0])
    );
}

/// Runs [`counted_summary`] in a child process (this bench again).
fn counted_child() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let status = std::process::Command::new(exe)
        .env("TICKPROF_TIME", "counted")
        .env("TICKPROF_STDERR", "off")
        .env(COUNTED_CHILD, "1")
        .status();
    if !status.as_ref().is_ok_and(|s| s.success()) {
        println!("-- a counted call: the child process failed ({status:?})");
    }
}

/// Set in the child process that measures the counted call (not a
/// `TICKPROF_` name: the runtime warns about those it does not know).
const COUNTED_CHILD: &str = "TPBENCH_OVERHEAD_COUNTED_CHILD";

fn main() {
    if std::env::var_os(COUNTED_CHILD).is_some() {
        counted_summary();
        return;
    }
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    criterion_benches(&mut c);
    c.final_summary();
    summary();
    counted_child();
    alternating_summary();
}
