//! The hot path allocates nothing: 10 million marked calls on known paths
//! make no allocation and no new tree node. Memory grows with distinct call
//! paths only.
#![cfg(feature = "enabled")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use tickprof::{prof_scope, profile};

/// Counts every allocation, per thread: the marked calls' thread is the
/// one counted (the test harness allocates on its own threads meanwhile).
struct Counting;

thread_local! {
    /// This thread's allocations (const, no destructor: safe to touch
    /// from the allocator).
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// One more allocation on this thread (none counted during its teardown).
fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

/// This thread's allocations so far.
fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[profile]
fn leaf(x: u64) -> u64 {
    std::hint::black_box(x) ^ 1
}

#[profile]
fn middle(x: u64) -> u64 {
    prof_scope!("inner");
    leaf(x) + leaf(x + 1)
}

#[profile]
fn top(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_add(middle(i));
    }
    s
}

#[test]
fn ten_million_calls_allocate_nothing() {
    let _turn = crate::support::alone();
    // Warm up: creates this thread's tree and the nodes of every path.
    top(10);
    let nodes_before = tickprof::report().tree.len();
    let before = allocations();
    // 1 top + 2.5M × (middle + inner + 2 leaf) = 10,000,001 marked calls.
    let s = top(2_500_000);
    let after = allocations();
    std::hint::black_box(s);
    assert_eq!(
        after - before,
        0,
        "allocations during 10 million marked calls"
    );
    let r = tickprof::report();
    assert_eq!(r.tree.len(), nodes_before, "no new calling-context nodes");
    let calls: u64 = [
        "no_alloc::top",
        "no_alloc::middle",
        "no_alloc::middle::inner",
        "no_alloc::leaf",
    ]
    .iter()
    .map(|n| r.find(n).unwrap().calls)
    .sum();
    // Warm-up: 1 top, 10 middle, 10 inner, 20 leaf; then 1 top and 2.5M of each.
    assert_eq!(calls, 1 + 10 + 10 + 20 + 1 + 2_500_000 * 4);
}
