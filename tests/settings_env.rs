//! The environment as a real process reads it at start-up, in child
//! processes: an unknown `TICKPROF_*` name gets one warning line with the
//! closest known name; no variable of the settings table (nor cargo
//! tickprof's `TICKPROF_PATH`) gets one; a huge value in every variable at
//! once gives short warning lines and changes nothing of the program.
#![cfg(feature = "enabled")]

use crate::support::child;

const CHILD: &str = "TPTEST_SETTINGS_CHILD";

#[tickprof::profile]
fn work() {
    std::hint::black_box(0);
}

/// The child: a few marked calls, then exit code 3.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_ok() {
        (0..10).for_each(|_| work());
        std::process::exit(3);
    }
}

/// Every variable of the settings table.
fn variables() -> Vec<String> {
    tickprof::__private::settings_markdown()
        .lines()
        .filter_map(|l| l.strip_prefix("| `TICKPROF"))
        .map(|l| format!("TICKPROF{}", &l[..l.find('`').expect("a closing `")]))
        .collect()
}

fn warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("warning")).collect()
}

#[test]
fn an_unknown_variable_gets_one_line_with_the_closest_name() {
    let (out, stderr) = child::run_quiet(
        CHILD,
        "1",
        &[("TICKPROF_TOPP", "5"), ("tickprof_sort", "calls")],
    );
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let mut got = warnings(&stderr);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "tickprof: warning: TICKPROF_TOPP is not a tickprof variable (ignored); did you mean TICKPROF_TOP?",
            "tickprof: warning: tickprof_sort is not a tickprof variable (ignored); did you mean TICKPROF_SORT?",
        ],
        "{stderr}"
    );
}

#[test]
fn no_variable_of_the_table_gets_a_warning() {
    let vars = variables();
    assert!(vars.len() > 30, "{vars:?}");
    // A blank value is unset: only the name is read.
    let mut env: Vec<(&str, &str)> = vars.iter().map(|v| (v.as_str(), " ")).collect();
    env.push(("TICKPROF_PATH", "/somewhere/tickprof"));
    let (out, stderr) = child::run_quiet(CHILD, "1", &env);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(warnings(&stderr).is_empty(), "{stderr}");
}

/// A 120 KB value (near the system's cap on one variable) in every
/// variable, eight at a time (the trace log, failpoints, outputs, push and
/// HTTP included): every warning line quotes at most 100 bytes of it, and
/// the program's exit code is its own.
#[test]
fn a_huge_value_everywhere_gives_short_warnings() {
    let huge = format!("{}=1", "a".repeat(120_000));
    let vars: Vec<String> = variables()
        .into_iter()
        .filter(|v| v != "TICKPROF")
        .collect();
    let mut warned = 0;
    for batch in vars.chunks(8) {
        let env: Vec<(&str, &str)> = batch.iter().map(|v| (v.as_str(), huge.as_str())).collect();
        let (out, stderr) = child::run_quiet(CHILD, "1", &env);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{batch:?}: {}",
            stderr.chars().take(2000).collect::<String>()
        );
        assert!(
            !stderr.contains("panicked"),
            "{}",
            stderr.chars().take(2000).collect::<String>()
        );
        for line in warnings(&stderr) {
            assert!(
                line.len() < 600,
                "a {}-byte line: {}",
                line.len(),
                &line[..300]
            );
            warned += 1;
        }
    }
    assert!(warned >= 20, "{warned} warnings");
}
