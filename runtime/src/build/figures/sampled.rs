//! What the sampler found, per node and subtree, and each node's own
//! figure from it (see `docs/accuracy.md`).

use crate::tree::Tree;
use std::collections::HashMap;

/// What the sampler found in each node's subtree, in ticks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sampled {
    /// The program's own time in the node's subtree (`sampled`, summed).
    pub program: Vec<u64>,
    /// Time waited for a CPU in the node's subtree (`sampled_wait`,
    /// summed): inside the node's calls' measured time, not the
    /// program's.
    pub waited: Vec<u64>,
    /// Instrumentation inside the node's calls' measured time: the
    /// instrumentation of every marked call made beneath them (each
    /// caller's entries, `sampled_inst`, and exits, `sampled_exit`).
    pub inside: Vec<u64>,
    /// Samples' ticks anywhere in the tree: 0 when the sampler was off or
    /// had not looked yet.
    pub any: u64,
}

/// Sums what the sampler found, bottom-up (see [`Sampled`]).
pub(crate) fn sampled(tree: &Tree, children: &[Vec<u32>]) -> Sampled {
    let n = tree.nodes.len();
    let mut out = Sampled {
        program: vec![0; n],
        inside: vec![0; n],
        waited: vec![0; n],
        any: 0,
    };
    for i in (0..n).rev() {
        let a = &tree.nodes[i].acc;
        out.any = out
            .any
            .saturating_add(a.sampled)
            .saturating_add(a.sampled_wait)
            .saturating_add(a.sampled_inst)
            .saturating_add(a.sampled_exit);
        let (mut p, mut w) = (a.sampled, a.sampled_wait);
        let mut ins = a.sampled_inst.saturating_add(a.sampled_exit);
        for &c in &children[i] {
            let c = c as usize;
            p = p.saturating_add(out.program[c]);
            ins = ins.saturating_add(out.inside[c]);
            w = w.saturating_add(out.waited[c]);
        }
        out.program[i] = p;
        out.inside[i] = ins;
        out.waited[i] = w;
    }
    out
}

/// How a counted node's figure is found: from the sampler, or, where the
/// sampler looked too little, from its timed sample.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Estimate {
    /// Whether the sampler looked at the threads long enough for its
    /// figures (at least `MIN_SAMPLES` periods): a counted node it seldom
    /// found on top then took little time, and its sampled figure says so;
    /// below, counted nodes are figured from their timed sample.
    pub sampled: bool,
    /// Instrumentation per marked call, in ticks, as the sampler measured
    /// it over the run: what a timed sample's calls beneath cost it.
    pub per_call: f64,
    /// The same per call of a timed and of a counted node (0 where
    /// `per_call` is): what a seldom-found timed node's calls beneath cost
    /// it ([`timed_inside`]).
    pub rates: Rates,
    /// The clock's resolution, in ticks: the clock read inside each timed
    /// call, taken off a timed sample's calls.
    pub resolution: f64,
    /// The program's time, in ticks, the sampler must have found in a
    /// counted node's subtree for its figure to be the sampler's (a few
    /// sampling periods).
    pub min_found: f64,
    /// The sampling period, in ticks.
    pub period: f64,
    /// What a timed call costs its caller at least (`record::calibrate`;
    /// zero when not measured): the floor under the instrumentation found
    /// inside a timed node (see [`super::floor`]).
    pub cal: crate::record::calibrate::Calibration,
    /// The sampler found the instrumentation in fewer than `MIN_FOUND`
    /// periods over the whole run: too few samples to measure it, so what
    /// they found inside timed nodes is not taken out of them (their floor
    /// is). One sample of a short run (a look delayed on a busy machine,
    /// its waits shared out with it) took milliseconds off one node.
    pub too_little_found: bool,
    /// What the threads could have spent, in ticks: their number times
    /// the wall time (0: no bound). With no sampler's figures, the counted
    /// nodes that no timed node holds are held within it beside the timed
    /// ones ([`hold_within`]).
    pub ceiling: f64,
}

/// Each node's own figure in ticks, raw (instrumentation left in) and
/// measured (the instrumentation the sampler found inside taken out), as
/// `figures` takes them:
///
/// - a timed node: its calls' measured ticks; less, measured, the
///   instrumentation inside them (what the sampler found, at least the
///   node's `floor`: the calibrated cost of the calls made beneath) and
///   its share of the time they waited for a CPU;
/// - a counted node (its calls were not timed, or not all): what the
///   sampler found in its subtree — measured, the program's time; raw,
///   with the instrumentation inside. Where the sampler found it less
///   than `min_found`, the same if it found the site's seldom-found nodes
///   that often together; else, or where the sampler looked too little (a
///   short run, or no sampler: see [`Estimate`]), its timed sample's mean
///   times its calls — measured, less the clock read inside each and the
///   instrumentation of the calls each call makes beneath it — on a
///   sampled run held to what the sampler's count allows.
///
/// And what the sampler found with each node on top (`Own::found`), for
/// `figures` to fit a timed node's own time beside its counted children.
pub(crate) fn own_figures(
    tree: &Tree,
    counted: &[bool],
    below: &[u64],
    counted_below: &[u64],
    s: &Sampled,
    floor: &[f64],
    est: Estimate,
) -> Own {
    let n = tree.nodes.len();
    let mut own = Own {
        raw: vec![0.0; n],
        measured: vec![0.0; n],
        inside: vec![0.0; n],
        found_raw: vec![0.0; n],
        found: vec![0.0; n],
        held: 0,
    };
    // Counted nodes the sampler found too seldom for a figure of their own
    // (fewer than `min_found`), per site: what it found in all of them,
    // and what their timed samples say.
    let mut seldom: HashMap<usize, (f64, f64)> = HashMap::new();
    let mut fallback = vec![None; n];
    for (i, node) in tree.nodes.iter().enumerate() {
        let a = &node.acc;
        // Waits for a CPU fall on the program and the instrumentation
        // alike: each keeps its share of them (wall time, as a timed call
        // measures it).
        let (p, ins, w) = (s.program[i] as f64, s.inside[i] as f64, s.waited[i] as f64);
        let stretch = if p + ins > 0.0 {
            1.0 + w / (p + ins)
        } else {
            1.0
        };
        if est.sampled {
            // What the sampler found with the node itself on top: its own
            // time's sample, which the node's measured time shares with
            // its counted children where they overfill it (`figures`).
            own.found_raw[i] = (a.sampled + a.sampled_inst + a.sampled_wait) as f64;
            own.found[i] = a.sampled as f64 * stretch;
        }
        if !counted[i] {
            let t = a.ticks as f64;
            own.raw[i] = t;
            let inside = timed_inside(t, (p, ins, w), floor[i], (below[i], counted_below[i]), est);
            own.inside[i] = inside;
            // Each accepted call keeps at least a tick (its raw time when
            // shorter): calls that measurably took time never sum to 0.
            // Not the clock's resolution: a call that short is mostly
            // its own clock read (pulldown-cmark's `TreeIndex::get`,
            // 5.5 million calls of about 0.5 ns, would read 55 ms).
            let least = (a.accepted() as f64).min(t);
            let measured = t - inside * stretch;
            if measured < least && a.ticks > 0 {
                own.held += 1;
            }
            own.measured[i] = measured.max(least);
            continue;
        }
        own.inside[i] = ins;
        // The sampler's figure, where it looked at the threads enough and
        // found this node a few times at least; a row of inlined code
        // (feature `inlined`) always: its figure is the share of its
        // holder's that its program-counter samples found, however small
        // (no timed sample stands in for it, and its holder gave that
        // share up: under `min_found` it read 0, and the time was lost —
        // every row of semver's workload, 1 to 5 samples each).
        let row = node
            .site
            .is_some_and(|x| x.kind() == crate::site::SiteKind::Inlined);
        if est.sampled && (p >= est.min_found || row) {
            own.set_found(i, s, stretch);
            continue;
        }
        let accepted = a.accepted();
        if accepted == 0 {
            continue;
        }
        let (mean, calls) = (a.ticks as f64 / accepted as f64, a.calls as f64);
        let inside = est.resolution + est.per_call * below[i] as f64 / calls.max(1.0);
        let (raw, measured) = (mean * calls, (mean - inside).max(0.0) * calls);
        own.raw[i] = raw;
        own.measured[i] = measured;
        if est.sampled {
            let key = node.site.map_or(0, |x| x as *const _ as usize);
            let e = seldom.entry(key).or_default();
            e.0 += p;
            e.1 += measured;
            fallback[i] = Some((key, stretch));
        }
    }
    // A site's seldom-found nodes: where the sampler found them often
    // enough together, each keeps what it found (none, for most: their
    // share of the run is that small); else their timed samples' figures,
    // at most what the sampler's count allows (its 95% upper bound). A
    // timed sample's mean keeps some of its calls' instrumentation: over a
    // site's many small contexts it summed to 7x what the sampler found in
    // them (pulldown-cmark's `Tree::index`: 58 ms against 8.7 ms).
    for (i, f) in fallback.iter().enumerate() {
        let Some((key, stretch)) = *f else {
            continue;
        };
        let (found, estimated) = seldom[&key];
        if found >= est.min_found {
            own.set_found(i, s, stretch);
        } else if estimated > 0.0 {
            let k = (upper_bound(found / est.period) * est.period / estimated).min(1.0);
            own.raw[i] *= k;
            own.measured[i] *= k;
        }
    }
    if !est.sampled && est.ceiling > 0.0 {
        hold_within(tree, counted, &mut own, est.ceiling);
    }
    own
}

/// With no sampler's figures, a counted node's own time is its timed
/// sample's mean times its calls: one preempted call among the timed few
/// made that hundreds of times the run's wall time (issue 54). A counted
/// node beneath a timed one is fitted in that one's measured time
/// (`figures`); the others, with the top-most timed nodes beside them,
/// are held within `ceiling` (the threads times the wall time), the
/// counted ones scaled down together where they overfill it.
fn hold_within(tree: &Tree, counted: &[bool], own: &mut Own, ceiling: f64) {
    let n = tree.nodes.len();
    // Whether a timed node holds node `i` (the root holds nothing).
    let mut held = vec![false; n];
    let (mut timed, mut estimated) = (0.0, 0.0);
    for i in 1..n {
        let p = tree.nodes[i].parent as usize;
        held[i] = p != 0 && p < i && (held[p] || !counted[p]);
        if held[i] {
            continue;
        }
        if counted[i] {
            estimated += own.raw[i];
        } else {
            timed += own.raw[i];
        }
    }
    let room = (ceiling - timed).max(0.0);
    if estimated <= room {
        return;
    }
    let k = room / estimated;
    for i in 1..n {
        if counted[i] && !held[i] {
            own.raw[i] *= k;
            own.measured[i] *= k;
        }
    }
}

/// The instrumentation inside a timed node's calls, in ticks, waits left
/// out: `t` their measured ticks; `(program, inside, waited)` what the
/// sampler found in the node's subtree; at least `floor` (the calibrated
/// cost of the timed calls beneath); `below` the marked calls beneath,
/// and of those the counted nodes' calls.
///
/// Two estimates, weighed by how often the sampler found the subtree
/// (`n` periods, program and instrumentation):
///
/// - the node's own: its measured time in the proportion the sampler
///   found in it (`t * inside / found`), never more than `t`. Not what was
///   found taken off whole: each look credits a whole period, and where a
///   node was looked at more or less than it ran, the difference fell on
///   the instrumentation alone — a short node found once inside its calls
///   beneath read 0 (pulldown-cmark's `LineStart::finish_list_marker`,
///   30,120 calls, 4.2 ms measured, total 0 ns, p50 at the clock's
///   resolution);
/// - the run's: the instrumentation per call the sampler measured over
///   the whole run, of a timed node's and of a counted node's ([`Rates`]),
///   for the calls beneath — for a node found in a period or two, which
///   its own estimate rests on.
///
/// The node's own weighs `n / (n + 1)`: half for a node found once, 0.99
/// for one found a hundred times. (Weighing it `n / (n + 4)` pulled nodes
/// found tens of times towards the run's figure and, every call timed,
/// took from their parents' self time what it gave them: pulldown-cmark's
/// overlap with perf fell from 60% to 50–58%; see `docs/measured.md`.)
fn timed_inside(
    t: f64,
    (program, inside, waited): (f64, f64, f64),
    floor: f64,
    below: (u64, u64),
    est: Estimate,
) -> f64 {
    let found = program + inside + waited;
    let own = if found > 0.0 { t * inside / found } else { 0.0 };
    let run = est.rates.of_calls(below.0 - below.1, below.1);
    let n = (program + inside) / est.period;
    let weight = if n.is_finite() && n > 0.0 {
        n / (n + 1.0)
    } else {
        0.0
    };
    // `own` moved toward `run` by the other weight, to a 1/1024 tick (a
    // rate over calls times calls comes back a few ulps off: without the
    // rounding, a parent's time less it fell a hair short of children
    // that fill it exactly, and they were scaled down to fit).
    let x = own + (1.0 - weight) * (run - own);
    ((x * 1024.0).round() / 1024.0).max(floor)
}

/// The instrumentation per call, in ticks, of a timed node's calls and of
/// a counted node's, over the run: each kind's own instrumentation found
/// per call (what the sampler found inside their pushes and pops), scaled
/// together to all the instrumentation found (the callers' side of the
/// calls with it). A counted call costs a fraction of a timed one: one
/// rate for both took pulldown-cmark's `surgerize_tight_list` (529,000
/// counted calls beneath 10,485) for all instrumentation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Rates {
    /// Ticks per call of a timed node.
    pub timed: f64,
    /// Ticks per call of a counted node (some of whose calls were
    /// counted, not timed).
    pub counted: f64,
}

impl Rates {
    /// From `inside` ticks found in all, and each kind's own found and
    /// calls (`[timed, counted]`); where neither kind's own was found,
    /// `per_call` for both.
    pub(crate) fn of(inside: f64, own: [(u64, u64); 2], per_call: f64) -> Rates {
        let rate = |(found, calls): (u64, u64)| {
            if calls == 0 {
                0.0
            } else {
                found as f64 / calls as f64
            }
        };
        let (t, c) = (rate(own[0]), rate(own[1]));
        // Each kind's rate over its calls gives back what was found of it
        // (added here without the round trip, so that no rounding moves a
        // whole that equals `inside`).
        let whole = if own[0].1 == 0 { 0.0 } else { own[0].0 as f64 }
            + if own[1].1 == 0 { 0.0 } else { own[1].0 as f64 };
        if whole <= 0.0 {
            return Rates {
                timed: per_call,
                counted: per_call,
            };
        }
        let k = inside / whole;
        Rates {
            timed: t * k,
            counted: c * k,
        }
    }

    /// What `timed` calls and `counted` ones cost.
    fn of_calls(&self, timed: u64, counted: u64) -> f64 {
        self.timed * timed as f64 + self.counted * counted as f64
    }
}

/// A one-sided 95% upper bound on a Poisson mean from `k` events
/// (periods found): 3 for none, then a little above the exact bounds
/// (4.7, 6.3, 7.8 for 1, 2, 3).
fn upper_bound(k: f64) -> f64 {
    k + 3.0 + 2.0 * k.sqrt()
}

/// Each node's own figures (see [`own_figures`]), in ticks.
pub(crate) struct Own {
    /// Raw: the instrumentation left in.
    pub raw: Vec<f64>,
    /// Measured: the instrumentation the sampler found taken out.
    pub measured: Vec<f64>,
    /// What the sampler found with the node on top, raw (its calls'
    /// instrumentation and waits in) and measured (the program's time,
    /// with its share of the waits); 0 where it looked too little.
    pub found_raw: Vec<f64>,
    pub found: Vec<f64>,
    /// The instrumentation inside each node's calls, in ticks, waits left
    /// out: a timed node's estimate ([`timed_inside`]), a counted node's
    /// as the sampler found it.
    pub inside: Vec<f64>,
    /// Timed nodes whose measured figure came out below what their calls
    /// measurably took (the clock's resolution each, or their raw time
    /// when shorter) and is held at it.
    pub held: u64,
}

impl Own {
    /// Node `i`'s figures from what the sampler found in its subtree:
    /// raw, the program's time with the instrumentation and waits inside;
    /// measured, the program's, with its share of the waits.
    fn set_found(&mut self, i: usize, s: &Sampled, stretch: f64) {
        let (p, ins, w) = (s.program[i] as f64, s.inside[i] as f64, s.waited[i] as f64);
        self.raw[i] = p + ins + w;
        self.measured[i] = p * stretch;
    }
}
