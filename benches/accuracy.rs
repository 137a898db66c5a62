//! Accuracy with and without overhead compensation: prints the exact errors
//! of the cases `tests/accuracy.rs` checks. Run: `cargo bench --bench accuracy`.

#[path = "../tests/support/accuracy_cases.rs"]
mod cases;

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let r = tickprof::report();
    println!(
        "calibration: inner {:.1} ns ({:.0} ticks), call {:.1} ns ({:.0} ticks); TSC {:.3} GHz",
        r.run.overhead_inner_ns,
        r.run.overhead_inner_ticks,
        r.run.overhead_call_ns,
        r.run.overhead_call_ticks,
        r.run.frequency_hz / 1e9
    );
    for (case, title) in [
        (
            cases::Leaf::Chain,
            "A: a ~20 ns leaf, calls in one dependent chain",
        ),
        (cases::Leaf::Overlap, "B: a ~4 ns leaf, calls overlapping"),
    ] {
        let e = cases::leaf_case(case, 1_000_000, 11);
        println!("\n== {title}, x 1,000,000 from a marked parent, median of 11 rounds");
        println!(
            "true leaf cost (uninstrumented loop / calls): {:.1} ns",
            e.leaf_ns
        );
        println!(
            "parent total vs uninstrumented loop: compensated {:+.1}%, raw {:+.1}%",
            e.parent * 100.0,
            e.parent_raw * 100.0
        );
        println!(
            "leaf mean / true cost:               compensated {:.2}x, raw {:.2}x",
            e.leaf_ratio, e.leaf_raw_ratio
        );
        println!(
            "leaf resolved: {}; parent resolved: {}; invariants: {}",
            e.leaf_resolved,
            e.parent_resolved,
            if e.broken.is_empty() {
                "hold".to_owned()
            } else {
                format!("{:?}", e.broken)
            }
        );
    }
    #[cfg(target_arch = "x86_64")]
    {
        println!("\n== C: 3-level spin tree (100 us -> 5 x 10 us -> 5 x 1 us), 100 calls, median of 11 rounds");
        for (name, what, c, raw) in cases::spin_tree(100, 11) {
            println!(
                "{name:<16} {what:<5} compensated {:+.2}%  raw {:+.2}%",
                c * 100.0,
                raw * 100.0
            );
        }
    }
    let r = tickprof::report();
    println!(
        "\nestimated instrumentation share of this run: {:.1}%",
        r.run.overhead_share * 100.0
    );
}
