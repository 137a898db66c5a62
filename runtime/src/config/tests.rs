use super::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

fn parse(vars: &[(&str, &str)]) -> (Config, Vec<String>) {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::parse(|k| map.get(k).cloned())
}

/// Every variable of the table, in order.
fn variables() -> Vec<&'static str> {
    let mut rows = Vec::new();
    Config::rows(&mut rows);
    rows.iter().map(|r| r.var).collect()
}

#[test]
fn defaults_when_unset_or_blank() {
    let (c, w) = parse(&[]);
    assert!(w.is_empty());
    assert_eq!(c, Config::default());
    assert!(c.enabled && c.stderr && c.compensate);
    assert_eq!(c.max_delta, DEFAULT_MAX_DELTA);
    assert_eq!(c.max_nodes, DEFAULT_MAX_NODES);
    assert_eq!(c.trace_events, DEFAULT_TRACE_EVENTS);
    assert_eq!(c.threads_kept, DEFAULT_THREADS_KEPT);
    assert_eq!(c.fail_seed, DEFAULT_FAIL_SEED);
    assert_eq!(c.sort, SortKey::SelfTime);
    assert_eq!(c.report.layout, Layout::Flat);
    assert!(!c.report.verbose);
    assert_eq!(c.top, None);
    assert_eq!(c.log_options, LogOptions::default());
    // A value of only blanks is unset: no warning, the default.
    let blank: Vec<(&str, &str)> = variables().into_iter().map(|v| (v, " ")).collect();
    let (c, w) = parse(&blank);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c, Config::default());
}

#[test]
fn valid_values() {
    let (c, w) = parse(&[
        ("TICKPROF", "off"),
        ("TICKPROF_TOP", "5"),
        ("TICKPROF_SORT", "calls"),
        ("TICKPROF_MAX_DELTA", "30s"),
        ("TICKPROF_MAX_NODES", "10"),
        ("TICKPROF_OUT", "a.csv, b.txt"),
        ("TICKPROF_REPORT", "tree"),
        ("TICKPROF_THREADS", "1"),
        ("TICKPROF_COMPENSATE", "0"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert!(!c.enabled && c.threads && !c.compensate);
    assert_eq!(c.top, Some(5));
    assert_eq!(c.sort, SortKey::Calls);
    assert_eq!(c.max_delta, Duration::from_secs(30));
    assert_eq!(c.max_nodes, 10);
    assert_eq!(c.outputs, [PathBuf::from("a.csv"), PathBuf::from("b.txt")]);
    assert_eq!(c.report.layout, Layout::Tree);
    assert!(!c.trace);
    assert_eq!(parse(&[("TICKPROF_TOP", "0")]).0.top, None);
    assert_eq!(parse(&[("TICKPROF_SORT", "bytes")]).0.sort, SortKey::Bytes);
    assert_eq!(
        parse(&[("TICKPROF_SORT", "Allocs")]).0.sort,
        SortKey::Allocs
    );
    let (c, w) = parse(&[
        ("TICKPROF_OUT", "run.trace.json"),
        ("TICKPROF_TRACE_EVENTS", "10"),
        ("TICKPROF_THREADS_KEPT", "0"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert!(c.trace, "a .trace.json output turns tracing on");
    assert_eq!(c.trace_events, 10);
    assert_eq!(c.threads_kept, 0);
}

#[test]
fn each_bad_value_gives_one_warning_naming_the_variable_value_and_default() {
    for (var, bad, default) in [
        ("TICKPROF", "maybe", "on"),
        ("TICKPROF_TOP", "ten", "0, all rows"),
        ("TICKPROF_SORT", "size", "self"),
        ("TICKPROF_MAX_DELTA", "10", "1h"),
        ("TICKPROF_MAX_NODES", "0", "1000000"),
        ("TICKPROF_REPORT", "graph", "flat"),
        ("TICKPROF_REPORT", "tree,flat", "flat"),
        ("TICKPROF_THREADS", "2", "off"),
        ("TICKPROF_COMPENSATE", "maybe", "on"),
        ("TICKPROF_TRACE", "yes please", "off"),
        ("TICKPROF_TRACE_EVENTS", "-1", "2000000"),
        ("TICKPROF_THREADS_KEPT", "many", "64"),
        ("TICKPROF_STDERR", "quiet", "on"),
        ("TICKPROF_DUMP_SIGNAL", "TERM", "unset, no handler"),
        ("TICKPROF_DUMP_INTERVAL", "30", "unset, none"),
        ("TICKPROF_DUMP_INTERVAL", "0s", "unset, none"),
        ("TICKPROF_DUMP", "sometimes", "total"),
        ("TICKPROF_ON_TERM", "please", "off"),
        ("TICKPROF_HTTP", "localhost", "unset, not served"),
        ("TICKPROF_FAIL_SEED", "abc", "8388345094053457766"),
        ("TICKPROF_LOG_FILTER", "a,,b", "unset, every call"),
        ("TICKPROF_LOG_FILTER", "[ab]", "unset, every call"),
        ("TICKPROF_LOG_NOTRACE", "x{y}", "unset, none hidden"),
        ("TICKPROF_LOG_DEPTH", "-1", "0, no limit"),
        ("TICKPROF_LOG_THRESHOLD", "5", "0, every call"),
        ("TICKPROF_LOG_TID", "main", "unset, every thread"),
    ] {
        let (c, w) = parse(&[(var, bad)]);
        assert_eq!(w.len(), 1, "{var}: {w:?}");
        let head = format!("tickprof: warning: {var}={bad:?} ");
        let tail = format!("; using the default ({default})");
        assert!(w[0].starts_with(&head) && w[0].ends_with(&tail), "{}", w[0]);
        assert!(!w[0].contains('\n'));
        assert_eq!(c, Config::default(), "{var}={bad:?}");
    }
    let (c, w) = parse(&[("TICKPROF_OUT", "a.csv,b.xyz")]);
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("TICKPROF_OUT") && w[0].contains("b.xyz"));
    assert_eq!(c.outputs, [PathBuf::from("a.csv")]);
}

#[test]
fn switches_take_every_spelling() {
    for (var, get) in [
        ("TICKPROF", (|c: &Config| c.enabled) as fn(&Config) -> bool),
        ("TICKPROF_STDERR", |c| c.stderr),
        ("TICKPROF_TRACE", |c| c.trace),
        ("TICKPROF_COMPENSATE", |c| c.compensate),
        ("TICKPROF_THREADS", |c| c.threads),
        ("TICKPROF_ON_TERM", |c| c.on_term),
    ] {
        for (v, on) in [("1", true), ("on", true), ("TRUE", true), (" yes ", true)]
            .into_iter()
            .chain([
                ("0", false),
                ("off", false),
                ("False", false),
                ("no", false),
            ])
        {
            let (c, w) = parse(&[(var, v)]);
            assert!(w.is_empty() && get(&c) == on, "{var}={v:?}: {w:?}");
        }
    }
}

#[test]
fn dump_settings() {
    let (c, w) = parse(&[
        ("TICKPROF_DUMP_SIGNAL", "sigusr2"),
        ("TICKPROF_DUMP_INTERVAL", "1.5s"),
        ("TICKPROF_DUMP", "delta"),
        ("TICKPROF_ON_TERM", "1"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.dump_signal, Some(DumpSignal::Usr2));
    assert_eq!(c.dump_interval, Some(Duration::from_millis(1500)));
    assert_eq!(c.dump_mode, DumpMode::Delta);
    assert!(c.on_term);
    let (c, w) = parse(&[("TICKPROF_DUMP_SIGNAL", "USR1"), ("TICKPROF_ON_TERM", "0")]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.dump_signal, Some(DumpSignal::Usr1));
    assert!(!c.on_term);
    let (c, _) = parse(&[("TICKPROF_HTTP", "6060")]);
    assert_eq!(c.http, Some(([127, 0, 0, 1], 6060).into()));
    let (c, _) = parse(&[("TICKPROF_HTTP", "0.0.0.0:7070")]);
    assert_eq!(c.http, Some(([0, 0, 0, 0], 7070).into()));
}

#[test]
fn report_lists_coverage_and_fail_settings_parse() {
    for (v, layout) in [
        ("coverage", Layout::Flat),
        ("tree, coverage", Layout::Tree),
        ("COVERAGE,flat", Layout::Flat),
    ] {
        let (c, w) = parse(&[("TICKPROF_REPORT", v)]);
        assert!(
            w.is_empty() && c.report.coverage && c.report.layout == layout,
            "{v}: {w:?}"
        );
    }
    let (c, w) = parse(&[("TICKPROF_REPORT", "tree,verbose")]);
    assert!(w.is_empty(), "{w:?}");
    assert!(c.report.verbose && !c.report.coverage && c.report.layout == Layout::Tree);
    let (_, w) = parse(&[("TICKPROF_REPORT", "verbose,verbose")]);
    assert_eq!(w.len(), 1, "{w:?}");
    let (c, w) = parse(&[("TICKPROF_FAIL", " a=panic "), ("TICKPROF_FAIL_SEED", "9")]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.fail.as_deref(), Some(" a=panic "));
    assert_eq!(c.fail_seed, 9);
    let (c, _) = parse(&[("TICKPROF_FAIL", "  ")]);
    assert_eq!(c.fail, None);
    assert_eq!(c.fail_seed, DEFAULT_FAIL_SEED);
}

#[test]
fn log_settings() {
    for (v, target) in [
        ("stderr", Some("stderr")),
        ("on", Some("stderr")),
        ("1", Some("stderr")),
        (" /tmp/log-%p.txt ", Some("/tmp/log-%p.txt")),
        ("off", None),
        ("0", None),
    ] {
        let (c, w) = parse(&[("TICKPROF_LOG", v)]);
        assert!(w.is_empty(), "{v}: {w:?}");
        assert_eq!(c.log.as_deref(), target, "{v}");
    }
    let (c, w) = parse(&[
        ("TICKPROF_LOG_FILTER", "app::*, main"),
        ("TICKPROF_LOG_NOTRACE", "noisy"),
        ("TICKPROF_LOG_DEPTH", "3"),
        ("TICKPROF_LOG_THRESHOLD", "5us"),
        ("TICKPROF_LOG_TID", "1,3"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    let o = &c.log_options;
    assert_eq!(o.filter, ["app::*", "main"]);
    assert_eq!(o.notrace, ["noisy"]);
    assert_eq!(
        (o.depth, o.threshold_ns, o.tids.clone()),
        (3, 5000, vec![1, 3])
    );
    assert_eq!(
        parse(&[("TICKPROF_LOG_THRESHOLD", "0")])
            .0
            .log_options
            .threshold_ns,
        0
    );
}

#[test]
fn warnings_follow_the_table_order() {
    let (_, w) = parse(&[
        ("TICKPROF_LOG_DEPTH", "deep"),
        ("TICKPROF_LOG_FILTER", "a,,b"),
    ]);
    assert_eq!(w.len(), 2);
    assert!(w[0].contains("TICKPROF_LOG_FILTER") && w[1].contains("TICKPROF_LOG_DEPTH"));
}

#[test]
fn the_docs_table_has_one_row_per_variable_with_its_default() {
    let table = settings_markdown();
    let vars = variables();
    let mut seen = std::collections::HashSet::new();
    assert!(vars.iter().all(|v| seen.insert(*v)), "a variable twice");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "| variable | values | default |");
    assert_eq!(lines.len(), vars.len() + 2);
    for (line, var) in lines[2..].iter().zip(&vars) {
        assert!(line.starts_with(&format!("| `{var}` | ")), "{line}");
        assert!(line.ends_with(" |") && !line.contains('\n'));
    }
    for row in [
        "| `TICKPROF` | ",
        " | `on` |",
        "| `TICKPROF_MAX_DELTA` | ",
        " | `1h` |",
        " | `0` (all rows) |",
        " | `8388345094053457766` |",
        " | unset (no log) |",
        " | `0` (no limit) |",
    ] {
        assert!(table.contains(row), "{row} in\n{table}");
    }
}

#[test]
fn each_default_the_docs_show_reads_back_as_the_default() {
    let mut rows = Vec::new();
    Config::rows(&mut rows);
    let mut shown = 0;
    for row in &rows {
        // "`1h`", "`0` (no limit)"; "unset (…)" has no text to read.
        let Some(text) = row
            .default
            .strip_prefix('`')
            .and_then(|s| s.split('`').next())
        else {
            assert!(row.default.starts_with("unset"), "{}", row.default);
            continue;
        };
        let (c, w) = parse(&[(row.var, text)]);
        assert!(w.is_empty(), "{}={text:?}: {w:?}", row.var);
        assert_eq!(c, Config::default(), "{}={text:?}", row.var);
        shown += 1;
    }
    assert!(shown > rows.len() / 2, "{shown} of {} rows", rows.len());
}

/// Hostile values for every variable of the table: each gives at most one
/// warning line, naming the variable, quoting at most 100 bytes of the
/// value, with no line break; the reader never panics.
#[test]
fn every_variable_holds_hostile_values_with_one_short_warning_each() {
    let long = "x".repeat(131_072);
    let pairs = format!("{}=1", "a".repeat(200_000));
    let hostile = [
        "\u{1b}[31mred\u{1b}[0m",
        "line\nbreak",
        "-1",
        "18446744073709551616",
        "3000000000000000h",
        "1e400h",
        "1ns",
        "NaN",
        "0",
        ",,,",
        "%p%e%%%",
        "\u{0}",
        long.as_str(),
        pairs.as_str(),
    ];
    for var in variables() {
        for value in hostile {
            let (_, w) = parse(&[(var, value)]);
            assert!(w.len() <= 1, "{var}: {w:?}");
            for line in &w {
                let head = format!("tickprof: warning: {var}");
                assert!(line.starts_with(&head), "{line}");
                assert!(!line.contains('\n'), "{line}");
                assert!(line.len() < 600, "{var}: a {}-byte warning", line.len());
            }
        }
    }
}

/// The intervals' minimum is the one the code enforces and the help says.
#[test]
fn intervals_have_the_documented_minimum() {
    let min = values::fmt_duration(crate::defaults::MIN_INTERVAL);
    let mut rows = Vec::new();
    Config::rows(&mut rows);
    for var in ["TICKPROF_DUMP_INTERVAL", "TICKPROF_PUSH_INTERVAL"] {
        let row = rows.iter().find(|r| r.var == var).expect("a row");
        assert!(row.help.contains(&format!("at least `{min}`")), "{var}");
        let (c, w) = parse(&[(var, &min)]);
        assert!(w.is_empty(), "{var}: {w:?}");
        assert_ne!(c, Config::default());
        let (c, w) = parse(&[(var, "99ms")]);
        assert_eq!(c, Config::default());
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains(&format!("is shorter than the minimum, {min}")),
            "{}",
            w[0]
        );
    }
    // Huge intervals are taken (their users add them with checked sums).
    let (c, w) = parse(&[("TICKPROF_PUSH_INTERVAL", "3000000000000000h")]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.push_interval.as_secs(), 3_000_000_000_000_000 * 3600);
}

/// `TICKPROF_OUT` is split on commas byte for byte: a path that is not
/// UTF-8 is kept exactly, the others beside it too.
#[cfg(unix)]
#[test]
fn output_paths_that_are_not_utf8_are_kept_exactly() {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let raw = OsString::from_vec(b" out/r\xff\xfe.json , a.csv,,".to_vec());
    let (c, w) = Config::parse_os(&|name| (name == "TICKPROF_OUT").then(|| raw.clone()));
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.outputs.len(), 2);
    assert_eq!(c.outputs[0].as_os_str().as_bytes(), b"out/r\xff\xfe.json");
    assert_eq!(c.outputs[1], PathBuf::from("a.csv"));
}

#[test]
fn a_sampling_rate_above_what_the_sampler_keeps_is_warned_and_capped() {
    let (c, w) = parse(&[("TICKPROF_SAMPLE", "1000000000")]);
    assert_eq!(c.sample_hz, MAX_SAMPLE_HZ);
    assert_eq!(
        w,
        ["tickprof: warning: TICKPROF_SAMPLE=1000000000 is above the most samples a second the sampler keeps; using 10000"]
    );
    let (c, w) = parse(&[("TICKPROF_SAMPLE", "10000")]);
    assert_eq!((c.sample_hz, w.len()), (10_000, 0));
    // The help says the ceiling.
    let mut rows = Vec::new();
    Config::rows(&mut rows);
    let help = rows
        .iter()
        .find(|r| r.var == "TICKPROF_SAMPLE")
        .unwrap()
        .help;
    assert!(
        help.contains(&format!("at most `{MAX_SAMPLE_HZ}`")),
        "{help}"
    );
}
