//! The calling-context tree as report values ([`TreeNode`]s).

use super::{own_alloc, TreeFigures};
use crate::report::TreeNode;
use crate::site::CallSite;
use crate::tree::{site_key, Tree};
use std::collections::HashMap;

/// The tree's regular nodes as report values (overflow nodes and internal
/// sites, with their subtrees, left out).
pub(super) fn tree_nodes(
    t: &Tree,
    fig: &TreeFigures,
    names: &HashMap<usize, String>,
    comp: bool,
) -> Vec<TreeNode> {
    if t.nodes.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<TreeNode> = Vec::with_capacity(t.nodes.len());
    let mut new_index = vec![usize::MAX; t.nodes.len()];
    for (i, n) in t.nodes.iter().enumerate() {
        let parent = if i == 0 {
            None
        } else {
            match new_index.get(n.parent as usize).copied() {
                Some(p) if p != usize::MAX => Some(p),
                _ => continue,
            }
        };
        if !n.is_regular() || n.site.is_some_and(CallSite::is_internal) {
            continue;
        }
        let name = n.site.map_or_else(String::new, |s| {
            names
                .get(&site_key(Some(s)))
                .cloned()
                .unwrap_or_else(|| s.name())
        });
        new_index[i] = out.len();
        let (total, self_) = if comp {
            (&fig.comp.total, &fig.comp.self_)
        } else {
            (&fig.raw.total, &fig.raw.self_)
        };
        out.push(TreeNode {
            name,
            parent,
            depth: parent.map_or(0, |p: usize| out[p].depth + 1),
            calls: n.acc.calls,
            total_ns: total[i],
            self_ns: self_[i],
            raw_total_ns: fig.raw.total[i],
            raw_self_ns: fig.raw.self_[i],
            alloc: fig.alloc[i],
            self_alloc: own_alloc(&n.acc),
        });
    }
    out
}
