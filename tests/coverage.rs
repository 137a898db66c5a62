//! Coverage: every mark compiled into the program is known, so the ones
//! never called are listed, exactly: in this binary (a function, a
//! generic function, a trait method, a scope) and in a library it links
//! (`compat/coverage-lib`). Exit-time outputs (the summary line, the list,
//! the LCOV file) are checked in a child process.
//!
//! This binary holds the marks of every test module (`tests/all.rs`):
//! the lists are read for this module's marks and the library's, the
//! totals against the whole binary's count of marks.
#![cfg(feature = "enabled")]

use crate::support::child;

use tickprof::profile;
use tickprof_compat_coverage_lib::{self as lib, Shape};

const CHILD: &str = "TPTEST_COVERAGE_CHILD";

#[profile]
fn called() -> u32 {
    lib::used(1) + Sq(2.0).area() as u32 + lib::Square(1.0).area() as u32
}

#[profile]
fn never() -> u32 {
    7
}

#[profile]
fn generic_never<T: Default>() -> T {
    T::default()
}

#[profile]
fn generic_called<T: Default>() -> T {
    T::default()
}

trait Greet {
    #[profile]
    fn hello(&self) -> u32 {
        1
    }
    fn bye(&self) -> u32;
}

struct Sq(f64);

impl Sq {
    #[profile]
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}

impl Greet for Sq {
    #[profile]
    fn bye(&self) -> u32 {
        tickprof::prof_scope!("inner");
        2
    }
}

fn run() {
    assert!(called() > 0);
    assert_eq!(generic_called::<u8>(), 0);
    assert_eq!(generic_called::<u16>(), 0);
    assert_eq!(Sq(1.0).bye(), 2);
    let _ = (never, generic_never::<u8>, lib::unused);
}

/// The library's marks' prefix.
const LIB: &str = "tickprof_compat_coverage_lib::";

/// Whether `name` is a mark of this module or of the library.
fn ours(name: &str) -> bool {
    name.starts_with(&format!("{}::", module_path!())) || name.starts_with(LIB)
}

/// The names of this module's and the library's marks that never ran,
/// sorted.
fn never_called() -> Vec<String> {
    let mut v: Vec<String> = tickprof::sites()
        .into_iter()
        .filter(|s| s.calls == 0 && ours(&s.name))
        .map(|s| s.name)
        .collect();
    v.sort();
    v
}

/// The marks of this module and the library that never run.
fn expected() -> Vec<String> {
    let m = module_path!();
    vec![
        format!("{m}::Greet::hello"),
        format!("{m}::generic_never"),
        format!("{m}::never"),
        format!("{LIB}Shape::describe"),
        format!("{LIB}unused"),
        format!("{LIB}unused::lib_scope"),
    ]
}

#[test]
fn the_marks_never_called_are_listed_exactly() {
    run();
    let never = never_called();
    assert_eq!(never, expected());
    // Every mark is listed once, with its figures; ran ones have calls.
    let sites = tickprof::sites();
    let lib_used = sites
        .iter()
        .find(|s| s.name == "tickprof_compat_coverage_lib::used")
        .expect("the library's used mark");
    assert!(lib_used.calls >= 1);
    assert!(lib_used.file.ends_with("lib.rs"), "{}", lib_used.file);
    let generic = sites
        .iter()
        .filter(|s| s.name == format!("{}::generic_called", module_path!()))
        .count();
    assert_eq!(generic, 1, "one mark for all instantiations");
    let report = tickprof::report();
    let cov = report.coverage.expect("a whole-run report has coverage");
    assert_eq!(cov.marked, sites.len());
    assert_eq!(cov.ran, cov.marked - cov.never_called.len());
    assert!(cov.never_called.iter().all(|m| m.line > 0));
}

/// The child: the calls, then its exit report.
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_some() {
        run();
    }
}

#[test]
fn exit_report_has_the_summary_the_list_and_an_lcov_file() {
    let dir = std::env::temp_dir().join(format!("tickprof-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lcov = dir.join("marks.lcov");
    let out = child::child_command(CHILD, "1")
        .env("TICKPROF_OUT", &lcov)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Ran: called, generic_called, Sq::area, Sq::bye and its scope, the
    // library's used and Square::area; every other mark of the binary
    // (the other modules') never ran in the child.
    let text = std::fs::read_to_string(&lcov).unwrap();
    let marked = text.matches("\nFN:").count();
    let line = format!(
        "tickprof: coverage: 7 of {marked} marked functions ran; {} never called (TICKPROF_REPORT=coverage lists them)",
        marked - 7
    );
    assert!(stderr.contains(&line), "{stderr}");
    assert_eq!(
        text.matches("end_of_record").count(),
        text.matches("SF:").count(),
        "{text}"
    );
    // This file's record and the library's: their marks, 6 never run.
    let records: Vec<&str> = text
        .split("end_of_record")
        .filter(|r| r.contains("tests/coverage.rs\n") || r.contains("coverage-lib/src/lib.rs\n"))
        .collect();
    assert_eq!(records.len(), 2, "{text}");
    let never: usize = records.iter().map(|r| r.matches("\nFNDA:0,").count()).sum();
    assert_eq!(never, expected().len(), "{text}");
    let hit: usize = text
        .lines()
        .filter_map(|l| l.strip_prefix("FNH:"))
        .map(|n| n.parse::<usize>().unwrap())
        .sum();
    assert_eq!(hit, 7);

    let out = child::child_command(CHILD, "1")
        .env("TICKPROF_REPORT", "coverage")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let list: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.contains("never called:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| ours(l.trim_start()))
        .collect();
    assert_eq!(list.len(), expected().len(), "{stderr}");
    let never = format!("{}::never ", module_path!());
    assert!(
        list.iter()
            .any(|l| l.trim_start().starts_with(&never) && l.contains("tests/coverage.rs:")),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
