//! The calling thread's shadow stack of tree nodes: one type,
//! [`ThreadState`], owns its raw pointers and their `unsafe`.
//!
//! Each new call finds its parent on top of the stack; the parent's
//! one-entry cache (last child site → child node) makes the child lookup a
//! compare in the common case, its two extra entries and the thread's
//! table of recent lookups serve a parent alternating between children,
//! all on the fast path, and a hash map owned by the thread finds or
//! creates the node otherwise. The state is const-initialised and set up on
//! the thread's first marked call, which also registers its teardown at
//! thread exit, so the hot path's thread-local has no destructor and no
//! state check.
//!
//! Child lookups past those caches are in [`children`]; set-up,
//! growth and teardown in [`life`]. The cold paths that trace, run hooks or
//! record detached calls are above this module ([`super::cold`]): a pop
//! here says whether it handled the frame, and the caller does the rest.

mod children;
mod life;
mod pops;
mod view;
#[cfg(unix)]
pub(crate) use life::exit_key;
use view::{set_slot, Word};
pub(super) use view::{slot, Sampled, Slot};

use super::arena::Arena;
use super::frame::{self, Frame, NONE};
use super::node::{bump, Node, WAY_FLAG};
use crate::site::CallSite;
use crate::switches::recording;
use children::{Maps, Recent};
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::cell::Cell;

pub(super) use super::node::MRU_FLAG;

/// The calling thread's profiler state. Const-initialised; set up on the
/// first marked call.
pub(super) struct ThreadState {
    arena: Cell<*const Arena>,
    /// The depth of the frame on top of the stack (0: the root).
    depth: Word,
    /// The shadow stack: `stack_len` slots (see [`ThreadState::sampled`]).
    stack: AtomicPtr<Slot>,
    /// The slots of the memory `stack` points at (0 when none, or the
    /// read-only dead stack's 1).
    stack_len: AtomicUsize,
    /// The stack's capacity as pushes see it: 0 while tickprof's own
    /// work runs ([`ThreadState::while_busy`]), so that no push takes the
    /// fast path.
    cap: Cell<usize>,
    /// Non-zero while the thread runs tickprof's instrumentation, for the
    /// sampler, whose samples then count as instrumentation rather than
    /// the time of the node on top: the depth of the frame being entered
    /// or left (a sample with that frame on top is its own call's
    /// instrumentation, one with its caller on top the caller's cost of a
    /// call it makes), or `usize::MAX` for tickprof's own work.
    inst: Word,
    /// The thread's slot in the sampler's table (`u32::MAX`: none).
    sampler_slot: Cell<u32>,
    /// Marked calls ended on this thread (popped): a timed call's guard
    /// notes it at entry, so that its exit knows how many marked calls
    /// were made beneath it (their instrumentation is inside its time).
    ended: Cell<u64>,
    maps: Cell<*mut Maps>,
    /// Recent child lookups (see [`Recent`]); null until set up.
    recent: Cell<*const Recent>,
    busy: Cell<bool>,
    /// Set when the thread's exit tore the state down.
    dead: Cell<bool>,
    /// Set when the first marked call could not ask std for the thread's
    /// name (it may have run in a signal handler while std was starting
    /// the thread): the name is found on a later cold path.
    name_pending: Cell<bool>,
    /// Node lookups made while the name is pending: std is asked again at
    /// the 1st, 2nd, 4th, 8th, … (each asks the kernel for the thread's
    /// signal mask first: a thread that blocks a signal for good would
    /// otherwise pay a system call on every lookup).
    name_tries: Cell<u32>,
    /// A xorshift generator's state, for the child cache's replacement.
    coin: Cell<u32>,
}

thread_local! {
    pub(super) static STATE: ThreadState = const {
        ThreadState {
            arena: Cell::new(core::ptr::null()),
            depth: Word::new(0),
            stack: AtomicPtr::new(core::ptr::null_mut()),
            stack_len: AtomicUsize::new(0),
            cap: Cell::new(0),
            inst: Word::new(0),
            sampler_slot: Cell::new(u32::MAX),
            ended: Cell::new(0),
            maps: Cell::new(core::ptr::null_mut()),
            recent: Cell::new(core::ptr::null()),
            busy: Cell::new(false),
            dead: Cell::new(false),
            name_pending: Cell::new(false),
            name_tries: Cell::new(0),
            coin: Cell::new(0x9E37_79B9),
        }
    };
}

/// The calling thread's state, for the hot path.
///
/// `STATE.with(|s| s.push(..))` would make `LocalKey::with` carry the whole
/// push or pop; when that grows past the inliner's threshold (in builds with
/// debug assertions, say), every marked call pays a call through the
/// thread-local's accessor pointer. This closure is trivial, so `with`
/// always inlines, and the `#[inline(always)]` push and pop follow.
#[inline(always)]
pub(super) fn current() -> &'static ThreadState {
    // SAFETY: the state is a const-initialised thread-local without a
    // destructor, so it lives as long as the calling thread; the reference
    // is used only by the calling thread, within one guard operation, and
    // is never stored or sent to another thread.
    STATE.with(|s| unsafe { &*(s as *const ThreadState) })
}

/// Where an allocation made now on this thread is counted.
pub(super) enum AllocTarget {
    /// The node on top of the thread's stack (its root outside marked calls).
    Node(&'static Node),
    /// The thread has no tree yet: its pending counters.
    Pending,
    /// Not counted: tickprof's own work, its sampler thread, or a
    /// thread whose state was torn down.
    Skip,
}

impl ThreadState {
    /// Where an allocation made now is counted (see [`super::alloc`]).
    #[inline(always)]
    pub(super) fn alloc_target(&self) -> AllocTarget {
        if self.busy.get() {
            return AllocTarget::Skip;
        }
        let stack = self.stack.load(Ordering::Relaxed);
        if stack.is_null() {
            return AllocTarget::Pending;
        }
        // SAFETY: not busy, so the stack is not being set up, grown or torn
        // down: `depth < cap` while set up; torn down, `stack` is
        // `DEAD_STACK` and `depth` is 0.
        let node = unsafe { slot(stack, self.depth.get()) };
        // SAFETY: a stacked pointer is null (torn down) or a node of this
        // thread's arena, which outlives the state; the reference is used
        // only for the current allocation.
        match unsafe { node.as_ref() } {
            Some(n) => AllocTarget::Node(n),
            None => AllocTarget::Skip,
        }
    }

    /// Pushes a frame for `site`; returns the guard's frame: the node and
    /// the frame's depth, or, when no frame could be pushed, a null node
    /// with depth 0 or, on a torn-down state, the site with depth
    /// [`frame::DETACHED`] (see [`ThreadState::no_frame`]). Sixteen bytes, so that
    /// cold paths return it in registers.
    #[inline(always)]
    pub(super) fn push(&self, site: &'static CallSite) -> Frame {
        self.push_with(
            site,
            |node, next| (node, next),
            |_, node, next| (node, next),
            || self.push_slow(site),
        )
    }

    /// The push, with what follows it: `hit(node, depth)` when the
    /// parent's child cache (its one-entry cache, then its extra entries,
    /// then the thread's table of recent lookups) held `site` (the fast
    /// path: the node was pushed, and its timing state is 0: timed);
    /// `flagged(parent, node, depth)` when it held `site` flagged
    /// ([`MRU_FLAG`], [`WAY_FLAG`], or a table entry whose node's state is
    /// not 0: pushed too; counted, sampling or learning); `miss()`
    /// otherwise (nothing pushed yet: the caller goes on with
    /// [`ThreadState::push_slow`]). A guard's entry
    /// handles the outcomes apart, so that a timed call pays nothing for
    /// counted ones.
    #[inline(always)]
    pub(super) fn push_with<R>(
        &self,
        site: &'static CallSite,
        hit: impl FnOnce(*const Node, usize) -> R,
        flagged: impl FnOnce(&Node, *const Node, usize) -> R,
        miss: impl FnOnce() -> R,
    ) -> R {
        self.push_at(self.depth.get(), site, hit, flagged, miss)
    }

    /// [`ThreadState::push_with`] with the depth on top already read
    /// (`depth`: this thread's, read on this thread just before).
    #[inline(always)]
    pub(super) fn push_at<R>(
        &self,
        depth: usize,
        site: &'static CallSite,
        hit: impl FnOnce(*const Node, usize) -> R,
        flagged: impl FnOnce(&Node, *const Node, usize) -> R,
        miss: impl FnOnce() -> R,
    ) -> R {
        let next = depth + 1;
        if next >= self.cap.get() {
            return miss();
        }
        let stack = self.stack.load(Ordering::Relaxed);
        // SAFETY: `stack` holds `cap` initialised slots (see `grow`) and
        // `depth < next < cap`; only this thread touches it.
        let parent = unsafe { slot(stack, depth) };
        // SAFETY: every stacked pointer is a node of this thread's arena,
        // which outlives the state.
        let parent_ref = unsafe { &*parent };
        let site_ptr = (site as *const CallSite).cast_mut();
        let mru = parent_ref.mru_site.load(Ordering::Relaxed);
        // One xor tells both: 0, the site cached plainly; `MRU_FLAG`, the
        // site cached flagged.
        let differs = mru as usize ^ site_ptr as usize;
        if differs != 0 {
            if differs == MRU_FLAG {
                let node = parent_ref.mru_child.load(Ordering::Relaxed).cast_const();
                // SAFETY: `next < cap`, as above.
                unsafe { set_slot(stack, next, node) };
                self.depth.set(next);
                return flagged(parent_ref, node, next);
            }
            if let Some((node, counts)) = self.other_child(parent_ref, site) {
                // SAFETY: `next < cap`, as above.
                unsafe { set_slot(stack, next, node) };
                self.depth.set(next);
                if counts {
                    return flagged(parent_ref, node, next);
                }
                return hit(node, next);
            }
            // The whole push in one cold call at the end: no value of the
            // hot path lives across it, so the marked function needs no
            // callee-saved registers for it.
            return miss();
        }
        let node = parent_ref.mru_child.load(Ordering::Relaxed).cast_const();
        // SAFETY: `next < cap`, as above.
        unsafe { set_slot(stack, next, node) };
        self.depth.set(next);
        hit(node, next)
    }

    /// The child of `parent` for `site` past its one-entry cache, and
    /// whether it was cached flagged (its timing state was not 0): from
    /// the parent's extra entries (a node alternating between children),
    /// else from the thread's table of recent lookups (more children than
    /// that), read only: a hit changes nothing. `None`: a miss. Only for
    /// a set-up state (`cap` not 0).
    #[inline(always)]
    fn other_child(&self, parent: &Node, site: &'static CallSite) -> Option<(*const Node, bool)> {
        let way = parent.way_child((site as *const CallSite).cast_mut());
        if !way.is_null() {
            let flag = way as usize & WAY_FLAG;
            return Some((way.cast_const().wrapping_byte_sub(flag), flag != 0));
        }
        // SAFETY: set up before `cap` is non-zero, freed by the teardown
        // after `cap` is 0; this thread's own.
        let recent = unsafe { &*self.recent.get() };
        let node = children::recent_child(recent.slot(parent, site), parent, site)?;
        // SAFETY: a table entry is a node of this thread's arena.
        Some((node, super::timing::state(unsafe { &*node }) != 0))
    }

    /// A push the fast path could not make: no room (set-up, growth, a
    /// state that cannot take a frame) or a child-cache miss. Both are
    /// cold calls of their own.
    #[inline(always)]
    pub(super) fn push_slow(&self, site: &'static CallSite) -> Frame {
        if self.depth.get() + 1 >= self.cap.get() {
            self.push_cold(site)
        } else {
            self.push_miss(site)
        }
    }

    /// The frame of a call for which no frame was pushed: profiling off, a
    /// re-entrant call, or this thread's state already torn down (then the
    /// call is timed detached: the site, and depth [`frame::DETACHED`]).
    #[cold]
    pub(super) fn no_frame(&self, site: &'static CallSite) -> Frame {
        if recording() && self.is_dead() {
            frame::detached(site)
        } else {
            NONE
        }
    }

    /// A push with no room: the thread's first marked call (set-up), a
    /// full stack (growth), or a state that cannot take a frame.
    #[cold]
    #[inline(never)]
    fn push_cold(&self, site: &'static CallSite) -> Frame {
        if self.busy.get() {
            self.note_reentrant();
            return self.no_frame(site);
        }
        if self.dead.get() || !recording() {
            return self.no_frame(site);
        }
        self.busy.set(true);
        let ok = if self.arena.get().is_null() {
            // What setting the thread up takes is outside every call: the
            // report says how much.
            let t0 = crate::clock::ticks();
            let ok = self.setup();
            if let Some(a) = self.arena() {
                a.setup_ticks
                    .store(crate::clock::ticks().wrapping_sub(t0), Ordering::Relaxed);
            }
            ok
        } else {
            self.grow()
        };
        self.busy.set(false);
        if !ok {
            return self.no_frame(site);
        }
        self.push(site)
    }

    /// Whether the thread's exit tore this state down (and is not still
    /// tearing it down).
    pub(super) fn is_dead(&self) -> bool {
        self.dead.get() && !self.busy.get()
    }

    /// Runs `f` with this thread's marked calls turned away (not recorded):
    /// for tickprof's own work that may allocate through a marked global
    /// allocator, so that it never records itself or recurses.
    ///
    /// The capacity pushes see is 0 meanwhile, so that no push takes the
    /// fast path (a child cache hit would record the call): every one
    /// reaches `push_cold`, which turns it away. Nothing grows or tears
    /// down the stack meanwhile (pushes are turned away), so the capacity
    /// put back is the stack's.
    pub(super) fn while_busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = self.busy.replace(true);
        let cap = self.cap.replace(0);
        let inst = self.inst.get();
        self.inst.set(usize::MAX);
        let r = f();
        self.inst.set(inst);
        self.cap.set(cap);
        self.busy.set(was);
        r
    }

    /// The thread's arena, once set up and until torn down.
    pub(super) fn arena(&self) -> Option<&Arena> {
        let arena = self.arena.get();
        // SAFETY: a non-null arena pointer is a reference this state holds until
        // `teardown`, which nulls it first.
        unsafe { arena.as_ref() }
    }

    fn note_reentrant(&self) {
        let arena = self.arena.get();
        if !arena.is_null() {
            // SAFETY: a non-null arena pointer is a reference this state holds.
            bump(unsafe { &(*arena).reentrant }, 1);
        }
    }
}

#[cfg(test)]
mod tests;
