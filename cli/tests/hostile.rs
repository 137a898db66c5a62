//! The `tickprof` command on hostile and careless input, as a child
//! process: names with control characters, broken trees, endless and
//! oversized files, things that are not traces, deep traces, many sites.
//! Each test names the point of issue 25 it covers.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::support;
use support::{data, tickprof};

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8 output")
}

/// A directory of this test's own, emptied.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickprof-hostile-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_json(path: &Path, v: &Value) -> String {
    std::fs::write(path, serde_json::to_string(v).unwrap()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn sample(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(name)).unwrap()).unwrap()
}

/// A name that would forge a line, a TSV field and a row, clear the
/// screen and reverse the text, if printed raw.
const EVIL: &str = "evil\n[1] forged();  1 ns\tx\t\u{1b}[2J\r\u{202e}gnp.exe\u{85}";

/// Nothing in `s` that drives a terminal or breaks a line where a name is.
fn assert_clean(s: &str, what: &str) {
    assert!(!s.contains('\u{1b}'), "{what}: escape: {s:?}");
    assert!(!s.contains('\r'), "{what}: carriage return: {s:?}");
    assert!(!s.contains('\u{202e}'), "{what}: bidi override: {s:?}");
    assert!(!s.contains('\u{85}'), "{what}: next line: {s:?}");
    assert!(
        !s.lines().any(|l| l.starts_with("[1] forged")),
        "{what}: forged line: {s:?}"
    );
}

/// Point 12: names reach no output raw, in `diff` (table, raw, the
/// slower-than-allowed lines), `show` and `replay`.
#[test]
fn control_characters_in_names_never_reach_the_output_raw() {
    let dir = scratch("names");
    let mut b = sample("before.json");
    let mut a = sample("after.json");
    let victim = "quickstart::generate";
    for doc in [&mut b, &mut a] {
        for s in doc["sites"].as_array_mut().unwrap() {
            if s["name"] == victim {
                s["name"] = json!(EVIL);
                // Slower after, so that the gate names it.
                s["total_ns"] = json!(s["total_ns"].as_u64().unwrap() * 2);
            }
        }
        doc["tree"][1]["name"] = json!(EVIL);
        doc["threads"][0]["name"] = json!(EVIL);
        doc["threads"][0]["sites"][0]["name"] = json!(EVIL);
    }
    b["sites"].as_array_mut().unwrap().iter_mut().for_each(|s| {
        if s["name"] == EVIL {
            s["total_ns"] = json!(s["total_ns"].as_u64().unwrap() / 4);
        }
    });
    let (b, a) = (
        write_json(&dir.join("b.json"), &b),
        write_json(&dir.join("a.json"), &a),
    );

    let out = tickprof(&["diff", "--all", &b, &a, "--fail-if-slower", "0%"]);
    assert_eq!(out.status.code(), Some(1));
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_clean(&so, "diff table");
    assert_clean(&se, "slower than allowed");
    assert!(
        so.contains("evil [1] forged();  1 ns x  [2J \\u{202e}gnp.exe "),
        "{so}"
    );
    assert!(
        se.lines()
            .all(|l| l.starts_with("tickprof: slower than allowed: ")),
        "{se}"
    );
    assert!(se.contains("evil [1] forged()"), "{se}");

    let out = tickprof(&["diff", "--raw", &b, &a]);
    assert_eq!(out.status.code(), Some(0));
    let so = text(&out.stdout);
    assert_clean(&so, "diff --raw");
    let sites = sample("before.json")["sites"].as_array().unwrap().len();
    assert_eq!(so.lines().count(), 1 + sites, "{so}");
    assert!(so.lines().all(|l| l.split('\t').count() == 10), "{so}");
    assert!(
        so.contains("evil\\n[1] forged();  1 ns\\tx\\t\\u{1b}[2J\\r\\u{202e}gnp.exe\\u{85}\t"),
        "{so}"
    );

    for extra in [&[][..], &["--tree", "--threads"][..]] {
        let mut args = vec!["show", b.as_str()];
        args.extend_from_slice(extra);
        let out = tickprof(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_clean(&text(&out.stdout), &format!("show {extra:?}"));
    }

    let trace = json!({"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": EVIL}},
        {"ph": "X", "name": EVIL, "pid": 1, "tid": 1, "ts": 0.0, "dur": 4.0},
        {"ph": "X", "name": EVIL, "pid": 1, "tid": 1, "ts": 1.0, "dur": 1.0},
    ]});
    let t = write_json(&dir.join("evil.trace.json"), &trace);
    let out = tickprof(&["replay", &t]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    assert_clean(&so, "replay");
    assert_eq!(so.lines().count(), 4, "{so}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Point 12, file names: an error naming a file (missing, not a report,
/// an output that cannot be written) prints the name as given
/// terminal-safe, so a planted file name cannot drive the terminal
/// either.
#[test]
fn file_names_in_errors_never_reach_stderr_raw() {
    let dir = scratch("evilpath");
    let name = "evil\u{1b}[2J\r\u{202e}gnp\n[1] forged";
    let bad = dir.join(format!("{name}.json"));
    std::fs::write(&bad, "not json").unwrap();
    let missing = dir.join(format!("missing{name}.json"));
    let before = data("before.json");
    let out_dir = dir.join(name).join("out.csv");
    for args in [
        vec!["show".as_ref(), bad.as_os_str()],
        vec!["show".as_ref(), missing.as_os_str()],
        vec!["diff".as_ref(), before.as_os_str(), bad.as_os_str()],
        vec!["replay".as_ref(), bad.as_os_str()],
        vec![
            "show".as_ref(),
            before.as_os_str(),
            "--out".as_ref(),
            out_dir.as_os_str(),
        ],
    ] {
        let out = tickprof(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = text(&out.stderr);
        assert_clean(&e, &format!("{args:?}"));
        assert_eq!(e.lines().count(), 1, "{e:?}");
        assert!(e.contains("gnp"), "{e:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Point 13: a tree with a parent out of range, itself, or in a cycle, or
/// a depth that does not follow, is exit 2 naming the node, for every
/// command that reads the report (and `--out x.folded` writes nothing).
#[test]
fn broken_trees_are_rejected_naming_the_node() {
    let dir = scratch("trees");
    let n = sample("before.json")["tree"].as_array().unwrap().len();
    assert!(n >= 4);
    let cases = [
        (
            vec![(3, "parent", json!(3))],
            "tree[3].parent: 3 is the node itself",
        ),
        (
            vec![(2, "parent", json!(999))],
            &*format!("tree[2].parent: 999 is out of range (the tree has {n} nodes)"),
        ),
        (
            vec![(1, "parent", json!(2)), (2, "parent", json!(1))],
            "tree[1].parent: 2 comes after the node",
        ),
        (
            vec![(2, "depth", json!(7))],
            "tree[2].depth: 7, but its parent",
        ),
        (
            vec![(1, "parent", json!(null))],
            "tree[1].parent: null, but only the root (tree[0]) has no parent",
        ),
    ];
    for (i, (edits, says)) in cases.iter().enumerate() {
        let mut doc = sample("before.json");
        for (node, field, v) in edits {
            doc["tree"][*node][*field] = v.clone();
        }
        let f = write_json(&dir.join(format!("broken{i}.json")), &doc);
        let folded = dir.join(format!("out{i}.folded"));
        let folded = folded.to_str().unwrap();
        let good = data("after.json");
        for args in [
            vec!["show", f.as_str()],
            vec!["show", f.as_str(), "--out", folded],
            vec!["diff", f.as_str(), good.to_str().unwrap()],
        ] {
            let out = tickprof(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
            let err = text(&out.stderr);
            assert!(
                err.starts_with(&format!(
                    "tickprof: {f}: not a tickprof JSON report ({says}"
                )),
                "{args:?}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        assert!(!Path::new(folded).exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Point 11: an endless device and a file over the cap are exit 2 with
/// one line, without reading on (a sparse file over the cap takes no
/// disk).
#[test]
fn endless_and_oversized_inputs_are_refused() {
    let cap_line = "larger than 256 MiB, the most this command reads";
    if Path::new("/dev/zero").exists() {
        for args in [
            vec!["show", "/dev/zero"],
            vec!["replay", "/dev/zero"],
            vec!["diff", "/dev/zero", "/dev/zero"],
        ] {
            let out = tickprof(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert_eq!(
                text(&out.stderr),
                format!("tickprof: /dev/zero: {cap_line}\n")
            );
        }
    }
    let dir = scratch("big");
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((256 << 20) + 1)
        .unwrap();
    let big = big.to_str().unwrap();
    let out = tickprof(&["show", big]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), format!("tickprof: {big}: {cap_line}\n"));
    let bin = dir.join("bin.json");
    std::fs::write(&bin, b"{\"version\": \xff}").unwrap();
    let out = tickprof(&["show", bin.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not UTF-8 text (byte 12)"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Point 14: `replay` of what is not a trace (bare numbers, events that
/// are not objects, a report, begin/end pairs without one call) is exit 2 with one line and no output.
#[test]
fn replay_of_what_is_not_a_trace_says_so() {
    let dir = scratch("nottrace");
    for (i, (input, says)) in [
        ("1 2 3\n", "not JSON: trailing characters at byte 2"),
        ("[1, 2, 3]", "no \"traceEvents\" array: not a Chrome trace"),
        ("42", "no \"traceEvents\" array: not a Chrome trace"),
        (
            "{\"traceEvents\": [1, 2, 3]}",
            "traceEvents[0] is not an event (an object with a \"ph\" string): not a Chrome trace",
        ),
        (
            "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\"}]}",
            "traceEvents[0]: an \"X\" event without ts, dur or name",
        ),
        (
            "{\"traceEvents\": [{\"ph\": \"B\", \"name\": \"a\", \"ts\": 0}, {\"ph\": \"E\", \"ts\": 9}]}",
            "traceEvents[0]: a \"B\" event, and no \"X\" (complete) event: \
             not a tickprof trace (only \"X\" events are replayed)",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let f = dir.join(format!("t{i}.json"));
        std::fs::write(&f, input).unwrap();
        let f = f.to_str().unwrap();
        let out = tickprof(&["replay", f]);
        assert_eq!(out.status.code(), Some(2), "{input}");
        assert!(out.stdout.is_empty(), "{input}");
        assert_eq!(text(&out.stderr), format!("tickprof: {f}: {says}\n"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Point 10: a 20,000-deep trace replays with indentation capped at 64
/// levels (the depth shown after it): output linear in the calls.
#[test]
fn a_deep_replay_is_capped_in_indentation() {
    let dir = scratch("deep");
    let depth = 20_000u64;
    let mut t = String::from("{\"traceEvents\":[");
    for i in 0..depth {
        let sep = if i == 0 { "" } else { "," };
        t.push_str(&format!(
            "{sep}{{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":{i},\"dur\":{}}}",
            2 * (depth - i)
        ));
    }
    t.push_str("]}");
    let f = dir.join("deep.trace.json");
    std::fs::write(&f, t).unwrap();
    let out = tickprof(&["replay", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    let lines: Vec<&str> = so.lines().collect();
    // The header, an entry per call but the leaf, the leaf, an exit each.
    assert_eq!(lines.len() as u64, 1 + (depth - 1) + 1 + (depth - 1));
    let longest = lines.iter().map(|l| l.len()).max().unwrap();
    assert!(longest < 200, "{longest}");
    assert_eq!(
        lines[1 + 19_999],
        format!("[1] {}[depth 19999] r();  2.00 µs", " ".repeat(128))
    );
    assert!(so.len() < 200 * 2 * depth as usize);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A report of `n` sites `s0`…, built from a real report's first site,
/// site `i`'s total time `base + i * step`.
pub fn many_sites(n: usize, base: u64, step: u64) -> Value {
    let mut doc = sample("before.json");
    let template = doc["sites"][0].clone();
    let sites: Vec<Value> = (0..n as u64)
        .map(|i| {
            let mut s = template.clone();
            s["name"] = json!(format!("s{i}"));
            s["total_ns"] = json!(base + i * step);
            s["calls"] = json!(i + 1);
            s
        })
        .collect();
    doc["sites"] = json!(sites);
    doc["tree"] = json!([doc["tree"][0].clone()]);
    doc["threads"] = json!([]);
    doc
}

/// Point 9: `diff` matches sites by name correctly on thousands of sites
/// (its time on 100,000 is in `scripts/cli_scale.sh`).
#[test]
fn diff_matches_thousands_of_sites_by_name() {
    let dir = scratch("many");
    let n = 3_000;
    let b = write_json(&dir.join("b.json"), &many_sites(n, 1_000_000, 0));
    // After: every site i slower by i ns; one gone, one new.
    let mut after = many_sites(n, 1_000_000, 1);
    after["sites"][0]["name"] = json!("new");
    let a = write_json(&dir.join("a.json"), &after);
    let out = tickprof(&["diff", "--raw", &b, &a]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    let rows: Vec<Vec<&str>> = so
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), n + 1);
    // Biggest change first: a site present in one report counts whole.
    assert_eq!(rows[0][0], "new");
    assert_eq!(rows[1][0], "s0");
    assert_eq!((rows[1][4], rows[1][2]), ("-", "-"));
    assert_eq!(rows[2][0], format!("s{}", n - 1));
    for r in &rows[2..] {
        let i: u64 = r[0][1..].parse().unwrap();
        assert_eq!(r[1], (i + 1).to_string());
        assert_eq!(r[3], "1000000");
        assert_eq!(r[4], (1_000_000 + i).to_string());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
