//! Whether a thread's first marked call may be running in a signal
//! handler, and the operating system's name of a thread.
//!
//! A signal delivered to a thread that std is still starting runs its
//! handler before std has set the thread's handle; `std::thread::current()`
//! would then create one, and std aborts the thread's start ("current
//! thread handle already set"). While a handler runs, its signal is blocked
//! (unless it was installed with `SA_NODEFER`), so a thread that blocks no
//! signal with a handler is not in one: only then does tickprof ask std
//! for the thread's name (or start its sampler, which allocates). A
//! blocked signal without a handler (the `sigwait` idiom) says nothing. Otherwise the name is found later (see
//! `ThreadState::setup`). Signals the process already blocked when it was
//! loaded do not count: a process started with a signal blocked (under
//! `perf record`, say) would otherwise never be taken to be outside a
//! handler.

/// The signals the process blocked when tickprof was loaded: its main
/// thread's mask in tickprof's constructor, where no signal handler runs.
/// A process inherits its mask from the one that started it (`perf
/// record`, some shells and supervisors block a signal for good): such a
/// signal says nothing of a handler running. Set once, before `main`.
#[cfg(target_os = "linux")]
static AT_LOAD: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// The calling thread's blocked signals (`u64::MAX` when the kernel gave
/// more than 64 or none: unknown, so all).
#[cfg(target_os = "linux")]
fn blocked() -> u64 {
    extern "C" {
        fn pthread_sigmask(how: i32, set: *const u64, old: *mut u64) -> i32;
    }
    // glibc's and musl's `sigset_t` are 128 bytes; the kernel writes 8.
    let mut old = [0u64; 16];
    // SAFETY: with a null `set` the mask is only read, into `old`, which is
    // as large as any `sigset_t`.
    let r = unsafe { pthread_sigmask(0, core::ptr::null(), old.as_mut_ptr()) };
    if r != 0 || old[1..].iter().any(|&w| w != 0) {
        u64::MAX
    } else {
        old[0]
    }
}

/// Notes the signals blocked at load ([`AT_LOAD`]): from tickprof's
/// constructor, on the main thread, before `main`.
#[cfg(target_os = "linux")]
pub(crate) fn note_at_load() {
    // Unknown (`u64::MAX`): nothing noted, every blocked signal counts.
    let at_load = match blocked() {
        u64::MAX => 0,
        mask => mask,
    };
    AT_LOAD.store(at_load, core::sync::atomic::Ordering::Relaxed);
}

/// Not known off Linux: nothing to note.
#[cfg(not(target_os = "linux"))]
pub(crate) fn note_at_load() {}

/// Whether the calling thread blocks a signal the process did not block
/// when tickprof was loaded (then it may be running a signal handler).
/// One system call.
///
/// Only a signal with a handler counts (issue 54): a handler's own signal
/// has one, while a thread that blocks signals it has no handler for
/// (`main` blocks SIGINT and SIGTERM before it starts its threads, and a
/// `sigwait` thread takes them) is not in a handler, and would otherwise
/// keep the sampler from starting for the whole run. One system call,
/// and one `sigaction` per signal blocked beyond those of the load.
#[cfg(target_os = "linux")]
pub(super) fn any_blocked() -> bool {
    let mask = blocked();
    if mask == u64::MAX {
        return true;
    }
    let mut extra = mask & !AT_LOAD.load(core::sync::atomic::Ordering::Relaxed);
    while extra != 0 {
        let sig = extra.trailing_zeros() as i32 + 1;
        extra &= extra - 1;
        if handled(sig) {
            return true;
        }
    }
    false
}

/// Whether signal `sig` has a handler (neither the default action nor
/// ignored); true when that cannot be known. Async-signal-safe.
#[cfg(target_os = "linux")]
fn handled(sig: i32) -> bool {
    // SAFETY: `sigaction` is plain data, written by the call (a null new
    // action only reads the current one).
    unsafe {
        let mut old: libc::sigaction = core::mem::zeroed();
        if libc::sigaction(sig, core::ptr::null(), &mut old) != 0 {
            return true;
        }
        old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN
    }
}

/// Whether the calling thread blocks any signal: not known off Linux, so
/// never assumed.
#[cfg(not(target_os = "linux"))]
pub(super) fn any_blocked() -> bool {
    false
}

/// The calling thread's name as the operating system has it (at most 15
/// bytes on Linux), without asking std.
pub(super) fn os_thread_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/thread-self/comm").ok()?;
    let name = name.trim_end_matches('\n');
    (!name.is_empty()).then(|| name.to_owned())
}

/// The calling thread's name as std has it (its id when unnamed). Only
/// where std has set the thread's handle (see the module docs).
pub(super) fn std_thread_name() -> String {
    let current = std::thread::current();
    current
        .name()
        .map_or_else(|| format!("{:?}", current.id()), str::to_owned)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::any_blocked;

    extern "C" fn nothing(_: i32) {}

    #[test]
    fn only_a_blocked_signal_with_a_handler_looks_like_one_running() {
        // On threads of their own: the masks are theirs.
        let with_mask = |sig: i32| {
            std::thread::spawn(move || {
                // SAFETY: a set built by the libc calls, then blocked on
                // this thread only.
                unsafe {
                    let mut set: libc::sigset_t = core::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, sig);
                    libc::pthread_sigmask(libc::SIG_BLOCK, &set, core::ptr::null_mut());
                }
                any_blocked()
            })
            .join()
            .unwrap()
        };
        // The sigwait idiom: blocked, no handler.
        assert!(!with_mask(libc::SIGRTMIN() + 6));
        // A handler's own signal.
        let sig = libc::SIGRTMIN() + 7;
        // SAFETY: a handler that does nothing, for a signal nobody sends.
        unsafe { libc::signal(sig, nothing as extern "C" fn(i32) as libc::sighandler_t) };
        assert!(with_mask(sig));
    }
}
