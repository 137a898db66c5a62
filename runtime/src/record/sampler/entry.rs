//! One entry of the sampler's table: a listed thread, and what the
//! sampler saw of it at its last look.

use crate::record::cpuclock::{self, delay_ns};
use crate::record::stack::ThreadState;
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicPtr, AtomicU64, Ordering};

/// A look that finds a thread inside the instrumentation credits it with
/// this many sampling periods at most (see the sampler's docs). Two, not
/// one: the sweeps keep a fixed schedule, so a late look (its interval
/// over a period) is followed by an early one (under it), and a cap of
/// one period cut the late ones only, moving instrumentation to the
/// program. pulldown-cmark marked whole (AMD EPYC 2-vCPU VM, 5 runs each,
/// alternating): the header's share 60.8% with one period, 63.8% with
/// two, 63.2% with no cap.
const CAP_PERIODS: u64 = 2;

/// One listed thread.
pub(super) struct Entry {
    /// The thread's state; null: free; [`super::CLAIMED`]: being listed.
    pub(super) state: AtomicPtr<ThreadState>,
    /// The thread's `/proc/self/task/TID/schedstat`, open (-1: none:
    /// every moment counts as the program's).
    pub(super) stat: AtomicI32,
    /// At the sampler's last look (sampler-owned; set by the thread when
    /// it is listed): the tick count, the monotonic clock, and the
    /// thread's run-queue delay, in nanoseconds.
    pub(super) last: AtomicU64,
    pub(super) last_ns: AtomicU64,
    pub(super) last_delay: AtomicU64,
    /// The thread's CPU clock ([`cpuclock::NONE`]: none) and its reading
    /// at the sampler's last look, in nanoseconds.
    pub(super) clock: AtomicI64,
    pub(super) last_cpu: AtomicU64,
}

impl Entry {
    /// Sets the thread's CPU clock and its reading now.
    pub(super) fn set_clock(&self, clock: i64) {
        self.clock.store(clock, Ordering::Relaxed);
        let cpu = cpuclock::read_ns(clock).unwrap_or(0);
        self.last_cpu.store(cpu, Ordering::Relaxed);
    }

    /// The thread's time since the sampler's last look, in ticks: the
    /// program's (running or blocked), and waited for a CPU (ready but not
    /// running), in the proportion its run-queue delay says; the CPU time
    /// it used meanwhile (`None`: not known); and [`CAP_PERIODS`]
    /// sampling periods (`period_ns` each) of the interval. Moves the last
    /// look to now.
    pub(super) fn since_last(
        &self,
        now: u64,
        now_ns: u64,
        period_ns: u64,
    ) -> (u64, u64, Option<u64>, u64) {
        let dt = now.wrapping_sub(self.last.swap(now, Ordering::Relaxed));
        let wall = now_ns.wrapping_sub(self.last_ns.swap(now_ns, Ordering::Relaxed));
        let cpu = cpuclock::read_ns(self.clock.load(Ordering::Relaxed));
        let ran = cpu.map(|c| c.saturating_sub(self.last_cpu.swap(c, Ordering::Relaxed)));
        if (dt as i64) <= 0 {
            return (0, 0, None, 0);
        }
        if wall == 0 || (wall as i64) < 0 {
            return (dt, 0, None, dt);
        }
        let of_dt = |ns: u64| ((ns as f64 / wall as f64).min(1.0) * dt as f64) as u64;
        let (ran, cap) = (ran.map(of_dt), of_dt(period_ns.saturating_mul(CAP_PERIODS)));
        let fd = self.stat.load(Ordering::Relaxed);
        let Some(delay_now) = (fd >= 0).then(|| delay_ns(fd)).flatten() else {
            return (dt, 0, ran, cap);
        };
        let delay = delay_now.wrapping_sub(self.last_delay.swap(delay_now, Ordering::Relaxed));
        let share = (delay as f64 / wall as f64).clamp(0.0, 1.0);
        let waited = (dt as f64 * share) as u64;
        (dt - waited, waited, ran, cap)
    }
}
