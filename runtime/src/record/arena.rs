//! One thread's tree nodes, in segments that never move.
//!
//! The arena grows by segments of doubling size, so a node's address is
//! stable for the arena's life and the report can read published nodes
//! while the owner appends more. [`Arena::snapshot`] copies the counters
//! into a plain [`Tree`].

use super::hist::Table as Hists;
use super::node::Node;
use super::trace::Shared as TraceBuffer;
use crate::site::CallSite;
use crate::tree::{TNode, Tree};
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

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
    thread_name: String,
    /// The thread's name found later, for a thread whose first marked call
    /// could not ask std for it.
    late_name: OnceLock<String>,
    pub(crate) thread_id: u64,
    /// Guards dropped after deeper guards that were never dropped (leaked or
    /// moved): the deeper frames were popped.
    pub(crate) resynced: AtomicU64,
    /// Guards dropped after their frame had already been popped.
    pub(crate) orphaned: AtomicU64,
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
}

fn seg_of(i: usize) -> (usize, usize) {
    let j = i + (1 << BASE_SHIFT);
    let seg = (usize::BITS - 1 - j.leading_zeros() - BASE_SHIFT) as usize;
    (seg, j - ((1 << BASE_SHIFT) << seg))
}

fn seg_len(seg: usize) -> usize {
    (1 << BASE_SHIFT) << seg
}

impl Arena {
    pub(crate) fn new(thread_name: String, thread_id: u64) -> Arena {
        Arena {
            segs: [const { AtomicPtr::new(core::ptr::null_mut()) }; SEGMENTS],
            len: AtomicUsize::new(0),
            thread_name,
            late_name: OnceLock::new(),
            thread_id,
            resynced: AtomicU64::new(0),
            orphaned: AtomicU64::new(0),
            reentrant: AtomicU64::new(0),
            leaked: AtomicU64::new(0),
            trace: TraceBuffer::default(),
            hists: Hists::new(),
        }
    }

    /// The thread's name.
    pub(crate) fn name(&self) -> &str {
        self.late_name.get().unwrap_or(&self.thread_name)
    }

    /// Gives the thread its real name, once (see `thread_name`).
    pub(crate) fn set_late_name(&self, name: String) {
        let _ = self.late_name.set(name);
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
            let nodes: Box<[Node]> = (0..seg_len(seg)).map(|_| Node::new()).collect();
            base = Box::into_raw(nodes).cast::<Node>();
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
        t
    }

    /// Zeroes every counter (the structure is kept).
    pub(crate) fn reset(&self) {
        for node in self.nodes() {
            node.c.reset();
        }
        self.hists.reset();
        for a in [
            &self.resynced,
            &self.orphaned,
            &self.reentrant,
            &self.leaked,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.trace.clear();
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for (seg, p) in self.segs.iter().enumerate() {
            let base = p.load(Ordering::Acquire);
            if !base.is_null() {
                let slice = core::ptr::slice_from_raw_parts_mut(base, seg_len(seg));
                // SAFETY: allocated in `push` as a `Box<[Node]>` of exactly
                // `seg_len(seg)` nodes; dropping the arena frees it once.
                drop(unsafe { Box::from_raw(slice) });
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
        let a = Arena::new("t".to_owned(), 1);
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
