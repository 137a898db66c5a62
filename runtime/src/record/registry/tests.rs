//! The registry through the stack, as threads use it: live threads are
//! captured as they are, finished threads' trees stay, differences of
//! captures give what was recorded in between.

use super::*;
use crate::record::stack::current;
use crate::site::CallSite;

fn c() {}
// Internal: a test binary that records it prints no exit report.
static C: CallSite = CallSite::internal(crate::site::path_of(c), "r.rs", 1);

/// Records `n` calls of [`C`] on the calling thread.
fn calls(n: u64) {
    let s = current();
    for _ in 0..n {
        let (node, parent) = crate::record::cold::enter_recording(s, &C);
        assert!(s.pop_frame(node, parent));
        // SAFETY: a node of this thread's live arena.
        unsafe { &*node }.record(1, true);
    }
}

/// Calls of [`C`] in `t`.
fn calls_in(t: &Tree) -> u64 {
    t.nodes
        .iter()
        .filter(|n| n.site.is_some_and(|s| core::ptr::eq(s, &C)))
        .map(|n| n.acc.calls)
        .sum()
}

/// The row of the thread named `name` in `c`.
fn row<'a>(c: &'a Capture, name: &str) -> &'a ThreadTree {
    c.threads.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn thread_numbers_are_never_given_twice() {
    let ids: Vec<u64> = (0..100).map(|_| next_thread_id()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_live_thread_is_captured_as_it_is() {
    let name = "registry-tests-live";
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            calls(2);
            let c = capture(false);
            assert!(c.complete);
            let t = row(&c, name);
            assert!(!t.finished);
            assert_eq!(t.count, 1);
            assert_eq!(calls_in(&t.tree), 2);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_finished_threads_tree_stays_in_the_capture() {
    let name = "registry-tests-finished";
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(|| calls(3))
        .unwrap()
        .join()
        .unwrap();
    let c = capture(false);
    let t = row(&c, name);
    assert!(t.finished);
    assert_eq!(t.count, 1);
    assert_eq!(calls_in(&t.tree), 3);
    assert!(calls_in(&c.merged) >= 3);
}

#[test]
fn a_difference_of_captures_is_what_was_recorded_in_between() {
    let name = "registry-tests-minus";
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            calls(1);
            let before = capture(false);
            calls(4);
            let d = capture(false).minus(&before);
            assert_eq!(calls_in(&row(&d, name).tree), 4);
        })
        .unwrap()
        .join()
        .unwrap();
}
