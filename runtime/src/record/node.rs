//! One calling-context tree node: a call path's counters and its child
//! cache. Written only by the owning thread (relaxed load + store, no
//! locked instruction), read by the report at any time.

use crate::counters::{accept, Cells, Reject};
use crate::site::CallSite;
use crate::switches::MAX_TICKS;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// One calling-context tree node. The first cache line holds what the hot
/// path touches: the one-entry child cache and the first four counters.
#[repr(C, align(64))]
pub(crate) struct Node {
    /// The site of the child last entered from this node …
    pub(super) mru_site: AtomicPtr<CallSite>,
    /// … and that child's node.
    pub(super) mru_child: AtomicPtr<Node>,
    /// The counters (see [`crate::counters`]).
    pub(crate) c: Cells,
    // Cold: written once before the node is published.
    pub(crate) site: AtomicPtr<CallSite>,
    pub(crate) index: AtomicU32,
    pub(crate) parent: AtomicU32,
    pub(crate) flags: AtomicU32,
}

impl Node {
    pub(super) const fn new() -> Node {
        Node {
            mru_site: AtomicPtr::new(core::ptr::null_mut()),
            mru_child: AtomicPtr::new(core::ptr::null_mut()),
            c: Cells::new(),
            site: AtomicPtr::new(core::ptr::null_mut()),
            index: AtomicU32::new(0),
            parent: AtomicU32::new(u32::MAX),
            flags: AtomicU32::new(0),
        }
    }

    /// The node's site; `None` for a thread's root.
    pub(crate) fn site(&self) -> Option<&'static CallSite> {
        let p = self.site.load(Ordering::Relaxed);
        // SAFETY: `site` is null (root) or was set from a `&'static CallSite`.
        unsafe { p.cast_const().as_ref() }
    }

    /// Adds one finished call; deltas above `max_ticks` are rejected.
    /// Single writer: relaxed load + store.
    #[inline(always)]
    pub(super) fn record(&self, delta: u64, max_ticks: u64) {
        bump(&self.c.calls, 1);
        match accept(delta, max_ticks) {
            Ok(d) => {
                bump(&self.c.ticks, d);
                self.min_max(d);
            }
            // Each cold call is the last thing the hot path does, so that
            // no value of the marked function's has to live across it
            // (which would cost callee-saved registers, saved and restored
            // on every call).
            Err(r) => return self.reject_cold(r),
        }
        if std::thread::panicking() {
            self.unwound_cold();
        }
    }

    /// A rejected call: counted by kind (and as unwound when it is).
    #[cold]
    #[inline(never)]
    fn reject_cold(&self, why: Reject) {
        self.reject(why);
        if std::thread::panicking() {
            bump(&self.c.unwound, 1);
        }
    }

    /// A call ended while its thread unwinds.
    #[cold]
    #[inline(never)]
    fn unwound_cold(&self) {
        bump(&self.c.unwound, 1);
    }

    /// Folds one accepted call time into `min` and `max`.
    #[inline(always)]
    pub(super) fn min_max(&self, delta: u64) {
        if delta < self.c.min.load(Ordering::Relaxed) {
            self.c.min.store(delta, Ordering::Relaxed);
        }
        if delta > self.c.max.load(Ordering::Relaxed) {
            self.c.max.store(delta, Ordering::Relaxed);
        }
    }

    /// Adds one poll of an async call: busy time, no call. Returns the
    /// accepted delta (0 if rejected).
    pub(super) fn record_poll(&self, delta: u64) -> u64 {
        match accept(delta, MAX_TICKS.load(Ordering::Relaxed)) {
            Ok(d) => {
                bump(&self.c.ticks, d);
                d
            }
            Err(r) => {
                self.reject(r);
                0
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn reject(&self, why: Reject) {
        match why {
            Reject::Reversed => bump(&self.c.reversed, 1),
            Reject::Oversized => bump(&self.c.oversized, 1),
        }
    }
}

/// Adds `by` to a counter only this thread writes: a relaxed load and
/// store, no locked instruction.
#[inline(always)]
pub(crate) fn bump(a: &AtomicU64, by: u64) {
    a.store(
        a.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}
