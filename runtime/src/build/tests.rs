//! Unit tests of the tree arithmetic on hand-built trees, and property
//! tests of the report's invariants on random trees.

use super::*;
use crate::counters::Acc;
use crate::record::registry::{StackEvents, ThreadTree};
use crate::tree::tests::{node, overflow, sample, SITES};
use crate::tree::{TNode, OVERFLOW_NESTED, OVERFLOW_OUTER};
use proptest::prelude::*;
use std::time::Instant;

fn facts(cal: Option<Calibration>, compensate: bool) -> Facts {
    Facts {
        clock: ClockSource::Tsc,
        hz: 1e9, // one tick is one nanosecond
        frequency_source: "test".to_owned(),
        invariant_tsc: Some(true),
        wall_ns: 1_000,
        max_delta_ns: u64::MAX,
        calibration: cal,
        compensate,
        tracing: false,
        trace_origin: 0,
        pid: 1,
        pauses: (0, 0),
    }
}

fn capture(threads: Vec<Tree>) -> Capture {
    let mut merged = Tree::new();
    for t in &threads {
        merged.merge(t);
    }
    Capture {
        merged,
        threads: threads
            .into_iter()
            .enumerate()
            .map(|(i, tree)| ThreadTree {
                name: format!("t{i}"),
                id: i as u64 + 1,
                finished: false,
                count: 1,
                tree,
            })
            .collect(),
        events: StackEvents::default(),
        complete: true,
        at: Instant::now(),
        traces: Vec::new(),
    }
}

fn report(t: Tree, cal: Option<Calibration>) -> Report {
    build(&capture(vec![t]), &facts(cal, true))
}

fn cal(inner: f64, call: f64) -> Option<Calibration> {
    Some(Calibration {
        inner_ticks: inner,
        call_ticks: call,
        counted_call_ticks: call / 4.0,
        typical_call_ticks: call,
        calls: 0,
    })
}

fn edge<'a>(edges: &'a [Edge], name: &str) -> &'a Edge {
    edges.iter().find(|e| e.name == name).expect(name)
}

#[test]
fn totals_selves_and_edges_of_a_known_tree() {
    // root → a(100) → { b(2 calls, 30), c(20) → b(5) }
    let r = report(sample(), None);
    let (a, b, c) = (
        r.site("a").unwrap(),
        r.site("b").unwrap(),
        r.site("c").unwrap(),
    );
    assert_eq!((a.total_ns, a.self_ns, a.calls), (100, 50, 1));
    assert_eq!((b.total_ns, b.self_ns, b.calls), (35, 35, 3));
    assert_eq!((c.total_ns, c.self_ns), (20, 15));
    assert_eq!(a.p_self, 0.5);
    assert_eq!(edge(&b.callers, "a").calls, 2);
    assert_eq!(edge(&b.callers, "a").total_ns, 30);
    assert_eq!(edge(&b.callers, "c").total_ns, 5);
    assert_eq!(edge(&a.callers, "<root>").total_ns, 100);
    // Callees mirror callers.
    assert_eq!(edge(&a.callees, "b").total_ns, 30);
    assert_eq!(edge(&a.callees, "c").calls, 1);
    assert_eq!(edge(&c.callees, "b").total_ns, 5);
    // The tree: root, a, b, c, b under c.
    let paths: Vec<String> = (0..r.tree.len()).map(|i| r.path(i).join(";")).collect();
    assert_eq!(paths, ["", "a", "a;b", "a;c", "a;c;b"]);
    assert_eq!(r.tree[3].self_ns, 15);
    assert_eq!((r.run.carried, r.run.clamped), (0, 0));
    // Sorted by total.
    assert_eq!(r.sites[0].name, "a");
}

#[test]
fn recursion_counts_the_outermost_activation_once() {
    // root → f(100) → f(60) → f(20)
    let t = Tree::from_nodes(vec![
        TNode::ROOT,
        node(0, 0, 1, 100),
        node(0, 1, 1, 60),
        node(0, 2, 1, 20),
    ]);
    let r = report(t, None);
    let f = r.site("a").unwrap();
    assert_eq!((f.calls, f.total_ns, f.self_ns), (3, 100, 100));
    assert_eq!(f.mean_ns, 60.0);
    assert_eq!((f.min_ns, f.max_ns), (20, 100));
    // The recursive edge has its calls, and no time beyond the total.
    let rec = edge(&f.callers, "a");
    assert_eq!((rec.calls, rec.total_ns), (2, 0));
}

/// `t` with `bytes[i]` bytes allocated (one allocation) on node `i`.
fn with_bytes(mut t: Tree, bytes: &[u64]) -> Tree {
    for (n, &b) in t.nodes.iter_mut().zip(bytes) {
        n.acc.alloc_bytes = b;
        n.acc.allocs = u64::from(b > 0);
    }
    t
}

#[test]
fn allocations_total_includes_marked_callees_and_self_excludes_them() {
    // root(7) → a(100) → b(10); a → c(20) → b(5)
    let r = report(with_bytes(sample(), &[7, 100, 10, 20, 5]), None);
    let bytes = |n: &str| {
        let s = r.site(n).unwrap();
        (s.alloc.bytes, s.self_alloc.bytes)
    };
    assert_eq!(bytes("a"), (135, 100));
    assert_eq!(bytes("b"), (15, 15));
    assert_eq!(bytes("c"), (25, 20));
    assert_eq!(r.run.outside.bytes, 7);
    assert_eq!(r.run.outside.allocs, 1);
    assert_eq!(r.tree[0].alloc.bytes, 142);
    assert_eq!(r.tree[0].self_alloc.bytes, 7);
    // Every byte is in exactly one row.
    let rows: u64 = r.sites.iter().map(|s| s.self_alloc.bytes).sum();
    assert_eq!(rows + r.run.outside.bytes, 142);
    // Recursion: the outermost activation's total holds the nested ones.
    let t = Tree::from_nodes(vec![
        TNode::ROOT,
        node(0, 0, 1, 100),
        node(0, 1, 1, 60),
        node(0, 2, 1, 20),
    ]);
    let r = report(with_bytes(t, &[0, 1, 2, 4]), None);
    let f = r.site("a").unwrap();
    assert_eq!((f.alloc.bytes, f.self_alloc.bytes), (7, 7));
    assert_eq!((f.alloc.allocs, f.self_alloc.allocs), (3, 3));
}

#[test]
fn a_parent_shorter_than_its_children_is_carried_not_contradicted() {
    // root → a(10) → b(30): a's call rejected its time? here simply short.
    let t = Tree::from_nodes(vec![TNode::ROOT, node(0, 0, 1, 10), node(1, 1, 1, 30)]);
    let r = report(t, None);
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert_eq!((a.total_ns, a.self_ns, b.total_ns), (30, 0, 30));
    assert_eq!(r.run.carried, 1);
    assert!(a.min_ns as f64 <= a.mean_ns && a.mean_ns <= a.max_ns as f64);
}

#[test]
fn min_never_claims_a_call_shorter_than_the_sum_allows() {
    // root → a(4 calls, 400 ticks, shortest 1, longest 200) → b(400 calls,
    // 380). With a call cost of 1 tick a's own time compensates to 0 and is
    // carried to b's 380: a mean of 95. The shortest call less the cost
    // beneath (100 per call on average) would say 0 ns; the sum says each
    // call is at least 380 - 3 × 100 (the others at their longest).
    let mut a = node(0, 0, 4, 400);
    (a.acc.min, a.acc.max) = (1, 200);
    let t = Tree::from_nodes(vec![TNode::ROOT, a, node(1, 1, 400, 380)]);
    let r = report(t, cal(0.0, 1.0));
    let a = r.site("a").unwrap();
    assert_eq!((a.total_ns, r.run.carried), (380, 1));
    assert_eq!((a.mean_ns, a.max_ns), (95.0, 100));
    assert_eq!(a.min_ns, 80);
}

/// Resolved: the shortest call at least twice the inner cost, or the mean
/// at least eight times it. A tiny function slowed down by a busy machine
/// (mean 40 with an inner cost of 12) keeps its short shortest call and
/// stays unresolved.
#[test]
fn resolution_looks_at_the_shortest_call_then_the_mean() {
    let resolved = |calls: u64, ticks: u64, min: u64| {
        let mut n = node(0, 0, calls, ticks);
        (n.acc.min, n.acc.max) = (min, ticks);
        let t = Tree::from_nodes(vec![TNode::ROOT, n]);
        report(t, cal(12.0, 30.0)).site("a").unwrap().resolved
    };
    assert!(!resolved(10, 400, 15), "mean 40, shortest 15");
    assert!(resolved(10, 400, 24), "shortest at twice the inner cost");
    assert!(!resolved(10, 950, 5), "mean 95, under 8 x 12");
    assert!(resolved(10, 960, 5), "mean 96: a rare short call");
}

#[test]
fn compensation_subtracts_inner_and_call_costs() {
    // root → a(100) → b(2 calls, 30, min 15); inner 2, call 10.
    let t = Tree::from_nodes(vec![TNode::ROOT, node(0, 0, 1, 100), node(1, 1, 2, 30)]);
    let r = report(t, cal(2.0, 10.0));
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert!(r.run.compensated);
    assert_eq!(b.total_ns, 26);
    assert_eq!((a.total_ns, a.self_ns), (78, 52));
    assert_eq!((a.raw_total_ns, a.raw_self_ns), (100, 70));
    assert_eq!(a.compensated_total_ns, 78);
    // Raw when compensation is not wanted.
    let t = Tree::from_nodes(vec![TNode::ROOT, node(0, 0, 1, 100), node(1, 1, 2, 30)]);
    let raw = build(&capture(vec![t]), &facts(cal(2.0, 10.0), false));
    assert!(!raw.run.compensated);
    assert_eq!(raw.site("a").unwrap().total_ns, 100);
    assert_eq!(raw.site("a").unwrap().compensated_total_ns, 78);
}

#[test]
fn over_compensated_parents_are_clamped_and_carried_and_say_so() {
    // The old arithmetic reported a = 0 with its only child b = 35.
    let t = Tree::from_nodes(vec![TNode::ROOT, node(0, 0, 1, 50), node(1, 1, 10, 45)]);
    let r = report(t, cal(1.0, 5.0));
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert_eq!(b.total_ns, 35);
    assert_eq!((a.total_ns, a.self_ns), (35, 0));
    assert_eq!((r.run.clamped, r.run.carried), (1, 1));
    assert!(crate::export::columns::notes(&r).len() >= 2);
}

#[test]
fn threads_are_broken_down_and_merged() {
    let r = build(&capture(vec![sample(), sample()]), &facts(None, true));
    assert_eq!(r.threads.len(), 2);
    assert_eq!(r.run.threads, 2);
    assert_eq!(r.site("a").unwrap().total_ns, 200);
    let t0 = &r.threads[0];
    assert_eq!(
        t0.sites.iter().find(|s| s.name == "a").unwrap().total_ns,
        100
    );
}

#[test]
fn overflow_nodes_count_in_their_site_but_not_in_the_tree() {
    let mut t = sample();
    t.nodes.push(overflow(OVERFLOW_OUTER, 3, 4, 8));
    t.nodes.push(overflow(OVERFLOW_NESTED, 0, 2, 8));
    let r = report(t, None);
    assert_eq!(r.run.folded_calls, 6);
    let d = r.site("d").unwrap();
    assert_eq!((d.calls, d.total_ns, d.self_ns), (4, 8, 0));
    // a's nested overflow calls count, their time does not (it is inside a).
    let a = r.site("a").unwrap();
    assert_eq!((a.calls, a.total_ns), (3, 100));
    assert_eq!(r.tree.len(), 5);
}

#[test]
fn snapshot_differences_stay_consistent() {
    let mut later = sample();
    later.merge(&Tree::from_nodes(vec![
        TNode::ROOT,
        node(0, 0, 1, 10),
        node(1, 1, 1, 50),
    ]));
    let c = capture(vec![later]).minus(&capture(vec![sample()]));
    let r = build(&c, &facts(None, true));
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert_eq!((a.calls, b.calls), (1, 1));
    // a gained 10 ticks but its child b gained 50: carried, never less.
    assert_eq!((a.total_ns, a.self_ns), (50, 0));
    assert_invariants(&r);
}

#[test]
fn two_sites_with_one_name_are_told_apart_by_their_location() {
    fn m() {}
    static X: CallSite = CallSite::function(crate::site::path_of(m), Some("same"), "x.rs", 3);
    static Y: CallSite = CallSite::function(crate::site::path_of(m), Some("same"), "y.rs", 9);
    let t = Tree::from_nodes(vec![
        TNode::ROOT,
        TNode {
            site: Some(&X),
            ..node(0, 0, 1, 10)
        },
        TNode {
            site: Some(&Y),
            ..node(0, 0, 2, 20)
        },
    ]);
    let r = report(t, None);
    let mut names: Vec<&str> = r.sites.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["same (x.rs:3)", "same (y.rs:9)"]);
    assert_eq!(r.site("same (y.rs:9)").unwrap().calls, 2);
}

/// `n` with the counters `acc`.
fn with(mut n: TNode, acc: Acc) -> TNode {
    n.acc = acc;
    n
}

/// The timed parent of the counted-call tests: site 0 under the root, 2
/// calls of 4,000 and 6,000 ticks.
fn timed_parent() -> TNode {
    with(
        node(0, 0, 0, 0),
        Acc {
            calls: 2,
            ticks: 10_000,
            min: 4_000,
            max: 6_000,
            ..Acc::EMPTY
        },
    )
}

/// A counted leaf: its calls' time stays in its parent's self; its row
/// is the sample's estimate (capped by the parent's self), self 0; the
/// parent's compensation subtracts a counted call's cost per counted call.
#[test]
fn a_counted_leaf_leaves_its_time_in_its_parent() {
    let t = Tree::from_nodes(vec![
        TNode::ROOT,
        timed_parent(),
        // 640 calls, 10 timed (the sample): 6 ticks each.
        with(
            node(1, 1, 0, 0),
            Acc {
                calls: 640,
                untimed: 630,
                ticks: 60,
                min: 5,
                max: 7,
                ..Acc::EMPTY
            },
        ),
    ]);
    let r = report(t.clone(), None);
    let (p, l) = (
        r.site(SITES[0].name().as_str()).unwrap(),
        r.site(SITES[1].name().as_str()).unwrap(),
    );
    assert_eq!(
        (l.calls, l.timed_calls, l.timing),
        (640, 10, Timing::Counted)
    );
    assert_eq!(l.self_ns, 0);
    assert_eq!(l.total_ns, 640 * 6, "mean of the sample × calls");
    assert!(!l.resolved);
    assert_eq!(
        (p.total_ns, p.self_ns),
        (10_000, 10_000),
        "the leaf's time is the parent's self"
    );
    assert_eq!(r.run.counted_sites, 1);
    assert_eq!(r.run.counted_calls, 630);
    assert_invariants(&r);
    // Compensated: 2 inner costs of the parent, 10 timed calls at 30
    // ticks and 630 counted calls at the part of 4 ticks that the
    // parent's 15.08 ticks per counted call do not hide: 4 × (1 − 11.08 /
    // 32).
    let r = report(
        t.clone(),
        cal(100.0, 30.0).map(|mut c| {
            c.counted_call_ticks = 4.0;
            c
        }),
    );
    let p = r.site(SITES[0].name().as_str()).unwrap();
    let rest: f64 = 10_000.0 - 2.0 * 100.0 - 10.0 * 30.0;
    let per_call = rest / 630.0;
    let cost = 4.0 * (1.0 - (per_call - 4.0) / 32.0);
    let want = rest - 630.0 * cost;
    assert!(
        (p.total_ns as f64 - want).abs() < 1.0,
        "{} vs {want}",
        p.total_ns
    );
    assert_invariants(&r);
    // A parent with a lot to do per counted call hides their cost
    // entirely; one with nothing pays all of it.
    for (counted, want) in [(1.0, rest), (100.0, 0.0)] {
        let r = report(
            t.clone(),
            cal(100.0, 30.0).map(|mut c| {
                c.counted_call_ticks = counted;
                c
            }),
        );
        let p = r.site(SITES[0].name().as_str()).unwrap();
        assert_eq!(p.total_ns, want as u64, "counted call {counted} ticks");
        assert_invariants(&r);
    }
}

/// A counted subtree: a counted parent whose children count too. Both
/// nodes' own figures are 0 (their time is the timed grandparent's self);
/// the child's estimate is capped by the parent's capped estimate.
#[test]
fn a_counted_subtree_stays_in_its_timed_caller_and_nests_its_estimates() {
    let counted = |calls: u64, sample: u64, each: u64| Acc {
        calls,
        untimed: calls - sample,
        ticks: sample * each,
        min: each,
        max: each,
        ..Acc::EMPTY
    };
    for (child_each, child_total) in [(5u64, 1280 * 5), (8, 6400)] {
        let t = Tree::from_nodes(vec![
            TNode::ROOT,
            timed_parent(),
            // 640 calls, 10 sampled at 10 ticks: estimate 6,400.
            with(node(1, 1, 0, 0), counted(640, 10, 10)),
            // 1,280 calls beneath it, 20 sampled.
            with(node(2, 2, 0, 0), counted(1280, 20, child_each)),
        ]);
        let r = report(t, None);
        let site = |i: usize| r.site(SITES[i].name().as_str()).unwrap();
        let (p, a, b) = (site(0), site(1), site(2));
        assert_eq!((p.total_ns, p.self_ns), (10_000, 10_000));
        assert_eq!((a.timing, b.timing), (Timing::Counted, Timing::Counted));
        assert_eq!((a.total_ns, a.self_ns), (6_400, 0));
        assert_eq!(
            (b.total_ns, b.self_ns),
            (child_total, 0),
            "capped by its counted parent's estimate"
        );
        assert_eq!(r.run.counted_calls, 630 + 1260);
        assert_invariants(&r);
    }
}

proptest::proptest! {
    /// A counted call's exposed cost is between 0 and its full cost, the
    /// full cost when the caller does nothing else, 0 past the ramp, and
    /// never grows with the caller's time per call.
    #[test]
    fn a_counted_calls_exposed_cost_is_bounded_and_monotone(
        full in 0.0f64..1e4,
        a in 0.0f64..1e6,
        b in 0.0f64..1e6,
    ) {
        use crate::build::figures::{exposed, EXPOSURE_RAMP};
        let (lo, hi) = (a.min(b), a.max(b));
        let (e_lo, e_hi) = (exposed(lo, full), exposed(hi, full));
        proptest::prop_assert!((0.0..=full).contains(&e_lo));
        proptest::prop_assert!(e_hi <= e_lo);
        proptest::prop_assert_eq!(exposed(full.min(lo), full), full);
        proptest::prop_assert_eq!(exposed(full * (1.0 + EXPOSURE_RAMP) + hi, full), 0.0);
    }
}

/// Every invariant the report promises.
fn assert_invariants(r: &Report) {
    // Allocations: self <= total; every counted byte is in exactly one row.
    for s in &r.sites {
        assert!(s.self_alloc.bytes <= s.alloc.bytes, "{}: alloc", s.name);
        assert!(s.self_alloc.allocs <= s.alloc.allocs, "{}: allocs", s.name);
    }
    if let Some(root) = r.tree.first() {
        let rows: u64 = r.sites.iter().map(|s| s.self_alloc.bytes).sum();
        assert_eq!(rows + r.run.outside.bytes, root.alloc.bytes);
    }
    for n in &r.tree {
        assert!(
            n.self_alloc.bytes <= n.alloc.bytes,
            "{}: node alloc",
            n.name
        );
    }
    for s in &r.sites {
        assert!(
            s.self_ns <= s.total_ns,
            "{}: self {} > total {}",
            s.name,
            s.self_ns,
            s.total_ns
        );
        assert!(s.raw_self_ns <= s.raw_total_ns, "{}: raw", s.name);
        assert!(
            s.compensated_self_ns <= s.compensated_total_ns,
            "{}: comp",
            s.name
        );
        assert!(
            s.min_ns as f64 <= s.mean_ns && s.mean_ns <= s.max_ns as f64,
            "{}: min {} mean {} max {}",
            s.name,
            s.min_ns,
            s.mean_ns,
            s.max_ns
        );
        assert!(
            (0.0..=1.0).contains(&s.p_self),
            "{}: p_self {}",
            s.name,
            s.p_self
        );
        for e in &s.callers {
            assert!(
                e.total_ns <= s.total_ns,
                "{}: edge from {} {} > total {}",
                s.name,
                e.name,
                e.total_ns,
                s.total_ns
            );
        }
        // (A callee with no completed call, still running, is not listed.)
        for e in &s.callees {
            if let Some(callee) = r.site(&e.name) {
                assert!(e.total_ns <= callee.total_ns, "{} -> {}", s.name, e.name);
            }
        }
    }
    for (i, n) in r.tree.iter().enumerate() {
        assert!(n.self_ns <= n.total_ns || i == 0);
        assert!(n.raw_self_ns <= n.raw_total_ns || i == 0);
        let kids: u64 = r
            .tree
            .iter()
            .filter(|c| c.parent == Some(i))
            .map(|c| c.total_ns)
            .sum();
        let raw_kids: u64 = r
            .tree
            .iter()
            .filter(|c| c.parent == Some(i))
            .map(|c| c.raw_total_ns)
            .sum();
        if i > 0 {
            assert!(
                kids <= n.total_ns,
                "node {i}: children {kids} > {}",
                n.total_ns
            );
            assert!(raw_kids <= n.raw_total_ns, "node {i}: raw children");
            assert_eq!(
                n.self_ns,
                n.total_ns - kids,
                "node {i}: self is total less children"
            );
        }
    }
    let roots: u64 = r
        .tree
        .iter()
        .filter(|n| n.parent == Some(0))
        .map(|n| n.total_ns)
        .sum();
    let selves: u64 = r.sites.iter().map(|s| s.self_ns).sum();
    assert!(selves <= roots, "Σ self {selves} > Σ roots {roots}");
    for t in &r.threads {
        for s in &t.sites {
            assert!(s.self_ns <= s.total_ns, "thread {}: {}", t.name, s.name);
        }
    }
}

/// A random tree: parents before children, sites from a small set (so
/// recursion is common), counters that need not agree with each other.
fn arb_tree() -> impl Strategy<Value = Tree> {
    let arb_node = (
        any::<u32>(),
        0..SITES.len(),
        0u64..6,
        0u64..3,
        0u64..2000,
        0u32..12,
        any::<bool>(),
        0u64..4,
    );
    prop::collection::vec(arb_node, 1..40).prop_map(|raw| {
        let mut nodes = vec![TNode::ROOT];
        // Regular nodes, the possible parents (as in arenas, an overflow
        // node has no regular children).
        let mut regular: Vec<u32> = vec![0];
        for (k, (p, s, calls, rejected, ticks, flag, unwound, untimed)) in
            raw.into_iter().enumerate()
        {
            let i = k + 1;
            // Counted calls (a leaf with some becomes a counted node).
            let untimed = untimed.min(calls);
            let rejected = rejected.min(calls - untimed);
            let accepted = calls - untimed - rejected;
            let ticks = if accepted == 0 { 0 } else { ticks };
            let mean = ticks.checked_div(accepted).unwrap_or(0);
            let acc = Acc {
                calls,
                ticks,
                min: if accepted == 0 { u64::MAX } else { mean / 2 },
                max: if accepted == 0 { 0 } else { ticks },
                reversed: rejected / 2,
                oversized: rejected - rejected / 2,
                unwound: u64::from(unwound).min(calls),
                untimed,
                allocs: calls,
                alloc_bytes: u64::from(p % 97),
                ..Acc::EMPTY
            };
            let (parent, flags) = match flag {
                0 => (0, OVERFLOW_OUTER),
                1 => (0, OVERFLOW_NESTED),
                _ => {
                    regular.push(i as u32);
                    (regular[p as usize % (regular.len() - 1)], 0)
                }
            };
            nodes.push(TNode {
                site: Some(&SITES[s]),
                parent,
                flags,
                acc,
            });
        }
        let mut t = Tree::new();
        // Through `merge`, so that paths are unique as in real trees.
        t.merge(&Tree::from_nodes(nodes));
        t
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_report_satisfies_its_invariants(
        trees in prop::collection::vec(arb_tree(), 1..3),
        inner in 0.0f64..40.0,
        call in 0.0f64..80.0,
        calibrated in any::<bool>(),
        compensate in any::<bool>(),
        ns_per_tick in prop::sample::select(vec![1.0, 0.37, 2.5]),
    ) {
        let cal = calibrated.then_some(Calibration { inner_ticks: inner, call_ticks: call.max(inner), counted_call_ticks: call / 5.0, typical_call_ticks: call.max(inner), calls: 0 });
        let mut f = facts(cal, compensate);
        f.hz = 1e9 / ns_per_tick;
        let r = build(&capture(trees.clone()), &f);
        assert_invariants(&r);
        // Differences of snapshots too.
        if trees.len() == 2 {
            let d = build(&capture(trees.clone()).minus(&capture(vec![trees[0].clone()])), &f);
            assert_invariants(&d);
        }
    }
}
