//! The pops: a guard's frame off the thread's shadow stack, on the fast
//! path (on top) or resynchronised (out of order), and what the frame
//! queries of the stack need.

use super::{slot, ThreadState};
use crate::record::frame;
use crate::record::node::{bump, Node};
use crate::record::registry;
use core::sync::atomic::Ordering;

impl ThreadState {
    /// Pops the guard's frame and records its delta (and `below`, the
    /// marked calls made beneath the call) if `node` is on top of the
    /// stack: the fast path. Returns whether it did; anything else
    /// (detached, traced, hooked, out of order, torn down) is left to the
    /// caller's cold path.
    ///
    /// It compares the node only, not the depth: a traced or hooked
    /// guard's node is tagged ([`frame::TAG`]) and a detached or
    /// unrecorded one holds a site, so neither can equal a stacked node.
    /// The same node can sit at two depths only for an overflow node
    /// (tree full), and then popping the top frame for a guard whose own
    /// frame is deeper records the same call on the same node; the guard of
    /// that top frame then finds it gone and is counted out of order.
    #[inline(always)]
    pub(in crate::record) fn pop_top(
        &self,
        node: *const Node,
        (start, end): (u64, u64),
        below: u64,
        check: bool,
    ) -> bool {
        if !self.pop_top_counted(node) {
            return false;
        }
        // SAFETY: the frame on top of this thread's live stack holds a
        // node of its arena, which outlives the state.
        unsafe { &*node }.record(end.wrapping_sub(start), below, check);
        true
    }

    /// Pops the frame of a counted call (its call was counted on entry)
    /// if `node` is on top of the stack, and counts one more ended call:
    /// the counted call's fast exit, and the pop of a timed one's (see
    /// [`ThreadState::pop_top`]). Returns whether it did.
    #[inline(always)]
    pub(in crate::record) fn pop_top_counted(&self, node: *const Node) -> bool {
        let top = self.depth.get();
        let stack = self.stack.load(Ordering::Relaxed);
        // SAFETY: `top < cap` holds for the current depth while the state is
        // set up; torn down, `stack` is `DEAD_STACK` and `top` is 0.
        let top_node = unsafe { slot(stack, top) };
        if top_node != node {
            return false;
        }
        self.depth.set(top - 1);
        self.ended.set(self.ended.get() + 1);
        true
    }

    /// Marked calls ended on this thread so far: a timed call's mark.
    #[inline(always)]
    pub(in crate::record) fn ended(&self) -> u64 {
        self.ended.get()
    }

    /// Counts one more ended call (a pop off the fast path).
    pub(in crate::record) fn note_ended(&self) {
        self.ended.set(self.ended.get() + 1);
    }

    /// The node of the frame below `depth` (the parent of the frame at
    /// `depth`, which the caller just pushed: `1 <= depth < cap`).
    pub(in crate::record) fn parent_of(&self, depth: usize) -> &Node {
        // SAFETY: the slots below the top of a set-up stack hold nodes of
        // this thread's arena, which outlives the state; `depth - 1` is
        // one of them (the caller's frame is at `depth >= 1`).
        unsafe { &*slot(self.stack.load(Ordering::Relaxed), depth - 1) }
    }

    /// The thread's entry in the sampler's table (`u32::MAX`: none).
    #[cfg(unix)]
    pub(in crate::record) fn sampler_slot(&self) -> u32 {
        self.sampler_slot.get()
    }

    /// The depth of the frame on top of the stack (0: none).
    #[inline(always)]
    pub(in crate::record) fn top_depth(&self) -> usize {
        self.depth.get()
    }

    /// Pops the frame at `depth`, resynchronising if it is not on top.
    /// Returns whether the call is to be recorded on `node`.
    #[inline(always)]
    pub(in crate::record) fn pop_frame(&self, depth: usize, node: *const Node) -> bool {
        let top = self.depth.get();
        let stack = self.stack.load(Ordering::Relaxed);
        // SAFETY: `top < cap` holds for the current depth while the state is
        // set up; torn down, `stack` is `DEAD_STACK` and `top` is 0.
        let top_node = unsafe { slot(stack, top) };
        if top == depth && top_node == node {
            self.depth.set(top - 1);
            self.note_ended();
            true
        } else {
            self.resync(depth, node)
        }
    }

    /// A guard dropped out of LIFO order.
    #[cold]
    #[inline(never)]
    fn resync(&self, depth: usize, node: *const Node) -> bool {
        if depth == frame::DETACHED {
            return false;
        }
        if self.dead.get() {
            // Begun on a stack that the thread's exit has since torn down.
            registry::note_lost();
            return false;
        }
        let top = self.depth.get();
        // SAFETY: as in `note_reentrant`.
        let arena = unsafe { &*self.arena.get() };
        let stack = self.stack.load(Ordering::Relaxed);
        // SAFETY: `depth <= top < cap` is checked first.
        if depth >= 1 && depth <= top && unsafe { slot(stack, depth) } == node {
            // Deeper frames were never closed (leaked or moved guards): pop
            // them with this one.
            bump(&arena.resynced, (top - depth) as u64);
            self.depth.set(depth - 1);
        } else {
            // This frame was popped already: keep the measured call, leave
            // the stack alone.
            bump(&arena.orphaned, 1);
        }
        self.note_ended();
        true
    }
}
