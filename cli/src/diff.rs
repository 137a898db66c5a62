//! `tickprof diff`: per-site changes between two sets of runs (one report
//! or several per side), and the regression gate.
//!
//! Each report says how precise its figures are, and a change within that
//! is noise: a figure the sampler found rests on `n` samples and is good
//! to about `√n` of them; a mean or a percentile rests on its calls'
//! spread (the site's histogram) over their number; a percentile is a
//! histogram bucket's, good to half a bucket (1/16); a site timed fewer
//! than [`precision::FEW_CALLS`] times is good to its size or a sampling
//! period (see [`errors`]). A change counts only
//! when it is larger than [`SIGMAS`] times the two sides' errors
//! combined, and than `--noise`.
//!
//! With several runs per side, a site's figure on a side is the median of
//! its runs, and its change is **significant** only when, besides, the two
//! sides' ranges (min to max over the runs) are apart by more than the
//! larger of the two spreads (max − min, on a log scale: see
//! [`Row::apart`]): run-to-run noise, which spreads
//! each side, never counts as a change. Only significant changes are
//! shown (unless `--all`) and gated, significant rows first.
//!
//! A site's total, self and mean are also compared as **shares of their
//! run** (the figure over the run's top-level total: [`Figures::run_ns`]),
//! and a change is significant when either form says so. A busy host
//! slows whole runs in turns (two identical pulldown-cmark runs: 240 and
//! 417 ms), which moves every site of a run together and widens each
//! side's spread of absolute figures until a planted 2× regression of
//! one site was hidden in it; its share of the run does not move with
//! the host. The gate's threshold is still on the absolute change.
//!
//! With one run a side no spread is known, and a total, self or mean of
//! a site making no marked call that moved while its median call stayed
//! the same ([`Row::same_median`]) moved by a few calls: noise there (a
//! burst of slow calls, or a regression of a few calls, which three runs
//! a side tell apart).
//!
//! Names come from files and may hold anything: the table and the
//! "slower than allowed" lines print them terminal-safe (as `show` does),
//! and `--raw` escapes its fields ([`table::tsv_field`]).

mod precision;
mod table;

pub use precision::{errors, Errors};

use std::collections::HashMap;
use table::{pct, pct_over};
pub use table::{raw, table};
use tickprof_runtime::__private::terminal_safe;
use tickprof_runtime::Report;

/// The figure a site's change is measured on, sorted by, and gated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Total time.
    Total,
    /// Self time.
    #[value(name = "self")]
    SelfTime,
    /// Mean time per call.
    Mean,
    /// The median call's time (the report's `p50_ns`).
    P50,
    /// The 90th percentile of the calls' times (`p90_ns`).
    P90,
    /// The 99th percentile of the calls' times (`p99_ns`).
    P99,
}

impl Metric {
    /// The percentile's index in [`Figures::pct`], for `p50`/`p90`/`p99`.
    pub fn percentile(self) -> Option<usize> {
        match self {
            Metric::P50 => Some(0),
            Metric::P90 => Some(1),
            Metric::P99 => Some(2),
            _ => None,
        }
    }
}

/// A gate: fail when `metric` grew by more than `limit` (a fraction).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gate {
    /// The gated figure (`None`: the `--metric`).
    pub metric: Option<Metric>,
    /// The largest allowed growth.
    pub limit: f64,
}

/// What `diff` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// Changes smaller than this fraction of the before value are noise:
    /// not shown (unless `all`), never failing.
    pub noise: f64,
    /// The compared figure.
    pub metric: Metric,
    /// Fail when a site got slower by more than a gate allows.
    pub fail_if_slower: Vec<Gate>,
    /// Gate on this site only.
    pub site: Option<String>,
    /// Show the rows within the noise too.
    pub all: bool,
}

/// How many standard errors a change must pass to count (see the module
/// docs).
pub const SIGMAS: f64 = 3.0;

/// A histogram bucket's width relative to its lower bound (1/8: the
/// runtime's buckets cut each power of two into 8): two medians in the
/// same or the next bucket are the same median.
pub const BUCKET: f64 = 1.0 / 8.0;

/// One site's figures in one report (or the medians over runs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Calls.
    pub calls: u64,
    /// Total time, ns.
    pub total_ns: u64,
    /// Self time, ns.
    pub self_ns: u64,
    /// Mean time per call, ns.
    pub mean_ns: f64,
    /// p50, p90, p99 of the calls' times, ns (`None`: not in the report).
    pub pct: [Option<f64>; 3],
    /// The report's own standard error of total, self and mean, and of a
    /// percentile relative to its value (see [`errors`]).
    pub err: Errors,
    /// The run's time: the sum of the top-level calls' totals (every
    /// thread's), ns; 0: none (no share is compared).
    pub run_ns: f64,
}

impl Figures {
    /// The value of `m` (`None`: a percentile the report does not have).
    pub fn get(&self, m: Metric) -> Option<f64> {
        match m {
            Metric::Total => Some(self.total_ns as f64),
            Metric::SelfTime => Some(self.self_ns as f64),
            Metric::Mean => Some(self.mean_ns),
            _ => self.pct[m.percentile().unwrap_or(0)],
        }
    }

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

/// One site in either set of runs, matched by name.
#[derive(Clone, Debug)]
pub struct Row {
    /// The site's name.
    pub name: String,
    /// Its median figures before (`None`: new).
    pub before: Option<Figures>,
    /// Its median figures after (`None`: gone).
    pub after: Option<Figures>,
    /// Its figures in each before run that has it.
    pub before_runs: Vec<Figures>,
    /// Its figures in each after run that has it.
    pub after_runs: Vec<Figures>,
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
                self.change(m).map_or(true, |c| c.abs() < noise)
                    || self.within_error(m)
                    || (runs > 1 && !self.apart(m))
                    || (runs == 1 && of_calls && self.same_median())
            }
            _ => true,
        }
    }
}

/// One report's sites: name → figures (a name given twice counts its
/// first site, as [`Report::site`] finds it). `pct` gives a site's
/// percentiles when they were read from the file.
fn index<'a>(
    r: &'a Report,
    pct: Option<&HashMap<String, [Option<f64>; 3]>>,
) -> HashMap<&'a str, Figures> {
    let mut map = HashMap::with_capacity(r.sites.len());
    let run_ns = run_ns(r);
    for s in &r.sites {
        map.entry(s.name.as_str()).or_insert_with(|| Figures {
            calls: s.calls,
            total_ns: s.total_ns,
            self_ns: s.self_ns,
            mean_ns: s.mean_ns,
            // The percentiles read from the file when compared; else the
            // median call the reader took (for `Row::same_median`; 0: a
            // report without it).
            pct: pct
                .and_then(|p| p.get(s.name.as_str()).copied())
                .unwrap_or([(s.p50_ns > 0).then_some(s.p50_ns as f64), None, None]),
            err: errors(s, &r.run),
            run_ns,
        });
    }
    map
}

/// A report's run time: the sum of its top-level calls' totals, ns.
fn run_ns(r: &Report) -> f64 {
    r.tree
        .iter()
        .filter(|n| n.parent == Some(0))
        .map(|n| n.total_ns as f64)
        .sum()
}

/// The median of `v` (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The field-by-field median of `runs` (`None`: no run).
fn medians(runs: &[Figures]) -> Option<Figures> {
    if runs.len() <= 1 {
        return runs.first().copied();
    }
    let of = |f: fn(&Figures) -> f64| median(runs.iter().map(f).collect());
    let pct = |i: usize| {
        let v: Vec<f64> = runs.iter().filter_map(|f| f.pct[i]).collect();
        (!v.is_empty()).then(|| median(v))
    };
    Some(Figures {
        calls: of(|f| f.calls as f64).round() as u64,
        total_ns: of(|f| f.total_ns as f64).round() as u64,
        self_ns: of(|f| f.self_ns as f64).round() as u64,
        mean_ns: of(|f| f.mean_ns),
        pct: [pct(0), pct(1), pct(2)],
        err: runs[0].err,
        run_ns: of(|f| f.run_ns),
    })
}

/// One run: a report and, if read, its sites' percentiles.
pub type Run<'a> = (&'a Report, Option<&'a HashMap<String, [Option<f64>; 3]>>);

/// The sites of every run on either side, matched by name: each side's
/// medians and runs; rows whose change of `m` is significant (beyond
/// `noise` and the spread) first, then by absolute change of `m`, then
/// by name.
pub fn rows_of_runs(before: &[Run<'_>], after: &[Run<'_>], m: Metric, noise: f64) -> Vec<Row> {
    let b: Vec<_> = before.iter().map(|(r, p)| index(r, *p)).collect();
    let a: Vec<_> = after.iter().map(|(r, p)| index(r, *p)).collect();
    let mut names: Vec<&str> = b.iter().chain(&a).flat_map(|m| m.keys().copied()).collect();
    names.sort_unstable();
    names.dedup();
    let runs = |side: &[HashMap<&str, Figures>], n: &str| -> Vec<Figures> {
        side.iter().filter_map(|m| m.get(n).copied()).collect()
    };
    let mut v: Vec<Row> = names
        .into_iter()
        .map(|n| {
            let (before_runs, after_runs) = (runs(&b, n), runs(&a, n));
            Row {
                name: n.to_owned(),
                before: medians(&before_runs),
                after: medians(&after_runs),
                before_runs,
                after_runs,
            }
        })
        .collect();
    v.sort_by(|x, y| {
        x.is_noise(m, noise)
            .cmp(&y.is_noise(m, noise))
            .then_with(|| y.delta(m).abs().total_cmp(&x.delta(m).abs()))
            .then_with(|| x.name.cmp(&y.name))
    });
    v
}

/// The sites slower than a gate allows, as one line each; `Err` when the
/// gated site is missing from a side.
pub fn violations(rows: &[Row], o: &Options) -> Result<Vec<String>, String> {
    if o.fail_if_slower.is_empty() {
        return Ok(Vec::new());
    }
    let gated: Vec<&Row> = match &o.site {
        Some(name) => {
            let r = rows
                .iter()
                .find(|r| &r.name == name)
                .ok_or_else(|| format!("site {name:?} is in neither report"))?;
            if r.before.is_none() || r.after.is_none() {
                let side = if r.before.is_none() {
                    "before"
                } else {
                    "after"
                };
                return Err(format!("site {name:?} is not in the {side} report"));
            }
            vec![r]
        }
        None => rows.iter().collect(),
    };
    let mut out = Vec::new();
    for g in &o.fail_if_slower {
        let m = g.metric.unwrap_or(o.metric);
        for r in &gated {
            if r.is_noise(m, o.noise) {
                continue;
            }
            let Some(c) = r.change(m) else { continue };
            if c > g.limit {
                out.push(format!(
                    "{}: {} {} (allowed {})",
                    terminal_safe(&r.name),
                    metric_name(m),
                    pct_over(c, g.limit),
                    pct(g.limit)
                ));
            }
        }
    }
    Ok(out)
}

/// The metric's name, as `--metric` takes it.
pub fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Total => "total",
        Metric::SelfTime => "self",
        Metric::Mean => "mean",
        Metric::P50 => "p50",
        Metric::P90 => "p90",
        Metric::P99 => "p99",
    }
}
