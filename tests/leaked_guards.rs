//! Many leaked guards (`mem::forget`) past the calling-context tree's node
//! cap: later marked calls are still counted exactly, and each costs O(1)
//! (they used to scan the whole shadow stack beneath an overflow node:
//! after 1,000,000 leaks, ~14 ms per call; `scripts/stress_leaks.sh` times
//! the full-size case).
//!
//! The calls run in a child process with a small node cap of its own
//! (`TICKPROF_MAX_NODES=1000`): the cap is read once, at start-up, and the
//! other tests of this binary share its process.
#![cfg(feature = "enabled")]

use crate::support::child;

const CHILD: &str = "TPTEST_LEAKED_GUARDS_CHILD";

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
    // `TICKPROF_MAX_NODES` and `LEAKS` from this environment when set
    // (scripts/stress_leaks.sh: the default cap, a million leaks).
    let cap = std::env::var("TICKPROF_MAX_NODES").unwrap_or_else(|_| "1000".into());
    eprint!(
        "{}",
        child::run_checks(CHILD, &[("TICKPROF_MAX_NODES", &cap)])
    );
}

/// The child: the leaks, the calls and the checks.
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
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
