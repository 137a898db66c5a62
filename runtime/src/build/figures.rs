//! Per-node figures (raw ticks, raw and compensated nanoseconds) and the
//! per-site sums derived from them. See the parent module for the
//! invariants these functions guarantee.

use crate::calibrate::Calibration;
use crate::counters::Acc;
use crate::report::AllocStats;
use crate::site::CallSite;
use crate::tree::{site_key, Tree};
use std::collections::HashMap;

/// Per-node figures of one tree, in ticks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Figures {
    pub total: Vec<u64>,
    pub self_: Vec<u64>,
    /// Nodes whose own figure was below zero (compensated) and set to 0.
    pub clamped: u64,
    /// Nodes with completed calls raised to the sum of their children's
    /// totals.
    pub carried: u64,
}

/// Totals and selves from each node's own figure (`own[i]` ticks, may be
/// negative) times `scale` (1 for ticks, ns per tick for nanoseconds),
/// rounded down once, bottom-up; see the module docs.
pub(crate) fn figures(tree: &Tree, children: &[Vec<u32>], own: &[f64], scale: f64) -> Figures {
    let n = tree.nodes.len();
    let mut f = Figures {
        total: vec![0; n],
        self_: vec![0; n],
        ..Figures::default()
    };
    // Parents come before their children: walk backwards.
    for i in (0..n).rev() {
        let kids: u64 = children[i].iter().map(|&c| f.total[c as usize]).sum();
        let mut mine = own[i];
        if mine < 0.0 {
            if tree.nodes[i].acc.ticks > 0 {
                f.clamped += 1;
            }
            mine = 0.0;
        }
        let mine = (mine * scale).floor() as u64;
        // A node with no completed call is a frame still open (a call in
        // progress, or a guard never dropped): carrying its children's
        // time up is not a correction of a measurement.
        if kids > mine && i > 0 && tree.nodes[i].acc.calls > 0 {
            f.carried += 1;
        }
        f.total[i] = mine.max(kids);
        f.self_[i] = f.total[i] - kids;
    }
    f
}

/// Marked calls made beneath each node (its regular descendants' calls).
pub(crate) fn calls_below(tree: &Tree, children: &[Vec<u32>]) -> Vec<u64> {
    let n = tree.nodes.len();
    let mut below = vec![0u64; n];
    for i in (0..n).rev() {
        below[i] = children[i]
            .iter()
            .map(|&c| below[c as usize] + tree.nodes[c as usize].acc.calls)
            .sum();
    }
    below
}

/// Counted calls made beneath each node (its regular descendants'
/// `untimed`): they cost their caller less than a timed call.
pub(crate) fn untimed_below(tree: &Tree, children: &[Vec<u32>]) -> Vec<u64> {
    let n = tree.nodes.len();
    let mut below = vec![0u64; n];
    for i in (0..n).rev() {
        below[i] = children[i]
            .iter()
            .map(|&c| below[c as usize] + tree.nodes[c as usize].acc.untimed)
            .sum();
    }
    below
}

/// Whether a node is counted: some of its calls were counted (not timed)
/// and every child of it is counted (a counted call's subtree is counted
/// whole: see `record::adapt`). Its figures are estimates from its timed
/// sample, and its calls' time is in its nearest timed ancestor's self
/// time. (A node with counted calls and a child that is not counted — the
/// child was timed before its parent started counting — is figured as a
/// timed node: its total is carried up to its children's when the sample
/// falls short, and counted as carried.)
pub(crate) fn counted_nodes(tree: &Tree, children: &[Vec<u32>]) -> Vec<bool> {
    let mut counted = vec![false; tree.nodes.len()];
    for i in (0..tree.nodes.len()).rev() {
        let n = &tree.nodes[i];
        counted[i] =
            n.acc.untimed > 0 && n.is_regular() && children[i].iter().all(|&c| counted[c as usize]);
    }
    counted
}

/// Each node's own compensated figure: its ticks less its own inner cost
/// per accepted call (at most its shortest call, since the inner cost is
/// inside every measured call) and the caller-side cost of every marked
/// call beneath it: a timed call's, or, for the counted ones (`untimed`, a
/// part of `below`), the part of a counted call's cost that the node's own
/// work does not hide ([`exposed`]).
pub(crate) fn compensated_own(
    tree: &Tree,
    below: &[u64],
    untimed: &[u64],
    cal: &Calibration,
) -> Vec<f64> {
    tree.nodes
        .iter()
        .zip(below.iter().zip(untimed))
        .map(|(node, (&b, &u))| {
            let a = &node.acc;
            let inner = cal.inner_ticks.min(a.min_or_zero() as f64);
            let rest = a.ticks as f64
                - a.accepted() as f64 * inner
                - b.saturating_sub(u) as f64 * cal.call_ticks;
            if u == 0 {
                return rest;
            }
            rest - u as f64 * exposed(rest / u as f64, cal.counted_call_ticks)
        })
        .collect()
}

/// How many counted-call costs wide the ramp of [`exposed`] is.
pub(crate) const EXPOSURE_RAMP: f64 = 8.0;

/// What one counted call costs its caller, in ticks, when the caller's
/// time per counted call (the call's own cost included) is `per_call` and
/// a counted call costs `full` back to back around an empty body.
///
/// A counted call reads no clock, so nothing serialises it: its
/// instructions execute in the shadow of its caller's work where that work
/// leaves room (a dependent chain of ~20 ns calls hides them entirely:
/// accuracy case A reads +0.2% raw) and in full where it leaves none
/// (overlapping ~2 ns calls: case B reads +180% raw, the whole cost). The
/// cost is taken as `full` when the work per call beyond it is nothing,
/// falling linearly to 0 when that work is [`EXPOSURE_RAMP`] times `full`:
/// between `0` and `full`, never increasing with `per_call`.
pub(crate) fn exposed(per_call: f64, full: f64) -> f64 {
    if full.is_nan() || full <= 0.0 || !per_call.is_finite() {
        return 0.0;
    }
    let work = (per_call - full).max(0.0);
    full * (1.0 - work / (EXPOSURE_RAMP * full)).clamp(0.0, 1.0)
}

/// A counted node's estimated total in ticks, raw and compensated: the
/// mean of its timed sample (less the inner cost, compensated) times its
/// calls. 0 for other nodes and for a node with no accepted sample.
fn estimate(a: &Acc, cal: Option<&Calibration>) -> (f64, f64) {
    let accepted = a.accepted();
    if accepted == 0 {
        return (0.0, 0.0);
    }
    let mean = a.ticks as f64 / accepted as f64;
    let inner = cal.map_or(0.0, |c| c.inner_ticks.min(a.min_or_zero() as f64));
    let calls = a.calls as f64;
    (mean * calls, (mean - inner).max(0.0) * calls)
}

/// A node's own allocation counts (made while it was the current node).
pub(crate) fn own_alloc(a: &Acc) -> AllocStats {
    AllocStats {
        allocs: a.allocs,
        bytes: a.alloc_bytes,
        frees: a.frees,
        freed_bytes: a.freed_bytes,
    }
}

/// Each node's allocation total: its own counts plus its regular
/// children's totals (counts are made on the innermost node, so, unlike
/// time, a total is a sum, never a maximum). Overflow nodes' counts are in
/// their site's figures and the root's total only.
pub(crate) fn alloc_totals(tree: &Tree, children: &[Vec<u32>]) -> Vec<AllocStats> {
    let n = tree.nodes.len();
    let mut total = vec![AllocStats::default(); n];
    for i in (0..n).rev() {
        let mut t = own_alloc(&tree.nodes[i].acc);
        for &c in &children[i] {
            t.add(&total[c as usize]);
        }
        if i == 0 {
            // Overflow nodes are nobody's child, but their counts are in
            // the thread's: the root's total is every count of the tree.
            for (o, n) in total.iter().zip(&tree.nodes).skip(1) {
                if !n.is_regular() {
                    t.add(o);
                }
            }
        }
        total[i] = t;
    }
    total
}

/// Raw and compensated figures of one tree.
pub(crate) struct TreeFigures {
    pub nested: Vec<bool>,
    pub below: Vec<u64>,
    /// Counted nodes (see [`counted_nodes`]): their own figure is 0 in
    /// `ticks`, `raw` and `comp`; their estimate is in `est`.
    pub counted: Vec<bool>,
    /// Counted nodes' estimated totals (0 for the others).
    pub est: Vec<Trio>,
    /// Raw, in ticks.
    pub ticks: Figures,
    /// Raw, in nanoseconds.
    pub raw: Figures,
    /// Compensated (raw without calibration), in nanoseconds.
    pub comp: Figures,
    /// Allocation totals (own counts plus the children's totals).
    pub alloc: Vec<AllocStats>,
}

pub(crate) fn tree_figures(
    tree: &Tree,
    cal: Option<&Calibration>,
    ns_per_tick: f64,
) -> TreeFigures {
    let children = tree.children();
    let nested = tree.nested(&children);
    let below = calls_below(tree, &children);
    let counted = counted_nodes(tree, &children);
    // A counted node's calls' time is in its parent's measured time, and
    // stays in its self: the node's own figure is 0.
    let zero_counted = |own: Vec<f64>| -> Vec<f64> {
        own.into_iter()
            .zip(&counted)
            .map(|(o, &c)| if c { 0.0 } else { o })
            .collect()
    };
    let raw_own = zero_counted(tree.nodes.iter().map(|n| n.acc.ticks as f64).collect());
    let ticks = figures(tree, &children, &raw_own, 1.0);
    let raw = figures(tree, &children, &raw_own, ns_per_tick);
    let comp = match cal {
        Some(c) => {
            let untimed = untimed_below(tree, &children);
            figures(
                tree,
                &children,
                &zero_counted(compensated_own(tree, &below, &untimed, c)),
                ns_per_tick,
            )
        }
        None => raw.clone(),
    };
    let mut est: Vec<Trio> = tree
        .nodes
        .iter()
        .zip(&counted)
        .map(|(n, &c)| {
            if !c {
                return Trio::default();
            }
            let (r, k) = estimate(&n.acc, cal);
            let k = if cal.is_some() { k } else { r };
            Trio {
                ticks: r as u64,
                raw: (r * ns_per_tick) as u64,
                comp: (k * ns_per_tick) as u64,
            }
        })
        .collect();
    cap_estimates(tree, &counted, &mut est, [&ticks, &raw, &comp]);
    TreeFigures {
        nested,
        below,
        counted,
        est,
        ticks,
        raw,
        comp,
        alloc: alloc_totals(tree, &children),
    }
}

/// Caps counted nodes' estimates by their parent's self time (where their
/// calls' time is) or, under a counted parent, by the parent's capped
/// estimate (its calls hold theirs), shared in tree order among the
/// counted children of one parent: a counted site's total is then never
/// above its callers'. Under the thread's root (no marked caller) an
/// estimate is kept whole. A parent comes before its children in the
/// tree, so its own estimate is capped first.
fn cap_estimates(tree: &Tree, counted: &[bool], est: &mut [Trio], f: [&Figures; 3]) {
    let mut room: HashMap<usize, [u64; 3]> = HashMap::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        let p = n.parent as usize;
        if !counted[i] || p == 0 || p >= tree.nodes.len() {
            continue;
        }
        let parent_est = est[p];
        let r = room.entry(p).or_insert_with(|| {
            if counted[p] {
                [parent_est.ticks, parent_est.raw, parent_est.comp]
            } else {
                [f[0].self_[p], f[1].self_[p], f[2].self_[p]]
            }
        });
        let e = &mut est[i];
        for (x, left) in [&mut e.ticks, &mut e.raw, &mut e.comp]
            .into_iter()
            .zip(r.iter_mut())
        {
            *x = (*x).min(*left);
            *left -= *x;
        }
    }
}

/// A figure three ways: raw ticks, raw and compensated nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Trio {
    pub ticks: u64,
    pub raw: u64,
    pub comp: u64,
}

impl Trio {
    fn add(&mut self, f: &TreeFigures, i: usize, total: bool) {
        let pick = |x: &Figures| if total { x.total[i] } else { x.self_[i] };
        self.ticks += pick(&f.ticks);
        self.raw += pick(&f.raw);
        self.comp += pick(&f.comp);
    }

    fn add_trio(&mut self, o: Trio) {
        self.ticks += o.ticks;
        self.raw += o.raw;
        self.comp += o.comp;
    }

    /// Nanoseconds, compensated or raw.
    pub(crate) fn ns(self, compensated: bool) -> u64 {
        if compensated {
            self.comp
        } else {
            self.raw
        }
    }
}

/// One site's sums over a tree.
#[derive(Clone, Debug, Default)]
pub(crate) struct Flat {
    /// Counters over every node (ticks and wall over outermost ones only).
    pub acc: crate::counters::Acc,
    /// Over the outermost nodes.
    pub total: Trio,
    /// Over the regular nodes.
    pub self_: Trio,
    /// Every node's total (each activation's own duration), for the mean.
    pub every: Trio,
    /// Marked calls beneath the site's nodes.
    pub below: u64,
    /// Counted nodes' estimated totals (outermost nodes).
    pub est: Trio,
    /// Whether any of the site's nodes is counted.
    pub counted: bool,
    /// Allocations over the outermost nodes' totals.
    pub alloc: AllocStats,
    /// Allocations made on the site's own nodes.
    pub self_alloc: AllocStats,
    /// caller site key (0 = thread root) → (calls, time over outermost nodes)
    pub callers: HashMap<usize, (u64, Trio)>,
    /// callee site key → (calls, time)
    pub callees: HashMap<usize, (u64, Trio)>,
}

/// Sums a tree into per-site figures, internal sites left out.
pub(crate) fn flatten(tree: &Tree, f: &TreeFigures) -> HashMap<usize, (&'static CallSite, Flat)> {
    let mut out: HashMap<usize, (&'static CallSite, Flat)> = HashMap::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        let Some(site) = n.site.filter(|s| !s.is_internal()) else {
            continue;
        };
        let e = &mut out
            .entry(site_key(Some(site)))
            .or_insert_with(|| (site, Flat::default()))
            .1;
        let mut a = n.acc;
        let outer = !f.nested[i];
        e.self_alloc.add(&own_alloc(&n.acc));
        // An overflow node is inside no other node's allocation total (it
        // is nobody's child), so it counts in its site's, nested or not.
        if outer || !n.is_regular() {
            e.alloc.add(&f.alloc[i]);
        }
        if outer {
            e.total.add(f, i, true);
        } else {
            a.ticks = 0;
            a.wall = 0;
        }
        e.acc.add(&a);
        e.every.add(f, i, true);
        e.below += f.below[i];
        if f.counted[i] {
            e.counted = true;
            if outer {
                e.est.add_trio(f.est[i]);
            }
        }
        if n.is_regular() {
            e.self_.add(f, i, false);
            let caller = site_key(tree.nodes[n.parent as usize].site);
            let edge = e.callers.entry(caller).or_default();
            edge.0 += n.acc.calls;
            if outer {
                edge.1.add(f, i, true);
            }
        }
    }
    // Callees mirror callers.
    let edges: Vec<(usize, usize, u64, Trio)> = out
        .iter()
        .flat_map(|(&callee, (_, fl))| {
            fl.callers
                .iter()
                .map(move |(&caller, &(c, t))| (caller, callee, c, t))
        })
        .collect();
    for (caller, callee, c, t) in edges {
        if let Some((_, fl)) = out.get_mut(&caller) {
            let e = fl.callees.entry(callee).or_default();
            e.0 += c;
            e.1.add_trio(t);
        }
    }
    out
}
