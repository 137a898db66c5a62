//! Program-counter samples (feature `inlined`, Linux): where in the code a
//! thread runs while a marked call is its current one, so that the report
//! can show the functions the compiler inlined into it (and the small ones
//! left unmarked) by their share of its time.
//!
//! Each recording thread has a clock of its CPU time that signals it at
//! half the sampler's rate ([`EVERY`]): a perf event (`perf_event_open`, a software
//! task-clock event, the high-resolution timer `perf record` uses), or
//! where the system refuses one (`kernel.perf_event_paranoid` 3, a
//! container's seccomp profile) a POSIX timer (`timer_create` with
//! `CLOCK_THREAD_CPUTIME_ID`), which fires at most at the kernel's tick
//! rate. The signal, `SIGURG` (ignored by default: a program that resets every
//! signal's disposition is never killed by a late tick), runs [`on_tick`],
//! which only reads the interrupted program counter and the thread's
//! current node and counts the pair in the thread's table ([`Pcs`]):
//! no allocation, no lock, no system call, no unwinding. A CPU-time timer
//! fires only while the thread runs, so a thread blocked in a system call
//! is never interrupted by it; the handler restarts what it interrupts
//! (`SA_RESTART`). The tables are read by reports (`Arena::snapshot`) and
//! resolved there, through the binary's debug information
//! (`crate::inlined`).

mod perf;
pub(crate) mod table;

use super::node::Node;
use super::stack::current;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use table::{Pcs, Source};

/// The signal the timers deliver.
const SIGNAL: libc::c_int = libc::SIGURG;

/// The program counter is sampled once every this many of the sampler's
/// periods (500 times a second of a thread's CPU time by default). Each
/// sample is a signal, which on a 2-vCPU KVM guest costs 30 to 90 µs of
/// the program's time (the timer's interrupt and the signal's delivery,
/// the exits to the host they take; a memory-bound workload suffers
/// most): at every period, 5% of semver's workload and 10% of indexmap's
/// (paired runs against no signal); at every second period semver's
/// marked run took 1.27× its unmarked time against 1.34×, with its rows'
/// agreement with perf 86.8% against 86.4%; at every fourth, 1.28× but
/// 79.7% (58 samples a run: a row of 3% got 2). See `docs/measured.md`.
pub(crate) const EVERY: u64 = 2;

/// The timers' period, set at start-up from `TICKPROF_SAMPLE` (0: no
/// program-counter samples).
static PERIOD_NS: AtomicU64 = AtomicU64::new(0);

/// Installs the handler (once, at start-up, before any thread of the
/// program records) for `hz` samples a second of each thread (0: none),
/// of their time in the kernel too if `kernel` (where the system allows).
/// A signal whose disposition the program set already (not the default)
/// is left alone: no samples then.
pub(crate) fn install(hz: u64, kernel: bool) {
    if hz == 0 {
        return;
    }
    perf::ask_kernel(kernel);
    // SAFETY: reading the current disposition into a zeroed struct.
    let mut old: libc::sigaction = unsafe { core::mem::zeroed() };
    // SAFETY: a valid signal and a valid out pointer; null new action.
    if unsafe { libc::sigaction(SIGNAL, core::ptr::null(), &mut old) } != 0
        || old.sa_sigaction != libc::SIG_DFL
    {
        return;
    }
    // SAFETY: a zeroed struct is a valid `sigaction` to fill in.
    let mut sa: libc::sigaction = unsafe { core::mem::zeroed() };
    sa.sa_sigaction = on_tick as *const () as usize;
    sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: an empty mask for the handler (`sigemptyset` on a valid
    // pointer), then the handler installed for our signal.
    unsafe {
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(SIGNAL, &sa, core::ptr::null_mut()) != 0 {
            return;
        }
    }
    PERIOD_NS.store(1_000_000_000 / hz.max(1) * EVERY, Ordering::Relaxed);
}

/// Starts the calling thread's samples, counting into `pcs`: a perf
/// event where the system allows one (`perf_event_open`: a software
/// task-clock event of the thread, at the period asked, its overflows
/// signalled to the thread), else a POSIX CPU-time timer (`timer_create`,
/// whose expiries the kernel checks at its tick: at most its tick rate,
/// 100 to 1,000 a second). System calls only, async-signal-safe: run at
/// the thread's set-up, or in a `fork` child's handler.
pub(crate) fn start_thread(pcs: &Pcs) {
    let ns = PERIOD_NS.load(Ordering::Relaxed);
    if ns == 0 || taken_over() {
        return;
    }
    // SAFETY: `gettid` has no preconditions.
    let tid = unsafe { libc::gettid() };
    let source = if PERF_REFUSED.load(Ordering::Relaxed) {
        None
    } else {
        perf::open(tid, ns)
    };
    let source = source.or_else(|| {
        PERF_REFUSED.store(true, Ordering::Relaxed);
        timer(tid, ns)
    });
    pcs.set_source(source);
}

/// Whether the program has set a disposition of its own for the signal
/// since [`install`] (its handler would get the ticks): if so, no thread
/// starts samples from now on ([`PERIOD_NS`] 0) and the caller stops the
/// running ones. One `sigaction` query; async-signal-safe.
pub(crate) fn taken_over() -> bool {
    if PERIOD_NS.load(Ordering::Relaxed) == 0 {
        return false;
    }
    // SAFETY: reading the current disposition into a zeroed struct.
    let mut now: libc::sigaction = unsafe { core::mem::zeroed() };
    // SAFETY: a valid signal and a valid out pointer; null new action.
    let read = unsafe { libc::sigaction(SIGNAL, core::ptr::null(), &mut now) } == 0;
    if !read || now.sa_sigaction == on_tick as *const () as usize {
        return false;
    }
    PERIOD_NS.store(0, Ordering::Relaxed);
    TAKEN.store(true, Ordering::Relaxed);
    true
}

/// Set when [`taken_over`] found the signal the program's.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// Whether [`taken_over`] has found the signal the program's.
pub(crate) fn given_up() -> bool {
    TAKEN.load(Ordering::Relaxed)
}

/// Stops a thread's samples from another thread (the program took the
/// signal over): its source closed, once.
pub(crate) fn stop_other(pcs: &Pcs) {
    close(pcs.take_source());
}

/// Set when the system refused a perf event: every later thread takes a
/// timer without asking again.
static PERF_REFUSED: AtomicBool = AtomicBool::new(false);

/// A CPU-time timer of thread `tid` every `ns`, signalling it.
fn timer(tid: libc::pid_t, ns: u64) -> Option<Source> {
    // SAFETY: a zeroed `sigevent` filled in for a signal to this thread.
    let mut sev: libc::sigevent = unsafe { core::mem::zeroed() };
    sev.sigev_notify = libc::SIGEV_THREAD_ID;
    sev.sigev_signo = SIGNAL;
    sev.sigev_notify_thread_id = tid;
    let mut timer: libc::timer_t = core::ptr::null_mut();
    // SAFETY: valid pointers to the event and the out timer.
    if unsafe { libc::timer_create(libc::CLOCK_THREAD_CPUTIME_ID, &mut sev, &mut timer) } != 0 {
        return None;
    }
    let period = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let its = libc::itimerspec {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: the timer just created, a valid spec, no old value wanted.
    if unsafe { libc::timer_settime(timer, 0, &its, core::ptr::null_mut()) } != 0 {
        // SAFETY: the timer just created, deleted once.
        unsafe { libc::timer_delete(timer) };
        return None;
    }
    // glibc's `timer_t` for a thread-directed timer is the kernel's id.
    Some(Source::Timer(timer as usize as u32))
}

/// Stops the calling thread's samples (its teardown, before its table
/// goes). A tick already pending finds the state torn down and counts
/// nothing.
pub(crate) fn stop_thread(pcs: &Pcs) {
    close(pcs.take_source());
}

/// Ends a source of samples.
fn close(source: Option<Source>) {
    match source {
        // SAFETY: the perf event's descriptor `start_thread` opened,
        // closed once (taken out of its table).
        Some(Source::Perf(fd)) => unsafe {
            libc::close(fd);
        },
        // SAFETY: the timer `start_thread` created, deleted once.
        Some(Source::Timer(id)) => unsafe {
            libc::timer_delete(id as usize as libc::timer_t);
        },
        None => {}
    }
}

/// After `fork`, in the child, for a table of a thread the child does not
/// have: its timer was not inherited; its perf event's descriptor was,
/// and is closed (still the parent thread's event: its signals go there).
pub(crate) fn forget_in_child(pcs: &Pcs) {
    if let Some(Source::Perf(fd)) = pcs.take_source() {
        // SAFETY: the inherited descriptor of the parent thread's event,
        // closed in the child only (before the child's own code runs).
        unsafe { libc::close(fd) };
    }
}

/// After `fork`, in the child: the forking thread, the child's only one,
/// gets its own samples (the parent's timers are not inherited; the
/// parent's event is the parent thread's).
pub(crate) fn fork_child(pcs: &Pcs) {
    forget_in_child(pcs);
    start_thread(pcs);
}

/// The program counter a signal interrupted.
///
/// # Safety
///
/// `uc` is the `ucontext_t` the kernel passed to a `SA_SIGINFO` handler.
unsafe fn interrupted_pc(uc: *mut libc::c_void) -> usize {
    let uc = uc.cast::<libc::ucontext_t>();
    #[cfg(target_arch = "x86_64")]
    // SAFETY: per the contract; `REG_RIP` indexes `gregs`.
    unsafe {
        (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as usize
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: per the contract.
    unsafe {
        (*uc).uc_mcontext.pc as usize
    }
}

/// The timer's signal handler: the interrupted program counter, counted
/// for the thread's current node. Reads thread-locals with no destructor
/// and the thread's own table; calls nothing (no `errno` to save).
extern "C" fn on_tick(_: libc::c_int, _: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let s = current();
    let Some((node, pcs)) = s.pc_target() else {
        return;
    };
    // SAFETY: the kernel's context for this `SA_SIGINFO` handler.
    let pc = unsafe { interrupted_pc(uc) };
    pcs.add(node_index(node), pc);
}

/// The index of a node of the thread's tree.
fn node_index(node: &Node) -> u32 {
    node.index.load(Ordering::Relaxed)
}
