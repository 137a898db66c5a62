//! With `default-features = false` the marks compile to the unmarked code:
//! run with `cargo test --no-default-features --test disabled`.
#![cfg(not(feature = "enabled"))]

use tickprof::{prof_scope, profile};

/// With the feature off the wrapper is a plain pass-through, same API.
#[global_allocator]
static A: tickprof::Alloc = tickprof::Alloc::system();

#[profile]
fn add(a: u32, b: u32) -> u32 {
    a + b
}

#[profile(name = "still validated")]
fn early(x: u32) -> Result<u32, String> {
    if x == 0 {
        return Err("zero".into());
    }
    Ok(x)
}

fn scoped(n: u32) -> u32 {
    prof_scope!();
    let mut s = 0;
    for i in 0..n {
        prof_scope!("loop");
        s += i;
    }
    s
}

#[test]
fn marks_keep_behaviour_and_record_nothing() {
    assert_eq!(add(2, 3), 5);
    assert_eq!(early(0), Err("zero".into()));
    assert_eq!(early(4), Ok(4));
    assert_eq!(scoped(4), 6);
    let r = tickprof::report();
    assert!(r.sites.is_empty());
    assert!(r.tree.is_empty());
    assert_eq!(r.run.clock, tickprof::ClockSource::Off);
    assert!(!r.run.alloc_installed);
}

#[test]
fn the_program_prints_no_report() {
    if std::env::var_os("TPTEST_DISABLED_CHILD").is_some() {
        assert_eq!(add(1, 1), 2);
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "the_program_prints_no_report", "--nocapture"])
        .env("TPTEST_DISABLED_CHILD", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("tickprof"), "{err}");
}

#[test]
fn no_runtime_statics_in_the_binary() {
    // A marked function's static call site is named `__TICKPROF_SITE` in
    // the symbol table when the feature is on; off, there is none.
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    // Built at run time so the test's own literal is not what is found.
    let needle = format!("__{}_site", std::hint::black_box("tickprof")).to_uppercase();
    let needle = needle.as_bytes();
    assert!(!exe.windows(needle.len()).any(|w| w == needle));
}

#[derive(Debug, PartialEq)]
struct Failed(tickprof::Injected);

impl From<tickprof::Injected> for Failed {
    fn from(e: tickprof::Injected) -> Self {
        Failed(e)
    }
}

#[profile(fail)]
fn fallible(x: u32) -> Result<u32, Failed> {
    Ok(x)
}

#[test]
fn failpoints_and_coverage_are_compiled_out() {
    let _scenario = tickprof::fail::FailScenario::setup();
    let e = tickprof::fail::cfg("fallible", "return").unwrap_err();
    assert!(e.contains("compiled out"), "{e}");
    assert_eq!(fallible(2), Ok(2));
    assert!(tickprof::sites().is_empty(), "no list of marks");
    let r = tickprof::report();
    assert!(r.coverage.is_none() && r.faults.is_none());
}
