//! Accuracy for tiny functions and known trees, with overhead compensation.
//!
//! Each case runs several rounds, each measured with snapshots, and checks
//! the median error over the rounds, so one preempted round on a busy
//! machine does not decide the result. `cargo bench --bench accuracy`
//! prints the same errors from a release build.
#![cfg(feature = "enabled")]

#[path = "support/quiet.rs"]
mod quiet;

#[path = "support/accuracy_cases.rs"]
mod cases;

use std::sync::Mutex;

/// The cases share the CPU: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const ROUNDS: usize = 5;

fn print(case: &str, e: &cases::LeafErrors) {
    println!(
        "{case}: true leaf {:.1} ns; parent error compensated {:+.1}% raw {:+.1}%; leaf mean compensated {:.2}x raw {:.2}x; leaf resolved: {}",
        e.leaf_ns,
        e.parent * 100.0,
        e.parent_raw * 100.0,
        e.leaf_ratio,
        e.leaf_raw_ratio,
        e.leaf_resolved
    );
}

#[test]
fn case_a_a_dependent_chain_of_20_ns_leaf_calls_from_a_marked_parent() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let e = cases::leaf_case(cases::Leaf::Chain, 1_000_000, ROUNDS);
    print("A", &e);
    assert!(e.broken.is_empty(), "{:?}", e.broken);
    // The targets (15% quiet, 25% under a hog, the leaf's mean
    // within 2x) are measured by `cargo bench --bench accuracy`; this
    // shared, often loaded machine asserts what holds in every run:
    // compensation removes a large part of the raw error (raw is about
    // +100%). The leaf's own mean is not asserted: in a dependent chain the
    // end clock read does not wait for the leaf's work to retire, so a
    // leaf measures 0.2-1x its true cost depending on the machine's state.
    assert!(e.parent.abs() < 0.75 * e.parent_raw.abs(), "{e:?}");
}

#[test]
fn case_b_overlapping_4_ns_leaf_calls_are_flagged_unresolved() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let e = cases::leaf_case(cases::Leaf::Overlap, 1_000_000, ROUNDS);
    print("B", &e);
    assert!(e.broken.is_empty(), "{:?}", e.broken);
    assert!(!e.leaf_resolved, "a ~4 ns leaf must be flagged: {e:?}");
    assert!(e.parent_resolved, "{e:?}");
    // The target (the parent within 2x of the unmarked loop) is
    // measured by `cargo bench --bench accuracy`; asserted here: the
    // compensated figure is nearer the truth than the raw one.
    assert!(e.parent.abs() < e.parent_raw.abs(), "{e:?}");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_three_level_tree_of_known_cost_within_three_percent() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let errors = cases::spin_tree(100, ROUNDS);
    let mut failures = Vec::new();
    for (name, what, e, raw) in &errors {
        println!(
            "{name} {what}: compensated {:+.2}%, raw {:+.2}%",
            e * 100.0,
            raw * 100.0
        );
        // 3% where a call lasts 10 µs or more. At 1 µs the guard's own cost
        // for this body (it reads the clock in a loop) differs from the
        // calibrated one by ~30 ns on the Intel Xeon host (about +3% raw
        // +4%): 5% there (`cargo bench --bench accuracy` prints the exact
        // errors).
        let bound = if name.ends_with("level3") { 0.05 } else { 0.03 };
        if e.abs() > bound {
            failures.push(format!("{name} {what} off by {:.2}%", e * 100.0));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn the_report_states_the_calibrated_costs_and_the_overhead_share() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    cases::leaf_case(cases::Leaf::Chain, 1000, 1);
    let r = tickprof::report();
    // The inner cost may calibrate to 0 when the body hides it.
    assert!(r.run.overhead_inner_ticks >= 0.0);
    assert!(r.run.overhead_call_ticks > 0.0);
    assert!(r.run.overhead_call_ticks >= r.run.overhead_inner_ticks);
    let ns = r.run.overhead_call_ticks * 1e9 / r.run.frequency_hz;
    assert!((r.run.overhead_call_ns - ns).abs() < 0.01);
    let calls: u64 = r.sites.iter().map(|s| s.calls).sum();
    // The share counts each call at the typical cost (around a ~10 ns
    // body), at least the empty-body cost subtracted.
    let share = calls as f64 * r.run.overhead_call_ns / r.run.wall_ns as f64;
    assert!(
        r.run.overhead_share >= 0.99 * share.min(1.0) && r.run.overhead_share <= 1.0,
        "{} vs {share}",
        r.run.overhead_share
    );
    let text = r.to_text();
    assert!(text.contains("overhead per marked call:"), "{text}");
    assert!(text.contains("times are compensated"), "{text}");
}
