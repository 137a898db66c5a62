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

fn main() {
    let mut seconds = 5;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().map(|v| v.parse())) {
            ("--seconds", Some(Ok(n))) => seconds = n,
            _ => return eprintln!("usage: service [--seconds N]"),
        }
    }
    println!("service: pid {}, running {seconds} s", std::process::id());
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut request = 0u64;
    let mut sum = 0u64;
    while Instant::now() < end {
        for _ in 0..100 {
            request += 1;
            sum = sum.wrapping_add(handle(request));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("service: {request} requests ({sum:x})");
}
