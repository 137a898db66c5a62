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

/// The floor of each node, in ticks: every timed call beneath it at the
/// calibrated cost. All 0 when the calibration was not measured.
pub(crate) fn floors(tree: &Tree, children: &[Vec<u32>], cal: Calibration) -> Vec<f64> {
    if cal.timed <= 0.0 {
        return vec![0.0; tree.nodes.len()];
    }
    super::below_of(tree, children, crate::counters::Acc::timed)
        .into_iter()
        .map(|t| t as f64 * cal.timed)
        .collect()
}
