//! The `tickprof` command, run as a child process on the JSON reports of
//! two real runs of `examples/quickstart.rs` (inputs in `tests/data/`:
//! `before.json` with the default compensated times, `after.json` with
//! `TICKPROF_COMPENSATE=0`). What it writes is checked for structure and
//! against the runtime's writers, not against saved output.

use serde_json::Value;
use std::process::Output;
use tickprof_runtime::{Report, TextOptions};

use crate::support;
use support::tickprof;

fn data(name: &str) -> String {
    support::data(name).to_str().expect("UTF-8 path").to_owned()
}

/// [`data`], leaked for argument lists.
fn data_str(name: &str) -> &'static str {
    Box::leak(data(name).into_boxed_str())
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
    // A site called once, shorter than a sampling period (1 ms) on both
    // sides, is within its own precision (see `diff::precision`).
    let before = figures("before.json");
    let after = figures("after.json");
    let once_short = |name: &str| {
        [&before, &after].iter().all(|f| {
            let s = &f.iter().find(|(n, _)| n == name).unwrap().1;
            s[0] == "1" && s[1].parse::<f64>().unwrap() < 1e6
        })
    };
    let beyond = |name: &str, c: f64| c.abs() >= 0.10 && !once_short(name);
    for (name, c) in &changes {
        let shown = text.lines().any(|l| l.starts_with(&format!("{name} ")));
        assert_eq!(shown, beyond(name, *c), "{name} {c}\n{text}");
    }
    let hidden = changes.iter().filter(|(n, c)| !beyond(n, *c)).count();
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

/// The saved report, read by the runtime.
fn before() -> Report {
    let text = std::fs::read_to_string(data("before.json")).unwrap();
    tickprof_runtime::export::json::parse(&text).expect("before.json reads")
}

/// `<`, `>`, `&` and `"` as HTML entities.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[test]
fn show_prints_what_the_program_would_have_written() {
    let report = before();
    assert_eq!(report.sites.len(), 7);
    let out = tickprof(&["show", &data("before.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let txt = stdout(&out);
    assert_eq!(txt, report.text(&TextOptions::default()));
    let table: Vec<&str> = txt
        .lines()
        .skip_while(|l| !l.starts_with("name"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    for s in &report.sites {
        let row = table.iter().find(|l| l.starts_with(s.name.as_str()));
        let row = row.unwrap_or_else(|| panic!("no row for {}:\n{txt}", s.name));
        assert!(row.contains(&format!(" {} ", s.calls)), "{row}");
    }

    let out = tickprof(&["show", &data("before.json"), "--tree"]);
    let tree = stdout(&out);
    assert_eq!(tree, report.text(&TextOptions::default().with_tree(true)));
    assert!(tree.starts_with(&txt[..txt.find("\nname").unwrap()]));
    assert!(tree.len() > txt.len());
}

#[test]
fn show_writes_every_format_and_the_html_page() {
    let report = before();
    let dir = std::env::temp_dir().join(format!("tickprof-cli-show-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("page.html");
    let files: Vec<String> = tickprof_runtime::export::EXTENSIONS
        .iter()
        .map(|ext| dir.join(format!("r{ext}")).to_str().unwrap().to_owned())
        .collect();
    let mut args = vec![
        "show",
        data_str("before.json"),
        "--html",
        html.to_str().unwrap(),
    ];
    for f in &files {
        args.extend(["--out", f.as_str()]);
    }
    let out = tickprof(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());

    // Each file is what the runtime writes for the report read back.
    for f in &files {
        let got = std::fs::read(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let want = tickprof_runtime::export::render(&report, f, &TextOptions::default()).unwrap();
        assert_eq!(got, want, "{f}");
    }

    // The page: one table row per site, each name shown.
    let page = std::fs::read_to_string(&html).unwrap();
    let row = |i: usize| format!("<tr data-i=\"{i}\"><td><a href=\"#s{i}\">");
    for (i, s) in report.sites.iter().enumerate() {
        let at = page.find(&row(i)).unwrap_or_else(|| panic!("no row {i}"));
        let name = html_escape(&s.name);
        assert!(page[at + row(i).len()..].starts_with(&name), "{name}");
    }
    assert!(!page.contains(&row(report.sites.len())));

    // The folded stacks: every path of the tree, the counts adding up to
    // the tree's self times.
    let folded = std::fs::read_to_string(dir.join("r.folded")).unwrap();
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("quickstart::analyse;quickstart::parse_line ")),
        "{folded}"
    );
    let total: u64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    let self_ns: u64 = report.tree.iter().skip(1).map(|n| n.self_ns).sum();
    assert_eq!(total, self_ns);
    assert_eq!(folded.lines().count(), report.tree.len() - 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn show_help_lists_every_format() {
    let out = tickprof(&["show", "--help"]);
    let help = stdout(&out);
    for ext in tickprof_runtime::export::EXTENSIONS {
        assert!(help.contains(&format!(" {ext}")), "{ext} not in:\n{help}");
    }
    let out = tickprof(&["show", &data("before.json"), "--out", "r.xlsx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown extension (known: .txt"),
        "{}",
        stderr(&out)
    );
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
