//! `/metrics` on `TICKPROF_HTTP`, in a child process, read with a small
//! strict parser of the Prometheus text exposition format 0.0.4: exact
//! call counts, a hostile function name escaped and read back, every
//! family typed once and contiguous, cumulative buckets with `+Inf` equal
//! to `_count`, the media type, `HEAD` and a bad query; and a scrape
//! answered while a `?seconds=N` profile is in flight.
#![cfg(all(feature = "enabled", unix))]

use crate::support::http;

use http::Server;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use tickprof::profile;

const CHILD: &str = "TPTEST_METRICS_CHILD";
const HOSTILE: &str = "a\"b\\c\nd";
const WORK_CALLS: u32 = 1234;
const HOSTILE_CALLS: usize = 7;

#[profile(name = "a\"b\\c\nd")]
fn hostile() {
    std::hint::black_box(1);
}

/// The child: `work N` makes N calls of `work` and 7 of `hostile`.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_ok() {
        http::child_loop(|n| {
            (0..n).for_each(|_| http::work());
            (0..HOSTILE_CALLS).for_each(|_| hostile());
        });
    }
}

/// One sample: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the exposition strictly: `# HELP`/`# TYPE` before a family's
/// samples, each family once and contiguous, label values with only the
/// three escapes, values that are numbers. Returns the samples and each
/// family's type.
fn parse(text: &str) -> (Vec<Sample>, HashMap<String, String>) {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut samples = Vec::new();
    let mut current = String::new();
    let mut done: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# ") {
            let (kind, rest) = rest.split_once(' ').unwrap();
            let (name, what) = rest.split_once(' ').unwrap();
            if kind == "TYPE" {
                assert!(["counter", "gauge", "histogram"].contains(&what), "{line}");
                assert!(
                    types.insert(name.to_owned(), what.to_owned()).is_none(),
                    "typed twice: {name}"
                );
                assert!(!done.contains(&name.to_owned()), "{name} not contiguous");
                if !current.is_empty() {
                    done.push(current.clone());
                }
                current = name.to_owned();
            } else {
                assert_eq!(kind, "HELP", "{line}");
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).unwrap();
        let name = &line[..name_end];
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| types.get(*f).is_some_and(|t| t == "histogram"))
            })
            .unwrap_or(name);
        assert_eq!(family, current, "sample outside its family: {line}");
        let mut labels = BTreeMap::new();
        let mut rest = &line[name_end..];
        if let Some(r) = rest.strip_prefix('{') {
            let mut chars = r.chars();
            loop {
                let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
                assert_eq!(chars.next(), Some('"'), "{line}");
                let mut value = String::new();
                loop {
                    match chars.next().unwrap() {
                        '\\' => value.push(match chars.next().unwrap() {
                            '\\' => '\\',
                            '"' => '"',
                            'n' => '\n',
                            c => panic!("bad escape \\{c} in {line}"),
                        }),
                        '"' => break,
                        '\n' => panic!("raw line feed in {line}"),
                        c => value.push(c),
                    }
                }
                labels.insert(key, value);
                match chars.next() {
                    Some(',') => continue,
                    Some('}') => break,
                    other => panic!("{other:?} after a label in {line}"),
                }
            }
            rest = chars.as_str();
        }
        let value = rest.strip_prefix(' ').unwrap();
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("not a number: {line}")),
        };
        samples.push((name.to_owned(), labels, value));
    }
    (samples, types)
}

#[test]
fn metrics_are_exact_escaped_and_well_formed() {
    // Every call timed, so each histogram counts every call (adaptive
    // timing would sample the calls of the short sites).
    let mut server = Server::start(CHILD, &[("TICKPROF_TIME", "all")], "/metrics");
    server.work(WORK_CALLS);
    let http::Answer { head, body, .. } = server.get("/metrics");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    let text = String::from_utf8(body).unwrap();
    let (samples, types) = parse(&text);
    let value = |name: &str, function: &str| {
        samples
            .iter()
            .find(|(n, l, _)| n == name && l.get("function").is_some_and(|f| f.ends_with(function)))
            .map(|s| s.2)
            .unwrap_or_else(|| panic!("no {name} for {function}:\n{text}"))
    };
    assert_eq!(types["tickprof_calls_total"], "counter");
    assert_eq!(types["tickprof_call_duration_seconds"], "histogram");
    assert_eq!(value("tickprof_calls_total", "::work"), WORK_CALLS as f64);
    assert_eq!(value("tickprof_calls_total", HOSTILE), HOSTILE_CALLS as f64);
    assert!(
        samples
            .iter()
            .any(|(_, l, _)| l.get("function").map(String::as_str) == Some(HOSTILE)),
        "the hostile name reads back as itself"
    );
    // Each function's buckets: cumulative, `+Inf` last and equal to `_count`.
    let mut functions: Vec<&String> = samples
        .iter()
        .filter(|s| s.0 == "tickprof_calls_total")
        .map(|s| &s.1["function"])
        .collect();
    functions.dedup();
    assert!(functions.len() >= 2);
    for f in functions {
        let buckets: Vec<(f64, f64)> = samples
            .iter()
            .filter(|(n, l, _)| n == "tickprof_call_duration_seconds_bucket" && &l["function"] == f)
            .map(|(_, l, v)| (l["le"].parse::<f64>().unwrap_or(f64::INFINITY), *v))
            .collect();
        assert_eq!(buckets.last().unwrap().0, f64::INFINITY, "{f}");
        assert!(
            buckets
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{f}: {buckets:?}"
        );
        let count = value("tickprof_call_duration_seconds_count", f);
        assert_eq!(buckets.last().unwrap().1, count, "{f}");
        assert_eq!(
            count,
            value("tickprof_timed_calls_total", f),
            "{f}: every timed call accepted"
        );
        assert_eq!(
            count,
            value("tickprof_calls_total", f),
            "{f}: with TICKPROF_TIME=all every call is timed"
        );
    }
    assert_eq!(
        value("tickprof_call_duration_seconds_count", "::work"),
        WORK_CALLS as f64
    );
    for name in [
        "tickprof_rejected_calls_total",
        "tickprof_tree_nodes",
        "tickprof_threads",
    ] {
        assert!(samples.iter().any(|s| s.0 == name), "{name}");
    }
    assert!(text.contains("\ntickprof_info{version=\""), "{text}");

    let http::Answer { head, body, .. } = server
        .request("HEAD /metrics HTTP/1.1\r\n\r\n")
        .expect("an answer");
    assert!(
        head.starts_with("HTTP/1.1 200") && body.is_empty(),
        "{head}"
    );
    let head = server.get("/metrics?name=x").head;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");

    // A scrape is answered while a 3-second profile is in flight.
    let port = server.port;
    let profile = std::thread::spawn(move || http::get(port, "/debug/pprof/profile?seconds=3"));
    std::thread::sleep(Duration::from_millis(300));
    let head = server.get("/metrics").head;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(!profile.is_finished(), "/metrics waited for the profile");
    assert_eq!(profile.join().unwrap().status, 200);
    assert_eq!(server.exit(0), Some(0));
}
