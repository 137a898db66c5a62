//! An exit whose call is not on top: guards dropped out of order, moved,
//! or leaked (`mem::forget`), and a state torn down under a guard.

use super::ThreadState;
use crate::record::node::{bump, Node};
use crate::record::registry;
use core::sync::atomic::Ordering;

/// Ancestors an out-of-order exit looks through for its call (deeper, it
/// is taken as already popped).
const SCAN: usize = 1 << 16;

impl ThreadState {
    /// A guard's exit whose `node` is not on top. When `node` is an
    /// ancestor of the top (calls opened under it were never closed:
    /// leaked or moved guards), they are closed with it and its `parent`
    /// is the top again; otherwise its frame was closed already (by such a
    /// resynchronisation): the call is recorded and the top left alone.
    /// Returns whether the call is to be recorded.
    #[cold]
    #[inline(never)]
    pub(in crate::record) fn resync(&self, node: *const Node, parent: usize) -> bool {
        if self.dead.get() {
            // Begun on a tree that the thread's exit has since torn down.
            registry::note_lost();
            return false;
        }
        let Some(arena) = self.arena() else {
            return false;
        };
        match self.levels_above(node) {
            Some(k) => {
                bump(&arena.resynced, k as u64);
                self.drop_overflow();
                self.set_top(parent as *const Node);
            }
            None => bump(&arena.orphaned, 1),
        }
        true
    }

    /// The exit of a call on an overflow node (see `overflow`): closed
    /// with the calls opened above it, or, not open, orphaned. Returns
    /// whether the call is to be recorded.
    pub(in crate::record) fn pop_overflow(&self, node: *const Node, parent: *const Node) -> bool {
        let Some(arena) = self.arena() else {
            return false;
        };
        match self.close_overflow(node, parent) {
            Some(0) => {}
            Some(above) => bump(&arena.resynced, above as u64),
            None => bump(&arena.orphaned, 1),
        }
        true
    }

    /// How many calls are open above the regular `node` (the open calls on
    /// overflow nodes, then the chain from the regular node under them, or
    /// the top, up to the root), if it is on that chain.
    fn levels_above(&self, node: *const Node) -> Option<usize> {
        let arena = self.arena()?;
        let opens = self.overflow();
        let mut n = opens.base().unwrap_or_else(|| self.top());
        let above = opens.len();
        for k in 0..SCAN {
            if n == node {
                return Some(above + k);
            }
            // SAFETY: the top and its ancestors are nodes of this thread's
            // arena (a sentinel top has no site: the walk stops there).
            let here = unsafe { &*n };
            if here.site().is_none() || here.flags.load(Ordering::Relaxed) != 0 {
                return None;
            }
            n = arena.get(here.parent.load(Ordering::Relaxed) as usize)? as *const Node;
        }
        None
    }

    /// Calls open on this thread: its top's depth in the tree, or, with
    /// calls open on overflow nodes, theirs above the regular node they
    /// were opened under. At its exit, the guards that were never dropped.
    pub(in crate::record) fn open_calls(&self) -> u64 {
        let opens = self.overflow();
        let base = opens.base().unwrap_or_else(|| self.top());
        // SAFETY: the base is a sentinel or a node of this thread's arena.
        u64::from(unsafe { &*base }.depth.load(Ordering::Relaxed)) + opens.len() as u64
    }
}
