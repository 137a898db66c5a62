//! What a report says of the precision of a site's figures (see the
//! module docs of `diff`).

use super::Metric;

/// A report's own standard errors of a site's figures, in ns (`pct`: a
/// fraction of the percentile).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Errors {
    /// Of `total_ns`.
    pub total: f64,
    /// Of `self_ns`.
    pub self_: f64,
    /// Of `mean_ns`.
    pub mean: f64,
    /// Of a percentile, relative.
    pub pct: f64,
    /// Of the site's typical call from its calls' spread alone, relative:
    /// their coefficient of variation over the square root of the timed
    /// calls (the part of `pct` beside the half bucket).
    pub calls: f64,
}

impl Errors {
    /// The error of `m`'s value `v`.
    pub(super) fn of(&self, m: Metric, v: f64) -> f64 {
        match m {
            Metric::Total => self.total,
            Metric::SelfTime => self.self_,
            Metric::Mean => self.mean,
            _ => self.pct * v,
        }
    }
}

/// Timed calls below which a site's spread says nothing: its figure is
/// taken to be good to its own size or a sampling period (see
/// [`errors`]). Two calls of pulldown-cmark's `char_from_codepoint` read
/// 10 ns each in one run and 80 ns each in the next (cold cache lines):
/// their spread, 0, had made a 19 → 160 ns total a regression.
pub const FEW_CALLS: u64 = 8;

/// What a report says of the precision of `s`'s figures: the sampler's
/// share of a figure (the time it found, and the instrumentation it took
/// out, `raw − measured`) rests on that time over the sampling period in
/// samples, good to the square root of their count; the calls' spread
/// (the coefficient of variation of its histogram) over the square root
/// of the timed calls bounds a mean's error; a percentile is good to half
/// a histogram bucket (1/16) and the calls' spread likewise; each timed
/// call is good to the clock's resolution. A site timed fewer than
/// [`FEW_CALLS`] times says nothing of its spread: its figure is taken to
/// be good to its own size or a
/// sampling period, whichever is smaller (a single call shorter than a
/// period is what its cold cache lines and first-touch page faults make
/// it: pulldown-cmark's `Tree::with_capacity` read 11.8 µs in one run and
/// 376 µs in the next; a longer one, the sampler corroborates). A site
/// with counted calls rests on the sampler for them, at least one
/// sample's worth: a count of none is good to about one, not to zero (a
/// 103-call pulldown-cmark site, 42 of its calls counted on paths no
/// sample found, read 4.4 µs in one run and 9.5 µs in the next, as its
/// timed calls fell on other paths).
pub fn errors(s: &tickprof_runtime::SiteStats, run: &tickprof_runtime::RunInfo) -> Errors {
    let period = if run.sample_hz == 0 {
        0.0
    } else {
        1e9 / run.sample_hz as f64
    };
    let counted = s.calls > s.timed_calls;
    let sampled = |found: u64, raw: u64, shown: u64| {
        let t = found as f64 + raw.abs_diff(shown) as f64;
        let t = if counted { t.max(period) } else { t };
        (t * period).sqrt()
    };
    let cv = spread_of(&s.hist);
    let timed = s.timed_calls.max(1) as f64;
    let calls_err = cv / timed.sqrt();
    let reads = run.overhead_inner_ns.max(0.0) * (s.timed_calls as f64).sqrt();
    let once = |v: u64| {
        if s.timed_calls < FEW_CALLS {
            (v as f64).min(if period > 0.0 { period } else { 1e6 })
        } else {
            0.0
        }
    };
    let total = sampled(s.total_sampled_ns, s.raw_total_ns, s.compensated_total_ns)
        + s.total_ns as f64 * calls_err
        + reads
        + once(s.total_ns);
    let self_ = sampled(s.self_sampled_ns, s.raw_self_ns, s.compensated_self_ns)
        + s.self_ns as f64 * calls_err
        + reads
        + once(s.self_ns);
    Errors {
        total,
        self_,
        mean: total / s.calls.max(1) as f64,
        pct: 1.0 / 16.0 + calls_err,
        calls: calls_err,
    }
}

/// The coefficient of variation of a histogram's calls (`(upper_ns,
/// count)` buckets, each call at its bucket's bound); 0 when empty.
fn spread_of(hist: &[(u64, u64)]) -> f64 {
    let n: f64 = hist.iter().map(|&(_, c)| c as f64).sum();
    if n == 0.0 {
        return 0.0;
    }
    let mean = hist.iter().map(|&(u, c)| u as f64 * c as f64).sum::<f64>() / n;
    if mean <= 0.0 {
        return 0.0;
    }
    let var = hist
        .iter()
        .map(|&(u, c)| (u as f64 - mean).powi(2) * c as f64)
        .sum::<f64>()
        / n;
    var.sqrt() / mean
}
