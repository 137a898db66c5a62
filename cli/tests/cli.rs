//! The `tickprof` command, run as a child process on the JSON reports of
//! two real runs of `examples/quickstart.rs` (`tests/data/`: `before.json`
//! with the default compensated times, and the `.txt` and `.html` the same
//! run wrote; `after.json` with `TICKPROF_COMPENSATE=0`).

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .to_str()
        .expect("UTF-8 path")
        .to_owned()
}

fn tickprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickprof"))
        .args(args)
        .env_remove("TICKPROF_OUT")
        .env("TICKPROF_STDERR", "0")
        .output()
        .expect("the command runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8")
}

/// (calls, total_ns, self_ns, mean_ns) of each site of a saved report.
fn figures(name: &str) -> Vec<(String, [String; 4])> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(data(name)).unwrap()).unwrap();
    doc["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].to_string();
            (
                s["name"].as_str().unwrap().to_owned(),
                [f("calls"), f("total_ns"), f("self_ns"), f("mean_ns")],
            )
        })
        .collect()
}

/// Relative change of total time per site, from the JSON files.
fn total_changes() -> Vec<(String, f64)> {
    let after = figures("after.json");
    figures("before.json")
        .into_iter()
        .map(|(name, b)| {
            let a = &after.iter().find(|(n, _)| *n == name).unwrap().1;
            let (b, a): (f64, f64) = (b[1].parse().unwrap(), a[1].parse().unwrap());
            (name, (a - b) / b)
        })
        .collect()
}

#[test]
fn diff_raw_gives_each_sites_exact_figures_from_both_runs() {
    let out = tickprof(&["diff", "--raw", &data("before.json"), &data("after.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("name\tcalls_before\tcalls_after\ttotal_ns_before\ttotal_ns_after\tself_ns_before\tself_ns_after\tmean_ns_before\tmean_ns_after\tchange")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    let before = figures("before.json");
    let after = figures("after.json");
    assert_eq!(rows.len(), before.len());
    assert_eq!(before.len(), 7);
    for (name, b) in &before {
        let a = &after.iter().find(|(n, _)| n == name).unwrap().1;
        let row = rows.iter().find(|r| r[0] == name).unwrap();
        assert_eq!(row[1..7], [&*b[0], &a[0], &b[1], &a[1], &b[2], &a[2]]);
        let mean = |s: &str| s.parse::<f64>().unwrap();
        assert_eq!((mean(row[7]), mean(row[8])), (mean(&b[3]), mean(&a[3])));
        let change = (a[1].parse::<f64>().unwrap() - b[1].parse::<f64>().unwrap())
            / b[1].parse::<f64>().unwrap();
        assert_eq!(row[9].parse::<f64>().unwrap(), change, "{name}");
    }
    // Biggest absolute change of total time first.
    let delta = |r: &Vec<&str>| {
        (r[4].parse::<i64>().unwrap() - r[3].parse::<i64>().unwrap()).unsigned_abs()
    };
    assert!(rows.windows(2).all(|w| delta(&w[0]) >= delta(&w[1])));
}

#[test]
fn diff_table_shows_the_changes_beyond_the_noise() {
    let out = tickprof(&[
        "diff",
        &data("before.json"),
        &data("after.json"),
        "--noise",
        "10%",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let changes = total_changes();
    for (name, c) in &changes {
        let shown = text.lines().any(|l| l.starts_with(&format!("{name} ")));
        assert_eq!(shown, c.abs() >= 0.10, "{name} {c}\n{text}");
    }
    let hidden = changes.iter().filter(|(_, c)| c.abs() < 0.10).count();
    assert!(
        text.contains(&format!(
            "{hidden} site{} within the noise (±10.0% total",
            if hidden == 1 { "" } else { "s" }
        )),
        "{text}"
    );
    assert!(text.contains("400000 → 400000"), "{text}");
}

#[test]
fn fail_if_slower_exits_1_past_the_largest_slowdown_and_0_under_it() {
    let changes = total_changes();
    let (worst, max) = changes
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .cloned()
        .unwrap();
    assert!(max > 0.05, "the raw run is slower somewhere: {changes:?}");
    let below = format!("{}%", max * 100.0 - 0.5);
    let above = format!("{}%", max * 100.0 + 0.5);
    let (b, a) = (data("before.json"), data("after.json"));

    let out = tickprof(&["diff", &b, &a, "--fail-if-slower", &below]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("tickprof: slower than allowed: {worst}: total ")),
        "{err}"
    );

    let out = tickprof(&["diff", &b, &a, "--fail-if-slower", &above]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Gated on one site: only its change counts.
    let (fastest, _) = changes.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    let out = tickprof(&["diff", &b, &a, "--fail-if-slower", "0%", "--site", fastest]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = tickprof(&["diff", &b, &a, "--fail-if-slower", &below, "--site", &worst]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn bad_input_is_exit_2_with_one_line() {
    let dir = std::env::temp_dir().join(format!("tickprof-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v2 = dir.join("v2.json");
    let text = std::fs::read_to_string(data("before.json")).unwrap();
    std::fs::write(&v2, text.replacen("\"version\": 1", "\"version\": 2", 1)).unwrap();
    let not_json = dir.join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    let other_json = dir.join("other.json");
    std::fs::write(&other_json, "{\"traceEvents\": []}").unwrap();
    let b = data("before.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["diff", &b, "/nonexistent/after.json"],
            "/nonexistent/after.json: ",
        ),
        (
            vec!["diff", &b, v2.to_str().unwrap()],
            "JSON report version 2; this tickprof reads version 1",
        ),
        (
            vec!["show", not_json.to_str().unwrap()],
            "not a tickprof JSON report (not JSON: ",
        ),
        (
            vec!["show", other_json.to_str().unwrap()],
            "not a tickprof JSON report (no \"version\" field)",
        ),
        (
            vec!["diff", &b, &b, "--fail-if-slower", "5%", "--site", "nope"],
            "site \"nope\" is in neither report",
        ),
    ];
    for (args, want) in cases {
        let out = tickprof(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("tickprof: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = tickprof(&["diff", &b, &b, "--fail-if-slower", "five"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn show_prints_what_the_program_wrote() {
    let out = tickprof(&["show", &data("before.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let txt = std::fs::read_to_string(data("before.txt")).unwrap();
    assert_eq!(stdout(&out), txt);

    let dir = std::env::temp_dir().join(format!("tickprof-cli-show-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("r.html");
    let folded = dir.join("r.folded");
    let out = tickprof(&[
        "show",
        &data("before.json"),
        "--html",
        html.to_str().unwrap(),
        "--out",
        folded.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&html).unwrap(),
        std::fs::read_to_string(data("before.html")).unwrap()
    );
    let folded = std::fs::read_to_string(&folded).unwrap();
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("quickstart::analyse;quickstart::parse_line ")),
        "{folded}"
    );

    let out = tickprof(&["show", &data("before.json"), "--tree"]);
    let text = stdout(&out);
    assert!(text.starts_with(&txt[..txt.find("\nname").unwrap()]));
    assert!(text.len() > txt.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_renders_a_recorded_trace_as_the_trace_log() {
    let out = tickprof(&["replay", &data("small.trace.json")]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "# thread 1: main\n\
         [1] app::main() {\n\
         [1]   app::parse();  500 ns\n\
         [1]   app::eval() {\n\
         [1]     app::lookup();  250 ns\n\
         [1]   } 1.00 µs /* app::eval */\n\
         [1] } 4.00 µs /* app::main */\n\
         # thread 2: worker\n\
         [2] app::work();  2.00 µs\n"
    );
    let filtered = tickprof(&[
        "replay",
        &data("small.trace.json"),
        "--filter",
        "app::eval",
        "--tid",
        "1",
    ]);
    assert_eq!(
        stdout(&filtered),
        "# thread 1: main\n\
         [1] app::eval() {\n\
         [1]   app::lookup();  250 ns\n\
         [1] } 1.00 µs /* app::eval */\n"
    );
    let fast_hidden = tickprof(&["replay", &data("small.trace.json"), "--threshold", "600ns"]);
    assert!(!stdout(&fast_hidden).contains("parse"));
    assert!(stdout(&fast_hidden).contains("app::eval();  1.00 µs"));
}

#[test]
fn replay_of_something_else_is_exit_code_2() {
    for (args, says) in [
        (
            vec!["replay", "/nonexistent.trace.json"],
            "/nonexistent.trace.json: ",
        ),
        (vec!["replay", "BEFORE"], "not a Chrome trace"),
        (
            vec!["replay", "TRACE", "--threshold", "soon"],
            "not a duration",
        ),
    ] {
        let b = data("before.json");
        let t = data("small.trace.json");
        let args: Vec<&str> = args
            .iter()
            .map(|a| match *a {
                "BEFORE" => b.as_str(),
                "TRACE" => t.as_str(),
                x => x,
            })
            .collect();
        let out = tickprof(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
