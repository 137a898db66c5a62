//! Whether a thread's first marked call may be running in a signal
//! handler, and the operating system's name of a thread.
//!
//! A signal delivered to a thread that std is still starting runs its
//! handler before std has set the thread's handle; `std::thread::current()`
//! would then create one, and std aborts the thread's start ("current
//! thread handle already set"). While a handler runs, its signal is blocked
//! (unless it was installed with `SA_NODEFER`), so a thread whose signal
//! mask is empty is not in one: only then does tickprof ask std for the
//! thread's name. Otherwise the name is found later (see
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
#[cfg(target_os = "linux")]
pub(super) fn any_blocked() -> bool {
    blocked() & !AT_LOAD.load(core::sync::atomic::Ordering::Relaxed) != 0
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
