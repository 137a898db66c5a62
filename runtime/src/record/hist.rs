//! A thread's latency histograms, one per site it has called: fixed arrays
//! of counters (see [`crate::hist`] for the buckets) that every tree node
//! of the site on this thread points to, so that the histogram is per
//! site, not per call path. Written only by the owning thread (relaxed
//! load + store, no locked instruction); read by reports at any time.
//!
//! The set-up is on the cold path that creates a node ([`Table::cells`]);
//! the hot path only adds ([`Cells::add`]).

use super::pagemap::PageMap;
use super::pages;
use crate::hist::{index_of, Hist, SiteHists, BUCKETS};
use crate::site::CallSite;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// `Cells::pending` when no call is pending. Its bucket, the last, lies
/// above every accepted time (accepted times are below `i64::MAX`, the
/// last bucket starts at `15 << 60`): counting it there discards it.
const NONE: u64 = u64::MAX;

/// One site's histogram on one thread: a count per bucket, and the last
/// call's time, counted at the next call.
///
/// Why one call late: the bucket's address depends on the call's time,
/// which the clock read has only just produced; a store to an address
/// that late holds back the loads that follow it (the next call's), which
/// cost ~7 ns a call on an AMD EPYC. The previous call's time has been in
/// memory since that call, so its bucket's address is known at once.
pub(crate) struct Cells {
    /// The time of the last call added, not yet in `counts` ([`NONE`]:
    /// none).
    pending: AtomicU64,
    counts: [AtomicU64; BUCKETS],
}

impl Cells {
    const fn new() -> Cells {
        Cells {
            pending: AtomicU64::new(NONE),
            counts: [const { AtomicU64::new(0) }; BUCKETS],
        }
    }

    /// Counts one accepted call of `ticks`: holds it as pending and counts
    /// the previous pending one. Owner thread only: relaxed loads and
    /// stores, no branch.
    #[inline(always)]
    pub(crate) fn add(&self, ticks: u64) {
        let prev = self.pending.load(Ordering::Relaxed);
        self.pending.store(ticks, Ordering::Relaxed);
        // SAFETY: `index_of` is below `BUCKETS` for every `u64` (the
        // buckets cover every `u64`: `hist::tests`).
        let c = unsafe { self.counts.get_unchecked(index_of(prev)) };
        c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// The counts, the pending call included. (Read while the owner adds,
    /// a copy may be one call short or over, like the node's counters.)
    fn load(&self) -> Hist {
        let discard = index_of(NONE);
        let mut h = Hist::from_dense(self.counts.iter().enumerate().map(|(i, c)| {
            if i == discard {
                0
            } else {
                c.load(Ordering::Relaxed)
            }
        }));
        let pending = self.pending.load(Ordering::Relaxed);
        if pending != NONE {
            h.merge(&Hist::one(pending));
        }
        h
    }

    /// The median call counted so far (the pending one left out, an
    /// approximation the rule it serves can take), in ticks: its bucket's
    /// midpoint; `None` when none is counted. Owner thread, cold path; no
    /// allocation, a few hundred loads.
    pub(crate) fn median(&self) -> Option<f64> {
        let discard = index_of(NONE);
        let count = |i: usize, c: &AtomicU64| {
            if i == discard {
                0
            } else {
                c.load(Ordering::Relaxed)
            }
        };
        let n: u64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, c)| count(i, c))
            .sum();
        let rank = n.div_ceil(2);
        let mut seen = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            seen += count(i, c);
            if n > 0 && seen >= rank {
                return Some(crate::hist::mid(i) as f64);
            }
        }
        None
    }

    fn reset(&self) {
        self.pending.store(NONE, Ordering::Relaxed);
        for c in &self.counts {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// Where a node with no site (a thread's root, never timed) points, and a
/// node whose histogram could not be made (the system refused the
/// memory): never reported.
static NOWHERE: Cells = Cells::new();

/// One site's histogram in a thread's list.
struct Entry {
    site: &'static CallSite,
    cells: Cells,
    /// The entry published before this one (null: none); set before this
    /// one is published, never changed.
    next: *const Entry,
}

/// A thread's histograms: a list that only grows (readers walk it without
/// a lock), and the owner's index of it by site. Entries and index come
/// from pages ([`super::pages`]): a histogram is made on a new node's
/// cold path, which may run in a signal handler.
pub(crate) struct Table {
    head: AtomicPtr<Entry>,
    /// Site address → its entry's cells. Owner thread only.
    by_site: UnsafeCell<PageMap>,
}

// SAFETY: `by_site` is touched only by the owning thread (`Table::cells`,
// owner only, like `Arena::push`, and never re-entered: node creation
// runs with the thread's marked calls turned away); the list is published
// with release stores of `head` and read after acquire loads, its entries
// are immutable but for atomic counters, and it is freed only on drop.
unsafe impl Sync for Table {}
// SAFETY: as above; the pointers are to entries the table owns.
unsafe impl Send for Table {}

impl Table {
    /// No histograms.
    pub(crate) const fn new() -> Table {
        Table {
            head: AtomicPtr::new(core::ptr::null_mut()),
            by_site: UnsafeCell::new(PageMap::new()),
        }
    }

    /// The histogram a new node of `site` records into (created on the
    /// site's first node on this thread). Owner thread only.
    pub(crate) fn cells(&self, site: Option<&'static CallSite>) -> *const Cells {
        let Some(site) = site else {
            return &NOWHERE;
        };
        let key = site as *const CallSite as u64;
        // SAFETY: owner thread only, never re-entered (see `impl Sync`).
        let by_site = unsafe { &mut *self.by_site.get() };
        if let Some(cells) = by_site.get(key, 0) {
            return cells as *const Cells;
        }
        let entry = pages::alloc_zeroed(core::mem::size_of::<Entry>()).cast::<Entry>();
        if entry.is_null() {
            return &NOWHERE;
        }
        // SAFETY: a fresh mapping, large enough and aligned; freed only
        // when the table drops.
        unsafe {
            entry.write(Entry {
                site,
                cells: Cells::new(),
                next: self.head.load(Ordering::Relaxed),
            });
        }
        // SAFETY: just written.
        let cells = unsafe { &(*entry).cells as *const Cells };
        if !by_site.insert(key, 0, cells as usize) {
            // SAFETY: not published; freed once.
            unsafe { pages::free(entry.cast(), core::mem::size_of::<Entry>()) };
            return &NOWHERE;
        }
        self.head.store(entry, Ordering::Release);
        cells
    }

    fn entries(&self) -> impl Iterator<Item = &Entry> {
        let mut p = self.head.load(Ordering::Acquire).cast_const();
        core::iter::from_fn(move || {
            // SAFETY: null or an entry published (release) before the
            // acquire load that led here; entries live as long as `self`.
            let e = unsafe { p.as_ref() }?;
            p = e.next;
            Some(e)
        })
    }

    /// A copy of every histogram that counted a call.
    pub(crate) fn snapshot(&self) -> SiteHists {
        let mut out = SiteHists::default();
        for e in self.entries() {
            let h = e.cells.load();
            if !h.is_empty() {
                out.insert(e.site, h);
            }
        }
        out
    }

    /// Back to no calls (the histograms are kept).
    pub(crate) fn reset(&self) {
        for e in self.entries() {
            e.cells.reset();
        }
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        let mut p = *self.head.get_mut();
        while !p.is_null() {
            // SAFETY: allocated by `cells` from pages, freed once here
            // (its cells are plain atomics: nothing to drop).
            let next = unsafe { (*p).next.cast_mut() };
            // SAFETY: as above.
            unsafe { pages::free(p.cast(), core::mem::size_of::<Entry>()) };
            p = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_histogram_per_site_counted_reset_and_freed() {
        fn m() {}
        static A: CallSite = CallSite::function(crate::site::path_of(m), None, "a.rs", 1);
        static B: CallSite = CallSite::function(crate::site::path_of(m), None, "a.rs", 2);
        let t = Table::new();
        let a = t.cells(Some(&A));
        assert_eq!(a, t.cells(Some(&A)), "a site's nodes share its histogram");
        let b = t.cells(Some(&B));
        assert_ne!(a, b);
        assert_eq!(t.cells(None), &NOWHERE as *const Cells);
        // SAFETY: cells of `t`, which is alive.
        let (a, b) = unsafe { (&*a, &*b) };
        for d in [3, 3, 1000, 1 << 62] {
            a.add(d);
        }
        assert_eq!(a.load().count(), 4, "the pending call counts");
        b.add(7);
        let s = t.snapshot();
        assert_eq!(s.get(&A).map(Hist::count), Some(4));
        assert_eq!(s.get(&B).map(Hist::count), Some(1));
        t.reset();
        assert_eq!(t.snapshot(), SiteHists::default());
        assert_eq!(a.median(), None, "reset");
        a.add(5);
        assert_eq!(a.load(), Hist::one(5), "nothing carried over the reset");
    }
}
