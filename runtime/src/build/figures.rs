//! Per-node figures (raw ticks, raw and compensated nanoseconds) and the
//! per-site sums derived from them. See the parent module for the
//! invariants these functions guarantee.

use crate::counters::Acc;
use crate::report::AllocStats;
use crate::site::CallSite;
use crate::tree::{site_key, Tree};
use sampled::{own_figures, sampled, Sampled};
pub(crate) use sampled::{Estimate, Rates};
use std::collections::HashMap;

/// Per-node figures of one tree, in ticks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Figures {
    pub total: Vec<u64>,
    pub self_: Vec<u64>,
    /// Nodes whose own figure was below zero and set to 0, or
    /// (compensated) a timed node's below what its calls measurably took,
    /// and held at it (`sampled::Own::held`).
    pub clamped: u64,
    /// Nodes with completed calls raised to the sum of their children's
    /// totals.
    pub carried: u64,
}

/// Totals and selves from each node's own figure (`own[i]` ticks, may be
/// negative) times `scale` (1 for ticks, ns per tick for nanoseconds),
/// rounded down once; see the module docs.
///
/// Bottom-up, a node's total is the larger of its own figure and its
/// children's totals. Where a timed node's children total more than its
/// measured time only because of its *sampled* children (`sampled[c]`: a
/// counted node's figure, good to a sampling period or so), those are
/// scaled down to fit — with their whole subtrees, top-down — rather than
/// the exact measurement raised: a sample credited across the edge of a
/// call must not make the call look longer than it was. The node's own
/// time, as the sampler found it (`found[i]`, 0 where it looked too
/// little), is fitted with them, in proportion: an estimate of its own
/// beside theirs, not what is left of its measured time once they are
/// taken out (which read 0 for pulldown-cmark's `parse_block`, 23 ms found
/// on top of it). They are scaled down by what the sampler's count can be
/// off (two standard deviations: `period` is its period in ticks, infinite
/// where the figures are not the sampler's) at most: beyond, what it found
/// stands and the node is raised (carried), as where its timed children
/// alone exceed it. A clock read does not wait for the loads before it:
/// a memory-bound callee's cache misses land after its exit's read, in its
/// caller's measured time, where the sampler finds them in the callee
/// (indexmap's `Core::get_index_of`, counted: 548 ms found in it, 141 ms
/// left of it once fitted into its timed caller's 147 ms, the rest read as
/// `IndexMap::get`'s self, where the sampler found 6 ms).
pub(crate) fn figures(
    tree: &Tree,
    children: &[Vec<u32>],
    own: &[f64],
    found: &[f64],
    sampled: &[bool],
    period: f64,
    scale: f64,
) -> Figures {
    let n = tree.nodes.len();
    let mut f = Figures {
        total: vec![0; n],
        self_: vec![0; n],
        ..Figures::default()
    };
    // Unscaled subtree totals, and each node's factor against its parent.
    let mut tot = vec![0.0f64; n];
    let mut factor = vec![1.0f64; n];
    // Parents come before their children: walk backwards.
    for i in (0..n).rev() {
        let mut mine = own[i];
        if mine < 0.0 {
            if tree.nodes[i].acc.ticks > 0 {
                f.clamped += 1;
            }
            mine = 0.0;
        }
        let (mut fixed, mut loose) = (0.0, 0.0);
        for &c in &children[i] {
            let c = c as usize;
            if sampled[c] {
                loose += tot[c];
            } else {
                fixed += tot[c];
            }
        }
        let open = tree.nodes[i].acc.calls == 0;
        // The node's own time keeps its share of what is left (the rest,
        // after its children, in `self_` below).
        let mut own_found = 0.0;
        if !sampled[i]
            && i > 0
            && !open
            && fixed + loose + found[i] > mine
            && fixed <= mine
            && loose > 0.0
        {
            let all = loose + found[i];
            let within_error = (all - 2.0 * (all * period).sqrt()).max(0.0);
            let k = (mine - fixed).max(within_error) / all;
            for &c in &children[i] {
                if sampled[c as usize] {
                    factor[c as usize] = k;
                }
            }
            loose *= k;
            own_found = found[i] * k;
        }
        let kids = fixed + loose;
        // A node with no completed call is a frame still open (a call in
        // progress, or a guard never dropped): carrying its children's
        // time up is not a correction of a measurement.
        let held = kids + own_found;
        if held > mine * (1.0 + 1e-9) && i > 0 && !open {
            f.carried += 1;
        }
        tot[i] = mine.max(held);
    }
    // Top-down: each node's factor is its own times its parent's.
    for i in 1..n {
        let p = tree.nodes[i].parent as usize;
        if p < i && tree.nodes[i].is_regular() {
            factor[i] *= factor[p];
        }
    }
    for i in 0..n {
        f.total[i] = (tot[i] * factor[i] * scale).floor() as u64;
    }
    for i in (0..n).rev() {
        let kids: u64 = children[i].iter().map(|&c| f.total[c as usize]).sum();
        // Rounding down each child's scaled total keeps their sum within
        // the parent's.
        f.total[i] = f.total[i].max(kids);
        f.self_[i] = f.total[i] - kids;
    }
    f
}

/// Marked calls made beneath each node (its regular descendants' calls).
pub(crate) fn calls_below(tree: &Tree, children: &[Vec<u32>]) -> Vec<u64> {
    below_of(tree, children, |a| a.calls)
}

/// `count` of each node's regular descendants, summed (their calls, or
/// their timed calls).
pub(crate) fn below_of(
    tree: &Tree,
    children: &[Vec<u32>],
    count: impl Fn(&Acc) -> u64,
) -> Vec<u64> {
    let n = tree.nodes.len();
    let mut below = vec![0u64; n];
    for i in (0..n).rev() {
        below[i] = children[i]
            .iter()
            .map(|&c| below[c as usize] + count(&tree.nodes[c as usize].acc))
            .sum();
    }
    below
}

/// Whether a node is counted: some of its calls were counted (not
/// timed). Its figures come from the sampler: its timed calls (learning,
/// and the sample) are not all of its calls.
pub(crate) fn is_counted(a: &Acc) -> bool {
    a.untimed > 0
}

/// [`is_counted`] of every node; a row of an inlined function (feature
/// `inlined`) too: its figures are the sampler's, fitted in its holder's
/// time as a counted child's are.
pub(crate) fn counted_nodes(tree: &Tree) -> Vec<bool> {
    tree.nodes
        .iter()
        .map(|n| {
            is_counted(&n.acc)
                || n.site
                    .is_some_and(|s| s.kind() == crate::site::SiteKind::Inlined)
        })
        .collect()
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

/// Raw and measured figures of one tree.
pub(crate) struct TreeFigures {
    pub nested: Vec<bool>,
    pub below: Vec<u64>,
    /// Counted nodes (see [`counted_nodes`]): their figures come from the
    /// sampler.
    pub counted: Vec<bool>,
    /// What the sampler found in each subtree.
    pub sampled: Sampled,
    /// The instrumentation inside each node's calls, in ticks, as taken
    /// out of them (see `sampled::own_figures`: at least a timed node's
    /// [`floor::floors`]; waits left out).
    pub inside: Vec<f64>,
    /// Raw, in ticks.
    pub ticks: Figures,
    /// Raw, in nanoseconds.
    pub raw: Figures,
    /// With the measured instrumentation taken out, in nanoseconds.
    pub comp: Figures,
    /// Allocation totals (own counts plus the children's totals).
    pub alloc: Vec<AllocStats>,
}

pub(crate) fn tree_figures(tree: &Tree, ns_per_tick: f64, est: Estimate) -> TreeFigures {
    let children = tree.children();
    let nested = tree.nested(&children);
    let below = calls_below(tree, &children);
    let counted = counted_nodes(tree);
    let mut sampled = sampled(tree, &children);
    if est.too_little_found {
        // Timed nodes keep only their floor (see `Estimate`); counted
        // nodes' raw figures keep what was found in them.
        for (inside, counted) in sampled.inside.iter_mut().zip(&counted) {
            if !counted {
                *inside = 0;
            }
        }
    }
    let floor = floor::floors(tree, &children, est.cal);
    // Counted calls beneath each node (the rest read the clock).
    let counted_below = below_of(tree, &children, |a| a.untimed);
    let own = own_figures(
        tree,
        &counted,
        &below,
        &counted_below,
        &sampled,
        &floor,
        est,
    );
    // Counted nodes' figures are estimates (the sampler's, or their timed
    // sample's): beneath a timed node they fit in its measured time.
    let loose = &counted;
    let period = if est.sampled {
        est.period
    } else {
        f64::INFINITY
    };
    let fit = |own: &[f64], found: &[f64], scale: f64| {
        figures(tree, &children, own, found, loose, period, scale)
    };
    let ticks = fit(&own.raw, &own.found_raw, 1.0);
    let raw = fit(&own.raw, &own.found_raw, ns_per_tick);
    let mut comp = fit(&own.measured, &own.found, ns_per_tick);
    comp.clamped += own.held;
    TreeFigures {
        nested,
        below,
        counted,
        sampled,
        inside: own.inside,
        ticks,
        raw,
        comp,
        alloc: alloc_totals(tree, &children),
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
    /// The instrumentation inside the site's nodes' calls, in ticks
    /// (every node: as `every`): what the sampler found, at least a timed
    /// node's floor.
    pub inside: u64,
    /// The program's time the sampler found with the site's nodes on top
    /// of the stack, in ticks (its self time's sample).
    pub sampled_self: u64,
    /// The program's time the sampler found in the site's outermost
    /// nodes' subtrees, in ticks (its total's sample).
    pub sampled_total: u64,
    /// The calls `every` covers: a timed node's accepted calls, a counted
    /// node's every call (its figure is the sampler's, of all of them).
    pub every_calls: u64,
    /// The raw ticks of every accepted timed call, nested ones included:
    /// the sum of what the site's histogram holds.
    pub hist_ticks: u64,
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
        // What the instrumentation inside the node's calls was taken as
        // (the calls' own figures use it too).
        e.inside += f.inside[i] as u64;
        e.hist_ticks += n.acc.ticks;
        e.every_calls += if f.counted[i] {
            n.acc.calls
        } else {
            n.acc.accepted()
        };
        e.sampled_self += n.acc.sampled;
        if outer {
            e.sampled_total += f.sampled.program[i];
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

pub(crate) mod floor;
mod sampled;
