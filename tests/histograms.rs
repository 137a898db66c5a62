//! Latency histograms per site: one count per accepted call (threads,
//! paths and recursive activations merged into the site), percentiles
//! ordered and within `min..=max`, snapshot differences and `reset()`
//! subtract them, async calls counted once per completed call, and every
//! format carries them. Assertions are on counts and invariants; the only
//! times asserted are lower bounds that spinning guarantees.
#![cfg(feature = "enabled")]

use crate::support::spin;

use std::time::Duration;
use tickprof::{profile, SiteStats};

/// `reset()` clears every site: the tests take turns (with the other
/// tests of `tests/alone.rs`).
fn turn() -> std::sync::MutexGuard<'static, ()> {
    crate::support::alone()
}

/// What every site's histogram satisfies.
fn check(s: &SiteStats) {
    let accepted = s.calls - s.rejected();
    assert_eq!(
        s.hist_count(),
        accepted,
        "{}: one count per accepted call",
        s.name
    );
    assert!(
        s.hist.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > 0),
        "{}: bounds increase, no empty bucket: {:?}",
        s.name,
        s.hist
    );
    assert!(
        s.min_ns <= s.p50_ns
            && s.p50_ns <= s.p90_ns
            && s.p90_ns <= s.p99_ns
            && s.p99_ns <= s.max_ns,
        "{}: min {} p50 {} p90 {} p99 {} max {}",
        s.name,
        s.min_ns,
        s.p50_ns,
        s.p90_ns,
        s.p99_ns,
        s.max_ns
    );
}

fn site(r: &tickprof::Report, suffix: &str) -> SiteStats {
    r.find(suffix)
        .unwrap_or_else(|| panic!("{suffix} not in the report"))
        .clone()
}

#[profile]
fn planted(long: bool) {
    spin::spin(if long {
        Duration::from_millis(2)
    } else {
        Duration::from_micros(100)
    });
}

#[test]
fn a_planted_distribution_gives_ordered_percentiles_above_the_planted_times() {
    let _t = turn();
    for i in 0..100 {
        planted(i % 20 == 19);
    }
    let s = site(&tickprof::report(), "::planted");
    check(&s);
    assert_eq!(s.hist_count(), 100);
    // Spinning takes at least the planted time; a percentile is within
    // 6.25% of a call's time (less the instrumentation's few ns).
    assert!(s.p50_ns >= 90_000, "p50 {}", s.p50_ns);
    assert!(s.p99_ns >= 1_800_000, "p99 {}", s.p99_ns);
    let long: u64 = s
        .hist
        .iter()
        .filter(|b| b.0 >= 1_800_000)
        .map(|b| b.1)
        .sum();
    assert!(
        long >= 5,
        "the 5 long calls are in buckets above 1.8 ms: {:?}",
        s.hist
    );
}

#[profile]
fn tiny(x: u64) -> u64 {
    std::hint::black_box(x + 1)
}

#[profile]
fn recurse(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        1 + recurse(n - 1)
    }
}

#[profile]
fn via_a() -> u64 {
    tiny(1)
}

#[profile]
fn via_b() -> u64 {
    tiny(2)
}

#[test]
fn a_site_histogram_merges_threads_paths_and_recursion() {
    let _t = turn();
    let before = tickprof::snapshot();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for i in 0..250 {
                    tiny(i);
                }
                via_a();
                via_b();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    recurse(6);
    let r = &tickprof::snapshot() - &before;
    let s = site(&r, "::tiny");
    check(&s);
    assert_eq!(
        (s.calls, s.hist_count()),
        (1008, 1008),
        "4 threads, 3 paths each"
    );
    let s = site(&r, "::recurse");
    check(&s);
    assert_eq!((s.calls, s.hist_count()), (7, 7), "every activation");
    for s in &r.sites {
        check(s);
    }
}

#[test]
fn snapshot_differences_and_reset_subtract_histograms() {
    let _t = turn();
    for i in 0..30 {
        tiny(i);
    }
    let before = tickprof::snapshot();
    for i in 0..12 {
        tiny(i);
    }
    let d = &tickprof::snapshot() - &before;
    let s = site(&d, "::tiny");
    assert_eq!((s.calls, s.hist_count()), (12, 12));
    tickprof::reset();
    for i in 0..3 {
        tiny(i);
    }
    let s = site(&tickprof::report(), "::tiny");
    check(&s);
    assert_eq!((s.calls, s.hist_count()), (3, 3));
}

#[profile]
async fn waits() {
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

#[test]
fn an_async_call_counts_once_when_it_completes() {
    let _t = turn();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..9 {
            waits().await;
        }
    });
    let s = site(&tickprof::report(), "::waits");
    check(&s);
    assert_eq!((s.calls, s.hist_count()), (9, 9));
}

#[test]
fn every_format_carries_the_percentiles() {
    let _t = turn();
    for i in 0..40 {
        tiny(i);
    }
    let r = tickprof::report();
    let s = site(&r, "::tiny");
    let text = r.to_text();
    let head = text.lines().find(|l| l.contains(" calls ")).unwrap();
    assert!(
        head.contains(" min ")
            && head.contains(" p50 ")
            && head.contains(" p90 ")
            && head.contains(" p99 "),
        "{head}"
    );
    let csv = r.to_csv();
    assert!(csv.starts_with(tickprof::CSV_HEADER));
    assert!(tickprof::CSV_HEADER.contains(",p50_ns,p90_ns,p99_ns,"));
    let row = csv.lines().find(|l| l.contains("::tiny")).unwrap();
    let want = format!(",{},{},{},", s.p50_ns, s.p90_ns, s.p99_ns);
    assert!(row.contains(&want), "{row} vs {want}");
    let json = String::from_utf8(tickprof::export::json::render(&r).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let js = v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"].as_str().is_some_and(|n| n.ends_with("::tiny")))
        .unwrap();
    assert_eq!(js["p50_ns"], s.p50_ns);
    assert_eq!(js["p99_ns"], s.p99_ns);
    let hist: Vec<(u64, u64)> = js["hist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b[0].as_u64().unwrap(), b[1].as_u64().unwrap()))
        .collect();
    assert_eq!(hist, s.hist);
    assert_eq!(
        tickprof::export::json::parse(&json)
            .unwrap()
            .find("::tiny")
            .unwrap()
            .hist,
        s.hist
    );
    let html = String::from_utf8(
        tickprof::export::render(&r, "r.html", &tickprof::TextOptions::default()).unwrap(),
    )
    .unwrap();
    assert!(html.contains(">p99<"), "the HTML table has the column");
}
