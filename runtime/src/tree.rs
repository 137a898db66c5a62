//! Plain-data calling-context trees: snapshots of arenas, merged across
//! threads, and the flat per-site table derived from them.

use crate::site::CallSite;
#[cfg(feature = "enabled")]
use crate::thread::{Node, OVERFLOW_NESTED, OVERFLOW_OUTER};
#[cfg(feature = "enabled")]
use core::sync::atomic::Ordering;
use std::collections::HashMap;

/// Accumulators of one node (or one site, once summed).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acc {
    pub calls: u64,
    pub ticks: u64,
    pub min: u64,
    pub max: u64,
    pub reversed: u64,
    pub oversized: u64,
    pub unwound: u64,
    pub wall: u64,
    pub cancelled: u64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            calls: 0,
            ticks: 0,
            min: u64::MAX,
            max: 0,
            reversed: 0,
            oversized: 0,
            unwound: 0,
            wall: 0,
            cancelled: 0,
        }
    }
}

impl Acc {
    /// Adds `o` into `self`, the ticks included.
    pub fn add(&mut self, o: &Acc) {
        self.calls += o.calls;
        self.ticks += o.ticks;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.reversed += o.reversed;
        self.oversized += o.oversized;
        self.unwound += o.unwound;
        self.wall += o.wall;
        self.cancelled += o.cancelled;
    }
}

/// One node: a call path ending at `site`.
#[derive(Clone, Debug)]
pub(crate) struct TNode {
    pub site: Option<&'static CallSite>,
    pub parent: u32,
    pub flags: u32,
    pub acc: Acc,
}

/// A calling-context tree; `nodes[0]` is the root and every parent comes
/// before its children.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tree {
    pub nodes: Vec<TNode>,
    index: Option<HashMap<(u32, usize, u32), u32>>,
}

fn site_key(site: Option<&'static CallSite>) -> usize {
    site.map_or(0, |s| s as *const CallSite as usize)
}

impl Tree {
    pub const fn new() -> Tree {
        Tree {
            nodes: Vec::new(),
            index: None,
        }
    }

    pub fn with_capacity(n: usize) -> Tree {
        Tree {
            nodes: Vec::with_capacity(n),
            index: None,
        }
    }

    #[cfg(feature = "enabled")]
    pub fn push_raw(&mut self, n: &Node) {
        let r = Ordering::Relaxed;
        self.nodes.push(TNode {
            site: n.site(),
            parent: n.parent.load(r),
            flags: n.flags.load(r),
            acc: Acc {
                calls: n.calls.load(r),
                ticks: n.ticks.load(r),
                min: n.min.load(r),
                max: n.max.load(r),
                reversed: n.reversed.load(r),
                oversized: n.oversized.load(r),
                unwound: n.unwound.load(r),
                wall: n.wall.load(r),
                cancelled: n.cancelled.load(r),
            },
        });
    }

    fn ensure_index(&mut self) -> &mut HashMap<(u32, usize, u32), u32> {
        if self.index.is_none() {
            let mut m = HashMap::with_capacity(self.nodes.len());
            for (i, n) in self.nodes.iter().enumerate().skip(1) {
                m.insert((n.parent, site_key(n.site), n.flags), i as u32);
            }
            self.index = Some(m);
        }
        self.index.get_or_insert_with(HashMap::new)
    }

    /// A tree with one root-level call of `site` taking `delta` ticks,
    /// rejected as a guard's record would be with `max_ticks`.
    pub fn single(site: &'static CallSite, delta: u64, max_ticks: u64) -> Tree {
        let mut acc = Acc {
            calls: 1,
            ..Acc::default()
        };
        if delta <= max_ticks {
            acc.ticks = delta;
            acc.min = delta;
            acc.max = delta;
        } else if (delta as i64) < 0 {
            acc.reversed = 1;
        } else {
            acc.oversized = 1;
        }
        if std::thread::panicking() {
            acc.unwound = 1;
        }
        let root = TNode {
            site: None,
            parent: u32::MAX,
            flags: 0,
            acc: Acc::default(),
        };
        let node = TNode {
            site: Some(site),
            parent: 0,
            flags: 0,
            acc,
        };
        Tree {
            nodes: vec![root, node],
            index: None,
        }
    }

    /// Adds `other` into `self`, matching nodes by path.
    pub fn merge(&mut self, other: &Tree) {
        if other.nodes.is_empty() {
            return;
        }
        if self.nodes.is_empty() {
            self.nodes.push(TNode {
                site: None,
                parent: u32::MAX,
                flags: 0,
                acc: Acc::default(),
            });
        }
        let mut map: Vec<u32> = Vec::with_capacity(other.nodes.len());
        map.push(0);
        for n in other.nodes.iter().skip(1) {
            let parent = map.get(n.parent as usize).copied().unwrap_or(0);
            let key = (parent, site_key(n.site), n.flags);
            let len = self.nodes.len() as u32;
            let idx = *self.ensure_index().entry(key).or_insert(len);
            if idx == len {
                self.nodes.push(TNode {
                    site: n.site,
                    parent,
                    flags: n.flags,
                    acc: Acc::default(),
                });
            }
            self.nodes[idx as usize].acc.add(&n.acc);
            map.push(idx);
        }
    }

    /// Regular children of every node (overflow nodes excluded).
    pub fn children(&self) -> Vec<Vec<u32>> {
        let mut ch = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            if n.flags == 0 {
                if let Some(c) = ch.get_mut(n.parent as usize) {
                    c.push(i as u32);
                }
            }
        }
        ch
    }

    /// Self ticks of every regular node: its ticks minus its regular
    /// children's, clamped at zero.
    pub fn self_ticks(&self, children: &[Vec<u32>]) -> Vec<u64> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let kids: u64 = children[i]
                    .iter()
                    .map(|&c| self.nodes[c as usize].acc.ticks)
                    .sum();
                n.acc.ticks.saturating_sub(kids)
            })
            .collect()
    }

    /// Whether each node has an ancestor with the same site (its time is
    /// then already inside that ancestor's, and is not added to the site's
    /// total). Iterative: trees from deep recursion are deep.
    pub fn nested(&self, children: &[Vec<u32>]) -> Vec<bool> {
        let mut nested = vec![false; self.nodes.len()];
        if self.nodes.is_empty() {
            return nested;
        }
        let mut active: HashMap<usize, u32> = HashMap::new();
        // (node, entered?)
        let mut work: Vec<(u32, bool)> = vec![(0, false)];
        while let Some((i, entered)) = work.pop() {
            let key = site_key(self.nodes[i as usize].site);
            if entered {
                if key != 0 {
                    if let Some(c) = active.get_mut(&key) {
                        *c -= 1;
                    }
                }
                continue;
            }
            if key != 0 {
                let c = active.entry(key).or_insert(0);
                nested[i as usize] = *c > 0;
                *c += 1;
            }
            work.push((i, true));
            for &c in children[i as usize].iter().rev() {
                work.push((c, false));
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            #[cfg(feature = "enabled")]
            if n.flags == OVERFLOW_NESTED {
                nested[i] = true;
            } else if n.flags == OVERFLOW_OUTER {
                nested[i] = false;
            }
            #[cfg(not(feature = "enabled"))]
            let _ = (i, n);
        }
        nested
    }

    /// Calls that landed on overflow nodes because the tree was full.
    pub fn folded_calls(&self) -> u64 {
        self.nodes
            .iter()
            .filter(|n| n.flags != 0)
            .map(|n| n.acc.calls)
            .sum()
    }
}

/// Overhead compensation of every node, from the calibrated costs.
///
/// A node's reported ticks hold its own inner cost once per accepted call
/// (at most the node's shortest call), and the whole per-call cost of every
/// marked call made anywhere beneath it.
/// Compensated ticks subtract both; compensated self is compensated ticks
/// minus the children's compensated ticks. Clamped at zero, and counted.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compensation {
    /// Marked calls made beneath each node.
    pub below: Vec<u64>,
    pub ticks: Vec<u64>,
    pub self_ticks: Vec<u64>,
    pub clamped: u64,
}

pub(crate) fn compensate(
    tree: &Tree,
    children: &[Vec<u32>],
    inner: f64,
    call: f64,
) -> Compensation {
    let n = tree.nodes.len();
    // Calls beneath each node, bottom-up: parents come before children.
    let mut below = vec![0u64; n];
    for i in (1..n).rev() {
        let node = &tree.nodes[i];
        if node.flags != 0 {
            continue;
        }
        let p = node.parent as usize;
        if p < n {
            below[p] += below[i] + node.acc.calls;
        }
    }
    let mut clamped = 0;
    let ticks: Vec<u64> = tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let a = &node.acc;
            let accepted = a.calls - a.reversed - a.oversized;
            // The inner cost is inside every measured call, so it cannot
            // exceed the shortest one: for short bodies the end stamp may be
            // taken before the body's last instructions retire.
            let inner = if a.min == u64::MAX {
                inner
            } else {
                inner.min(a.min as f64)
            };
            let cost = accepted as f64 * inner + below[i] as f64 * call;
            let v = a.ticks as f64 - cost;
            if v < 0.0 && a.ticks > 0 {
                clamped += 1;
            }
            v.max(0.0).round() as u64
        })
        .collect();
    let self_ticks = (0..n)
        .map(|i| {
            let kids: u64 = children[i].iter().map(|&c| ticks[c as usize]).sum();
            ticks[i].saturating_sub(kids)
        })
        .collect();
    Compensation {
        below,
        ticks,
        self_ticks,
        clamped,
    }
}

/// Per-site sums derived from a tree.
#[derive(Clone, Debug, Default)]
pub(crate) struct Flat {
    pub acc: Acc,
    pub self_ticks: u64,
    /// Compensated total and self (equal to the raw ones without calibration).
    pub comp_ticks: u64,
    pub comp_self_ticks: u64,
    /// Marked calls made beneath the site's nodes (for per-call corrections).
    pub below: u64,
    /// caller site (0 = thread root) → (calls, ticks)
    pub callers: HashMap<usize, (u64, u64)>,
    /// callee site → (calls, ticks)
    pub callees: HashMap<usize, (u64, u64)>,
}

/// Sums a tree into per-site figures: calls, min/max and rejections over
/// every node; total over the nodes with no same-site ancestor; self over
/// regular nodes. `skip` names a site left out (calibration).
pub(crate) fn flatten(
    tree: &Tree,
    comp: Option<&Compensation>,
    skip: usize,
) -> HashMap<usize, (&'static CallSite, Flat)> {
    let children = tree.children();
    let selfs = tree.self_ticks(&children);
    let nested = tree.nested(&children);
    let mut out: HashMap<usize, (&'static CallSite, Flat)> = HashMap::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        let Some(site) = n.site else { continue };
        let key = site_key(Some(site));
        if key == skip {
            continue;
        }
        let f = &mut out.entry(key).or_insert_with(|| (site, Flat::default())).1;
        let mut a = n.acc;
        if nested[i] {
            a.ticks = 0;
            a.wall = 0;
        } else {
            f.comp_ticks += comp.map_or(n.acc.ticks, |c| c.ticks[i]);
        }
        f.acc.add(&a);
        f.below += comp.map_or(0, |c| c.below[i]);
        if n.flags == 0 {
            f.self_ticks += selfs[i];
            f.comp_self_ticks += comp.map_or(selfs[i], |c| c.self_ticks[i]);
            let parent = &tree.nodes[n.parent as usize];
            let pkey = site_key(parent.site);
            let e = f.callers.entry(pkey).or_insert((0, 0));
            e.0 += n.acc.calls;
            e.1 += comp.map_or(n.acc.ticks, |c| c.ticks[i]);
        }
    }
    // Callees mirror callers.
    let edges: Vec<(usize, usize, u64, u64)> = out
        .iter()
        .flat_map(|(&callee, (_, f))| {
            f.callers
                .iter()
                .map(move |(&caller, &(c, t))| (caller, callee, c, t))
        })
        .collect();
    for (caller, callee, c, t) in edges {
        if let Some((_, f)) = out.get_mut(&caller) {
            let e = f.callees.entry(callee).or_insert((0, 0));
            e.0 += c;
            e.1 += t;
        }
    }
    out
}

/// Subtracts `before` from `self` node by node (matched by path). Counts
/// and times are differences; min and max stay those of `self`.
impl Tree {
    pub fn minus(&self, before: &Tree) -> Tree {
        let mut out = self.clone();
        if before.nodes.is_empty() || out.nodes.is_empty() {
            return out;
        }
        let mut map: Vec<u32> = vec![0; before.nodes.len()];
        for (i, n) in before.nodes.iter().enumerate().skip(1) {
            let parent = map.get(n.parent as usize).copied().unwrap_or(u32::MAX);
            let key = (parent, site_key(n.site), n.flags);
            let idx = out.ensure_index().get(&key).copied().unwrap_or(u32::MAX);
            map[i] = idx;
            if let Some(o) = out.nodes.get_mut(idx as usize) {
                let (a, b) = (&mut o.acc, &n.acc);
                a.calls = a.calls.saturating_sub(b.calls);
                a.ticks = a.ticks.saturating_sub(b.ticks);
                a.reversed = a.reversed.saturating_sub(b.reversed);
                a.oversized = a.oversized.saturating_sub(b.oversized);
                a.unwound = a.unwound.saturating_sub(b.unwound);
                a.wall = a.wall.saturating_sub(b.wall);
                a.cancelled = a.cancelled.saturating_sub(b.cancelled);
            }
        }
        out
    }
}
