//! A stand-in for a long-running service: handles requests in a loop for
//! `--seconds N` (default 5), for trying the reports a running program can
//! give:
//!
//! ```text
//! TICKPROF_DUMP_SIGNAL=USR1 cargo run --release --example service -- --seconds 60 &
//! kill -USR1 %1                      # the report so far, on stderr
//! TICKPROF_HTTP=6060 cargo run --release --example service &
//! go tool pprof -seconds 2 -top http://127.0.0.1:6060/debug/pprof/profile
//! TICKPROF_ON_TERM=1 cargo run --release --example service    # then Ctrl-C
//! ```
//!
//! `--planted` adds a site with a known latency distribution, `planted`:
//! once per loop, a call that spins 40 µs, or 4 ms every 20th call (95%
//! and 5%), for checking latency histograms and percentiles
//! (`scripts/prometheus_check.sh`). `--idle N` keeps the process (and its
//! `TICKPROF_HTTP` server) alive N seconds after the load stops, so that
//! scrapers see final counts.

use std::time::{Duration, Instant};
use tickprof::profile;

#[profile]
fn handle(request: u64) -> u64 {
    let parsed = parse(request);
    respond(parsed)
}

#[profile]
fn parse(request: u64) -> u64 {
    (0..200).fold(request, |h, i| h.rotate_left(5) ^ i)
}

#[profile]
fn respond(parsed: u64) -> u64 {
    std::hint::black_box((0..400).fold(parsed, |h, i| h.wrapping_mul(31).wrapping_add(i)))
}

/// The planted latency of call `i`: 4 ms for one call in 20, else 40 µs.
fn planted_latency(i: u64) -> Duration {
    if i % 20 == 19 {
        Duration::from_millis(4)
    } else {
        Duration::from_micros(40)
    }
}

/// Spins for `planted_latency(i)` (spinning, not sleeping: the time is
/// the planted one, not the scheduler's wake-up latency).
#[profile]
fn planted(i: u64) {
    let end = Instant::now() + planted_latency(i);
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

fn main() {
    let (mut seconds, mut idle, mut with_planted) = (5, 0, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--planted" {
            with_planted = true;
            continue;
        }
        match (a.as_str(), args.next().map(|v| v.parse())) {
            ("--seconds", Some(Ok(n))) => seconds = n,
            ("--idle", Some(Ok(n))) => idle = n,
            _ => return eprintln!("usage: service [--seconds N] [--planted] [--idle N]"),
        }
    }
    println!("service: pid {}, running {seconds} s", std::process::id());
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut request = 0u64;
    let mut sum = 0u64;
    let mut planted_calls = 0;
    while Instant::now() < end {
        for _ in 0..100 {
            request += 1;
            sum = sum.wrapping_add(handle(request));
        }
        if with_planted {
            planted(planted_calls);
            planted_calls += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("service: {request} requests, {planted_calls} planted calls ({sum:x})");
    std::thread::sleep(Duration::from_secs(idle));
}
