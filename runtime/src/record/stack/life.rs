//! A thread's state from its first marked call to its exit: set-up,
//! growth of the shadow stack, and the teardown that merges the thread's
//! tree into the finished threads' data.

use super::children::{Maps, Recent};
use super::{set_slot, Slot, ThreadState, STATE};
use crate::record::node::Node;
use crate::record::{pages, pending, registry, sampler, sigmask};
use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// The shadow stack of a torn-down state: one null frame, only ever read
/// (the state's capacity is 0, so nothing is pushed on it).
static DEAD_STACK: [Slot; 1] = [AtomicPtr::new(core::ptr::null_mut())];

/// The dead stack, as a state's stack pointer.
fn dead_stack() -> *mut Slot {
    DEAD_STACK.as_ptr().cast_mut()
}

/// The slots of a shadow stack of `bytes`.
const fn slots_in(bytes: usize) -> usize {
    bytes / core::mem::size_of::<Slot>()
}

/// A new shadow stack of at least `cap` slots from pages (see [`pages`]),
/// slot `i` holding `fill(i)`: its slots and its length; null when the
/// system refuses.
fn new_stack(cap: usize, fill: impl Fn(usize) -> *const Node) -> (*mut Slot, usize) {
    let bytes = pages::rounded(cap * core::mem::size_of::<Slot>());
    let p = pages::alloc_zeroed(bytes).cast::<Slot>();
    if p.is_null() {
        return (p, 0);
    }
    let len = slots_in(bytes);
    for i in 0..len {
        let node = fill(i);
        // SAFETY: `i < len`, the slots of the fresh mapping (zeroed: null
        // pointers, valid `AtomicPtr`s).
        unsafe { set_slot(p, i, node) };
    }
    (p, len)
}

/// Gives back a stack from [`new_stack`] of `len` slots.
///
/// # Safety
///
/// `p` came from `new_stack` with that length and is not used again.
unsafe fn free_stack(p: *mut Slot, len: usize) {
    if !p.is_null() && p != dead_stack() {
        // SAFETY: per the contract, `len * 8` bytes from `pages`.
        unsafe { pages::free(p.cast(), len * core::mem::size_of::<Slot>()) };
    }
}

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
            self.set_stack(dead_stack(), 1);
            return false;
        }
        // Asking std for the name while std is still starting the thread
        // (from a signal handler) would abort the thread's start.
        let pending = sigmask::any_blocked();
        let name = (!pending).then(sigmask::std_thread_name);
        self.name_pending.set(pending);
        // Settled before any node of any thread records (the pop's cold
        // path reads it).
        crate::switches::settle_max_ticks();
        let arena = registry::new_thread(name);
        let Some(root) = arena.push(None, u32::MAX, 0) else {
            return false;
        };
        // SAFETY: `root` is a node of `arena`, alive here.
        pending::fold_into(unsafe { &*root });
        let maps = Box::new(Maps::new());
        self.maps.set(Box::into_raw(maps));
        let recent = Box::new(Recent::new());
        self.recent.set(Box::into_raw(recent));
        self.arena.set(Arc::into_raw(arena));
        // One page: 512 frames.
        let (p, len) = new_stack(1, |_| root);
        if p.is_null() {
            return false;
        }
        self.depth.set(0);
        self.set_stack(p, len);
        self.cap.set(len);
        self.sampler_slot.set(sampler::register(self));
        if !pending {
            sampler::ensure_started();
        }
        true
    }

    /// Publishes the stack `p` of `len` slots, for the sampler too: the
    /// pointer before the length, so that a sampler reading the length
    /// first never pairs a longer length with a shorter stack.
    fn set_stack(&self, p: *mut Slot, len: usize) {
        self.stack.store(p, Ordering::Release);
        self.stack_len.store(len, Ordering::Release);
    }

    /// Doubles the shadow stack. The old one is freed once the sampler
    /// is not reading it.
    pub(super) fn grow(&self) -> bool {
        let cap = self.cap.get();
        let old = self.stack.load(Ordering::Relaxed);
        let old_len = self.stack_len.load(Ordering::Relaxed);
        // SAFETY: `old` has `cap` initialised slots, the root in slot 0.
        let root = unsafe { super::slot(old, 0) };
        let (p, len) = new_stack(cap * 2, |i| {
            if i < cap {
                // SAFETY: as above, `i < cap`.
                unsafe { super::slot(old, i) }
            } else {
                root
            }
        });
        if p.is_null() {
            return false;
        }
        self.set_stack(p, len);
        self.cap.set(len);
        sampler::quiesce(self.sampler_slot.get());
        // SAFETY: `old` came from `new_stack` with `old_len` slots; the
        // state and the sampler (quiesced above) no longer read it.
        unsafe { free_stack(old, old_len) };
        true
    }

    /// Points a state that was never set up at the (read-only) dead stack,
    /// so that a guard's drop can read its top frame (hooks with the
    /// profile off, where no frame is ever pushed).
    pub(in crate::record) fn ensure_stack(&self) {
        if self.stack.load(Ordering::Relaxed).is_null() {
            self.set_stack(dead_stack(), 1);
        }
    }
}

impl ThreadState {
    /// At thread exit: merge this thread's tree into the finished threads'
    /// data, free the state, and leave it dead (later marked calls on this
    /// thread are recorded detached).
    pub(super) fn teardown(&self) {
        self.dead.set(true);
        // The sampler lets go of this thread first: it reads the stack and
        // writes the nodes freed below.
        sampler::unregister(self.sampler_slot.replace(u32::MAX));
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
        let stack = self.stack.load(Ordering::Relaxed);
        let stack_len = self.stack_len.load(Ordering::Relaxed);
        self.set_stack(dead_stack(), 1);
        self.depth.set(0);
        debug_assert!(stack_cap == 0 || stack_cap == stack_len);
        // SAFETY: from `new_stack` with `stack_len` slots; the state now
        // points at the dead stack, and the sampler let go of it above.
        unsafe { free_stack(stack, stack_len) };
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
