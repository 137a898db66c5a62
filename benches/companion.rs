//! tickprof as a companion to criterion: the per-function breakdown of what
//! one benchmark spent its time on.
//!
//! Run: `cargo bench --bench companion`. The pattern: take a snapshot before
//! `bench_function`, another after, and print the difference — the profile
//! of just that benchmark's iterations (warm-up included). With
//! `tickprof::Alloc` installed as the global allocator (two lines, below),
//! the difference also counts each function's allocations and bytes.
//!
//! With `cargo bench --bench companion --features
//! tickprof-testsuite/criterion -- --profile-time 1`, criterion profiles
//! each benchmark instead of measuring it, through
//! `tickprof::criterion::Profiler`: `tickprof.{txt,folded,svg,json,pb.gz}` in
//! `target/criterion/<benchmark>/profile/` (scripts/ci_criterion.sh checks
//! them).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use tickprof::{profile, TextOptions};

#[global_allocator]
static A: tickprof::Alloc = tickprof::Alloc::system();

#[profile]
fn tokenize(line: &str) -> Vec<&str> {
    line.split([' ', ',', '='])
        .filter(|t| !t.is_empty())
        .collect()
}

#[profile]
fn parse_numbers(tokens: &[&str]) -> Vec<u64> {
    tokens.iter().filter_map(|t| t.parse().ok()).collect()
}

#[profile]
fn checksum(values: &[u64]) -> u64 {
    values.iter().fold(0xcbf2_9ce4_8422_2325, |h, v| {
        (h ^ v).wrapping_mul(0x100_0000_01b3)
    })
}

#[profile]
fn pipeline(lines: &[String]) -> u64 {
    let mut acc = 0;
    for line in lines {
        let tokens = tokenize(line);
        let values = parse_numbers(&tokens);
        acc ^= checksum(&values);
    }
    acc
}

fn bench(c: &mut Criterion) {
    let lines: Vec<String> = (0..200)
        .map(|i| format!("id={i}, x={}, y={}, label=item{i}", i * 7, i * 13))
        .collect();

    let before = tickprof::snapshot();
    c.bench_function("pipeline", |b| b.iter(|| pipeline(black_box(&lines))));
    let profile = &tickprof::snapshot() - &before;

    eprintln!("\n-- tickprof: where `pipeline` spent its time --");
    eprint!(
        "{}",
        profile.text(&TextOptions::default().with_top(Some(10)))
    );
    if let Some(p) = profile.find("pipeline") {
        let calls = p.calls.max(1);
        eprintln!(
            "-- per `pipeline` call: {} allocations, {} bytes",
            p.alloc.allocs / calls,
            p.alloc.bytes / calls
        );
    }

    let line = &lines[7];
    c.bench_function("tokenize", |b| b.iter(|| tokenize(black_box(line))));
}

/// criterion's settings, with tickprof's profiler when the testsuite's
/// `criterion` feature is on.
fn config() -> Criterion {
    let c = Criterion::default();
    #[cfg(feature = "criterion")]
    let c = c.with_profiler(tickprof::criterion::Profiler::new());
    c
}

criterion_group! {
    name = benches;
    config = config()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
