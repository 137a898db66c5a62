//! `tickprof::reset()` zeroes every site (its own binary: it clears the
//! whole process's figures).
#![cfg(feature = "enabled")]

use tickprof::profile;

#[profile]
fn before_reset(x: u64) -> u64 {
    x + 1
}

#[test]
fn reset_zeroes_every_site_and_recording_continues() {
    let _turn = crate::support::alone();
    for i in 0..5 {
        before_reset(i);
    }
    assert_eq!(
        tickprof::report().find("::before_reset").map(|s| s.calls),
        Some(5)
    );
    let wall_before = tickprof::report().run.wall_ns;
    tickprof::reset();
    let r = tickprof::report();
    assert!(
        r.find("::before_reset").is_none(),
        "a site with no calls since the reset is not listed"
    );
    assert!(r.run.wall_ns < wall_before, "the run's wall clock restarts");
    before_reset(9);
    let r = tickprof::report();
    let s = r.find("::before_reset").unwrap();
    assert_eq!(s.calls, 1);
    assert_eq!(s.callers.len(), 1);
}
