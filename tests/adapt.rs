//! Adaptive timing (`TICKPROF_TIME`): counted sites keep every count
//! exact. The same deterministic workload runs in child processes with
//! `TICKPROF_TIME=all` (every call timed), `adaptive` (the default) and
//! `counted` (every site counted after its learning calls); every site's
//! calls and every call path's calls must be identical, on several
//! threads; a leaf becomes counted, a parent of marked callees too, with
//! its callees' calls beneath it, and a counted site that starts making
//! marked calls keeps them on their true path with its counts intact.

use crate::support::time_modes;

use std::collections::BTreeMap;
use time_modes::{paths, short};

const CHILD: &str = "TPTEST_ADAPT_CHILD";
const THREADS: u64 = 3;
const LEAF_CALLS: u64 = 20_000;

#[tickprof::profile]
#[inline(never)]
fn leaf(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_mul(3)
}

/// Calls `leaf` (so it is never counted).
#[tickprof::profile]
#[inline(never)]
fn middle(x: u64) -> u64 {
    leaf(x).wrapping_add(leaf(x + 1))
}

/// Tiny; makes a marked call once, late in the run: counted first (in
/// `counted` mode), then timed for good.
#[tickprof::profile]
#[inline(never)]
fn sometimes(i: u64) -> u64 {
    if i == LEAF_CALLS / 2 {
        return leaf(i);
    }
    std::hint::black_box(i)
}

/// A call of a few microseconds (never counted in `adaptive` mode).
#[tickprof::profile]
#[inline(never)]
fn slow(x: u64) -> u64 {
    let mut h = x;
    for _ in 0..2_000 {
        h = std::hint::black_box(h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ x);
    }
    h
}

#[tickprof::profile]
fn work(t: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..LEAF_CALLS {
        s = s.wrapping_add(leaf(i ^ t));
        s = s.wrapping_add(sometimes(i));
        if i % 10 == 0 {
            s = s.wrapping_add(middle(i));
        }
        if i % 1_000 == 0 {
            s = s.wrapping_add(slow(i));
        }
    }
    s
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let threads: Vec<_> = (0..THREADS)
        .map(|t| std::thread::spawn(move || work(t)))
        .collect();
    let s = threads
        .into_iter()
        .fold(0u64, |a, h| a.wrapping_add(h.join().unwrap()));
    std::hint::black_box(s);
}

/// One child's JSON report.
fn run(mode: &str) -> serde_json::Value {
    time_modes::run(CHILD, "adapt", mode)
}

/// Site name → (calls, timing, timed calls).
fn sites(r: &serde_json::Value) -> BTreeMap<String, (u64, String, u64)> {
    r["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                short(s["name"].as_str().unwrap()),
                (
                    s["calls"].as_u64().unwrap(),
                    s["timing"].as_str().unwrap().to_owned(),
                    s["timed_calls"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

fn counts(s: &BTreeMap<String, (u64, String, u64)>) -> BTreeMap<String, u64> {
    s.iter().map(|(k, v)| (k.clone(), v.0)).collect()
}

#[test]
fn counts_and_paths_are_identical_whatever_is_timed() {
    let all = run("all");
    let adaptive = run("adaptive");
    let counted = run("counted");
    let (s_all, s_adaptive, s_counted) = (sites(&all), sites(&adaptive), sites(&counted));
    // The workload's exact counts.
    let n = THREADS * LEAF_CALLS;
    assert_eq!(s_all["work"].0, THREADS);
    assert_eq!(s_all["sometimes"].0, n);
    assert_eq!(s_all["middle"].0, n / 10);
    assert_eq!(s_all["slow"].0, n / 1_000);
    assert_eq!(s_all["leaf"].0, n + 2 * (n / 10) + THREADS);
    assert!(
        s_all.values().all(|v| v.1 == "timed" && v.2 == v.0),
        "{s_all:?}"
    );
    assert_eq!(counts(&s_adaptive), counts(&s_all), "adaptive vs all");
    assert_eq!(counts(&s_counted), counts(&s_all), "counted vs all");
    let p_all = paths(&all);
    assert_eq!(paths(&adaptive), p_all, "paths: adaptive vs all");
    assert_eq!(paths(&counted), p_all, "paths: counted vs all");

    // Forced counting: every site that finished learning is counted, a
    // sample of its calls timed: the leaf, `middle` (with its calls of
    // `leaf`, decided counted), `sometimes` (its one late call of `leaf`
    // made from a counted call: a new node, counted at creation as its
    // site is, on its true path). `slow` and `work` make too few calls to finish
    // learning (256 per node): timed.
    let (calls, timing, timed) = &s_counted["leaf"];
    assert_eq!(timing, "counted");
    // Per thread and path: 256 learning calls, then one in 64.
    assert!(*timed < calls / 10, "leaf: {timed} of {calls} timed");
    for site in ["slow", "work"] {
        assert_eq!(s_counted[site].1, "timed", "{site}");
        assert_eq!(s_counted[site].2, s_counted[site].0, "{site}");
    }
    for site in ["middle", "sometimes"] {
        let (calls, timing, timed) = &s_counted[site];
        assert_eq!(timing, "counted", "{site}");
        assert!(timed < calls, "{site}: {timed} of {calls}");
    }
    assert_eq!(
        p_all[&vec!["work".into(), "sometimes".into(), "leaf".into()]],
        THREADS,
        "the late call lands on its true path"
    );
    let run = &counted["run"];
    assert_eq!(
        run["counted_sites"].as_u64(),
        Some(3),
        "leaf, middle, sometimes: {run}"
    );
    let counted_calls: u64 = s_counted
        .values()
        .filter(|v| v.1 == "counted")
        .map(|v| v.0 - v.2)
        .sum();
    assert_eq!(run["counted_calls"].as_u64().unwrap(), counted_calls);
}

#[test]
fn counted_sites_keep_the_invariants_in_the_report() {
    let r = run("counted");
    for s in r["sites"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let f = |k: &str| s[k].as_u64().unwrap();
        assert!(f("self_ns") <= f("total_ns"), "{name}");
        assert!(f("raw_self_ns") <= f("raw_total_ns"), "{name}");
        assert!(f("timed_calls") <= f("calls"), "{name}");
        let mean = s["mean_ns"].as_f64().unwrap();
        assert!(
            f("min_ns") as f64 <= mean && mean <= f("max_ns") as f64,
            "{name}: {s}"
        );
        if s["timing"] == "counted" {
            assert!(!s["resolved"].as_bool().unwrap(), "{name}: estimates");
        }
        for e in s["callers"].as_array().unwrap() {
            assert!(e["total_ns"].as_u64().unwrap() <= f("total_ns"), "{name}");
        }
    }
    let tree = r["tree"].as_array().unwrap();
    for (i, n) in tree.iter().enumerate().skip(1) {
        let kids: u64 = tree
            .iter()
            .filter(|c| c["parent"].as_u64() == Some(i as u64))
            .map(|c| c["total_ns"].as_u64().unwrap())
            .sum();
        let total = n["total_ns"].as_u64().unwrap();
        assert!(kids <= total, "node {i}: {kids} > {total}");
        assert_eq!(n["self_ns"].as_u64().unwrap(), total - kids, "node {i}");
    }
}
