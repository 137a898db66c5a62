//! A marked function whose body is pure arithmetic (a ~40 ns dependent
//! multiply chain, counted) called a million times from a marked parent:
//! the parent's measured total must stay near the unmarked loop's time.
//! Without the barriers `#[profile]` puts around a body, an optimised build
//! computed the chain after the exit's clock read, inside the
//! instrumentation's window, and the parent read about 1% of the loop.
//! CI runs it in a release build (`cargo run --release --example
//! pure_body`): exit 1 when the parent reads under half the loop.

use std::hint::black_box;
use std::time::Instant;

#[inline(always)]
fn work(x: u64) -> u64 {
    let mut h = black_box(x);
    for _ in 0..28 {
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(7) ^ x;
    }
    h
}

#[inline(never)]
#[tickprof::profile]
fn leaf(x: u64) -> u64 {
    work(x)
}

#[tickprof::profile]
fn chain(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = leaf(acc ^ i);
    }
    acc
}

#[inline(never)]
fn plain_leaf(x: u64) -> u64 {
    work(x)
}

fn main() {
    const N: u64 = 1_000_000;
    let (mut truth, mut seen) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let mut acc = 0u64;
        for i in 0..N {
            acc = plain_leaf(acc ^ i);
        }
        black_box(acc);
        truth.push(t.elapsed().as_nanos() as f64);
        let before = tickprof::snapshot();
        black_box(chain(N));
        let r = &tickprof::snapshot() - &before;
        seen.push(r.find("::chain").map_or(0.0, |s| s.total_ns as f64));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratio = median(seen) / median(truth);
    println!("the marked parent's measured total / the unmarked loop: {ratio:.3}");
    if ratio < 0.5 {
        eprintln!("pure_body: the marked body was timed outside its guard");
        std::process::exit(1);
    }
}
