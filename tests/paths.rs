//! Timing accuracy, early return, `?`, and panics.
#![cfg(feature = "enabled")]

use std::time::{Duration, Instant};
use tickprof::profile;

use crate::support::spin as spin_support;
use spin_support::spin;

#[profile]
fn spins(d: Duration) {
    spin(d);
}

#[test]
fn a_spinning_function_is_reported_between_its_spins_and_the_wall_time() {
    let mut measured = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        spins(Duration::from_millis(3));
        measured += t.elapsed();
    }
    let r = tickprof::report();
    let s = r.find("::spins").expect("spins ran");
    assert_eq!(s.calls, 20);
    let reported = s.total_ns as f64;
    let truth = measured.as_nanos() as f64;
    // Bounds that hold whatever the machine's load (the percentage error
    // against the unmarked code is `cargo bench --bench accuracy`'s): at
    // least the 60 ms the calls spun, at most `Instant`'s time around
    // them; 2% for the tick frequency's calibration.
    let spun = 20.0 * 3e6;
    assert!(
        reported >= 0.98 * spun && reported <= truth / 0.98,
        "reported {reported} ns, spun {spun} ns, measured {truth} ns"
    );
    assert!(s.min_ns as f64 >= 3e6 * 0.95, "min {}", s.min_ns);
}

#[profile]
fn early(x: u32) -> u32 {
    if x == 0 {
        return 100;
    }
    spin(Duration::from_micros(50));
    x
}

#[profile]
fn question(s: &str) -> Result<u32, std::num::ParseIntError> {
    let v: u32 = s.parse()?;
    Ok(v * 2)
}

#[profile]
fn explode(x: u32) -> u32 {
    if x > 1 {
        panic!("boom");
    }
    x
}

#[test]
fn early_return_error_path_and_panic_are_each_timed_and_counted() {
    assert_eq!(early(0), 100);
    assert_eq!(early(3), 3);
    assert_eq!(question("21"), Ok(42));
    assert!(question("x").is_err());
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| explode(5));
    std::panic::set_hook(prev);
    assert!(caught.is_err());
    assert_eq!(explode(1), 1);

    let r = tickprof::report();
    let e = r.find("::early").unwrap();
    assert_eq!(e.calls, 2);
    // The spinning call lasts 50 us or more; the early return is counted
    // (its duration is not asserted: a preemption can stretch any call).
    assert!(e.min_ns <= e.max_ns && e.max_ns >= 50_000, "{e:?}");
    let q = r.find("::question").unwrap();
    assert_eq!(q.calls, 2);
    assert!(q.total_ns > 0);
    let x = r.find("::explode").unwrap();
    assert_eq!(x.calls, 2);
    assert_eq!(x.unwound, 1);
    assert!(x.max_ns > 0);
}

static RAW: tickprof::__private::CallSite = tickprof::__private::CallSite::function(
    tickprof::__private::path_of(raw_marker),
    Some("raw deltas"),
    file!(),
    line!(),
);
fn raw_marker() {}

#[test]
fn reversed_and_oversized_deltas_are_counted_and_not_added() {
    use tickprof::__private::record_raw;
    record_raw(&RAW, 1000);
    record_raw(&RAW, 3000);
    record_raw(&RAW, 0u64.wrapping_sub(500)); // end 500 ticks before start
    record_raw(&RAW, u64::MAX / 4); // far above the 1 h default maximum
    let r = tickprof::report();
    let s = r.site("raw deltas").unwrap();
    assert_eq!(s.calls, 4);
    assert_eq!(s.reversed, 1);
    assert_eq!(s.oversized, 1);
    assert_eq!(s.total_ticks, 4000);
    assert_eq!(s.min_ticks, 1000);
    assert_eq!(s.max_ticks, 3000);
    // Only the two accepted deltas count, raw and measured (no marked
    // call inside them: no instrumentation to take out).
    let ns = |ticks: f64| ticks * 1e9 / r.run.frequency_hz;
    assert!((s.raw_total_ns as f64 - ns(4000.0)).abs() <= 1.0, "{s:?}");
    assert!(
        (s.compensated_total_ns as f64 - ns(4000.0)).abs() <= 1.0,
        "{s:?}"
    );
    assert!((s.mean_ns - s.total_ns as f64 / 2.0).abs() <= 1.0, "{s:?}");
}
