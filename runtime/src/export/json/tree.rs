//! The calling-context tree of a report read back, checked: what the
//! writer guarantees, a reader may rely on. `tree[0]` is the root (no
//! parent, depth 0); every other node has a parent that comes before it
//! (so parents are in range, no node is its own parent and there is no
//! cycle), and its depth is its parent's plus one.

use super::ParseError;
use crate::report::TreeNode;

/// The first node of `tree` that breaks the rules above, as an error
/// naming it (`tree[17].parent: 17 is the node itself`).
pub(super) fn check(tree: &[TreeNode]) -> Result<(), ParseError> {
    let bad = |i: usize, field: &str, what: String| ParseError::Schema {
        at: format!("tree[{i}].{field}"),
        what,
    };
    for (i, node) in tree.iter().enumerate() {
        let want_depth = match (i, node.parent) {
            (0, None) => 0,
            (0, Some(p)) => {
                return Err(bad(
                    0,
                    "parent",
                    format!("{p}, but the root (tree[0]) has no parent"),
                ))
            }
            (_, None) => {
                return Err(bad(
                    i,
                    "parent",
                    "null, but only the root (tree[0]) has no parent".to_owned(),
                ))
            }
            (_, Some(p)) if p == i => {
                return Err(bad(i, "parent", format!("{p} is the node itself")))
            }
            (_, Some(p)) if p >= tree.len() => {
                return Err(bad(
                    i,
                    "parent",
                    format!("{p} is out of range (the tree has {} nodes)", tree.len()),
                ))
            }
            (_, Some(p)) if p > i => {
                return Err(bad(
                    i,
                    "parent",
                    format!("{p} comes after the node (a parent precedes its children, so there is no cycle)"),
                ))
            }
            (_, Some(p)) => tree[p].depth.saturating_add(1),
        };
        if node.depth != want_depth {
            let why = match node.parent {
                None => "the root's depth is 0".to_owned(),
                Some(p) => format!("its parent tree[{p}] has depth {}", tree[p].depth),
            };
            return Err(bad(
                i,
                "depth",
                format!("{}, but {why} (want {want_depth})", node.depth),
            ));
        }
    }
    Ok(())
}
