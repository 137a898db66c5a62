//! Plain-data calling-context trees: snapshots of arenas, merged across
//! threads and subtracted between snapshots, and the recursion rule.
//!
//! A tree is a list of nodes where `nodes[0]` is the root (no site) and
//! every parent comes before its children. A node is one call path
//! (root → … → site) and holds that path's counters. Overflow nodes (flag
//! set) collect calls made when a thread's tree was full: they hang off the
//! root but are nobody's child, and their time is inside their real
//! ancestor's.

use crate::counters::Acc;
use crate::hist::{Hist, SiteHists};
use crate::site::CallSite;
use std::collections::HashMap;

/// Node flag: an overflow node (tree full) whose activations have no
/// enclosing activation of the same site.
pub(crate) const OVERFLOW_OUTER: u32 = 1;
/// Node flag: an overflow node for activations nested in one of the same site.
pub(crate) const OVERFLOW_NESTED: u32 = 2;

/// One node: a call path ending at `site`.
#[derive(Clone, Debug)]
pub(crate) struct TNode {
    /// `None` for the root.
    pub site: Option<&'static CallSite>,
    /// Index of the parent (`u32::MAX` for the root; 0 for overflow nodes).
    pub parent: u32,
    /// 0, or one of the overflow flags.
    pub flags: u32,
    pub acc: Acc,
}

impl PartialEq for TNode {
    fn eq(&self, o: &TNode) -> bool {
        site_key(self.site) == site_key(o.site)
            && (self.parent, self.flags, self.acc) == (o.parent, o.flags, o.acc)
    }
}

impl TNode {
    /// The root node.
    pub const ROOT: TNode = TNode {
        site: None,
        parent: u32::MAX,
        flags: 0,
        acc: Acc::EMPTY,
    };

    /// Whether the node is a regular path node (not an overflow node).
    pub fn is_regular(&self) -> bool {
        self.flags == 0
    }
}

/// A calling-context tree; `nodes[0]` is the root and every parent comes
/// before its children.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tree {
    pub nodes: Vec<TNode>,
    /// Each site's latency histogram (all its paths together).
    pub hists: SiteHists,
    /// Program-counter samples (feature `inlined`): (node, program
    /// counter) → samples.
    pub pcs: std::collections::BTreeMap<(u32, u64), u64>,
    /// Program-counter samples that found a thread's table full.
    pub pcs_dropped: u64,
    /// (parent, site, flags) → node, built on first use by `merge`/`minus`.
    index: Option<HashMap<(u32, usize, u32), u32>>,
}

/// A site's identity: its address (0 for the root).
pub(crate) fn site_key(site: Option<&'static CallSite>) -> usize {
    site.map_or(0, |s| s as *const CallSite as usize)
}

impl Tree {
    /// An empty tree (no root yet).
    pub const fn new() -> Tree {
        Tree {
            nodes: Vec::new(),
            hists: SiteHists::new(),
            pcs: std::collections::BTreeMap::new(),
            pcs_dropped: 0,
            index: None,
        }
    }

    /// An empty tree with room for `n` nodes.
    pub fn with_capacity(n: usize) -> Tree {
        Tree {
            nodes: Vec::with_capacity(n),
            hists: SiteHists::new(),
            pcs: std::collections::BTreeMap::new(),
            pcs_dropped: 0,
            index: None,
        }
    }

    /// A tree of plain nodes (tests and hand-built trees).
    #[cfg(test)]
    pub fn from_nodes(nodes: Vec<TNode>) -> Tree {
        Tree {
            nodes,
            hists: SiteHists::new(),
            pcs: std::collections::BTreeMap::new(),
            pcs_dropped: 0,
            index: None,
        }
    }

    /// A tree with one root-level call of `site` with counters `acc`
    /// (one call: its time, if accepted, goes in the site's histogram).
    pub fn single(site: &'static CallSite, acc: Acc) -> Tree {
        let mut hists = SiteHists::new();
        if acc.calls == 1 && acc.accepted() == 1 {
            hists.insert(site, Hist::one(acc.ticks));
        }
        let node = TNode {
            site: Some(site),
            parent: 0,
            flags: 0,
            acc,
        };
        Tree {
            nodes: vec![TNode::ROOT, node],
            hists,
            pcs: std::collections::BTreeMap::new(),
            pcs_dropped: 0,
            index: None,
        }
    }

    fn ensure_index(&mut self) -> &mut HashMap<(u32, usize, u32), u32> {
        let nodes = &self.nodes;
        self.index.get_or_insert_with(|| {
            let mut m = HashMap::with_capacity(nodes.len());
            for (i, n) in nodes.iter().enumerate().skip(1) {
                m.insert((n.parent, site_key(n.site), n.flags), i as u32);
            }
            m
        })
    }

    /// Adds `other` into `self`, matching nodes by path.
    pub fn merge(&mut self, other: &Tree) {
        if other.nodes.is_empty() {
            return;
        }
        if self.nodes.is_empty() {
            self.nodes.push(TNode::ROOT);
        }
        self.hists.merge(&other.hists);
        // The root holds the counts made outside marked calls (allocations).
        self.nodes[0].acc.add(&other.nodes[0].acc);
        let mut map: Vec<u32> = Vec::with_capacity(other.nodes.len());
        map.push(0);
        for n in other.nodes.iter().skip(1) {
            let parent = map.get(n.parent as usize).copied().unwrap_or(0);
            let key = (parent, site_key(n.site), n.flags);
            let len = self.nodes.len() as u32;
            let idx = *self.ensure_index().entry(key).or_insert(len);
            if idx == len {
                self.nodes.push(TNode {
                    acc: Acc::EMPTY,
                    parent,
                    ..n.clone()
                });
            }
            self.nodes[idx as usize].acc.add(&n.acc);
            map.push(idx);
        }
        for (&(node, pc), &count) in &other.pcs {
            if let Some(&to) = map.get(node as usize) {
                *self.pcs.entry((to, pc)).or_insert(0) += count;
            }
        }
        self.pcs_dropped += other.pcs_dropped;
    }

    /// What happened between `before` and `self`, node by node (matched by
    /// path): counts and times are differences; min and max stay those of
    /// `self`. Nodes of `self` that `before` lacks are kept whole.
    pub fn minus(&self, before: &Tree) -> Tree {
        let mut out = self.clone();
        out.hists = self.hists.minus(&before.hists);
        if before.nodes.is_empty() || out.nodes.is_empty() {
            return out;
        }
        out.nodes[0].acc = out.nodes[0].acc.minus(&before.nodes[0].acc);
        let mut map: Vec<u32> = vec![0; before.nodes.len()];
        for (i, n) in before.nodes.iter().enumerate().skip(1) {
            let parent = map.get(n.parent as usize).copied().unwrap_or(u32::MAX);
            let key = (parent, site_key(n.site), n.flags);
            let idx = out.ensure_index().get(&key).copied().unwrap_or(u32::MAX);
            map[i] = idx;
            if let Some(o) = out.nodes.get_mut(idx as usize) {
                o.acc = o.acc.minus(&n.acc);
            }
        }
        for (&(node, pc), &count) in &before.pcs {
            let to = map.get(node as usize).copied().unwrap_or(u32::MAX);
            if let Some(c) = out.pcs.get_mut(&(to, pc)) {
                *c = c.saturating_sub(count);
            }
        }
        out.pcs.retain(|_, c| *c > 0);
        out.pcs_dropped = self.pcs_dropped.saturating_sub(before.pcs_dropped);
        out
    }

    /// Regular children of every node (overflow nodes are nobody's child).
    pub fn children(&self) -> Vec<Vec<u32>> {
        let mut ch = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            if n.is_regular() {
                if let Some(c) = ch.get_mut(n.parent as usize) {
                    c.push(i as u32);
                }
            }
        }
        ch
    }

    /// Whether each node has an ancestor with the same site: its time is
    /// then already inside that ancestor's, and is not added to the site's
    /// total (recursion is counted once). Iterative: trees from deep
    /// recursion are deep.
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
                if let Some(c) = active.get_mut(&key) {
                    *c -= 1;
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
            match n.flags {
                OVERFLOW_NESTED => nested[i] = true,
                OVERFLOW_OUTER => nested[i] = false,
                _ => {}
            }
        }
        nested
    }

    /// Calls that landed on overflow nodes because the tree was full
    /// (tickprof's own internal sites left out).
    pub fn folded_calls(&self) -> u64 {
        self.nodes
            .iter()
            .filter(|n| !n.is_regular() && !n.site.is_some_and(CallSite::is_internal))
            .map(|n| n.acc.calls)
            .sum()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::site::path_of;

    fn m() {}
    /// Sites for hand-built trees.
    pub(crate) static SITES: [CallSite; 4] = [
        CallSite::function(path_of(m), Some("a"), "t.rs", 1),
        CallSite::function(path_of(m), Some("b"), "t.rs", 2),
        CallSite::function(path_of(m), Some("c"), "t.rs", 3),
        CallSite::function(path_of(m), Some("d"), "t.rs", 4),
    ];

    /// A node of site `s` (index into `SITES`) under `parent` with `calls`
    /// calls of `ticks` ticks in all.
    pub(crate) fn node(s: usize, parent: u32, calls: u64, ticks: u64) -> TNode {
        TNode {
            site: Some(&SITES[s]),
            parent,
            flags: 0,
            acc: Acc {
                calls,
                ticks,
                min: ticks.checked_div(calls).unwrap_or(u64::MAX),
                max: if calls == 0 { 0 } else { ticks.div_ceil(calls) },
                ..Acc::EMPTY
            },
        }
    }

    /// An overflow node (`flags`) of site `s` hanging off the root.
    pub(crate) fn overflow(flags: u32, s: usize, calls: u64, ticks: u64) -> TNode {
        TNode {
            flags,
            ..node(s, 0, calls, ticks)
        }
    }

    /// root → a(100) → { b(30), c(20) → b(5) }
    pub(crate) fn sample() -> Tree {
        Tree::from_nodes(vec![
            TNode::ROOT,
            node(0, 0, 1, 100),
            node(1, 1, 2, 30),
            node(2, 1, 1, 20),
            node(1, 3, 1, 5),
        ])
    }

    #[test]
    fn merge_matches_nodes_by_path() {
        let mut t = sample();
        t.merge(&sample());
        assert_eq!(t.nodes.len(), 5);
        assert_eq!(t.nodes[1].acc.ticks, 200);
        assert_eq!(t.nodes[4].acc.calls, 2);
        // A new path is appended under the right parent.
        let other = Tree::from_nodes(vec![TNode::ROOT, node(0, 0, 1, 10), node(3, 1, 1, 4)]);
        t.merge(&other);
        assert_eq!(t.nodes.len(), 6);
        assert_eq!(t.nodes[5].parent, 1);
        assert_eq!(t.nodes[5].site.map(CallSite::name).as_deref(), Some("d"));
        assert_eq!(t.nodes[1].acc.ticks, 210);
        // Merging into an empty tree copies.
        let mut e = Tree::new();
        e.merge(&sample());
        assert_eq!(e.nodes, sample().nodes);
    }

    #[test]
    fn the_roots_counts_merge_and_subtract() {
        let mut a = sample();
        a.nodes[0].acc.allocs = 3;
        let mut t = a.clone();
        t.merge(&a);
        assert_eq!(t.nodes[0].acc.allocs, 6);
        assert_eq!(t.minus(&a).nodes[0].acc.allocs, 3);
    }

    #[test]
    fn minus_subtracts_by_path_and_keeps_new_nodes() {
        let mut later = sample();
        later.merge(&sample());
        later.merge(&Tree::from_nodes(vec![TNode::ROOT, node(3, 0, 1, 7)]));
        let d = later.minus(&sample());
        assert_eq!(d.nodes.len(), 6);
        assert_eq!(d.nodes[1].acc.ticks, 100);
        assert_eq!(d.nodes[1].acc.calls, 1);
        assert_eq!(d.nodes[5].acc.ticks, 7);
        // min and max stay the later ones.
        assert_eq!(d.nodes[2].acc.min, later.nodes[2].acc.min);
    }

    #[test]
    fn recursion_is_nested_below_the_outermost_activation() {
        // root → a → b → a → a, and root → b
        let t = Tree::from_nodes(vec![
            TNode::ROOT,
            node(0, 0, 1, 50),
            node(1, 1, 1, 40),
            node(0, 2, 1, 30),
            node(0, 3, 1, 10),
            node(1, 0, 1, 5),
        ]);
        let nested = t.nested(&t.children());
        assert_eq!(nested, vec![false, false, false, true, true, false]);
    }

    #[test]
    fn overflow_nodes_are_nobodys_children() {
        let mut t = sample();
        t.nodes.push(overflow(OVERFLOW_NESTED, 1, 3, 9));
        t.nodes.push(overflow(OVERFLOW_OUTER, 2, 4, 9));
        let ch = t.children();
        assert_eq!(ch[0], vec![1]);
        assert_eq!(t.folded_calls(), 7);
        let nested = t.nested(&ch);
        assert!(nested[5] && !nested[6]);
    }
}
