//! A thread's state from its first marked call to its exit: set-up,
//! growth of the shadow stack, and the teardown that merges the thread's
//! tree into the finished threads' data.

use super::children::{Maps, Recent};
use super::{set_slot, Slot, ThreadState, STATE};
use crate::record::node::Node;
use crate::record::{pages, pending, registry, sampler, sigmask};
use core::sync::atomic::{AtomicPtr, Ordering};

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

/// Tears the calling thread's state down when the thread exits, where no
/// thread-exit key could be had (see [`exit_key`]): a thread-local with a
/// destructor, registered by the thread's first marked call (registering
/// allocates, so not from a signal handler: see `setup`).
struct ThreadExit;

impl Drop for ThreadExit {
    fn drop(&mut self) {
        STATE.with(ThreadState::teardown);
    }
}

thread_local! {
    static EXIT: ThreadExit = const { ThreadExit };
}

/// The thread-exit key: a `pthread` key created once at start-up, whose
/// destructor tears a thread's state down when it exits. A thread's first
/// marked call arms it for its thread with `pthread_setspecific`, which
/// for one of the first 32 keys neither allocates nor locks: safe in a
/// signal handler (registering a thread-local destructor instead
/// allocates, and deadlocked a handler that had interrupted `malloc`).
#[cfg(unix)]
pub(crate) mod exit_key {
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// The key + 1 (0: none).
    static KEY: AtomicUsize = AtomicUsize::new(0);

    /// glibc keeps the first 32 keys' values inline: setting one of them
    /// allocates nothing.
    const INLINE_KEYS: usize = 32;

    extern "C" fn on_exit(_: *mut libc::c_void) {
        super::STATE.with(super::ThreadState::teardown);
    }

    /// Creates the key (once, at start-up, before any thread of the
    /// program's records).
    pub(crate) fn create() {
        if KEY.load(Ordering::Relaxed) != 0 {
            return;
        }
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: a valid out pointer and a destructor that lives as long
        // as the process.
        if unsafe { libc::pthread_key_create(&mut key, Some(on_exit)) } == 0 {
            KEY.store(key as usize + 1, Ordering::Release);
        }
    }

    /// Arms the key for the calling thread; false when there is no key,
    /// or none that can be set without allocating.
    pub(super) fn arm() -> bool {
        let k = KEY.load(Ordering::Acquire);
        if k == 0 || k > INLINE_KEYS {
            return false;
        }
        // SAFETY: a key this module created; any non-null value arms its
        // destructor for this thread.
        unsafe {
            libc::pthread_setspecific((k - 1) as libc::pthread_key_t, 1 as *const libc::c_void) == 0
        }
    }
}

/// Arms the calling thread's teardown at its exit: the thread-exit key
/// where there is one; else a thread-local destructor, which allocates to
/// register, so only where the thread cannot be in a signal handler
/// (`pending`: it might be). False when the thread is already exiting
/// (its thread-locals are gone) or nothing could be armed.
fn arm_exit(pending: bool) -> Result<(), bool> {
    #[cfg(unix)]
    if exit_key::arm() {
        return Ok(());
    }
    if pending {
        return Err(false);
    }
    // If the thread is already exiting (a marked call from another
    // thread-local's destructor), never set up: such calls are recorded
    // detached.
    EXIT.try_with(|_| {}).map_err(|_| true)
}

impl ThreadState {
    /// First marked call on this thread: create the arena, root and stack.
    /// Async-signal-safe where the thread-exit key is (every allocation
    /// from pages, one compare-and-swap to join the live threads, no
    /// lock): the first call may run in a signal handler that interrupted
    /// the program's allocator.
    pub(super) fn setup(&self) -> bool {
        // Asking std for the name while std is still starting the thread
        // (from a signal handler) would abort the thread's start; and std
        // allocates the name.
        let pending = sigmask::any_blocked();
        match arm_exit(pending) {
            Ok(()) => {}
            Err(exiting) => {
                if exiting {
                    self.dead.set(true);
                    self.set_stack(dead_stack(), 1);
                }
                return false;
            }
        }
        // The sampler's own thread is named without asking std (which
        // allocates the name): it allocates nothing from the program's
        // allocator after its start.
        let tools = sampler::on_its_thread();
        let name = (!pending && !tools).then(sigmask::std_thread_name);
        self.name_pending.set(pending);
        // Settled before any node of any thread records (the pop's cold
        // path reads it).
        crate::switches::settle_max_ticks();
        let arena = registry::new_thread(if tools {
            Some(sampler::SAMPLER_THREAD)
        } else {
            name.as_deref()
        });
        // SAFETY: null, or the thread's reference, just made; released by
        // teardown.
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
        // One page: 512 frames.
        let (p, len) = new_stack(1, |_| root);
        if p.is_null() {
            return self.give_up();
        }
        self.depth.set(0);
        self.set_stack(p, len);
        self.cap.set(len);
        // The sampler's own thread (its calibration's calls) is not
        // sampled: it is tickprof's, not the program's.
        if !tools {
            self.sampler_slot.set(sampler::register(self));
            if !pending {
                sampler::ensure_started();
            }
        }
        true
    }

    /// A set-up the system refused memory for: the thread records nothing
    /// (its calls are detached); what was made is given back at its exit.
    fn give_up(&self) -> bool {
        self.dead.set(true);
        if self.stack.load(Ordering::Relaxed).is_null() {
            self.set_stack(dead_stack(), 1);
        }
        false
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
        // SAFETY: the thread's reference (from `setup`), alive until
        // released below.
        let a = unsafe { &*arena };
        if self.name_pending.replace(false) {
            // std's thread handle may already be gone (its teardown can run
            // before this one when the first marked call preceded std's
            // start): the operating system's name, at most 15 bytes.
            if let Some(name) = sigmask::os_thread_name() {
                a.set_late_name(&name);
            }
        }
        // Frames still open now belong to guards that were never dropped.
        a.leaked.store(self.depth.get() as u64, Ordering::Relaxed);
        registry::finish_thread(arena);
        // SAFETY: the thread's reference, given back once; `arena` is not
        // used after.
        unsafe { crate::record::arena::Arena::release(arena) };
        // SAFETY: both from `in_pages` in `setup`, freed once; no push
        // reaches `push_miss` any more (`cap` is 0).
        unsafe {
            free_in_pages(self.maps.replace(core::ptr::null_mut()));
            free_in_pages(self.recent.replace(core::ptr::null()).cast_mut());
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
}
