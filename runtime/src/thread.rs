//! The hot path: per-thread calling-context trees and the guard.
//!
//! Every thread owns an [`Arena`] of tree nodes. A node is one call path
//! (root → … → site) and holds that path's accumulators. Only the owning
//! thread writes a node (relaxed load + store, no locked instructions); the
//! report reads every arena at any time with relaxed loads. Nodes never move:
//! the arena grows by segments of doubling size. A thread-local shadow stack
//! of node pointers gives each new call its parent; the parent's one-entry
//! cache (last child site → child node) makes the lookup a compare in the
//! common case. When a thread exits, its tree is merged into the global tree
//! of finished threads, so nothing it recorded is lost.

use crate::clock::ticks;
use crate::site::CallSite;
use crate::trace::TRACE_ON;
use crate::tree::Tree;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// Node flag: an overflow node (tree full) whose activations have no
/// enclosing activation of the same site.
pub(crate) const OVERFLOW_OUTER: u32 = 1;
/// Node flag: an overflow node for activations nested in one of the same site.
pub(crate) const OVERFLOW_NESTED: u32 = 2;

/// One calling-context tree node. The first cache line holds what the hot
/// path touches.
#[repr(C, align(64))]
pub(crate) struct Node {
    mru_site: AtomicPtr<CallSite>,
    mru_child: AtomicPtr<Node>,
    pub(crate) calls: AtomicU64,
    pub(crate) ticks: AtomicU64,
    pub(crate) min: AtomicU64,
    pub(crate) max: AtomicU64,
    pub(crate) reversed: AtomicU64,
    pub(crate) oversized: AtomicU64,
    // Cold: written once before the node is published.
    pub(crate) site: AtomicPtr<CallSite>,
    pub(crate) unwound: AtomicU64,
    /// async sites: first poll to completion, summed over completed calls.
    pub(crate) wall: AtomicU64,
    /// async sites: futures dropped before completion.
    pub(crate) cancelled: AtomicU64,
    pub(crate) index: AtomicU32,
    pub(crate) parent: AtomicU32,
    pub(crate) flags: AtomicU32,
}

impl Node {
    fn new() -> Node {
        Node {
            mru_site: AtomicPtr::new(core::ptr::null_mut()),
            mru_child: AtomicPtr::new(core::ptr::null_mut()),
            calls: AtomicU64::new(0),
            ticks: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            reversed: AtomicU64::new(0),
            oversized: AtomicU64::new(0),
            site: AtomicPtr::new(core::ptr::null_mut()),
            unwound: AtomicU64::new(0),
            wall: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            index: AtomicU32::new(0),
            parent: AtomicU32::new(u32::MAX),
            flags: AtomicU32::new(0),
        }
    }

    pub(crate) fn site(&self) -> Option<&'static CallSite> {
        let p = self.site.load(Ordering::Relaxed);
        // SAFETY: `site` is null (root) or was set from a `&'static CallSite`.
        unsafe { p.cast_const().as_ref() }
    }

    /// Zeroes the accumulators (not the structure).
    pub(crate) fn reset(&self) {
        for a in [
            &self.calls,
            &self.ticks,
            &self.max,
            &self.reversed,
            &self.oversized,
            &self.unwound,
            &self.wall,
            &self.cancelled,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.min.store(u64::MAX, Ordering::Relaxed);
    }

    /// Adds one finished call. Single writer: relaxed load + store.
    #[inline(always)]
    fn record(&self, delta: u64) {
        let max_ticks = MAX_TICKS.load(Ordering::Relaxed);
        bump(&self.calls, 1);
        if delta <= max_ticks {
            bump(&self.ticks, delta);
            self.min_max(delta);
        } else {
            self.reject(delta);
        }
        if std::thread::panicking() {
            bump(&self.unwound, 1);
        }
    }

    #[inline(always)]
    fn min_max(&self, delta: u64) {
        if delta < self.min.load(Ordering::Relaxed) {
            self.min.store(delta, Ordering::Relaxed);
        }
        if delta > self.max.load(Ordering::Relaxed) {
            self.max.store(delta, Ordering::Relaxed);
        }
    }

    /// Adds one poll of an async call: busy time, no call.
    fn record_poll(&self, delta: u64) -> bool {
        if delta <= MAX_TICKS.load(Ordering::Relaxed) {
            bump(&self.ticks, delta);
            true
        } else {
            self.reject(delta);
            false
        }
    }

    #[cold]
    #[inline(never)]
    fn reject(&self, delta: u64) {
        if (delta as i64) < 0 {
            bump(&self.reversed, 1);
        } else {
            bump(&self.oversized, 1);
        }
    }
}

#[inline(always)]
fn bump(a: &AtomicU64, by: u64) {
    a.store(
        a.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}

/// First segment holds `1 << BASE_SHIFT` nodes; segment k holds twice k-1.
const BASE_SHIFT: u32 = 4;
const SEGMENTS: usize = 40;

/// One thread's tree nodes, in creation order (a parent before its children).
pub(crate) struct Arena {
    segs: [AtomicPtr<Node>; SEGMENTS],
    len: AtomicUsize,
    pub(crate) thread_name: String,
    pub(crate) thread_id: u64,
    /// Guards dropped after deeper guards that were never dropped (leaked or
    /// moved): the deeper frames were popped.
    pub(crate) resynced: AtomicU64,
    /// Guards dropped after their frame had already been popped.
    pub(crate) orphaned: AtomicU64,
    /// Calls made from inside the profiler's own bookkeeping (e.g. a marked
    /// global allocator), not recorded.
    pub(crate) reentrant: AtomicU64,
    /// Individual call events, when tracing is on.
    pub(crate) trace: crate::trace::Shared,
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
    fn new(thread_name: String, thread_id: u64) -> Arena {
        Arena {
            segs: [const { AtomicPtr::new(core::ptr::null_mut()) }; SEGMENTS],
            len: AtomicUsize::new(0),
            thread_name,
            thread_id,
            resynced: AtomicU64::new(0),
            orphaned: AtomicU64::new(0),
            reentrant: AtomicU64::new(0),
            trace: crate::trace::Shared::default(),
        }
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

    /// Appends a node. Owner thread only.
    fn push(
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
        self.len.store(i + 1, Ordering::Release);
        Some(node as *const Node)
    }

    /// Copies the accumulators into a plain tree.
    pub(crate) fn snapshot(&self) -> Tree {
        let n = self.len();
        let mut t = Tree::with_capacity(n);
        for i in 0..n {
            if let Some(node) = self.get(i) {
                t.push_raw(node);
            }
        }
        t
    }

    pub(crate) fn reset(&self) {
        for i in 0..self.len() {
            if let Some(node) = self.get(i) {
                node.reset();
            }
        }
        for a in [&self.resynced, &self.orphaned, &self.reentrant] {
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

/// Process-wide recording switch (`TICKPROF=off` clears it before `main`).
pub(crate) static RECORDING: AtomicBool = AtomicBool::new(true);
/// Deltas above this many ticks are rejected as oversized.
pub(crate) static MAX_TICKS: AtomicU64 = AtomicU64::new(i64::MAX as u64);
/// Calling-context tree nodes per thread.
pub(crate) static MAX_NODES: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_MAX_NODES);
/// Set when a site other than the calibration's first gets a tree node: the
/// exit report is skipped for programs that never made a marked call.
pub(crate) static RECORDED_ANY: AtomicBool = AtomicBool::new(false);

/// Off the hot path (new tree nodes only).
fn note_recorded(site: &'static CallSite) {
    if !core::ptr::eq(site, &crate::calibrate::CALIBRATION_SITE) {
        RECORDED_ANY.store(true, Ordering::Relaxed);
    }
}

/// Guards that ended after their thread's profiler state was torn down.
pub(crate) static LOST: AtomicU64 = AtomicU64::new(0);
static NEXT_THREAD_ID: AtomicU64 = AtomicU64::new(1);

/// Live arenas and the merged data of finished threads, under one lock so a
/// report never sees a thread twice or not at all.
pub(crate) struct Global {
    pub(crate) live: Vec<Arc<Arena>>,
    pub(crate) finished: Tree,
    pub(crate) finished_threads: Vec<(String, u64, Tree)>,
    pub(crate) finished_resynced: u64,
    pub(crate) finished_orphaned: u64,
    pub(crate) finished_reentrant: u64,
    /// Trace events of finished threads: (id, name, events, dropped).
    pub(crate) finished_traces: Vec<(u64, String, Vec<crate::trace::RawEvent>, u64)>,
}

pub(crate) static GLOBAL: Mutex<Global> = Mutex::new(Global {
    live: Vec::new(),
    finished: Tree::new(),
    finished_threads: Vec::new(),
    finished_resynced: 0,
    finished_orphaned: 0,
    finished_reentrant: 0,
    finished_traces: Vec::new(),
});

/// Blocking lock, for threads starting or finishing.
fn lock_global() -> MutexGuard<'static, Global> {
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Lock with a deadline, for the report: never waits on a lock another
/// thread may hold forever.
pub(crate) fn try_lock_global(wait: std::time::Duration) -> Option<MutexGuard<'static, Global>> {
    let start = std::time::Instant::now();
    loop {
        match GLOBAL.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= wait {
                    return None;
                }
                std::thread::yield_now();
            }
        }
    }
}

/// Owner-thread-only lookup tables, off the hot path.
struct Maps {
    children: HashMap<(u32, usize), *const Node>,
    overflow: HashMap<(usize, bool), *const Node>,
}

/// The calling thread's profiler state. Const-initialised; set up on the
/// first marked call.
struct ThreadState {
    arena: Cell<*const Arena>,
    depth: Cell<usize>,
    stack: Cell<*mut *const Node>,
    cap: Cell<usize>,
    maps: Cell<*mut Maps>,
    busy: Cell<bool>,
    /// Set when the thread's exit tore the state down.
    dead: Cell<bool>,
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
    static STATE: ThreadState = const {
        ThreadState {
            arena: Cell::new(core::ptr::null()),
            depth: Cell::new(0),
            stack: Cell::new(core::ptr::null_mut()),
            cap: Cell::new(0),
            maps: Cell::new(core::ptr::null_mut()),
            busy: Cell::new(false),
            dead: Cell::new(false),
        }
    };
    static EXIT: ThreadExit = const { ThreadExit };
}

impl ThreadState {
    /// Pushes a frame for `site`; returns the node and the frame's depth.
    #[inline(always)]
    fn push(&self, site: &'static CallSite) -> Option<(*const Node, usize)> {
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
        let node = if parent_ref.mru_site.load(Ordering::Relaxed) == site_ptr {
            parent_ref.mru_child.load(Ordering::Relaxed).cast_const()
        } else {
            self.lookup(parent_ref, site)?
        };
        // SAFETY: `next < cap`, as above.
        unsafe { *stack.add(next) = node };
        self.depth.set(next);
        Some((node, next))
    }

    #[cold]
    #[inline(never)]
    fn push_cold(&self, site: &'static CallSite) -> Option<(*const Node, usize)> {
        if self.busy.get() {
            self.note_reentrant();
            return None;
        }
        if self.dead.get() || !RECORDING.load(Ordering::Relaxed) {
            return None;
        }
        self.busy.set(true);
        let ok = if self.arena.get().is_null() {
            self.setup()
        } else {
            self.grow()
        };
        self.busy.set(false);
        if ok {
            self.push(site)
        } else {
            None
        }
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
        let current = std::thread::current();
        let name = current
            .name()
            .map_or_else(|| format!("{:?}", current.id()), str::to_owned);
        let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
        let arena = Arc::new(Arena::new(name, id));
        let Some(root) = arena.push(None, u32::MAX, 0) else {
            return false;
        };
        lock_global().live.push(Arc::clone(&arena));
        let maps = Box::new(Maps {
            children: HashMap::new(),
            overflow: HashMap::new(),
        });
        self.maps.set(Box::into_raw(maps));
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
        let site_ptr = (site as *const CallSite).cast_mut();
        let parent_index = parent.index.load(Ordering::Relaxed);
        let is_overflow_parent = parent.flags.load(Ordering::Relaxed) != 0;
        if !is_overflow_parent {
            if let Some(&node) = maps.children.get(&(parent_index, site_ptr as usize)) {
                parent.mru_site.store(site_ptr, Ordering::Relaxed);
                parent.mru_child.store(node.cast_mut(), Ordering::Relaxed);
                return Some(node);
            }
            if arena.len() < MAX_NODES.load(Ordering::Relaxed) {
                site.register();
                note_recorded(site);
                let node = arena.push(Some(site), parent_index, 0)?;
                maps.children
                    .insert((parent_index, site_ptr as usize), node);
                parent.mru_site.store(site_ptr, Ordering::Relaxed);
                parent.mru_child.store(node.cast_mut(), Ordering::Relaxed);
                return Some(node);
            }
        }
        // The tree is full (or the parent is an overflow node, whose path is
        // unknown): use the per-site overflow node, outer or nested.
        let nested = self.site_on_stack(site_ptr);
        let node = match maps.overflow.get(&(site_ptr as usize, nested)) {
            Some(&n) => n,
            None => {
                site.register();
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
        if !is_overflow_parent {
            maps.children
                .insert((parent_index, site_ptr as usize), node);
            parent.mru_site.store(site_ptr, Ordering::Relaxed);
            parent.mru_child.store(node.cast_mut(), Ordering::Relaxed);
        }
        Some(node)
    }

    /// Whether an activation of `site` is open on this thread's stack.
    fn site_on_stack(&self, site: *mut CallSite) -> bool {
        let stack = self.stack.get();
        (1..=self.depth.get()).rev().any(|d| {
            // SAFETY: `d <= depth < cap`; stacked pointers are arena nodes.
            let node = unsafe { &**stack.add(d) };
            node.site.load(Ordering::Relaxed) == site
        })
    }

    /// Pops the guard's frame and records its delta.
    #[inline(always)]
    fn pop(&self, depth: usize, node: *const Node, start: u64, end: u64) {
        if !self.pop_frame(depth, node) {
            if depth == DETACHED {
                // SAFETY: a detached guard's `node` holds its `&'static CallSite`.
                record_detached(unsafe { &*node.cast::<CallSite>() }, start, end);
            }
            return;
        }
        // SAFETY: `node` was handed out by this thread's arena, which is
        // alive: the state is not torn down (`pop_frame` said so).
        let node = unsafe { &*node };
        node.record(end.wrapping_sub(start));
        if TRACE_ON.load(Ordering::Relaxed) {
            self.trace(node, start, end);
        }
    }

    /// Appends one event to this thread's trace buffer.
    #[cold]
    #[inline(never)]
    fn trace(&self, node: &Node, start: u64, end: u64) {
        let arena = self.arena.get();
        if let (false, Some(site)) = (arena.is_null(), node.site()) {
            // SAFETY: as in `note_reentrant`.
            unsafe { &*arena }.trace.record(site, start, end);
        }
    }

    /// Pops the frame at `depth`, resynchronising if it is not on top.
    /// Returns whether the call is to be recorded on `node`.
    #[inline(always)]
    fn pop_frame(&self, depth: usize, node: *const Node) -> bool {
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
            LOST.fetch_add(1, Ordering::Relaxed);
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
        let arena = self.arena.replace(core::ptr::null());
        if arena.is_null() {
            return;
        }
        // SAFETY: created by `Arc::into_raw` in `setup`, released once here.
        let arena = unsafe { Arc::from_raw(arena) };
        let tree = arena.snapshot();
        let (events, dropped) = arena.trace.copy();
        {
            let mut g = lock_global();
            if !events.is_empty() || dropped > 0 {
                g.finished_traces.push((
                    arena.thread_id,
                    arena.thread_name.clone(),
                    events,
                    dropped,
                ));
            }
            g.finished.merge(&tree);
            g.finished_resynced += arena.resynced.load(Ordering::Relaxed);
            g.finished_orphaned += arena.orphaned.load(Ordering::Relaxed);
            g.finished_reentrant += arena.reentrant.load(Ordering::Relaxed);
            g.finished_threads
                .push((arena.thread_name.clone(), arena.thread_id, tree));
            g.live.retain(|a| !Arc::ptr_eq(a, &arena));
        }
        let maps = self.maps.replace(core::ptr::null_mut());
        if !maps.is_null() {
            // SAFETY: created by `Box::into_raw` in `setup`, released once.
            drop(unsafe { Box::from_raw(maps) });
        }
        let stack = self.stack.replace(DEAD_STACK.0.as_ptr().cast_mut());
        let cap = self.cap.replace(0);
        self.depth.set(0);
        if !stack.is_null() {
            // SAFETY: from a `Vec` with length and capacity `cap`.
            drop(unsafe { Vec::from_raw_parts(stack, cap, cap) });
        }
    }
}

/// Times one activation of a call site, from [`Guard::enter`] to drop.
///
/// Created by the code `#[profile]` and `prof_scope!` generate. Not `Send`:
/// a guard belongs to the thread whose stack it was pushed on.
#[must_use = "the guard times until it is dropped"]
pub struct Guard {
    start: u64,
    node: *const Node,
    depth: usize,
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// Starts timing one activation of `site`.
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Guard {
        match STATE.with(|s| s.push(site)) {
            Some((node, depth)) => Guard {
                start: ticks(),
                node,
                depth,
                _not_send: PhantomData,
            },
            None => Guard::miss(site),
        }
    }

    /// No frame was pushed: profiling off, a re-entrant call, or this
    /// thread's state already torn down (then the call is timed detached).
    #[cold]
    #[inline(never)]
    fn miss(site: &'static CallSite) -> Guard {
        if RECORDING.load(Ordering::Relaxed) && STATE.with(|s| s.dead.get()) {
            return Guard::detached(site);
        }
        Guard {
            start: 0,
            node: core::ptr::null(),
            depth: 0,
            _not_send: PhantomData,
        }
    }

    /// A guard for a call made after this thread's profiler state was torn
    /// down (from another thread-local's destructor): it has no stack, and
    /// `node` holds the site.
    #[cold]
    #[inline(never)]
    fn detached(site: &'static CallSite) -> Guard {
        Guard {
            start: ticks(),
            node: (site as *const CallSite).cast(),
            depth: DETACHED,
            _not_send: PhantomData,
        }
    }
}

/// Depth of a guard created after its thread's profiler state was gone.
const DETACHED: usize = usize::MAX;

/// A detached call (made after its thread's state was torn down): recorded
/// straight into the finished threads' tree, as a call with no marked
/// caller, or counted as lost if that lock cannot be had promptly.
#[cold]
#[inline(never)]
fn record_detached(site: &'static CallSite, start: u64, end: u64) {
    let Some(mut g) = try_lock_global(std::time::Duration::from_millis(100)) else {
        LOST.fetch_add(1, Ordering::Relaxed);
        return;
    };
    site.register();
    note_recorded(site);
    let one = Tree::single(
        site,
        end.wrapping_sub(start),
        MAX_TICKS.load(Ordering::Relaxed),
    );
    g.finished.merge(&one);
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.depth == 0 {
            return;
        }
        let end = ticks();
        STATE.with(|s| s.pop(self.depth, self.node, self.start, end));
    }
}

/// One poll of an async call, pushed on this thread's stack.
pub(crate) struct Poll {
    node: *const Node,
    depth: usize,
    start: u64,
}

impl Poll {
    /// The tick count at the start of the poll.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }
}

/// Pushes a frame for one poll of `site`; `None` when not recording.
#[inline]
pub(crate) fn poll_enter(site: &'static CallSite) -> Option<Poll> {
    if !RECORDING.load(Ordering::Relaxed) {
        return None;
    }
    let (node, depth) = STATE.with(|s| s.push(site))?;
    Some(Poll {
        node,
        depth,
        start: ticks(),
    })
}

/// Pops a poll's frame and adds its busy time. If the call completed,
/// also counts the call with its busy time (min/max) and wall time.
/// Returns the poll's accepted delta (0 if rejected).
#[inline]
pub(crate) fn poll_exit(p: &Poll, completed: Option<(u64, u64)>) -> u64 {
    let end = ticks();
    let delta = end.wrapping_sub(p.start);
    let mut accepted = 0;
    STATE.with(|s| {
        if !s.pop_frame(p.depth, p.node) {
            return;
        }
        // SAFETY: as in `ThreadState::pop`: a node of this thread's live arena.
        let node = unsafe { &*p.node };
        if node.record_poll(delta) {
            accepted = delta;
        }
        if std::thread::panicking() {
            bump(&node.unwound, 1);
        }
        if TRACE_ON.load(Ordering::Relaxed) {
            s.trace(node, p.start, end);
        }
        if let Some((busy_before, first_poll)) = completed {
            bump(&node.calls, 1);
            node.min_max(busy_before + accepted);
            bump(&node.wall, end.wrapping_sub(first_poll));
        }
    });
    accepted
}

/// Counts an async call of `site` dropped before completion, on the
/// dropping thread's current path.
pub(crate) fn cancel(site: &'static CallSite) {
    if let Some(p) = poll_enter(site) {
        STATE.with(|s| {
            if s.pop_frame(p.depth, p.node) {
                // SAFETY: as in `poll_exit`.
                bump(unsafe { &(*p.node).cancelled }, 1);
            }
        });
    }
}

/// Calls and ticks of `site` summed over this thread's tree nodes.
pub(crate) fn site_totals_on_this_thread(site: &'static CallSite) -> (u64, u64) {
    let want = (site as *const CallSite).cast_mut();
    STATE.with(|s| {
        let arena = s.arena.get();
        if arena.is_null() {
            return (0, 0);
        }
        // SAFETY: as in `note_reentrant`.
        let arena = unsafe { &*arena };
        (0..arena.len())
            .filter_map(|i| arena.get(i))
            .filter(|n| n.site.load(Ordering::Relaxed) == want)
            .fold((0, 0), |(c, t), n| {
                (
                    c + n.calls.load(Ordering::Relaxed),
                    t + n.ticks.load(Ordering::Relaxed),
                )
            })
    })
}

/// Records a raw delta against `site` as one finished call on this thread,
/// exactly as a guard's drop would (rejection included). For tests of the
/// accumulation and rejection rules without a real clock.
pub fn record_raw(site: &'static CallSite, delta: u64) {
    if !RECORDING.load(Ordering::Relaxed) {
        return;
    }
    STATE.with(|s| {
        if let Some((node, depth)) = s.push(site) {
            s.pop(depth, node, 0, delta);
        }
    });
}

/// Zeroes every accumulator of every thread (structure kept).
pub(crate) fn reset_all() {
    let mut g = lock_global();
    for a in &g.live {
        a.reset();
    }
    g.finished = Tree::new();
    g.finished_threads.clear();
    g.finished_resynced = 0;
    g.finished_orphaned = 0;
    g.finished_reentrant = 0;
    g.finished_traces.clear();
    LOST.store(0, Ordering::Relaxed);
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
}
