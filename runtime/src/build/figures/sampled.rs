//! What the sampler found, per node and subtree, and each node's own
//! figure from it (see `docs/accuracy.md`).

use crate::tree::Tree;

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
    /// caller's side, `sampled_inst`, and each callee's own,
    /// `sampled_own`).
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
            .saturating_add(a.sampled_own);
        let (mut p, mut ins, mut w) = (a.sampled, a.sampled_inst, a.sampled_wait);
        for &c in &children[i] {
            let c = c as usize;
            p = p.saturating_add(out.program[c]);
            ins = ins
                .saturating_add(out.inside[c])
                .saturating_add(tree.nodes[c].acc.sampled_own);
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
    /// The clock's resolution, in ticks: the clock read inside each timed
    /// call, taken off a timed sample's calls.
    pub resolution: f64,
    /// The program's time, in ticks, the sampler must have found in a
    /// counted node's subtree for its figure to be the sampler's (a few
    /// sampling periods).
    pub min_found: f64,
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
///   with the instrumentation inside. Where the sampler looked too little
///   (a short run, or no sampler: see [`Estimate`]), its timed sample's
///   mean times its calls — measured, less the clock read inside each and
///   the instrumentation of the calls each call makes beneath it.
pub(crate) fn own_figures(
    tree: &Tree,
    counted: &[bool],
    below: &[u64],
    s: &Sampled,
    floor: &[f64],
    est: Estimate,
) -> (Vec<f64>, Vec<f64>) {
    tree.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let a = &n.acc;
            // Waits for a CPU fall on the program and the instrumentation
            // alike: each keeps its share of them (wall time, as a timed
            // call measures it).
            let (p, ins, w) = (s.program[i] as f64, s.inside[i] as f64, s.waited[i] as f64);
            let stretch = if p + ins > 0.0 {
                1.0 + w / (p + ins)
            } else {
                1.0
            };
            if !counted[i] {
                let t = a.ticks as f64;
                return (t, t - ins.max(floor[i]) * stretch);
            }
            // The sampler's figure, where it looked at the threads enough
            // and found this node a few times at least (a count of zero or
            // one says too little: the timed sample's estimate, below).
            if est.sampled && p >= est.min_found {
                return (p + ins + w, p * stretch);
            }
            let accepted = a.accepted();
            if accepted == 0 {
                return (0.0, 0.0);
            }
            let (mean, calls) = (a.ticks as f64 / accepted as f64, a.calls as f64);
            let inside = est.resolution + est.per_call * below[i] as f64 / calls.max(1.0);
            (mean * calls, (mean - inside).max(0.0) * calls)
        })
        .unzip()
}
