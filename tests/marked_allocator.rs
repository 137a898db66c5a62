//! A global allocator whose methods are marked: every allocation of the
//! process — the test harness's, std's thread start and exit, tickprof's
//! own bookkeeping — is a marked call. Threads that allocate only inside
//! marked functions start, record and exit cleanly (this crashed at thread
//! teardown with a null arena), and tickprof's own allocations are never
//! recorded as the program's.
//!
//! The allocator is `tests/all.rs`'s in a child process of its own
//! (`TPTEST_ALLOCATOR=marked`, picked before the first marked call), which
//! runs the work and its checks: the parent checks it passed.
#![cfg(feature = "enabled")]

use crate::support::child;

use std::alloc::{GlobalAlloc, Layout, System};

/// Marks every allocation (`tests/all.rs` installs it in the child).
pub struct Marked;

// SAFETY: forwards every call to `System` unchanged.
unsafe impl GlobalAlloc for Marked {
    #[tickprof::profile]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    #[tickprof::profile]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[tickprof::profile]
fn work(n: u64) -> usize {
    let v: Vec<u64> = (0..n).collect();
    let s: Vec<String> = v.iter().take(10).map(u64::to_string).collect();
    v.len() + s.len()
}

const CHILD: &str = "TPTEST_MARKED_ALLOCATOR_CHILD";

#[test]
fn threads_allocating_only_inside_marked_functions_start_and_end_cleanly() {
    child::run_checks(CHILD, &[(child::ALLOCATOR, "marked")]);
}

/// The child: threads that allocate only inside marked functions, then
/// the report's checks.
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    for round in 0..4 {
        let threads: Vec<_> = (0..8)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("alloc-{round}-{i}"))
                    .spawn(|| work(1000))
                    .expect("spawned")
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().expect("no panic"), 1010);
        }
    }
    let r = tickprof::report();
    assert_eq!(r.find("::work").expect("work ran").calls, 32);
    let alloc = r.find("::alloc").expect("the allocator is marked");
    // Each `work` call allocates at least its two vectors and ten strings.
    let under_work = alloc
        .callers
        .iter()
        .find(|e| e.name.ends_with("::work"))
        .expect("allocations inside work");
    assert!(under_work.calls >= 32 * 12, "{under_work:?}");
    // Building a report allocates a lot; none of it is recorded.
    let again = tickprof::report();
    assert_eq!(again.find("::alloc").map(|s| s.calls), Some(alloc.calls));
}
