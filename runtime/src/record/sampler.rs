//! tickprof's sampler: a thread of its own that, every period, reads each
//! recording thread's current-node word (`ThreadState::look`: the node of
//! its innermost open marked call) and credits the time since its last
//! look to that node: to its own time (`sampled`), or, when the word is
//! tagged (the thread was inside tickprof's instrumentation), to the
//! entry of a call the node makes (`sampled_inst`) or the exit of a timed
//! one (`sampled_exit`).
//!
//! This is how a counted call's time is found where it is, and how the
//! instrumentation's real cost in the program is measured: no clock read
//! on the hot path beyond a timed call's own, no signal (a thread is
//! never interrupted: no `EINTR`, no handler, no lock taken in one), no
//! unwinding. The sampler is a client of the thread's state: it reads
//! the word, and the state knows nothing of it.
//!
//! What it credits to those is the thread's time less what it spent
//! **ready but not running** — waiting for a CPU another program held
//! (its run-queue delay, from `/proc/self/task/TID/schedstat`): that goes
//! to `sampled_wait`, so that the instrumentation's measured cost and
//! share are not stretched by a busy machine (the figures, wall time,
//! share the waits out between the program and the instrumentation).
//! Time the thread was blocked (in a system call, on a lock, asleep) is
//! the program's, as a timed call's wall time counts it, and stays with
//! the node on top (a blocked thread's stack does not move). The kernel
//! adds a wait to the run-queue delay only once the thread runs again, so
//! a thread found inside the instrumentation (which never blocks) is
//! credited there with at most the CPU time it used since the last look
//! (its CPU clock, [`super::cpuclock`]), the rest as waited. Of what the
//! thread ran, a look credits two periods at most (`entry::CAP_PERIODS`)
//! to the node on top: a look delayed for milliseconds on a busy machine
//! (the sampler's own thread waiting for a CPU) tells where the thread is
//! now, not where it ran all that time. The rest is carried over and
//! shared out by the looks that follow, each in its own cell, up to four
//! times its own share (`entry::split`): a delay of 100 ms once credited
//! 100 ms to a timed loop's own time, where its counted callee had run;
//! and one sample of the instrumentation made milliseconds of it (which,
//! taken out of a short run's few calls, read as tens of microseconds a
//! call). Where the kernel
//! gives no run-queue delay, every moment is the program's. A thread
//! found doing tickprof's own work outside any marked call (building a
//! report, the exit, a server's answer: `Look::Tool`) is credited to
//! nothing: that time is not the run's.
//!
//! Threads are listed in a fixed table ([`SLOTS`] entries; a thread
//! beyond it is not sampled and is counted). The sampler reads a thread's
//! state only while that thread is listed; a thread leaving the table
//! (its exit) waits until the sampler is not reading it ([`quiesce`]): a
//! hazard word and two fences, on that rare path only.

mod entry;

use super::cpuclock::{self, mono_ns};
use super::node::bump;
use super::stack::{Look, Sampled, ThreadState};
use crate::clock::ticks;
use core::sync::atomic::{
    fence, AtomicI32, AtomicI64, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use entry::Entry;
use std::time::{Duration, Instant};

/// Threads the sampler can list at once.
pub(crate) const SLOTS: usize = 4096;

/// An entry being listed: taken, not yet readable.
const CLAIMED: *mut ThreadState = 1 as *mut ThreadState;

static TABLE: [Entry; SLOTS] = [const {
    Entry {
        state: AtomicPtr::new(core::ptr::null_mut()),
        stat: AtomicI32::new(-1),
        tid: AtomicU64::new(0),
        last: AtomicU64::new(0),
        last_ns: AtomicU64::new(0),
        last_delay: AtomicU64::new(0),
        clock: AtomicI64::new(cpuclock::NONE),
        last_cpu: AtomicU64::new(0),
        pending: AtomicU64::new(0),
    }
}; SLOTS];

/// One past the highest entry ever used: the sampler's sweep stops there.
static HIGH: AtomicUsize = AtomicUsize::new(0);
/// The entry the sampler is reading ([`NONE`]: none).
static READING: AtomicUsize = AtomicUsize::new(NONE);
const NONE: usize = usize::MAX;
/// Threads that found the table full (not sampled).
static UNLISTED: AtomicU64 = AtomicU64::new(0);

/// The sampler thread: not started, starting or running, off, or refused
/// by the system (a [`Status`]'s code).
static STATE: AtomicU8 = AtomicU8::new(IDLE);
const IDLE: u8 = Status::NotStarted as u8;
const RUNNING: u8 = Status::Running as u8;
const OFF: u8 = Status::Off as u8;
const FAILED: u8 = Status::Failed as u8;

/// Where the sampler thread stands, for the report's header (its code is
/// [`STATE`]'s value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Status {
    /// Not started yet (nor off).
    NotStarted,
    /// Started.
    Running,
    /// Off (`TICKPROF_SAMPLE=0`).
    Off,
    /// The system refused its thread.
    Failed,
}

/// Where the sampler thread stands.
pub(crate) fn status() -> Status {
    match STATE.load(Ordering::Relaxed) {
        IDLE => Status::NotStarted,
        RUNNING => Status::Running,
        FAILED => Status::Failed,
        _ => Status::Off,
    }
}

/// Lists the calling thread's state; returns its entry (`u32::MAX` when
/// the table is full). Async-signal-safe: atomics only.
pub(super) fn register(s: &ThreadState) -> u32 {
    let p = (s as *const ThreadState).cast_mut();
    for (i, e) in TABLE.iter().enumerate() {
        if !e.state.load(Ordering::Relaxed).is_null()
            || e.state
                .compare_exchange(
                    core::ptr::null_mut(),
                    CLAIMED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            continue;
        }
        // The `schedstat` is opened at the sampler's first look.
        e.tid.store(cpuclock::own_tid(), Ordering::Relaxed);
        e.stat.store(entry::UNOPENED, Ordering::Relaxed);
        e.set_clock(cpuclock::own());
        e.pending.store(0, Ordering::Relaxed);
        e.last_ns.store(mono_ns(), Ordering::Relaxed);
        e.last.store(ticks(), Ordering::Relaxed);
        e.state.store(p, Ordering::Release);
        HIGH.fetch_max(i + 1, Ordering::AcqRel);
        return i as u32;
    }
    UNLISTED.fetch_add(1, Ordering::Relaxed);
    u32::MAX
}

/// Takes the thread of entry `slot` off the table and waits until the
/// sampler is not reading it.
pub(super) fn unregister(slot: u32) {
    let Some(e) = TABLE.get(slot as usize) else {
        return;
    };
    e.state.store(CLAIMED, Ordering::Relaxed);
    quiesce(slot);
    let fd = e.stat.swap(-1, Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: the descriptor this entry opened, closed once.
        #[cfg(unix)]
        unsafe {
            libc::close(fd)
        };
    }
    e.state.store(core::ptr::null_mut(), Ordering::Release);
}

/// Waits until the sampler is not reading entry `slot`: after this, a
/// sweep that starts reads what the thread published before the call.
/// (A sweep reads one thread for well under a microsecond.)
fn quiesce(slot: u32) {
    if slot == u32::MAX {
        return;
    }
    // Pairs with the sampler's fence between announcing the entry it reads
    // and reading it: either the sampler sees what this thread stored
    // before, or this thread sees the sampler's announcement and waits.
    fence(Ordering::SeqCst);
    while READING.load(Ordering::Relaxed) == slot as usize {
        core::hint::spin_loop();
    }
    fence(Ordering::SeqCst);
}

/// The sampling period, from `TICKPROF_SAMPLE` (per second; 0: off).
fn period() -> Option<Duration> {
    let hz = crate::switches::SAMPLE_HZ.load(Ordering::Relaxed);
    (hz > 0).then(|| Duration::from_nanos((1_000_000_000 / hz).max(1)))
}

/// Whether the sampler thread is to be started (not running, not off):
/// one load, for cold paths.
#[inline]
pub(super) fn idle() -> bool {
    STATE.load(Ordering::Relaxed) == IDLE
}

/// Starts the sampler thread if it is not running (nor off), unless the
/// calling thread may be in a signal handler (std allocates to start a
/// thread). Called by a thread's set-up and by the cold path of a child
/// lookup ([`try_start`]), with the caller's marked calls turned away
/// meanwhile.
pub(super) fn ensure_started() {
    if !idle() || super::sigmask::any_blocked() {
        return;
    }
    start();
}

/// Child lookups that found the sampler not started, since the last
/// `fork`: [`try_start`] tries at the 1st, 2nd, 4th, 8th, … (each asks
/// the kernel for the thread's signal mask).
static TRIES: AtomicU64 = AtomicU64::new(0);

/// [`ensure_started`] from a child lookup's cold path while the sampler
/// is not started: at the 1st, 2nd, 4th, … of them only, so that a thread
/// that blocks a signal for good (a signal-handling thread's idiom) pays
/// a system call a few dozen times a run, not on every lookup. One load
/// and one store, no locked instruction (a lost count between threads
/// only moves a try).
pub(super) fn try_start() {
    let tries = TRIES.load(Ordering::Relaxed).wrapping_add(1);
    TRIES.store(tries, Ordering::Relaxed);
    if tries.is_power_of_two() {
        ensure_started();
    }
}

/// Starts the sampler thread, unless it is running or off.
fn start() {
    let Some(period) = period() else {
        STATE.store(OFF, Ordering::Relaxed);
        return;
    };
    if STATE
        .compare_exchange(IDLE, RUNNING, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    let started = std::thread::Builder::new()
        .name(SAMPLER_THREAD.to_owned())
        .stack_size(64 * 1024)
        .spawn(move || run(period));
    if started.is_err() {
        STATE.store(FAILED, Ordering::Relaxed);
    }
}

/// The sampler thread's name.
pub(crate) use super::arena::SAMPLER_THREAD;

std::thread_local! {
    /// Set on the sampler's thread (const, no destructor: no allocation).
    static ITS_THREAD: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Whether the calling thread is the sampler's.
pub(super) fn on_its_thread() -> bool {
    ITS_THREAD.with(core::cell::Cell::get)
}

/// How long after its start the sampler's thread runs its one job
/// ([`set_job`]).
const CALIBRATE_AFTER: Duration = Duration::from_millis(50);

/// Work for the sampler's thread, run once the program has run a while:
/// the calibration (`record::calibrate`), given by the runtime's start-up
/// (the calibration makes marked calls, whose cold paths start this
/// thread: handed in, not imported, so that the recorder's modules form
/// no cycle). It gets a callback that keeps the sweeps on schedule and
/// says whether it is done.
type Job = fn(&mut dyn FnMut()) -> bool;

static JOB: std::sync::OnceLock<Job> = std::sync::OnceLock::new();

/// Sets the sampler thread's job (once, at start-up).
pub(crate) fn set_job(job: Job) {
    let _ = JOB.set(job);
}

/// The sampler thread: a sweep every `period`, on a fixed schedule
/// (a late sweep does not shift the ones after it, unless it is more than
/// a period late).
fn run(period: Duration) {
    ITS_THREAD.with(|t| t.set(true));
    let started = Instant::now();
    let period_ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
    let mut next = started + period;
    let mut done = JOB.get().is_none();
    let mut sweeps = 0u32;
    loop {
        // Now and then (a `sigaction` query): whether the program took
        // the program-counter samples' signal over.
        sweeps = sweeps.wrapping_add(1);
        #[cfg(all(feature = "inlined", target_os = "linux"))]
        if sweeps % 128 == 0 {
            super::registry::check_pc_signal();
        }
        // The job (the calibration's floor), on this thread of tickprof's
        // own, once the program has run a while (a few milliseconds, once;
        // right at this thread's start, it took the CPU from the thread
        // that had just started it, outside any marked call's time). The
        // sweeps keep their schedule meanwhile.
        if !done && started.elapsed() >= CALIBRATE_AFTER {
            if let Some(job) = JOB.get() {
                done = job(&mut || {
                    let now = Instant::now();
                    if now >= next {
                        next = now + period;
                        sweep_if_running(period_ns);
                    }
                });
            }
        }
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
            next += period;
        } else {
            next = now + period;
        }
        if !sweep_if_running(period_ns) {
            return;
        }
    }
}

/// A sweep, unless the sampler is stopping (off, or after `fork`):
/// whether it swept.
fn sweep_if_running(period_ns: u64) -> bool {
    let running = STATE.load(Ordering::Relaxed) == RUNNING;
    if running {
        sweep(period_ns);
    }
    running
}

/// Credits every listed thread with the time since the sampler's last
/// look at it.
fn sweep(period_ns: u64) {
    let now = ticks();
    let now_ns = mono_ns();
    let high = HIGH.load(Ordering::Acquire).min(SLOTS);
    for (i, e) in TABLE[..high].iter().enumerate() {
        if e.state.load(Ordering::Relaxed).is_null() {
            continue;
        }
        READING.store(i, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let p = e.state.load(Ordering::Acquire);
        // SAFETY: a listed state is a live thread's: the thread takes it
        // off the table and waits (`unregister`) before its state goes,
        // and `READING` names this entry until the read below is done.
        if let Some(s) = unsafe { p.as_ref() }.filter(|_| p != CLAIMED) {
            let look = e.since_last(now, now_ns, period_ns);
            if look.program + look.waited > 0 {
                if let Look::At(node, what) = s.look() {
                    let (cell, inside) = match what {
                        Sampled::Program => (&node.c.sampled, false),
                        Sampled::Entry => (&node.c.sampled_inst, true),
                        Sampled::Exit => (&node.c.sampled_exit, true),
                    };
                    let split = entry::split(look, inside, e.pending.load(Ordering::Relaxed));
                    e.pending.store(split.pending, Ordering::Relaxed);
                    bump(cell, split.here);
                    bump(&node.c.sampled_wait, split.waited);
                }
            }
        }
        READING.store(NONE, Ordering::Release);
    }
}

/// Threads that could not be listed (the table was full): not sampled.
pub(crate) fn unlisted() -> u64 {
    UNLISTED.load(Ordering::Relaxed)
}

/// After `fork`, in the child: only the forking thread (entry `keep`)
/// exists, and no sampler thread; the next set-up or cold path starts one.
#[cfg(unix)]
pub(super) fn fork_child(keep: u32) {
    for (i, e) in TABLE.iter().enumerate() {
        e.pending.store(0, Ordering::Relaxed);
        if i != keep as usize {
            e.state.store(core::ptr::null_mut(), Ordering::Relaxed);
            e.clock.store(cpuclock::NONE, Ordering::Relaxed);
            let fd = e.stat.swap(-1, Ordering::Relaxed);
            if fd >= 0 {
                // SAFETY: the parent's descriptor, copied into the child:
                // the child's to close.
                #[cfg(unix)]
                unsafe {
                    libc::close(fd)
                };
            }
        } else {
            // The forking thread is another thread in the child: its own
            // schedstat from now on (opened at the first look).
            e.tid.store(cpuclock::own_tid(), Ordering::Relaxed);
            let fd = e.stat.swap(entry::UNOPENED, Ordering::Relaxed);
            if fd >= 0 {
                // SAFETY: as above.
                #[cfg(unix)]
                unsafe {
                    libc::close(fd)
                };
            }
            e.set_clock(cpuclock::own());
        }
    }
    READING.store(NONE, Ordering::Relaxed);
    TRIES.store(0, Ordering::Relaxed);
    if STATE.load(Ordering::Relaxed) == RUNNING {
        STATE.store(IDLE, Ordering::Relaxed);
    }
}
