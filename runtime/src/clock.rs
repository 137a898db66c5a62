//! The clock: raw ticks on the hot path, conversion to time at report time.
//!
//! One module per architecture, each with the same three items: `ticks()`
//! (the hot path's read), `SOURCE` (the counter's name in reports) and
//! `facts()` (what the hardware states of it, read at start-up):
//!
//! - `x86_64`: the time-stamp counter, plain `rdtsc`; frequency and
//!   invariance from cpuid;
//! - `aarch64`: the generic timer's virtual count `CNTVCT_EL0` after an
//!   `isb`; frequency from `CNTFRQ_EL0`;
//! - `fallback`, every other target: `std::time::Instant`, nanosecond
//!   ticks, announced on stderr at start-up.
//!
//! Whatever the hardware states, the frequency a report uses is checked
//! against the OS clock over the run (see [`Clock::frequency`]).

use std::time::Instant;

/// How long the frequency is measured against `Instant` at the least.
/// A run shorter than this waits out the difference when the report is built.
pub(crate) const MIN_CALIBRATION: std::time::Duration = std::time::Duration::from_millis(20);

/// Relative difference above which the measured frequency replaces the
/// stated one.
pub(crate) const FREQ_TOLERANCE: f64 = 0.005;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod fallback;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
use aarch64 as arch;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use fallback as arch;
#[cfg(target_arch = "x86_64")]
use x86_64 as arch;

/// What the counter says of itself, read once at start-up.
pub(crate) struct CounterFacts {
    /// Whether the TSC is invariant: x86_64 only (`None`: cpuid does not
    /// say, or the counter is not a TSC).
    pub invariant_tsc: Option<bool>,
    /// The frequency the hardware states, and where it says so.
    pub nominal: Option<(f64, &'static str)>,
}

pub(crate) use arch::{ticks, SOURCE};

/// The clock's state for one run: the start pair and what the hardware
/// stated.
pub(crate) struct Clock {
    pub start_ticks: u64,
    pub start: Instant,
    pub invariant: Option<bool>,
    pub nominal: Option<(f64, &'static str)>,
    /// The frequency the first report measured, used by every later one.
    fixed: std::sync::OnceLock<Frequency>,
}

/// The frequency used to convert ticks, and how it was obtained.
#[derive(Clone, Debug)]
pub(crate) struct Frequency {
    pub hz: f64,
    pub how: String,
}

impl Clock {
    pub(crate) fn start() -> Clock {
        let CounterFacts {
            invariant_tsc: invariant,
            nominal,
        } = arch::facts();
        let (start_ticks, start) = pair();
        let _ = START.set((start_ticks, start, nominal.map(|(hz, _)| hz)));
        Clock {
            start_ticks,
            start,
            invariant,
            nominal,
            fixed: std::sync::OnceLock::new(),
        }
    }

    /// The hardware's stated frequency (cpuid, `CNTFRQ_EL0`), if any.
    pub(crate) fn nominal_hz(&self) -> Option<f64> {
        self.nominal.map(|(hz, _)| hz)
    }

    /// The frequency that converts ticks in every report: measured once,
    /// by the first report, then kept, so that a figure whose ticks did not
    /// change never changes between reports (nanosecond totals never go
    /// backwards). Its error is the two pairs' brackets (about 1 µs) over
    /// the run's length (20 ms at least): 0.01% or less.
    pub(crate) fn frequency(&self) -> Frequency {
        self.fixed.get_or_init(|| self.measure_frequency()).clone()
    }

    /// The frequency over the whole run so far, cross-checked with the
    /// hardware's stated one.
    fn measure_frequency(&self) -> Frequency {
        let (measured, over) = measure(self.start_ticks, self.start, MIN_CALIBRATION);
        let over_s = over.as_secs_f64();
        match self.nominal {
            Some((hz, src)) if ((measured - hz) / hz).abs() <= FREQ_TOLERANCE => Frequency {
                hz,
                how: format!(
                    "{src}, confirmed against the OS clock over {}",
                    crate::report::fmt_ns(over_s * 1e9)
                ),
            },
            Some((hz, src)) => Frequency {
                hz: measured,
                how: format!(
                    "measured against the OS clock over {} ({src} said {})",
                    crate::report::fmt_ns(over_s * 1e9),
                    crate::report::fmt_hz(hz)
                ),
            },
            None => Frequency {
                hz: measured,
                how: format!(
                    "measured against the OS clock over {}{}",
                    crate::report::fmt_ns(over_s * 1e9),
                    if over < MIN_CALIBRATION.mul_f64(1.05) {
                        ", the least it needs: a shorter run waits at exit"
                    } else {
                        ""
                    }
                ),
            },
        }
    }
}

/// The start pair and the stated frequency, for [`rough_hz`].
static START: std::sync::OnceLock<(u64, Instant, Option<f64>)> = std::sync::OnceLock::new();

/// How long [`rough_hz`] measures at least, since start-up.
const ROUGH_MIN: std::time::Duration = std::time::Duration::from_micros(50);

/// A first frequency estimate, good to about 1%, for converting
/// `TICKPROF_MAX_DELTA` to ticks: the stated frequency, else ticks over
/// the time since start-up (waiting until `ROUGH_MIN` has passed, which
/// only a first marked call within 1 ms of start-up does). Not before the
/// first marked call: a process that never makes one never waits.
pub(crate) fn rough_hz() -> f64 {
    match START.get() {
        Some(&(_, _, Some(hz))) => hz,
        Some(&(ticks0, start, None)) => measure(ticks0, start, ROUGH_MIN).0,
        None => 1e9,
    }
}

/// Ticks per second between a start pair and now, waiting until at least
/// `min` has elapsed (asleep, but for its last 100 µs). Bounded by `min`.
fn measure(
    start_ticks: u64,
    start: Instant,
    min: std::time::Duration,
) -> (f64, std::time::Duration) {
    loop {
        let (now_ticks, now) = pair();
        let elapsed = now.saturating_duration_since(start);
        if elapsed >= min {
            let dt = now_ticks.wrapping_sub(start_ticks) as f64;
            let secs = elapsed.as_secs_f64();
            let hz = if secs > 0.0 && dt > 0.0 {
                dt / secs
            } else {
                1e9
            };
            return (hz, elapsed);
        }
        // Asleep for most of what is left (a run shorter than 20 ms spent
        // them spinning at exit: 21 ms of CPU a run), spinning the rest.
        let left = min - elapsed;
        if left > std::time::Duration::from_micros(200) {
            std::thread::sleep(left - std::time::Duration::from_micros(100));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Reads before which `pair` keeps the narrowest bracket it has seen.
const PAIR_TRIES: usize = 64;
/// A bracket this narrow (in ticks, ~1 µs at 2 GHz and up) is taken at once.
const PAIR_TIGHT: u64 = 2_000;

/// A (ticks, `Instant`) pair read together: the `Instant` read is
/// bracketed by two tick reads, and a wide bracket (the thread was
/// preempted between the reads, which would skew the frequency by the
/// length of the preemption) is read again. Keeps the narrowest of up to
/// `PAIR_TRIES` brackets; its midpoint stands for the `Instant`.
fn pair() -> (u64, Instant) {
    let mut best: Option<(u64, u64, Instant)> = None;
    for _ in 0..PAIR_TRIES {
        let a = ticks();
        let now = Instant::now();
        let b = ticks();
        let width = b.wrapping_sub(a);
        if best.is_none_or(|(w, _, _)| width < w) {
            best = Some((width, a.wrapping_add(width / 2), now));
        }
        if width <= PAIR_TIGHT {
            break;
        }
    }
    best.map_or_else(|| (ticks(), Instant::now()), |(_, t, i)| (t, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ClockSource;

    #[test]
    fn ticks_advance_and_frequency_is_plausible() {
        let c = Clock::start();
        let a = ticks();
        let b = ticks();
        assert!(b >= a);
        let f = c.frequency();
        // From a 1 MHz generic timer to a 100 GHz TSC.
        assert!(f.hz > 1e6 && f.hz < 1e11, "{f:?}");
        // Later reports use the first one's figure.
        assert_eq!(c.frequency().hz.to_bits(), f.hz.to_bits());
    }

    /// The `isb` orders aarch64's reads; `Instant` is monotonic. (x86_64's
    /// plain `rdtsc` is not ordered: a backwards delta is counted as
    /// rejected.)
    #[test]
    #[cfg(not(target_arch = "x86_64"))]
    fn reads_in_program_order_never_go_backwards() {
        let mut last = ticks();
        for _ in 0..100_000 {
            let t = ticks();
            assert!(t >= last, "{t} after {last}");
            last = t;
        }
    }

    #[test]
    fn the_counter_says_what_it_is() {
        let facts = arch::facts();
        let hz = facts.nominal.map(|(hz, _)| hz);
        let from = facts.nominal.map(|(_, from)| from);
        match SOURCE {
            // Only a TSC has an invariance fact; cpuid may state no
            // frequency (then it is measured).
            ClockSource::Tsc => assert!(from.is_none_or(|f| f.starts_with("cpuid"))),
            ClockSource::Cntvct => {
                assert_eq!(facts.invariant_tsc, None);
                assert_eq!(from, Some("CNTFRQ_EL0"));
                assert!(hz.is_some_and(|hz| hz >= 1e6), "{hz:?}");
            }
            _ => {
                assert_eq!(facts.invariant_tsc, None);
                assert_eq!(hz, Some(1e9));
            }
        }
    }
}
