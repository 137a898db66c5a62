//! Fuzzing by property test: real reports and traces (`tests/data/`),
//! mutated at random (bytes replaced, inserted, deleted, ranges repeated,
//! JSON tokens spliced in, digits changed, the end cut off), fed to the
//! report loader and the trace loader the command uses. Every input gives a
//! value or a clean one-line error, never a panic; a report that loads
//! renders as text and JSON, and its JSON loads again as the same report.
//!
//! 64 cases per target by default; `PROPTEST_CASES=10000` for a
//! longer run (CI runs one, bounded).

use proptest::prelude::*;
use tickprof_runtime::export::json;
use tickprof_runtime::log::{replay_trace_json, LogOptions};
use tickprof_runtime::TextOptions;

const REPORTS: &[&str] = &[
    include_str!("data/before.json"),
    include_str!("data/after.json"),
];
const TRACES: &[&str] = &[include_str!("data/small.trace.json")];

/// Tokens that break or stretch a JSON reader and a report's checks.
const TOKENS: &[&str] = &[
    "null",
    "-1",
    "0",
    "1e999",
    "-0",
    "18446744073709551615",
    "18446744073709551616",
    "1.5",
    "\"\\u001b[2J\\n\"",
    "\"\\ud800\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "\\",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "{\"ph\":\"X\",\"name\":\"x\",\"tid\":1,\"ts\":1e300,\"dur\":-1e300}",
    "\"parent\": 0",
    "\"depth\": 99",
    "\u{202e}",
    "\u{0}",
];

/// One change to the text.
#[derive(Debug, Clone)]
enum Mutation {
    /// Set the byte at (position mod length).
    Byte(usize, u8),
    /// Insert bytes there.
    Insert(usize, Vec<u8>),
    /// Delete up to n bytes from there.
    Delete(usize, usize),
    /// Repeat the n bytes from there, in place.
    Repeat(usize, usize),
    /// Insert one of [`TOKENS`].
    Token(usize, usize),
    /// Change the next digit from there.
    Digit(usize, u8),
    /// Cut the text there.
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        (at, any::<u8>()).prop_map(|(a, b)| Mutation::Byte(a, b)),
        (at, proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(a, v)| Mutation::Insert(a, v)),
        (at, 1..64usize).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (at, 1..256usize).prop_map(|(a, n)| Mutation::Repeat(a, n)),
        (at, 0..TOKENS.len()).prop_map(|(a, t)| Mutation::Token(a, t)),
        (at, 0..10u8).prop_map(|(a, d)| Mutation::Digit(a, d)),
        at.prop_map(Mutation::Truncate),
    ]
}

/// `text` with the mutations applied, in order.
fn mutate(text: &str, ms: &[Mutation]) -> String {
    let mut b = text.as_bytes().to_vec();
    for m in ms {
        let len = b.len().max(1);
        match m {
            Mutation::Byte(a, x) => {
                if let Some(c) = b.get_mut(a % len) {
                    *c = *x;
                }
            }
            Mutation::Insert(a, v) => {
                let at = a % (b.len() + 1);
                b.splice(at..at, v.iter().copied());
            }
            Mutation::Delete(a, n) => {
                let at = a % len;
                let end = (at + n).min(b.len());
                b.drain(at.min(end)..end);
            }
            Mutation::Repeat(a, n) => {
                let at = a % len;
                let end = (at + n).min(b.len());
                let piece: Vec<u8> = b.get(at..end).unwrap_or(&[]).to_vec();
                b.splice(at..at, piece);
            }
            Mutation::Token(a, t) => {
                let at = a % (b.len() + 1);
                b.splice(at..at, TOKENS[*t].bytes());
            }
            Mutation::Digit(a, d) => {
                let start = a % len;
                if let Some(i) = b.iter().skip(start).position(u8::is_ascii_digit) {
                    b[start + i] = b'0' + d;
                }
            }
            Mutation::Truncate(a) => b.truncate(a % (b.len() + 1)),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn the_report_loader_survives_any_mutation(
        which in 0..REPORTS.len(),
        ms in proptest::collection::vec(mutation(), 1..6),
    ) {
        let text = mutate(REPORTS[which], &ms);
        match json::parse(&text) {
            Ok(r) => {
                let opts = TextOptions::default()
                    .with_tree(true)
                    .with_threads(true)
                    .with_coverage(true);
                let _ = r.text(&opts);
                let again = json::render(&r).unwrap();
                let back = json::parse(std::str::from_utf8(&again).unwrap());
                prop_assert!(back.is_ok(), "{:?}", back.err());
                prop_assert_eq!(back.unwrap().sites.len(), r.sites.len());
            }
            Err(e) => {
                let e = e.to_string();
                prop_assert!(!e.is_empty() && !e.contains('\n'), "{}", e);
            }
        }
    }

    #[test]
    fn the_trace_loader_survives_any_mutation(
        which in 0..TRACES.len(),
        ms in proptest::collection::vec(mutation(), 1..6),
        threshold in prop_oneof![Just(0u64), 1..5_000u64],
    ) {
        let text = mutate(TRACES[which], &ms);
        let mut opts = LogOptions::default();
        opts.threshold_ns = threshold;
        let mut out = Vec::new();
        match replay_trace_json(&text, &mut out, &opts) {
            Ok(()) => {
                let s = String::from_utf8(out);
                prop_assert!(s.is_ok());
                prop_assert!(!s.unwrap().contains('\x1b'), "an escape in the output");
            }
            Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n'), "{}", e),
        }
    }
}

#[test]
fn the_fixtures_load_unmutated() {
    for r in REPORTS {
        json::parse(r).unwrap();
    }
    for t in TRACES {
        replay_trace_json(t, &mut Vec::new(), &LogOptions::default()).unwrap();
    }
}
