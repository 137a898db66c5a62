//! What the sampler measured of the instrumentation over a whole tree:
//! its share, its cost per call, the time waited for a CPU, and how
//! counted nodes are figured from it.

pub(crate) use super::figures::Rates;
use super::{Estimate, Facts};

pub(crate) use crate::report::MIN_FOUND;

/// Periods the sampler must have looked at the threads for its figures of
/// counted nodes to be shown (below, their timed sample's: see
/// [`Estimate`]).
pub(crate) const MIN_SAMPLES: f64 = 16.0;

/// What the sampler measured of the instrumentation, over every thread.
pub(super) struct Instrumentation {
    /// Threads' time the sampler looked at, in ticks.
    pub sampled_ticks: u64,
    /// Of which instrumentation, in ticks: what the sampler found, at
    /// least the calibrated floor of every marked call (`figures::floor`).
    pub inside_ticks: u64,
    /// Instrumentation per marked call, in ticks.
    pub per_call_ticks: f64,
    /// The same per call of a timed node and per call of a counted one
    /// (see [`Rates`]).
    pub rates: Rates,
    /// Each kind's instrumentation found (`[timed, counted]`: a timed
    /// call's exit found apart, twice, and the rest) and its calls, in
    /// ticks: what [`Self::rates`] rest on.
    pub own: [(u64, u64); 2],
    /// Instrumentation's share of the sampled time, from 0 to 1.
    pub share: f64,
    /// Time the threads waited for a CPU, in ticks.
    pub waited_ticks: u64,
    /// The calibrated costs the floor rests on.
    pub cal: crate::record::calibrate::Calibration,
}

/// The sampling period in ticks (infinite with the sampler off).
fn period(facts: &Facts) -> f64 {
    if facts.sample_hz == 0 {
        f64::INFINITY
    } else {
        facts.hz / facts.sample_hz as f64
    }
}

impl Instrumentation {
    pub(super) fn of(
        tree: &crate::tree::Tree,
        cal: crate::record::calibrate::Calibration,
    ) -> Instrumentation {
        let (mut sampled, mut calls, mut waited) = (0u64, 0u64, 0u64);
        let (mut entries, mut exits) = (0u64, 0u64);
        let (mut timed_calls, mut counted_calls) = (0u64, 0u64);
        for n in &tree.nodes {
            // tickprof's own calls (the calibration's) are not the
            // program's, nor their samples (they have none: their thread
            // is not sampled).
            if n.site.is_some_and(|s| s.is_internal()) {
                continue;
            }
            let a = &n.acc;
            waited = waited.saturating_add(a.sampled_wait);
            entries = entries.saturating_add(a.sampled_inst);
            exits = exits.saturating_add(a.sampled_exit);
            sampled = sampled
                .saturating_add(a.sampled)
                .saturating_add(a.sampled_inst)
                .saturating_add(a.sampled_exit);
            if n.site.is_some() {
                calls = calls.saturating_add(a.calls);
                timed_calls = timed_calls.saturating_add(a.timed());
                counted_calls = counted_calls.saturating_add(a.untimed);
            }
        }
        let inside = entries.saturating_add(exits);
        // Each kind's own instrumentation: a timed call's exit was found
        // apart (`sampled_exit`); its entry, which holds its other clock
        // read, is taken to cost as much; the rest of the entries found
        // are the counted calls'.
        let timed_own = exits.saturating_mul(2).min(inside);
        let own = [
            (timed_own, timed_calls),
            (inside - timed_own, counted_calls),
        ];
        // The floor (`figures::floor`) of the whole run: every timed call
        // at the calibrated cost; exact counts times a calibrated cost, it
        // cannot exceed the time the sampler looked at.
        let least = (timed_calls as f64 * cal.timed.max(0.0)) as u64;
        let inside = inside.max(least.min(sampled));
        let share = if sampled == 0 {
            0.0
        } else {
            inside as f64 / sampled as f64
        };
        let per_call_ticks = if calls == 0 {
            0.0
        } else {
            inside as f64 / calls as f64
        };
        Instrumentation {
            sampled_ticks: sampled,
            inside_ticks: inside,
            per_call_ticks,
            rates: Rates::of(inside as f64, own, per_call_ticks),
            own,
            share,
            waited_ticks: waited,
            cal,
        }
    }

    /// The instrumentation per marked call, in ticks, where the sampler
    /// found it in [`MIN_FOUND`] periods at least; else 0: fewer samples
    /// say too little (one sample in a run of 20 long calls read as 50 µs
    /// a call), and the header says it was too little to measure.
    pub(super) fn measured_per_call(&self, facts: &Facts) -> f64 {
        if self.inside_ticks as f64 >= MIN_FOUND * period(facts) {
            self.per_call_ticks
        } else {
            0.0
        }
    }

    /// The instrumentation per call of each kind of node, in ticks, where
    /// it was measured ([`Self::measured_per_call`]); else 0 for both.
    pub(super) fn measured_rates(&self, facts: &Facts) -> Rates {
        if self.measured_per_call(facts) > 0.0 {
            self.rates
        } else {
            Rates::default()
        }
    }

    /// The header's figures per timed and per counted call, in ticks:
    /// [`Self::measured_rates`] where each kind that made calls had its
    /// own instrumentation found in [`MIN_FOUND`] periods at least; else
    /// the average per marked call for both (not measured apart: a short
    /// run's counted calls, found in no period, would read 0 a call).
    pub(super) fn shown_rates(&self, facts: &Facts) -> Rates {
        let per_call = self.measured_per_call(facts);
        let found = |(found, _): (u64, u64)| found as f64 >= MIN_FOUND * period(facts);
        let apart = self.own.iter().all(|&k| k.1 == 0 || found(k));
        let [timed, counted] = self.own;
        let rates = if per_call > 0.0 && apart {
            self.rates
        } else if per_call > 0.0
            && timed.1 > 0
            && counted.1 > 0
            && !found(timed)
            && found(counted)
            && self.cal.timed > 0.0
        {
            // Only the counted calls' instrumentation found (a few timed
            // calls among millions counted: indexmap's workload marked by
            // `cargo tickprof`, whose program-counter samples find its
            // counted calls' code): the whole to the counted calls, and
            // the calibrated cost below gives the timed calls theirs. One
            // average for both read 17.6 to 48.2 ns a timed call over 8
            // identical runs, as the counted calls' figure moved.
            Rates {
                timed: 0.0,
                counted: per_call * (timed.1 + counted.1) as f64 / counted.1 as f64,
            }
        } else {
            Rates {
                timed: per_call,
                counted: per_call,
            }
        };
        if per_call > 0.0 {
            self.at_least_calibrated(rates)
        } else {
            rates
        }
    }

    /// `rates` with a timed call at its calibrated cost at least, what is
    /// added there taken from the counted calls (the whole stays what was
    /// found): the header said "at least 18.4 ns per timed call" and
    /// then 7.3 ns a timed call when the two kinds were not found apart,
    /// and over 8 identical runs of a marked pulldown-cmark the figure a
    /// timed call read 6.7 to 28 ns as the runs were found apart or not.
    fn at_least_calibrated(&self, rates: Rates) -> Rates {
        let [(_, timed_calls), (_, counted_calls)] = self.own;
        let floor = self.cal.timed.max(0.0);
        if timed_calls == 0 || rates.timed >= floor {
            return rates;
        }
        let whole = rates.timed * timed_calls as f64 + rates.counted * counted_calls as f64;
        let timed = floor.min(whole / timed_calls as f64);
        let counted = if counted_calls == 0 {
            rates.counted
        } else {
            ((whole - timed * timed_calls as f64) / counted_calls as f64).max(0.0)
        };
        Rates { timed, counted }
    }

    /// How counted nodes are figured: the sampler's figures where it
    /// looked at the threads for [`MIN_SAMPLES`] periods or more.
    pub(super) fn estimate(&self, facts: &Facts) -> Estimate {
        let period = period(facts);
        Estimate {
            sampled: self.sampled_ticks as f64 >= MIN_SAMPLES * period,
            per_call: self.measured_per_call(facts),
            rates: self.measured_rates(facts),
            resolution: facts.resolution_ticks,
            min_found: MIN_FOUND * period,
            period,
            cal: self.cal,
            too_little_found: self.measured_per_call(facts) == 0.0 && self.inside_ticks > 0,
            // Set by `build` for each tree (its threads).
            ceiling: 0.0,
        }
    }

    /// What the figures rest on, for the header (`ns`: nanoseconds per
    /// tick).
    pub(super) fn basis(&self, facts: &Facts, ns: f64) -> String {
        let (hz, unsampled) = (facts.sample_hz, facts.unsampled_threads);
        if self.sampled_ticks == 0 {
            use crate::record::sampler::Status;
            return if hz == 0 {
                "not measured: the sampler is off (TICKPROF_SAMPLE=0)".to_owned()
            } else if facts.sampler == Status::Failed {
                "not measured: the system refused the sampler's thread".to_owned()
            } else if facts.sampler == Status::NotStarted {
                "not measured: the sampler has not started (it starts at a marked call made \
                 outside any signal handler: a thread that blocks a signal with a handler, \
                 which the process was not started with, may be running it)"
                    .to_owned()
            } else {
                "not measured: no sample yet".to_owned()
            };
        }
        let missed = if unsampled == 0 {
            String::new()
        } else {
            format!(" ({unsampled} threads not sampled: more at once than the sampler lists)")
        };
        let floor = if self.cal.timed > 0.0 {
            format!(
                ", at least {:.1} ns per timed call (its calibrated cost)",
                self.cal.timed * ns,
            )
        } else {
            String::new()
        };
        format!("measured by sampling every thread {hz} times a second{missed}{floor}")
    }
}
