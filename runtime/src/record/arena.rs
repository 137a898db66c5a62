//! One thread's tree nodes, in segments that never move.
//!
//! The arena grows by segments of doubling size, so a node's address is
//! stable for the arena's life and the report can read published nodes
//! while the owner appends more. [`Arena::snapshot`] copies the counters
//! into a plain [`Tree`].
//!
//! The arena, its segments and its lookup tables come from pages
//! ([`super::pages`]), never from the program's allocator: a thread's
//! first marked call, or its first call of a new path, may run in a
//! signal handler that interrupted that allocator. The arena is shared by
//! its thread and the reports that read it: a count of references
//! ([`Arena::create`], [`Arena::retain`], [`Arena::release`]), the last
//! one freeing it.

use super::hist::Table as Hists;
use super::node::Node;
use super::pages;
use super::trace::Shared as TraceBuffer;
use crate::site::CallSite;
use crate::tree::{TNode, Tree};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// The sampler's thread's name (`record::sampler`): tickprof's own
/// thread, whose marked calls (the calibration's) are not the program's.
pub(crate) const SAMPLER_THREAD: &str = "tickprof sampler";

/// First segment holds `1 << BASE_SHIFT` nodes; segment k holds twice k-1.
const BASE_SHIFT: u32 = 4;
const SEGMENTS: usize = 40;

/// One thread's tree nodes, in creation order (a parent before its
/// children), and the thread's other records.
pub(crate) struct Arena {
    segs: [AtomicPtr<Node>; SEGMENTS],
    len: AtomicUsize,
    /// The thread's name as known at its first marked call: its std name,
    /// or a placeholder when that call may have run in a signal handler
    /// before std set the thread's handle (see `late_name`).
    thread_name: Name,
    /// The thread's name found later, for a thread whose first marked call
    /// could not ask std for it: written once by the owner, then `late`
    /// set (release).
    late_name: UnsafeCell<Name>,
    late: AtomicBool,
    /// References: the thread's, and each report's reading it.
    refs: AtomicUsize,
    /// The next live arena in the registry's list (see `registry`).
    pub(super) next: AtomicPtr<Arena>,
    pub(crate) thread_id: u64,
    /// Guards dropped after deeper guards that were never dropped (leaked or
    /// moved): the deeper frames were popped.
    pub(crate) resynced: AtomicU64,
    /// Guards dropped after their frame had already been popped.
    pub(crate) orphaned: AtomicU64,
    /// Ticks the thread's set-up took (its first marked call's, outside
    /// that call's time).
    pub(crate) setup_ticks: AtomicU64,
    /// Calls made from inside the profiler's own bookkeeping (e.g. a marked
    /// global allocator), not recorded.
    pub(crate) reentrant: AtomicU64,
    /// Frames still open when the thread exited: guards never dropped
    /// (leaked with `mem::forget`, or moved somewhere never dropped).
    pub(crate) leaked: AtomicU64,
    /// Individual call events, when tracing is on.
    pub(crate) trace: TraceBuffer,
    /// The thread's latency histograms, one per site.
    hists: Hists,
    /// The thread's program-counter samples (feature `inlined`; null:
    /// none), in pages of their own, freed with the arena.
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    pcs: AtomicPtr<super::pcs::table::Pcs>,
}

fn seg_of(i: usize) -> (usize, usize) {
    let j = i + (1 << BASE_SHIFT);
    let seg = (usize::BITS - 1 - j.leading_zeros() - BASE_SHIFT) as usize;
    (seg, j - ((1 << BASE_SHIFT) << seg))
}

fn seg_len(seg: usize) -> usize {
    (1 << BASE_SHIFT) << seg
}

/// A thread's name, held in the arena (no allocation): at most
/// [`Name::MAX`] bytes, cut at a character boundary.
#[derive(Clone, Copy)]
pub(crate) struct Name {
    bytes: [u8; Name::MAX],
    len: u8,
}

impl Name {
    /// Bytes a name keeps.
    pub(crate) const MAX: usize = 63;

    /// `s`, cut to [`Name::MAX`] bytes at a character boundary.
    pub(crate) fn new(s: &str) -> Name {
        let mut n = Name {
            bytes: [0; Name::MAX],
            len: 0,
        };
        n.push(s);
        n
    }

    /// Appends `s`, as much of it as fits.
    pub(crate) fn push(&mut self, s: &str) {
        let mut end = s.len().min(Name::MAX - usize::from(self.len));
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let at = usize::from(self.len);
        self.bytes[at..at + end].copy_from_slice(&s.as_bytes()[..end]);
        self.len += end as u8;
    }

    /// `<thread N>`, written without allocating.
    pub(crate) fn placeholder(id: u64) -> Name {
        let mut n = Name::new("<thread ");
        n.push(crate::digits::Decimal::new(id).as_str());
        n.push(">");
        n
    }

    pub(crate) fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("<thread>")
    }
}

impl Arena {
    pub(crate) fn new(thread_name: Name, thread_id: u64) -> Arena {
        Arena {
            segs: [const { AtomicPtr::new(core::ptr::null_mut()) }; SEGMENTS],
            len: AtomicUsize::new(0),
            thread_name,
            late_name: UnsafeCell::new(Name::new("")),
            late: AtomicBool::new(false),
            refs: AtomicUsize::new(1),
            setup_ticks: AtomicU64::new(0),
            next: AtomicPtr::new(core::ptr::null_mut()),
            thread_id,
            resynced: AtomicU64::new(0),
            orphaned: AtomicU64::new(0),
            reentrant: AtomicU64::new(0),
            leaked: AtomicU64::new(0),
            trace: TraceBuffer::default(),
            hists: Hists::new(),
            #[cfg(all(feature = "inlined", target_os = "linux"))]
            pcs: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// The thread's program-counter samples, made on first use (its
    /// set-up); `None` when the system refuses the memory. Owner only.
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    pub(crate) fn pcs_or_new(&self) -> Option<&super::pcs::table::Pcs> {
        let mut p = self.pcs.load(Ordering::Acquire);
        if p.is_null() {
            // Zeroed memory is an empty table (atomics all 0).
            p = pages::alloc_zeroed(core::mem::size_of::<super::pcs::table::Pcs>()).cast();
            if p.is_null() {
                return None;
            }
            self.pcs.store(p, Ordering::Release);
        }
        // SAFETY: a table in pages of its own, freed when the arena drops.
        Some(unsafe { &*p })
    }

    /// The thread's program-counter samples, if it has a table.
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    pub(crate) fn pcs(&self) -> Option<&super::pcs::table::Pcs> {
        // SAFETY: null, or a table freed only when the arena drops.
        unsafe { self.pcs.load(Ordering::Acquire).as_ref() }
    }

    /// A new arena in pages, with one reference (its thread's); null
    /// when the system refuses the memory.
    pub(crate) fn create(thread_name: Name, thread_id: u64) -> *const Arena {
        let p = pages::alloc_zeroed(core::mem::size_of::<Arena>()).cast::<Arena>();
        if !p.is_null() {
            // SAFETY: a fresh mapping, page-aligned, large enough.
            unsafe { p.write(Arena::new(thread_name, thread_id)) };
        }
        p
    }

    /// One more reference (a report about to read the arena).
    pub(crate) fn retain(&self) {
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    /// Gives back one reference; the last frees the arena.
    ///
    /// # Safety
    ///
    /// `p` came from [`Arena::create`], and the caller holds a reference
    /// it does not use after this call.
    pub(crate) unsafe fn release(p: *const Arena) {
        // SAFETY: the caller holds a reference: the arena is alive.
        let a = unsafe { &*p };
        if a.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: the last reference: nobody else reads it; written by
            // `create`, dropped and freed once here.
            unsafe {
                core::ptr::drop_in_place(p.cast_mut());
                pages::free(p.cast_mut().cast(), core::mem::size_of::<Arena>());
            }
        }
    }

    /// The thread's name.
    pub(crate) fn name(&self) -> &str {
        if self.late.load(Ordering::Acquire) {
            // SAFETY: written once before `late` was set (release), never
            // again.
            return unsafe { &*self.late_name.get() }.as_str();
        }
        self.thread_name.as_str()
    }

    /// Whether this is tickprof's own thread (the sampler's, whose
    /// calibration makes marked calls on tickprof's internal sites).
    pub(crate) fn is_tools(&self) -> bool {
        self.thread_name.as_str() == SAMPLER_THREAD
    }

    /// Whether the thread was named after its first marked call (listed
    /// under a placeholder before).
    pub(crate) fn named_late(&self) -> bool {
        self.late.load(Ordering::Acquire)
    }

    /// Gives the thread its real name, once (see `thread_name`). Owner
    /// thread only.
    pub(crate) fn set_late_name(&self, name: &str) {
        if self.late.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: only the owner writes it, once, before `late` is set;
        // readers read it only after.
        unsafe { *self.late_name.get() = Name::new(name) };
        self.late.store(true, Ordering::Release);
    }

    /// Number of published nodes.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Node `i`, if published.
    pub(crate) fn get(&self, i: usize) -> Option<&Node> {
        if i >= self.len() {
            return None;
        }
        let (seg, off) = seg_of(i);
        let base = self.segs[seg].load(Ordering::Acquire);
        // SAFETY: node `i` is published (i < len, acquire), so its segment was
        // allocated with `seg_len(seg)` nodes and stored before `len` was
        // released; segments are freed only when the arena drops.
        unsafe { base.add(off).as_ref() }
    }

    /// Every published node, in creation order.
    pub(crate) fn nodes(&self) -> impl Iterator<Item = &Node> {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// Appends a node. Owner thread only.
    pub(super) fn push(
        &self,
        site: Option<&'static CallSite>,
        parent: u32,
        flags: u32,
    ) -> Option<*const Node> {
        let i = self.len.load(Ordering::Relaxed);
        let index = u32::try_from(i).ok()?;
        let (seg, off) = seg_of(i);
        if seg >= SEGMENTS {
            return None;
        }
        let mut base = self.segs[seg].load(Ordering::Relaxed);
        if base.is_null() {
            base = pages::alloc_zeroed(seg_len(seg) * core::mem::size_of::<Node>()).cast::<Node>();
            if base.is_null() {
                return None;
            }
            for k in 0..seg_len(seg) {
                // SAFETY: a fresh mapping of `seg_len(seg)` nodes.
                unsafe { base.add(k).write(Node::new()) };
            }
            self.segs[seg].store(base, Ordering::Release);
        }
        // SAFETY: `off < seg_len(seg)` by construction of `seg_of`, and the
        // segment is allocated with that many nodes.
        let node = unsafe { &*base.add(off) };
        node.site.store(
            site.map_or(core::ptr::null_mut(), |s| (s as *const CallSite).cast_mut()),
            Ordering::Relaxed,
        );
        node.index.store(index, Ordering::Relaxed);
        node.parent.store(parent, Ordering::Relaxed);
        node.flags.store(flags, Ordering::Relaxed);
        node.hist
            .store(self.hists.cells(site).cast_mut(), Ordering::Relaxed);
        self.len.store(i + 1, Ordering::Release);
        Some(node as *const Node)
    }

    /// Copies the counters into a plain tree.
    pub(crate) fn snapshot(&self) -> Tree {
        let mut t = Tree::with_capacity(self.len());
        for node in self.nodes() {
            t.nodes.push(TNode {
                site: node.site(),
                parent: node.parent.load(Ordering::Relaxed),
                flags: node.flags.load(Ordering::Relaxed),
                acc: node.c.load(),
            });
        }
        t.hists = self.hists.snapshot();
        #[cfg(all(feature = "inlined", target_os = "linux"))]
        if let Some(pcs) = self.pcs() {
            for (node, pc, count) in pcs.snapshot() {
                *t.pcs.entry((node, pc)).or_insert(0) += count;
            }
            t.pcs_dropped = pcs.dropped();
        }
        t
    }

    /// Empties every node's child cache (see [`Node::forget_children`]).
    #[cfg(unix)]
    pub(crate) fn forget_children(&self) {
        for node in self.nodes() {
            node.forget_children();
        }
    }

    /// Zeroes every counter (the structure is kept).
    pub(crate) fn reset(&self) {
        for node in self.nodes() {
            node.c.reset();
        }
        self.hists.reset();
        #[cfg(all(feature = "inlined", target_os = "linux"))]
        if let Some(pcs) = self.pcs() {
            pcs.reset();
        }
        for a in [
            &self.resynced,
            &self.orphaned,
            &self.reentrant,
            &self.leaked,
            &self.setup_ticks,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.trace.clear();
    }
}

// SAFETY: the name written late is behind `late` (release/acquire);
// everything else is atomics or `Sync` types.
unsafe impl Sync for Arena {}
// SAFETY: as above; an arena is freed by whichever holder releases last.
unsafe impl Send for Arena {}

impl Drop for Arena {
    fn drop(&mut self) {
        #[cfg(all(feature = "inlined", target_os = "linux"))]
        {
            let p = *self.pcs.get_mut();
            if !p.is_null() {
                // SAFETY: from `pcs_or_new`, freed once here (plain
                // atomics: nothing to drop).
                unsafe { pages::free(p.cast(), core::mem::size_of::<super::pcs::table::Pcs>()) };
            }
        }
        for (seg, p) in self.segs.iter().enumerate() {
            let base = p.load(Ordering::Acquire);
            if !base.is_null() {
                // SAFETY: allocated in `push` from pages, `seg_len(seg)`
                // nodes (plain atomics: nothing to drop); freed once here.
                unsafe { pages::free(base.cast(), seg_len(seg) * core::mem::size_of::<Node>()) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_indices_without_gaps() {
        let mut expect = (0usize, 0usize);
        for i in 0..10_000 {
            let (s, o) = seg_of(i);
            assert_eq!((s, o), expect, "index {i}");
            expect = if o + 1 == seg_len(s) {
                (s + 1, 0)
            } else {
                (s, o + 1)
            };
        }
    }

    #[test]
    fn pushed_nodes_are_published_and_snapshotted() {
        fn m() {}
        static SITE: CallSite = CallSite::function(crate::site::path_of(m), None, "a.rs", 1);
        let a = Arena::new(Name::new("t"), 1);
        let root = a.push(None, u32::MAX, 0).unwrap();
        for _ in 0..100 {
            a.push(Some(&SITE), 0, 0).unwrap();
        }
        assert_eq!(a.len(), 101);
        // SAFETY: `root` is a node of `a`, which is alive.
        let root = unsafe { &*root };
        assert!(root.site().is_none());
        let t = a.snapshot();
        assert_eq!(t.nodes.len(), 101);
        assert!(t.nodes[1..]
            .iter()
            .all(|n| n.parent == 0 && n.site.is_some()));
    }
}
