//! One calling-context tree node: a call path's counters and its child
//! cache. Written only by the owning thread (relaxed load + store, no
//! locked instruction), read by the report at any time.

use super::hist::Cells as HistCells;
use crate::counters::{accept, Cells, Reject};
use crate::site::CallSite;
use crate::switches::MAX_TICKS;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// One calling-context tree node. The first cache line holds what the hot
/// path touches: the one-entry child cache and the first counters.
#[repr(C, align(64))]
pub(crate) struct Node {
    /// The site of the child last entered from this node, plus how its
    /// calls are measured ([`Kind`]: sites are aligned to 8) …
    pub(super) mru_site: AtomicPtr<CallSite>,
    /// … and that child's node.
    pub(super) mru_child: AtomicPtr<Node>,
    /// The thread's latency histogram of the node's site (shared by the
    /// site's nodes on this thread); set before the node is published.
    pub(super) hist: AtomicPtr<HistCells>,
    /// The counters (see [`crate::counters`]).
    pub(crate) c: Cells,
    // Cold: written once before the node is published.
    pub(crate) site: AtomicPtr<CallSite>,
    pub(crate) index: AtomicU32,
    pub(crate) parent: AtomicU32,
    pub(crate) flags: AtomicU32,
    /// Marked calls open on the thread when this node's call runs, this
    /// one included (the root: 0): what the hooks are told. An overflow
    /// node keeps the depth of the first call folded into it.
    pub(crate) depth: AtomicU32,
    /// Two more entries of the child cache, for a node whose calls
    /// alternate between children (in the padding of the last cache line:
    /// the node stays 256 bytes). Filled by a cache miss, which moves
    /// the one-entry cache's previous child here (see
    /// [`Node::cache_child`]); a hit changes nothing.
    pub(super) ways: [Way; 2],
}

/// One entry of a node's extra child cache: a child's site plus its
/// [`Kind`] (as in the one-entry cache: one compare tells both), and its
/// node. A counted call checks these inline after the one-entry cache
/// ([`super::counted::Counted::enter`]).
pub(crate) struct Way {
    pub(super) site: AtomicPtr<CallSite>,
    pub(super) child: AtomicPtr<Node>,
}

/// How a cached child's calls are measured, kept beside it in the child
/// cache (added to the site's address in every entry), so that a cache hit tells the guard
/// what to do with one compare and no load of the child's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Kind {
    /// Timed, for good (its site was decided timed): read the clock.
    Timed = 0,
    /// Counted, for good: count the call, read no clock.
    Counted = 1,
    /// Neither yet (learning): the cold path times the call and moves
    /// the node's state on (`timing::settle`).
    Settle = 2,
}

/// The bits of a cache entry that hold its [`Kind`].
pub(super) const KIND_BITS: usize = 3;

impl Kind {
    /// The kind held in the low bits of a cache entry.
    #[cfg(test)]
    pub(super) fn of_bits(bits: usize) -> Kind {
        match bits & KIND_BITS {
            0 => Kind::Timed,
            1 => Kind::Counted,
            _ => Kind::Settle,
        }
    }
}

// Four cache lines with 64-bit pointers; fewer bytes with 32-bit ones
// (wasm32), never more.
const _: () = assert!(
    core::mem::size_of::<Node>() == 256
        || (cfg!(target_pointer_width = "32") && core::mem::size_of::<Node>() < 256),
    "the extra child cache lives in the node's padding"
);

impl Way {
    const fn new() -> Way {
        Way {
            site: AtomicPtr::new(core::ptr::null_mut()),
            child: AtomicPtr::new(core::ptr::null_mut()),
        }
    }
}

impl Node {
    pub(super) const fn new() -> Node {
        Node {
            mru_site: AtomicPtr::new(core::ptr::null_mut()),
            mru_child: AtomicPtr::new(core::ptr::null_mut()),
            hist: AtomicPtr::new(core::ptr::null_mut()),
            c: Cells::new(),
            site: AtomicPtr::new(core::ptr::null_mut()),
            index: AtomicU32::new(0),
            parent: AtomicU32::new(u32::MAX),
            flags: AtomicU32::new(0),
            depth: AtomicU32::new(0),
            ways: [Way::new(), Way::new()],
        }
    }

    /// Empties the child cache (its one entry and the extra ones): the
    /// next call of each child from this node is a lookup (owner thread
    /// only, or a `fork`'s child, where only that thread exists).
    #[cfg(unix)]
    pub(super) fn forget_children(&self) {
        self.mru_site
            .store(core::ptr::null_mut(), Ordering::Relaxed);
        self.mru_child
            .store(core::ptr::null_mut(), Ordering::Relaxed);
        for way in &self.ways {
            way.site.store(core::ptr::null_mut(), Ordering::Relaxed);
            way.child.store(core::ptr::null_mut(), Ordering::Relaxed);
        }
    }

    /// The child of `site` in the extra child cache, plus its [`Kind`];
    /// null when neither entry holds `site`.
    #[inline(always)]
    pub(super) fn way_child(&self, site: *mut CallSite) -> *mut Node {
        for way in &self.ways {
            let held = way.site.load(Ordering::Relaxed) as usize;
            // One xor tells the site and leaves its kind.
            let kind = held ^ site as usize;
            if kind <= KIND_BITS {
                return way.child.load(Ordering::Relaxed).wrapping_byte_add(kind);
            }
        }
        core::ptr::null_mut()
    }

    /// A cache miss makes (`site`, `child`, `kind`) the one-entry cache's:
    /// its previous entry moves to an empty extra entry, or, both full, to
    /// `ways[coin]` (owner thread only). Random replacement: a parent
    /// cycling through four children in turn would miss every time with
    /// least-recently-used replacement; with a coin, about half of its
    /// calls hit.
    pub(super) fn cache_child(
        &self,
        site: *mut CallSite,
        child: *mut Node,
        kind: Kind,
        coin: bool,
    ) {
        let old_site = self.mru_site.load(Ordering::Relaxed);
        if !old_site.is_null() {
            let old_child = self.mru_child.load(Ordering::Relaxed);
            let way = self
                .ways
                .iter()
                .find(|w| w.site.load(Ordering::Relaxed).is_null())
                .unwrap_or(&self.ways[usize::from(coin)]);
            way.site.store(old_site, Ordering::Relaxed);
            way.child.store(old_child, Ordering::Relaxed);
        }
        self.mru_site
            .store(site.wrapping_byte_add(kind as usize), Ordering::Relaxed);
        self.mru_child.store(child, Ordering::Relaxed);
    }

    /// `child`'s calls are measured as `kind` from now on: whichever entry
    /// of the child cache holds it says so (owner thread only).
    pub(super) fn recache(&self, child: *const Node, kind: Kind) {
        // SAFETY: callers pass nodes of the owner thread's arena, which
        // outlive the call.
        let Some(site) = unsafe { &*child }.site() else {
            return;
        };
        let entry = (site as *const CallSite)
            .cast_mut()
            .wrapping_byte_add(kind as usize);
        if self.mru_child.load(Ordering::Relaxed).cast_const() == child {
            self.mru_site.store(entry, Ordering::Relaxed);
        }
        for way in &self.ways {
            if way.child.load(Ordering::Relaxed).cast_const() == child {
                way.site.store(entry, Ordering::Relaxed);
            }
        }
    }

    /// Whether the node is an overflow node (past `TICKPROF_MAX_NODES`).
    #[inline(always)]
    pub(super) fn is_overflow(&self) -> bool {
        self.flags.load(Ordering::Relaxed) != 0
    }

    /// The node's site; `None` for a thread's root.
    pub(crate) fn site(&self) -> Option<&'static CallSite> {
        let p = self.site.load(Ordering::Relaxed);
        // SAFETY: `site` is null (root) or was set from a `&'static CallSite`.
        unsafe { p.cast_const().as_ref() }
    }

    /// Adds one finished call; deltas above `MAX_TICKS` are rejected.
    /// Single writer: relaxed load + store.
    ///
    /// `c.min` holds `min` negated (wrapping) and `c.max` the width of the
    /// range of accepted times, `max - min + 1` (0 before the first
    /// accepted call); [`Cells::load`] turns them back into `min` and
    /// `max`. A delta inside the range is accepted — it is at most
    /// `max`, itself accepted — and changes neither extreme: one subtract
    /// and one compare decide it. Anything else (the first call, a new
    /// shortest or longest, a reversed or oversized delta) takes the cold
    /// path, which applies the reject rule and moves the extremes.
    ///
    /// `check` says whether to ask if the thread is unwinding (a guard's
    /// drop); `false` when the call is known to have returned (the
    /// explicit exit `#[profile]` generates after the body), which saves
    /// the check on the hot path.
    #[inline(always)]
    pub(super) fn record(&self, delta: u64, check: bool) {
        self.record_then(delta, check, || {});
    }

    /// [`Node::record`], then `then()` (the guard's last store, and the
    /// value it hands back), on the hot path and the cold one alike.
    /// The cold path is the last thing the hot path does, and returns what
    /// `then` returns, so that no value of the marked function's lives
    /// across it (which would cost callee-saved registers, saved and
    /// restored on every call).
    #[inline(always)]
    pub(super) fn record_then<R>(&self, delta: u64, check: bool, then: impl FnOnce() -> R) -> R {
        bump(&self.c.calls, 1);
        let neg_min = self.c.min.load(Ordering::Relaxed);
        if delta.wrapping_add(neg_min) >= self.c.max.load(Ordering::Relaxed) {
            return self.record_cold(delta, check, then);
        }
        bump(&self.c.ticks, delta);
        self.hist_add(delta);
        if check && std::thread::panicking() {
            return self.unwound_cold(then);
        }
        then()
    }

    /// A call outside the range of accepted times so far: accepted (a new
    /// extreme) or rejected, by the reject rule; counted as unwound when
    /// it is.
    #[cold]
    #[inline(never)]
    fn record_cold<R>(&self, delta: u64, check: bool, then: impl FnOnce() -> R) -> R {
        match accept(delta, MAX_TICKS.load(Ordering::Relaxed)) {
            Ok(d) => {
                bump(&self.c.ticks, d);
                self.hist_add(d);
                self.min_max(d);
            }
            Err(r) => self.reject(r),
        }
        if check && std::thread::panicking() {
            bump(&self.c.unwound, 1);
        }
        then()
    }

    /// Counts an accepted call time in the site's histogram.
    #[inline(always)]
    pub(super) fn hist_add(&self, delta: u64) {
        let h = self.hist.load(Ordering::Relaxed);
        // SAFETY: set by `Arena::push` before the node was published, to
        // the cells of a histogram of the same arena (or a static), which
        // live as long as the node.
        unsafe { (*h).add(delta) }
    }

    /// The median of the timed calls of this node's site on this thread
    /// (see [`HistCells::median`]); `None` without a histogram or a call in
    /// it.
    pub(super) fn hist_median(&self) -> Option<f64> {
        let h = self.hist.load(Ordering::Relaxed);
        // SAFETY: as in `hist_add`.
        unsafe { (*h).median() }
    }

    /// A call ended while its thread unwinds.
    #[cold]
    #[inline(never)]
    fn unwound_cold<R>(&self, then: impl FnOnce() -> R) -> R {
        bump(&self.c.unwound, 1);
        then()
    }

    /// Folds one accepted call time into `min` and the width of the range
    /// (see [`Node::record`]). The width is written after `min`, so a
    /// report reading both between the two stores sees a range that is too
    /// narrow, never one that claims a call that was not made.
    pub(super) fn min_max(&self, delta: u64) {
        let min = self.c.min.load(Ordering::Relaxed).wrapping_neg();
        let width = self.c.max.load(Ordering::Relaxed);
        let (lo, hi) = if width == 0 {
            (delta, delta)
        } else {
            (min.min(delta), min.wrapping_add(width - 1).max(delta))
        };
        self.c.min.store(lo.wrapping_neg(), Ordering::Relaxed);
        self.c.max.store(hi - lo + 1, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::Acc;

    /// The range encoding of `min`/`max` gives the same figures as plain
    /// extremes, with the reject rule applied on the cold path.
    #[test]
    fn record_keeps_exact_extremes_and_rejects() {
        let n = Node::new();
        let hists = crate::record::hist::Table::new();
        n.hist
            .store(hists.cells(None).cast_mut(), Ordering::Relaxed);
        assert_eq!(n.c.load(), Acc::EMPTY);
        let over = MAX_TICKS.load(Ordering::Relaxed) + 1;
        for d in [5, 3, 9, 4, 9, 3, u64::MAX, over, 6] {
            n.record(d, true);
        }
        let a = n.c.load();
        assert_eq!((a.calls, a.ticks, a.min, a.max), (9, 39, 3, 9));
        // `over` is oversized, or reversed when MAX_TICKS is unbounded
        // (`i64::MAX`, as in unit tests): either way rejected.
        assert_eq!(a.reversed + a.oversized, 2);
        assert!(a.reversed >= 1);
        n.c.reset();
        assert_eq!(n.c.load(), Acc::EMPTY);
        n.record(0, true);
        let a = n.c.load();
        assert_eq!(
            (a.calls, a.min, a.max),
            (1, 0, 0),
            "a 0-tick call is a range"
        );
        n.record(u64::MAX, true);
        assert_eq!(n.c.load().reversed, 1, "reversed by one tick");
    }

    #[test]
    fn min_max_of_polls_folds_into_the_range() {
        let n = Node::new();
        n.min_max(10);
        n.min_max(2);
        n.min_max(7);
        let a = n.c.load();
        assert_eq!((a.min, a.max), (2, 10));
    }
}
