//! The JSON writer and reader: any report reads back as itself (a
//! property test), older files read with the defaults of the fields they
//! lack, bad input is an error naming where; serde_json is the oracle of
//! the text.

use super::*;
use crate::report::{
    AllocStats, ClockSource, Coverage, Edge, Faults, Mark, RunInfo, SiteKind, SiteStats,
    ThreadSite, ThreadStats, Timing, TreeNode,
};
use proptest::prelude::*;

/// What `serde_json::to_writer_pretty` wrote for the report before this
/// writer replaced it: the report types derive `Serialize` in tests only.
fn serde_document(report: &Report) -> String {
    #[derive(serde::Serialize)]
    struct Document<'a> {
        version: u32,
        #[serde(flatten)]
        report: &'a Report,
    }
    let mut s = serde_json::to_string_pretty(&Document {
        version: VERSION,
        report,
    })
    .unwrap();
    s.push('\n');
    s
}

const HOSTILE: &[&str] = &[
    "",
    "plain::name",
    "quote \" and backslash \\ and slash /",
    "control \u{0} \u{1} \u{8} \t \n \u{b} \u{c} \r \u{1b} \u{1f} \u{7f}",
    "</script><script>alert(1)</script>",
    "non-ASCII: ß é ✓ 中文 🦀 \u{2028} \u{feff} \u{ffff}",
    "<[u8; 4] as Foo<'a>>::bar & {x}",
];

const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    3.0,
    -3.0,
    0.1,
    0.5,
    1.0 / 3.0,
    2.5e-3,
    1e-5,
    1.5e-5,
    1e-6,
    1e-7,
    1.234e-7,
    123456.789,
    1e15,
    999_999_999_999_999.9,
    1e16,
    1.5e16,
    123_456_789_012_345_680.0,
    1e21,
    1e22,
    2.5e100,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5e-324,
    f64::EPSILON,
    2.596e9,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// Values to build a report from: the generator draws each field from
/// these in turn (cycling), so proptest shrinks them as plain vectors.
#[derive(Debug, Clone)]
struct Src {
    u: Vec<u64>,
    f: Vec<f64>,
    b: Vec<bool>,
    s: Vec<String>,
    at: [usize; 4],
}

impl Src {
    fn u(&mut self) -> u64 {
        self.at[0] += 1;
        self.u[self.at[0] % self.u.len()]
    }
    fn small(&mut self, below: u64) -> usize {
        (self.u() % below) as usize
    }
    fn f(&mut self) -> f64 {
        self.at[1] += 1;
        self.f[self.at[1] % self.f.len()]
    }
    fn b(&mut self) -> bool {
        self.at[2] += 1;
        self.b[self.at[2] % self.b.len()]
    }
    fn s(&mut self) -> String {
        self.at[3] += 1;
        self.s[self.at[3] % self.s.len()].clone()
    }
    fn kind(&mut self) -> SiteKind {
        [
            SiteKind::Function,
            SiteKind::Scope,
            SiteKind::AsyncFunction,
            SiteKind::Inlined,
        ][self.small(4)]
    }
    fn alloc(&mut self) -> AllocStats {
        AllocStats {
            allocs: self.u(),
            bytes: self.u(),
            frees: self.u(),
            freed_bytes: self.u(),
        }
    }
    fn edges(&mut self) -> Vec<Edge> {
        (0..self.small(3))
            .map(|_| Edge {
                name: self.s(),
                calls: self.u(),
                total_ns: self.u(),
            })
            .collect()
    }

    /// A report with every field drawn from `self`; sections optional.
    fn report(&mut self) -> Report {
        let run = RunInfo {
            clock: [
                ClockSource::Tsc,
                ClockSource::Cntvct,
                ClockSource::Monotonic,
                ClockSource::Off,
            ][self.small(4)],
            frequency_hz: self.f(),
            frequency_source: self.s(),
            invariant_tsc: [None, Some(true), Some(false)][self.small(3)],
            wall_ns: self.u(),
            threads: self.u() as usize,
            max_delta_ns: self.u(),
            out_of_order: self.u(),
            lost: self.u(),
            reentrant: self.u(),
            leaked: self.u(),
            folded_calls: self.u(),
            complete: self.b(),
            compensated: self.b(),
            overhead_inner_ns: self.f(),
            overhead_inner_ticks: self.f(),
            overhead_call_ns: self.f(),
            overhead_call_ticks: self.f(),
            overhead_timed_ns: self.f(),
            overhead_counted_ns: self.f(),
            counted_sites: self.u(),
            counted_calls: self.u(),
            debug_build: self.b(),
            calibration: self.s(),
            overhead_share: self.f(),
            sampled_ns: self.u(),
            instrumentation_ns: self.u(),
            waited_ns: self.u(),
            setup_ns: self.u(),
            setup_threads: self.u(),
            sample_hz: self.u(),
            clamped: self.u(),
            carried: self.u(),
            tracing: self.b(),
            trace_dropped: self.u(),
            pid: self.u() as u32,
            alloc_installed: self.b(),
            outside: self.alloc(),
            pushed: self.u(),
            push_failed: self.u(),
            push_dropped: self.u(),
            pauses: self.u(),
            paused_ns: self.u(),
        };
        let sites = (0..self.small(4))
            .map(|_| {
                let calls = self.u();
                let timed_calls = self.u().min(calls);
                let timing = [Timing::Timed, Timing::Counted][self.small(2)];
                self.site(calls, timed_calls, timing)
            })
            .collect();
        self.rest(run, sites)
    }

    /// A site with every other field drawn from `self`.
    fn site(&mut self, calls: u64, timed_calls: u64, timing: Timing) -> SiteStats {
        SiteStats {
            name: self.s(),
            function: self.s(),
            kind: self.kind(),
            file: self.s(),
            line: self.u() as u32,
            column: self.u() as u32,
            calls,
            timing,
            timed_calls,
            total_ns: self.u(),
            self_ns: self.u(),
            p_self: self.f(),
            mean_ns: self.f(),
            resolved: self.b(),
            min_ns: self.u(),
            max_ns: self.u(),
            total_ticks: self.u(),
            self_ticks: self.u(),
            min_ticks: self.u(),
            max_ticks: self.u(),
            raw_total_ns: self.u(),
            raw_self_ns: self.u(),
            compensated_total_ns: self.u(),
            compensated_self_ns: self.u(),
            self_sampled_ns: self.u(),
            total_sampled_ns: self.u(),
            reversed: self.u(),
            oversized: self.u(),
            unwound: self.u(),
            wall_ns: self.u(),
            cancelled: self.u(),
            alloc: self.alloc(),
            self_alloc: self.alloc(),
            callers: self.edges(),
            callees: self.edges(),
            p50_ns: self.u(),
            p90_ns: self.u(),
            p99_ns: self.u(),
            hist: vec![(self.u(), self.u())],
            hist_sum_ns: self.u(),
            pc_samples: self.u(),
        }
    }

    /// The sections after the sites, and the report.
    fn rest(&mut self, run: RunInfo, sites: Vec<SiteStats>) -> Report {
        let threads = (0..self.small(3))
            .map(|_| ThreadStats {
                name: self.s(),
                id: self.u(),
                finished: self.b(),
                count: self.u(),
                sites: (0..self.small(3))
                    .map(|_| ThreadSite {
                        name: self.s(),
                        calls: self.u(),
                        total_ns: self.u(),
                        self_ns: self.u(),
                        alloc: self.alloc(),
                    })
                    .collect(),
            })
            .collect();
        // A tree as the writer makes it (the reader checks): parents
        // before children, depth one more than the parent's.
        let mut tree: Vec<TreeNode> = Vec::new();
        for i in 0..self.small(5) {
            let parent = (i > 0).then(|| self.small(i as u64));
            tree.push(TreeNode {
                name: self.s(),
                parent,
                depth: parent.map_or(0, |p| tree[p].depth + 1),
                calls: self.u(),
                total_ns: self.u(),
                self_ns: self.u(),
                raw_total_ns: self.u(),
                raw_self_ns: self.u(),
                alloc: self.alloc(),
                self_alloc: self.alloc(),
            });
        }
        let coverage = self.b().then(|| Coverage {
            marked: self.u() as usize,
            ran: self.u() as usize,
            never_called: (0..self.small(3))
                .map(|_| Mark {
                    name: self.s(),
                    kind: self.kind(),
                    file: self.s(),
                    line: self.u() as u32,
                })
                .collect(),
        });
        let faults = self.b().then(|| Faults {
            seed: self.u(),
            sites: (0..self.small(3)).map(|_| (self.s(), self.u())).collect(),
        });
        let mut r = Report::empty();
        r.run = run;
        r.sites = sites;
        r.threads = threads;
        r.tree = tree;
        r.coverage = coverage;
        r.faults = faults;
        r
    }
}

fn any_src() -> impl Strategy<Value = Src> {
    use proptest::collection::vec;
    let string = prop_oneof![
        proptest::sample::select(HOSTILE).prop_map(str::to_owned),
        proptest::string::string_regex("(?s).{0,12}").unwrap(),
    ];
    let u = prop_oneof![any::<u64>(), 0..1000u64, Just(u64::MAX)];
    let f = prop_oneof![
        proptest::sample::select(FLOATS).prop_filter("finite", |x| x.is_finite()),
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
    ];
    (
        vec(u, 1..64),
        vec(f, 1..16),
        vec(any::<bool>(), 1..8),
        vec(string, 1..8),
    )
        .prop_map(|(u, f, b, s)| Src {
            u,
            f,
            b,
            s,
            at: [0; 4],
        })
}

/// The document `render` writes for `r`.
fn text(r: &Report) -> String {
    String::from_utf8(render(r).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(256)))]

    /// `parse(render(r)) == r` for any report (`trace` is not in the
    /// JSON), and the text is what serde_json reads as the report's value.
    #[test]
    fn any_report_reads_back_as_itself(mut src in any_src()) {
        let r = src.report();
        let t = text(&r);
        prop_assert_eq!(parse(&t).unwrap(), r.clone());
        let ours: serde_json::Value = serde_json::from_str(&t).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(&serde_document(&r)).unwrap();
        prop_assert_eq!(ours, theirs);
    }

    /// A document cut anywhere is an error, never a panic.
    #[test]
    fn truncated_documents_are_errors(mut src in any_src(), cut in any::<prop::sample::Index>()) {
        let t = text(&src.report());
        let mut at = cut.index(t.len());
        while !t.is_char_boundary(at) {
            at -= 1;
        }
        // Only trailing whitespace may go.
        if !t[at..].trim().is_empty() {
            prop_assert!(parse(&t[..at]).is_err());
        }
    }
}

#[test]
fn hostile_names_and_awkward_floats_read_back() {
    for (i, name) in HOSTILE.iter().enumerate() {
        for (j, x) in FLOATS.iter().enumerate() {
            let y = FLOATS[(i + j + 1) % FLOATS.len()];
            let mut src = Src {
                u: vec![u64::MAX, 0, i as u64, j as u64, 1],
                f: vec![*x, y],
                b: vec![true, false, true],
                s: vec![(*name).to_owned(), String::new()],
                at: [i, j, 0, 0],
            };
            let r = src.report();
            let t = text(&r);
            let back = parse(&t).unwrap();
            // NaN and the infinities are written as `null`, read as NaN:
            // the same text again.
            assert_eq!(text(&back), t, "{name:?} {x:?}");
            let ours: serde_json::Value = serde_json::from_str(&t).unwrap();
            let theirs: serde_json::Value = serde_json::from_str(&serde_document(&r)).unwrap();
            assert_eq!(ours, theirs, "{name:?} {x:?}");
            if x.is_finite() && y.is_finite() {
                assert_eq!(back, r);
            }
        }
    }
}

#[test]
fn not_a_number_is_null_and_reads_back_as_nan() {
    let mut r = Report::empty();
    r.run.frequency_hz = f64::NAN;
    r.run.overhead_share = f64::INFINITY;
    let t = text(&r);
    assert!(t.contains("\"frequency_hz\": null"), "{t}");
    assert!(t.contains("\"overhead_share\": null"), "{t}");
    let back = parse(&t).unwrap();
    assert!(back.run.frequency_hz.is_nan() && back.run.overhead_share.is_nan());
}

/// A report in which every object type appears.
fn one_of_everything() -> Report {
    let mut src = Src {
        // A prime cycle: a report that draws a multiple of it would come
        // out the same every time (101 did, once the histogram and push
        // fields were added).
        u: (1..=103).collect(),
        f: vec![0.5],
        b: vec![true],
        s: vec!["a".to_owned()],
        at: [0; 4],
    };
    for i in 0..1000 {
        // Shift the numbers drawn by one more each time, so that a report
        // that draws a multiple of the cycle's length still varies.
        src.at[0] += i;
        let r = src.report();
        if r.sites.iter().any(|s| !s.callers.is_empty())
            && r.threads.iter().any(|t| !t.sites.is_empty())
            && r.tree.len() > 1
            && r.coverage
                .as_ref()
                .is_some_and(|c| !c.never_called.is_empty())
            && r.faults.as_ref().is_some_and(|f| !f.sites.is_empty())
        {
            return r;
        }
    }
    panic!("no report with one of everything");
}

/// The fields added after the first version-1 files: optional.
const NEWER: &[&str] = &[
    "alloc_installed",
    "outside",
    "pushed",
    "push_failed",
    "push_dropped",
    "resolved",
    "alloc",
    "self_alloc",
    "coverage",
    "faults",
    "p50_ns",
    "p90_ns",
    "p99_ns",
    "hist",
    "hist_sum_ns",
    "timing",
    "timed_calls",
    "overhead_timed_ns",
    "overhead_counted_ns",
    "counted_sites",
    "counted_calls",
    "debug_build",
    "pauses",
    "paused_ns",
    "sampled_ns",
    "instrumentation_ns",
    "waited_ns",
    "setup_ns",
    "setup_threads",
    "sample_hz",
    "self_sampled_ns",
    "total_sampled_ns",
    "pc_samples",
];

/// Removes `key` from every object of `v` at any depth; how many it removed.
fn remove_everywhere(v: &mut serde_json::Value, key: &str) -> usize {
    match v {
        serde_json::Value::Object(m) => {
            let here = usize::from(m.remove(key).is_some());
            here + m
                .values_mut()
                .map(|v| remove_everywhere(v, key))
                .sum::<usize>()
        }
        serde_json::Value::Array(a) => a.iter_mut().map(|v| remove_everywhere(v, key)).sum(),
        _ => 0,
    }
}

/// Every key of every object of `v`.
fn all_keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.insert(k.clone());
                all_keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| all_keys(v, out)),
        _ => {}
    }
}

#[test]
fn an_older_file_without_the_newer_fields_reads_with_their_defaults() {
    let r = one_of_everything();
    let mut v: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
    for key in NEWER {
        assert!(remove_everywhere(&mut v, key) > 0, "{key}");
    }
    let back = parse(&v.to_string()).unwrap();
    let none = AllocStats::default();
    let mut want = r.clone();
    want.run.alloc_installed = false;
    want.run.outside = none;
    (want.run.overhead_timed_ns, want.run.overhead_counted_ns) = (0.0, 0.0);
    (want.run.pushed, want.run.push_failed, want.run.push_dropped) = (0, 0, 0);
    (want.run.counted_sites, want.run.counted_calls) = (0, 0);
    want.run.debug_build = false;
    (want.run.pauses, want.run.paused_ns) = (0, 0);
    (
        want.run.sampled_ns,
        want.run.instrumentation_ns,
        want.run.sample_hz,
    ) = (0, 0, 0);
    (
        want.run.setup_ns,
        want.run.setup_threads,
        want.run.waited_ns,
    ) = (0, 0, 0);
    for s in &mut want.sites {
        (s.resolved, s.alloc, s.self_alloc) = (true, none, none);
        (s.self_sampled_ns, s.total_sampled_ns) = (0, 0);
        (s.timing, s.timed_calls) = (Timing::Timed, s.calls);
        (s.p50_ns, s.p90_ns, s.p99_ns, s.hist_sum_ns) = (0, 0, 0, 0);
        s.pc_samples = 0;
        s.hist.clear();
    }
    for s in want.threads.iter_mut().flat_map(|t| &mut t.sites) {
        s.alloc = none;
    }
    for n in &mut want.tree {
        (n.alloc, n.self_alloc) = (none, none);
    }
    (want.coverage, want.faults) = (None, None);
    assert_eq!(back, want);
}

#[test]
fn every_other_field_is_required_and_its_absence_named() {
    let full: serde_json::Value = serde_json::from_str(&text(&one_of_everything())).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    all_keys(&full, &mut keys);
    assert!(keys.len() > 60, "{keys:?}");
    for key in &keys {
        let mut v = full.clone();
        remove_everywhere(&mut v, key);
        match parse(&v.to_string()) {
            Ok(_) => assert!(NEWER.contains(&key.as_str()), "{key} is required"),
            Err(e) => {
                assert!(!NEWER.contains(&key.as_str()), "{key}: {e}");
                let msg = e.to_string();
                assert!(msg.contains(&format!("no \"{key}\"")), "{key}: {msg}");
                assert!(!msg.contains('\n'));
            }
        }
    }
}

#[test]
fn a_field_of_the_wrong_type_is_an_error_naming_its_path() {
    use serde_json::json;
    let r = one_of_everything();
    let full: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
    let cases = [
        (
            "/run/wall_ns",
            json!("1"),
            "run.wall_ns: not a whole number",
        ),
        ("/run/wall_ns", json!(-1), "run.wall_ns: not a whole number"),
        (
            "/run/wall_ns",
            json!(1.5),
            "run.wall_ns: not a whole number",
        ),
        (
            "/run/pid",
            json!(1u64 << 40),
            "run.pid: not a 32-bit number",
        ),
        (
            "/run/clock",
            json!("sundial"),
            "run.clock: not tsc, cntvct, monotonic or off",
        ),
        ("/run/complete", json!(1), "run.complete: not true or false"),
        (
            "/run/frequency_hz",
            json!("fast"),
            "run.frequency_hz: not a number",
        ),
        (
            "/run/invariant_tsc",
            json!(0),
            "run.invariant_tsc: not true or false",
        ),
        (
            "/sites/0/kind",
            json!("macro"),
            "sites[0].kind: not a known site kind",
        ),
        ("/sites/0/alloc", json!([]), "sites[0].alloc: not an object"),
        ("/tree", json!({}), "tree: not an array"),
        (
            "/tree/1/parent",
            json!("0"),
            "tree[1].parent: not a whole number",
        ),
        (
            "/faults/sites/0",
            json!(["a"]),
            "faults.sites[0]: not a pair",
        ),
        (
            "/faults/sites/0/1",
            json!("3"),
            "faults.sites[0][1]: not a whole number",
        ),
        ("/coverage", json!(3), "coverage: not an object"),
        ("/version", json!("1"), "version: not a whole number"),
    ];
    for (pointer, value, want) in cases {
        let mut v = full.clone();
        *v.pointer_mut(pointer).unwrap() = value;
        let e = parse(&v.to_string()).unwrap_err();
        let want = format!("not a tickprof JSON report ({want})");
        assert_eq!(e.to_string(), want, "{pointer}");
    }
    let mut v = full.clone();
    let edge = v.pointer_mut("/sites").unwrap().as_array_mut().unwrap();
    let i = r.sites.iter().position(|s| !s.callers.is_empty()).unwrap();
    edge[i]["callers"][0]["name"] = json!(7);
    let e = parse(&v.to_string()).unwrap_err().to_string();
    assert!(
        e.ends_with(&format!("(sites[{i}].callers[0].name: not a string)")),
        "{e}"
    );

    let mut v = full.clone();
    v["version"] = json!(2);
    assert_eq!(parse(&v.to_string()), Err(ParseError::Version(2)));
    // Unknown fields (from a newer tickprof) are ignored.
    v["version"] = json!(1);
    v["run"]["from_the_future"] = json!({"x": [1, 2]});
    assert_eq!(parse(&v.to_string()).unwrap(), r);
}

#[test]
fn malformed_documents_are_errors_never_panics() {
    let deep = format!("{{\"version\": 1, \"run\": {}", "[".repeat(100_000));
    let wide_deep = "{\"version\": 1, \"sites\": [".to_owned() + &"{\"a\":".repeat(100_000);
    for text in [
        "",
        "nope",
        "[1]",
        "{}",
        "{\"version\": 1}",
        "{\"version\": 1,",
        "{\"version\": 1.0}",
        "\u{feff}{\"version\": 1}",
        &deep,
        &wide_deep,
    ] {
        assert!(parse(text).is_err(), "{text:.40}");
    }
}

#[test]
fn floats_read_back_exactly_with_serde_json() {
    // A deterministic spread over all exponents and mantissas.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = String::new();
    let mut differ = 0;
    for i in 0..200_000 {
        let x = match i % 4 {
            0 => f64::from_bits(next()),
            1 => (next() % 1_000_000_000) as f64 / 1000.0,
            2 => (next() >> 11) as f64,
            _ => f64::from_bits(next() >> 12),
        };
        out.clear();
        push_f64(&mut out, x);
        let theirs = serde_json::to_string(&x).unwrap();
        if x.is_finite() {
            let back: f64 = serde_json::from_str(&out).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{out}");
        }
        if out != theirs {
            // Sometimes two shortest strings read back as `x` (a tie, or
            // 17 digits), and std and serde_json pick different ones:
            // same layout, only the last digit differs, both exact.
            let (ma, ea) = out.split_once('e').unwrap_or((&out, ""));
            let (mb, eb) = theirs.split_once('e').unwrap_or((&theirs, ""));
            assert_eq!(ea, eb, "{out} vs {theirs}");
            let (a, b) = (ma.as_bytes(), mb.as_bytes());
            assert_eq!(a.len(), b.len(), "{out} vs {theirs}");
            let first_diff = a.iter().zip(b).position(|(x, y)| x != y).unwrap();
            assert!(
                a[first_diff..].iter().all(u8::is_ascii_digit),
                "{out} vs {theirs}"
            );
            assert!(
                b[first_diff..].iter().all(u8::is_ascii_digit),
                "{out} vs {theirs}"
            );
            differ += 1;
        }
    }
    // Rare: well under 1% of these values.
    assert!(differ < 200_000 / 100, "{differ} differ");
    eprintln!("{differ} of 200000 differ from serde_json in the last digit");
    for x in FLOATS {
        out.clear();
        push_f64(&mut out, *x);
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        match back.as_f64() {
            Some(b) => assert_eq!(b.to_bits(), x.to_bits(), "{out}"),
            None => assert!(!x.is_finite() && back.is_null(), "{out}"),
        }
    }
}

#[test]
fn string_literals_read_back_as_the_same_string() {
    let all_controls: String = (0u8..0x20).map(char::from).collect();
    for s in HOSTILE.iter().copied().chain([all_controls.as_str()]) {
        let mut out = String::new();
        push_str_literal(&mut out, s);
        assert_eq!(out, serde_json::to_string(s).unwrap());
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, s);
        assert!(!out.chars().any(|c| c < ' '), "{out:?}");
    }
}

#[test]
fn compact_writer_matches_serde_json_compact() {
    let mut out = String::new();
    let mut w = Writer::compact(&mut out);
    w.begin_object();
    w.key("a");
    w.array(&[1u64, 2], |w, n| w.u64(*n));
    w.key("b");
    w.begin_array();
    w.end_array();
    w.key("c \"q\"");
    w.begin_object();
    w.end_object();
    w.key("d");
    w.f64(0.25);
    w.key("e");
    w.null();
    w.end_object();
    let v = serde_json::json!({"a": [1, 2], "b": [], "c \"q\"": {}, "d": 0.25, "e": null});
    assert_eq!(out, serde_json::to_string(&v).unwrap());
}

#[test]
fn empty_report_has_version_and_every_section() {
    let text = String::from_utf8(render(&Report::empty()).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["run"]["clock"], "off");
    assert!(v["sites"].as_array().unwrap().is_empty());
    assert!(v["threads"].as_array().unwrap().is_empty());
    assert!(v["tree"].as_array().unwrap().is_empty());
    assert!(text.ends_with("}\n"));
    let mut via_write = Vec::new();
    write(&Report::empty(), &mut via_write).unwrap();
    assert_eq!(via_write, text.as_bytes());
}

/// A report whose tree is root → 1 → 2, root → 3.
fn small_tree() -> serde_json::Value {
    let mut r = Report::empty();
    let node = |name: &str, parent: Option<usize>, depth: usize| TreeNode {
        name: name.to_owned(),
        parent,
        depth,
        calls: 1,
        total_ns: 10,
        self_ns: 5,
        raw_total_ns: 10,
        raw_self_ns: 5,
        alloc: AllocStats::default(),
        self_alloc: AllocStats::default(),
    };
    r.tree = vec![
        node("", None, 0),
        node("a", Some(0), 1),
        node("b", Some(1), 2),
        node("c", Some(0), 1),
    ];
    serde_json::from_str(&text(&r)).unwrap()
}

#[test]
fn a_broken_tree_is_rejected_naming_the_node() {
    use serde_json::json;
    assert_eq!(parse(&small_tree().to_string()).unwrap().tree.len(), 4);
    let cases = [
        (
            "/tree/2/parent",
            json!(2),
            "tree[2].parent: 2 is the node itself",
        ),
        (
            "/tree/2/parent",
            json!(17),
            "tree[2].parent: 17 is out of range (the tree has 4 nodes)",
        ),
        (
            "/tree/1/parent",
            json!(2),
            "tree[1].parent: 2 comes after the node (a parent precedes its children, so there is no cycle)",
        ),
        (
            "/tree/3/parent",
            json!(null),
            "tree[3].parent: null, but only the root (tree[0]) has no parent",
        ),
        (
            "/tree/0/parent",
            json!(1),
            "tree[0].parent: 1, but the root (tree[0]) has no parent",
        ),
        (
            "/tree/2/depth",
            json!(1),
            "tree[2].depth: 1, but its parent tree[1] has depth 1 (want 2)",
        ),
        (
            "/tree/0/depth",
            json!(3),
            "tree[0].depth: 3, but the root's depth is 0 (want 0)",
        ),
        (
            "/tree/3/depth",
            json!(u64::MAX),
            "tree[3].depth: 18446744073709551615, but its parent tree[0] has depth 0 (want 1)",
        ),
    ];
    for (pointer, value, want) in cases {
        let mut v = small_tree();
        *v.pointer_mut(pointer).unwrap() = value;
        let e = parse(&v.to_string()).unwrap_err();
        let want = format!("not a tickprof JSON report ({want})");
        assert_eq!(e.to_string(), want, "{pointer}");
    }
    // A cycle of two: each the other's parent.
    let mut v = small_tree();
    v["tree"][1]["parent"] = json!(2);
    v["tree"][2]["parent"] = json!(1);
    let e = parse(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("tree[1].parent: 2 comes after the node"), "{e}");
}

#[test]
fn every_writer_takes_a_report_of_extreme_values_without_panicking() {
    // A report read from a file may hold any values: sums saturate.
    let mut src = Src {
        u: vec![u64::MAX, 2, u64::MAX - 1, 3, 5, u64::MAX, 7],
        f: vec![f64::MAX, 0.5],
        b: vec![true, false],
        s: vec!["a".to_owned(), "b".to_owned()],
        at: [0; 4],
    };
    let mut tried = 0;
    for _ in 0..200 {
        let r = src.report();
        if r.sites.len() < 2 || !r.threads.iter().any(|t| t.sites.len() > 1) {
            continue;
        }
        tried += 1;
        for f in crate::export::FORMATS {
            let path = format!("x{}", f.extension);
            let _ = crate::export::render(&r, &path, &crate::TextOptions::default());
        }
        let _ = r.to_text();
    }
    assert!(tried > 0, "no report with two sites on one thread");
}
