//! Runs a test binary's `child_workload` under a `TICKPROF_TIME` mode and
//! reads its JSON report: the harness of the tests that compare timing
//! modes (`tests/adapt.rs`, `tests/counted_calls.rs`).

use super::child;
use std::collections::BTreeMap;

/// One child's JSON report: `marker=1` set, `TICKPROF_TIME=mode`, the
/// report written to a fresh temporary file named after `tag`, tickprof's
/// counting allocator installed (`tests/counted_calls.rs` reads its counts).
#[track_caller] // the caller's module names the child's test
pub fn run(marker: &str, tag: &str, mode: &str) -> serde_json::Value {
    static RUN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("tickprof-{tag}-{}-{mode}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.json");
    let (out, stderr) = child::run_quiet(
        marker,
        "1",
        &[
            ("TICKPROF_TIME", mode),
            ("TICKPROF_OUT", path.to_str().unwrap()),
            (child::ALLOCATOR, "counting"),
        ],
    );
    assert!(out.status.success(), "{mode}: {stderr}");
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&text).unwrap()
}

/// The last segment of a function's path.
pub fn short(name: &str) -> String {
    name.rsplit("::").next().unwrap_or(name).to_owned()
}

/// Call path (short names from the root down) → calls, summed over the
/// tree's nodes with that path.
pub fn paths(r: &serde_json::Value) -> BTreeMap<Vec<String>, u64> {
    let tree = r["tree"].as_array().unwrap();
    let mut names: Vec<Vec<String>> = Vec::with_capacity(tree.len());
    let mut out = BTreeMap::new();
    for n in tree {
        let mut path = match n["parent"].as_u64() {
            Some(p) => names[p as usize].clone(),
            None => Vec::new(),
        };
        if n["parent"].is_u64() {
            path.push(short(n["name"].as_str().unwrap()));
            *out.entry(path.clone()).or_insert(0) += n["calls"].as_u64().unwrap();
        }
        names.push(path);
    }
    out
}
