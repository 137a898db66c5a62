//! A thread's start and end as the recorder sees them: its first marked
//! call sets it up (its tree, its exit's registration, its entry in the
//! sampler's table, the sampler itself if it is not running, its
//! program-counter timer with the feature `inlined`), and its exit tears
//! it down (off the sampler's table and its timer stopped first, then the
//! tree merged into the finished threads').

use super::stack::{Setup, ThreadState, STATE};
use super::{sampler, sigmask};

/// Tears the calling thread's state down when the thread exits, where no
/// thread-exit key could be had (see [`exit_key`]): a thread-local with a
/// destructor, registered by the thread's first marked call (registering
/// allocates, so not from a signal handler: see [`set_up`]).
struct ThreadExit;

impl Drop for ThreadExit {
    fn drop(&mut self) {
        STATE.with(tear_down);
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
        super::STATE.with(super::tear_down);
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
/// (`pending`: it might be). `Err(true)` when the thread is already
/// exiting (its thread-locals are gone), `Err(false)` when nothing could
/// be armed.
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

/// The calling thread's first marked call: sets the thread up (see the
/// module docs). Async-signal-safe where the thread-exit key is: no lock,
/// no allocation from the program's allocator. What it takes is outside
/// every call's time; the report says how much. False when the thread
/// cannot record.
#[cold]
#[inline(never)]
pub(super) fn set_up(s: &ThreadState) -> bool {
    if !s.needs_setup() {
        return false;
    }
    let t0 = crate::clock::ticks();
    s.set_busy(true);
    let ok = set_up_busy(s);
    s.set_busy(false);
    if let Some(a) = s.arena() {
        a.setup_ticks.store(
            crate::clock::ticks().wrapping_sub(t0),
            core::sync::atomic::Ordering::Relaxed,
        );
    }
    ok
}

fn set_up_busy(s: &ThreadState) -> bool {
    // Asking std for the name while std is still starting the thread
    // (from a signal handler) would abort the thread's start; and std
    // allocates the name.
    let pending = sigmask::any_blocked();
    if let Err(exiting) = arm_exit(pending) {
        if exiting {
            s.give_up();
        }
        return false;
    }
    // The sampler's own thread is named without asking std (which
    // allocates the name): it allocates nothing from the program's
    // allocator after its start; its calls (the calibration's) are not
    // sampled.
    let tools = sampler::on_its_thread();
    let name = (!pending && !tools).then(sigmask::std_thread_name);
    // Settled before any node of any thread records (the exit's cold
    // path reads it).
    crate::switches::settle_max_ticks();
    let setup = Setup {
        name: if tools {
            Some(sampler::SAMPLER_THREAD)
        } else {
            name.as_deref()
        },
        name_pending: pending,
    };
    if !s.set_up_tree(setup) {
        return false;
    }
    if !tools {
        s.set_sampler_slot(sampler::register(s));
        if !pending {
            sampler::ensure_started();
        }
        #[cfg(all(feature = "inlined", target_os = "linux"))]
        if let Some(pcs) = s.arena().and_then(|a| a.pcs_or_new()) {
            super::pcs::start_thread(pcs);
        }
    }
    true
}

/// At the thread's exit: off the sampler's table (which reads the
/// thread's top and writes its nodes), then the tree torn down.
fn tear_down(s: &ThreadState) {
    sampler::unregister(s.set_sampler_slot(u32::MAX));
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    if let Some(pcs) = s.arena().and_then(|a| a.pcs()) {
        super::pcs::stop_thread(pcs);
    }
    s.tear_down_tree();
}
