//! The calling thread's place in its calling-context tree: one word,
//! `top`, the node of its innermost open marked call (the thread's root
//! outside any). A marked call makes its node the top at entry and puts
//! its parent back at exit; the chain of open calls lives in their guards
//! (each holds its parent), not in a stack of tickprof's. The sampler
//! reads the word ([`ThreadState::look`]); this module knows nothing of
//! the sampler.
//!
//! The word also says when the thread runs the instrumentation of a call
//! its top node makes: tagged [`ENTRY`] from the entry's first store to
//! the new call's (its lookup, its clock read), [`EXIT`] from a timed
//! exit's clock read to its last store (the recording). Those are the
//! instrumentation's windows; one store opens each, one closes it.
//!
//! Each new call finds its parent on top; the parent's one-entry cache
//! (last child site → child node, with how its calls are measured) makes
//! the child lookup a compare in the common case, its two extra entries
//! and the thread's table of recent lookups serve a parent alternating
//! between children, and a hash map owned by the thread finds or creates
//! the node otherwise ([`children`]). Before set-up, while tickprof's own
//! work runs, and after teardown the word holds a sentinel node whose
//! cache is empty, so every lookup misses into the cold path, which tells
//! the three apart: the hot path has no state check.
//!
//! Set-up and teardown of the tree are in [`tree`], out-of-order exits in
//! [`resync`].

mod children;
mod overflow;
mod resync;
mod tree;

use super::arena::Arena;
use super::frame::{self, Frame, NONE};
use super::node::{bump, Node, KIND_BITS};
use crate::site::CallSite;
use crate::switches::recording;
use children::{Maps, Recent};
use core::sync::atomic::{AtomicPtr, Ordering};
use std::cell::Cell;

pub(super) use tree::Setup;

/// `top` tagged: the thread runs the entry of a call the top node makes.
pub(super) const ENTRY: usize = 1;
/// `top` tagged: the thread runs the exit of a timed call the top node
/// made (after its clock read).
pub(super) const EXIT: usize = 2;
/// The tag bits of `top` (nodes are aligned to 64 bytes).
const TAGS: usize = ENTRY | EXIT;

/// The top of a thread that never set up.
static UNSET: Node = Node::new();
/// The top while tickprof's own work runs on the thread
/// ([`ThreadState::while_busy`]).
static BUSY: Node = Node::new();
/// The top of a thread whose state its exit tore down.
static DEAD: Node = Node::new();

fn addr(n: &'static Node) -> usize {
    n as *const Node as usize
}

/// The calling thread's profiler state. Const-initialised; set up on the
/// first marked call.
pub(super) struct ThreadState {
    /// The node of the innermost open marked call, tagged [`ENTRY`] or
    /// [`EXIT`] inside the instrumentation (see the module docs). Written
    /// by this thread only; read by the sampler.
    top: AtomicPtr<Node>,
    arena: Cell<*const Arena>,
    maps: Cell<*mut Maps>,
    /// Recent child lookups (see [`Recent`]); null until set up.
    recent: Cell<*const Recent>,
    /// The thread's slot in the sampler's table (`u32::MAX`: none); the
    /// sampler's to set.
    sampler_slot: Cell<u32>,
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
    /// Open calls on overflow nodes (past `TICKPROF_MAX_NODES`, whose
    /// path the tree does not give: their entries and exits take the cold
    /// paths and keep them here).
    overflow: core::cell::UnsafeCell<overflow::Opens>,
}

thread_local! {
    pub(super) static STATE: ThreadState = const {
        ThreadState {
            top: AtomicPtr::new(core::ptr::addr_of!(UNSET).cast_mut()),
            arena: Cell::new(core::ptr::null()),
            maps: Cell::new(core::ptr::null_mut()),
            recent: Cell::new(core::ptr::null()),
            sampler_slot: Cell::new(u32::MAX),
            busy: Cell::new(false),
            dead: Cell::new(false),
            name_pending: Cell::new(false),
            name_tries: Cell::new(0),
            coin: Cell::new(0x9E37_79B9),
            overflow: core::cell::UnsafeCell::new(overflow::Opens::new()),
        }
    };
}

/// The calling thread's state, for the hot path.
///
/// `STATE.with(|s| s.push(..))` would make `LocalKey::with` carry the whole
/// push or pop; when that grows past the inliner's threshold (in builds with
/// debug assertions, say), every marked call pays a call through the
/// thread-local's accessor pointer. This closure is trivial, so `with`
/// always inlines, and the `#[inline(always)]` entry and exit follow.
#[inline(always)]
pub(super) fn current() -> &'static ThreadState {
    // SAFETY: the state is a const-initialised thread-local without a
    // destructor, so it lives as long as the calling thread; the reference
    // is used only by the calling thread, within one guard operation, and
    // is never stored or sent to another thread.
    STATE.with(|s| unsafe { &*(s as *const ThreadState) })
}

/// What a child cache holds for a site beneath a parent.
pub(super) enum Cached {
    /// The child.
    Hit(*const Node),
    /// Not held: the cold path looks it up.
    Miss,
}

/// Where an allocation made now on this thread is counted.
pub(super) enum AllocTarget {
    /// The node on top (the thread's root outside marked calls).
    Node(&'static Node),
    /// The thread has no tree yet: its pending counters.
    Pending,
    /// Not counted: tickprof's own work, or a torn-down state.
    Skip,
}

/// What the sampler finds a thread doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sampled {
    /// The program's own code: the node's `sampled` time.
    Program,
    /// The entry of a call the node makes: `sampled_inst`.
    Entry,
    /// The exit of a timed call the node made: `sampled_exit`.
    Exit,
}

/// What the sampler can see of a thread.
pub(crate) enum Look<'a> {
    /// A node, and what the thread does there.
    At(&'a Node, Sampled),
    /// tickprof's own work outside any marked call (reports, the exit, a
    /// server's answer): neither the program's nor a call's, credited to
    /// nothing.
    Tool,
    /// Nothing to credit: not set up, or torn down.
    Nothing,
}

impl ThreadState {
    /// The node on top, untagged (before set-up: [`UNSET`]'s).
    #[inline(always)]
    pub(super) fn top(&self) -> *const Node {
        let w = self.top.load(Ordering::Relaxed);
        w.wrapping_byte_sub(w as usize & TAGS).cast_const()
    }

    /// The top word as it is, tagged or not (see `record::counted`).
    #[inline(always)]
    pub(super) fn top_word(&self) -> *const Node {
        self.top.load(Ordering::Relaxed).cast_const()
    }

    /// Makes `node` the top: the thread runs its call's own code. One
    /// store, kept in place by a signal fence (no instruction).
    #[inline(always)]
    pub(super) fn set_top(&self, node: *const Node) {
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
        self.top.store(node.cast_mut(), Ordering::Relaxed);
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    }

    /// Opens an instrumentation window of a call `node` makes (`tag`:
    /// [`ENTRY`] or [`EXIT`]). One store.
    #[inline(always)]
    pub(super) fn set_top_tagged(&self, node: *const Node, tag: usize) {
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
        self.top
            .store(node.cast_mut().wrapping_byte_add(tag), Ordering::Relaxed);
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    }

    /// Whether `node` is on top (an exit's check that its call is the
    /// innermost: anything else resynchronises).
    #[inline(always)]
    pub(super) fn is_top(&self, node: *const Node) -> bool {
        self.top.load(Ordering::Relaxed).cast_const() == node
    }

    /// What `parent`'s child caches hold for `site`: its one-entry cache,
    /// then its two extra entries, then the thread's table of recent
    /// lookups (a hit there is cached in the parent's caches).
    #[inline(always)]
    pub(super) fn cached(&self, parent: &Node, site: &'static CallSite) -> Cached {
        let site_ptr = (site as *const CallSite).cast_mut();
        let mru = parent.mru_site.load(Ordering::Relaxed);
        // One xor tells both: the site, and how its calls are measured.
        let differs = mru as usize ^ site_ptr as usize;
        if differs <= KIND_BITS {
            return Cached::Hit(parent.mru_child.load(Ordering::Relaxed).cast_const());
        }
        self.other_child(parent, site)
    }

    /// [`ThreadState::cached`] past the one-entry cache.
    #[inline(always)]
    fn other_child(&self, parent: &Node, site: &'static CallSite) -> Cached {
        let site_ptr = (site as *const CallSite).cast_mut();
        let way = parent.way_child(site_ptr);
        if !way.is_null() {
            let bits = way as usize & KIND_BITS;
            return Cached::Hit(way.cast_const().wrapping_byte_sub(bits));
        }
        // SAFETY: null until set up, freed by the teardown after the top
        // is the dead sentinel (whose lookups never reach here: its cache
        // is empty, but the table is checked for null all the same).
        let Some(recent) = (unsafe { self.recent.get().as_ref() }) else {
            return Cached::Miss;
        };
        let Some(node) = children::recent_child(recent.slot(parent, site), parent, site) else {
            return Cached::Miss;
        };
        // Cached as a lookup's node is (`push_miss`): left out, a child
        // found only here took the whole cold path on every call, for
        // good (a parent alternating between two children after it had
        // called others: 1.4x a single child's cost, the overhead bench).
        // SAFETY: the table's nodes are nodes of this thread's arena.
        let kind = crate::record::timing::kind(unsafe { &*node });
        parent.cache_child(site_ptr, node.cast_mut(), kind, self.coin());
        Cached::Hit(node)
    }

    /// Makes `site`'s child of the node on top the top, whatever its
    /// timing (cold paths and polls: they record the call themselves):
    /// the frame, or none (`NONE`, or a detached frame on a torn-down
    /// state). A thread that never set up gets none: its guard's cold path
    /// sets it up first ([`ThreadState::needs_setup`]).
    pub(super) fn push(&self, site: &'static CallSite) -> Frame {
        let parent = self.top();
        // A sentinel parent (not set up, tickprof's own work, torn down)
        // gets no frame, before any cache is read: a sentinel's index is
        // 0, the root's, so the thread's table of recent lookups could
        // take the root's child of `site` for the sentinel's when their
        // slots meet (it did: a report's own allocations, made while the
        // top was the busy sentinel, counted on the root's marked
        // allocator, 1 run in ~100 under load).
        if [&UNSET, &BUSY, &DEAD]
            .iter()
            .any(|&s| core::ptr::eq(parent, s))
        {
            return self.no_frame(site);
        }
        // SAFETY: the top is a sentinel or a node of this thread's arena,
        // which outlives the state.
        let (node, word) = match self.cached(unsafe { &*parent }, site) {
            Cached::Hit(node) => {
                self.set_top(node);
                (node, parent as usize)
            }
            Cached::Miss => self.push_miss(site, parent),
        };
        // SAFETY: a pushed frame's node is a node of this thread's arena.
        if !node.is_null() && word != frame::DETACHED && unsafe { &*node }.is_overflow() {
            self.open_overflow(node, parent);
        }
        (node, word)
    }

    /// Pops a frame pushed by [`ThreadState::push`] or a guard (`node`,
    /// whose parent is `parent`): the parent back on top. Returns whether
    /// the call is to be recorded; a frame not on top is resynchronised
    /// ([`resync`]).
    pub(super) fn pop_frame(&self, node: *const Node, parent: usize) -> bool {
        // SAFETY: a frame's node is a node of this thread's arena, alive
        // unless the state was torn down (then `dead`, checked first).
        if !self.dead.get() && unsafe { &*node }.is_overflow() {
            return self.pop_overflow(node, parent as *const Node);
        }
        if self.is_top(node) {
            self.set_top(parent as *const Node);
            true
        } else {
            self.resync(node, parent)
        }
    }

    /// Whether the thread must be set up before it can record (its first
    /// marked call).
    pub(super) fn needs_setup(&self) -> bool {
        std::ptr::eq(self.top(), &UNSET) && !self.busy.get() && !self.dead.get()
    }

    /// The frame of a call for which nothing can be pushed (the top is a
    /// sentinel, or no memory): re-entrant calls and calls of a thread not
    /// set up get none; on a torn-down state, recording, a detached frame
    /// (the call is timed and recorded straight into the finished
    /// threads'). The top is left as it was, untagged.
    #[cold]
    pub(super) fn no_frame(&self, site: &'static CallSite) -> Frame {
        let top = self.top();
        self.set_top(top);
        if std::ptr::eq(top, &BUSY) {
            self.note_reentrant();
        }
        if recording() && self.is_dead() {
            frame::detached(site)
        } else {
            NONE
        }
    }

    /// Whether the thread's exit tore this state down (and is not still
    /// tearing it down).
    pub(super) fn is_dead(&self) -> bool {
        self.dead.get() && !self.busy.get()
    }

    /// Runs `f` with this thread's marked calls turned away (not recorded):
    /// for tickprof's own work that may allocate through a marked global
    /// allocator, so that it never records itself or recurses. The top is
    /// the busy sentinel meanwhile (every lookup misses, and the cold path
    /// turns the call away; the sampler credits nothing), and back after.
    pub(super) fn while_busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = self.busy.replace(true);
        let top = self.top.load(Ordering::Relaxed);
        self.top
            .store(core::ptr::addr_of!(BUSY).cast_mut(), Ordering::Relaxed);
        let r = f();
        self.top.store(top, Ordering::Relaxed);
        self.busy.set(was);
        r
    }

    /// Where an allocation made now is counted (see [`super::alloc`]).
    #[inline(always)]
    pub(super) fn alloc_target(&self) -> AllocTarget {
        if self.busy.get() {
            return AllocTarget::Skip;
        }
        let top = self.top();
        if std::ptr::eq(top, &UNSET) {
            AllocTarget::Pending
        } else if std::ptr::eq(top, &DEAD) || std::ptr::eq(top, &BUSY) {
            AllocTarget::Skip
        } else {
            // SAFETY: any other top is a node of this thread's arena, which
            // outlives the state; the reference is used only for the
            // current allocation.
            AllocTarget::Node(unsafe { &*top })
        }
    }

    /// What the sampler sees of this thread. Only the sampler thread calls
    /// it, while this state is in its table: the nodes it reads are not
    /// freed meanwhile.
    pub(crate) fn look(&self) -> Look<'_> {
        let w = self.top.load(Ordering::Relaxed) as usize;
        let node = w & !TAGS;
        if node == addr(&BUSY) {
            return Look::Tool;
        }
        if node == addr(&UNSET) || node == addr(&DEAD) {
            return Look::Nothing;
        }
        let what = match w & TAGS {
            0 => Sampled::Program,
            ENTRY => Sampled::Entry,
            _ => Sampled::Exit,
        };
        // SAFETY: a node of this thread's arena, freed only after the
        // thread left the sampler's table.
        Look::At(unsafe { &*(node as *const Node) }, what)
    }

    /// Where a program-counter sample taken now is counted: the node on
    /// top and the thread's table; `None` before set-up, during tickprof's
    /// own work and the teardown, and after it (a signal handler's
    /// question: reads this thread's state only).
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    pub(super) fn pc_target(&self) -> Option<(&Node, &super::pcs::table::Pcs)> {
        if self.busy.get() || self.dead.get() {
            return None;
        }
        let top = self.top();
        if [&UNSET, &BUSY, &DEAD]
            .iter()
            .any(|&s| core::ptr::eq(top, s))
        {
            return None;
        }
        let pcs = self.arena()?.pcs()?;
        // SAFETY: any other top is a node of this thread's arena, alive
        // while the state is not torn down (`dead` checked above).
        Some((unsafe { &*top }, pcs))
    }

    /// The thread's arena, once set up and until torn down.
    pub(super) fn arena(&self) -> Option<&Arena> {
        let arena = self.arena.get();
        // SAFETY: a non-null arena pointer is a reference this state holds until
        // `teardown`, which nulls it first.
        unsafe { arena.as_ref() }
    }

    /// The thread's entry in the sampler's table (`u32::MAX`: none); read by
    /// the `fork` child handler (unix only).
    #[cfg(unix)]
    pub(super) fn sampler_slot(&self) -> u32 {
        self.sampler_slot.get()
    }

    /// Sets [`ThreadState::sampler_slot`] (the thread's set-up and
    /// teardown).
    pub(super) fn set_sampler_slot(&self, slot: u32) -> u32 {
        self.sampler_slot.replace(slot)
    }

    fn note_reentrant(&self) {
        if let Some(a) = self.arena() {
            bump(&a.reentrant, 1);
        }
    }
}

#[cfg(test)]
mod tests;
