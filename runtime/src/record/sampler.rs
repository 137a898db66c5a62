//! tickprof's sampler: a thread of its own that, every period, looks at
//! each recording thread's shadow stack and credits the time since its
//! last look to the tree node on top: to the node's own time
//! (`sampled`), or, when the thread was inside tickprof's instrumentation
//! (the thread's `inst` flag), to its instrumentation (`sampled_inst`).
//!
//! This is how a counted call's time is found where it is, and how the
//! instrumentation's real cost in the program is measured: no clock read
//! and no store beyond the flag on the hot path, no signal (a thread is
//! never interrupted: no `EINTR`, no handler, no lock taken in one), no
//! unwinding. What it samples is wall time, as a timed call measures: a
//! thread waiting inside a marked call keeps that call's time.
//!
//! Threads are listed in a fixed table ([`SLOTS`] entries; a thread
//! beyond it is not sampled and is counted). The sampler reads a thread's
//! state only while that thread is listed; a thread leaving the table
//! (its exit), or freeing a stack the sampler may be reading (growth),
//! waits until the sampler is not reading it ([`quiesce`]): a hazard
//! word and two fences, on those rare paths only.

use super::node::bump;
use super::stack::{Sampled, ThreadState};
use crate::clock::ticks;
use core::sync::atomic::{fence, AtomicI32, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Threads the sampler can list at once.
pub(crate) const SLOTS: usize = 4096;

/// One listed thread.
struct Entry {
    state: AtomicPtr<ThreadState>,
    /// The thread's CPU-time clock (`clockid_t`; -1: none, every moment
    /// counts as running).
    clock: AtomicI32,
    /// At the sampler's last look (sampler-owned; set by the thread when
    /// it is listed): the tick count, the monotonic clock and the
    /// thread's CPU time, in nanoseconds.
    last: AtomicU64,
    last_ns: AtomicU64,
    last_cpu: AtomicU64,
}

static TABLE: [Entry; SLOTS] = [const {
    Entry {
        state: AtomicPtr::new(core::ptr::null_mut()),
        clock: AtomicI32::new(-1),
        last: AtomicU64::new(0),
        last_ns: AtomicU64::new(0),
        last_cpu: AtomicU64::new(0),
    }
}; SLOTS];

/// The calling thread's CPU-time clock (Linux: `pthread_getcpuclockid`,
/// which computes it from the thread's id: no lock, no allocation).
fn own_cpu_clock() -> i32 {
    #[cfg(target_os = "linux")]
    {
        let mut id: libc::clockid_t = 0;
        // SAFETY: the calling thread's own handle, and a valid out pointer.
        let r = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        if r == 0 {
            return id;
        }
    }
    -1
}

/// Nanoseconds on `clock` (0 when it cannot be read).
fn clock_ns(clock: i32) -> u64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out pointer; an invalid clock gives an error.
        if unsafe { libc::clock_gettime(clock, &mut t) } == 0 {
            return (t.tv_sec as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(t.tv_nsec as u64);
        }
    }
    let _ = clock;
    0
}

/// The monotonic clock, in nanoseconds.
fn mono_ns() -> u64 {
    #[cfg(unix)]
    {
        clock_ns(libc::CLOCK_MONOTONIC)
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// One past the highest entry ever used: the sampler's sweep stops there.
static HIGH: AtomicUsize = AtomicUsize::new(0);
/// The entry the sampler is reading ([`NONE`]: none).
static READING: AtomicUsize = AtomicUsize::new(NONE);
const NONE: usize = usize::MAX;
/// Threads that found the table full (not sampled).
static UNLISTED: AtomicU64 = AtomicU64::new(0);

/// The sampler thread: not started, starting or running, or off.
static STATE: AtomicU8 = AtomicU8::new(IDLE);
const IDLE: u8 = 0;
const RUNNING: u8 = 1;
const OFF: u8 = 2;

/// Lists the calling thread's state; returns its entry (`u32::MAX` when
/// the table is full). Async-signal-safe: atomics only.
pub(super) fn register(s: &ThreadState) -> u32 {
    let p = (s as *const ThreadState).cast_mut();
    for (i, e) in TABLE.iter().enumerate() {
        if !e.state.load(Ordering::Relaxed).is_null() {
            continue;
        }
        let clock = own_cpu_clock();
        e.clock.store(clock, Ordering::Relaxed);
        e.last_cpu.store(clock_ns(clock), Ordering::Relaxed);
        e.last_ns.store(mono_ns(), Ordering::Relaxed);
        e.last.store(ticks(), Ordering::Relaxed);
        if e.state
            .compare_exchange(
                core::ptr::null_mut(),
                p,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            HIGH.fetch_max(i + 1, Ordering::AcqRel);
            return i as u32;
        }
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
    e.state.store(core::ptr::null_mut(), Ordering::Relaxed);
    quiesce(slot);
}

/// Waits until the sampler is not reading entry `slot`: after this, a
/// sweep that starts reads what the thread published before the call.
/// (A sweep reads one thread for well under a microsecond.)
pub(super) fn quiesce(slot: u32) {
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
/// lookup, with the caller's marked calls turned away meanwhile.
pub(super) fn ensure_started() {
    if !idle() || super::sigmask::any_blocked() {
        return;
    }
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
        STATE.store(OFF, Ordering::Relaxed);
    }
}

/// The sampler thread's name.
pub(crate) const SAMPLER_THREAD: &str = "tickprof sampler";

/// The sampler thread: a sweep every `period`, on a fixed schedule
/// (a late sweep does not shift the ones after it, unless it is more than
/// a period late).
fn run(period: Duration) {
    let mut next = Instant::now() + period;
    loop {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
            next += period;
        } else {
            next = now + period;
        }
        if STATE.load(Ordering::Relaxed) != RUNNING {
            return;
        }
        sweep();
    }
}

/// Credits every listed thread with the time since the sampler's last
/// look at it.
fn sweep() {
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
        if let Some(s) = unsafe { p.as_ref() } {
            let (running, off) = e.since_last(now, now_ns);
            if running + off > 0 {
                if let Some((node, what)) = s.sampled() {
                    let cell = match what {
                        Sampled::Program => &node.c.sampled,
                        Sampled::Calls => &node.c.sampled_inst,
                        Sampled::Own => &node.c.sampled_own,
                    };
                    bump(cell, running);
                    bump(&node.c.sampled_off, off);
                }
            }
        }
        READING.store(NONE, Ordering::Release);
    }
}

impl Entry {
    /// The thread's time since the sampler's last look, in ticks: on a
    /// CPU, and off one (waiting: blocked, or ready but not running), in
    /// the proportion its CPU clock says; all on a CPU where there is no
    /// such clock. Moves the last look to now.
    fn since_last(&self, now: u64, now_ns: u64) -> (u64, u64) {
        let dt = now.wrapping_sub(self.last.swap(now, Ordering::Relaxed));
        let wall = now_ns.wrapping_sub(self.last_ns.swap(now_ns, Ordering::Relaxed));
        let clock = self.clock.load(Ordering::Relaxed);
        if (dt as i64) <= 0 {
            return (0, 0);
        }
        if clock == -1 || wall == 0 || (wall as i64) < 0 {
            return (dt, 0);
        }
        let cpu_now = clock_ns(clock);
        let cpu = cpu_now.wrapping_sub(self.last_cpu.swap(cpu_now, Ordering::Relaxed));
        let share = (cpu as f64 / wall as f64).clamp(0.0, 1.0);
        let running = (dt as f64 * share) as u64;
        (running, dt - running)
    }
}

/// Threads that could not be listed (the table was full): not sampled.
pub(crate) fn unlisted() -> u64 {
    UNLISTED.load(Ordering::Relaxed)
}

/// After `fork`, in the child: only the forking thread (entry `keep`)
/// exists, and no sampler thread; the next set-up or cold path starts one.
pub(super) fn fork_child(keep: u32) {
    for (i, e) in TABLE.iter().enumerate() {
        if i != keep as usize {
            e.state.store(core::ptr::null_mut(), Ordering::Relaxed);
        }
    }
    READING.store(NONE, Ordering::Relaxed);
    if STATE.load(Ordering::Relaxed) == RUNNING {
        STATE.store(IDLE, Ordering::Relaxed);
    }
}
