//! Detached calls: marked calls made after their thread's state was torn
//! down (a destructor of another thread-local, or a signal handler that
//! interrupted the thread past its TLS destructors, in
//! `__libc_thread_freeres` holding the allocator's arena lock). They are
//! recorded into a fixed table of atomics, one row per site, with no
//! allocation and no lock (issue 54: building a one-node tree for each
//! allocated, and a handler that interrupted `free` deadlocked); a report
//! moves the rows into the finished threads' tree ([`drain_into`], at
//! capture time, under the registry's lock). A site beyond the table's
//! [`ROWS`] is counted as a lost call.

use crate::counters::Acc;
use crate::hist::{index_of, Hist, BUCKETS};
use crate::site::CallSite;
use crate::tree::Tree;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// Sites the table holds.
const ROWS: usize = 64;

/// One site's detached calls (the row is claimed by storing its site).
struct Row {
    site: AtomicPtr<CallSite>,
    calls: AtomicU64,
    unwound: AtomicU64,
    ticks: AtomicU64,
    /// `u64::MAX` when no accepted call (0 in a fresh row: see `min_of`).
    min: AtomicU64,
    max: AtomicU64,
    reversed: AtomicU64,
    oversized: AtomicU64,
    /// The accepted calls' durations, a count per bucket.
    hist: [AtomicU64; BUCKETS],
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Row = Row {
    site: AtomicPtr::new(core::ptr::null_mut()),
    calls: ZERO,
    unwound: ZERO,
    ticks: ZERO,
    min: ZERO,
    max: ZERO,
    reversed: ZERO,
    oversized: ZERO,
    hist: [ZERO; BUCKETS],
};

/// The table (zeroed static memory: pages are touched only when used).
static TABLE: [Row; ROWS] = [EMPTY; ROWS];

/// The row of `site`, claimed if it has none; `None` when the table is
/// full.
fn row(site: &'static CallSite) -> Option<&'static Row> {
    let p = (site as *const CallSite).cast_mut();
    let start = (p as usize >> 4) % ROWS;
    for k in 0..ROWS {
        let r = &TABLE[(start + k) % ROWS];
        let at = r.site.load(Ordering::Acquire);
        if at == p {
            return Some(r);
        }
        if at.is_null() {
            match r
                .site
                .compare_exchange(at, p, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(r),
                Err(now) if now == p => return Some(r),
                Err(_) => {}
            }
        }
    }
    None
}

/// Records one detached call of `site` (`one`: its counters, from
/// `Acc::one_call`). Atomics only: safe in a signal handler, at any point
/// of a thread's life. False when the table is full (the caller counts a
/// lost call).
pub(super) fn record(site: &'static CallSite, one: &Acc) -> bool {
    let Some(r) = row(site) else {
        return false;
    };
    r.calls.fetch_add(one.calls, Ordering::Relaxed);
    r.unwound.fetch_add(one.unwound, Ordering::Relaxed);
    r.reversed.fetch_add(one.reversed, Ordering::Relaxed);
    r.oversized.fetch_add(one.oversized, Ordering::Relaxed);
    if one.accepted() > 0 {
        r.ticks.fetch_add(one.ticks, Ordering::Relaxed);
        // Stored plus one, so that a fresh (zeroed) row reads "none".
        r.min.fetch_max(u64::MAX - one.min, Ordering::Relaxed);
        r.max.fetch_max(one.max, Ordering::Relaxed);
        r.hist[index_of(one.ticks)].fetch_add(1, Ordering::Relaxed);
    }
    true
}

/// Moves every row's calls into `finished` (report time, under the
/// registry's lock: allocation allowed). Each counter is taken with a
/// swap: a call recorded meanwhile is in this report or the next.
pub(super) fn drain_into(finished: &mut Tree) {
    for r in &TABLE {
        let p = r.site.load(Ordering::Acquire);
        // SAFETY: a non-null site is a `&'static CallSite` stored by `row`.
        let Some(site) = (unsafe { p.cast_const().as_ref() }) else {
            continue;
        };
        let calls = r.calls.swap(0, Ordering::Relaxed);
        if calls == 0 {
            continue;
        }
        let inverted_min = r.min.swap(0, Ordering::Relaxed);
        let acc = Acc {
            calls,
            unwound: r.unwound.swap(0, Ordering::Relaxed),
            ticks: r.ticks.swap(0, Ordering::Relaxed),
            min: if inverted_min == 0 {
                u64::MAX
            } else {
                u64::MAX - inverted_min
            },
            max: r.max.swap(0, Ordering::Relaxed),
            reversed: r.reversed.swap(0, Ordering::Relaxed),
            oversized: r.oversized.swap(0, Ordering::Relaxed),
            ..Acc::EMPTY
        };
        let mut tree = Tree::single(site, Acc::EMPTY);
        tree.nodes[1].acc = acc;
        let counts: Vec<u64> = r
            .hist
            .iter()
            .map(|c| c.swap(0, Ordering::Relaxed))
            .collect();
        let hist = Hist::from_dense(counts);
        if !hist.is_empty() {
            tree.hists.insert(site, hist);
        }
        finished.merge(&tree);
    }
}

/// Forgets every row's calls (a reset; a forked child's fresh profile):
/// atomics only, no allocation.
pub(super) fn clear() {
    for r in &TABLE {
        for c in [
            &r.calls,
            &r.unwound,
            &r.ticks,
            &r.min,
            &r.max,
            &r.reversed,
            &r.oversized,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        for c in &r.hist {
            c.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() {}
    static SITE: CallSite = CallSite::function(crate::site::path_of(m), Some("d"), "d.rs", 1);

    #[test]
    fn detached_calls_are_counted_without_allocating_and_drained_once() {
        record(&SITE, &Acc::one_call(10, 1000, false));
        record(&SITE, &Acc::one_call(30, 1000, true));
        record(&SITE, &Acc::one_call(5000, 1000, false));
        let mut t = Tree::new();
        drain_into(&mut t);
        let a = t.nodes.iter().find(|n| n.site.is_some()).unwrap().acc;
        assert_eq!((a.calls, a.ticks, a.min, a.max), (3, 40, 10, 30));
        assert_eq!((a.oversized, a.unwound), (1, 1));
        assert_eq!(t.hists.get(&SITE).unwrap().count(), 2);
        // Drained: the next report has nothing more.
        let mut again = Tree::new();
        drain_into(&mut again);
        assert!(again.nodes.iter().all(|n| n.site.is_none()));
        record(&SITE, &Acc::one_call(7, 1000, false));
        clear();
        drain_into(&mut again);
        assert!(again.nodes.iter().all(|n| n.site.is_none()));
    }
}
