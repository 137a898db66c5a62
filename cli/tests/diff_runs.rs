//! `tickprof diff` across several runs a side, on generated reports: one
//! site made 250× slower among sites whose times move by ±25% from run to
//! run (the noise of a shared host) is listed first and is the only
//! failure of `--fail-if-slower 5%` with three runs a side, while one run
//! a side fails on the noise too; a percentile gate (`p99:10%`) reads the
//! reports' `p99_ns`, and says clearly when a report has none.

use crate::support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use support::{data, tickprof};

const SLOW: &str = "quickstart::Stats::add";
const TAIL: &str = "quickstart::parse_line";

/// Run-to-run noise factors of the untouched sites: the before runs'
/// medians are 1.0, the after runs' 1.23, each side spread over ±25%.
const BEFORE_NOISE: [f64; 3] = [1.0, 0.8, 1.25];
const AFTER_NOISE: [f64; 3] = [1.23, 0.95, 1.26];

/// Writes a copy of `before.json` with every site's times scaled by the
/// noise factor (by 250 more for [`SLOW`] after), and, when `pct`, with
/// `p50_ns`/`p90_ns`/`p99_ns` (the p99 of [`TAIL`] 3× after).
fn write_run(dir: &Path, name: &str, noise: f64, after: bool, pct: bool) -> PathBuf {
    let text = std::fs::read_to_string(data("before.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for s in v["sites"].as_array_mut().unwrap() {
        let site = s["name"].as_str().unwrap().to_owned();
        let f = noise * if after && site == SLOW { 250.0 } else { 1.0 };
        for key in ["total_ns", "self_ns", "min_ns", "max_ns"] {
            let x = s[key].as_u64().unwrap();
            s[key] = Value::from((x as f64 * f).round() as u64);
        }
        s["mean_ns"] = Value::from(s["mean_ns"].as_f64().unwrap() * f);
        if pct {
            let tail = if after && site == TAIL { 3.0 } else { 1.0 };
            s["p50_ns"] = Value::from((1000.0 * f).round() as u64);
            s["p90_ns"] = Value::from((2000.0 * f).round() as u64);
            s["p99_ns"] = Value::from((5000.0 * f * tail).round() as u64);
        } else {
            // A report from before the percentiles.
            for key in ["p50_ns", "p90_ns", "p99_ns", "hist", "hist_sum_ns"] {
                s.as_object_mut().unwrap().remove(key);
            }
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

struct Runs {
    dir: PathBuf,
    before: Vec<String>,
    after: Vec<String>,
}

impl Runs {
    fn new(tag: &str, pct: bool) -> Runs {
        let dir = std::env::temp_dir().join(format!("tickprof-diff-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let side = |after: bool, noise: [f64; 3]| -> Vec<String> {
            noise
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let name = format!("{}{i}.json", if after { "a" } else { "b" });
                    let p = write_run(&dir, &name, n, after, pct);
                    p.to_string_lossy().into_owned()
                })
                .collect()
        };
        let before = side(false, BEFORE_NOISE);
        let after = side(true, AFTER_NOISE);
        Runs { dir, before, after }
    }

    /// `diff B… -- A… extra…`.
    fn diff(&self, extra: &[&str]) -> std::process::Output {
        let mut args: Vec<&str> = vec!["diff"];
        args.extend(extra);
        args.extend(self.before.iter().map(String::as_str));
        args.push("--");
        args.extend(self.after.iter().map(String::as_str));
        tickprof(&args)
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn three_runs_a_side_show_and_fail_only_the_real_slowdown() {
    let runs = Runs::new("three", false);
    let out = runs.diff(&["--fail-if-slower", "5%"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("tickprof diff: 3 runs ("), "{stdout}");
    assert!(
        lines[1].starts_with("site ") && lines[1].contains(" spread"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with(&format!("{SLOW} ")),
        "listed first: {stdout}"
    );
    assert!(lines[2].ends_with("slower"), "{stdout}");
    // The only row shown: the other six moved within their spread.
    assert!(
        lines[3].starts_with("6 sites within the noise (±1.0% total or the runs' spread"),
        "{stdout}"
    );
    assert_eq!(lines.len(), 4, "{stdout}");
    let failures: Vec<&str> = stderr.lines().collect();
    assert_eq!(failures.len(), 1, "{stderr}");
    assert!(
        failures[0].starts_with(&format!("tickprof: slower than allowed: {SLOW}: total +")),
        "{stderr}"
    );
    // Every row, with --all: the noisy ones after the significant one.
    let out = runs.diff(&["--all"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 2 + 7, "{stdout}");
    assert!(stdout.lines().nth(2).unwrap().starts_with(SLOW), "{stdout}");
}

#[test]
fn one_run_a_side_fails_on_the_noise_too() {
    let runs = Runs::new("one", false);
    let out = tickprof(&[
        "diff",
        &runs.before[0],
        &runs.after[0],
        "--fail-if-slower",
        "5%",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    // Every site moved 23%; all fail but those timed fewer than 8 times
    // and shorter than a few sampling periods, whose figure is good to a
    // period (1 ms): `main::merge` (once, 0.48 ms), `Stats::percentiles`
    // (once, 3.0 ms: 0.7 ms more, within 3 periods) and its `sort` (5
    // calls, 3.0 ms); `analyse` (2 calls, 48.6 ms: 11 ms more) fails.
    assert_eq!(stderr.lines().count(), 4, "every site moved 23%: {stderr}");
    assert!(!stderr.contains("main::merge"), "{stderr}");
    assert!(!stderr.contains("Stats::percentiles"), "{stderr}");
    assert!(stderr.contains("quickstart::analyse: total"), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(stdout.lines().nth(2).unwrap().starts_with(SLOW), "{stdout}");
    assert!(!stdout.contains("spread"), "{stdout}");
}

#[test]
fn a_percentile_gate_reads_p99_and_says_when_a_report_has_none() {
    let runs = Runs::new("pct", true);
    let out = runs.diff(&["--fail-if-slower", "p99:10%"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let mut failed: Vec<&str> = stderr
        .lines()
        .map(|l| {
            l.strip_prefix("tickprof: slower than allowed: ")
                .unwrap()
                .split(": p99 +")
                .next()
                .unwrap()
        })
        .collect();
    failed.sort_unstable();
    assert_eq!(failed, [SLOW, TAIL], "{stderr}");
    // The table gains the p99 column with --metric p99.
    let out = runs.diff(&["--metric", "p99"]);
    let stdout = text(&out.stdout);
    assert!(stdout.lines().nth(1).unwrap().contains(" p99 "), "{stdout}");
    assert!(stdout.contains("5.00 µs → 18.45 µs +269.0%"), "{stdout}");

    // Reports without percentiles: exit 2 and one line saying why.
    let old = Runs::new("old", false);
    let out = old.diff(&["--fail-if-slower", "p99:10%"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("b0.json: no site has `p99_ns`: a report without latency percentiles"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // A bad figure name, and three files without `--`: usage errors.
    let out = old.diff(&["--fail-if-slower", "p42:10%"]);
    assert_eq!(out.status.code(), Some(2));
    let out = tickprof(&["diff", &old.before[0], &old.before[1], &old.before[2]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("3 reports given, no `--`"));
}

/// A copy of `before.json` with the sampler on (1,000 samples a second)
/// and each site's figures scaled by `f(site)`: the quickstart's tiny
/// sites rest on a few samples each, `generate` on tens of thousands.
fn write_sampled(dir: &Path, name: &str, f: impl Fn(&str) -> f64) -> PathBuf {
    let text = std::fs::read_to_string(data("before.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["run"]["sample_hz"] = Value::from(1000u64);
    for s in v["sites"].as_array_mut().unwrap() {
        let k = f(s["name"].as_str().unwrap());
        for key in ["total_ns", "self_ns", "min_ns", "max_ns"] {
            let x = s[key].as_u64().unwrap();
            s[key] = Value::from((x as f64 * k).round() as u64);
        }
        s["mean_ns"] = Value::from(s["mean_ns"].as_f64().unwrap() * k);
        // What the sampler found of the site: its figures.
        s["self_sampled_ns"] = s["self_ns"].clone();
        s["total_sampled_ns"] = s["total_ns"].clone();
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

/// One run a side: a change within what the reports say of their own
/// precision (a site's sampled figure resting on a few samples) is noise
/// even past the gate; a real 2× slowdown of a well-sampled site fails.
#[test]
fn a_change_within_the_reports_own_precision_is_noise() {
    let dir = std::env::temp_dir().join(format!("tickprof-diff-prec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let b = write_sampled(&dir, "b.json", |_| 1.0);
    // Every site 40% slower but generate (76 ms: ~76 samples, good to
    // ~12%): within 3 standard errors for the small ones.
    let small = "quickstart::main::merge";
    let a = write_sampled(&dir, "a.json", |n| if n == small { 1.4 } else { 1.0 });
    let p = |x: &PathBuf| x.to_string_lossy().into_owned();
    let out = tickprof(&["diff", &p(&b), &p(&a), "--fail-if-slower", "25%"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // generate 2x slower: 76 ms against a precision of ~9 ms a side.
    let a2 = write_sampled(&dir, "a2.json", |n| {
        if n == "quickstart::generate" {
            2.0
        } else {
            1.0
        }
    });
    let out = tickprof(&["diff", &p(&b), &p(&a2), "--fail-if-slower", "25%"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("quickstart::generate: total +100.0%"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of `before.json` with the sampler on (1,000 samples a second)
/// and one site's figures set: `total` ns over `calls` calls, `timed` of
/// them timed, all in one histogram bucket of `per_call` ns, nothing
/// sampled.
fn write_one_site(
    dir: &Path,
    name: &str,
    site: &str,
    (total, calls, timed, per_call): (u64, u64, u64, u64),
) -> String {
    write_site_hist(dir, name, site, (total, calls, timed), &[(per_call, timed)])
}

/// [`write_one_site`] with the timed calls in histogram `hist` (`(upper_ns,
/// calls)` buckets), the percentiles its own.
fn write_site_hist(
    dir: &Path,
    name: &str,
    site: &str,
    (total, calls, timed): (u64, u64, u64),
    hist: &[(u64, u64)],
) -> String {
    let at = |q: f64| -> u64 {
        let n: u64 = hist.iter().map(|&(_, c)| c).sum();
        let mut seen = 0;
        for &(upper, c) in hist {
            seen += c;
            if seen as f64 >= q * n as f64 {
                return upper;
            }
        }
        hist.last().map_or(0, |&(u, _)| u)
    };
    let text = std::fs::read_to_string(data("before.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["run"]["sample_hz"] = Value::from(1000u64);
    for s in v["sites"].as_array_mut().unwrap() {
        if s["name"].as_str() != Some(site) {
            continue;
        }
        for key in [
            "total_ns",
            "self_ns",
            "raw_total_ns",
            "raw_self_ns",
            "compensated_total_ns",
            "compensated_self_ns",
        ] {
            s[key] = Value::from(total);
        }
        s["calls"] = Value::from(calls);
        s["timed_calls"] = Value::from(timed);
        s["mean_ns"] = Value::from(total as f64 / calls as f64);
        s["self_sampled_ns"] = Value::from(0u64);
        s["total_sampled_ns"] = Value::from(0u64);
        s["hist"] = Value::from(hist.iter().map(|&(u, c)| vec![u, c]).collect::<Vec<_>>());
        s["p50_ns"] = Value::from(at(0.5));
        s["p90_ns"] = Value::from(at(0.9));
        s["p99_ns"] = Value::from(at(0.99));
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// One run a side: a small site some of whose calls were counted on
/// paths no sample found rests on at least one sample for them, so its
/// doubling (as a 4.4 µs pulldown-cmark site's between two identical
/// runs; here 44 µs, well under a sampling period) is noise; the same
/// doubling of a site whose calls were all timed is measured, and fails
/// the gate.
#[test]
fn a_site_with_counted_calls_no_sample_found_is_good_to_a_sample() {
    let dir = scratch("cnt");
    let site = "quickstart::main::merge";
    // Its figures: 44 µs over 103 calls (timed: `timed`), nothing sampled.
    let write = |name: &str, k: f64, timed: u64| -> String {
        let total = (44_000.0 * k).round() as u64;
        write_one_site(&dir, name, site, (total, 103, timed, (427.0 * k) as u64))
    };
    let (b, a) = (write("b.json", 1.0, 61), write("a.json", 2.17, 92));
    let out = gate25(&b, &a);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (b, a) = (write("bt.json", 1.0, 103), write("at.json", 2.17, 103));
    let out = gate25(&b, &a);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{site}: total +")), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One run a side: a site timed a few times says nothing of its spread
/// (two calls of 10 ns each, then of 80 ns: pulldown-cmark's
/// `char_from_codepoint` between two identical runs, its cold cache
/// lines), so its eightfold total is noise; the same change of a site
/// timed 103 times fails the gate.
#[test]
fn a_site_timed_a_few_times_is_good_to_its_own_size() {
    let dir = scratch("few");
    let site = "quickstart::main::merge";
    let write = |name: &str, per_call: u64, calls: u64| -> String {
        write_one_site(&dir, name, site, (per_call * calls, calls, calls, per_call))
    };
    let out = gate25(&write("b.json", 10, 2), &write("a.json", 80, 2));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = gate25(&write("bm.json", 10, 103), &write("am.json", 80, 103));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{site}: total +")), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One run a side: a site whose median call is the same while a burst of
/// slow calls moved its total (pulldown-cmark's
/// `InlineStack::set_lowerbound` in two identical runs: 144 calls, 6
/// above 43 ns in one, 26 in the other, total +90%) is noise; the same
/// site with every call twice as slow fails the gate.
#[test]
fn one_run_a_side_a_burst_of_slow_calls_is_noise_a_slower_median_is_not() {
    let dir = scratch("burst");
    let site = "quickstart::main::merge";
    let before: &[(u64, u64)] = &[
        (11, 43),
        (21, 68),
        (33, 25),
        (43, 2),
        (66, 1),
        (72, 1),
        (131, 1),
        (144, 1),
        (209, 2),
    ];
    let after: &[(u64, u64)] = &[
        (11, 36),
        (21, 62),
        (33, 15),
        (43, 5),
        (72, 1),
        (92, 2),
        (118, 2),
        (131, 2),
        (144, 3),
        (157, 5),
        (170, 2),
        (183, 3),
        (196, 1),
        (209, 1),
        (236, 1),
        (262, 1),
        (340, 1),
        (366, 1),
    ];
    let b = write_site_hist(&dir, "b.json", site, (3428, 144, 144), before);
    let a = write_site_hist(&dir, "a.json", site, (6519, 144, 144), after);
    let out = gate25(&b, &a);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doubled: Vec<(u64, u64)> = before.iter().map(|&(u, c)| (2 * u, c)).collect();
    let a2 = write_site_hist(&dir, "a2.json", site, (2 * 3428, 144, 144), &doubled);
    let out = gate25(&b, &a2);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{site}: total +")), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three runs a side, one site 2× slower while its runs spread ±17% on
/// each side (as pulldown-cmark's `parse_block` did on a busy host): the
/// slower side spreads twice as wide in nanoseconds, so the sides are
/// compared on a log scale, where they are apart; in nanoseconds they
/// were not, and the regression passed the gate.
#[test]
fn a_doubled_site_with_a_wide_run_spread_fails_three_runs_a_side() {
    let dir = std::env::temp_dir().join(format!("tickprof-diff-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let slow = "quickstart::generate";
    let side = |tag: &str, factors: [f64; 3]| -> Vec<String> {
        factors
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                let p = write_sampled(&dir, &format!("{tag}{i}.json"), |n| {
                    if n == slow {
                        k
                    } else {
                        1.0
                    }
                });
                p.to_string_lossy().into_owned()
            })
            .collect()
    };
    let before = side("b", [1.0, 0.86, 1.17]);
    let after = side("a", [1.78, 2.0, 2.52]);
    let mut args = vec!["diff", "--fail-if-slower", "5%"];
    args.extend(before.iter().map(String::as_str));
    args.push("--");
    args.extend(after.iter().map(String::as_str));
    let out = tickprof(&args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{slow}: total +")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of `before.json` from a host running `host` times as slow in
/// that run (every site and call path scaled alike: a busy host's turn),
/// with `slow`'s site and call paths `times` slower again; the sampler on
/// as in [`write_sampled`].
fn write_host_run(dir: &Path, name: &str, host: f64, slow: &str, times: f64) -> PathBuf {
    let k = |site: &str| host * if site == slow { times } else { 1.0 };
    let path = write_sampled(dir, name, k);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for n in v["tree"].as_array_mut().unwrap() {
        let f = k(n["name"].as_str().unwrap());
        for key in ["total_ns", "self_ns"] {
            let x = n[key].as_u64().unwrap();
            n[key] = Value::from((x as f64 * f).round() as u64);
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

/// Three runs a side on a host whose speed moves whole runs by up to
/// 1.8× (two identical pulldown-cmark runs: 240 and 417 ms): one site
/// made 2× slower is within each side's spread in nanoseconds, and was
/// not found; as a share of its run it moves alone, and fails the gate.
/// The same runs without the slower site pass.
#[test]
fn a_doubled_site_fails_three_runs_a_side_whose_host_moves_whole_runs() {
    let dir = scratch("host");
    let slow = "quickstart::analyse";
    let side = |tag: &str, hosts: [f64; 3], times: f64| -> Vec<String> {
        hosts
            .iter()
            .enumerate()
            .map(|(i, &h)| {
                let p = write_host_run(&dir, &format!("{tag}{i}.json"), h, slow, times);
                p.to_string_lossy().into_owned()
            })
            .collect()
    };
    let before = side("b", [1.0, 0.75, 1.35], 1.0);
    let gate = |after: &[String]| {
        let mut args = vec!["diff", "--fail-if-slower", "5%"];
        args.extend(before.iter().map(String::as_str));
        args.push("--");
        args.extend(after.iter().map(String::as_str));
        tickprof(&args)
    };
    let out = gate(&side("a", [1.3, 0.8, 1.1], 2.0));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{slow}: total +")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let out = gate(&side("i", [1.3, 0.8, 1.1], 1.0));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh scratch directory for one test.
fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tickprof-diff-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tickprof diff BEFORE AFTER --fail-if-slower 25%`.
fn gate25(before: &str, after: &str) -> std::process::Output {
    tickprof(&["diff", before, after, "--fail-if-slower", "25%"])
}
