//! The clock: raw ticks on the hot path, conversion to time at report time.
//!
//! x86_64 reads the time-stamp counter with plain `rdtsc` at both ends of a
//! guard. `rdtscp` (or `lfence; rdtsc`) at exit waits for earlier instructions
//! to retire, which makes the end stamp exact to the cycle, but on the machines
//! we measured it costs twice as much as `rdtsc` (≈19 ns vs ≈10 ns), doubling
//! the instrumentation cost that lands inside every measured interval. The
//! out-of-order window that a plain `rdtsc` can skip is a few dozen cycles and
//! is the same for every call, so it falls in the instrumentation's cost the
//! sampler measures instead. Other targets use `std::time::Instant` as a monotonic counter with
//! nanosecond ticks.

use std::time::Instant;

/// How long the frequency is measured against `Instant` at the least.
/// A run shorter than this waits out the difference when the report is built.
pub(crate) const MIN_CALIBRATION: std::time::Duration = std::time::Duration::from_millis(20);

/// Relative difference above which the measured frequency replaces cpuid's.
pub(crate) const FREQ_TOLERANCE: f64 = 0.005;

#[cfg(target_arch = "x86_64")]
mod arch {
    /// Reads the time-stamp counter.
    #[inline(always)]
    pub(crate) fn ticks() -> u64 {
        // SAFETY: `rdtsc` exists on every x86_64 CPU and has no memory effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    pub(crate) const SOURCE: crate::report::ClockSource = crate::report::ClockSource::Tsc;

    /// TSC facts from cpuid: (invariant, nominal Hz and where it came from).
    pub(crate) fn cpuid_facts() -> (Option<bool>, Option<(f64, &'static str)>) {
        let cpuid = raw_cpuid::CpuId::new();
        let invariant = cpuid
            .get_advanced_power_mgmt_info()
            .map(|a| a.has_invariant_tsc());
        let mut nominal = None;
        if let Some(hz) = cpuid.get_tsc_info().and_then(|t| t.tsc_frequency()) {
            if hz > 0 {
                nominal = Some((hz as f64, "cpuid leaf 0x15"));
            }
        }
        if nominal.is_none() {
            if let Some(khz) = cpuid.get_hypervisor_info().and_then(|h| h.tsc_frequency()) {
                if khz > 0 {
                    nominal = Some((f64::from(khz) * 1e3, "cpuid hypervisor leaf 0x40000010"));
                }
            }
        }
        if nominal.is_none() {
            if let Some(mhz) = cpuid
                .get_processor_frequency_info()
                .map(|f| f.processor_base_frequency())
            {
                if mhz > 0 {
                    nominal = Some((f64::from(mhz) * 1e6, "cpuid leaf 0x16 (base frequency)"));
                }
            }
        }
        (invariant, nominal)
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod arch {
    use std::sync::OnceLock;
    use std::time::Instant;

    static EPOCH: OnceLock<Instant> = OnceLock::new();

    /// Nanoseconds since the first read, from the OS monotonic clock.
    #[inline(always)]
    pub(crate) fn ticks() -> u64 {
        let epoch = EPOCH.get_or_init(Instant::now);
        u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    pub(crate) const SOURCE: crate::report::ClockSource = crate::report::ClockSource::Monotonic;

    pub(crate) fn cpuid_facts() -> (Option<bool>, Option<(f64, &'static str)>) {
        (
            Some(true),
            Some((1e9, "monotonic clock (ticks are nanoseconds)")),
        )
    }
}

pub(crate) use arch::{ticks, SOURCE};

/// The clock's state for one run: the start pair and what cpuid said.
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
        let (invariant, nominal) = arch::cpuid_facts();
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

    /// cpuid's nominal frequency, if it gives one.
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

    /// The frequency over the whole run so far, cross-checked with cpuid.
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
                    "measured against the OS clock over {} ({src} said {:.3} GHz)",
                    crate::report::fmt_ns(over_s * 1e9),
                    hz / 1e9
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

/// The start pair and cpuid's nominal frequency, for [`rough_hz`].
static START: std::sync::OnceLock<(u64, Instant, Option<f64>)> = std::sync::OnceLock::new();

/// How long [`rough_hz`] measures at least, since start-up.
const ROUGH_MIN: std::time::Duration = std::time::Duration::from_micros(50);

/// A first frequency estimate, good to a few percent, for converting
/// `TICKPROF_MAX_DELTA` to ticks: cpuid's nominal value, else ticks over
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
/// `min` has elapsed. Bounded by `min`.
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
        std::hint::spin_loop();
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
        if best.map_or(true, |(w, _, _)| width < w) {
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

    #[test]
    fn ticks_advance_and_frequency_is_plausible() {
        let c = Clock::start();
        let a = ticks();
        let b = ticks();
        assert!(b >= a);
        let f = c.frequency();
        assert!(f.hz > 1e8 && f.hz < 1e11, "{f:?}");
        // Later reports use the first one's figure.
        assert_eq!(c.frequency().hz.to_bits(), f.hz.to_bits());
    }
}
