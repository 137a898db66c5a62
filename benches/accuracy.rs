//! Accuracy with the measured instrumentation taken out ("measured") and
//! raw: prints the errors of the cases `tests/accuracy.rs` checks, of case
//! D (a parent alternating a ~20 ns leaf and a ~2 µs child) and of case E
//! (a parent's median call with 40 marked calls beneath each), and whether
//! each case's sites were timed or counted. Run: `cargo bench --bench
//! accuracy`; `ACCURACY_BUSY=1` runs a spinning thread per core meanwhile.

#[path = "../tests/support/accuracy_cases.rs"]
mod cases;

#[path = "support/accuracy_extra.rs"]
mod extra;

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let busy = extra::Busy::from_env();
    println!(
        "{}; TICKPROF_TIME={}",
        match busy.threads() {
            0 => "quiet (ACCURACY_BUSY=1 for a busy loop on every core)".to_owned(),
            n => format!("busy: {n} spinning threads (ACCURACY_BUSY=1)"),
        },
        std::env::var("TICKPROF_TIME").unwrap_or_else(|_| "unset (the default)".to_owned())
    );
    let r = tickprof::report();
    println!(
        "clock resolution {:.1} ns ({:.0} ticks); TSC {:.3} GHz; sampler {} per second",
        r.run.overhead_inner_ns,
        r.run.overhead_inner_ticks,
        r.run.frequency_hz / 1e9,
        r.run.sample_hz
    );
    for (case, title, leaf) in [
        (
            cases::Leaf::Chain,
            "A: a ~20 ns leaf, calls in one dependent chain",
            "::acc_leaf",
        ),
        (
            cases::Leaf::Overlap,
            "B: a ~4 ns leaf, calls overlapping",
            "::acc_small",
        ),
    ] {
        let e = cases::leaf_case(case, 1_000_000, 11);
        println!("\n== {title}, x 1,000,000 from a marked parent, median of 11 rounds");
        println!(
            "true leaf cost (uninstrumented loop / calls): {:.1} ns",
            e.leaf_ns
        );
        println!(
            "parent total vs uninstrumented loop: measured {:+.1}%, raw {:+.1}%",
            e.parent * 100.0,
            e.parent_raw * 100.0
        );
        println!(
            "leaf mean / true cost:               measured {:.2}x, raw {:.2}x",
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
        println!("leaf: {}", extra::timing(&tickprof::report(), leaf));
    }
    case_d();
    case_e();
    #[cfg(target_arch = "x86_64")]
    {
        println!("\n== C: 3-level spin tree (100 us -> 5 x 10 us -> 5 x 1 us), 100 calls, median of 11 rounds");
        for (name, what, c, raw) in cases::spin_tree(100, 11) {
            println!(
                "{name:<16} {what:<5} measured {:+.2}%  raw {:+.2}%",
                c * 100.0,
                raw * 100.0
            );
        }
    }
    let r = tickprof::report();
    drop(busy);
    println!(
        "\ninstrumentation share of this run, measured: {:.1}%",
        r.run.overhead_share * 100.0
    );
}

/// Case E: the parent's median call against its unmarked twin's median call,
/// and its mean against the twin's.
fn case_e() {
    let e = extra::case_e(5_000, 11);
    println!("\n== E: a parent of ~2 us making 40 marked ~20 ns calls beneath each call, x 5,000, median of 11 rounds");
    println!(
        "true cost per call (uninstrumented twin): mean {:.1} ns, median {:.1} ns",
        e.truth_ns, e.truth_p50_ns
    );
    println!(
        "parent p50 vs true median: measured {:+.2}%, raw {:+.2}%",
        e.p50.0 * 100.0,
        e.p50.1 * 100.0
    );
    println!(
        "parent mean vs true mean:  measured {:+.2}%, raw {:+.2}%",
        e.mean.0 * 100.0,
        e.mean.1 * 100.0
    );
    println!(
        "kid: {}; invariants: {}",
        extra::timing(&tickprof::report(), "::e_kid"),
        if e.broken.is_empty() {
            "hold".to_owned()
        } else {
            format!("{:?}", e.broken)
        }
    );
}

/// Case D: prints the child's and the parent's errors and how the leaf
/// and the child were recorded.
fn case_d() {
    let e = extra::case_d(20_000, 11);
    println!(
        "\n== D: a parent alternating a ~20 ns leaf and a ~2 us child, x 20,000 each, median of 11 rounds"
    );
    println!(
        "true costs (uninstrumented loops): child {:.1} ns, leaf {:.1} ns",
        e.child_ns, e.leaf_ns
    );
    println!(
        "parent total vs uninstrumented loop: measured {:+.2}%, raw {:+.2}%",
        e.parent.0 * 100.0,
        e.parent.1 * 100.0
    );
    println!(
        "child mean vs true cost:             measured {:+.2}%, raw {:+.2}%",
        e.child.0 * 100.0,
        e.child.1 * 100.0
    );
    println!(
        "leaf mean / true cost:               measured {:.2}x, raw {:.2}x",
        e.leaf.0, e.leaf.1
    );
    let r = tickprof::report();
    println!(
        "leaf: {}; child: {}; invariants: {}",
        extra::timing(&r, "::d_leaf"),
        extra::timing(&r, "::d_child"),
        if e.broken.is_empty() {
            "hold".to_owned()
        } else {
            format!("{:?}", e.broken)
        }
    );
}
