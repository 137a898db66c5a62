//! A thread's tree from its first marked call to its exit: the arena, the
//! root and the lookup tables set up, and the teardown that merges the
//! tree into the finished threads' data. What else a thread's start and
//! exit do (the exit's registration, the sampler's table) is the caller's:
//! `record::life`.

use super::children::{Maps, Recent};
use super::{ThreadState, DEAD};
use crate::record::node::Node;
use crate::record::{pages, pending, registry};
use core::sync::atomic::Ordering;

/// What a thread's set-up is told by its caller.
pub(in crate::record) struct Setup<'a> {
    /// The thread's name, where it could be asked for.
    pub name: Option<&'a str>,
    /// The name could not be asked for (the first call may run in a
    /// signal handler while std starts the thread): found later.
    pub name_pending: bool,
}

/// `value` moved into pages of its own (see [`pages`]); `None` when the
/// system refuses the memory.
fn in_pages<T>(value: T) -> Option<*mut T> {
    debug_assert!(core::mem::align_of::<T>() <= pages::PAGE);
    let p = pages::alloc_zeroed(core::mem::size_of::<T>()).cast::<T>();
    if p.is_null() {
        return None;
    }
    // SAFETY: a fresh mapping, page-aligned, large enough.
    unsafe { p.write(value) };
    Some(p)
}

/// Drops and frees what [`in_pages`] made (null: nothing).
///
/// # Safety
///
/// `p` is null or came from `in_pages::<T>`, and is not used again.
unsafe fn free_in_pages<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: per the contract.
        unsafe {
            core::ptr::drop_in_place(p);
            pages::free(p.cast(), core::mem::size_of::<T>());
        }
    }
}

impl ThreadState {
    /// Sets the thread's tree up (its first marked call): the arena, the
    /// root, the lookup tables; the root becomes the top. Async-signal-
    /// safe: every allocation from pages, one compare-and-swap to join the
    /// live threads, no lock (the first call may run in a signal handler
    /// that interrupted the program's allocator). On failure (no memory)
    /// the state is dead: the thread's calls are recorded detached.
    pub(in crate::record) fn set_up_tree(&self, setup: Setup<'_>) -> bool {
        self.name_pending.set(setup.name_pending);
        let arena = registry::new_thread(setup.name);
        // SAFETY: null, or the thread's reference, just made; released by
        // the teardown.
        let Some(a) = (unsafe { arena.as_ref() }) else {
            return self.give_up();
        };
        self.arena.set(arena);
        let Some(root) = a.push(None, u32::MAX, 0) else {
            return self.give_up();
        };
        // SAFETY: `root` is a node of the arena, alive here.
        pending::fold_into(unsafe { &*root });
        let (Some(maps), Some(recent)) = (in_pages(Maps::new()), in_pages(Recent::new())) else {
            return self.give_up();
        };
        self.maps.set(maps);
        self.recent.set(recent);
        self.set_top(root);
        true
    }

    /// The state of a thread that will never record (its set-up found no
    /// memory, or the thread is already exiting): dead, its calls
    /// recorded detached; what was made is given back at its exit.
    pub(in crate::record) fn give_up(&self) -> bool {
        self.dead.set(true);
        self.set_top(&DEAD);
        false
    }

    /// At thread exit: merges this thread's tree into the finished
    /// threads' data, frees the state, and leaves it dead (later marked
    /// calls on this thread are recorded detached). The caller has taken
    /// the thread off the sampler's table first.
    pub(in crate::record) fn tear_down_tree(&self) {
        self.dead.set(true);
        // Marked calls made while the state is taken apart (a marked
        // global allocator called by the merge below) are not recorded:
        // `busy` turns them away.
        self.busy.set(true);
        let leaked = self.open_calls();
        self.set_top(&DEAD);
        let arena = self.arena.replace(core::ptr::null());
        if arena.is_null() {
            self.busy.set(false);
            return;
        }
        // SAFETY: the thread's reference (from `set_up_tree`), alive until
        // released below.
        let a = unsafe { &*arena };
        if self.name_pending.replace(false) {
            // std's thread handle may already be gone (its teardown can run
            // before this one when the first marked call preceded std's
            // start): the operating system's name, at most 15 bytes.
            if let Some(name) = crate::record::sigmask::os_thread_name() {
                a.set_late_name(&name);
            }
        }
        // Calls still open now belong to guards that were never dropped.
        a.leaked.store(leaked, Ordering::Relaxed);
        registry::finish_thread(arena);
        // SAFETY: the thread's reference, given back once; `arena` is not
        // used after.
        unsafe { crate::record::arena::Arena::release(arena) };
        // SAFETY: both from `in_pages` in `set_up_tree`, freed once; the
        // top is the dead sentinel, whose lookups never reach them.
        unsafe {
            free_in_pages(self.maps.replace(core::ptr::null_mut()));
            free_in_pages(self.recent.replace(core::ptr::null()).cast_mut());
        }
        // SAFETY: this thread's own; no call of it is open any more (the
        // state is dead: every exit now resynchronises nothing).
        unsafe { (*self.overflow.get()).free() };
        // Calls from later thread-local destructors are recorded detached.
        self.busy.set(false);
    }

    /// Appends one event to this thread's trace buffer (tickprof's own
    /// internal sites are not traced).
    #[cold]
    #[inline(never)]
    pub(in crate::record) fn trace(&self, node: &Node, start: u64, end: u64) {
        if let (Some(arena), Some(site)) = (self.arena(), node.site()) {
            if !site.is_internal() {
                arena.trace.record(site, start, end);
            }
        }
    }

    /// Sets or clears `busy` (the set-up's caller, around it); returns
    /// the value before.
    pub(in crate::record) fn set_busy(&self, busy: bool) -> bool {
        self.busy.replace(busy)
    }
}
