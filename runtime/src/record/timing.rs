//! Timed and counted calls, in one place: the rule that decides how a
//! site's calls are measured, each tree node's timing state, and its
//! transitions. The guard asks this module what a call of a learning node
//! does to its state ([`settle`]) and counts a counted call ([`count`]);
//! the node lookups ask what state a new node starts in ([`start`]) and
//! how its calls are measured ([`kind`]).
//!
//! A node's state sits in the low [`STATE_BITS`] bits of its `untimed`
//! cell, beside the count of its counted calls (the bits above), and its
//! parent's child cache holds it too ([`Kind`]), so that a cache hit tells
//! the guard what to do with no load of the state:
//!
//! | state | the next call is | cached as |
//! |---|---|---|
//! | `0` | timed (a settled timed node) | [`Kind::Timed`]: read the clock |
//! | [`COUNTED`] | counted: no clock read, one add | [`Kind::Counted`] |
//! | [`LEARNING`] | timed; after [`LEARN_CALLS`] timed calls the site is decided | [`Kind::Settle`]: [`settle`] (cold) |
//!
//! **The rule.** A site is decided once, by the first node of it to
//! finish learning, from the calls of its site on that node's thread (the
//! thread's latency histogram of the site, every path of it): their
//! median, each call less the instrumentation of the marked calls made
//! beneath it (a clock read for a counted call beneath, two for a timed
//! one), is compared with [`COUNTED_BELOW`] times what the clock resolves
//! ([`read_cost`]). Below: counted. A parent whose calls make at least
//! [`PARENT_BELOW`] marked calls beneath them on average is timed, whatever
//! its median: what is taken out beneath it depends on which of those
//! calls are timed while they learn, and its median moved across the line
//! between identical runs; the count is exact. A median within a factor of
//! [`MARGIN`] of that line is not decided yet: the node learns on, up to
//! [`LEARN_MORE`] times as many calls, and is then counted. A median near
//! the line moves across it between identical runs (the children beneath
//! are decided meanwhile, which changes what is taken out; the
//! histogram's buckets are 9% apart), so a site whose median stays in the
//! margin is counted in every run; a site changes its decision between
//! runs only when its median lies within a few percent of the margin's
//! edges. A preempted call or a cold start does not move a median; a
//! slow start does (the first calls of a run, or a turn in which the
//! host runs every call twice as long in ticks, a clock read not), so a
//! median above the margin decides a site timed before the last
//! judgement only beyond [`EARLY_TIMED`] times the margin's upper edge;
//! between, the node learns on like one in the margin and the last
//! judgement decides (the quickstart's `parse_line` was timed in 7 of
//! 20 runs when the first look above the margin decided, in 0 of 20
//! with this rule, the runs alternating).
//!
//! Nodes created later take the site's decision at creation; a node still
//! learning adopts it at its next call. A node beneath a counting node
//! learns like any other: its site is decided by its own calls. (A node
//! whose parent counted once counted from its creation; but a counted
//! site's median call is short, not every call of it, and a parent
//! counted early in one run took a subtree of timed sites along that it
//! did not in the next: pulldown-cmark's `Parser::next`, 27 sites.)
//! A counted call is the thread's current node while it runs, so marked
//! calls made from it land on their true path and the sampler finds its
//! time where it is. Nothing changes a node's state back: no flapping, and
//! no decision changes a count. A counted site's calls read no clock at
//! all: its percentiles are its learning calls'.

use super::node::{bump, Kind, Node};
use crate::clock::ticks;
use crate::counters::{STATE_BITS, STATE_MASK};
use crate::site::{CallSite, TIMED, UNDECIDED};
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Timed calls a new tree node makes before its site is decided.
pub(crate) const LEARN_CALLS: u64 = 256;
/// At most this many times [`LEARN_CALLS`] for a site near the line.
pub(crate) const LEARN_MORE: u64 = 16;
/// A node learning past [`LEARN_CALLS`] is judged every this many calls.
const JUDGE_EVERY: u64 = 64;
/// A site whose calls' median own time is below this many times the
/// clock's resolution is counted.
pub(crate) const COUNTED_BELOW: f64 = 8.0;
/// A median within this factor of the line (either way) is not decided
/// before [`LEARN_MORE`] times [`LEARN_CALLS`] calls.
pub(crate) const MARGIN: f64 = 1.5;
/// A median above the margin decides a site timed before its last
/// judgement only beyond this many times the margin's upper edge (see
/// the module docs).
pub(crate) const EARLY_TIMED: f64 = 2.0;
/// A site whose calls make at least this many marked calls beneath them,
/// on average, is timed whatever its median.
pub(crate) const PARENT_BELOW: f64 = 4.0;

/// `TICKPROF_TIME`: [`TIME_ALL`], [`TIME_ADAPTIVE`] (the default) or
/// [`TIME_COUNTED`].
static TIME_MODE: AtomicU8 = AtomicU8::new(TIME_ADAPTIVE);

/// `TICKPROF_TIME=all`: every call timed; new nodes start timed.
pub(crate) const TIME_ALL: u8 = 0;
/// `TICKPROF_TIME=adaptive`: sites too short to resolve become counted.
pub(crate) const TIME_ADAPTIVE: u8 = 1;
/// `TICKPROF_TIME=counted`: every site becomes counted after its learning
/// calls, however long its calls (to measure the counted path, and in
/// tests).
pub(crate) const TIME_COUNTED: u8 = 2;

/// Sets `TICKPROF_TIME`. Nodes created before keep their state.
pub(crate) fn set_time_mode(mode: crate::config::TimeMode) {
    use crate::config::TimeMode;
    let code = match mode {
        TimeMode::All => TIME_ALL,
        TimeMode::Adaptive => TIME_ADAPTIVE,
        TimeMode::Counted => TIME_COUNTED,
    };
    TIME_MODE.store(code, Ordering::Relaxed);
}

/// `TICKPROF_TIME` (one of the `TIME_*` values).
pub(crate) fn time_mode() -> u8 {
    TIME_MODE.load(Ordering::Relaxed)
}

/// Multiple of the clock's resolution that a shortest raw call must
/// reach for the report to call a site's calls resolved (its `resolved`
/// flag): the call's own time is then at least the clock read inside it.
pub(crate) const RESOLUTION: f64 = 2.0;

/// Multiple of the resolution that a raw mean must reach to count as
/// resolved although the shortest call did not (a long function with a
/// rare short path).
pub(crate) const RESOLUTION_MEAN: f64 = 8.0;

/// The report's resolution rule: whether calls whose shortest raw time is
/// `min_ticks` and mean raw time `mean_ticks` are long enough to be read
/// from the clock, given what it resolves, `inner_ticks` (nothing known:
/// resolved).
pub(crate) fn resolvable(min_ticks: f64, mean_ticks: f64, inner_ticks: f64) -> bool {
    inner_ticks <= 0.0
        || min_ticks >= RESOLUTION * inner_ticks
        || mean_ticks >= RESOLUTION_MEAN * inner_ticks
}

/// The site's decision ([`UNDECIDED`], [`TIMED`] or `site::COUNTED`).
fn decision(site: &CallSite) -> u8 {
    site.decision.load(Ordering::Relaxed)
}

/// Decides `site` if it is undecided; returns the decision that holds
/// (another thread's may have come first).
fn decide(site: &CallSite, counted: bool) -> u8 {
    let want = if counted { crate::site::COUNTED } else { TIMED };
    match site
        .decision
        .compare_exchange(UNDECIDED, want, Ordering::Relaxed, Ordering::Relaxed)
    {
        Ok(_) => want,
        Err(now) => now,
    }
}

/// State: counted, for good.
pub(super) const COUNTED: u64 = 1;
/// State: the node is learning (its calls are timed; decided after
/// [`LEARN_CALLS`]).
pub(super) const LEARNING: u64 = STATE_MASK;
/// What a counted call adds to the `untimed` cell: one call counted.
const COUNT_ONE: u64 = 1 << STATE_BITS;

/// Counts one counted call of `node` (no clock read): one add.
#[inline(always)]
pub(super) fn count(node: &Node) {
    bump(&node.c.untimed, COUNT_ONE);
}

/// How the calls of a node in state `s` are measured.
#[inline(always)]
fn kind_of_state(s: u64) -> Kind {
    match s {
        0 => Kind::Timed,
        COUNTED => Kind::Counted,
        _ => Kind::Settle,
    }
}

/// How `node`'s calls are measured now (for a child cache's entry). An
/// overflow node's take the cold paths, which count them open (their
/// depth is not the tree's): [`Kind::Settle`].
#[inline(always)]
pub(super) fn kind(node: &Node) -> Kind {
    if node.is_overflow() {
        return Kind::Settle;
    }
    kind_of_state(state(node))
}

/// The state a new node of `site` starts in.
pub(super) fn initial(site: &'static CallSite) -> u64 {
    if site.kind().is_async() || time_mode() == TIME_ALL && !site.is_internal() {
        return 0;
    }
    match decision(site) {
        crate::site::COUNTED => COUNTED,
        UNDECIDED => LEARNING,
        _ => 0,
    }
}

/// Puts a new node of `site` in its first state (owner thread only), as
/// [`initial`] says: whatever its parent's state (see the module docs).
pub(super) fn start(node: &Node, site: &'static CallSite) {
    set_state(node, initial(site));
}

/// Sets the state of `node` to `s` (owner thread only).
fn set_state(node: &Node, s: u64) {
    let w = node.c.untimed.load(Ordering::Relaxed);
    node.c
        .untimed
        .store((w & !STATE_MASK) | s, Ordering::Relaxed);
}

/// Makes `node`'s calls counted, as a decision would (tests).
#[cfg(test)]
pub(super) fn make_counted(node: &Node) {
    set_state(node, COUNTED);
}

/// The state of `node`.
#[inline(always)]
pub(super) fn state(node: &Node) -> u64 {
    node.c.untimed.load(Ordering::Relaxed) & STATE_MASK
}

/// A timed call of a learning node ([`Kind::Settle`]): moves its state
/// on; once decided, its `parent`'s child cache holds the new kind, so
/// that its calls take the fast path from then on.
#[cold]
#[inline(never)]
pub(super) fn settle(parent: &Node, node: &Node) {
    if state(node) != LEARNING {
        return;
    }
    let next = learn(node);
    set_state(node, next);
    if next != LEARNING {
        parent.recache(node, kind_of_state(next));
    }
}

/// The state after one more learning call of `n`.
fn learn(n: &Node) -> u64 {
    let Some(site) = n.site() else { return 0 };
    let decided = match decision(site) {
        UNDECIDED => {
            let timed = n.c.load().timed();
            // The rule reads the site's histogram: every 64th call past
            // the first LEARN_CALLS.
            if timed < LEARN_CALLS || timed % JUDGE_EVERY != 0 {
                return LEARNING;
            }
            match judge(n, timed >= LEARN_MORE * LEARN_CALLS - JUDGE_EVERY) {
                Some(counted) => decide(site, counted),
                None => return LEARNING,
            }
        }
        d => d,
    };
    if decided == crate::site::COUNTED {
        COUNTED
    } else {
        0
    }
}

/// The rule (see the module docs) on the calls of `n`'s site on this
/// thread: `Some(true)` counted, `Some(false)` timed, `None` not decided
/// yet (near the line, and `last` is false).
fn judge(n: &Node, last: bool) -> Option<bool> {
    if time_mode() == TIME_COUNTED {
        return Some(true);
    }
    let cost = read_cost();
    let line = COUNTED_BELOW * cost;
    let (timed_share, beneath) = children_of(n);
    // Each call beneath: one clock read's worth for a counted call, two
    // for a timed one (the children held in `n`'s child cache say how
    // many of them are timed); `beneath` of them a call, on average.
    let below = beneath as f64 / n.c.load().calls.max(1) as f64;
    let per_below = cost * (1.0 + timed_share);
    // A node with no histogram (made in a signal handler) is judged by
    // its mean instead.
    let raw = n.hist_median().or_else(|| {
        let a = n.c.load();
        (a.accepted() > 0).then(|| a.ticks as f64 / a.accepted() as f64)
    })?;
    let median = (raw - per_below * below).max(0.0);
    // A parent (at least PARENT_BELOW marked calls beneath a call, on
    // average) is timed: the count is exact, so the decision is the same in identical
    // runs, where its median, less what is taken out for the calls
    // beneath (which of them are timed changes while they learn), moved
    // across the line from run to run (pulldown-cmark's `parse_line`,
    // median ~400 ns, counted in 3 runs of 5).
    if below >= PARENT_BELOW {
        return Some(false);
    }
    if !last && median > line / MARGIN && median < line * MARGIN * EARLY_TIMED {
        return None;
    }
    // Still within the margin after LEARN_MORE times the calls: counted.
    // The median of a site at the line moves across it from run to run
    // (its children's decisions change what is taken out beneath it, and
    // the histogram's buckets are 9% apart): deciding it by the line
    // would decide it differently in identical runs (the quickstart's
    // parse_line: 5 of 10).
    Some(median < line * MARGIN)
}

/// The share of timed calls among the calls of the children held in
/// `n`'s child cache (its one-entry cache and extra entries: the up to
/// three children a short function has; 1 when none is held), and those
/// children's calls.
fn children_of(n: &Node) -> (f64, u64) {
    let mut kids = [core::ptr::null::<Node>(); 3];
    kids[0] = n.mru_child.load(Ordering::Relaxed).cast_const();
    for (k, way) in kids[1..].iter_mut().zip(&n.ways) {
        *k = way.child.load(Ordering::Relaxed).cast_const();
    }
    let (timed, calls) = kids
        .iter()
        .filter(|c| !c.is_null())
        // SAFETY: cache entries are nodes of this thread's arena (the
        // caller's: `learn` runs on the owner thread), alive as long as it.
        .map(|&c| unsafe { &*c }.c.load())
        .fold((0u64, 0u64), |(t, c), a| (t + a.timed(), c + a.calls));
    let share = if calls == 0 {
        1.0
    } else {
        timed as f64 / calls as f64
    };
    (share, calls)
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
/// instrumentation's inner cost: the end read of a timed call is what
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
    use crate::site::{path_of, COUNTED as DECIDED_COUNTED, TIMED};

    fn m() {}

    fn node_of(site: &'static CallSite) -> Node {
        let n = Node::new();
        n.site
            .store((site as *const CallSite).cast_mut(), Ordering::Relaxed);
        // Timed calls count into the site's histogram, on which the rule
        // judges (a table of its own, kept for the test's life).
        let hists: &'static crate::record::hist::Table =
            Box::leak(Box::new(crate::record::hist::Table::new()));
        n.hist
            .store(hists.cells(Some(site)).cast_mut(), Ordering::Relaxed);
        set_state(&n, initial(site));
        n
    }

    /// Runs `calls` calls of `delta` ticks through the state machine, as
    /// the guard does; returns (timed, counted).
    fn run(n: &Node, calls: u64, delta: u64) -> (u64, u64) {
        run_below(n, calls, delta, 0)
    }

    /// [`run`] with `below` marked calls made beneath each call: calls of
    /// a timed child held in `n`'s child cache.
    fn run_below(n: &Node, calls: u64, delta: u64, below: u64) -> (u64, u64) {
        static C: CallSite = CallSite::function(path_of(m), None, "child.rs", 1);
        let child: &'static Node = Box::leak(Box::new(node_of(&C)));
        if below > 0 {
            n.cache_child(
                (&C as *const CallSite).cast_mut(),
                (child as *const Node).cast_mut(),
                Kind::Timed,
                false,
            );
        }
        let (mut timed, mut counted) = (0, 0);
        for _ in 0..calls {
            for _ in 0..below {
                child.record(1, false);
            }
            match kind(n) {
                Kind::Timed => {
                    n.record(delta, false);
                    timed += 1;
                }
                Kind::Counted => {
                    count(n);
                    counted += 1;
                }
                Kind::Settle => {
                    settle(&Node::new(), n);
                    n.record(delta, false);
                    timed += 1;
                }
            }
        }
        (timed, counted)
    }

    #[test]
    fn states_map_to_kinds() {
        assert_eq!(kind_of_state(0), Kind::Timed);
        assert_eq!(kind_of_state(COUNTED), Kind::Counted);
        assert_eq!(kind_of_state(LEARNING), Kind::Settle);
    }

    #[test]
    fn a_short_leaf_becomes_counted_and_stays_counted() {
        static S: CallSite = CallSite::function(path_of(m), None, "a.rs", 1);
        let n = node_of(&S);
        assert_eq!(state(&n), LEARNING);
        let (timed, counted) = run(&n, LEARN_CALLS, 1);
        assert_eq!((timed, counted), (LEARN_CALLS, 0));
        assert_eq!(decision(&S), UNDECIDED);
        let calls = 1 + 64 * 64;
        let (timed, counted) = run(&n, calls, 1);
        assert_eq!(decision(&S), DECIDED_COUNTED);
        assert_eq!(
            (timed, counted),
            (1, calls - 1),
            "the deciding call, then none"
        );
        let a = n.c.load();
        assert_eq!(a.calls, LEARN_CALLS + calls, "every call counted");
        assert_eq!(a.untimed, counted);
        // A node created later starts counted, without learning.
        let later = node_of(&S);
        assert_eq!(state(&later), COUNTED);
    }

    #[test]
    fn a_long_call_stays_timed() {
        static S: CallSite = CallSite::function(path_of(m), None, "b.rs", 1);
        let n = node_of(&S);
        let long = (1e6 * read_cost()) as u64;
        let (timed, counted) = run(&n, 10 * LEARN_CALLS, long);
        assert_eq!((timed, counted), (10 * LEARN_CALLS, 0));
        assert_eq!(decision(&S), TIMED);
        assert_eq!(state(&n), 0);
    }

    #[test]
    fn a_counted_parents_children_learn_on_their_own() {
        static P: CallSite = CallSite::function(path_of(m), None, "c.rs", 1);
        let n = node_of(&P);
        run(&n, LEARN_CALLS + 1, 1);
        assert_eq!(decision(&P), DECIDED_COUNTED, "short");
        assert_eq!(kind(&n), Kind::Counted);
        // A child created beneath the counting node learns, as its site
        // says (undecided here)…
        static Q: CallSite = CallSite::function(path_of(m), None, "d.rs", 1);
        let child = Node::new();
        start(&child, &Q);
        assert_eq!(state(&child), LEARNING);
        // …until its own long calls decide it timed.
        let learning = node_of(&Q);
        let long = (1e6 * read_cost()) as u64;
        run(&learning, LEARN_CALLS + 1, long);
        assert_eq!(decision(&Q), TIMED);
        assert_eq!(state(&learning), 0);
        // Counting never stops, and counts every call.
        let before = n.c.load().calls;
        let (t, c) = run(&n, 256, 1);
        assert_eq!((t, c), (0, 256));
        assert_eq!(n.c.load().calls, before + 256);
    }

    /// Settling a learning node that its parent caches moves the cache's
    /// kind with it: its calls take the fast path from then on.
    #[test]
    fn a_decided_node_is_recached_with_its_kind() {
        static P: CallSite = CallSite::function(path_of(m), None, "r.rs", 1);
        static S: CallSite = CallSite::function(path_of(m), None, "r.rs", 2);
        let parent = Node::new();
        let n = node_of(&S);
        let site = (&S as *const CallSite).cast_mut();
        parent.cache_child(site, (&n as *const Node).cast_mut(), kind(&n), false);
        let _ = &P;
        assert_eq!(
            parent.mru_site.load(Ordering::Relaxed) as usize & super::super::node::KIND_BITS,
            Kind::Settle as usize
        );
        for _ in 0..=LEARN_CALLS {
            settle(&parent, &n);
            n.record(1, false);
        }
        assert_eq!(kind(&n), Kind::Counted);
        assert_eq!(
            parent.mru_site.load(Ordering::Relaxed) as usize & super::super::node::KIND_BITS,
            Kind::Counted as usize
        );
    }

    /// The decision of `site` after the learning calls of one node: each
    /// of `delta` ticks with `below` marked calls beneath.
    fn learned(site: &'static CallSite, delta: f64, below: u64) -> u8 {
        let n = node_of(site);
        run_below(&n, LEARN_CALLS + 1, delta as u64, below);
        decision(site)
    }

    #[test]
    fn a_few_calls_beneath_are_taken_out_of_the_learning_calls() {
        let r = read_cost();
        // Each call: 10 reads' worth, 3 marked calls beneath it (timed,
        // as far as the node knows: none is in its child cache), whose
        // instrumentation is two reads each: judged by what it costs
        // unmarked (4 reads), it is below the margin.
        static A: CallSite = CallSite::function(path_of(m), None, "f.rs", 1);
        assert_eq!(
            learned(&A, 10.0 * r, 3),
            DECIDED_COUNTED,
            "less its calls beneath"
        );
        // The same calls with nothing beneath lie in the margin: not
        // decided yet.
        static B: CallSite = CallSite::function(path_of(m), None, "f.rs", 2);
        assert_eq!(learned(&B, 10.0 * r, 0), UNDECIDED);
    }

    #[test]
    fn a_parent_of_many_calls_is_timed_whatever_its_median() {
        let r = read_cost();
        // 14 reads' worth a call, 10 marked calls beneath each: less their
        // instrumentation it would be too short, but its calls make more
        // than `PARENT_BELOW` calls beneath them: timed.
        static A: CallSite = CallSite::function(path_of(m), None, "h.rs", 1);
        assert_eq!(learned(&A, 14.0 * r, 10), TIMED);
        // At the threshold exactly, the same; just below it, judged by
        // its median (here: too short).
        static B: CallSite = CallSite::function(path_of(m), None, "h.rs", 2);
        assert_eq!(learned(&B, 1.0, PARENT_BELOW as u64), TIMED);
        static C: CallSite = CallSite::function(path_of(m), None, "h.rs", 3);
        assert_eq!(learned(&C, 1.0, PARENT_BELOW as u64 - 1), DECIDED_COUNTED);
    }

    /// A site near the line learns on before it is decided, and is then
    /// decided by the line: its decision does not hang on the luck of its
    /// first calls.
    #[test]
    fn a_site_in_the_margin_learns_longer_then_is_counted() {
        let r = read_cost();
        static C: CallSite = CallSite::function(path_of(m), None, "g.rs", 1);
        let n = node_of(&C);
        let near = (COUNTED_BELOW * 1.2 * r) as u64;
        run(&n, 4 * LEARN_CALLS, near);
        assert_eq!(decision(&C), UNDECIDED, "within the margin");
        assert_eq!(state(&n), LEARNING);
        run(&n, LEARN_MORE * LEARN_CALLS, near);
        assert_eq!(
            decision(&C),
            DECIDED_COUNTED,
            "above the line, in the margin, at the last"
        );
        // Well above the margin (more than EARLY_TIMED times its edge):
        // timed at once.
        static F: CallSite = CallSite::function(path_of(m), None, "g.rs", 4);
        let n = node_of(&F);
        run(&n, 2 * LEARN_CALLS, (COUNTED_BELOW * 3.2 * r) as u64);
        assert_eq!(decision(&F), TIMED, "well above the margin");
        // Just above the margin: it learns on, then timed at the last.
        static G: CallSite = CallSite::function(path_of(m), None, "g.rs", 5);
        let n = node_of(&G);
        let above = (COUNTED_BELOW * 1.7 * r) as u64;
        run(&n, 4 * LEARN_CALLS, above);
        assert_eq!(decision(&G), UNDECIDED, "just above the margin");
        run(&n, LEARN_MORE * LEARN_CALLS, above);
        assert_eq!(decision(&G), TIMED, "above the margin, at the last");
        // First calls twice as long (a slow turn of the host, a cold
        // start), then in the margin: the first look does not decide it
        // timed (it did when any look above the margin decided: the
        // quickstart's parse_line, timed in 7 of 20 runs).
        static H: CallSite = CallSite::function(path_of(m), None, "g.rs", 6);
        let n = node_of(&H);
        run(&n, LEARN_CALLS, (COUNTED_BELOW * 2.4 * r) as u64);
        assert_eq!(decision(&H), UNDECIDED, "a slow start");
        run(&n, LEARN_MORE * LEARN_CALLS, near);
        assert_eq!(decision(&H), DECIDED_COUNTED, "in the margin, at the last");
        static D: CallSite = CallSite::function(path_of(m), None, "g.rs", 2);
        let n = node_of(&D);
        run(
            &n,
            LEARN_MORE * LEARN_CALLS + 1,
            (COUNTED_BELOW * 0.8 * r) as u64,
        );
        assert_eq!(decision(&D), DECIDED_COUNTED, "below the line, at the last");
        // A few preempted calls among them move nothing.
        static E: CallSite = CallSite::function(path_of(m), None, "g.rs", 3);
        let n = node_of(&E);
        run(&n, 200, (COUNTED_BELOW * 0.3 * r) as u64);
        run(&n, 30, (1e6 * r) as u64);
        run(&n, LEARN_CALLS, (COUNTED_BELOW * 0.3 * r) as u64);
        assert_eq!(decision(&E), DECIDED_COUNTED);
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
