//! The counter set of one calling-context tree node, defined once: the plain
//! values ([`Acc`]) the report arithmetic works on, the atomic cells
//! ([`Cells`]) the hot path writes, and the reject rule.
//!
//! Each counter has a merge kind: `sum` counters add up across nodes,
//! threads and snapshots; `min`/`max` keep the extreme. Adding a counter is
//! one line in the `counters!` invocation below.

#[cfg(feature = "enabled")]
use core::sync::atomic::{AtomicU64, Ordering};

/// How a counter combines across nodes and how a snapshot difference
/// treats it.
#[derive(Clone, Copy)]
enum Kind {
    /// Adds; a difference subtracts (saturating).
    Sum,
    /// The smallest value; a difference keeps the later value.
    Min,
    /// The largest value; a difference keeps the later value.
    Max,
}

impl Kind {
    const fn empty(self) -> u64 {
        match self {
            Kind::Sum | Kind::Max => 0,
            Kind::Min => u64::MAX,
        }
    }

    const fn merge(self, a: u64, b: u64) -> u64 {
        match self {
            Kind::Sum => a.wrapping_add(b),
            Kind::Min => {
                if a < b {
                    a
                } else {
                    b
                }
            }
            Kind::Max => {
                if a > b {
                    a
                } else {
                    b
                }
            }
        }
    }

    const fn minus(self, later: u64, earlier: u64) -> u64 {
        match self {
            Kind::Sum => later.saturating_sub(earlier),
            Kind::Min | Kind::Max => later,
        }
    }
}

macro_rules! counters {
    ($( $(#[$doc:meta])* $name:ident: $kind:ident, )*) => {
        /// The accumulators of one tree node (or of one site, once summed),
        /// as plain values. Times are in ticks.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) struct Acc {
            $( $(#[$doc])* pub $name: u64, )*
        }

        impl Acc {
            /// No calls.
            pub const EMPTY: Acc = Acc { $( $name: Kind::$kind.empty(), )* };

            /// Adds `o` into `self`, counter by counter.
            pub fn add(&mut self, o: &Acc) {
                $( self.$name = Kind::$kind.merge(self.$name, o.$name); )*
            }

            /// What happened between `earlier` and `self`: counts and times
            /// are differences; `min` and `max` stay those of `self`.
            pub fn minus(&self, earlier: &Acc) -> Acc {
                Acc { $( $name: Kind::$kind.minus(self.$name, earlier.$name), )* }
            }
        }

        /// The same counters as atomic cells, written only by the owning
        /// thread (relaxed load + store) and read by the report.
        #[cfg(feature = "enabled")]
        #[repr(C)]
        pub(crate) struct Cells {
            $( $(#[$doc])* pub $name: AtomicU64, )*
        }

        #[cfg(feature = "enabled")]
        impl Cells {
            /// No calls.
            pub const fn new() -> Cells {
                Cells { $( $name: AtomicU64::new(Kind::$kind.empty()), )* }
            }

            /// The cells as they are stored (`max` holding the width of
            /// the range of accepted times: see [`Cells::load`]).
            fn load_stored(&self) -> Acc {
                Acc { $( $name: self.$name.load(Ordering::Relaxed), )* }
            }

            /// Every cell back to its empty value, the timing state in
            /// `untimed` included (see [`Cells::reset`]).
            fn clear(&self) {
                $( self.$name.store(Kind::$kind.empty(), Ordering::Relaxed); )*
            }
        }
    };
}

#[cfg(feature = "enabled")]
impl Cells {
    /// A copy of the current values. The `min` cell holds `min` negated
    /// (wrapping) and the `max` cell the width of the range of accepted
    /// times, `max - min + 1`, or 0 before the first accepted call: the hot
    /// path decides with one add and one compare that a call inside the
    /// range moves neither extreme (`Node::record`). This turns them back
    /// into `min` and `max`.
    pub fn load(&self) -> Acc {
        let mut a = self.load_stored();
        if a.max == 0 {
            (a.min, a.max) = (Acc::EMPTY.min, Acc::EMPTY.max);
        } else {
            a.min = a.min.wrapping_neg();
            a.max = a.min.saturating_add(a.max - 1);
        }
        a.untimed >>= STATE_BITS;
        // The `calls` cell counts timed calls; a node's calls are both.
        a.calls = a.calls.wrapping_add(a.untimed);
        a
    }

    /// Back to no calls; the node's timing state (the low bits of the
    /// `untimed` cell) is kept, so a reset never changes how a site is
    /// measured.
    pub fn reset(&self) {
        let state = self.untimed.load(Ordering::Relaxed) & STATE_MASK;
        self.clear();
        self.untimed.store(state, Ordering::Relaxed);
    }
}

/// Low bits of the `untimed` cell that hold the node's timing state (see
/// `record::timing`); the count is in the bits above, so that a counted
/// call is one add of `1 << STATE_BITS`. 56 bits of count: 2.2 years of a
/// billion counted calls a second on one node.
#[cfg(feature = "enabled")]
pub(crate) const STATE_BITS: u32 = 8;
/// The state bits of the `untimed` cell.
#[cfg(feature = "enabled")]
pub(crate) const STATE_MASK: u64 = (1 << STATE_BITS) - 1;

// Order matters for the hot path: `calls`, `ticks`, `min`, `max` and
// `untimed` share the node's first cache line with its child cache.
counters! {
    /// Completed calls, rejected and counted ones included. (The node's
    /// `calls` cell counts the timed calls; [`Cells::load`] adds `untimed`.)
    calls: Sum,
    /// Accepted time, in ticks.
    ticks: Sum,
    /// Shortest accepted call (`u64::MAX`: none).
    min: Min,
    /// Longest accepted call.
    max: Max,
    /// Counted calls: calls of a counted site that did not read the
    /// clock (counted on entry), included in `calls`. In the node's cell,
    /// shifted up by `STATE_BITS` above the node's timing state.
    untimed: Sum,
    /// Calls whose end stamp came before their start: not timed.
    reversed: Sum,
    /// Calls longer than `TICKPROF_MAX_DELTA`: not timed.
    oversized: Sum,
    /// Calls that ended by unwinding.
    unwound: Sum,
    /// async sites: first poll to completion, summed over completed calls.
    wall: Sum,
    /// async sites: futures dropped before completion.
    cancelled: Sum,
    /// Allocations made while this node was the thread's current one (by
    /// `tickprof::Alloc`; a reallocation counts as one allocation of its
    /// new size and one free of its old size).
    allocs: Sum,
    /// Bytes of those allocations.
    alloc_bytes: Sum,
    /// Frees made while this node was current (whichever thread allocated).
    frees: Sum,
    /// Bytes of those frees.
    freed_bytes: Sum,
    /// Ticks of the thread's time the sampler found this node on top of
    /// its stack in the program's own code (written only by tickprof's
    /// sampler thread: see `record::sampler`).
    sampled: Sum,
    /// Ticks the sampler found this node on top inside the entry of a
    /// marked call it makes (the thread's current-node word tagged: see
    /// `record::stack`): inside this node's calls' time.
    sampled_inst: Sum,
    /// Ticks the sampler found this node on top inside the exit of a
    /// timed call it makes, after the call's clock read (its recording):
    /// inside this node's calls' time too. (A counted call's exit is one
    /// store.)
    sampled_exit: Sum,
    /// Ticks the sampler found this node on top while its thread was
    /// ready but not running: waiting for a CPU another program held (its
    /// run-queue delay). The three above count the rest, time blocked
    /// included; the figures share this out between them.
    sampled_wait: Sum,
    /// Program-counter samples (feature `inlined`) that found this node's
    /// own code, or, on a row of an inlined function, that function: what
    /// the row's share of its holder's time rests on (the report's, never
    /// written by the hot path).
    pc_samples: Sum,
}

impl Default for Acc {
    fn default() -> Self {
        Acc::EMPTY
    }
}

/// Why a measured delta is not added to the times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reject {
    /// The end stamp is before the start (the counter went backwards, or
    /// the thread moved to a core whose counter is behind).
    Reversed,
    /// Longer than the largest plausible call (`TICKPROF_MAX_DELTA`).
    Oversized,
}

/// The reject rule, the one place it is written: a delta is accepted when
/// it is at most `max_ticks` (which is below `i64::MAX`, so a reversed
/// delta, huge as a `u64`, is never accepted).
#[inline(always)]
pub(crate) fn accept(delta: u64, max_ticks: u64) -> Result<u64, Reject> {
    if delta <= max_ticks {
        Ok(delta)
    } else if (delta as i64) < 0 {
        Err(Reject::Reversed)
    } else {
        Err(Reject::Oversized)
    }
}

impl Acc {
    /// The counters of one finished call that took `delta` ticks.
    pub fn one_call(delta: u64, max_ticks: u64, unwinding: bool) -> Acc {
        let mut a = Acc {
            calls: 1,
            unwound: u64::from(unwinding),
            ..Acc::EMPTY
        };
        match accept(delta, max_ticks) {
            Ok(d) => {
                a.ticks = d;
                a.min = d;
                a.max = d;
            }
            Err(Reject::Reversed) => a.reversed = 1,
            Err(Reject::Oversized) => a.oversized = 1,
        }
        a
    }

    /// Calls that read the clock (counted calls left out).
    pub fn timed(&self) -> u64 {
        self.calls.saturating_sub(self.untimed)
    }

    /// Calls whose time was accepted.
    pub fn accepted(&self) -> u64 {
        self.timed()
            .saturating_sub(self.reversed.saturating_add(self.oversized))
    }

    /// `min`, or 0 when no call was accepted.
    pub fn min_or_zero(&self) -> u64 {
        if self.min == u64::MAX {
            0
        } else {
            self.min
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reject_rule() {
        assert_eq!(accept(5, 10), Ok(5));
        assert_eq!(accept(10, 10), Ok(10));
        assert_eq!(accept(11, 10), Err(Reject::Oversized));
        assert_eq!(
            accept(3u64.wrapping_sub(5), u64::MAX >> 1),
            Err(Reject::Reversed)
        );
    }

    #[test]
    fn one_call_add_and_minus() {
        let max = 1000;
        let mut a = Acc::one_call(10, max, false);
        a.add(&Acc::one_call(30, max, true));
        a.add(&Acc::one_call(5000, max, false));
        a.add(&Acc::one_call(1u64.wrapping_sub(2), max, false));
        assert_eq!(a.calls, 4);
        assert_eq!(a.ticks, 40);
        assert_eq!((a.min, a.max), (10, 30));
        assert_eq!((a.reversed, a.oversized, a.unwound), (1, 1, 1));
        assert_eq!(a.accepted(), 2);
        let before = Acc::one_call(10, max, false);
        let d = a.minus(&before);
        assert_eq!((d.calls, d.ticks, d.min, d.max), (3, 30, 10, 30));
        assert_eq!(Acc::EMPTY.min_or_zero(), 0);
    }

    #[cfg(feature = "enabled")]
    #[test]
    fn cells_load_and_reset() {
        let c = Cells::new();
        assert_eq!(c.load(), Acc::EMPTY);
        c.calls.store(3, Ordering::Relaxed);
        c.min.store(7u64.wrapping_neg(), Ordering::Relaxed);
        assert_eq!(c.load().calls, 3);
        let a = c.load();
        assert_eq!((a.min, a.max), (u64::MAX, 0), "no width: no accepted call");
        c.max.store(5, Ordering::Relaxed);
        assert_eq!((c.load().min, c.load().max), (7, 11), "width 5 from 7");
        c.reset();
        assert_eq!(c.load(), Acc::EMPTY);
        c.untimed.store((3 << STATE_BITS) | 7, Ordering::Relaxed);
        assert_eq!(c.load().untimed, 3, "the count, without the state");
        assert_eq!(c.load().calls, 3, "counted calls are calls");
        c.reset();
        assert_eq!(
            c.untimed.load(Ordering::Relaxed),
            7,
            "reset keeps the state"
        );
    }
}
