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
//!   the thread's `busy` flag set) and those of its calibration thread are
//!   not counted.
//! - A thread that has not made a marked call yet has no tree: its
//!   allocations are held in this thread's [`PENDING`] counters and added to
//!   its root when it makes its first marked call. Those of a thread that
//!   never makes one are not counted (tickprof keeps no state there: setting
//!   it up from the allocator would need a thread-local with a destructor).
//! - After the thread's state is torn down (allocations made by later
//!   thread-local destructors), nothing is counted.
//!
//! The cost: a few thread-local loads, then a relaxed load and store per
//! counter on a node only this thread writes. No lock, no read-modify-write
//! atomic, no allocation, no thread-local with a destructor.

use super::node::{bump, Node};
use super::stack::{current, AllocTarget};
use core::sync::atomic::{AtomicBool, Ordering};
use std::cell::Cell;

/// Set the first time `tickprof::Alloc` counts anything: the reports show
/// allocation columns only when it is.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Whether the allocation wrapper has counted anything in this process.
pub(crate) fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Counts of a thread that has no tree yet: allocations, bytes, frees,
/// freed bytes. Const-initialised, no destructor.
struct Pending {
    allocs: Cell<u64>,
    alloc_bytes: Cell<u64>,
    frees: Cell<u64>,
    freed_bytes: Cell<u64>,
}

thread_local! {
    static PENDING: Pending = const {
        Pending {
            allocs: Cell::new(0),
            alloc_bytes: Cell::new(0),
            frees: Cell::new(0),
            freed_bytes: Cell::new(0),
        }
    };
}

fn add(c: &Cell<u64>, by: u64) {
    c.set(c.get().wrapping_add(by));
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
        AllocTarget::Pending => PENDING.with(|p| {
            let (c, b) = if alloc {
                (&p.allocs, &p.alloc_bytes)
            } else {
                (&p.frees, &p.freed_bytes)
            };
            add(c, 1);
            add(b, bytes);
        }),
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

/// When the thread sets up its tree: moves what it counted before into its
/// root (or drops it, on tickprof's calibration thread).
pub(super) fn fold_pending(root: &Node, keep: bool) {
    PENDING.with(|p| {
        let take = |c: &Cell<u64>| c.replace(0);
        let (a, ab, f, fb) = (
            take(&p.allocs),
            take(&p.alloc_bytes),
            take(&p.frees),
            take(&p.freed_bytes),
        );
        if keep {
            bump(&root.c.allocs, a);
            bump(&root.c.alloc_bytes, ab);
            bump(&root.c.frees, f);
            bump(&root.c.freed_bytes, fb);
        }
    });
}
