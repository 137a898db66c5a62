use super::*;
use crate::fail::parse;

#[test]
fn the_stream_is_uniform_enough_and_reproducible() {
    set_seed(42);
    let a: Vec<f64> = (0..1000).map(|_| draw()).collect();
    set_seed(42);
    let b: Vec<f64> = (0..1000).map(|_| draw()).collect();
    assert_eq!(a, b);
    assert!(a.iter().all(|x| (0.0..1.0).contains(x)));
    let below = a.iter().filter(|x| **x < 0.5).count();
    assert!((400..600).contains(&below), "{below}");
}

#[test]
fn counts_and_chains_follow_the_fail_crate() {
    let p = Point {
        actions: parse::actions("2*print->1*yield->off").unwrap(),
    };
    let got: Vec<_> = (0..5).map(|_| task(&p)).collect();
    assert_eq!(
        got,
        [
            Some(Task::Print(None)),
            Some(Task::Print(None)),
            Some(Task::Yield),
            Some(Task::Off),
            Some(Task::Off)
        ]
    );
}
