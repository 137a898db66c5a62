//! A tree's program-counter samples put to use (see the parent module):
//! the rows they find beneath each marked call path, and the share of its
//! time they find in tickprof's own code.

use super::{at, key, marked, row_of, site_of, At};
use crate::site::{CallSite, SiteKind};
use crate::tree::{TNode, Tree};
use std::collections::BTreeMap;

/// How many samples the run's share of instrumentation weighs in a node's
/// own (see [`instrumentation_found`]): a node found in a handful of
/// samples takes mostly the run's share, one found in hundreds its own.
const PRIOR: f64 = 4.0;

/// A copy of `c` with the rows of its program-counter samples in every
/// tree, merged and per thread.
pub(crate) fn expand_capture(c: &crate::record::Capture) -> crate::record::Capture {
    let mut out = c.clone();
    expand(&mut out.merged);
    for t in &mut out.threads {
        expand(&mut t.tree);
    }
    out
}

/// One node's program-counter samples: in its own code, in tickprof's,
/// and each row's (by its site's address).
#[derive(Default)]
struct Counts {
    own: u64,
    inst: u64,
    rows: BTreeMap<usize, (&'static CallSite, u64)>,
}

impl Counts {
    fn all(&self) -> u64 {
        self.own + self.inst + self.rows.values().map(|r| r.1).sum::<u64>()
    }
}

/// Adds the rows of `tree`'s program-counter samples (see the module
/// docs) beneath their marked call paths, and moves to each node's
/// instrumentation what its samples found in tickprof's code
/// ([`instrumentation_found`]).
pub(crate) fn expand(tree: &mut Tree) {
    if tree.pcs.is_empty() {
        return;
    }
    let mut per_node: BTreeMap<u32, Counts> = BTreeMap::new();
    for (&(node, pc), &count) in &tree.pcs {
        let Some(n) = tree.nodes.get(node as usize) else {
            continue;
        };
        let Some(site) = n
            .site
            .filter(|s| !s.is_internal() && s.kind() != SiteKind::Inlined)
        else {
            continue;
        };
        if !n.is_regular() {
            continue;
        }
        let resolved = at(pc);
        let chain = match &*resolved {
            At::Instrumentation => {
                per_node.entry(node).or_default().inst += count;
                continue;
            }
            At::Chain(chain) => chain,
        };
        let holder = site.function_path();
        // Another marked function's code, outside its windows (its frame's
        // set-up and return, the body's own): left out of the shares.
        let holder_key = key(&holder);
        let other_mark = chain.iter().any(|(n, _)| {
            let k = key(n);
            let k = k.split("::{{closure}}").next().unwrap_or(&k);
            k != holder_key && marked().contains(k)
        });
        if other_mark {
            continue;
        }
        let e = per_node.entry(node).or_default();
        match row_of(chain, &holder) {
            None => e.own += count,
            Some((name, file, inlined)) => {
                let row = site_of(name, file, inlined);
                e.rows
                    .entry(row as *const CallSite as usize)
                    .or_insert((row, 0))
                    .1 += count;
            }
        }
    }
    let (inst, all) = per_node
        .values()
        .fold((0u64, 0u64), |(i, a), c| (i + c.inst, a + c.all()));
    let run_share = if all == 0 {
        0.0
    } else {
        inst as f64 / all as f64
    };
    for (node, counts) in per_node {
        let i = node as usize;
        let h = &mut tree.nodes[i].acc;
        let moved = instrumentation_found(
            h.sampled,
            h.sampled_inst.saturating_add(h.sampled_exit),
            (counts.inst, counts.all()),
            run_share,
        );
        let h = &mut tree.nodes[i].acc;
        h.sampled -= moved;
        h.sampled_inst += moved;
        // The samples the rows and the node's own code share.
        let shared = counts.all() - counts.inst;
        let holder = *h;
        for (site, count) in counts.rows.into_values() {
            let share = count as f64 / shared as f64;
            let part = |x: u64| (x as f64 * share).round() as u64;
            let h = &mut tree.nodes[i].acc;
            let acc = crate::counters::Acc {
                sampled: part(holder.sampled).min(h.sampled),
                sampled_wait: part(holder.sampled_wait).min(h.sampled_wait),
                pc_samples: count,
                ..crate::counters::Acc::EMPTY
            };
            h.sampled -= acc.sampled;
            h.sampled_wait -= acc.sampled_wait;
            tree.nodes.push(TNode {
                site: Some(site),
                parent: node,
                flags: 0,
                acc,
            });
        }
        tree.nodes[i].acc.pc_samples += counts.own;
    }
}

/// Of a node's `program` periods (what the sampler's looks found of its
/// own code: `sampled`), how many its program-counter samples say were
/// tickprof's instrumentation beyond the `inside` periods the looks found
/// as such (the windows: a marked call's lookup and count, a timed call's
/// clock reads). The windows miss the rest of a mark's code: the
/// out-of-line `timed`'s frame, a counted child's entry checks before its
/// window opens, the exit's stores after it closes; on semver's workload
/// marked by `cargo tickprof` the looks found 6.6% of the run in windows
/// where the marked build ran 30% longer than the unmarked one.
///
/// The node's share of instrumentation, `(inst, all)` of its samples,
/// weighed with the run's (`run_share`, [`PRIOR`] samples' worth), times
/// every period its looks found on a CPU (`program + inside`); what the
/// windows found already is not moved again, and at most `program` is.
/// (Both are samples of the same on-CPU time: the looks every period of
/// the sampler's clock, the program counters every period of the
/// thread's CPU time.)
fn instrumentation_found(
    program: u64,
    inside: u64,
    (inst, all): (u64, u64),
    run_share: f64,
) -> u64 {
    let share = (inst as f64 + PRIOR * run_share) / (all as f64 + PRIOR);
    let target = share * program.saturating_add(inside) as f64;
    ((target - inside as f64).max(0.0).round() as u64).min(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_samples_in_tickprofs_code_move_its_time_to_the_instrumentation() {
        // 30 of 100 samples in tickprof's code, 1,000 periods found, 100
        // of them in the windows: 300 in all, 200 more.
        assert_eq!(instrumentation_found(900, 100, (30, 100), 0.3), 200);
        // The windows found more than the samples say: nothing moves.
        assert_eq!(instrumentation_found(600, 400, (30, 100), 0.3), 0);
        // Never more than the program periods.
        assert_eq!(instrumentation_found(10, 0, (100, 100), 1.0), 10);
        // No sample of its own: the run's share.
        assert_eq!(instrumentation_found(1000, 0, (0, 0), 0.25), 250);
        // A few samples lean on the run's share: 1 of 1 in tickprof's
        // code, the run's 10%, reads (1 + 0.4) / 5 = 28%.
        assert_eq!(instrumentation_found(1000, 0, (1, 1), 0.1), 280);
        // No instrumentation sampled anywhere: nothing moves.
        assert_eq!(instrumentation_found(1000, 0, (0, 50), 0.0), 0);
    }
}
