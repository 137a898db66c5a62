//! Unit tests of the tree arithmetic on hand-built trees, and property
//! tests of the report's invariants on random trees.

use super::*;
use crate::counters::Acc;
use crate::record::calibrate::Calibration;
use crate::record::registry::{StackEvents, ThreadTree};
use crate::tree::tests::{node, overflow, sample, SITES};
use crate::tree::{TNode, OVERFLOW_NESTED, OVERFLOW_OUTER};
use proptest::prelude::*;
use std::time::Instant;

fn facts(compensate: bool) -> Facts {
    Facts {
        clock: ClockSource::Tsc,
        hz: 1e9, // one tick is one nanosecond
        frequency_source: "test".to_owned(),
        invariant_tsc: Some(true),
        wall_ns: 1_000,
        max_delta_ns: u64::MAX,
        compensate,
        resolution_ticks: 1.0,
        // One sample a tick: every sampled figure rests on enough.
        sample_hz: 1_000_000_000,
        // No floor (its tests set one).
        calibration: Default::default(),
        unsampled_threads: 0,
        sampler: crate::record::sampler::Status::Running,
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
        renamed: Default::default(),
    }
}

fn report(t: Tree) -> Report {
    build(&capture(vec![t]), &facts(true))
}

/// `n` with what the sampler found: `program` ticks of the program's time
/// on top, `calls` ticks of instrumentation of the calls it makes (their
/// entries), `own` ticks of its own calls' instrumentation (found on its
/// parent, outside its calls' time: [`tree`] moves it there, as the
/// exits of the calls the parent makes).
fn sampled(mut n: TNode, program: u64, calls: u64, own: u64) -> TNode {
    n.acc.sampled = program;
    n.acc.sampled_inst = calls;
    n.acc.sampled_exit = own;
    n
}

/// A tree of `nodes`, each node's own instrumentation ([`sampled`]'s
/// `own`) found on its parent, where the sampler finds it.
fn tree(mut nodes: Vec<TNode>) -> Tree {
    let own: Vec<u64> = nodes
        .iter_mut()
        .map(|n| core::mem::take(&mut n.acc.sampled_exit))
        .collect();
    for (i, own) in own.into_iter().enumerate().skip(1) {
        let parent = nodes[i].parent as usize;
        nodes[parent].acc.sampled_exit += own;
    }
    Tree::from_nodes(nodes)
}

fn edge<'a>(edges: &'a [Edge], name: &str) -> &'a Edge {
    edges.iter().find(|e| e.name == name).expect(name)
}

#[test]
fn totals_selves_and_edges_of_a_known_tree() {
    // root → a(100) → { b(2 calls, 30), c(20) → b(5) }
    let r = report(sample());
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
    let t = tree(vec![
        TNode::ROOT,
        node(0, 0, 1, 100),
        node(0, 1, 1, 60),
        node(0, 2, 1, 20),
    ]);
    let r = report(t);
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
    let r = report(with_bytes(sample(), &[7, 100, 10, 20, 5]));
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
    let t = tree(vec![
        TNode::ROOT,
        node(0, 0, 1, 100),
        node(0, 1, 1, 60),
        node(0, 2, 1, 20),
    ]);
    let r = report(with_bytes(t, &[0, 1, 2, 4]));
    let f = r.site("a").unwrap();
    assert_eq!((f.alloc.bytes, f.self_alloc.bytes), (7, 7));
    assert_eq!((f.alloc.allocs, f.self_alloc.allocs), (3, 3));
}

#[test]
fn a_parent_shorter_than_its_children_is_carried_not_contradicted() {
    // root → a(10) → b(30): a's call rejected its time? here simply short.
    let t = tree(vec![TNode::ROOT, node(0, 0, 1, 10), node(1, 1, 1, 30)]);
    let r = report(t);
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert_eq!((a.total_ns, a.self_ns, b.total_ns), (30, 0, 30));
    assert_eq!(r.run.carried, 1);
    assert!(a.min_ns as f64 <= a.mean_ns && a.mean_ns <= a.max_ns as f64);
}

/// Percentiles, `min` and `max` take each call's instrumentation out of
/// it in proportion to its time: the site's share of the instrumentation
/// found inside its calls (no call is counted with its own calls beneath:
/// that count cost every timed call a read-modify-write).
#[test]
fn each_call_loses_the_sites_share_of_the_instrumentation_inside() {
    // a: 100 calls, 90 of 1,000 ticks, 10 of 2,000 (110,000 in all); the
    // sampler found 10,000 ticks of instrumentation inside a's calls: a
    // share of 1/11. Each call keeps 10/11 of its time: 909 and 1,818.
    let mut a = sampled(node(0, 0, 100, 110_000), 90_000, 9_000, 0);
    (a.acc.min, a.acc.max) = (1_000, 2_000);
    let b = sampled(node(1, 1, 1000, 10_000), 10_000, 0, 1_000);
    let mut t = tree(vec![TNode::ROOT, a, b]);
    let mut h = crate::hist::Hist::one(1_000);
    for _ in 1..90 {
        h.merge(&crate::hist::Hist::one(1_000));
    }
    for _ in 0..10 {
        h.merge(&crate::hist::Hist::one(2_000));
    }
    t.hists.insert(&SITES[0], h);
    let r = report(t);
    let a = r.site("a").unwrap();
    assert!(r.run.compensated);
    assert_eq!(a.total_ns, 100_000);
    for (q, v, want) in [
        ("min", a.min_ns, 909.0),
        ("p50", a.p50_ns, 909.0),
        ("p90", a.p90_ns, 909.0),
        ("p99", a.p99_ns, 1_818.0),
        ("max", a.max_ns, 1_818.0),
    ] {
        // The bucket's midpoint is within 6.25% of the calls' time, and
        // the figures are brought to the mean by a few percent at most.
        assert!(
            (v as f64 - want).abs() <= want * 0.1,
            "{q} {v} (want ~{want})"
        );
    }
    assert!(
        a.min_ns <= a.p50_ns
            && a.p50_ns <= a.p90_ns
            && a.p90_ns <= a.p99_ns
            && a.p99_ns <= a.max_ns
    );
    // Raw, the slow calls keep their children's instrumentation.
    let raw = build(&capture(vec![tree(vec![TNode::ROOT])]), &facts(false));
    assert!(!raw.run.compensated);
}

/// The percentiles never contradict the mean. A site whose 1,000 calls
/// read `raw` ticks each, each with one marked call of b (1 tick)
/// beneath it, in which the sampler found `inside` ticks a call of the
/// instrumentation: each call, less what is taken out, is held at the
/// clock's resolution (26 ticks: no call that took time reads less), its
/// mean at `raw - inside`. Unresolved (the shortest call under twice the
/// resolution, the mean under 8 times it): its median is brought to the
/// mean, as a counted site's. Resolved: held to Markov's bound (at least
/// half the calls took the p50, so the mean is at least half of it).
#[test]
fn percentiles_never_contradict_the_mean() {
    let site = |raw: u64, inside: u64, min: u64| {
        let mut a = sampled(
            node(0, 0, 1_000, 1_000 * raw),
            1_000 * (raw - inside - 1),
            1_000 * inside,
            0,
        );
        (a.acc.min, a.acc.max) = (min, raw);
        let b = sampled(node(1, 1, 1_000, 1_000), 1_000, 0, 0);
        let mut t = tree(vec![TNode::ROOT, a, b]);
        let mut h = crate::hist::Hist::one(raw);
        for _ in 1..1_000 {
            h.merge(&crate::hist::Hist::one(raw));
        }
        t.hists.insert(&SITES[0], h);
        let mut f = facts(true);
        f.resolution_ticks = 26.0;
        build(&capture(vec![t]), &f).site("a").unwrap().clone()
    };
    let a = site(40, 36, 30);
    assert!(!a.resolved);
    assert!((3.0..=5.0).contains(&a.mean_ns), "mean {}", a.mean_ns);
    assert!(
        a.min_ns <= a.p50_ns && a.p50_ns as f64 <= a.mean_ns,
        "p50 {}",
        a.p50_ns
    );
    let b = site(60, 55, 60);
    assert!(b.resolved);
    assert!((4.0..=6.0).contains(&b.mean_ns), "mean {}", b.mean_ns);
    assert!(
        b.p50_ns as f64 <= 2.0 * b.mean_ns,
        "p50 {} mean {}",
        b.p50_ns,
        b.mean_ns
    );
    assert!(
        b.p50_ns as f64 >= 1.5 * b.mean_ns,
        "p50 {} mean {}",
        b.p50_ns,
        b.mean_ns
    );
}

/// Resolved: the shortest call at least twice the clock's resolution, or
/// the mean at least eight times it. A tiny function slowed down by a
/// busy machine (mean 40 with a resolution of 12) keeps its short
/// shortest call and stays unresolved.
#[test]
fn resolution_looks_at_the_shortest_call_then_the_mean() {
    let resolved = |calls: u64, ticks: u64, min: u64| {
        let mut n = node(0, 0, calls, ticks);
        (n.acc.min, n.acc.max) = (min, ticks);
        let t = tree(vec![TNode::ROOT, n]);
        let mut f = facts(true);
        f.resolution_ticks = 12.0;
        build(&capture(vec![t]), &f).site("a").unwrap().resolved
    };
    assert!(!resolved(10, 400, 15), "mean 40, shortest 15");
    assert!(resolved(10, 400, 24), "shortest at twice the inner cost");
    assert!(!resolved(10, 950, 5), "mean 95, under 8 x 12");
    assert!(resolved(10, 960, 5), "mean 96: a rare short call");
}

/// root → a(100) → b(2 calls, 30), with what the sampler found in them:
/// 17 ticks of instrumentation over 3 calls (see the test below), and the
/// whole of a's 100 ticks looked at (58 + 10 on a, 28 + 4 in b).
fn a_calls_b_sampled() -> Tree {
    tree(vec![
        TNode::ROOT,
        sampled(node(0, 0, 1, 100), 58, 10, 3),
        sampled(node(1, 1, 2, 30), 28, 0, 4),
    ])
}

/// Instrumentation found in fewer than four sampling periods gives no
/// cost per call (one period over a few long calls would read as a large
/// one), and is not taken out of the timed nodes it was found in (one
/// delayed look on a busy machine read as milliseconds of one node): the
/// run's figure says what was found, the nodes keep their floor.
#[test]
fn instrumentation_found_in_under_four_periods_is_not_taken_out() {
    let t = a_calls_b_sampled();
    // 17 ticks of instrumentation found; a period of 5 ticks: 3.4 periods.
    let mut f = facts(true);
    f.sample_hz = 200_000_000;
    let r = build(&capture(vec![t.clone()]), &f);
    assert_eq!(r.run.instrumentation_ns, 17);
    assert_eq!(r.run.overhead_call_ns, 0.0);
    assert_eq!(r.site("a").unwrap().total_ns, 100);
    assert_eq!(r.site("b").unwrap().total_ns, 30);
    assert!(!crate::report::instrumentation_measured(17, 200_000_000));
    // A period of 4 ticks: 4.25 periods, measured and taken out.
    f.sample_hz = 250_000_000;
    let r = build(&capture(vec![t]), &f);
    assert!((r.run.overhead_call_ns - 17.0 / 3.0).abs() < 1e-9);
    assert_eq!(r.site("a").unwrap().total_ns, 86);
    assert!(crate::report::instrumentation_measured(17, 250_000_000));
}

#[test]
fn measured_figures_take_out_the_instrumentation_the_sampler_found_inside() {
    // root → a(100) → b(2 calls, 30). Inside a's calls the sampler found
    // 10 ticks of instrumentation on a's side of its calls of b and 4 of
    // b's own: a loses 14; b made no marked call: it keeps its 30.
    let t = a_calls_b_sampled();
    let r = report(t.clone());
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert!(r.run.compensated);
    assert_eq!(b.total_ns, 30);
    assert_eq!((a.total_ns, a.self_ns), (86, 56));
    assert_eq!((a.raw_total_ns, a.raw_self_ns), (100, 70));
    assert_eq!(a.compensated_total_ns, 86);
    assert_eq!((a.self_sampled_ns, a.total_sampled_ns), (58, 86));
    // The run: 103 ticks sampled, 17 of them instrumentation, over 3 calls.
    assert_eq!((r.run.sampled_ns, r.run.instrumentation_ns), (103, 17));
    assert!((r.run.overhead_share - 17.0 / 103.0).abs() < 1e-9);
    assert!((r.run.overhead_call_ns - 17.0 / 3.0).abs() < 1e-9);
    // Raw when compensation is not wanted, or nothing was sampled.
    let raw = build(&capture(vec![t]), &facts(false));
    assert!(!raw.run.compensated);
    assert_eq!(raw.site("a").unwrap().total_ns, 100);
    assert_eq!(raw.site("a").unwrap().compensated_total_ns, 86);
    let none = report(tree(vec![
        TNode::ROOT,
        node(0, 0, 1, 100),
        node(1, 1, 2, 30),
    ]));
    assert!(!none.run.compensated);
    assert_eq!(none.site("a").unwrap().total_ns, 100);
}

/// A short timed node that one look found in the instrumentation: that
/// look credits a whole period, more than the node's calls measured, and
/// taking it out read 0 (pulldown-cmark's `finish_list_marker`, 30,120
/// calls of 4.2 ms). The node's own estimate, resting on one period,
/// weighs 1 / (1 + 1) beside the run's (the instrumentation per marked
/// call the sampler measured over the run, times the calls beneath).
#[test]
fn a_node_found_once_keeps_half_the_runs_estimate() {
    let t = tree(vec![
        TNode::ROOT,
        // a: 10 calls, 600 ticks, 20 calls of b beneath; one look (a
        // period of 1,000 ticks) found the instrumentation of a call of b.
        sampled(node(0, 0, 10, 600), 0, 1_000, 0),
        node(1, 1, 20, 100),
        // c: the run's other 40,000 ticks of instrumentation, in 4,000
        // calls of d.
        sampled(node(2, 0, 1, 100_000), 20_000, 20_000, 0),
        sampled(node(3, 3, 4_000, 60_000), 40_000, 0, 20_000),
    ]);
    let mut f = facts(true);
    f.sample_hz = 1_000_000;
    let r = build(&capture(vec![t]), &f);
    let a = r.site("a").unwrap();
    // 41,000 over 4,031 calls: 10.17 a call, 203.4 for a's 20 calls of b;
    // a's own estimate is its whole 600: 0.5 x 600 + 0.5 x 203.4 = 401.7.
    assert_eq!((a.total_ns, a.self_ns), (198, 98));
    assert_eq!(r.run.clamped, 0);
    assert_invariants(&r);
}

#[test]
fn over_measured_parents_are_held_and_carried_and_say_so() {
    // a's call measured 50 ticks; the sampler never found its subtree, so
    // the instrumentation inside it is the run's: 600 ticks found (in c's
    // subtree) over 22 calls, 27.3 a call, 273 for a's 10 calls of b. a is
    // held at what its call measurably took (one call, at the clock's
    // resolution of 1), then raised to b's 45.
    let t = tree(vec![
        TNode::ROOT,
        node(0, 0, 1, 50),
        node(1, 1, 10, 45),
        sampled(node(2, 0, 1, 1000), 400, 300, 0),
        sampled(node(3, 3, 10, 600), 600, 0, 300),
    ]);
    let r = report(t);
    let (a, b) = (r.site("a").unwrap(), r.site("b").unwrap());
    assert_eq!(b.total_ns, 45);
    assert_eq!((a.total_ns, a.self_ns), (45, 0));
    // c: 1000 ticks, of which the instrumentation in the proportion found
    // (600 of 1600), nearly all of it its own estimate (1600 periods
    // found, against the run's 273).
    let c = r.site("c").unwrap();
    assert_eq!((c.total_ns, c.self_ns), (625, 25));
    assert_eq!((r.run.clamped, r.run.carried), (1, 1));
    assert!(crate::export::notes::notes(&r).len() >= 2);
}

#[test]
fn threads_are_broken_down_and_merged() {
    let r = build(&capture(vec![sample(), sample()]), &facts(true));
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
    let r = report(t);
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
    later.merge(&tree(vec![
        TNode::ROOT,
        node(0, 0, 1, 10),
        node(1, 1, 1, 50),
    ]));
    let c = capture(vec![later]).minus(&capture(vec![sample()]));
    let r = build(&c, &facts(true));
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
    let t = tree(vec![
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
    let r = report(t);
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

/// A node of site `s` under `parent`: `calls`, `untimed` of them counted,
/// the timed ones `ticks` in all, from `min` to `max` each.
fn calls_of(s: usize, parent: u32, calls: u64, untimed: u64, ticks: u64, range: [u64; 2]) -> TNode {
    let [min, max] = range;
    with(
        node(s, parent, 0, 0),
        Acc {
            calls,
            untimed,
            ticks,
            min,
            max,
            ..Acc::EMPTY
        },
    )
}

/// The timed parent of the counted-call tests: site 0 under the root, 2
/// calls of 4,000 and 6,000 ticks.
fn timed_parent() -> TNode {
    calls_of(0, 0, 2, 0, 10_000, [4_000, 6_000])
}

/// A counted leaf under the timed parent: 640 calls, 10 timed (its
/// sample), of 5 to 7 ticks.
fn counted_leaf() -> TNode {
    calls_of(1, 1, 640, 630, 60, [5, 7])
}

/// The timed parent (2 timed calls, 10,000 ticks; 1,200 ticks of
/// instrumentation found in the entries of its calls beneath: the
/// counted leaf's, mostly) and a counted leaf under it (640 calls, 10
/// timed, its learning calls: 3,000 ticks of the program's time found in
/// it).
fn parent_and_counted_leaf() -> Vec<TNode> {
    vec![
        TNode::ROOT,
        sampled(timed_parent(), 5_800, 1_200, 0),
        sampled(counted_leaf(), 3_000, 0, 0),
    ]
}

/// A counted leaf: its figures are the sampler's (the program's time the
/// sampler found in it); its parent's measured time loses the
/// instrumentation of the leaf's calls.
#[test]
fn a_counted_leafs_time_is_its_own() {
    let t = tree(parent_and_counted_leaf());
    let r = report(t.clone());
    let (p, l) = (
        r.site(SITES[0].name().as_str()).unwrap(),
        r.site(SITES[1].name().as_str()).unwrap(),
    );
    assert_eq!(
        (l.calls, l.timed_calls, l.timing),
        (640, 10, Timing::Counted)
    );
    assert_eq!((l.total_ns, l.self_ns), (3_000, 3_000), "its own time");
    assert!(!l.resolved);
    assert_eq!(
        (p.total_ns, p.self_ns),
        (8_800, 5_800),
        "less the leaf's instrumentation, less the leaf"
    );
    assert_eq!(l.mean_ns, 3_000.0 / 640.0);
    assert_eq!(r.run.counted_sites, 1);
    assert_eq!(r.run.counted_calls, 630);
    assert_invariants(&r);
    // With no sample (the sampler off), the raw figures: the leaf at its
    // timed sample's mean times its calls, inside its parent's time.
    let mut bare = t;
    for n in &mut bare.nodes {
        (n.acc.sampled, n.acc.sampled_inst, n.acc.sampled_exit) = (0, 0, 0);
    }
    let r = report(bare);
    let (p, l) = (
        r.site(SITES[0].name().as_str()).unwrap(),
        r.site(SITES[1].name().as_str()).unwrap(),
    );
    assert!(!r.run.compensated);
    assert_eq!(l.total_ns, 640 * 6);
    assert_eq!((p.total_ns, p.self_ns), (10_000, 10_000 - 640 * 6));
    assert_invariants(&r);
}

/// Where the sampler found less instrumentation inside a timed node than
/// the timed calls beneath it cost at least (what retires outside the
/// guard's windows), the calibrated floor is taken out; counted calls
/// beneath add nothing to it.
#[test]
fn the_calibrated_floor_is_taken_out_where_the_sampler_found_less() {
    // A timed child of 50 calls, 500 ticks, beside the counted leaf; the
    // sampler looked at the whole of the parent's 10,000 ticks (its own
    // 5,300 with the child's 500 and the leaf's 4,000 and 200).
    let mut nodes = parent_and_counted_leaf();
    nodes[1].acc.sampled = 5_300;
    nodes.push(sampled(node(1, 2, 50, 500), 500, 0, 0));
    let t = tree(nodes);
    let mut f = facts(true);
    // One look every 100 ticks: the counted leaf and the parent's own time
    // found (8,800) overfill its 7,600 within the sampler's error.
    f.sample_hz = 10_000_000;
    // 40 ticks a timed call: the 60 timed calls beneath the parent, 2,400,
    // above the 1,200 the sampler found.
    f.calibration = Calibration { timed: 40.0 };
    let r = build(&capture(vec![t.clone()]), &f);
    let p = r.site(SITES[0].name().as_str()).unwrap();
    assert_eq!(p.total_ns, 7_600, "10,000 less the floor");
    assert_invariants(&r);
    // The header's instrumentation: the parent's floor and its own 2
    // timed calls, 2,480, above the 1,200 found.
    assert_eq!(r.run.instrumentation_ns, 2_480);
    // A floor below what the sampler found changes nothing.
    f.calibration = Calibration { timed: 10.0 };
    let low = build(&capture(vec![t]), &f);
    assert_eq!(low.site(SITES[0].name().as_str()).unwrap().total_ns, 8_800);
    assert_eq!(low.run.instrumentation_ns, 1_200);
}

/// The header prices a timed call and a counted call apart: a timed
/// call's exit is found apart (its window after its clock read), and its
/// entry taken to cost as much; the rest of the entries found are the
/// counted calls'. The two over their calls make the run's whole; a
/// site's cost (the costliest-marks note) takes its calls at their kind's
/// figure, not one average over both.
#[test]
fn timed_and_counted_calls_are_priced_apart() {
    // root → parent (2 timed calls) → leaf (640 calls: 10 timed, 630
    // counted). A timed call's exit costs 10 ticks (found on its caller:
    // 20 on the root, 100 on the parent), its entry as much; a counted
    // call's entry 0.5 (the parent's entries: 100 + 315).
    let with = |mut n: TNode, inst: u64, exit: u64| {
        (n.acc.sampled_inst, n.acc.sampled_exit) = (inst, exit);
        n
    };
    let mut root = with(TNode::ROOT, 20, 20);
    root.acc.sampled = 0;
    let t = Tree::from_nodes(vec![
        root,
        with(sampled(timed_parent(), 4_000, 0, 0), 415, 100),
        sampled(counted_leaf(), 60, 0, 0),
    ]);
    let r = report(t);
    let run = &r.run;
    assert_eq!(run.instrumentation_ns, 555);
    assert!((run.overhead_timed_ns - 20.0).abs() < 1e-9, "{run:?}");
    assert!((run.overhead_counted_ns - 0.5).abs() < 1e-9, "{run:?}");
    let whole = 12.0 * run.overhead_timed_ns + 630.0 * run.overhead_counted_ns;
    assert!((whole - 555.0).abs() < 1e-6);
    // The average over every call, as before.
    assert!((run.overhead_call_ns - 555.0 / 642.0).abs() < 1e-9);
    assert_eq!(run.per_kind_ns(), (20.0, 0.5));
    let site = |i: usize| r.site(SITES[i].name().as_str()).unwrap();
    let leaf = site(1).instrumentation_ns(run);
    assert!((leaf - (10.0 * 20.0 + 630.0 * 0.5)).abs() < 1e-6, "{leaf}");
    assert!((site(0).instrumentation_ns(run) - 40.0).abs() < 1e-6);
    // A report from before the per-kind figures: every call at the
    // average.
    let mut old = run.clone();
    (old.overhead_timed_ns, old.overhead_counted_ns) = (0.0, old.overhead_call_ns);
    assert_eq!(
        old.per_kind_ns(),
        (old.overhead_call_ns, old.overhead_call_ns)
    );
    // The text says both.
    let text = r.to_text();
    assert!(text.contains(" a timed call, "), "{text}");
    assert!(text.contains(" per counted call measured: "), "{text}");
    // Counted calls' entries found in 3 periods (under 4): not measured
    // apart, both kinds at the average.
    let t = Tree::from_nodes(vec![
        with(TNode::ROOT, 20, 20),
        with(sampled(timed_parent(), 4_000, 0, 0), 103, 100),
        sampled(counted_leaf(), 60, 0, 0),
    ]);
    let r = report(t);
    let avg = 243.0 / 642.0;
    assert!((r.run.overhead_call_ns - avg).abs() < 1e-9);
    assert_eq!(r.run.per_kind_ns(), (avg, avg));
    let text = r.to_text();
    assert!(!text.contains(" a timed call, "), "{text}");
    assert!(text.contains(" per call measured: "), "{text}");
    // With a calibrated cost a timed call, the per-kind figures of the
    // tree whose root and parent have `(inst, exit)` found: `(timed,
    // counted, whole)`.
    let priced = |root: (u64, u64), parent: (u64, u64), cal: f64| {
        let t = Tree::from_nodes(vec![
            with(TNode::ROOT, root.0, root.1),
            with(sampled(timed_parent(), 4_000, 0, 0), parent.0, parent.1),
            sampled(counted_leaf(), 60, 0, 0),
        ]);
        let mut f = facts(true);
        f.calibration = Calibration { timed: cal };
        let r = build(&capture(vec![t]), &f);
        let (timed, counted) = r.run.per_kind_ns();
        (timed, counted, format!("{:?}", r.run))
    };
    // A calibrated cost of 10 ticks: a timed call reads that at least,
    // the counted calls the rest of the whole (243 ticks over 12 timed and
    // 630 counted calls).
    let (timed, counted, run) = priced((20, 20), (103, 100), 10.0);
    assert!((timed - 10.0).abs() < 1e-9, "{run}");
    assert!((counted - (243.0 - 120.0) / 630.0).abs() < 1e-9, "{run}");
    assert!((12.0 * timed + 630.0 * counted - 243.0).abs() < 1e-6);
    // The counted calls' entries found (399 periods), the timed calls'
    // exits in one (their own: 2, under 4): a timed call at its
    // calibrated cost (0.5 ticks, under the average 401 / 642), not the
    // average, and the counted calls the rest.
    let (timed, counted, run) = priced((0, 0), (400, 1), 0.5);
    assert!((timed - 0.5).abs() < 1e-9, "{run}");
    assert!((counted - (401.0 - 6.0) / 630.0).abs() < 1e-9, "{run}");
}

/// A counted subtree: a counted parent whose children count too. Each
/// counted node's total is the program's time the sampler found in its
/// subtree, its self what it found on the node itself.
#[test]
fn a_counted_subtree_nests_its_sampled_figures() {
    let counted = |calls: u64, sample: u64, each: u64| Acc {
        calls,
        untimed: calls - sample,
        ticks: sample * each,
        min: each,
        max: each,
        ..Acc::EMPTY
    };
    let t = tree(vec![
        TNode::ROOT,
        // The sampler looked at the parent's whole 10,000 ticks.
        sampled(timed_parent(), 3_200, 100, 0),
        sampled(
            with(node(1, 1, 0, 0), counted(640, 10, 10)),
            3_000,
            400,
            500,
        ),
        sampled(with(node(2, 2, 0, 0), counted(1280, 20, 5)), 2_000, 0, 800),
    ]);
    let r = report(t);
    let site = |i: usize| r.site(SITES[i].name().as_str()).unwrap();
    let (p, a, b) = (site(0), site(1), site(2));
    assert_eq!((a.timing, b.timing), (Timing::Counted, Timing::Counted));
    assert_eq!((b.total_ns, b.self_ns), (2_000, 2_000));
    assert_eq!((a.total_ns, a.self_ns), (5_000, 3_000));
    // The parent loses everything inside: 100 + 500 + 400 + 800.
    assert_eq!((p.total_ns, p.self_ns), (8_200, 3_200));
    assert_eq!(r.run.counted_calls, 630 + 1260);
    assert_invariants(&r);
}

/// A timed parent whose counted child, as the sampler found it, and its
/// own time, as the sampler found it, overfill its measured time: both
/// are fitted into it in proportion, not the child first and the parent
/// left with the rest (pulldown-cmark's `parse_block` read 0 ns of self
/// with 23 ms found on top of it). By more than the sampler's count can be
/// off, what it found stands and the parent is carried (a memory-bound
/// callee's misses land after its exit's clock read).
#[test]
fn a_parent_overfilled_by_its_counted_child_keeps_its_found_share() {
    let t = tree(vec![
        TNode::ROOT,
        sampled(timed_parent(), 3_000, 0, 0),
        sampled(counted_leaf(), 9_000, 0, 0),
    ]);
    // One look every 100 ticks: 12,000 found is good to 2 x 1,095.
    let mut f = facts(true);
    f.sample_hz = 10_000_000;
    let run = |t: &Tree, f: &Facts| {
        let r = build(&capture(vec![t.clone()]), f);
        assert_invariants(&r);
        let site = |i: usize| r.site(SITES[i].name().as_str()).unwrap().clone();
        (site(0), site(1), r.run.carried)
    };
    let (p, c, carried) = run(&t, &f);
    // 3,000 + 9,000 found in 10,000 measured: 1 in 4 is the parent's.
    assert_eq!((p.total_ns, p.self_ns), (10_000, 2_500));
    assert_eq!((c.total_ns, c.self_ns, carried), (7_500, 7_500, 0));
    // Found less than it measured, the parent keeps the rest (its own
    // time, as before).
    let mut less = t.clone();
    less.nodes[1].acc.sampled = 500;
    let (p, c, _) = run(&less, &f);
    assert_eq!((p.total_ns, p.self_ns, c.total_ns), (10_000, 1_000, 9_000));
    // One look a tick: 12,000 found is good to 2 x 110; scaled down by
    // that only (to 11,780.9), and the parent carried.
    let (p, c, carried) = run(&t, &facts(true));
    assert_eq!((p.total_ns, p.self_ns), (11_780, 2_945));
    assert_eq!((c.total_ns, carried), (8_835, 1));
}

/// A counted site in two contexts the sampler found too seldom to figure
/// each alone: found often enough together, each keeps what the sampler
/// found (its timed sample's mean keeps instrumentation: summed over many
/// contexts it read 7x the sampler's figure); found less, their timed
/// samples' figures are held to what the sampler's count allows.
#[test]
fn a_sites_seldom_found_contexts_are_figured_together() {
    let counted = Acc {
        calls: 640,
        untimed: 630,
        ticks: 500,
        min: 50,
        max: 50,
        ..Acc::EMPTY
    };
    // A timed parent (site 0) with the counted site (1) beneath it and
    // beneath a timed child (2).
    let tree = |found: [u64; 2]| {
        tree(vec![
            TNode::ROOT,
            sampled(node(0, 0, 1, 200_000), 150_000, 0, 0),
            sampled(with(node(1, 1, 0, 0), counted), found[0], 0, 0),
            sampled(node(2, 1, 1, 20_000), 19_000, 0, 0),
            sampled(with(node(1, 3, 0, 0), counted), found[1], 0, 0),
        ])
    };
    // One look every 100 ticks: a node's own figure needs 400 found.
    let mut f = facts(true);
    f.sample_hz = 10_000_000;
    let total = |found| {
        let r = build(&capture(vec![tree(found)]), &f);
        assert_invariants(&r);
        let s = r.site(SITES[1].name().as_str()).unwrap();
        assert_eq!(s.timing, Timing::Counted);
        s.total_ns
    };
    // 300 and 300: 600 together, each its own.
    assert_eq!(total([300, 300]), 600);
    // 100 and none: one period; the timed samples' 2 x 640 x 49 ticks are
    // held to 6 periods (1 + 3 + 2).
    assert_eq!(total([100, 0]), 600);
    // Each found often enough alone: its own figure, as before.
    assert_eq!(total([400, 500]), 900);
}

/// The property test's counterexample (issue 55): a site of 5 calls, 1
/// counted, whose 4 timed calls (3 ticks in all, buckets 0 to 3) are far
/// below the clock's resolution (9.2 ticks), and which the sampler never
/// found on top (only its own instrumentation, once). Its estimate is 0:
/// its percentiles must not read more (they read p50 3 ns against a mean
/// of 0), and its row says its time rests on too few samples.
#[test]
fn an_estimated_site_the_sampler_never_found_reads_no_percentile_above_its_mean() {
    let acc = Acc {
        calls: 5,
        ticks: 3,
        min: 0,
        max: 3,
        untimed: 1,
        sampled_exit: 1,
        allocs: 5,
        ..Acc::EMPTY
    };
    let mut t = tree(vec![TNode::ROOT, with(node(0, 0, 0, 0), acc)]);
    for ticks in 0..4 {
        t.hists.insert(&SITES[0], crate::hist::Hist::one(ticks));
    }
    let mut f = facts(true);
    f.resolution_ticks = 9.159216137265627;
    f.calibration = Calibration { timed: 0.0 };
    f.hz = 1e9 / 2.5;
    let r = build(&capture(vec![t]), &f);
    assert_invariants(&r);
    let s = r.site(SITES[0].name().as_str()).unwrap();
    assert!(!s.resolved);
    assert_eq!((s.calls, s.total_ns), (5, 0));
    assert_eq!((s.p50_ns, s.p90_ns, s.p99_ns), (0, 0, 0));
    assert!(s.too_few_samples(), "{s:?}");
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
        if !s.hist.is_empty() {
            assert!(
                s.min_ns <= s.p50_ns
                    && s.p50_ns <= s.p90_ns
                    && s.p90_ns <= s.p99_ns
                    && s.p99_ns <= s.max_ns,
                "{}: min {} p50 {} p90 {} p99 {} max {}",
                s.name,
                s.min_ns,
                s.p50_ns,
                s.p90_ns,
                s.p99_ns,
                s.max_ns
            );
            // A counted or unresolved site's median: at most its mean.
            assert!(
                !r.run.compensated || s.resolved || s.p50_ns as f64 <= s.mean_ns,
                "{}: estimated, p50 {} against mean {}",
                s.name,
                s.p50_ns,
                s.mean_ns
            );
            // Markov's bound: at least 1 - q of the calls took the q
            // quantile or longer.
            for (q, v, times) in [
                ("p50", s.p50_ns, 2.0),
                ("p90", s.p90_ns, 10.0),
                ("p99", s.p99_ns, 100.0),
            ] {
                assert!(
                    s.mean_ns <= 0.0 || v as f64 <= times * s.mean_ns,
                    "{}: {q} {v} against mean {}",
                    s.name,
                    s.mean_ns
                );
            }
            assert_eq!(
                s.hist_count(),
                s.timed_calls - s.rejected(),
                "{}: histogram count",
                s.name
            );
        }
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
        (0u64..500, 0u64..300, 0u64..300),
    );
    prop::collection::vec(arb_node, 1..40).prop_map(|raw| {
        let mut nodes = vec![TNode::ROOT];
        // Regular nodes, the possible parents (as in arenas, an overflow
        // node has no regular children).
        let mut regular: Vec<u32> = vec![0];
        let mut hists = crate::hist::SiteHists::new();
        for (k, (p, s, calls, rejected, ticks, flag, unwound, untimed, (sp, si, so))) in
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
                sampled: sp,
                sampled_inst: si,
                sampled_exit: so,
                ..Acc::EMPTY
            };
            // The accepted calls in the site's histogram: their times
            // spread over [min, max], each with some calls beneath.
            for j in 0..accepted {
                let t = if accepted == 1 {
                    ticks
                } else {
                    acc.min + j * (acc.max - acc.min) / (accepted - 1)
                };
                hists.insert(&SITES[s], crate::hist::Hist::one(t));
            }
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
        let mut raw = Tree::from_nodes(nodes);
        raw.hists = hists;
        t.merge(&raw);
        t
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(400)))]

    #[test]
    fn every_report_satisfies_its_invariants(
        trees in prop::collection::vec(arb_tree(), 1..3),
        resolution in 0.0f64..40.0,
        compensate in any::<bool>(),
        ns_per_tick in prop::sample::select(vec![1.0, 0.37, 2.5]),
        timed_cost in 0.0f64..60.0,
    ) {
        let mut f = facts(compensate);
        f.resolution_ticks = resolution;
        // The calibrated floor (0: none).
        f.calibration = Calibration { timed: timed_cost };
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(300)))]

    /// With every call timed, a site whose calls took time never reads 0,
    /// whatever the sampler found in it (one look credits a whole period,
    /// which may be longer than the calls it found): each call keeps a
    /// tick at least (a nanosecond or more here).
    #[test]
    fn timed_calls_that_took_time_never_read_zero(
        tree in arb_tree(),
        resolution in 1.0f64..40.0,
        ns_per_tick in prop::sample::select(vec![1.0, 2.5]),
        period in prop::sample::select(vec![1.0f64, 100.0, 10_000.0]),
        all_instrumentation in any::<bool>(),
    ) {
        let mut tree = tree;
        for n in &mut tree.nodes {
            n.acc.untimed = 0;
            // The sampler found only instrumentation (a short node's one
            // or two looks can).
            if all_instrumentation {
                n.acc.sampled = 0;
            }
        }
        // Overflow nodes' calls are in their site's counters, not in its
        // total (they are nobody's children).
        let overflow: Vec<String> = tree
            .nodes
            .iter()
            .filter(|n| !n.is_regular())
            .filter_map(|n| n.site.map(|s| s.name()))
            .collect();
        let mut f = facts(true);
        f.resolution_ticks = resolution;
        f.hz = 1e9 / ns_per_tick;
        f.sample_hz = (f.hz / period) as u64;
        let r = build(&capture(vec![tree]), &f);
        for s in &r.sites {
            if s.timed_calls <= s.rejected() || s.min_ticks == 0 || overflow.contains(&s.name) {
                continue;
            }
            prop_assert!(s.total_ns >= 1, "{}: total 0 (raw {})", s.name, s.raw_total_ns);
            prop_assert!(s.mean_ns > 0.0, "{}: mean 0", s.name);
        }
    }
}

/// A run with no sample says why: the sampler off, not started (a marked
/// call it could start from was never made outside a possible signal
/// handler), its thread refused, or started without a look yet.
#[test]
fn an_unsampled_run_says_why() {
    let t = Tree::from_nodes(vec![TNode::ROOT, node(0, 0, 2, 1_000)]);
    use crate::record::sampler::Status;
    let basis = |hz: u64, status: Status| {
        let mut f = facts(true);
        f.sample_hz = hz;
        f.sampler = status;
        build(&capture(vec![t.clone()]), &f).run.calibration
    };
    assert!(basis(0, Status::Off).contains("sampler is off"));
    assert!(basis(1_000, Status::NotStarted).contains("sampler has not started"));
    assert!(basis(1_000, Status::Failed).contains("refused the sampler's thread"));
    assert!(basis(1_000, Status::Running).contains("no sample yet"));
}

/// With no sampler, a counted site's time is its timed sample's mean times
/// its calls: one preempted call among the timed few read hundreds of
/// times the wall time (issue 54). Those outside any timed call are held
/// within the threads times the wall time; a counted leaf under a timed
/// parent still fits in the parent.
#[test]
fn with_no_sampler_a_counted_estimate_stays_within_the_threads_wall_time() {
    let mut f = facts(true);
    (f.sample_hz, f.wall_ns) = (0, 100_000);
    // 64,000 calls, 1,000 timed: one of them preempted for 50,000 ticks.
    let top = calls_of(0, 0, 64_000, 63_000, 50_999, [1, 50_000]);
    let two = |t: Tree| build(&capture(vec![t.clone(), t]), &f);
    let r = two(tree(vec![TNode::ROOT, top]));
    let s = r.site(SITES[0].name().as_str()).unwrap();
    assert_eq!(s.timing, Timing::Counted);
    // 2 threads × 100,000 ns (the estimate was 2 × 3.26 ms).
    assert!(s.total_ns <= 200_000 && s.total_ns > 0, "{s:?}");
    assert!(r.to_text().contains("their times (~) are unsampled"));
    // Under a timed parent: fitted in the parent's 10,000 ticks as before.
    let r = two(tree(vec![TNode::ROOT, timed_parent(), counted_leaf()]));
    let (p, a) = (
        r.site(SITES[0].name().as_str()).unwrap(),
        r.site(SITES[1].name().as_str()).unwrap(),
    );
    assert!(a.total_ns <= p.total_ns, "{a:?} {p:?}");
    assert_invariants(&r);
}

/// A row of inlined code (feature `inlined`) found in fewer periods than
/// a counted node needs for a figure of its own keeps the share of its
/// holder's time its samples found: its holder gave that share up, and
/// no timed sample stands in for it (every row of semver's workload read
/// 0, the time lost).
#[cfg(all(feature = "inlined", target_os = "linux"))]
#[test]
fn a_row_found_in_a_period_or_two_keeps_its_share() {
    static ROW: crate::site::CallSite =
        crate::site::CallSite::inlined("a::row (inlined)", "a.rs", 0);
    let row = TNode {
        site: Some(&ROW),
        parent: 1,
        flags: 0,
        acc: Acc {
            sampled: 2,
            pc_samples: 2,
            ..Acc::EMPTY
        },
    };
    // The timed parent's 10,000 ticks, all the program's, 2 of them the
    // row's (given to it by `inlined::expand`).
    let t = tree(vec![TNode::ROOT, sampled(timed_parent(), 9_998, 0, 0), row]);
    let r = report(t);
    let (p, row) = (
        r.site(SITES[0].name().as_str()).unwrap(),
        r.site("a::row (inlined)").unwrap(),
    );
    assert_eq!((row.total_ns, row.self_ns, row.pc_samples), (2, 2, 2));
    assert!(row.too_few_samples());
    assert_eq!((p.total_ns, p.self_ns), (10_000, 9_998));
    assert_invariants(&r);
}
