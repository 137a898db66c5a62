//! The accuracy cases' reports hold their invariants and exact counts.
//!
//! The cases are those of `cargo bench --bench accuracy`, which measures
//! and prints their errors against the unmarked code (the accuracy figures
//! live there: this machine is shared and its speed shifts, so a test that
//! asserted a timing would fail by chance). Here each case asserts what
//! holds whatever the machine's load: exact call counts, self <= total,
//! min <= mean <= max, a child's total within its parent's (raw and
//! compensated). Whether a leaf is flagged as below the clock's resolution
//! depends on the clock's resolution measured on the loaded machine: the rule is
//! unit-tested in the runtime (`resolution_looks_at_the_shortest_call_then_the_mean`)
//! and the flags of these cases are printed by the bench.
#![cfg(feature = "enabled")]

use crate::support::accuracy_cases as cases;

const ROUNDS: usize = 5;

#[test]
fn case_a_a_dependent_chain_of_20_ns_leaf_calls_keeps_its_invariants() {
    // The cases share the CPU: one at a time, and none beside them.
    let _serial = crate::support::alone();
    let e = cases::leaf_case(cases::Leaf::Chain, 1_000_000, ROUNDS);
    assert!(e.broken.is_empty(), "{:?}", e.broken);
    // The leaf's body is pure arithmetic: unless the marked function keeps
    // it between its guard's entry and exit, the compiler computes it
    // after the exit's clock read, inside the instrumentation, and the
    // parent's measured total falls to about 1% of the loop's time (it
    // did). Half is far from both.
    assert!(
        e.parent > -0.5,
        "the parent's measured total is {:+.1}% off the unmarked loop's",
        e.parent * 100.0
    );
}

#[test]
fn case_b_overlapping_4_ns_leaf_calls_keep_their_invariants() {
    // The cases share the CPU: one at a time, and none beside them.
    let _serial = crate::support::alone();
    let e = cases::leaf_case(cases::Leaf::Overlap, 1_000_000, ROUNDS);
    assert!(e.broken.is_empty(), "{:?}", e.broken);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_three_level_tree_has_exact_counts_and_nested_totals() {
    // The cases share the CPU: one at a time, and none beside them.
    let _serial = crate::support::alone();
    let before = tickprof::snapshot();
    let errors = cases::spin_tree(20, 2);
    let r = &tickprof::snapshot() - &before;
    assert_eq!(errors.len(), 6, "{errors:?}");
    let names = ["::tree::level1", "::tree::level2", "::tree::level3"];
    // 2 rounds of 20 top-level calls, each calling 5 children, each 5.
    let expected = [40, 200, 1000];
    let rows: Vec<_> = names
        .iter()
        .map(|n| r.find(n).expect("the tree ran"))
        .collect();
    for (s, want) in rows.iter().zip(expected) {
        assert_eq!(s.calls, want, "{}", s.name);
        assert!(s.self_ns <= s.total_ns, "{s:?}");
        assert!(s.raw_self_ns <= s.raw_total_ns, "{s:?}");
        assert!(s.min_ns as f64 <= s.mean_ns + 0.5, "{s:?}");
        assert!(s.mean_ns <= s.max_ns as f64 + 0.5, "{s:?}");
    }
    for pair in rows.windows(2) {
        assert!(pair[1].total_ns <= pair[0].total_ns, "{pair:?}");
        assert!(pair[1].raw_total_ns <= pair[0].raw_total_ns, "{pair:?}");
    }
}

#[test]
fn the_report_states_the_measured_instrumentation_and_its_share() {
    // The cases share the CPU: one at a time, and none beside them.
    let _serial = crate::support::alone();
    // Long enough for the sampler (1,000 looks a second) to find the
    // instrumentation of a million marked calls many times: until it is
    // measured (found in enough periods), not only found once (on a busy
    // host a report came between the two: overhead_call_ticks 0).
    let mut r = tickprof::report();
    for _ in 0..20 {
        cases::leaf_case(cases::Leaf::Chain, 1_000_000, 1);
        r = tickprof::report();
        if r.run.overhead_call_ticks > 0.0 {
            break;
        }
    }
    assert!(r.run.sampled_ns > 0, "{:?}", r.run);
    assert!(r.run.instrumentation_ns <= r.run.sampled_ns);
    let ns = r.run.overhead_call_ticks * 1e9 / r.run.frequency_hz;
    assert!((r.run.overhead_call_ns - ns).abs() < 0.01);
    let text = r.to_text();
    assert!(
        text.contains("instrumentation measured by sampling every thread 1000 times a second"),
        "{text}"
    );
    if r.run.overhead_call_ticks == 0.0 {
        // Found in too few sampling periods to measure: a host busy
        // enough (two CPU hogs on two cores) leaves the sampler and this
        // thread too little time together. The header says so, and
        // takes out only each call's calibrated cost.
        assert!(
            text.contains("fewer samples than it takes to measure it"),
            "{text}"
        );
        return;
    }
    assert!(r.run.instrumentation_ns > 0, "{:?}", r.run);
    let share = r.run.instrumentation_ns as f64 / r.run.sampled_ns as f64;
    assert!(
        (r.run.overhead_share - share).abs() < 0.01,
        "{} vs {share}",
        r.run.overhead_share
    );
    assert!(r.run.compensated);
    assert!(text.contains("taken out of every time below"), "{text}");
}
