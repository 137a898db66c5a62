//! Every output of a deeply recursive run is written at exit, bounded, and
//! readable: folded stacks and the SVG collapse direct recursion into one
//! frame and cut mutual recursion at `export::stacks::MAX_DEPTH` frames.
//!
//! Each test re-runs this binary as a child (`TPTEST_DEEP_CHILD=kind:depth`)
//! that recurses on a thread with a 1 GiB stack, then reads the files it
//! wrote at exit. `scripts/stress_exports.sh` runs the same child at depth
//! 200,000 and measures its peak memory.
#![cfg(feature = "enabled")]

use crate::support::child;

use std::path::{Path, PathBuf};
use tickprof::export::stacks::MAX_DEPTH;
use tickprof::profile;

const CHILD: &str = "TPTEST_DEEP_CHILD";
/// The depth the tests use (the stress script: 200,000).
const DEPTH: u32 = 20_000;
const FORMATS: [&str; 5] = ["folded", "svg", "json", "html", "txt"];

/// Direct recursion.
#[profile]
fn down(n: u32) -> u32 {
    if n <= 1 {
        n
    } else {
        down(n - 1) + 1
    }
}

/// Mutual recursion, with `pong`.
#[profile]
fn ping(n: u32) -> u32 {
    if n <= 1 {
        n
    } else {
        pong(n - 1) + 1
    }
}

/// Mutual recursion, with `ping`.
#[profile]
fn pong(n: u32) -> u32 {
    if n <= 1 {
        n
    } else {
        ping(n - 1) + 1
    }
}

/// The child's work (`kind:depth`); does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let (kind, depth) = spec.split_once(':').expect("kind:depth");
    let depth: u32 = depth.parse().expect("depth");
    let f: fn(u32) -> u32 = if kind == "mutual" { ping } else { down };
    let got = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || f(depth))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(got, depth);
}

/// Runs the child; returns the directory holding `deep.<format>`.
fn run(kind: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickprof-deep-{}-{kind}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let outs: Vec<String> = FORMATS
        .iter()
        .map(|f| dir.join(format!("deep.{f}")).to_str().unwrap().to_owned())
        .collect();
    let out = child::child_command(CHILD, &format!("{kind}:{DEPTH}"))
        .env("TICKPROF_OUT", outs.join(","))
        .env("TICKPROF_REPORT", "tree")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("cannot write"), "{err}");
    dir
}

fn read(dir: &Path, format: &str) -> String {
    std::fs::read_to_string(dir.join(format!("deep.{format}")))
        .unwrap_or_else(|e| panic!("deep.{format}: {e}"))
}

/// Folded lines as (frames, count), as inferno reads them.
fn folded(dir: &Path) -> Vec<(Vec<String>, u64)> {
    read(dir, "folded")
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').expect("frames, space, count");
            let n = n.parse().unwrap_or_else(|_| panic!("count in {l:?}"));
            (stack.split(';').map(str::to_owned).collect(), n)
        })
        .collect()
}

/// Checks the formats every run shares; returns the JSON tree's self-time
/// sum (the root excluded) and its node count.
fn check_common(dir: &Path, site: &str) -> (u64, usize) {
    let json: serde_json::Value = serde_json::from_str(&read(dir, "json")).expect("JSON");
    let tree = json["tree"].as_array().unwrap();
    let self_sum = tree
        .iter()
        .skip(1)
        .map(|n| n["self_ns"].as_u64().unwrap())
        .sum();
    let html = read(dir, "html");
    assert!(html.trim_end().ends_with("</html>"));
    // The text report with the caller/callee sections (TICKPROF_REPORT=tree).
    let txt = read(dir, "txt");
    let calls = txt
        .lines()
        .find(|l| l.starts_with(&format!("{}{site} ", module_path!())))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect(&txt);
    let expected = if site == "::down" { DEPTH } else { DEPTH / 2 };
    assert_eq!(calls, expected.to_string(), "{txt}");
    assert!(
        txt.contains(&format!("== {}{site} (", module_path!())),
        "{txt}"
    );
    let svg = read(dir, "svg");
    assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
    let mut reader = quick_xml::Reader::from_str(&svg);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("SVG is not XML at {}: {e}", reader.buffer_position()),
        }
    }
    (self_sum, tree.len())
}

#[test]
fn direct_recursion_is_one_frame_in_every_stack_format() {
    let dir = run("direct");
    let (self_sum, nodes) = check_common(&dir, "::down");
    assert_eq!(nodes, 1 + DEPTH as usize, "the JSON tree keeps every node");
    let lines = folded(&dir);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let (frames, count) = &lines[0];
    assert_eq!(frames.len(), 1);
    assert!(
        frames[0].ends_with(&format!("::down [×{DEPTH}]")),
        "{frames:?}"
    );
    assert_eq!(*count, self_sum, "self time kept exactly");
    assert!(read(&dir, "svg").contains(&format!("::down [×{DEPTH}] (")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn mutual_recursion_is_cut_at_the_maximum_depth() {
    let dir = run("mutual");
    let (self_sum, nodes) = check_common(&dir, "::ping");
    assert_eq!(nodes, 1 + DEPTH as usize);
    let lines = folded(&dir);
    assert_eq!(lines.len(), MAX_DEPTH + 1);
    assert_eq!(lines.iter().map(|l| l.1).sum::<u64>(), self_sum);
    assert!(lines.iter().all(|(f, _)| f.len() <= MAX_DEPTH + 1));
    let (last, _) = &lines[MAX_DEPTH];
    let below = DEPTH as usize - MAX_DEPTH;
    assert_eq!(last[MAX_DEPTH], format!("[… {below} frames]"));
    assert!(last[..MAX_DEPTH]
        .iter()
        .enumerate()
        .all(|(i, f)| f.ends_with(["::ping", "::pong"][i % 2])));
    assert!(read(&dir, "svg").contains(&format!("[… {below} frames] (")));
    // inferno reads the file and draws the cut frame.
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(
        &mut inferno::flamegraph::Options::default(),
        read(&dir, "folded").as_bytes(),
        &mut svg,
    )
    .expect("inferno reads the folded file");
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.contains(&format!("[… {below} frames]")));
    let _ = std::fs::remove_dir_all(dir);
}
