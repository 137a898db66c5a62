//! Counted calls: whatever happens inside one, every count and every call
//! path is the one an all-timed run records. The same deterministic
//! workload runs in child processes with `TICKPROF_TIME=all` and `counted`
//! (every site that made no marked call while learning is counted): a site
//! that starts making marked calls after it was counted (once, many times
//! in one call, recursively), a counted call that panics, one that returns
//! early with `?`, on several threads; the allocations of a counted call
//! are its own.

use crate::support::time_modes;

use std::collections::BTreeMap;
use time_modes::{paths, short};

// tickprof's counting allocator is this binary's (`tests/all.rs`).

const CHILD: &str = "TPTEST_COUNTED_CHILD";
const THREADS: u64 = 2;
/// Calls of each tiny site before the late events (past the 256 learning
/// calls).
const EARLY: u64 = 5_000;

#[tickprof::profile]
#[inline(never)]
fn leaf(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_mul(3)
}

/// Tiny until call `EARLY`, then makes three marked calls in one call.
#[tickprof::profile]
#[inline(never)]
fn late_parent(i: u64) -> u64 {
    if i == EARLY {
        return leaf(i) ^ leaf(i + 1) ^ leaf(i + 2);
    }
    std::hint::black_box(i)
}

/// Tiny for `depth` 0; recurses after it was counted.
#[tickprof::profile]
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == 0 {
        return std::hint::black_box(depth);
    }
    recurse(depth - 1).wrapping_add(1)
}

/// Panics once, at call `EARLY`.
#[tickprof::profile]
#[inline(never)]
fn boom(i: u64) -> u64 {
    if i == EARLY {
        panic!("boom at {i}");
    }
    std::hint::black_box(i)
}

/// Returns early with `?` on odd inputs.
#[tickprof::profile]
#[inline(never)]
fn parse(i: u64) -> Result<u64, std::num::TryFromIntError> {
    let small = u8::try_from(i % 2 * 300 + i % 7)?;
    Ok(u64::from(std::hint::black_box(small)))
}

/// One allocation and one free of 24 bytes a call (counted without a
/// frame of its own: its allocations are still its own).
#[tickprof::profile]
#[inline(never)]
fn boxed(i: u64) -> u64 {
    let b = std::hint::black_box(Box::new([i; 3]));
    b[1]
}

/// Marked, called after each event: must land under `work`.
#[tickprof::profile]
#[inline(never)]
fn after(x: u64) -> u64 {
    std::hint::black_box(x) + 1
}

#[tickprof::profile]
fn work(t: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..=EARLY {
        s = s.wrapping_add(late_parent(i));
        s = s.wrapping_add(recurse(if i == EARLY { 3 } else { 0 }));
        let r = std::panic::catch_unwind(|| boom(i));
        s = s.wrapping_add(r.unwrap_or(7));
        s = s.wrapping_add(parse(i + t).unwrap_or(1));
        s = s.wrapping_add(boxed(i));
        if i % 100 == 0 {
            s = s.wrapping_add(after(i));
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
    std::panic::set_hook(Box::new(|_| {}));
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
    time_modes::run(CHILD, "counted", mode)
}

/// Site name → (calls, timing).
fn sites(r: &serde_json::Value) -> BTreeMap<String, (u64, String)> {
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
                ),
            )
        })
        .collect()
}

fn path(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn counted_calls_keep_every_count_and_path() {
    let all = run("all");
    let counted = run("counted");
    let (s_all, s_counted) = (sites(&all), sites(&counted));
    let calls = |s: &BTreeMap<String, (u64, String)>| -> BTreeMap<String, u64> {
        s.iter().map(|(k, v)| (k.clone(), v.0)).collect()
    };
    let n = THREADS * (EARLY + 1);
    assert_eq!(s_all["late_parent"].0, n);
    assert_eq!(s_all["boom"].0, n);
    assert_eq!(s_all["parse"].0, n);
    assert_eq!(s_all["leaf"].0, 3 * THREADS);
    assert_eq!(s_all["recurse"].0, n + 3 * THREADS);
    assert_eq!(s_all["after"].0, THREADS * (EARLY / 100 + 1));
    assert_eq!(
        calls(&s_counted),
        calls(&s_all),
        "site counts: counted vs all"
    );
    let (p_all, p_counted) = (paths(&all), paths(&counted));
    assert_eq!(p_counted, p_all, "paths: counted vs all");

    // The late marked calls land beneath their counted caller.
    assert_eq!(
        p_counted[&path(&["work", "late_parent", "leaf"])],
        3 * THREADS
    );
    assert!(!p_counted.contains_key(&path(&["work", "leaf"])));
    assert_eq!(
        p_counted[&path(&["work", "recurse", "recurse", "recurse", "recurse"])],
        THREADS
    );
    // After a panic and after `?`, the next marked call is the caller's.
    assert_eq!(
        p_counted[&path(&["work", "after"])],
        THREADS * (EARLY / 100 + 1)
    );
    // Every site that finished learning is counted, the late marked
    // calls made from counted calls with them (their nodes take their
    // site's decision at creation), each on its true path.
    for site in ["parse", "boom", "late_parent", "recurse"] {
        assert_eq!(s_counted[site].1, "counted", "{site}");
    }
    assert_eq!(s_counted["boxed"].1, "counted");
    for r in [&all, &counted] {
        let boxed = r["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| short(s["name"].as_str().unwrap()) == "boxed")
            .unwrap();
        let a = &boxed["self_alloc"];
        assert_eq!(a["allocs"].as_u64(), Some(n), "{a}");
        assert_eq!(a["bytes"].as_u64(), Some(24 * n), "{a}");
        assert_eq!(a["frees"].as_u64(), Some(n), "{a}");
    }
    let run = &counted["run"];
    assert_eq!(run["lost"].as_u64().unwrap_or(0), 0, "{run}");
}
