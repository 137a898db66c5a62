//! Many leaked guards (`mem::forget`) past the calling-context tree's node
//! cap: later marked calls are still counted exactly, and each costs O(1)
//! (they used to scan the whole shadow stack beneath an overflow node:
//! after 1,000,000 leaks, ~14 ms per call; `scripts/stress_leaks.sh` times
//! the full-size case).
#![cfg(feature = "enabled")]

#[path = "support/quiet.rs"]
mod quiet;

/// A small node cap for this test binary, set before tickprof reads its
/// environment (`early` runs before tickprof's constructor).
#[ctor::ctor(unsafe, priority = early)]
fn small_tree() {
    if std::env::var_os("TICKPROF_MAX_NODES").is_none() {
        std::env::set_var("TICKPROF_MAX_NODES", "1000");
    }
}

#[tickprof::profile]
fn leaf(x: u64) -> u64 {
    x + 1
}

#[tickprof::profile]
fn parent(x: u64) -> u64 {
    leaf(x) + leaf(x + 1)
}

#[test]
fn later_calls_are_counted_exactly_after_many_leaked_guards() {
    let leaks: u64 = std::env::var("LEAKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let calls: u64 = 11_000;
    let t = std::thread::spawn(move || {
        for _ in 0..leaks {
            std::mem::forget(tickprof::prof_guard!("leaked"));
        }
        let start = std::time::Instant::now();
        let mut s = 0;
        for i in 0..calls {
            s += parent(i);
        }
        eprintln!(
            "{calls} marked calls after {leaks} leaked guards: {:?}",
            start.elapsed()
        );
        s
    });
    assert!(t.join().expect("no panic") > 0);
    let r = tickprof::report();
    assert_eq!(r.find("::parent").expect("parent ran").calls, calls);
    assert_eq!(r.find("::leaf").expect("leaf ran").calls, 2 * calls);
    // The leaked guards never ended: no call of theirs is counted.
    assert!(r.find("::leaked").is_none());
    // Past the cap, calls are folded into overflow nodes, and said so.
    assert!(r.run.folded_calls >= 3 * calls, "{}", r.run.folded_calls);
    // The thread exited with every leaked frame still open: counted.
    assert_eq!(r.run.leaked, leaks);
    let text = r.text(&Default::default());
    assert!(
        text.contains(&format!("{leaks} guards never dropped")),
        "{text}"
    );
}
