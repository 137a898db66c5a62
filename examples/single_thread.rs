//! A profiled program that starts no thread: it runs where threads do not
//! exist (wasm32-wasip1) and makes the same calls on every target, so its
//! report's `calls` column can be compared from one platform to another
//! (`scripts/ci_platforms.sh` does). It counts the words of a generated
//! text: functions, a method, a scope, a generic function, and one mark
//! that never runs (the coverage line says so).
//!
//! `cargo run --release --example single_thread`; the report is printed to
//! stderr when the program exits.

use std::collections::BTreeMap;
use tickprof::{prof_scope, profile};

/// `n` lines of words drawn from a small vocabulary, deterministically.
#[profile]
fn text(n: usize) -> Vec<String> {
    const WORDS: [&str; 8] = [
        "tick", "tock", "mark", "call", "site", "time", "path", "node",
    ];
    let mut seed: u32 = 0x9e37_79b9;
    (0..n)
        .map(|_| {
            let len = 3 + (seed % 5) as usize;
            let mut line = Vec::with_capacity(len);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                line.push(WORDS[(seed % 8) as usize]);
            }
            line.join(" ")
        })
        .collect()
}

/// Word counts.
#[derive(Default)]
struct Counts(BTreeMap<String, u64>);

impl Counts {
    /// Counts one word.
    #[profile]
    fn add(&mut self, word: &str) {
        *self.0.entry(word.to_owned()).or_default() += 1;
    }
}

/// The largest of `items` by `key` (generic: one mark for every type).
#[profile]
fn largest<T: Copy, K: Ord>(items: &[T], key: impl Fn(&T) -> K) -> Option<T> {
    items.iter().copied().max_by_key(|t| key(t))
}

/// Counts every word of `lines`.
#[profile]
fn count(lines: &[String]) -> Counts {
    let mut counts = Counts::default();
    for line in lines {
        prof_scope!("line");
        for word in line.split(' ') {
            counts.add(word);
        }
    }
    counts
}

/// Never called: listed by the coverage line as the mark that never ran.
#[profile]
#[allow(dead_code)]
fn unused() {}

fn main() {
    let lines = text(20_000);
    let counts = count(&lines);
    let rows: Vec<(&str, u64)> = counts.0.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    let (word, n) = largest(&rows, |(_, n)| *n).unwrap_or(("", 0));
    let lengths: Vec<usize> = lines.iter().map(String::len).collect();
    let longest = largest(&lengths, |len| *len).unwrap_or(0);
    println!(
        "{} lines, {} words, {} distinct; most frequent: {word} ({n}); longest line: {longest} bytes",
        lines.len(),
        counts.0.values().sum::<u64>(),
        counts.0.len(),
    );
}
