//! The hand-written JSON against serde_json, byte for byte.

use super::*;
use crate::report::{ClockSource, SiteKind};

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

/// A report with every field set, hostile names and awkward floats.
fn full_report(name: &str, f: f64, g: f64) -> Report {
    let mut r = Report::empty();
    r.run = RunInfo {
        clock: ClockSource::Tsc,
        frequency_hz: f,
        frequency_source: name.to_owned(),
        invariant_tsc: Some(true),
        wall_ns: u64::MAX,
        threads: usize::MAX,
        max_delta_ns: 3_600_000_000_000,
        out_of_order: 1,
        lost: 2,
        leaked: 8,
        reentrant: 3,
        folded_calls: 4,
        complete: false,
        compensated: true,
        overhead_inner_ns: g,
        overhead_inner_ticks: f,
        overhead_call_ns: 16.9,
        overhead_call_ticks: 44.0,
        calibration: format!("{name} calibration"),
        overhead_share: g,
        clamped: 5,
        carried: 7,
        tracing: true,
        trace_dropped: 6,
        pid: u32::MAX,
        alloc_installed: true,
        outside: AllocStats {
            allocs: 30,
            bytes: u64::MAX,
            frees: 31,
            freed_bytes: 32,
        },
    };
    let edge = |n: &str| Edge {
        name: n.to_owned(),
        calls: 7,
        total_ns: 8,
    };
    r.sites.push(SiteStats {
        name: name.to_owned(),
        function: format!("f::{name}"),
        kind: SiteKind::AsyncFunction,
        file: "src/\"main\".rs".to_owned(),
        line: u32::MAX,
        column: 17,
        calls: 9,
        total_ns: 10,
        self_ns: 11,
        p_self: 0.125,
        mean_ns: f,
        resolved: name.len() % 2 == 0,
        min_ns: 12,
        max_ns: 13,
        total_ticks: 14,
        self_ticks: 15,
        min_ticks: 16,
        max_ticks: 17,
        raw_total_ns: 18,
        raw_self_ns: 19,
        compensated_total_ns: 20,
        compensated_self_ns: 21,
        reversed: 22,
        oversized: 23,
        unwound: 24,
        wall_ns: 25,
        cancelled: 26,
        alloc: AllocStats {
            allocs: 27,
            bytes: 28,
            frees: 29,
            freed_bytes: 30,
        },
        self_alloc: AllocStats {
            allocs: 1,
            bytes: 2,
            frees: 3,
            freed_bytes: 4,
        },
        callers: vec![edge("<root>"), edge(name)],
        callees: Vec::new(),
    });
    let mut second = r.sites[0].clone();
    second.kind = SiteKind::Scope;
    second.mean_ns = g;
    second.callers = Vec::new();
    second.callees = vec![edge(name)];
    r.sites.push(second);
    let mut third = r.sites[0].clone();
    third.kind = SiteKind::Function;
    r.sites.push(third);
    r.threads.push(ThreadStats {
        name: name.to_owned(),
        id: 1,
        finished: true,
        count: u64::MAX,
        sites: vec![ThreadSite {
            name: name.to_owned(),
            calls: 27,
            total_ns: 28,
            self_ns: 29,
            alloc: AllocStats {
                allocs: 5,
                bytes: 6,
                frees: 7,
                freed_bytes: 8,
            },
        }],
    });
    r.threads.push(ThreadStats {
        name: "empty".to_owned(),
        id: 2,
        finished: false,
        count: 1,
        sites: Vec::new(),
    });
    r.tree.push(crate::export::test_node("", None, 0));
    let mut child = crate::export::test_node(name, Some(0), 30);
    child.depth = 1;
    child.alloc.bytes = 40;
    child.self_alloc.frees = 41;
    r.tree.push(child);
    r.trace = Some(crate::report::Trace::default());
    r.coverage = Some(crate::report::Coverage {
        marked: 2,
        ran: 1,
        never_called: vec![crate::report::Mark {
            name: name.to_owned(),
            kind: SiteKind::Scope,
            file: name.to_owned(),
            line: 7,
        }],
    });
    r.faults = Some(crate::report::Faults {
        seed: u64::MAX,
        sites: vec![(name.to_owned(), 3), (String::new(), 0)],
    });
    r
}

#[test]
fn same_text_as_serde_json_for_every_field_name_and_float() {
    for (i, name) in HOSTILE.iter().enumerate() {
        for (j, f) in FLOATS.iter().enumerate() {
            let g = FLOATS[(i + j + 1) % FLOATS.len()];
            let mut r = full_report(name, *f, g);
            assert_eq!(document(&r), serde_document(&r), "{name:?} {f:?} {g:?}");
            r.run.clock = if j % 2 == 0 {
                ClockSource::Monotonic
            } else {
                ClockSource::Off
            };
            r.run.invariant_tsc = if j % 2 == 0 { None } else { Some(false) };
            assert_eq!(document(&r), serde_document(&r), "{name:?} {f:?} {g:?}");
        }
    }
    let empty = Report::empty();
    assert_eq!(document(&empty), serde_document(&empty));
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
