//! One entry of the sampler's table: a listed thread, and what the
//! sampler saw of it at its last look.

use crate::record::cpuclock::{self, delay_ns};
use crate::record::stack::ThreadState;
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicPtr, AtomicU64, Ordering};

/// A look credits the node on top with this many sampling periods at
/// most of the CPU time its thread used (see [`split`]). Two, not one:
/// the sweeps keep a fixed schedule, so a late look (its interval over a
/// period) is followed by an early one (under it), and a cap of one
/// period cut the late ones only, moving instrumentation to the program
/// (when the rest went to the program: before it was carried over).
/// pulldown-cmark marked whole (AMD EPYC 2-vCPU VM, 5 runs each,
/// alternating): the header's share 60.8% with one period, 63.8% with
/// two, 63.2% with no cap.
const CAP_PERIODS: u64 = 2;

/// A look credits the node on top with at most this many times its own
/// share out of what earlier late looks left over (see [`split`]).
const DRAIN: u64 = 4;

/// One look at a thread: its time since the last look (where the thread
/// is now, the sweep tells [`split`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Look {
    /// The thread's time not spent waiting for a CPU, in ticks.
    pub(super) program: u64,
    /// Its time waiting for a CPU (run-queue delay), in ticks.
    pub(super) waited: u64,
    /// The CPU time it used (`None`: not known), in ticks.
    pub(super) ran: Option<u64>,
    /// [`CAP_PERIODS`] sampling periods, in ticks.
    pub(super) cap: u64,
}

/// What a look credits, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Split {
    /// To the node on top, in the look's cell (the program's time, or
    /// the instrumentation's).
    pub(super) here: u64,
    /// To the node's waits for a CPU.
    pub(super) waited: u64,
    /// Left over for the looks that follow (the thread's, carried).
    pub(super) pending: u64,
}

/// How one look's time is credited (`inside`: the thread was found inside
/// the instrumentation rather than in the program). What the thread did not run of the
/// interval is credited whole: in the program, it was blocked (in a
/// system call, asleep), where a blocked thread's stack stays; inside the
/// instrumentation, which never blocks, it waited for a CPU. Of what it
/// ran, [`CAP_PERIODS`] at most: a look delayed by a busy machine (the
/// sampler's own thread waiting for a CPU) tells where the thread is now,
/// not where it ran all that time. The rest of what it ran is carried
/// over and shared out by the looks that follow, each taking up to
/// [`DRAIN`] times its own share, in its own cell: a delay of 100 ms no
/// longer credits 100 ms to whichever node is on top (a timed loop's own
/// time, read as its counted callee's: the sampler test's busy-machine
/// failure), it is spread over where the thread is found next. With no
/// CPU clock, all of the program's time counts as run.
pub(super) fn split(look: Look, inside: bool, pending: u64) -> Split {
    let running = look.ran.unwrap_or(look.program).min(look.program);
    let idle = look.program - running;
    let ran_here = running.min(look.cap);
    let (base, waited) = if inside {
        (ran_here, look.waited.saturating_add(idle))
    } else {
        (idle.saturating_add(ran_here), look.waited)
    };
    let extra = pending.min(base.saturating_mul(DRAIN));
    Split {
        here: base + extra,
        waited,
        pending: (pending - extra).saturating_add(running - ran_here),
    }
}

/// [`Entry::stat`] of a thread whose `schedstat` is not opened yet.
pub(super) const UNOPENED: i32 = -2;

/// One listed thread.
pub(super) struct Entry {
    /// The thread's state; null: free; [`super::CLAIMED`]: being listed.
    pub(super) state: AtomicPtr<ThreadState>,
    /// The thread's `/proc/self/task/TID/schedstat`, open (-1: none:
    /// every moment counts as the program's; [`UNOPENED`]: opened by the
    /// sampler at its first look, so that a thread that ends before it is
    /// never looked at costs no `open`).
    pub(super) stat: AtomicI32,
    /// The thread's id (for the `schedstat` path).
    pub(super) tid: AtomicU64,
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
    /// Ticks late looks left over, to be credited by the next ones
    /// ([`split`]; sampler-owned, cleared when the thread is listed).
    pub(super) pending: AtomicU64,
}

impl Entry {
    /// Sets the thread's CPU clock and its reading now.
    pub(super) fn set_clock(&self, clock: i64) {
        self.clock.store(clock, Ordering::Relaxed);
        let cpu = cpuclock::read_ns(clock).unwrap_or(0);
        self.last_cpu.store(cpu, Ordering::Relaxed);
    }

    /// The sampler's look at the thread now ([`Look`]): its time since the
    /// last look, in ticks, the program's (running or blocked) and waited
    /// for a CPU (ready but not running) in the proportion its run-queue
    /// delay says; the CPU time it used meanwhile; and [`CAP_PERIODS`]
    /// sampling periods (`period_ns` each) of the interval. Moves the last
    /// look to now.
    pub(super) fn since_last(&self, now: u64, now_ns: u64, period_ns: u64) -> Look {
        let look = |program, waited, ran, cap| Look {
            program,
            waited,
            ran,
            cap,
        };
        let dt = now.wrapping_sub(self.last.swap(now, Ordering::Relaxed));
        let wall = now_ns.wrapping_sub(self.last_ns.swap(now_ns, Ordering::Relaxed));
        let cpu = cpuclock::read_ns(self.clock.load(Ordering::Relaxed));
        let ran = cpu.map(|c| c.saturating_sub(self.last_cpu.swap(c, Ordering::Relaxed)));
        if (dt as i64) <= 0 {
            return look(0, 0, None, 0);
        }
        if wall == 0 || (wall as i64) < 0 {
            return look(dt, 0, None, dt);
        }
        let of_dt = |ns: u64| ((ns as f64 / wall as f64).min(1.0) * dt as f64) as u64;
        let (ran, cap) = (ran.map(of_dt), of_dt(period_ns.saturating_mul(CAP_PERIODS)));
        let mut fd = self.stat.load(Ordering::Relaxed);
        if fd == UNOPENED {
            // The first look: the run-queue delay is known from now on;
            // this interval is the program's, as where there is none.
            fd = cpuclock::open_schedstat(self.tid.load(Ordering::Relaxed));
            self.stat.store(fd, Ordering::Relaxed);
            let delay = (fd >= 0).then(|| delay_ns(fd)).flatten();
            self.last_delay.store(delay.unwrap_or(0), Ordering::Relaxed);
            return look(dt, 0, ran, cap);
        }
        let Some(delay_now) = (fd >= 0).then(|| delay_ns(fd)).flatten() else {
            return look(dt, 0, ran, cap);
        };
        let delay = delay_now.wrapping_sub(self.last_delay.swap(delay_now, Ordering::Relaxed));
        let share = (delay as f64 / wall as f64).clamp(0.0, 1.0);
        let waited = (dt as f64 * share) as u64;
        look(dt - waited, waited, ran, cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn look(program: u64, ran: Option<u64>) -> Look {
        Look {
            program,
            waited: 7,
            ran,
            cap: 2_000,
        }
    }

    #[test]
    fn a_look_on_time_credits_its_interval_and_takes_from_what_is_left_over() {
        let s = split(look(1_000, Some(1_000)), false, 0);
        assert_eq!((s.here, s.waited, s.pending), (1_000, 7, 0));
        // Up to DRAIN times its own share of what is carried.
        let s = split(look(1_000, Some(1_000)), false, 10_000);
        assert_eq!((s.here, s.pending), (5_000, 6_000));
        let s = split(look(1_000, Some(1_000)), true, 3_000);
        assert_eq!((s.here, s.pending), (4_000, 0));
    }

    #[test]
    fn a_late_look_credits_two_periods_of_what_the_thread_ran_and_carries_the_rest() {
        // 100 ms late, all of it run: 2 periods here, 98 carried.
        let s = split(look(100_000, Some(100_000)), false, 0);
        assert_eq!((s.here, s.waited, s.pending), (2_000, 7, 98_000));
        // Blocked in the program (ran 1 of 100): the blocked time stays
        // with the node on top, whose stack did not move.
        let s = split(look(100_000, Some(1_000)), false, 0);
        assert_eq!((s.here, s.waited, s.pending), (100_000, 7, 0));
        // Inside the instrumentation, which never blocks: what it did not
        // run, it waited.
        let s = split(look(100_000, Some(1_000)), true, 0);
        assert_eq!((s.here, s.waited, s.pending), (1_000, 99_007, 0));
        // No CPU clock: all of it counts as run.
        let s = split(look(100_000, None), false, 0);
        assert_eq!((s.here, s.pending), (2_000, 98_000));
    }

    /// The sampler test's busy-machine case: a timed loop calling a
    /// counted leaf, the thread in the leaf 9 looks in 10. One look 100
    /// periods late finds the loop on top; before, it credited the loop
    /// with all 100 periods. Now the looks that follow share them out.
    #[test]
    fn a_late_looks_time_goes_where_the_following_looks_find_the_thread() {
        let period = 1_000;
        let (mut outer, mut leaf) = (0u64, 0u64);
        let s = split(look(100 * period, Some(100 * period)), false, 0);
        outer += s.here;
        let mut pending = s.pending;
        for i in 0..400 {
            let s = split(look(period, Some(period)), false, pending);
            pending = s.pending;
            if i % 10 == 0 {
                outer += s.here;
            } else {
                leaf += s.here;
            }
        }
        assert_eq!(pending, 0);
        assert_eq!(outer + leaf, 500 * period);
        // 40 looks on the loop and 360 in the leaf, plus the 98 carried
        // in the proportion of the looks that took them.
        assert!(leaf > 8 * outer, "leaf {leaf} outer {outer}");
    }

    proptest! {
        /// Nothing is lost or made up: what a look credits, adds to the
        /// waits and carries over is its interval and what it took over.
        #[test]
        fn a_looks_split_keeps_every_tick(
            program in 0u64..1 << 40,
            waited in 0u64..1 << 40,
            ran in proptest::option::of(0u64..1 << 40),
            cap in 0u64..1 << 30,
            inside: bool,
            pending in 0u64..1 << 40,
        ) {
            let s = split(Look { program, waited, ran, cap }, inside, pending);
            prop_assert_eq!(s.here + s.waited + s.pending, program + waited + pending);
            prop_assert!(s.waited >= waited);
            // What a look credits beyond the thread's blocked time is two
            // periods, and DRAIN times its share of what was carried.
            let running = ran.unwrap_or(program).min(program);
            let blocked = if inside { 0 } else { program - running };
            prop_assert!(s.here <= (blocked + cap.min(running)) * (1 + DRAIN));
        }
    }
}
