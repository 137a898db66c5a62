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
use core::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Threads the sampler can list at once.
pub(crate) const SLOTS: usize = 4096;

/// One listed thread.
struct Entry {
    state: AtomicPtr<ThreadState>,
    /// The tick count of the sampler's last look (sampler-owned; set by
    /// the thread when it is listed).
    last: AtomicU64,
}

static TABLE: [Entry; SLOTS] = [const {
    Entry {
        state: AtomicPtr::new(core::ptr::null_mut()),
        last: AtomicU64::new(0),
    }
}; SLOTS];

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
            let last = e.last.swap(now, Ordering::Relaxed);
            let dt = now.wrapping_sub(last);
            if (dt as i64) > 0 {
                if let Some((node, what)) = s.sampled() {
                    let cell = match what {
                        Sampled::Program => &node.c.sampled,
                        Sampled::Calls => &node.c.sampled_inst,
                        Sampled::Own => &node.c.sampled_own,
                    };
                    bump(cell, dt);
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
