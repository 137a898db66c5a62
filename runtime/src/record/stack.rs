//! The calling thread's shadow stack of tree nodes: one type,
//! [`ThreadState`], owns its raw pointers and their `unsafe`.
//!
//! Each new call finds its parent on top of the stack; the parent's
//! one-entry cache (last child site → child node) makes the child lookup a
//! compare in the common case, and a hash map owned by the thread finds or
//! creates the node otherwise. The state is const-initialised and set up on
//! the thread's first marked call, which also registers its teardown at
//! thread exit, so the hot path's thread-local has no destructor and no
//! state check.

use super::arena::Arena;
use super::fasthash::FastMap;
use super::guard::{record_detached, DETACHED, FLAGS, HOOKED, TAG, TRACED, UNRECORDED};
use super::hook::{self, Ended};
use super::node::{bump, Node};
use super::registry;
use super::sigmask;
use crate::site::CallSite;
use crate::switches::{recording, MAX_NODES, RECORDED_ANY};
use crate::tree::{OVERFLOW_NESTED, OVERFLOW_OUTER};
use core::sync::atomic::Ordering;
use std::cell::Cell;
use std::sync::Arc;

/// The name of tickprof's calibration thread, on which only internal sites
/// are recorded.
pub(crate) const CALIBRATION_THREAD: &str = "tickprof calibration";

/// Frames `site_on_stack` looks at, from the top, to decide whether a call
/// past the node cap is nested in another of its site.
const NESTING_SCAN: usize = 1 << 16;

/// Off the hot path (new tree nodes only): notes that the program made a
/// marked call, so the exit report is due.
fn note_recorded(site: &'static CallSite) {
    if !site.is_internal() {
        RECORDED_ANY.store(true, Ordering::Relaxed);
    }
}

/// What a push gives the guard: the node and the frame's depth (see
/// [`ThreadState::push`]).
pub(super) type Frame = (*const Node, usize);

/// Owner-thread-only lookup tables, off the hot path.
struct Maps {
    children: FastMap<(u32, usize), *const Node>,
    overflow: FastMap<(usize, bool), *const Node>,
}

/// Slots of a thread's table of recent child lookups ([`Recent`]).
const RECENT_SLOTS: usize = 256;

/// A thread's direct-mapped table of recent child lookups, consulted when
/// the parent's one-entry cache holds another site (a parent alternating
/// between children: parse, validate, parse, …) before the hash map. A slot
/// holds a child node only, one word, so a signal handler's marked call
/// that overwrites it mid-read leaves either node; a hit is checked against
/// the node's own (immutable) site and parent, so a slot shared by two
/// (parent, site) pairs only misses. 2 KiB per recording thread.
struct Recent([core::sync::atomic::AtomicPtr<Node>; RECENT_SLOTS]);

/// The slot of (parent, site) in [`Recent`].
#[inline(always)]
fn recent_index(parent: *const Node, site: *const CallSite) -> usize {
    let key = (parent as usize as u64) ^ (site as usize as u64).rotate_left(29);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
}

/// `site`'s child of `parent` held in `slot`; `None` when the slot holds
/// another (parent, site)'s child, or nothing.
#[inline]
fn recent_child(
    slot: &core::sync::atomic::AtomicPtr<Node>,
    parent: &Node,
    site: &'static CallSite,
) -> Option<*const Node> {
    let cached = slot.load(Ordering::Relaxed);
    // SAFETY: a slot holds null or a node of this thread's arena, which
    // outlives the state.
    let child = unsafe { cached.cast_const().as_ref() }?;
    let site_ptr = (site as *const CallSite).cast_mut();
    if child.site.load(Ordering::Relaxed) != site_ptr
        || child.parent.load(Ordering::Relaxed) != parent.index.load(Ordering::Relaxed)
    {
        return None;
    }
    Some(cached)
}

/// The calling thread's profiler state. Const-initialised; set up on the
/// first marked call.
pub(super) struct ThreadState {
    arena: Cell<*const Arena>,
    depth: Cell<usize>,
    stack: Cell<*mut *const Node>,
    cap: Cell<usize>,
    maps: Cell<*mut Maps>,
    /// Recent child lookups (see [`Recent`]); null until set up.
    recent: Cell<*const Recent>,
    busy: Cell<bool>,
    /// Set when the thread's exit tore the state down.
    dead: Cell<bool>,
    /// Set on tickprof's own calibration thread: only internal sites are
    /// recorded there (a marked global allocator's calls are not).
    internal_only: Cell<bool>,
    /// Set when the first marked call could not ask std for the thread's
    /// name (it may have run in a signal handler while std was starting
    /// the thread): the name is found on a later cold path.
    name_pending: Cell<bool>,
}

/// The shadow stack of a torn-down state: one null frame, only ever read
/// (the state's capacity is 0, so nothing is pushed on it).
struct DeadStack([*const Node; 1]);

// SAFETY: the array is never written; a null pointer is shareable.
unsafe impl Sync for DeadStack {}

static DEAD_STACK: DeadStack = DeadStack([core::ptr::null()]);

/// Tears the calling thread's state down when the thread exits. Its
/// destructor is registered by the first marked call on the thread (`setup`),
/// so the hot path's thread-local has no destructor and no state check.
struct ThreadExit;

impl Drop for ThreadExit {
    fn drop(&mut self) {
        STATE.with(ThreadState::teardown);
    }
}

thread_local! {
    pub(super) static STATE: ThreadState = const {
        ThreadState {
            arena: Cell::new(core::ptr::null()),
            depth: Cell::new(0),
            stack: Cell::new(core::ptr::null_mut()),
            cap: Cell::new(0),
            maps: Cell::new(core::ptr::null_mut()),
            recent: Cell::new(core::ptr::null()),
            busy: Cell::new(false),
            dead: Cell::new(false),
            internal_only: Cell::new(false),
            name_pending: Cell::new(false),
        }
    };
    static EXIT: ThreadExit = const { ThreadExit };
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
    /// Not counted: tickprof's own work, its calibration thread, or a
    /// thread whose state was torn down.
    Skip,
}

impl ThreadState {
    /// Where an allocation made now is counted (see [`super::alloc`]).
    #[inline(always)]
    pub(super) fn alloc_target(&self) -> AllocTarget {
        if self.busy.get() || self.internal_only.get() {
            return AllocTarget::Skip;
        }
        let stack = self.stack.get();
        if stack.is_null() {
            return AllocTarget::Pending;
        }
        // SAFETY: not busy, so the stack is not being set up, grown or torn
        // down: `depth < cap` while set up; torn down, `stack` is
        // `DEAD_STACK` and `depth` is 0.
        let node = unsafe { *stack.add(self.depth.get()) };
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
    /// [`DETACHED`] (see [`ThreadState::no_frame`]). Sixteen bytes, so that
    /// cold paths return it in registers.
    #[inline(always)]
    pub(super) fn push(&self, site: &'static CallSite) -> Frame {
        let depth = self.depth.get();
        let next = depth + 1;
        if next >= self.cap.get() {
            return self.push_cold(site);
        }
        let stack = self.stack.get();
        // SAFETY: `stack` holds `cap` initialised slots (see `grow`) and
        // `depth < next < cap`; only this thread touches it.
        let parent = unsafe { *stack.add(depth) };
        // SAFETY: every stacked pointer is a node of this thread's arena,
        // which outlives the state.
        let parent_ref = unsafe { &*parent };
        let site_ptr = (site as *const CallSite).cast_mut();
        if parent_ref.mru_site.load(Ordering::Relaxed) != site_ptr {
            // The whole push in one cold call at the end: no value of the
            // hot path lives across it, so the marked function needs no
            // callee-saved registers for it.
            return self.push_miss(site);
        }
        let node = parent_ref.mru_child.load(Ordering::Relaxed).cast_const();
        // SAFETY: `next < cap`, as above.
        unsafe { *stack.add(next) = node };
        self.depth.set(next);
        (node, next)
    }

    /// A push whose parent's one-entry cache holds another site.
    #[cold]
    #[inline(never)]
    fn push_miss(&self, site: &'static CallSite) -> Frame {
        let depth = self.depth.get();
        let next = depth + 1;
        let stack = self.stack.get();
        // SAFETY: as in `push`, whose checks held (`next < cap`).
        let parent = unsafe { &**stack.add(depth) };
        let slot = self.recent_slot(parent, site);
        let node = match slot.and_then(|slot| recent_child(slot, parent, site)) {
            Some(node) => node,
            None => match self.lookup(parent, site) {
                Some(node) => {
                    if let Some(slot) = slot {
                        slot.store(node.cast_mut(), Ordering::Relaxed);
                    }
                    node
                }
                None => return self.no_frame(site),
            },
        };
        parent
            .mru_site
            .store((site as *const CallSite).cast_mut(), Ordering::Relaxed);
        parent.mru_child.store(node.cast_mut(), Ordering::Relaxed);
        // SAFETY: as in `push`.
        unsafe { *stack.add(next) = node };
        self.depth.set(next);
        (node, next)
    }

    /// The slot of (`parent`, `site`) in this thread's table of recent
    /// lookups; `None` inside tickprof's own bookkeeping (`lookup` turns
    /// such calls away).
    #[inline]
    fn recent_slot(
        &self,
        parent: &Node,
        site: &'static CallSite,
    ) -> Option<&core::sync::atomic::AtomicPtr<Node>> {
        if self.busy.get() {
            return None;
        }
        // SAFETY: set up before `cap` is non-zero (only then is a push
        // here), freed by the teardown after `cap` is 0; this thread's own.
        let recent = unsafe { &*self.recent.get() };
        Some(&recent.0[recent_index(parent, site)])
    }

    /// The frame of a call for which no frame was pushed: profiling off, a
    /// re-entrant call, or this thread's state already torn down (then the
    /// call is timed detached: the site, and depth [`DETACHED`]).
    #[cold]
    pub(super) fn no_frame(&self, site: &'static CallSite) -> Frame {
        if recording() && self.is_dead() {
            ((site as *const CallSite).cast(), DETACHED)
        } else {
            (core::ptr::null(), 0)
        }
    }

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
            self.setup()
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
    pub(super) fn while_busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = self.busy.replace(true);
        let r = f();
        self.busy.set(was);
        r
    }

    /// The thread's arena, once set up and until torn down.
    pub(super) fn arena(&self) -> Option<&Arena> {
        let arena = self.arena.get();
        // SAFETY: a non-null arena pointer is an `Arc` this state owns until
        // `teardown`, which nulls it first.
        unsafe { arena.as_ref() }
    }

    fn note_reentrant(&self) {
        let arena = self.arena.get();
        if !arena.is_null() {
            // SAFETY: a non-null arena pointer is an `Arc` this state owns.
            bump(unsafe { &(*arena).reentrant }, 1);
        }
    }

    /// First marked call on this thread: create the arena, root and stack.
    fn setup(&self) -> bool {
        // Register the teardown at thread exit. If the thread is already
        // exiting (a marked call from another thread-local's destructor),
        // never set up: such calls are recorded detached.
        if EXIT.try_with(|_| {}).is_err() {
            self.dead.set(true);
            self.stack.set(DEAD_STACK.0.as_ptr().cast_mut());
            return false;
        }
        // Asking std for the name while std is still starting the thread
        // (from a signal handler) would abort the thread's start.
        let pending = sigmask::any_blocked();
        let name = (!pending).then(sigmask::std_thread_name);
        // tickprof's calibration thread records only tickprof's own sites
        // (a marked global allocator's calls there are not the program's).
        self.internal_only
            .set(name.as_deref() == Some(CALIBRATION_THREAD));
        self.name_pending.set(pending);
        // Settled before any node of any thread records (the pop's cold
        // path reads it).
        crate::switches::settle_max_ticks();
        let arena = registry::new_thread(name);
        let Some(root) = arena.push(None, u32::MAX, 0) else {
            return false;
        };
        // SAFETY: `root` is a node of `arena`, alive here.
        super::alloc::fold_pending(unsafe { &*root }, !self.internal_only.get());
        let maps = Box::new(Maps {
            children: FastMap::default(),
            overflow: FastMap::default(),
        });
        self.maps.set(Box::into_raw(maps));
        let recent = Box::new(Recent(core::array::from_fn(|_| {
            core::sync::atomic::AtomicPtr::new(core::ptr::null_mut())
        })));
        self.recent.set(Box::into_raw(recent));
        self.arena.set(Arc::into_raw(arena));
        const INITIAL_DEPTH: usize = 64;
        let mut v: Vec<*const Node> = vec![root; INITIAL_DEPTH];
        let p = v.as_mut_ptr();
        core::mem::forget(v);
        self.stack.set(p);
        self.cap.set(INITIAL_DEPTH);
        self.depth.set(0);
        true
    }

    /// Doubles the shadow stack.
    fn grow(&self) -> bool {
        let cap = self.cap.get();
        let old = self.stack.get();
        let new_cap = cap * 2;
        let mut v: Vec<*const Node> = Vec::with_capacity(new_cap);
        // SAFETY: `old` has `cap` initialised slots.
        v.extend_from_slice(unsafe { core::slice::from_raw_parts(old, cap) });
        let root = v[0];
        v.resize(new_cap, root);
        let p = v.as_mut_ptr();
        core::mem::forget(v);
        self.stack.set(p);
        self.cap.set(new_cap);
        // SAFETY: `old` came from a `Vec` with length and capacity `cap`.
        drop(unsafe { Vec::from_raw_parts(old, cap, cap) });
        true
    }

    /// Finds or creates the child of `parent` for `site`.
    #[cold]
    #[inline(never)]
    fn lookup(&self, parent: &Node, site: &'static CallSite) -> Option<*const Node> {
        if self.busy.get() {
            self.note_reentrant();
            return None;
        }
        self.busy.set(true);
        let node = self.lookup_inner(parent, site);
        self.busy.set(false);
        node
    }

    fn lookup_inner(&self, parent: &Node, site: &'static CallSite) -> Option<*const Node> {
        // SAFETY: set up before any frame can exist; owned by this state and
        // only touched here while `busy` excludes re-entry.
        let maps = unsafe { &mut *self.maps.get() };
        // SAFETY: as in `note_reentrant`.
        let arena = unsafe { &*self.arena.get() };
        if self.name_pending.get() && !sigmask::any_blocked() {
            self.name_pending.set(false);
            arena.set_late_name(sigmask::std_thread_name());
        }
        if self.internal_only.get() && !site.is_internal() {
            return None;
        }
        let site_ptr = (site as *const CallSite).cast_mut();
        let parent_index = parent.index.load(Ordering::Relaxed);
        let is_overflow_parent = parent.flags.load(Ordering::Relaxed) != 0;
        // Children are cached for overflow parents too: without it, every
        // call beneath an overflow node (deep recursion, leaked guards past
        // the node cap) would scan the whole stack.
        if let Some(&node) = maps.children.get(&(parent_index, site_ptr as usize)) {
            return Some(node);
        }
        if !is_overflow_parent && arena.len() < MAX_NODES.load(Ordering::Relaxed) {
            note_recorded(site);
            let node = arena.push(Some(site), parent_index, 0)?;
            maps.children
                .insert((parent_index, site_ptr as usize), node);
            return Some(node);
        }
        // The tree is full (or the parent is an overflow node, whose path is
        // unknown): use the per-site overflow node, outer or nested.
        let nested = self.site_on_stack(site_ptr);
        let node = match maps.overflow.get(&(site_ptr as usize, nested)) {
            Some(&n) => n,
            None => {
                note_recorded(site);
                let flags = if nested {
                    OVERFLOW_NESTED
                } else {
                    OVERFLOW_OUTER
                };
                let n = arena.push(Some(site), 0, flags)?;
                maps.overflow.insert((site_ptr as usize, nested), n);
                n
            }
        };
        // Beneath an overflow parent the path is unknown, so whether `site`
        // is nested is decided here, once per (overflow parent, site).
        maps.children
            .insert((parent_index, site_ptr as usize), node);
        Some(node)
    }

    /// Whether an activation of `site` is open on this thread's stack.
    /// (Only the top `NESTING_SCAN` frames are looked at: an activation
    /// deeper than that is taken as not open.)
    fn site_on_stack(&self, site: *mut CallSite) -> bool {
        let stack = self.stack.get();
        let depth = self.depth.get();
        (depth.saturating_sub(NESTING_SCAN).max(1)..=depth)
            .rev()
            .any(|d| {
                // SAFETY: `d <= depth < cap`; stacked pointers are arena nodes.
                let node = unsafe { &**stack.add(d) };
                node.site.load(Ordering::Relaxed) == site
            })
    }

    /// Pops the guard's frame and records its delta: on top of the stack,
    /// the fast path; anything else (detached, traced, hooked, out of
    /// order, torn down) goes to `pop_slow`.
    ///
    /// The fast path compares the node only, not the depth: a traced or
    /// hooked guard's node is tagged ([`TAG`]) and a detached or
    /// unrecorded one holds a site, so neither can equal a stacked node.
    /// The same node can sit at two depths only for an overflow node
    /// (tree full), and then popping the top frame for a guard whose own
    /// frame is deeper records the same call on the same node; the guard of
    /// that top frame then finds it gone and is counted out of order.
    #[inline(always)]
    pub(super) fn pop(&self, depth: usize, node: *const Node, start: u64, end: u64, check: bool) {
        let top = self.depth.get();
        let stack = self.stack.get();
        // SAFETY: `top < cap` holds for the current depth while the state is
        // set up; torn down, `stack` is `DEAD_STACK` and `top` is 0.
        let top_node = unsafe { *stack.add(top) };
        if top_node == node {
            self.depth.set(top - 1);
            // SAFETY: the frame on top of this thread's live stack holds a
            // node of its arena, which outlives the state.
            unsafe { &*node }.record(end.wrapping_sub(start), check);
        } else {
            self.pop_slow(depth, node, start, end, check);
        }
    }

    /// A guard that is detached, traced, hooked, or not on top of the
    /// stack.
    #[cold]
    #[inline(never)]
    fn pop_slow(&self, depth: usize, node: *const Node, start: u64, end: u64, check: bool) {
        if depth == DETACHED {
            // SAFETY: a detached guard's `node` holds its `&'static CallSite`.
            record_detached(unsafe { &*node.cast::<CallSite>() }, start, end);
            return;
        }
        let bits = depth & FLAGS;
        let depth = depth & !FLAGS;
        // What the exit hooks are told (returned: the exit's `check` off).
        let ended =
            |site, out_of_order| Ended::call(site, depth, (start, end), out_of_order, !check);
        let node = node
            .cast::<u8>()
            .wrapping_sub(node as usize & TAG)
            .cast::<Node>();
        if bits & UNRECORDED != 0 {
            // SAFETY: an unrecorded guard's `node` holds its `&'static CallSite`.
            let site = unsafe { &*node.cast::<CallSite>() };
            let out_of_order = hook::unrecorded_exit(depth);
            hook::exit(&ended(site, out_of_order));
            return;
        }
        let out_of_order = self.depth.get() != depth;
        if !self.pop_frame(depth, node) {
            return;
        }
        // SAFETY: `node` was handed out by this thread's arena, which is
        // alive: the state is not torn down (`pop_frame` said so).
        let node = unsafe { &*node };
        node.record(end.wrapping_sub(start), check);
        if bits & TRACED != 0 {
            self.trace(node, start, end);
        }
        if let (true, Some(site)) = (bits & HOOKED != 0, node.site()) {
            hook::exit(&ended(site, out_of_order));
        }
    }

    /// The depth of the frame on top of the stack (0: none).
    pub(super) fn top_depth(&self) -> usize {
        self.depth.get()
    }

    /// Points a state that was never set up at the (read-only) dead stack,
    /// so that a guard's drop can read its top frame (hooks with the
    /// profile off, where no frame is ever pushed).
    pub(super) fn ensure_stack(&self) {
        if self.stack.get().is_null() {
            self.stack.set(DEAD_STACK.0.as_ptr().cast_mut());
        }
    }

    /// Appends one event to this thread's trace buffer (tickprof's own
    /// calibration calls are not traced).
    #[cold]
    #[inline(never)]
    pub(super) fn trace(&self, node: &Node, start: u64, end: u64) {
        if let (Some(arena), Some(site)) = (self.arena(), node.site()) {
            if !site.is_internal() {
                arena.trace.record(site, start, end);
            }
        }
    }

    /// Pops the frame at `depth`, resynchronising if it is not on top.
    /// Returns whether the call is to be recorded on `node`.
    #[inline(always)]
    pub(super) fn pop_frame(&self, depth: usize, node: *const Node) -> bool {
        let top = self.depth.get();
        let stack = self.stack.get();
        // SAFETY: `top < cap` holds for the current depth while the state is
        // set up; torn down, `stack` is `DEAD_STACK` and `top` is 0.
        let top_node = unsafe { *stack.add(top) };
        if top == depth && top_node == node {
            self.depth.set(top - 1);
            true
        } else {
            self.resync(depth, node)
        }
    }

    /// A guard dropped out of LIFO order.
    #[cold]
    #[inline(never)]
    fn resync(&self, depth: usize, node: *const Node) -> bool {
        if depth == DETACHED {
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
        let stack = self.stack.get();
        // SAFETY: `depth <= top < cap` is checked first.
        if depth >= 1 && depth <= top && unsafe { *stack.add(depth) } == node {
            // Deeper frames were never closed (leaked or moved guards): pop
            // them with this one.
            bump(&arena.resynced, (top - depth) as u64);
            self.depth.set(depth - 1);
        } else {
            // This frame was popped already: keep the measured call, leave
            // the stack alone.
            bump(&arena.orphaned, 1);
        }
        true
    }
}

impl ThreadState {
    /// At thread exit: merge this thread's tree into the finished threads'
    /// data, free the state, and leave it dead (later marked calls on this
    /// thread are recorded detached).
    fn teardown(&self) {
        self.dead.set(true);
        // Marked calls made while the state is taken apart (a marked global
        // allocator called by the merge below) are not recorded: no new
        // frame can be pushed (`cap` 0 sends pushes to `push_cold`, where
        // `busy` turns them away) and `miss` gives them inert guards. Frames
        // pushed earlier still pop: the stack stays until the end.
        self.busy.set(true);
        let stack_cap = self.cap.replace(0);
        let arena = self.arena.replace(core::ptr::null());
        if arena.is_null() {
            self.busy.set(false);
            return;
        }
        // SAFETY: created by `Arc::into_raw` in `setup`, released once here.
        let arena = unsafe { Arc::from_raw(arena) };
        if self.name_pending.replace(false) {
            // std's thread handle may already be gone (its teardown can run
            // before this one when the first marked call preceded std's
            // start): the operating system's name, at most 15 bytes.
            if let Some(name) = sigmask::os_thread_name() {
                arena.set_late_name(name);
            }
        }
        // Frames still open now belong to guards that were never dropped.
        arena
            .leaked
            .store(self.depth.get() as u64, Ordering::Relaxed);
        registry::finish_thread(&arena);
        let maps = self.maps.replace(core::ptr::null_mut());
        if !maps.is_null() {
            // SAFETY: created by `Box::into_raw` in `setup`, released once.
            drop(unsafe { Box::from_raw(maps) });
        }
        let recent = self.recent.replace(core::ptr::null());
        if !recent.is_null() {
            // SAFETY: created by `Box::into_raw` in `setup`, released once;
            // no push reaches `push_miss` any more (`cap` is 0).
            drop(unsafe { Box::from_raw(recent.cast_mut()) });
        }
        let stack = self.stack.replace(DEAD_STACK.0.as_ptr().cast_mut());
        self.depth.set(0);
        if !stack.is_null() {
            // SAFETY: from a `Vec` with length and capacity `stack_cap`.
            drop(unsafe { Vec::from_raw_parts(stack, stack_cap, stack_cap) });
        }
        // Calls from later thread-local destructors are recorded detached.
        self.busy.set(false);
    }
}
