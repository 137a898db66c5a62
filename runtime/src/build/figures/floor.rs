//! The least instrumentation inside each node's calls: the calibrated
//! cost of every timed call made beneath them (`record::calibrate`), a
//! floor under what the sampler finds there.
//!
//! Timed calls only: two clock reads serialise a timed call, so its cost
//! to its caller is much the same in any code, and a tight loop's is the
//! least of it. A counted call's cost depends on how much of it its
//! caller's work hides (from all of it to none): no constant is a floor
//! under it, and its instrumentation is the sampler's figure alone (a
//! counted floor at the calibrated cost, less a linear allowance for the
//! work that hides it, took accuracy case A from -1.2% to -11 to -19% and
//! case B from +237% to -100%).

use crate::record::calibrate::Calibration;
use crate::tree::Tree;

/// Timed calls beneath each node (tickprof's own sites' left out).
fn timed_below(tree: &Tree, children: &[Vec<u32>]) -> Vec<u64> {
    let n = tree.nodes.len();
    let mut timed = vec![0u64; n];
    for i in (0..n).rev() {
        let mut t = 0u64;
        for &c in &children[i] {
            let c = c as usize;
            let node = &tree.nodes[c];
            if node.site.is_some_and(|s| s.is_internal()) {
                continue;
            }
            t = t.saturating_add(timed[c]).saturating_add(node.acc.timed());
        }
        timed[i] = t;
    }
    timed
}

/// The floor of each node, in ticks: every timed call beneath it at the
/// calibrated cost. All 0 when the calibration was not measured.
pub(crate) fn floors(tree: &Tree, children: &[Vec<u32>], cal: Calibration) -> Vec<f64> {
    if cal.timed <= 0.0 {
        return vec![0.0; tree.nodes.len()];
    }
    timed_below(tree, children)
        .into_iter()
        .map(|t| t as f64 * cal.timed)
        .collect()
}

/// The floor of a whole tree, in ticks: every timed call in it at the
/// calibrated cost (its top-level nodes' floors and their own calls).
pub(crate) fn tree_floor(
    tree: &Tree,
    children: &[Vec<u32>],
    floor: &[f64],
    cal: Calibration,
) -> f64 {
    if cal.timed <= 0.0 {
        return 0.0;
    }
    children.first().map_or(0.0, |top| {
        top.iter()
            .map(|&c| c as usize)
            .filter(|&c| !tree.nodes[c].site.is_some_and(|s| s.is_internal()))
            .map(|c| floor[c] + tree.nodes[c].acc.timed() as f64 * cal.timed)
            .sum()
    })
}
