//! The report printed at process exit, the CSV file, and the environment.
//!
//! Each test re-runs this test binary as a child process that runs only
//! `child_workload` (with `TPTEST_EXIT_CHILD` set), then parses the
//! child's stderr and files.
#![cfg(feature = "enabled")]

use std::process::Output;
use std::time::Duration;
use tickprof::profile;

const CHILD: &str = "TPTEST_EXIT_CHILD";

#[path = "support/spin.rs"]
mod spin_support;
use spin_support::spin;

#[profile]
fn slow_step() {
    spin(Duration::from_millis(4));
}

#[profile]
fn fast_step() {
    spin(Duration::from_micros(20));
}

#[profile(name = "with, comma \"quoted\"")]
fn odd_name() {}

#[profile]
fn nested_outer() {
    for _ in 0..4 {
        nested_inner();
    }
}

#[profile]
fn nested_inner() {
    spin(Duration::from_micros(30));
}

#[profile]
fn deep_rec(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        deep_rec(n - 1) + 1
    }
}

#[profile]
fn forever() {
    loop {
        spin(Duration::from_millis(1));
    }
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    for _ in 0..3 {
        slow_step();
    }
    for _ in 0..50 {
        fast_step();
    }
    odd_name();
    match mode.as_str() {
        "exit3" => std::process::exit(3),
        "deep" => {
            let t = std::time::Instant::now();
            assert_eq!(deep_rec(3000), 3000);
            eprintln!("outer wall ns: {}", t.elapsed().as_nanos());
        }
        "nested" => {
            std::thread::Builder::new()
                .name("nested-helper".into())
                .spawn(nested_outer)
                .unwrap()
                .join()
                .unwrap();
        }
        "running-thread" => {
            std::thread::spawn(forever);
            spin(Duration::from_millis(20));
        }
        _ => {}
    }
}

#[path = "support/child.rs"]
mod child;

fn run_child(mode: &str, env: &[(&str, &str)]) -> (Output, String) {
    child::run(CHILD, mode, env)
}

/// The table rows: (name, calls) for lines after the column header.
fn rows(stderr: &str) -> Vec<(String, u64)> {
    let mut lines = stderr.lines().skip_while(|l| !l.starts_with("name "));
    lines.next();
    lines
        .take_while(|l| !l.starts_with("tickprof:") && !l.is_empty())
        .map(|l| {
            let cols: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            (cols[0].to_owned(), cols[1].parse().unwrap())
        })
        .collect()
}

/// A text-table row's total column (the third: name, calls, total), in ns.
/// The self column's time of a table row, in ns.
fn self_ns(row: &str) -> f64 {
    let cols: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    // name, calls, total, %run, self
    let (value, unit) = cols[4].split_once(' ').expect("a value and a unit");
    let scale = match unit {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => panic!("unit {unit:?} in {row:?}"),
    };
    // A counted site's total is an estimate, marked `~`.
    value
        .trim_start_matches('~')
        .parse::<f64>()
        .expect("a number")
        * scale
}

fn tmp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tickprof-exit-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn exit_report_has_header_and_rows_sorted_by_self() {
    let (out, err) = run_child("plain", &[("TICKPROF_REPORT", "verbose")]);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("tickprof: clock rdtsc at")
            || err.contains("tickprof: clock cntvct_el0 at")
            || err.contains("tickprof: clock monotonic"),
        "{err}"
    );
    // Invariance is a TSC's fact: said on x86_64 only.
    assert_eq!(
        err.contains("invariant TSC:"),
        cfg!(target_arch = "x86_64"),
        "{err}"
    );
    let r = rows(&err);
    let names: Vec<&str> = r.iter().map(|(n, _)| n.as_str()).collect();
    let slow = names
        .iter()
        .position(|n| n.ends_with("::slow_step"))
        .expect("slow_step row");
    let fast = names
        .iter()
        .position(|n| n.ends_with("::fast_step"))
        .expect("fast_step row");
    // Sorted by the self column (the default), whatever the machine's load
    // made of the two steps' times (a preempted 20 us call can outlast a
    // 4 ms one).
    let selfs: Vec<f64> = err
        .lines()
        .skip_while(|l| !l.starts_with("name "))
        .skip(1)
        .take(r.len())
        .map(self_ns)
        .collect();
    assert!(
        selfs.windows(2).all(|w| w[0] >= w[1]),
        "sorted by self: {names:?} {selfs:?}"
    );
    assert_eq!(r[slow].1, 3);
    assert_eq!(r[fast].1, 50);
    assert!(names.contains(&"with, comma \"quoted\""));
}

#[test]
fn tickprof_off_records_and_prints_nothing() {
    let (out, err) = run_child("plain", &[("TICKPROF", "off")]);
    assert!(out.status.success());
    assert!(!err.contains("tickprof"), "{err}");
}

#[test]
fn top_limits_rows_and_says_how_many_were_left_out() {
    let (out, err) = run_child("plain", &[("TICKPROF_TOP", "1")]);
    assert!(out.status.success());
    let r = rows(&err);
    assert_eq!(r.len(), 1, "{err}");
    assert!(r[0].0.ends_with("::slow_step"));
    assert!(
        err.contains("2 more sites not shown (TICKPROF_TOP=1)"),
        "{err}"
    );
}

#[test]
fn sort_by_calls_and_by_name() {
    let (_, err) = run_child("plain", &[("TICKPROF_SORT", "calls")]);
    let r = rows(&err);
    assert!(r[0].0.ends_with("::fast_step"), "{err}");
    let (_, err) = run_child("plain", &[("TICKPROF_SORT", "name")]);
    let names: Vec<String> = rows(&err).into_iter().map(|r| r.0).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn bad_values_give_one_warning_line_each_and_the_default() {
    let (out, err) = run_child(
        "plain",
        &[
            ("TICKPROF_MAX_DELTA", "forever"),
            ("TICKPROF_TOP", "lots"),
            ("TICKPROF_SORT", "size"),
        ],
    );
    assert!(out.status.success());
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 3, "{err}");
    assert!(warnings
        .iter()
        .any(|w| w.contains("TICKPROF_MAX_DELTA") && w.contains("default (1h)")));
    assert!(warnings.iter().any(|w| w.contains("TICKPROF_TOP")));
    assert!(warnings.iter().any(|w| w.contains("TICKPROF_SORT")));
    // Defaults in force: all rows, sorted by total, nothing rejected.
    let r = rows(&err);
    assert_eq!(r.len(), 3, "{err}");
    assert!(r[0].0.ends_with("::slow_step"));
    assert!(!err.contains("rejected 1"), "{err}");
}

#[test]
fn max_delta_rejects_longer_calls_as_oversized() {
    let (_, err) = run_child("plain", &[("TICKPROF_MAX_DELTA", "1ms")]);
    // The three slow steps are rejected; on a busy machine a preempted
    // short call may be too.
    let line = err
        .lines()
        .find(|l| l.contains("rejected "))
        .unwrap_or_else(|| panic!("no rejection line: {err}"));
    let n: u64 = line
        .split("rejected ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(n >= 3, "{line}");
    assert!(
        line.contains(&format!("(0 reversed, {n} longer than 1.00 ms)")),
        "{line}"
    );
}

#[test]
fn csv_file_has_the_documented_header_and_one_row_per_site() {
    let dir = tmp_dir("csv");
    let path = dir.join("profile.csv");
    let (out, err) = run_child("plain", &[("TICKPROF_OUT", path.to_str().unwrap())]);
    assert!(out.status.success(), "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_owned).collect();
    // The documented columns, in order; later columns are only appended.
    assert!(header.join(",").starts_with(
        "name,calls,total_ns,mean_ns,min_ns,max_ns,reversed,oversized,self_ns,unwound"
    ));
    assert_eq!(header.join(","), tickprof::CSV_HEADER);
    let recs: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(recs.len(), 3);
    let slow = recs.iter().find(|r| r[0].ends_with("::slow_step")).unwrap();
    assert_eq!(&slow[1], "3");
    let total: f64 = slow[2].parse().unwrap();
    assert!(total >= 3.0 * 4e6, "three 4 ms calls: {total}");
    assert!(recs.iter().any(|r| &r[0] == "with, comma \"quoted\""));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn unwritable_output_gives_one_warning_and_the_stderr_report() {
    let (out, err) = run_child(
        "plain",
        &[("TICKPROF_OUT", "/nonexistent-dir/x/profile.csv")],
    );
    assert!(out.status.success());
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("/nonexistent-dir/x/profile.csv"));
    assert_eq!(rows(&err).len(), 3);
}

#[test]
fn exit_code_is_kept() {
    let (out, err) = run_child("exit3", &[]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(rows(&err).len(), 3, "{err}");
}

#[test]
fn a_thread_still_inside_a_marked_function_does_not_hang_or_crash_the_report() {
    let (out, err) = run_child("running-thread", &[]);
    assert!(out.status.success(), "{err}");
    assert!(
        rows(&err).iter().any(|(n, _)| n.ends_with("::slow_step")),
        "{err}"
    );
}

#[test]
fn tree_layout_adds_caller_and_callee_sections() {
    let (out, err) = run_child("nested", &[("TICKPROF_REPORT", "tree")]);
    assert!(out.status.success(), "{err}");
    let section = err
        .split("\n== ")
        .find(|s| s.contains("::nested_inner ("))
        .expect(&err);
    assert!(section.contains("calls 4"), "{section}");
    let called_by = section
        .lines()
        .find(|l| l.trim_start().starts_with("called by"))
        .unwrap();
    assert!(
        called_by.contains("::nested_outer") && called_by.contains(" 4 calls"),
        "{called_by}"
    );
    let outer = err
        .split("\n== ")
        .find(|s| s.contains("::nested_outer ("))
        .unwrap();
    assert!(
        outer
            .lines()
            .any(|l| l.trim_start().starts_with("calls ") && l.contains("::nested_inner")),
        "{outer}"
    );
}

#[test]
fn threads_layout_adds_a_per_thread_breakdown() {
    let (out, err) = run_child("nested", &[("TICKPROF_THREADS", "1")]);
    assert!(out.status.success(), "{err}");
    let helper = err
        .split("\n-- thread ")
        .find(|s| s.starts_with("nested-helper"))
        .expect(&err);
    assert!(helper.contains("finished"), "{helper}");
    let row = helper
        .lines()
        .find(|l| l.contains("::nested_inner"))
        .unwrap();
    assert!(row.contains(" 4 calls"), "{row}");
}

#[test]
fn deep_recursion_beyond_the_node_cap_is_folded_not_lost() {
    let dir = tmp_dir("deep");
    let path = dir.join("deep.csv");
    let (out, err) = run_child(
        "deep",
        &[
            ("TICKPROF_MAX_NODES", "100"),
            ("TICKPROF_OUT", path.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "{err}");
    let row = rows(&err)
        .into_iter()
        .find(|r| r.0.ends_with("::deep_rec"))
        .expect(&err);
    assert_eq!(row.1, 3001);
    assert!(err.contains("folded into overflow nodes"), "{err}");
    let wall: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("outer wall ns: "))
        .and_then(|v| v.trim().parse().ok())
        .expect(&err);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let rec = rdr
        .records()
        .map(Result::unwrap)
        .find(|r| r[0].ends_with("::deep_rec"))
        .unwrap();
    let total: u64 = rec[2].parse().unwrap();
    let self_ns: u64 = rec[8].parse().unwrap();
    assert!(
        total <= wall,
        "counted once per outermost call: {total} <= {wall}"
    );
    assert!(self_ns <= total);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_header_says_whether_times_are_compensated() {
    let (_, err) = run_child("plain", &[]);
    assert!(err.contains("tickprof: instrumentation "), "{err}");
    let (out, err) = run_child("plain", &[("TICKPROF_COMPENSATE", "0")]);
    assert!(out.status.success());
    assert!(
        err.contains("left in the times below") || err.contains("times are raw"),
        "{err}"
    );
    let (out, err) = run_child("plain", &[("TICKPROF_SAMPLE", "0")]);
    assert!(out.status.success());
    assert!(
        err.contains(
            "instrumentation not measured: the sampler is off (TICKPROF_SAMPLE=0): times are raw"
        ),
        "{err}"
    );
    assert_eq!(rows(&err).len(), 3);
}
