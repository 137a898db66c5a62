//! Adaptive timing: each tree node's timing state, and the per-site
//! decision between timed and counted calls.
//!
//! A node's state sits in the low [`STATE_BITS`] bits of its `untimed`
//! cell, in the node's first cache line, beside the count of its counted
//! calls (the bits above), so that a counted call updates one word:
//!
//! | state | the next call is | entry path |
//! |---|---|---|
//! | `0` | timed (a settled timed node) | fast: no check (cached plainly) |
//! | `2..=SAMPLE_EVERY` | counted: no clock read; the state steps down | fast: counted (cached with a flag) |
//! | `1` ([`SAMPLE`]) | the sample: timed; the state reloads to `SAMPLE_EVERY` | [`settle`] (cold) |
//! | [`LEARNING`] | timed; after [`LEARN_CALLS`] timed calls the site is decided | [`settle`] (cold) |
//!
//! The decision is per site ([`CallSite::decide`]): the first node of a
//! site to finish learning decides by the resolution rule
//! ([`crate::site::resolvable`]) applied to its own calls (marked calls
//! made from them included), with the clock's read cost ([`read_cost`])
//! as the instrumentation's inner cost: the site is counted when its calls
//! are too short to resolve. Nodes created later take the site's decision
//! at creation; a node still learning adopts it at its next call. A call
//! made from a counted call is shorter still: a node whose parent counts
//! counts from its creation (or, learning, from its next call), whatever
//! its site's decision, so that a counted call's subtree is counted whole
//! and its time stays with the nearest timed caller. Counted calls keep
//! their frame, so marked calls made from them land on their true path.
//! Nothing changes a node's state back: no flapping, and no decision
//! changes a count.

use super::node::Node;
use crate::clock::ticks;
use crate::counters::{STATE_BITS, STATE_MASK};
use crate::site::{self, CallSite, COUNTED, UNDECIDED};
use core::sync::atomic::{AtomicU64, Ordering};

pub(crate) use crate::site::{LEARN_CALLS, SAMPLE_EVERY};

/// State: the next call is the sample (timed), then the countdown reloads.
pub(super) const SAMPLE: u64 = 1;
/// State: the node is learning (its calls are timed; decided after
/// [`LEARN_CALLS`]).
pub(super) const LEARNING: u64 = STATE_MASK;
/// What a counted call adds to the `untimed` cell: one call counted, the
/// countdown one step down.
pub(super) const COUNTED_STEP: u64 = (1 << STATE_BITS) - 1;

const _: () = assert!(SAMPLE_EVERY >= 2 && SAMPLE_EVERY < LEARNING);

/// Whether state `s` makes the next call counted (`2..=SAMPLE_EVERY`);
/// the recorder tests the cell's low byte ([`is_counted_byte`]).
#[cfg(test)]
fn is_counted(s: u64) -> bool {
    s.wrapping_sub(2) < SAMPLE_EVERY - 1
}

/// Whether a state read as the cell's low byte makes the next call
/// counted (`2..=SAMPLE_EVERY`).
#[inline(always)]
pub(super) fn is_counted_byte(s: u8) -> bool {
    s.wrapping_sub(2) < (SAMPLE_EVERY - 1) as u8
}

/// The state a new node of `site` starts in.
pub(super) fn initial(site: &'static CallSite) -> u64 {
    if site.kind().is_async() || site::time_mode() == site::TIME_ALL && !site.is_internal() {
        return 0;
    }
    match site.decision() {
        COUNTED => SAMPLE_EVERY,
        UNDECIDED => LEARNING,
        _ => 0,
    }
}

/// Whether a node in state `s` counts its calls (counting, or its sample
/// next).
fn counts(s: u64) -> bool {
    s != 0 && s != LEARNING
}

/// Whether a node of `site` may count its calls at all (not an async
/// site, and not every call timed).
fn may_count(site: &CallSite) -> bool {
    !site.kind().is_async() && (site::time_mode() != site::TIME_ALL || site.is_internal())
}

/// Puts a new node of `site`, a child of `parent`, in its first state
/// (owner thread only): counted when its parent counts (see the module
/// docs), else as [`initial`] says.
pub(super) fn start(node: &Node, site: &'static CallSite, parent: &Node) {
    let s = if counts(state(parent)) && may_count(site) {
        SAMPLE_EVERY
    } else {
        initial(site)
    };
    set_state(node, s);
}

/// Sets the state of `node` to `s` (owner thread only).
fn set_state(node: &Node, s: u64) {
    let w = node.c.untimed.load(Ordering::Relaxed);
    node.c
        .untimed
        .store((w & !STATE_MASK) | s, Ordering::Relaxed);
}

/// The state of `node`.
#[inline(always)]
pub(super) fn state(node: &Node) -> u64 {
    node.c.untimed.load(Ordering::Relaxed) & STATE_MASK
}

/// A timed call of a node in the [`SAMPLE`] or [`LEARNING`] state (or any
/// state the fast path does not handle): moves the state on. Takes and
/// returns the guard's frame, so that the hot path keeps nothing across
/// the call.
///
/// A node whose state becomes 0 (timed for good) is cached plainly in its
/// `parent`'s child cache from then on, so that its calls check nothing.
#[cold]
#[inline(never)]
pub(super) fn settle(parent: &Node, node: *const Node, depth: usize) -> (*const Node, usize) {
    // SAFETY: the fast path calls this only with the node it just pushed,
    // a node of this thread's arena, which outlives the state.
    let n = unsafe { &*node };
    let next = match state(n) {
        0 => 0,
        SAMPLE => SAMPLE_EVERY,
        LEARNING if counts(state(parent)) && n.site().is_some_and(may_count) => SAMPLE_EVERY,
        LEARNING => learn(n),
        _ => 0,
    };
    set_state(n, next);
    if next == 0 {
        parent.unflag_child(node);
    }
    (node, depth)
}

/// The state after one more learning call of `n`.
fn learn(n: &Node) -> u64 {
    let Some(site) = n.site() else { return 0 };
    let decision = match site.decision() {
        UNDECIDED => {
            let a = n.c.load();
            if a.timed() < LEARN_CALLS {
                return LEARNING;
            }
            site.decide(too_short(&a, children_timed_calls(n)))
        }
        d => d,
    };
    if decision == COUNTED {
        SAMPLE_EVERY
    } else {
        0
    }
}

/// Whether the calls summed in `a` are too short to resolve (the
/// resolution rule with the clock's read cost as the inner cost).
///
/// `below`: the timed marked calls made from those calls, whose
/// instrumentation (two clock reads each, [`read_cost`] apiece) is inside
/// them: taken out first, so that a tiny function calling a tiny function
/// is judged by what it costs unmarked (its shortest call less the timed
/// calls each call makes at the least, its mean less their average).
fn too_short(a: &crate::counters::Acc, below: u64) -> bool {
    if site::time_mode() == site::TIME_COUNTED {
        return true;
    }
    let accepted = a.accepted();
    if accepted < 2 {
        return false;
    }
    let cost = read_cost();
    let per_call = (below as f64 / a.calls.max(1) as f64) * 2.0 * cost;
    let least = (below / a.calls.max(1)) as f64 * 2.0 * cost;
    // The mean without the longest call: one preemption among the
    // learning calls (milliseconds, against calls of nanoseconds) would
    // otherwise decide the site.
    let mean = a.ticks.saturating_sub(a.max) as f64 / (accepted - 1) as f64;
    let min = a.min_or_zero() as f64;
    !site::resolvable((min - least).max(0.0), (mean - per_call).max(0.0), cost)
}

/// Timed calls of the children of `n` held in its child cache (its
/// one-entry cache and extra entries: the up to three children a short
/// function has; calls of children beyond them are not taken out, which
/// errs toward timing).
fn children_timed_calls(n: &Node) -> u64 {
    let mut kids = [core::ptr::null::<Node>(); 3];
    kids[0] = n.mru_child.load(Ordering::Relaxed).cast_const();
    for (k, way) in kids[1..].iter_mut().zip(&n.ways) {
        let c = way.child.load(Ordering::Relaxed) as usize & !super::node::WAY_FLAG;
        *k = c as *const Node;
    }
    kids.iter()
        .filter(|c| !c.is_null())
        // SAFETY: cache entries are nodes of this thread's arena (the
        // caller's: `learn` runs on the owner thread), alive as long as it.
        .map(|&c| unsafe { &*c }.c.load().timed())
        .sum()
}

/// Clock reads timed back to back, per round of [`read_cost`].
const READS: u32 = 32;
/// Rounds of [`read_cost`]; the cheapest counts.
const READ_ROUNDS: u32 = 8;

/// The clock's read cost in ticks (as `f64` bits; 0 until measured).
static READ_COST: AtomicU64 = AtomicU64::new(0);

/// What the clock can resolve, in ticks: the larger of what one read
/// costs (the cheapest of [`READ_ROUNDS`] rounds of [`READS`] reads back
/// to back) and the counter's smallest step between two reads; measured
/// once (a few µs, on the first decision). It stands for the
/// instrumentation's inner cost (the calibrated one is measured later,
/// when the first report is built): the end read of a timed call is what
/// lands inside it.
pub(crate) fn read_cost() -> f64 {
    let bits = READ_COST.load(Ordering::Relaxed);
    if bits != 0 {
        return f64::from_bits(bits);
    }
    let mut best = f64::INFINITY;
    // The counter's step: some hosts' counter moves by a few dozen ticks at
    // a time (26 on an AMD EPYC VM), far more than a read costs there; no
    // call shorter than a step can be resolved.
    let mut step = u64::MAX;
    for _ in 0..READ_ROUNDS {
        let t0 = ticks();
        let mut last = t0;
        for _ in 0..READS {
            let t = ticks();
            let d = t.wrapping_sub(last);
            if d > 0 && d < step {
                step = d;
            }
            last = t;
        }
        let t = ticks().wrapping_sub(t0) as f64 / f64::from(READS + 1);
        best = best.min(t);
    }
    let step = if step == u64::MAX { 0.0 } else { step as f64 };
    let cost = best.max(step);
    let cost = if cost.is_finite() && cost > 0.0 {
        cost
    } else {
        1.0
    };
    READ_COST.store(cost.to_bits(), Ordering::Relaxed);
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::{path_of, TIMED};

    fn m() {}

    fn node_of(site: &'static CallSite) -> Node {
        let n = Node::new();
        n.site
            .store((site as *const CallSite).cast_mut(), Ordering::Relaxed);
        // Timed calls count into a histogram: the static one a node
        // without a site's histogram uses.
        let hists = crate::record::hist::Table::new();
        n.hist
            .store(hists.cells(None).cast_mut(), Ordering::Relaxed);
        set_state(&n, initial(site));
        n
    }

    /// Runs `calls` calls of `delta` ticks through the state machine, as
    /// the guard does; returns (timed, counted).
    fn run(n: &Node, calls: u64, delta: u64) -> (u64, u64) {
        let (mut timed, mut counted) = (0, 0);
        for _ in 0..calls {
            let s = state(n);
            if s == 0 {
                n.record(delta, 0, false);
                timed += 1;
            } else if is_counted(s) {
                super::super::node::bump(&n.c.untimed, COUNTED_STEP);
                counted += 1;
            } else {
                settle(&Node::new(), n, 1);
                n.record(delta, 0, false);
                timed += 1;
            }
        }
        (timed, counted)
    }

    #[test]
    fn states_do_not_overlap() {
        assert!(!is_counted(0) && !is_counted(SAMPLE) && !is_counted(LEARNING));
        assert!((2..=SAMPLE_EVERY).all(is_counted));
        assert!(!is_counted(SAMPLE_EVERY + 1));
    }

    #[test]
    fn a_short_leaf_becomes_counted_and_samples_one_in_n() {
        static S: CallSite = CallSite::function(path_of(m), None, "a.rs", 1);
        let n = node_of(&S);
        assert_eq!(state(&n), LEARNING);
        let (timed, counted) = run(&n, LEARN_CALLS, 1);
        assert_eq!((timed, counted), (LEARN_CALLS, 0));
        assert_eq!(S.decision(), UNDECIDED);
        let calls = 1 + 64 * SAMPLE_EVERY;
        let (timed, counted) = run(&n, calls, 1);
        assert_eq!(S.decision(), COUNTED);
        assert_eq!(timed + counted, calls);
        assert_eq!(timed, 1 + 64, "the deciding call, then one in N");
        let a = n.c.load();
        assert_eq!(a.calls, LEARN_CALLS + calls, "every call counted");
        assert_eq!(a.untimed, counted);
        // A node created later starts counted, without learning.
        let later = node_of(&S);
        assert_eq!(state(&later), SAMPLE_EVERY);
    }

    #[test]
    fn a_long_call_stays_timed() {
        static S: CallSite = CallSite::function(path_of(m), None, "b.rs", 1);
        let n = node_of(&S);
        let long = (1e6 * read_cost()) as u64;
        let (timed, counted) = run(&n, 10 * LEARN_CALLS, long);
        assert_eq!((timed, counted), (10 * LEARN_CALLS, 0));
        assert_eq!(S.decision(), TIMED);
        assert_eq!(state(&n), 0);
    }

    #[test]
    fn a_short_parent_is_counted_and_its_children_count_from_the_start() {
        static P: CallSite = CallSite::function(path_of(m), None, "c.rs", 1);
        let n = node_of(&P);
        n.mru_site
            .store((&P as *const CallSite).cast_mut(), Ordering::Relaxed);
        run(&n, LEARN_CALLS + 1, 1);
        assert_eq!(P.decision(), COUNTED, "short, whatever its children");
        // A child of a counting node counts from its creation, whatever
        // its own site says (here: undecided; long elsewhere).
        static Q: CallSite = CallSite::function(path_of(m), None, "d.rs", 1);
        let child = Node::new();
        start(&child, &Q, &n);
        assert_eq!(state(&child), SAMPLE_EVERY);
        assert_eq!(Q.decision(), UNDECIDED);
        // One still learning counts from its next call.
        let learning = node_of(&Q);
        assert_eq!(state(&learning), LEARNING);
        settle(&n, &learning, 2);
        assert_eq!(state(&learning), SAMPLE_EVERY);
        // Under a timed parent, as its site says.
        let other = Node::new();
        start(&other, &Q, &Node::new());
        assert_eq!(state(&other), LEARNING);
        // Counting never stops: the sample reloads the countdown.
        let before = n.c.load().calls;
        let (t, c) = run(&n, 4 * SAMPLE_EVERY, 1);
        assert_eq!(t + c, 4 * SAMPLE_EVERY);
        assert!(t <= 5 && counts(state(&n)), "{t} {c}");
        assert_eq!(n.c.load().calls, before + 4 * SAMPLE_EVERY);
    }

    #[test]
    fn a_parents_timed_children_are_taken_out_of_its_learning_calls() {
        let r = read_cost();
        // Each call: one timed child call (two clock reads) and a few
        // ticks of its own.
        let each = (2.0 * r) as u64 + 2;
        let mut a = crate::counters::Acc::EMPTY;
        for _ in 0..LEARN_CALLS {
            a.calls += 1;
            a.ticks += each;
        }
        a.min = each;
        a.max = each;
        assert!(!too_short(&a, 0), "judged raw: resolvable");
        assert!(
            too_short(&a, LEARN_CALLS),
            "less its child's reads: too short"
        );
        // A parent that is long without them stays timed.
        let long = (100.0 * r) as u64;
        a.ticks = long * LEARN_CALLS;
        a.min = long;
        a.max = long;
        assert!(!too_short(&a, LEARN_CALLS));
    }

    #[test]
    fn reset_keeps_the_state() {
        static S: CallSite = CallSite::function(path_of(m), None, "e.rs", 1);
        let n = node_of(&S);
        run(&n, LEARN_CALLS + 5, 1);
        let s = state(&n);
        n.c.reset();
        assert_eq!(state(&n), s);
        assert_eq!(n.c.load().calls, 0);
    }
}
