//! Trees → [`Report`]: per-node figures (raw and compensated), the flat
//! per-site table, callers and callees, per-thread breakdown, the tree and
//! the trace. Pure functions of a [`Capture`] and the run's [`Facts`].
//!
//! # The invariants, and how they hold by construction
//!
//! Every figure, raw and compensated, per node and per site, satisfies
//! `self <= total`; per node, the children's totals sum to at most the
//! parent's total; `min <= mean <= max`; an edge's time is at most the
//! callee's total; the sum of self over all sites is at most the sum of the
//! totals of the roots' children. They hold because:
//!
//! - a node's total is `max(own, Σ children's totals)`, computed bottom-up
//!   in the unit shown (ticks or nanoseconds, each own figure rounded down
//!   once), where `own` is the node's measured ticks (raw) or the measured
//!   ticks less the instrumentation estimated inside (compensated: at
//!   least the clock's resolution for each of its calls, or their raw
//!   time when shorter). Raising a node to its children's sum is counted
//!   (`carried`), a compensated figure held at that least is counted
//!   (`clamped`): neither is hidden;
//! - a node's self is its total less its children's totals, so the selves
//!   of a subtree add up to exactly its root's total;
//! - a site's total, and an edge's time, count only the nodes with no
//!   ancestor of the same site (recursion counted once), and every other
//!   node of the site lies inside one of those;
//! - a site's mean is the average over every call of its own duration
//!   (nested activations included), and `min`/`max` are widened to it when
//!   a carried or compensated figure falls outside them;
//! - a site's percentiles are kept within its `min..=max` and are
//!   monotonic in the rank (`p50 <= p90 <= p99`: `percentiles`).

use crate::record::timing;
use crate::record::Capture;
use crate::report::{
    AllocStats, ClockSource, Edge, Report, RunInfo, SiteStats, ThreadSite, ThreadStats, Timing,
    Trace,
};
use crate::site::CallSite;
#[cfg(test)]
use crate::tree::Tree;
use std::collections::HashMap;

mod figures;
mod instrumentation;
mod nodes;
mod percentiles;
mod trace;
pub(crate) use figures::{flatten, own_alloc, tree_figures, Estimate, Flat, TreeFigures, Trio};
use instrumentation::Instrumentation;
use nodes::tree_nodes;

/// What a report needs besides the captured trees.
#[derive(Clone, Debug)]
pub(crate) struct Facts {
    pub clock: ClockSource,
    /// Ticks per second.
    pub hz: f64,
    pub frequency_source: String,
    pub invariant_tsc: Option<bool>,
    pub wall_ns: u64,
    pub max_delta_ns: u64,
    /// Show the figures with the instrumentation the sampler measured
    /// taken out (`TICKPROF_COMPENSATE`), when it measured any.
    pub compensate: bool,
    /// What the clock can resolve, in ticks (`record::read_cost`): the
    /// part of a timed call's instrumentation inside its own time.
    pub resolution_ticks: f64,
    /// The sampler's rate, per second (0: off).
    pub sample_hz: u64,
    /// What a timed call costs its caller at least (`record::calibrate`),
    /// the floor under the instrumentation the sampler finds inside a timed
    /// node; zero: no floor.
    pub calibration: crate::record::calibrate::Calibration,
    /// Threads the sampler could not list (more at once than its table
    /// holds): not sampled.
    pub unsampled_threads: u64,
    /// Where the sampler thread stood (a sampled run's sampler starts at
    /// a marked call made outside any signal handler).
    pub sampler: crate::record::sampler::Status,
    pub tracing: bool,
    /// The tick count trace times are measured from.
    pub trace_origin: u64,
    /// The process id, for the report header.
    pub pid: u32,
    /// Pauses begun and nanoseconds paused (`crate::pause::totals`).
    pub pauses: (u64, u64),
}

/// Each site's shown name. Two sites that would show the same name (two
/// marks given the same `name = "..."`) are told apart by their source
/// location: `name (file:line)`.
fn unique_names(flat: &HashMap<usize, (&'static CallSite, Flat)>) -> HashMap<usize, String> {
    let mut names: HashMap<usize, String> = flat.iter().map(|(&k, (s, _))| (k, s.name())).collect();
    let mut seen: HashMap<&str, u32> = HashMap::new();
    for n in names.values() {
        *seen.entry(n.as_str()).or_insert(0) += 1;
    }
    let shared: std::collections::HashSet<String> = seen
        .into_iter()
        .filter(|&(_, c)| c > 1)
        .map(|(n, _)| n.to_owned())
        .collect();
    for (k, n) in &mut names {
        if shared.contains(n.as_str()) {
            let site = flat[k].0;
            *n = format!("{n} ({}:{})", site.file(), site.line());
        }
    }
    names
}

/// Converts ticks to nanoseconds.
#[derive(Clone, Copy)]
struct Ns(f64);

impl Ns {
    fn of(self, ticks: u64) -> u64 {
        (ticks as f64 * self.0).round() as u64
    }
}

/// Builds the report of a capture.
pub(crate) fn build(c: &Capture, facts: &Facts) -> Report {
    // The rows of inlined functions, beneath their marked calls (feature
    // `inlined`): added to a copy of the trees.
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    let expanded;
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    let c = if c.merged.pcs.is_empty() {
        c
    } else {
        expanded = crate::inlined::expand::expand_capture(c);
        &expanded
    };
    let ns = Ns(if facts.hz > 0.0 { 1e9 / facts.hz } else { 1.0 });
    let merged = &c.merged;
    let inst = Instrumentation::of(merged, facts.calibration);
    let shown = inst.shown_rates(facts);
    // What the threads could have spent: their number times the wall.
    let wall_ticks = facts.wall_ns as f64 / ns.0;
    let threads: u64 = c.threads.iter().map(|t| t.count).sum();
    let est = Estimate {
        ceiling: threads.max(1) as f64 * wall_ticks,
        ..inst.estimate(facts)
    };
    let fig = tree_figures(merged, ns.0, est);
    // Measured figures need samples; with none (the sampler off, or a run
    // shorter than one period) the report is raw and says so.
    let shown_comp = facts.compensate && fig.sampled.any > 0;
    let flat = flatten(merged, &fig);
    let names = unique_names(&flat);
    let name_of = |k: usize| {
        names
            .get(&k)
            .cloned()
            .unwrap_or_else(|| "<root>".to_owned())
    };
    let edges = |m: &HashMap<usize, (u64, Trio)>| {
        let mut v: Vec<Edge> = m
            .iter()
            .filter(|(_, &(calls, t))| calls > 0 || t.ns(shown_comp) > 0)
            .map(|(&k, &(calls, t))| Edge {
                name: name_of(k),
                calls,
                total_ns: t.ns(shown_comp),
            })
            .collect();
        v.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.name.cmp(&b.name))
        });
        v
    };
    let resolution = facts.resolution_ticks;
    // A site whose calls are all still running is shown if it allocated:
    // its allocations are counted already.
    let mut sites: Vec<SiteStats> = flat
        .iter()
        .filter(|(_, (_, f))| {
            f.acc.calls > 0
                || f.acc.cancelled > 0
                || f.self_alloc != AllocStats::default()
                || f.acc.pc_samples > 0
        })
        .map(|(&k, (site, f))| {
            let mut s = site_stats(site, f, names[&k].clone(), ns, shown_comp, resolution);
            let estimated = s.timing == Timing::Counted || !s.resolved;
            let per_call = percentiles::PerCall::of(f, shown_comp, resolution, estimated);
            percentiles::fill(&mut s, merged.hists.get(site), f, ns.0, per_call);
            s.callers = edges(&f.callers);
            s.callees = edges(&f.callees);
            s
        })
        .collect();
    sites.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    let threads = thread_stats(c, ns, est, shown_comp, &names);
    let tree = tree_nodes(merged, &fig, &names, shown_comp);
    let trace = facts
        .tracing
        .then(|| trace::trace(&c.traces, facts.trace_origin, ns.0));
    Report {
        run: RunInfo {
            clock: facts.clock,
            frequency_hz: facts.hz,
            frequency_source: facts.frequency_source.clone(),
            invariant_tsc: facts.invariant_tsc,
            wall_ns: facts.wall_ns,
            threads: threads.iter().map(|t| t.count).sum::<u64>() as usize,
            max_delta_ns: facts.max_delta_ns,
            out_of_order: c.events.resynced + c.events.orphaned,
            lost: c.events.lost,
            reentrant: c.events.reentrant,
            leaked: c.events.leaked,
            folded_calls: merged.folded_calls(),
            complete: c.complete,
            compensated: shown_comp,
            overhead_inner_ns: resolution * ns.0,
            overhead_inner_ticks: resolution,
            overhead_call_ns: inst.measured_per_call(facts) * ns.0,
            overhead_call_ticks: inst.measured_per_call(facts),
            overhead_timed_ns: shown.timed * ns.0,
            overhead_counted_ns: shown.counted * ns.0,
            counted_sites: sites.iter().filter(|s| s.timing == Timing::Counted).count() as u64,
            counted_calls: sites.iter().map(|s| s.calls - s.timed_calls).sum(),
            debug_build: cfg!(debug_assertions),
            calibration: inst.basis(facts, ns.0),
            overhead_share: inst.share,
            sampled_ns: ns.of(inst.sampled_ticks),
            instrumentation_ns: ns.of(inst.inside_ticks),
            waited_ns: ns.of(inst.waited_ticks),
            setup_ns: ns.of(c.events.setup_ticks),
            setup_threads: c.events.setups,
            sample_hz: facts.sample_hz,
            clamped: if shown_comp { fig.comp.clamped } else { 0 },
            carried: if shown_comp {
                fig.comp.carried
            } else {
                fig.ticks.carried
            },
            tracing: facts.tracing,
            pid: facts.pid,
            trace_dropped: trace.as_ref().map_or(0, Trace::dropped),
            alloc_installed: crate::record::alloc::installed(),
            outside: merged
                .nodes
                .first()
                .map(|n| own_alloc(&n.acc))
                .unwrap_or_default(),
            // Set by the start-up module for reports of the whole run.
            pushed: 0,
            push_failed: 0,
            push_dropped: 0,
            pauses: facts.pauses.0,
            paused_ns: facts.pauses.1,
        },
        sites,
        threads,
        tree,
        trace,
        coverage: None,
        faults: None,
    }
}

/// Whether a site's calls are long enough to be timed (see
/// [`SiteStats::resolved`]): the resolution rule ([`timing::resolvable`])
/// with the clock's resolution. A counted site's figures come from the
/// sampler: never resolved.
fn resolved(f: &Flat, counted: bool, accepted: u64, resolution: f64) -> bool {
    if counted {
        return false;
    }
    accepted == 0
        || timing::resolvable(
            f.acc.min_or_zero() as f64,
            f.every.ticks as f64 / accepted as f64,
            resolution,
        )
}

/// One site's row (edges and percentiles left empty).
fn site_stats(
    site: &CallSite,
    f: &Flat,
    name: String,
    ns: Ns,
    comp: bool,
    resolution: f64,
) -> SiteStats {
    let a = &f.acc;
    let accepted = a.accepted();
    // Counted when most of its calls were counted: its figures come from
    // the sampler (see `SiteStats::timing`).
    let counted = a.untimed.saturating_mul(2) > a.calls;
    let (total, self_) = (f.total.ns(comp), f.self_.ns(comp));
    let covered = f.every_calls;
    let mean = if covered == 0 {
        0.0
    } else {
        f.every.ns(comp) as f64 / covered as f64
    };
    SiteStats {
        name,
        function: site.function_path(),
        kind: site.kind(),
        file: site.file().to_owned(),
        line: site.line(),
        column: site.column(),
        calls: a.calls,
        timing: if counted {
            Timing::Counted
        } else {
            Timing::Timed
        },
        timed_calls: a.timed(),
        total_ns: total,
        self_ns: self_,
        p_self: if total == 0 {
            0.0
        } else {
            self_ as f64 / total as f64
        },
        mean_ns: mean,
        resolved: resolved(f, counted, accepted, resolution),
        min_ns: 0,
        max_ns: 0,
        total_ticks: f.total.ticks,
        self_ticks: f.self_.ticks,
        min_ticks: a.min_or_zero(),
        max_ticks: a.max,
        raw_total_ns: f.total.raw,
        raw_self_ns: f.self_.raw,
        compensated_total_ns: f.total.comp,
        compensated_self_ns: f.self_.comp,
        self_sampled_ns: ns.of(f.sampled_self),
        total_sampled_ns: ns.of(f.sampled_total),
        reversed: a.reversed,
        oversized: a.oversized,
        unwound: a.unwound,
        wall_ns: ns.of(a.wall),
        cancelled: a.cancelled,
        alloc: f.alloc,
        self_alloc: f.self_alloc,
        callers: Vec::new(),
        callees: Vec::new(),
        p50_ns: 0,
        p90_ns: 0,
        p99_ns: 0,
        hist: Vec::new(),
        hist_sum_ns: 0,
        pc_samples: a.pc_samples,
    }
}

fn thread_stats(
    c: &Capture,
    ns: Ns,
    est: Estimate,
    comp: bool,
    names: &HashMap<usize, String>,
) -> Vec<ThreadStats> {
    let all: u64 = c.threads.iter().map(|t| t.count).sum();
    c.threads
        .iter()
        .filter(|t| t.tree.nodes.len() > 1)
        .filter_map(|t| {
            let ceiling = est.ceiling / all.max(1) as f64 * t.count as f64;
            let fig = tree_figures(&t.tree, ns.0, Estimate { ceiling, ..est });
            let mut sites: Vec<ThreadSite> = flatten(&t.tree, &fig)
                .iter()
                .filter(|(_, (_, f))| {
                    f.acc.calls > 0 || f.acc.cancelled > 0 || f.acc.pc_samples > 0
                })
                .map(|(k, (s, f))| ThreadSite {
                    name: names.get(k).cloned().unwrap_or_else(|| s.name()),
                    calls: f.acc.calls,
                    total_ns: f.total.ns(comp),
                    self_ns: f.self_.ns(comp),
                    alloc: f.alloc,
                })
                .collect();
            if sites.is_empty() {
                return None;
            }
            sites.sort_by(|a, b| {
                b.total_ns
                    .cmp(&a.total_ns)
                    .then_with(|| a.name.cmp(&b.name))
            });
            Some(ThreadStats {
                name: t.name.clone(),
                id: t.id,
                finished: t.finished,
                count: t.count,
                sites,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
