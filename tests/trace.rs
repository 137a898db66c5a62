//! The Chrome/Perfetto trace output: individual calls per thread, bounded.
#![cfg(feature = "enabled")]

use tickprof::profile;

const CHILD: &str = "TPTEST_TRACE_CHILD";

#[profile]
fn traced_leaf(x: u64) -> u64 {
    std::hint::black_box(x) + 1
}

#[profile]
fn traced_parent() -> u64 {
    (0..50).map(traced_leaf).sum()
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    if let Some(path) = mode.strip_prefix("since:") {
        // A difference of snapshots (a delta dump) traces only the calls
        // between them.
        assert_eq!(traced_parent(), (1..=50).sum::<u64>());
        let before = tickprof::snapshot();
        (0..7).for_each(|i| {
            traced_leaf(i);
        });
        let delta = tickprof::snapshot().since(&before);
        let opts = tickprof::TextOptions::default();
        tickprof::export::write_to_path(&delta, path, &opts).unwrap();
        return;
    }
    assert_eq!(traced_parent(), (1..=50).sum::<u64>());
    std::thread::Builder::new()
        .name("tracer-helper".into())
        .spawn(|| (0..20).map(traced_leaf).sum::<u64>())
        .unwrap()
        .join()
        .unwrap();
}

use crate::support::child;

fn run_child(dir: &std::path::Path, env: &[(&str, &str)]) -> String {
    run_child_mode(dir, "1", env)
}

fn run_child_mode(dir: &std::path::Path, mode: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = child::child_command(CHILD, mode);
    cmd.current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tickprof-trace-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn events(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect()
}

#[test]
fn trace_json_has_every_call_on_its_threads_timeline() {
    let dir = tmp("full");
    let path = dir.join("run.trace.json");
    run_child(&dir, &[("TICKPROF_OUT", path.to_str().unwrap())]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let all = events(&v);
    let leaves: Vec<_> = all
        .iter()
        .filter(|e| e["name"].as_str().unwrap().ends_with("::traced_leaf"))
        .collect();
    assert_eq!(leaves.len(), 70);
    let parent = all
        .iter()
        .find(|e| e["name"].as_str().unwrap().ends_with("::traced_parent"))
        .unwrap();
    let (p0, pd) = (
        parent["ts"].as_f64().unwrap(),
        parent["dur"].as_f64().unwrap(),
    );
    let ptid = parent["tid"].as_u64().unwrap();
    let under_parent = leaves
        .iter()
        .filter(|e| e["tid"].as_u64() == Some(ptid))
        .count();
    assert_eq!(under_parent, 50);
    for e in leaves.iter().filter(|e| e["tid"].as_u64() == Some(ptid)) {
        let (t, d) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!(d >= 0.0);
        assert!(
            t >= p0 - 0.001 && t + d <= p0 + pd + 0.001,
            "leaf {t}+{d} outside parent {p0}+{pd}"
        );
    }
    // The helper thread has its own tid and its name as metadata.
    let meta: Vec<_> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M")
        .collect();
    let helper = meta
        .iter()
        .find(|m| m["args"]["name"] == "tracer-helper")
        .expect("thread name");
    let htid = helper["tid"].as_u64().unwrap();
    assert_ne!(htid, ptid);
    assert_eq!(
        leaves
            .iter()
            .filter(|e| e["tid"].as_u64() == Some(htid))
            .count(),
        20
    );
    assert_eq!(v["otherData"]["dropped_events"], 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_snapshot_difference_traces_only_the_calls_between() {
    let dir = tmp("since");
    let path = dir.join("delta.trace.json");
    let mode = format!("since:{}", path.to_str().unwrap());
    run_child_mode(
        &dir,
        &mode,
        &[("TICKPROF_TRACE", "1"), ("TICKPROF_STDERR", "0")],
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let all = events(&v);
    assert_eq!(all.len(), 7, "{all:?}");
    assert!(all
        .iter()
        .all(|e| e["name"].as_str().unwrap().ends_with("::traced_leaf")));
    assert_eq!(v["otherData"]["dropped_events"], 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn events_past_the_bound_are_dropped_and_counted() {
    let dir = tmp("bounded");
    let path = dir.join("small.trace.json");
    let err = run_child(
        &dir,
        &[
            ("TICKPROF_OUT", path.to_str().unwrap()),
            ("TICKPROF_TRACE_EVENTS", "10"),
        ],
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Main thread: 51 calls, 10 kept; helper: 20 calls, 10 kept.
    assert_eq!(events(&v).len(), 20);
    assert_eq!(v["otherData"]["dropped_events"], 41 + 10);
    assert!(err.contains("51 trace events dropped"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn tickprof_trace_alone_writes_the_default_file() {
    let dir = tmp("default");
    run_child(&dir, &[("TICKPROF_TRACE", "1")]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("tickprof.trace.json")).unwrap())
            .unwrap();
    assert_eq!(events(&v).len(), 71);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn tracing_is_off_unless_asked() {
    traced_leaf(1);
    let r = tickprof::report();
    assert!(!r.run.tracing);
    assert!(r.trace.is_none());
}
