//! Allocation counting: what `tickprof::Alloc` calls on every allocation,
//! reallocation and free, to count it against the calling thread's current
//! tree node.
//!
//! # The rules
//!
//! - An allocation (or free) is counted on the node on top of the calling
//!   thread's shadow stack: the innermost marked call running on that
//!   thread, or the thread's root (`<outside marked calls>`) when none is.
//! - A reallocation is one allocation of the new size plus one free of the
//!   old size (as DHAT counts it): a `String` grown from 8 to 64 bytes by
//!   doubling shows 4 allocations, 120 bytes, and 3 frees, 56 bytes.
//! - A free is counted where it happens: on the freeing thread's current
//!   node, whichever thread (or node) allocated the block.
//! - tickprof's own allocations (tree nodes, stacks, reports: all made with
//!   the thread's `busy` flag set) and those of its sampler thread are
//!   not counted.
//! - A thread that has not made a marked call yet has no tree: its
//!   allocations are held in this thread's pending counters ([`super::pending`]) and added to
//!   its root when it makes its first marked call. Those of a thread that
//!   never makes one are not counted (tickprof keeps no state there: setting
//!   it up from the allocator would need a thread-local with a destructor).
//! - After the thread's state is torn down (allocations made by later
//!   thread-local destructors), nothing is counted.
//!
//! The cost: a few thread-local loads, then a relaxed load and store per
//! counter on a node only this thread writes. No lock, no read-modify-write
//! atomic, no allocation, no thread-local with a destructor.

use super::node::bump;
use super::pending;
use super::stack::{current, AllocTarget};
use core::sync::atomic::{AtomicBool, Ordering};

/// Set the first time `tickprof::Alloc` counts anything: the reports show
/// allocation columns only when it is.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Whether the allocation wrapper has counted anything in this process.
pub(crate) fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Counts one allocation of `bytes` bytes on the calling thread.
#[inline]
pub(crate) fn on_alloc(bytes: usize) {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    count(true, bytes as u64);
}

/// Counts one free of `bytes` bytes on the calling thread.
#[inline]
pub(crate) fn on_free(bytes: usize) {
    count(false, bytes as u64);
}

/// Adds one allocation (`alloc`) or one free of `bytes` bytes where the
/// calling thread counts now.
#[inline(always)]
fn count(alloc: bool, bytes: u64) {
    match current().alloc_target() {
        AllocTarget::Node(n) => {
            let (c, b) = if alloc {
                (&n.c.allocs, &n.c.alloc_bytes)
            } else {
                (&n.c.frees, &n.c.freed_bytes)
            };
            bump(c, 1);
            bump(b, bytes);
        }
        AllocTarget::Pending => pending::count(alloc, bytes),
        AllocTarget::Skip => {}
    }
}

/// Counts one reallocation from `old` to `new` bytes: one allocation of the
/// new size and one free of the old.
#[inline]
pub(crate) fn on_realloc(old: usize, new: usize) {
    on_alloc(new);
    on_free(old);
}
