//! Code whose types are inferred from a single candidate impl. Each line
//! failed to compile (E0282, E0283 or E0284) while tickprof's dependency
//! graph held crates with trait impls on std types. Built with and without
//! the `enabled` feature.

#[path = "../../../tests/support/quiet.rs"]
mod quiet;

use tickprof_compat_inference::parse_sum;

#[test]
fn empty_slice_compares_with_an_empty_array_literal() {
    // arrayvec, smallvec: `&[]` has its element type inferred from the
    // only `PartialEq<[_; 0]>` impl for `[u8]`.
    let v: Vec<u8> = Vec::new();
    assert_eq!(&v[..], &[]);
}

#[test]
fn parse_target_is_inferred_from_the_comparison() {
    // `x == "2".parse().unwrap()`: the parse target is inferred from the only
    // `PartialEq<_> for f64` impl (with serde_json linked: `f64: PartialEq<Value>`
    // too).
    let x: f64 = 2.0;
    assert_eq!(x, "2".parse().unwrap());
}

#[test]
fn cast_target_is_inferred_from_the_comparison() {
    // tokio: `2u8 as _` compared with an i32.
    let x: i32 = 2;
    assert_eq!(x, 2u8 as _);
}

#[test]
fn float_round_trips_through_its_display() {
    // ryu: `assert_eq!(f, s.parse().unwrap())` with `f: f64`.
    for f in [0.1_f64, 1e21, 5e-324, 2.5] {
        let s = f.to_string();
        assert_eq!(f, s.parse().unwrap());
    }
}

#[test]
fn marked_calls_are_recorded_when_enabled() {
    // The only test calling the marked function: its count is exact.
    assert_eq!(parse_sum("1, 2,x"), 3.0);
    assert_eq!(parse_sum(""), 0.0);
    let calls = tickprof::report().find("parse_sum").map_or(0, |s| s.calls);
    assert_eq!(calls, if cfg!(feature = "enabled") { 2 } else { 0 });
}
