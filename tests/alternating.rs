//! A marked parent alternating between marked children (parse, validate,
//! parse, …) misses its one-entry child cache on every call and finds the
//! child in the thread's table of recent lookups or its hash map: the counts
//! per call path stay exact, also when two parents share the children and
//! their (parent, child) pairs share table slots.
#![cfg(feature = "enabled")]

use std::hint::black_box;
use tickprof::profile;

macro_rules! children {
    ($($name:ident)*) => {
        $(
            #[profile]
            #[inline(never)]
            fn $name(x: u64) -> u64 {
                black_box(x) + 1
            }
        )*
        const CHILDREN: &[fn(u64) -> u64] = &[$($name),*];
        const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

children!(c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c12 c13 c14 c15);

/// Calls the children in turn, `rounds` times over `k` of them.
#[profile]
#[inline(never)]
fn first_parent(rounds: u64, k: usize) -> u64 {
    let mut acc = 0;
    for i in 0..rounds {
        for f in &CHILDREN[..k] {
            acc = f(acc ^ i);
        }
    }
    acc
}

/// The same children in reverse order, from another parent.
#[profile]
#[inline(never)]
fn second_parent(rounds: u64) -> u64 {
    let mut acc = 0;
    for i in 0..rounds {
        for f in CHILDREN.iter().rev() {
            acc = f(acc ^ i);
        }
        // And a parent that alternates with itself: c0, c0 hits the
        // one-entry cache, c1 after it misses.
        acc = c0(acc);
    }
    acc
}

#[test]
fn counts_per_path_are_exact_when_a_parent_alternates_between_children() {
    std::thread::spawn(|| {
        for k in [2, 4, 16] {
            black_box(first_parent(1_000, k));
        }
        black_box(second_parent(500));
        black_box(first_parent(7, 16));
    })
    .join()
    .unwrap();
    let r = tickprof::report();
    for (i, name) in NAMES.iter().enumerate() {
        let s = r.find(&format!("::{name}")).expect(name);
        // first_parent: 1,000 rounds for k = 2, 4 and 16 (child i in
        // those with k > i), then 7 rounds over all 16.
        let first = [2u64, 4, 16].iter().filter(|&&k| i < k as usize).count() as u64 * 1_000 + 7;
        let second = 500 + if i == 0 { 500 } else { 0 };
        let edge = |from: &str| {
            s.callers
                .iter()
                .find(|e| e.name.ends_with(from))
                .map_or(0, |e| e.calls)
        };
        assert_eq!(edge("::first_parent"), first, "{name} from first_parent");
        assert_eq!(edge("::second_parent"), second, "{name} from second_parent");
        assert_eq!(s.calls, first + second, "{name}");
    }
    assert_eq!(r.find("::first_parent").unwrap().calls, 4);
    assert_eq!(r.find("::second_parent").unwrap().calls, 1);
}
