// A small log-analysis program, profiled with tickprof.
//
// Run it with `cargo run --release --example quickstart`; the report is
// printed to stderr when the program exits.

use std::collections::HashMap;
use tickprof::{prof_scope, profile};

/// One parsed log line.
struct Record<'a> {
    level: &'a str,
    path: &'a str,
    millis: u32,
}

/// Makes `n` synthetic log lines, deterministically.
#[profile]
fn generate(n: usize) -> Vec<String> {
    let paths = [
        "/",
        "/login",
        "/api/items",
        "/api/items/42",
        "/static/app.js",
    ];
    let levels = ["INFO", "INFO", "INFO", "WARN", "ERROR"];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            format!(
                "2026-11-22T10:{:02}:{:02} {} {} {}ms",
                (i / 60) % 60,
                i % 60,
                levels[(seed % 5) as usize],
                paths[((seed >> 8) % 5) as usize],
                (seed >> 16) % 900 + 1
            )
        })
        .collect()
}

/// Splits one line into its fields.
#[profile]
fn parse_line(line: &str) -> Option<Record<'_>> {
    let mut it = line.split(' ');
    let _time = it.next()?;
    let level = it.next()?;
    let path = it.next()?;
    let millis = it.next()?.strip_suffix("ms")?.parse().ok()?;
    Some(Record {
        level,
        path,
        millis,
    })
}

/// Whether a record is an error: a call too short for the clock to time,
/// so tickprof counts it instead (a *counted* site, its times marked `~`).
#[profile]
fn is_error(r: &Record<'_>) -> bool {
    r.level == "ERROR"
}

/// Per-path latency statistics.
#[derive(Default)]
struct Stats {
    by_path: HashMap<String, Vec<u32>>,
    errors: usize,
}

impl Stats {
    /// Adds one record.
    #[profile]
    fn add(&mut self, r: &Record<'_>) {
        if is_error(r) {
            self.errors += 1;
        }
        self.by_path
            .entry(r.path.to_owned())
            .or_default()
            .push(r.millis);
    }

    /// The 50th and 99th percentile latency of every path, slowest first.
    #[profile]
    fn percentiles(&mut self) -> Vec<(String, u32, u32)> {
        let mut out = Vec::new();
        for (path, v) in &mut self.by_path {
            prof_scope!("sort");
            v.sort_unstable();
            out.push((path.clone(), v[v.len() / 2], v[v.len() * 99 / 100]));
        }
        out.sort_by_key(|row| std::cmp::Reverse(row.2));
        out
    }
}

/// Parses and aggregates one chunk of lines.
#[profile]
fn analyse(lines: &[String]) -> Stats {
    let mut stats = Stats::default();
    for line in lines {
        if let Some(r) = parse_line(line) {
            stats.add(&r);
        }
    }
    stats
}

fn main() {
    let lines = generate(400_000);
    // Two worker threads, each analysing half of the log.
    let (a, b) = lines.split_at(lines.len() / 2);
    let (mut s1, s2) = std::thread::scope(|s| {
        let h1 = s.spawn(|| analyse(a));
        let h2 = s.spawn(|| analyse(b));
        (h1.join().unwrap(), h2.join().unwrap())
    });
    {
        prof_scope!("merge");
        for (path, v) in s2.by_path {
            s1.by_path.entry(path).or_default().extend(v);
        }
        s1.errors += s2.errors;
    }
    let table = s1.percentiles();
    println!("{} lines, {} errors", lines.len(), s1.errors);
    for (path, p50, p99) in table {
        println!("{path:<16} p50 {p50:>4} ms   p99 {p99:>4} ms");
    }
}
