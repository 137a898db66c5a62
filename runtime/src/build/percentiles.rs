//! A site's per-call figures in the report: its latency histogram in
//! nanoseconds, its raw sum, and `min`, `max` and the percentiles, each
//! call with its own instrumentation taken out.

use super::Flat;
use crate::hist::{self, Hist};
use crate::report::SiteStats;

/// How a measured report takes each call's instrumentation out of it.
///
/// The hot path does not count the marked calls made beneath each call
/// (that count, a read-modify-write on every timed call, was most of a
/// timed call's cost above the two clock reads: see `docs/measured.md`).
/// So each call loses the site's share of the instrumentation found
/// inside its calls in proportion to its time: a call twice as long
/// (most often: more calls beneath it) loses twice as much. Exact where
/// the site's calls make the same calls beneath them; a site whose calls
/// differ (a few long ones with many calls beneath, many short ones with
/// none) has its long calls' percentiles high and its short ones' low by
/// up to that share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PerCall {
    /// Ticks off every call: the part of its own instrumentation inside
    /// its time (the clock's resolution, at most its shortest call).
    pub off: f64,
    /// What every call keeps of its time: 1 less the site's share of the
    /// instrumentation of the marked calls made beneath its calls (what
    /// the report takes out of the site's total, over its raw total).
    pub keep: f64,
    /// No call is taken below this (the clock's resolution, or its raw
    /// time when shorter): a call that measurably took time never reads 0.
    pub floor: f64,
    /// Whether the calls' level is the sampler's (its mean), not the
    /// clock's: a counted site's timed calls, or a timed site whose calls
    /// are too short for the clock to resolve (`~` in the report). Their
    /// median is brought down to the mean whatever the factor (see
    /// [`agree_with_mean`]).
    pub sampled_level: bool,
}

impl PerCall {
    /// Nothing taken out (a raw report).
    pub const RAW: PerCall = PerCall {
        off: 0.0,
        keep: 1.0,
        floor: 0.0,
        sampled_level: false,
    };

    /// The correction of a site's calls (`comp`: a measured report;
    /// `resolution`: what the clock resolves, in ticks; `estimated`: the
    /// site is counted, or its calls are too short to resolve).
    pub fn of(f: &Flat, comp: bool, resolution: f64, estimated: bool) -> PerCall {
        if !comp {
            return PerCall::RAW;
        }
        let own = resolution.min(f.acc.min_or_zero() as f64);
        let ticks = f.acc.ticks as f64;
        let keep = if ticks > 0.0 {
            (1.0 - f.inside as f64 / ticks).clamp(0.0, 1.0)
        } else {
            1.0
        };
        PerCall {
            off: own,
            keep,
            floor: own,
            sampled_level: estimated,
        }
    }

    /// One call of `raw` ticks, its instrumentation taken out.
    pub fn own(&self, raw: f64) -> f64 {
        (raw * self.keep - self.off).max(self.floor.min(raw))
    }
}

/// The largest factor by which [`agree_with_mean`] moves the calls'
/// figures: a bucket's midpoint is within 6.25% of its calls' times, and
/// the clock's read within each call is a few nanoseconds.
const AGREE: f64 = 1.25;

/// Markov's bound: at least a fraction `1 - q` of the calls took the
/// `q` quantile or longer, so the mean is at least `(1 - q)` times it.
/// The quantiles held to it, with the factor `1 / (1 - q)`.
const MARKOV: [(f64, f64); 3] = [(0.50, 2.0), (0.90, 10.0), (0.99, 100.0)];

/// The p50, p90 and p99 with the largest multiple of the mean each may
/// read: [`MARKOV`]'s, and for a site whose level is the sampler's
/// (`sampled`) a median at most the mean.
fn bounds(sampled: bool) -> [(f64, f64); 3] {
    let mut b = MARKOV;
    if sampled {
        b[0] = (0.50, 1.0);
    }
    b
}

/// Brings the calls' figures (sorted, in ticks) to the site's mean
/// (`mean` ticks, from its totals), keeping their order:
///
/// - a timed site's: scaled so that their mean is the site's, by a factor
///   of at most [`AGREE`] either way (a bucket's midpoint stands for calls
///   anywhere in the bucket; a single call's figure is then its own time);
/// - a counted site's (its timed sample's calls) and an unresolved timed
///   site's (`sampled`: their level is the sampler's): scaled down only,
///   until their median is the site's mean, when their median lies above
///   it — the calls were too short for the clock to resolve, and the
///   sampler found them shorter. A median below the mean is a spread the
///   mean's tail explains: kept;
/// - every site's, then: scaled down as far as [`MARKOV`]'s bound asks
///   (the p50 at most twice the mean, the p90 ten times, the p99 a
///   hundred times), so that no percentile contradicts the mean: where
///   the sampler found a site's calls far shorter than its clock reads
///   said, the clock reads yield.
fn agree_with_mean(sorted: &mut [(f64, u64)], mean: f64, sampled: bool) {
    let (sum, n) = sorted.iter().fold((0.0, 0.0), |(s, n), &(t, c)| {
        (s + t * c as f64, n + c as f64)
    });
    if sum <= 0.0 || mean <= 0.0 || !mean.is_finite() {
        return;
    }
    let mut k = if sampled {
        1.0
    } else {
        (mean * n / sum).clamp(1.0 / AGREE, AGREE)
    };
    for (q, times) in bounds(sampled) {
        let at = crate::hist::quantile_of(sorted, q).unwrap_or(0.0) * k;
        if at > mean * times {
            k *= mean * times / at;
        }
    }
    for x in sorted.iter_mut() {
        x.0 *= k;
    }
}

/// Fills `s`'s `min_ns`, `max_ns`, histogram, raw sum and percentiles
/// from the site's histogram in ticks `h` (`ns`: nanoseconds per tick).
///
/// Each call is its bucket's midpoint with its instrumentation taken out
/// ([`PerCall`], [`Hist::corrected`]): its own clock read and its share of
/// the instrumentation of the marked calls made beneath the site's calls,
/// in proportion to its time. `min`, the
/// percentiles and `max` are ranks of those figures, so `min <= p50 <=
/// p90 <= p99 <= max` by construction; they are brought to the mean
/// ([`agree_with_mean`]: none contradicts it), `min` and `max` are then
/// widened to it (`min <= mean <= max`), and the percentiles kept within
/// them. Without a histogram (no timed call) `min` and `max` come from
/// the raw extremes, corrected the same way, and the percentiles are 0.
pub(super) fn fill(s: &mut SiteStats, h: Option<&Hist>, f: &Flat, ns: f64, per_call: PerCall) {
    let h = h.filter(|h| !h.is_empty());
    let mean = s.mean_ns;
    let (lo, hi, sorted) = match h {
        Some(h) => {
            let mut sorted = h.corrected(|raw| per_call.own(raw));
            agree_with_mean(&mut sorted, mean / ns, per_call.sampled_level);
            let lo = sorted.first().map_or(0.0, |x| x.0) * ns;
            let hi = sorted.last().map_or(0.0, |x| x.0) * ns;
            (lo, hi, Some(sorted))
        }
        None if f.acc.accepted() > 0 => {
            let lo = per_call.own(f.acc.min_or_zero() as f64) * ns;
            let hi = per_call.own(f.acc.max as f64) * ns;
            (lo, hi, None)
        }
        None => (mean, mean, None),
    };
    let (lo, hi) = (lo.min(mean), hi.max(mean));
    s.min_ns = lo.floor() as u64;
    s.max_ns = hi.ceil() as u64;
    let Some(h) = h else {
        return;
    };
    let sorted = sorted.unwrap_or_default();
    // Rounded to whole nanoseconds, but never above the bound the figures
    // were brought to ([`agree_with_mean`]: a p50 of 5.64 ns against a mean
    // of 2.82 reads 5, not 6). A site whose level is the sampler's and
    // whose estimate is 0 (the sampler never found its calls, and its
    // timed sample is all clock read) has no percentile above 0 either:
    // a p50 of 3 ns against a mean of 0 would say its calls took time
    // the report gives them none of (`SiteStats::too_few_samples`).
    let at = |(q, times): (f64, f64)| {
        let t = hist::quantile_of(&sorted, q).unwrap_or(0.0) * ns;
        let bound = if mean > 0.0 {
            (times * mean).floor() as u64
        } else if per_call.sampled_level {
            0
        } else {
            u64::MAX
        };
        (t.round() as u64).min(bound).clamp(s.min_ns, s.max_ns)
    };
    let [p50, p90, p99] = bounds(per_call.sampled_level);
    (s.p50_ns, s.p90_ns, s.p99_ns) = (at(p50), at(p90), at(p99));
    s.hist.clear();
    for &(i, n) in h.buckets() {
        let upper = (hist::upper(usize::from(i)) as f64 * ns).ceil() as u64;
        match s.hist.last_mut() {
            Some(last) if last.0 == upper => last.1 = last.1.saturating_add(n),
            _ => s.hist.push((upper, n)),
        }
    }
    s.hist_sum_ns = (f.hist_ticks as f64 * ns).round() as u64;
}
