//! Latency histograms: the bucket arithmetic, and the sparse histograms
//! that reports merge, subtract and read percentiles from.
//!
//! Buckets are log-linear over a call's duration in ticks (HDR-style):
//! durations below `2 * SUB` ticks each have a bucket of their own; above,
//! every power of two `[2^e, 2^(e+1))` is cut into [`SUB`] equal buckets.
//! A bucket's width is at most 1/[`SUB`] of its lower bound, so the
//! bucket's midpoint is within `1 / (2 * SUB)` (6.25%) of any duration in
//! it ([`MAX_REL_ERROR`]). [`BUCKETS`] buckets cover every `u64`, so a
//! thread's histogram of one site is a fixed array, and finding a bucket
//! is a handful of instructions with no branch ([`index_of`]).

use crate::site::CallSite;
use std::collections::BTreeMap;

/// Sub-buckets per power of two, as a power of two.
pub(crate) const SUB_BITS: u32 = 3;
/// Sub-buckets per power of two.
pub(crate) const SUB: u64 = 1 << SUB_BITS;
/// Buckets covering every `u64` duration (`index_of(u64::MAX) + 1`).
pub(crate) const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB as usize;
/// The largest relative error of a bucket's midpoint ([`mid`]) for any
/// duration in the bucket: half a bucket's width over its lower bound.
#[cfg(test)]
pub(crate) const MAX_REL_ERROR: f64 = 0.5 / SUB as f64;

/// The bucket of a duration of `ticks`: branch-free (an `or`, a
/// leading-zero count, two shifts and an add).
#[inline(always)]
pub(crate) fn index_of(ticks: u64) -> usize {
    // `| SUB` keeps the top bit at `SUB_BITS` or above, so the shift is 0
    // for durations below `2 * SUB` (one bucket per value) and the
    // position of the top bit less `SUB_BITS` above.
    let shift = (63 - (ticks | SUB).leading_zeros()) - SUB_BITS;
    ((u64::from(shift) << SUB_BITS) + (ticks >> shift)) as usize
}

/// The width of bucket `i`, as a power of two: its shift.
fn shift_of(i: usize) -> u32 {
    ((i as u64 >> SUB_BITS).saturating_sub(1)) as u32
}

/// The smallest duration in bucket `i` (`i < BUCKETS`).
pub(crate) fn lower(i: usize) -> u64 {
    let shift = shift_of(i);
    (i as u64 - (u64::from(shift) << SUB_BITS)) << shift
}

/// The largest duration in bucket `i` (`i < BUCKETS`).
pub(crate) fn upper(i: usize) -> u64 {
    lower(i) + ((1u64 << shift_of(i)) - 1)
}

/// The duration a bucket stands for: its midpoint, rounded down.
pub(crate) fn mid(i: usize) -> u64 {
    lower(i) + ((1u64 << shift_of(i)) - 1) / 2
}

/// A histogram of call durations in ticks, sparse: `(bucket, count)` in
/// bucket order, no zero counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hist {
    buckets: Vec<(u16, u64)>,
}

impl Hist {
    /// No calls.
    #[cfg(test)]
    pub const fn new() -> Hist {
        Hist {
            buckets: Vec::new(),
        }
    }

    /// From a dense array: a count per bucket.
    pub fn from_dense(counts: impl IntoIterator<Item = u64>) -> Hist {
        let buckets = counts
            .into_iter()
            .take(BUCKETS)
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .map(|(i, n)| (i as u16, n))
            .collect();
        Hist { buckets }
    }

    /// One call of `ticks`.
    pub fn one(ticks: u64) -> Hist {
        Hist {
            buckets: vec![(index_of(ticks) as u16, 1)],
        }
    }

    /// `(bucket, count)` in bucket order, no zero counts.
    pub fn buckets(&self) -> &[(u16, u64)] {
        &self.buckets
    }

    /// Calls counted.
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.buckets
            .iter()
            .fold(0u64, |a, &(_, n)| a.saturating_add(n))
    }

    /// Whether no call is counted.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Bucket by bucket, `f(mine, theirs)` over the union of the buckets;
    /// buckets whose count comes out 0 are dropped.
    fn zip(&self, o: &Hist, f: impl Fn(u64, u64) -> u64) -> Hist {
        let (a, b) = (&self.buckets, &o.buckets);
        let (mut i, mut j) = (0, 0);
        let mut out = Hist {
            buckets: Vec::with_capacity(a.len().max(b.len())),
        };
        while i < a.len() || j < b.len() {
            let ka = a.get(i).map_or(u32::MAX, |x| u32::from(x.0));
            let kb = b.get(j).map_or(u32::MAX, |x| u32::from(x.0));
            let k = ka.min(kb);
            let take = |h: &Hist, at: &mut usize, key: u32| {
                if key == k {
                    *at += 1;
                    h.buckets[*at - 1].1
                } else {
                    0
                }
            };
            let x = take(self, &mut i, ka);
            let y = take(o, &mut j, kb);
            let n = f(x, y);
            if n > 0 {
                // `k` is a bucket of `a` or `b`: below `BUCKETS`.
                out.buckets.push((k as u16, n));
            }
        }
        out
    }

    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &Hist) {
        if o.is_empty() {
            return;
        }
        *self = self.zip(o, u64::saturating_add);
    }

    /// What was counted between `earlier` and `self`, bucket by bucket
    /// (saturating at 0).
    pub fn minus(&self, earlier: &Hist) -> Hist {
        self.zip(earlier, u64::saturating_sub)
    }

    /// The calls' own durations: each bucket's midpoint as `own` makes it
    /// (the report takes the instrumentation inside the calls out); as
    /// `(ticks, count)` sorted by duration, equal durations merged.
    pub fn corrected(&self, own: impl Fn(f64) -> f64) -> Vec<(f64, u64)> {
        let mut v: Vec<(f64, u64)> = self
            .buckets
            .iter()
            .map(|&(i, n)| (own(mid(usize::from(i)) as f64), n))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 = a.1.saturating_add(b.1);
                true
            } else {
                false
            }
        });
        v
    }

    /// The `q`-quantile (`0 < q <= 1`), in ticks: the midpoint of the
    /// bucket holding the call of rank `ceil(q * count)`; `None` when
    /// empty.
    #[cfg(test)]
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0u64;
        for &(i, c) in &self.buckets {
            seen = seen.saturating_add(c);
            if seen >= rank {
                return Some(mid(usize::from(i)));
            }
        }
        self.buckets.last().map(|&(i, _)| mid(usize::from(i)))
    }
}

/// The `q`-quantile (`0 < q <= 1`) of durations sorted as
/// [`Hist::corrected`] gives them: the duration of the call of rank
/// `ceil(q * count)`; `None` when empty.
pub(crate) fn quantile_of(sorted: &[(f64, u64)], q: f64) -> Option<f64> {
    let n = sorted.iter().fold(0u64, |a, &(_, c)| a.saturating_add(c));
    if n == 0 {
        return None;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0u64;
    for &(t, c) in sorted {
        seen = seen.saturating_add(c);
        if seen >= rank {
            return Some(t);
        }
    }
    sorted.last().map(|&(t, _)| t)
}

/// Histograms by site (a site is its address), as trees carry them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SiteHists(BTreeMap<usize, Hist>);

/// A site's key in [`SiteHists`].
fn key(site: &CallSite) -> usize {
    site as *const CallSite as usize
}

impl SiteHists {
    /// No histograms.
    pub const fn new() -> SiteHists {
        SiteHists(BTreeMap::new())
    }

    /// Adds `h` to `site`'s histogram.
    pub fn insert(&mut self, site: &CallSite, h: Hist) {
        self.0.entry(key(site)).or_default().merge(&h);
    }

    /// `site`'s histogram, if it counted a call.
    pub fn get(&self, site: &CallSite) -> Option<&Hist> {
        self.0.get(&key(site))
    }

    /// Adds `o` into `self`, site by site.
    pub fn merge(&mut self, o: &SiteHists) {
        for (k, h) in &o.0 {
            self.0.entry(*k).or_default().merge(h);
        }
    }

    /// What was counted between `earlier` and `self`, site by site.
    pub fn minus(&self, earlier: &SiteHists) -> SiteHists {
        let mut out = BTreeMap::new();
        for (k, h) in &self.0 {
            let d = earlier.0.get(k).map_or_else(|| h.clone(), |e| h.minus(e));
            if !d.is_empty() {
                out.insert(*k, d);
            }
        }
        SiteHists(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_tile_every_u64_in_order() {
        assert_eq!(BUCKETS, 496);
        assert_eq!(index_of(0), 0);
        assert_eq!(index_of(u64::MAX), BUCKETS - 1);
        assert_eq!(upper(BUCKETS - 1), u64::MAX);
        for i in 0..BUCKETS {
            assert!(lower(i) <= upper(i), "{i}");
            assert_eq!(index_of(lower(i)), i, "lower of {i}");
            assert_eq!(index_of(upper(i)), i, "upper of {i}");
            if i + 1 < BUCKETS {
                assert_eq!(upper(i) + 1, lower(i + 1), "no gap after {i}");
            }
        }
        // Exact below 2 * SUB: a bucket per value.
        for v in 0..2 * SUB {
            assert_eq!((lower(index_of(v)), upper(index_of(v))), (v, v));
        }
    }

    #[test]
    fn empty_histograms() {
        let e = Hist::new();
        assert_eq!(e.count(), 0);
        assert_eq!(e.quantile(0.5), None);
        assert_eq!(e.minus(&Hist::one(5)), Hist::new());
        let mut m = Hist::new();
        m.merge(&e);
        assert!(m.is_empty());
        m.merge(&Hist::one(5));
        assert_eq!(m, Hist::one(5));
        assert_eq!(Hist::from_dense([0u64; BUCKETS]), Hist::new());
    }

    #[test]
    fn quantiles_of_a_known_distribution() {
        let mut h = Hist::new();
        for _ in 0..95 {
            h.merge(&Hist::one(50_000));
        }
        for _ in 0..5 {
            h.merge(&Hist::one(5_000_000));
        }
        let near = |got: Option<u64>, want: f64| {
            let got = got.unwrap() as f64;
            assert!(
                (got - want).abs() <= want * MAX_REL_ERROR,
                "{got} vs {want}"
            );
        };
        near(h.quantile(0.5), 50_000.0);
        near(h.quantile(0.95), 50_000.0);
        near(h.quantile(0.96), 5_000_000.0);
        near(h.quantile(0.99), 5_000_000.0);
        near(h.quantile(1.0), 5_000_000.0);
    }

    fn hist() -> impl Strategy<Value = Hist> {
        proptest::collection::vec(
            (any::<u64>().prop_map(|v| v >> (v % 64)), 1u64..1000),
            0..20,
        )
        .prop_map(|v| {
            let mut h = Hist::new();
            for (t, n) in v {
                let mut one = Hist::one(t);
                one.buckets[0].1 = n;
                h.merge(&one);
            }
            h
        })
    }

    proptest! {
        #[test]
        fn midpoint_error_is_bounded(v in any::<u64>().prop_map(|v| v >> (v % 64))) {
            let i = index_of(v);
            prop_assert!(lower(i) <= v && v <= upper(i));
            let err = (mid(i) as f64 - v as f64).abs();
            prop_assert!(err <= v as f64 * MAX_REL_ERROR, "{v}: mid {} err {err}", mid(i));
        }

        #[test]
        fn merge_is_associative_and_commutative(a in hist(), b in hist(), c in hist()) {
            let mut ab = a.clone();
            ab.merge(&b);
            let mut ba = b.clone();
            ba.merge(&a);
            prop_assert_eq!(&ab, &ba);
            let mut ab_c = ab.clone();
            ab_c.merge(&c);
            let mut bc = b.clone();
            bc.merge(&c);
            let mut a_bc = a.clone();
            a_bc.merge(&bc);
            prop_assert_eq!(&ab_c, &a_bc);
            prop_assert_eq!(ab_c.count(), a.count() + b.count() + c.count());
            prop_assert!(ab_c.buckets.windows(2).all(|w| w[0].0 < w[1].0));
            prop_assert_eq!(ab.minus(&b), a.clone());
            prop_assert_eq!(ab.minus(&ab), Hist::new());
        }

        #[test]
        fn quantiles_are_monotonic_and_within_the_range(h in hist()) {
            let qs = [0.01, 0.5, 0.9, 0.99, 1.0].map(|q| h.quantile(q));
            if h.is_empty() {
                prop_assert!(qs.iter().all(Option::is_none));
            } else {
                let qs = qs.map(Option::unwrap);
                prop_assert!(qs.windows(2).all(|w| w[0] <= w[1]), "{qs:?}");
                let (lo, hi) = (h.buckets[0].0, h.buckets[h.buckets.len() - 1].0);
                prop_assert!(qs[0] >= lower(usize::from(lo)));
                prop_assert!(qs[4] <= upper(usize::from(hi)));
            }
        }
    }
}
