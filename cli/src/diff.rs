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

mod noise;
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
