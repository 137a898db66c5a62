//! Calls open on overflow nodes (past `TICKPROF_MAX_NODES`): an overflow
//! node is shared by every path it folds, so the tree cannot say which
//! calls are open above it, as it does for regular nodes. Their entries
//! and exits take the cold paths, which keep them here, in order: what a
//! resynchronisation and the count of open calls need (a shadow stack of
//! the overflow region only; the regular calls under it are the tree's
//! path of its base).

use super::ThreadState;
use crate::record::node::Node;
use crate::record::pages;

/// One open call on an overflow node: the node and its parent.
#[derive(Clone, Copy)]
struct Open {
    node: *const Node,
    parent: *const Node,
}

/// The open overflow calls, oldest first, in pages of tickprof's own (a
/// call past the cap may run in a signal handler).
pub(super) struct Opens {
    p: *mut Open,
    cap: usize,
    len: usize,
}

/// Open calls a first allocation holds.
const FIRST: usize = pages::PAGE / core::mem::size_of::<Open>();

impl Opens {
    pub(super) const fn new() -> Opens {
        Opens {
            p: core::ptr::null_mut(),
            cap: 0,
            len: 0,
        }
    }

    /// Calls open.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The parent of the oldest: the regular node the region is under.
    pub(super) fn base(&self) -> Option<*const Node> {
        // SAFETY: `len` entries are written.
        (self.len > 0).then(|| unsafe { (*self.p).parent })
    }

    /// The `i`th open call (oldest first).
    fn get(&self, i: usize) -> Option<Open> {
        // SAFETY: `i < len` entries are written.
        (i < self.len).then(|| unsafe { *self.p.add(i) })
    }

    /// Opens a call; false when no memory could be had (the call is then
    /// not kept: a later exit of it counts as out of order).
    fn push(&mut self, o: Open) -> bool {
        if self.len == self.cap && !self.grow() {
            return false;
        }
        // SAFETY: `len < cap` after growing.
        unsafe { self.p.add(self.len).write(o) };
        self.len += 1;
        true
    }

    fn grow(&mut self) -> bool {
        let cap = if self.cap == 0 { FIRST } else { self.cap * 2 };
        let bytes = cap * core::mem::size_of::<Open>();
        let p = pages::alloc_zeroed(bytes).cast::<Open>();
        if p.is_null() {
            return false;
        }
        if !self.p.is_null() {
            // SAFETY: the old buffer holds `len` entries, the new one room
            // for more; distinct mappings.
            unsafe { core::ptr::copy_nonoverlapping(self.p, p, self.len) };
            self.free();
        }
        self.p = p;
        self.cap = cap;
        true
    }

    /// Gives the memory back (the thread's teardown).
    pub(super) fn free(&mut self) {
        if !self.p.is_null() {
            // SAFETY: from `pages::alloc_zeroed` with `cap` entries' bytes,
            // freed once.
            unsafe { pages::free(self.p.cast(), self.cap * core::mem::size_of::<Open>()) };
        }
        self.p = core::ptr::null_mut();
        self.cap = 0;
    }

    /// The sites of the open calls, newest first.
    pub(super) fn nodes(&self) -> impl Iterator<Item = *const Node> + '_ {
        (0..self.len)
            .rev()
            .filter_map(|i| self.get(i))
            .map(|o| o.node)
    }
}

impl ThreadState {
    /// A call opened on an overflow node under `parent`.
    pub(super) fn open_overflow(&self, node: *const Node, parent: *const Node) {
        // SAFETY: this thread's own, touched only by its cold paths, never
        // re-entered (their allocations run with marked calls turned away).
        let opens = unsafe { &mut *self.overflow.get() };
        opens.push(Open { node, parent });
    }

    /// The exit of a call on an overflow node whose frame is (`node`,
    /// `parent`): the newest open call when it is of `node` (the top,
    /// whatever its parent), else the newest open call of that frame, is
    /// closed with every call above it, and its parent is the top again;
    /// how many were above (`None`: not open).
    pub(super) fn close_overflow(&self, node: *const Node, parent: *const Node) -> Option<usize> {
        // SAFETY: as in `open_overflow`.
        let opens = unsafe { &mut *self.overflow.get() };
        let newest = opens.len.checked_sub(1)?;
        let i = if opens.get(newest).is_some_and(|o| o.node == node) {
            newest
        } else {
            (0..newest).rev().find(|&i| {
                opens
                    .get(i)
                    .is_some_and(|o| o.node == node && o.parent == parent)
            })?
        };
        let closed = opens.get(i)?;
        let above = opens.len - 1 - i;
        opens.len = i;
        self.set_top(closed.parent);
        Some(above)
    }

    /// Leaves the overflow region whole (a regular call under it ended):
    /// how many of its calls were open.
    pub(super) fn drop_overflow(&self) -> usize {
        // SAFETY: as in `open_overflow`.
        let opens = unsafe { &mut *self.overflow.get() };
        core::mem::replace(&mut opens.len, 0)
    }

    /// The open overflow calls (for resynchronisation and the count of
    /// open calls).
    pub(super) fn overflow(&self) -> &Opens {
        // SAFETY: as in `open_overflow`; read only.
        unsafe { &*self.overflow.get() }
    }
}
