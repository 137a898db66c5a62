//! Self vs children time, callers and callees, recursion, panics,
//! out-of-order guards and threads.
#![cfg(feature = "enabled")]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tickprof::{prof_guard, profile, Report, SiteStats};

use crate::support::spin as spin_support;
use spin_support::spin;

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x / 1e3)
}

fn site<'a>(r: &'a Report, suffix: &str) -> &'a SiteStats {
    r.find(suffix).unwrap_or_else(|| panic!("no site {suffix}"))
}

fn edge(edges: &[tickprof::Edge], suffix: &str) -> u64 {
    edges
        .iter()
        .filter(|e| e.name.ends_with(suffix))
        .map(|e| e.calls)
        .sum()
}

fn within(got: u64, want: f64, tol: f64, what: &str) {
    let err = (got as f64 - want).abs() / want;
    assert!(
        err <= tol,
        "{what}: got {got} ns, want {want:.0} ns ({:.2}% off)",
        err * 100.0
    );
}

/// Instant-measured truth: nanoseconds inside each function's body.
static TRUE_A: AtomicU64 = AtomicU64::new(0);
static TRUE_B: AtomicU64 = AtomicU64::new(0);
static TRUE_C_FROM_A: AtomicU64 = AtomicU64::new(0);
static TRUE_C_FROM_B: AtomicU64 = AtomicU64::new(0);

fn timed<T>(acc: &AtomicU64, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    acc.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    v
}

#[profile]
fn tree_a() {
    timed(&TRUE_A, || {
        spin(ms(4.0));
        for _ in 0..3 {
            tree_b();
        }
        tree_c(&TRUE_C_FROM_A);
    });
}

#[profile]
fn tree_b() {
    timed(&TRUE_B, || {
        spin(ms(2.0));
        tree_c(&TRUE_C_FROM_B);
    });
}

#[profile]
fn tree_c(truth: &AtomicU64) {
    timed(truth, || spin(ms(1.0)));
}

#[test]
fn known_tree_totals_selfs_and_edges() {
    let _turn = crate::support::alone();
    const RUNS: u64 = 3;
    for _ in 0..RUNS {
        tree_a();
    }
    let r = tickprof::report();
    let (a, b, c) = (
        site(&r, "::tree_a"),
        site(&r, "::tree_b"),
        site(&r, "::tree_c"),
    );
    assert_eq!((a.calls, b.calls, c.calls), (RUNS, 3 * RUNS, 4 * RUNS));
    // Invariants only, whatever the machine's load (the accuracy of these
    // figures against the unmarked code is `cargo bench --bench accuracy`'s
    // to measure; 5% here failed on a busy host). Each call spins at
    // least its time, so each raw figure is at least the spins it holds;
    // each body runs inside its guard, so each raw total is at least the
    // `Instant` time of the bodies. `CAL` allows for the tick frequency's
    // calibration (CI holds it within 1% under load).
    const CAL: f64 = 0.98;
    let load = |x: &AtomicU64| x.load(Ordering::Relaxed) as f64;
    let (ta, tb) = (load(&TRUE_A), load(&TRUE_B));
    let (tca, tcb) = (load(&TRUE_C_FROM_A), load(&TRUE_C_FROM_B));
    let spun = |ms: f64| ms * 1e6 * RUNS as f64;
    let at_least = |got: u64, want: f64, what: &str| {
        assert!(got as f64 >= CAL * want, "{what}: {got} ns < {want:.0} ns");
    };
    at_least(c.raw_total_ns, (tca + tcb).max(spun(4.0)), "c raw total");
    at_least(c.raw_self_ns, spun(4.0), "c raw self");
    at_least(b.raw_total_ns, tb.max(spun(9.0)), "b raw total");
    at_least(b.raw_self_ns, spun(6.0), "b raw self");
    at_least(a.raw_total_ns, ta.max(spun(14.0)), "a raw total");
    at_least(a.raw_self_ns, spun(4.0), "a raw self");
    // A caller's total holds its callees' totals: a's holds all of b's.
    assert!(a.raw_total_ns >= b.raw_total_ns, "{a:?} {b:?}");
    assert!(a.total_ns >= b.total_ns, "{a:?} {b:?}");
    // Compensation only takes time out (the instrumentation).
    for s in [a, b, c] {
        assert!(s.total_ns <= s.raw_total_ns, "{s:?}");
    }
    // Compensated per-call figures stay ordered: min <= mean <= max.
    for s in [a, b, c] {
        assert!(
            s.min_ns as f64 <= s.mean_ns + 1.0 && s.mean_ns <= s.max_ns as f64 + 1.0,
            "{s:?}"
        );
    }
    // Sum of self over the tree equals the root's total.
    let selfs = a.self_ns + b.self_ns + c.self_ns;
    within(selfs, a.total_ns as f64, 0.01, "sum of self vs root total");
    // Edges, exact.
    assert_eq!(edge(&a.callees, "::tree_b"), 3 * RUNS);
    assert_eq!(edge(&a.callees, "::tree_c"), RUNS);
    assert_eq!(edge(&b.callers, "::tree_a"), 3 * RUNS);
    assert_eq!(edge(&b.callees, "::tree_c"), 3 * RUNS);
    assert_eq!(edge(&c.callers, "::tree_a"), RUNS);
    assert_eq!(edge(&c.callers, "::tree_b"), 3 * RUNS);
    assert_eq!(c.callers.len(), 2);
    // The tree holds the path a → b → c with 3 × RUNS calls.
    let abc = (0..r.tree.len())
        .find(|&i| {
            let p = r.path(i);
            p.len() == 3 && p[0].ends_with("::tree_a") && p[2].ends_with("::tree_c")
        })
        .expect("path a;b;c");
    assert_eq!(r.tree[abc].calls, 3 * RUNS);
}

#[profile]
fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[test]
fn recursion_counts_every_activation_and_time_once() {
    let _turn = crate::support::alone();
    let t = Instant::now();
    assert_eq!(fib(25), 75_025);
    let wall = t.elapsed().as_nanos() as u64;
    let r = tickprof::report();
    let f = site(&r, "::fib");
    // fib(n) makes 2·fib(n+1) − 1 activations: 2·121393 − 1.
    assert_eq!(f.calls, 242_785);
    assert!(
        f.total_ns <= wall,
        "total {} > outer wall {}",
        f.total_ns,
        wall
    );
    // Raw time, counted once per outermost activation, is within the wall
    // time (summed over all activations it would be many times the wall).
    assert!(
        f.raw_total_ns <= wall,
        "raw {} > wall {}",
        f.raw_total_ns,
        wall
    );
    // Counted once: the outermost activation's time, the longest call.
    assert!(
        f.raw_total_ns >= f.max_ns,
        "raw total {} vs the longest call {}",
        f.raw_total_ns,
        f.max_ns
    );
    assert!(f.total_ns <= f.raw_total_ns);
    // Self time still sums to the total: fib has no other marked callee.
    // Exact for raw times; compensated nodes of ~1 ns clamp at zero, so
    // there the sum is only bounded.
    within(
        f.raw_self_ns,
        f.raw_total_ns as f64,
        0.01,
        "fib raw self vs total",
    );
    assert!(f.self_ns <= f.raw_self_ns);
    assert_eq!(edge(&f.callers, "::fib"), 242_784);
}

#[profile]
fn p_parent() -> bool {
    let caught = std::panic::catch_unwind(p_child).is_err();
    p_child_ok();
    p_after();
    caught
}

#[profile]
fn p_child() {
    p_grandchild(true);
}

#[profile]
fn p_child_ok() {
    p_grandchild(false);
}

#[profile]
fn p_grandchild(explode: bool) {
    spin(Duration::from_micros(100));
    if explode {
        panic!("grandchild");
    }
}

#[profile]
fn p_after() {}

#[test]
fn a_panic_in_a_grandchild_is_traced_and_the_stack_stays_right() {
    let _turn = crate::support::alone();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = p_parent();
    std::panic::set_hook(prev);
    assert!(caught);
    let r = tickprof::report();
    let (parent, child, grand) = (
        site(&r, "::p_parent"),
        site(&r, "::p_child"),
        site(&r, "::p_grandchild"),
    );
    assert_eq!((parent.unwound, child.unwound, grand.unwound), (0, 1, 1));
    assert_eq!(grand.calls, 2);
    assert!(
        grand.min_ns >= 90_000,
        "unwound call still timed: {}",
        grand.min_ns
    );
    // After the unwinding, calls are attributed to the right parent.
    assert_eq!(edge(&site(&r, "::p_after").callers, "::p_parent"), 1);
    assert_eq!(edge(&site(&r, "::p_child_ok").callers, "::p_parent"), 1);
    assert_eq!(edge(&grand.callers, "::p_child_ok"), 1);
    assert_eq!(edge(&grand.callers, "::p_child"), 1);
}

/// Runs marked code from a destructor while its thread unwinds.
struct CleansUp;

impl Drop for CleansUp {
    fn drop(&mut self) {
        assert!(std::thread::panicking());
        assert_eq!(d_returns(), 7);
        assert_eq!(d_early(true), None);
        tickprof::prof_scope!("in_drop");
    }
}

#[profile]
fn d_returns() -> u32 {
    7
}

#[profile]
fn d_early(stop: bool) -> Option<u32> {
    if stop {
        return None;
    }
    Some(1)
}

#[profile]
fn d_panics() {
    let _c = CleansUp;
    panic!("d_panics");
}

#[test]
fn a_call_that_returns_during_unwinding_is_not_counted_as_unwound() {
    let _turn = crate::support::alone();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    assert!(std::panic::catch_unwind(d_panics).is_err());
    std::panic::set_hook(prev);
    let r = tickprof::report();
    let u = |s: &str| (site(&r, s).calls, site(&r, s).unwound);
    // The marked functions that returned, by their value or by an early
    // `return` (their bodies are timed in a closure, which returns
    // normally): ended normally. The scope ends in the guard's drop, which
    // sees the thread unwinding (as documented).
    assert_eq!(u("::d_returns"), (1, 0));
    assert_eq!(u("::d_early"), (1, 0));
    assert_eq!(u("::in_drop"), (1, 1));
    assert_eq!(u("::d_panics"), (1, 1));
}

#[profile]
fn ooo_marker() {}

#[profile]
fn forget_host() {
    let g = prof_guard!("ooo forgotten");
    std::mem::forget(g);
    ooo_marker();
}

#[profile]
fn ooo_after() {}

struct Holder {
    _g: tickprof::Guard,
}

fn make_holder() -> Holder {
    Holder {
        _g: prof_guard!("ooo held"),
    }
}

#[test]
fn out_of_order_drops_and_forget_resynchronise_without_inventing() {
    let _turn = crate::support::alone();
    // Dropped early, in the wrong order.
    let g1 = prof_guard!("ooo first");
    let g2 = prof_guard!("ooo second");
    drop(g1);
    drop(g2);
    // Leaked inside a marked function.
    forget_host();
    // Moved into a struct and returned; a call while it is held is its child.
    let h = make_holder();
    ooo_marker();
    drop(h);
    ooo_after();

    let r = tickprof::report();
    assert_eq!(
        r.site(concat!(
            module_path!(),
            "::out_of_order_drops_and_forget_resynchronise_without_inventing::ooo first"
        ))
        .map(|s| s.calls),
        Some(1)
    );
    assert_eq!(site(&r, "::ooo second").calls, 1);
    assert_eq!(site(&r, "::forget_host").calls, 1);
    assert!(
        r.find("::ooo forgotten").is_none(),
        "a leaked guard never completed a call"
    );
    let marker = site(&r, "::ooo_marker");
    assert_eq!(marker.calls, 2);
    assert_eq!(edge(&marker.callers, "::ooo forgotten"), 1);
    assert_eq!(edge(&marker.callers, "::make_holder::ooo held"), 1);
    assert_eq!(site(&r, "::ooo held").calls, 1);
    // The stack is back at the thread's root: not under any of the above.
    let after = site(&r, "::ooo_after");
    assert_eq!(after.callers.len(), 1);
    assert_eq!(after.callers[0].name, "<root>");
    assert!(r.run.out_of_order >= 2, "{}", r.run.out_of_order);
}

#[profile]
fn per_thread_work(x: u64) -> u64 {
    std::hint::black_box(x) * 2
}

#[test]
fn eight_threads_that_exit_before_the_report_lose_nothing() {
    let _turn = crate::support::alone();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            std::thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn(move || (0..1000).map(per_thread_work).sum::<u64>())
                .unwrap()
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 999_000);
    }
    let r = tickprof::report();
    assert_eq!(site(&r, "::per_thread_work").calls, 8000);
    let workers: Vec<_> = r
        .threads
        .iter()
        .filter(|t| t.name.starts_with("worker-"))
        .collect();
    assert_eq!(workers.len(), 8);
    for t in workers {
        assert!(t.finished);
        let s = t
            .sites
            .iter()
            .find(|s| s.name.ends_with("::per_thread_work"))
            .unwrap();
        assert_eq!(s.calls, 1000);
    }
}

#[profile]
fn from_tls_destructor() -> u64 {
    std::hint::black_box(7)
}

struct CallsOnDrop;

impl Drop for CallsOnDrop {
    fn drop(&mut self) {
        from_tls_destructor();
    }
}

thread_local! {
    static EARLY: CallsOnDrop = const { CallsOnDrop };
}

#[test]
fn a_marked_call_from_a_thread_local_destructor_is_still_recorded() {
    let _turn = crate::support::alone();
    let lost_before = tickprof::report().run.lost;
    std::thread::spawn(|| {
        // Touch the user's thread-local first, so its destructor runs after
        // tickprof's own per-thread state is gone.
        EARLY.with(|_| {});
        from_tls_destructor();
    })
    .join()
    .expect("no panic in the thread");
    let r = tickprof::report();
    let s = site(&r, "::from_tls_destructor");
    // The call from the destructor comes after the thread's profiler state
    // is gone: it is still recorded (with no marked caller), not lost.
    assert_eq!(s.calls, 2);
    assert_eq!(r.run.lost, lost_before);
}
