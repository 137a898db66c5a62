//! A site's latency histogram in the report: its buckets in nanoseconds,
//! its raw sum, and the percentiles.

use super::Flat;
use crate::hist::{self, Hist};
use crate::report::SiteStats;

/// Fills `s`'s histogram, its raw sum and its percentiles from the site's
/// histogram in ticks `h` (`ns`: nanoseconds per tick; `off`: the ticks
/// a compensated report takes off each call, 0 otherwise). Each
/// percentile is its bucket's midpoint, kept within the site's raw
/// extremes, less `off`, in nanoseconds, kept within the row's
/// `min_ns..=max_ns`: monotonic in the rank, like the midpoints. An empty
/// histogram leaves the fields at 0.
pub(super) fn fill(s: &mut SiteStats, h: Option<&Hist>, f: &Flat, ns: f64, off: f64) {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return;
    };
    let (min, max) = (f.acc.min_or_zero(), f.acc.max.max(f.acc.min_or_zero()));
    let (lo, hi) = (s.min_ns as f64, s.max_ns as f64);
    let at = |q: f64| {
        let ticks = h.quantile(q).unwrap_or(0).clamp(min, max) as f64;
        ((ticks - off).max(0.0) * ns).clamp(lo, hi.max(lo)).round() as u64
    };
    (s.p50_ns, s.p90_ns, s.p99_ns) = (at(0.50), at(0.90), at(0.99));
    s.hist.clear();
    for &(i, n) in h.buckets() {
        let upper = (hist::upper(usize::from(i)) as f64 * ns).ceil() as u64;
        match s.hist.last_mut() {
            Some(last) if last.0 == upper => last.1 = last.1.saturating_add(n),
            _ => s.hist.push((upper, n)),
        }
    }
    s.hist_sum_ns = (f.every.ticks as f64 * ns).round() as u64;
}
