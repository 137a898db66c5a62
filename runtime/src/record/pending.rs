//! Allocation counts of a thread that has no tree yet: held here and
//! moved into its root when it makes its first marked call (see
//! [`super::alloc`] for the rules). A leaf: the allocation wrapper adds to
//! it, the stack's set-up empties it.

use super::node::{bump, Node};
use std::cell::Cell;

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

/// Adds one allocation (`alloc`) or one free of `bytes` bytes to the
/// calling thread's pending counts.
#[inline]
pub(super) fn count(alloc: bool, bytes: u64) {
    PENDING.with(|p| {
        let (c, b) = if alloc {
            (&p.allocs, &p.alloc_bytes)
        } else {
            (&p.frees, &p.freed_bytes)
        };
        add(c, 1);
        add(b, bytes);
    });
}

/// When the thread sets up its tree: moves what it counted before into its
/// root.
pub(super) fn fold_into(root: &Node) {
    PENDING.with(|p| {
        let take = |c: &Cell<u64>| c.replace(0);
        bump(&root.c.allocs, take(&p.allocs));
        bump(&root.c.alloc_bytes, take(&p.alloc_bytes));
        bump(&root.c.frees, take(&p.frees));
        bump(&root.c.freed_bytes, take(&p.freed_bytes));
    });
}
