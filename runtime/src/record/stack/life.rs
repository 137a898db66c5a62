//! A thread's state from its first marked call to its exit: set-up,
//! growth of the shadow stack, and the teardown that merges the thread's
//! tree into the finished threads' data.

use super::children::{Maps, Recent};
use super::{ThreadState, CALIBRATION_THREAD, STATE};
use crate::record::node::Node;
use crate::record::{pending, registry, sigmask};
use core::sync::atomic::Ordering;
use std::sync::Arc;

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
    static EXIT: ThreadExit = const { ThreadExit };
}

impl ThreadState {
    /// First marked call on this thread: create the arena, root and stack.
    pub(super) fn setup(&self) -> bool {
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
        pending::fold_into(unsafe { &*root }, !self.internal_only.get());
        let maps = Box::new(Maps::new());
        self.maps.set(Box::into_raw(maps));
        let recent = Box::new(Recent::new());
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
    pub(super) fn grow(&self) -> bool {
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

    /// Points a state that was never set up at the (read-only) dead stack,
    /// so that a guard's drop can read its top frame (hooks with the
    /// profile off, where no frame is ever pushed).
    pub(in crate::record) fn ensure_stack(&self) {
        if self.stack.get().is_null() {
            self.stack.set(DEAD_STACK.0.as_ptr().cast_mut());
        }
    }
}

impl ThreadState {
    /// At thread exit: merge this thread's tree into the finished threads'
    /// data, free the state, and leave it dead (later marked calls on this
    /// thread are recorded detached).
    pub(super) fn teardown(&self) {
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

impl ThreadState {
    /// Appends one event to this thread's trace buffer (tickprof's own
    /// calibration calls are not traced).
    #[cold]
    #[inline(never)]
    pub(in crate::record) fn trace(&self, node: &Node, start: u64, end: u64) {
        if let (Some(arena), Some(site)) = (self.arena(), node.site()) {
            if !site.is_internal() {
                arena.trace.record(site, start, end);
            }
        }
    }
}
