//! When a change of a site is noise: the reports' own errors, the runs'
//! ranges, in nanoseconds and as shares of the runs (see [`super`]).

use super::{median, Figures, Metric, Row, BUCKET, SIGMAS};

impl Figures {
    /// The value of `m` in the `scale` asked.
    fn value(&self, m: Metric, scale: Scale) -> Option<f64> {
        match scale {
            Scale::Ns => self.get(m),
            Scale::Share => self.share(m),
        }
    }

    /// `m` as a share of the run (`None`: a percentile — the calls' own,
    /// not the run's — or a run of no time).
    fn share(&self, m: Metric) -> Option<f64> {
        (m.percentile().is_none() && self.run_ns > 0.0)
            .then(|| self.get(m).unwrap_or(0.0) / self.run_ns)
    }

    /// The report's own standard error of `m` at `value`, in `scale`.
    fn err_of(&self, m: Metric, value: f64, scale: Scale) -> f64 {
        match scale {
            Scale::Ns => self.err.of(m, value),
            Scale::Share => self.err.of(m, value * self.run_ns) / self.run_ns,
        }
    }
}

/// A figure in nanoseconds, or as a share of its run's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scale {
    Ns,
    Share,
}

/// The smallest and largest value of `m` over `runs` (`None`: no run
/// has it).
fn range(runs: &[Figures], m: Metric, scale: Scale) -> Option<(f64, f64)> {
    runs.iter()
        .filter_map(|f| f.value(m, scale))
        .fold(None, |r, v| {
            Some(r.map_or((v, v), |(lo, hi): (f64, f64)| (lo.min(v), hi.max(v))))
        })
}

impl Row {
    /// The change of `m` in ns (after − before; a missing side counts 0).
    pub fn delta(&self, m: Metric) -> f64 {
        let v = |f: Option<Figures>| f.and_then(|f| f.get(m)).unwrap_or(0.0);
        v(self.after) - v(self.before)
    }

    /// The relative change of `m` (`None` when the site is new or gone,
    /// either side lacks `m`, or its before value is 0).
    pub fn change(&self, m: Metric) -> Option<f64> {
        let (b, a) = (self.before?.get(m)?, self.after?.get(m)?);
        (b > 0.0).then(|| (a - b) / b)
    }

    /// The relative spread of `m` over one side's runs, (max − min) /
    /// median (`None` with fewer than two runs).
    pub fn spread(&self, after: bool, m: Metric) -> Option<f64> {
        let (runs, median) = if after {
            (&self.after_runs, self.after)
        } else {
            (&self.before_runs, self.before)
        };
        let (lo, hi) = range(runs, m, Scale::Ns)?;
        let med = median?.get(m)?;
        (runs.len() > 1 && med > 0.0).then(|| (hi - lo) / med)
    }

    /// Whether the sides' ranges of `m` are apart by more than the larger
    /// spread (with one run a side: whether the values differ), on a log
    /// scale where both are positive: a side twice as slow spreads twice as
    /// wide in nanoseconds, and a planted 2× regression of a site whose
    /// runs spread ±17% was hidden by its own doubled spread. In
    /// nanoseconds or as shares of the runs (see the module docs).
    pub fn apart(&self, m: Metric) -> bool {
        self.apart_in(m, Scale::Ns) || self.apart_in(m, Scale::Share)
    }

    fn apart_in(&self, m: Metric, scale: Scale) -> bool {
        let (Some((blo, bhi)), Some((alo, ahi))) = (
            range(&self.before_runs, m, scale),
            range(&self.after_runs, m, scale),
        ) else {
            return false;
        };
        let (blo, bhi, alo, ahi) = if blo > 0.0 && alo > 0.0 {
            (blo.ln(), bhi.ln(), alo.ln(), ahi.ln())
        } else {
            (blo, bhi, alo, ahi)
        };
        let spread = (bhi - blo).max(ahi - alo);
        alo - bhi > spread || blo - ahi > spread
    }

    /// Whether the change of `m` is within [`SIGMAS`] times what the
    /// reports say of their own precision (the sides' errors combined;
    /// with several runs, each side's median's error is its runs' largest
    /// over the square root of their number), in nanoseconds and as
    /// shares of the runs (see the module docs).
    pub fn within_error(&self, m: Metric) -> bool {
        self.within_error_in(m, Scale::Ns).unwrap_or(false)
            && self.within_error_in(m, Scale::Share).unwrap_or(true)
    }

    /// [`Row::within_error`] in one scale (`None`: a side has no such
    /// figure). A side's figure is its runs' median.
    fn within_error_in(&self, m: Metric, scale: Scale) -> Option<bool> {
        let side = |runs: &[Figures]| -> Option<(f64, f64)> {
            let values: Vec<f64> = runs.iter().filter_map(|f| f.value(m, scale)).collect();
            if values.is_empty() {
                return None;
            }
            let e = runs
                .iter()
                .filter_map(|f| Some(f.err_of(m, f.value(m, scale)?, scale)))
                .fold(0.0, f64::max);
            Some((median(values), e / (runs.len().max(1) as f64).sqrt()))
        };
        let ((b, eb), (a, ea)) = (side(&self.before_runs)?, side(&self.after_runs)?);
        Some((a - b).abs() <= SIGMAS * (eb * eb + ea * ea).sqrt())
    }

    /// Whether the site makes no marked call (its self is its total on
    /// both sides) and its median call (`p50`) is the same on both sides:
    /// within a bucket ([`BUCKET`]) and [`SIGMAS`] times the calls' spread
    /// over their number, the sides' combined (`false` when either side
    /// has no positive `p50`). A parent's median call is its own time less
    /// the instrumentation of the calls beneath it, which moves from run
    /// to run (pulldown-cmark's `FirstPass::parse_block`: 341 ns in one
    /// run, 628 ns in the next), so its median says nothing of where a
    /// change of its total came from. Used with one run a side, where no
    /// run-to-run spread is known: a total, self or mean that moved while
    /// the median call did not moved by a few calls — a burst of slow ones
    /// (cold caches, a busy host's turn), which the reports' errors, taking
    /// calls as independent, do not expect (pulldown-cmark's
    /// `InlineStack::set_lowerbound`: 144 calls, the median call in the same
    /// bucket in both runs, 6 calls above 43 ns in one and 26 in the next,
    /// total +90%).
    pub fn same_median(&self) -> bool {
        let (Some(b), Some(a)) = (self.before, self.after) else {
            return false;
        };
        if b.self_ns != b.total_ns || a.self_ns != a.total_ns {
            return false;
        }
        let (Some(pb), Some(pa)) = (b.pct[0], a.pct[0]) else {
            return false;
        };
        if pb <= 0.0 || pa <= 0.0 {
            return false;
        }
        let tolerance = BUCKET + SIGMAS * b.err.calls.hypot(a.err.calls);
        (pa / pb).ln().abs() <= tolerance.ln_1p()
    }

    /// Whether the change of `m` is within the noise: below `noise`,
    /// within the reports' own errors, not beyond the run-to-run spread,
    /// or, with one run a side, a change of total, self or mean whose
    /// median call is the same ([`Row::same_median`]). New and gone sites
    /// are changes.
    pub fn is_noise(&self, m: Metric, noise: f64) -> bool {
        let (b, a) = match (self.before, self.after) {
            (Some(b), Some(a)) => (b.get(m), a.get(m)),
            _ => return false,
        };
        match (b, a) {
            (Some(0.0), Some(a)) => a == 0.0,
            (Some(_), Some(_)) => {
                let runs = self.before_runs.len().max(self.after_runs.len());
                // Total, self or mean (a percentile is the calls' own).
                let of_calls = m.percentile().is_none();
                self.change(m).is_none_or(|c| c.abs() < noise)
                    || self.within_error(m)
                    || (runs > 1 && !self.apart(m))
                    || (runs == 1 && of_calls && self.same_median())
            }
            _ => true,
        }
    }
}
