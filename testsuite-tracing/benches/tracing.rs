//! Cost of the tracing bridge per span, against `#[profile]` and against
//! tracing's own timing layer.
//!
//! Run: `cargo bench -p tickprof-testsuite-tracing --bench tracing`. The variants run interleaved, round
//! after round, in one process; each round times a batch of calls. Printed:
//! the median ns per call over the rounds, the spread (min–max of the
//! rounds), and the median minus the unmarked function's.
//!
//! - `unmarked`: the bare function;
//! - `#[profile]`: the same function marked;
//! - `instrument, registry only`: `#[tracing::instrument]` with a
//!   `tracing_subscriber` registry and no layer (tracing's own floor);
//! - `instrument + tickprof Layer`: the bridge;
//! - `instrument + fmt close events`: tracing-subscriber's fmt layer
//!   timing each span (`FmtSpan::CLOSE`, `time.busy`/`time.idle`), written
//!   to `io::sink`.

use std::hint::black_box;
use std::time::Instant;
use tracing::Dispatch;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::prelude::*;

/// Calls per timed batch.
const BATCH: u64 = 20_000;
/// Interleaved rounds; the median is kept.
const ROUNDS: usize = 15;

#[inline(never)]
fn unmarked(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
#[tickprof::profile]
fn marked(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
#[tracing::instrument(skip_all)]
fn instrumented(x: u64) -> u64 {
    black_box(x) + 1
}

/// A variant's label, function and the subscriber it runs under.
type Variant<'a> = (&'static str, fn(u64) -> u64, Option<&'a Dispatch>);

fn batch(f: fn(u64) -> u64, dispatch: Option<&Dispatch>) -> f64 {
    let run = || {
        let t = Instant::now();
        let mut s = 0;
        for i in 0..BATCH {
            s += f(i);
        }
        black_box(s);
        t.elapsed().as_nanos() as f64 / BATCH as f64
    };
    match dispatch {
        Some(d) => tracing::dispatcher::with_default(d, run),
        None => run(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let registry = Dispatch::new(tracing_subscriber::registry());
    let bridge =
        Dispatch::new(tracing_subscriber::registry().with(tickprof::tracing::Layer::new()));
    let fmt = Dispatch::new(
        tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::sink)
                .with_span_events(FmtSpan::CLOSE),
        ),
    );
    let variants: [Variant<'_>; 5] = [
        ("unmarked", unmarked, None),
        ("#[profile]", marked, None),
        ("instrument, registry only", instrumented, Some(&registry)),
        ("instrument + tickprof Layer", instrumented, Some(&bridge)),
        ("instrument + fmt close events", instrumented, Some(&fmt)),
    ];
    let mut samples = vec![Vec::with_capacity(ROUNDS); variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, f, d)) in variants.iter().enumerate() {
            samples[i].push(batch(*f, *d));
        }
    }
    println!("\n== tracing bridge cost (median of {ROUNDS} interleaved rounds of {BATCH} calls)");
    println!(
        "{:<32} {:>10} {:>20} {:>14}",
        "variant", "ns/call", "spread (min-max)", "- unmarked"
    );
    let base = median(samples[0].clone());
    for ((name, _, _), s) in variants.iter().zip(samples) {
        let lo = s.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = s.iter().copied().fold(0.0, f64::max);
        let m = median(s);
        println!(
            "{name:<32} {m:>10.1} {:>20} {:>14.1}",
            format!("{lo:.1}-{hi:.1}"),
            m - base
        );
    }
}
