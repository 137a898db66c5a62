//! `cargo tickprof` as a child process on the fixture workspace
//! (tests/fixtures/ws): exit codes kept, reports complete, the user's
//! tree byte for byte unchanged — after a run, a failed build and a
//! SIGINT — and a second run rebuilding only what changed.
//!
//! The fixture is copied to `target/tmp/cargo-tickprof/user` (the "user's
//! tree") and built in `target/tmp/cargo-tickprof/target`, shared by the
//! cases, which run one at a time.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::trees;
use trees::{copy_tree, snapshot};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-tickprof");

/// The target directory the cases share (its dependencies built once),
/// and the lock that keeps them, and the other files' cases using it,
/// from running at the same time: a case's copy is not rewritten by
/// another's between its runs.
pub(crate) fn shared_target() -> (MutexGuard<'static, ()>, PathBuf) {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cargo-tickprof");
    (guard, base.join("target"))
}

/// The user's tree and the target directory, set up once, and the lock.
fn fixture() -> (MutexGuard<'static, ()>, PathBuf, PathBuf) {
    static DIRS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    let (guard, _) = shared_target();
    let (user, target) = DIRS
        .get_or_init(|| {
            let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cargo-tickprof");
            let user = base.join("user");
            let _ = std::fs::remove_dir_all(&user);
            copy_tree(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ws"),
                &user,
            );
            (user, base.join("target"))
        })
        .clone();
    (guard, user, target)
}

/// `cargo tickprof ARGS` in the user's tree.
fn command(user: &Path, target: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("tickprof")
        .args(args)
        .current_dir(user)
        .env("CARGO_TARGET_DIR", target)
        // Everything tickprof needs is in the seeded lock and the cache.
        .env("CARGO_NET_OFFLINE", "true")
        .env("TICKPROF_STDERR", "off")
        .env_remove("TICKPROF_OUT")
        .env_remove("TICKPROF");
    cmd
}

fn run(user: &Path, target: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = command(user, target, args);
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// (name, calls) of each site of a JSON report.
fn sites(path: &Path) -> BTreeMap<String, u64> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["calls"].as_u64().unwrap(),
            )
        })
        .collect()
}

// After inlining: in this unoptimised build every function `run` calls is
// kept; the two unit tests are not built.
const SUMMARY: &str = "cargo tickprof: marked 11 functions in 4 files: app 4, old 2, util 5 \
     (after inlining: 0 left inlined, 2 not in the build; skipped 2: 1 const fn, 1 defined by a macro)";

#[test]
fn run_keeps_exit_code_reports_every_function_and_leaves_the_tree() {
    let (_lock, user, target) = fixture();
    let before = snapshot(&user);
    let json = target.join("run.json");
    let json_env = json.to_str().unwrap();
    let out = run(
        &user,
        &target,
        &["run", "-v", "--", "exit", "3"],
        &[("TICKPROF_OUT", json_env)],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sum 87 count 3\n");
    assert!(err.contains(SUMMARY), "{err}");
    assert!(
        err.contains("  skipped app::one (app/src/main.rs:20): const fn"),
        "{err}"
    );
    assert!(
        err.contains("(app/src/main.rs:13): defined by a macro"),
        "{err}"
    );
    let expected: BTreeMap<String, u64> = [
        ("app::work", 1),
        ("app::shapes::total", 1),
        ("<app::shapes::Square as util::Shape>::area", 2),
        ("util::Shape::double_area", 1),
        ("util::Counter::new", 1),
        ("util::Counter::bump", 3),
        ("util::Counter::get", 1),
        ("util::step", 5),
        ("old::legacy", 1),
        ("old::inner::helper", 1),
    ]
    .into_iter()
    .map(|(n, c)| (n.to_string(), c))
    .collect();
    // `main` ends in process::exit: its call never returns, so it is not
    // counted (as with a hand mark).
    assert_eq!(sites(&json), expected);
    assert_eq!(snapshot(&user), before);

    // Unchanged sources: nothing is written, nothing rebuilt.
    let marked = target.join("tickprof/ws/util/src/lib.rs");
    let mtime = std::fs::metadata(&marked).unwrap().modified().unwrap();
    let out = run(&user, &target, &["run"], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("Compiling"), "{err}");
    assert_eq!(
        std::fs::metadata(&marked).unwrap().modified().unwrap(),
        mtime
    );

    // One member changed: it and its dependents are rebuilt, not `old`.
    let lib = user.join("util/src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{original}\npub fn added() {{}}\n")).unwrap();
    let out = run(&user, &target, &["run"], &[]);
    std::fs::write(&lib, &original).unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "marked 11 functions in 4 files: app 4, old 2, util 5 \
                      (after inlining: 0 left inlined, 3 not in the build;"
        ),
        "{err}"
    );
    assert!(
        err.contains("Compiling util") && err.contains("Compiling app"),
        "{err}"
    );
    assert!(!err.contains("Compiling old"), "{err}");
}

#[test]
fn test_keeps_cargo_test_exit_code() {
    let (_lock, user, target) = fixture();
    let before = snapshot(&user);
    let reports = target.join("reports");
    let _ = std::fs::remove_dir_all(&reports);
    std::fs::create_dir_all(&reports).unwrap();
    let pattern = reports.join("%e.json");
    let out_env = pattern.to_str().unwrap();
    let out = run(
        &user,
        &target,
        &["test", "-p", "util"],
        &[("TICKPROF_OUT", out_env)],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "cargo tickprof: marked 3 functions in 1 file of util (after inlining: \
             0 left inlined, 4 not in the build; 2 under #[cfg(test)], built by `test`; skipped 0)"
        ),
        "{err}"
    );
    let report = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("util-")
        })
        .expect("the util test binary's report");
    let s = sites(&report);
    assert_eq!(s.get("util::tests::steps"), Some(&1), "{s:?}");
    assert_eq!(s.get("util::tests::fails_when_asked"), Some(&1), "{s:?}");
    assert_eq!(s.get("util::step"), Some(&2), "{s:?}");

    let out = run(
        &user,
        &target,
        &["test", "-p", "util"],
        &[("FIXTURE_FAIL", "1")],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("asked to fail"));
    assert_eq!(snapshot(&user), before);
}

#[test]
fn failed_build_leaves_the_tree_and_returns_cargo_code() {
    let (_lock, user, target) = fixture();
    let lib = user.join("old/src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        format!("{original}\npub fn broken() -> u32 {{ \"not a number\" }}\n"),
    )
    .unwrap();
    let before = snapshot(&user);
    let out = run(&user, &target, &["run"], &[]);
    let after = snapshot(&user);
    std::fs::write(&lib, &original).unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(err.contains("mismatched types"), "{err}");
    assert_eq!(after, before);
    // A file syn cannot read is copied as it is and listed.
    std::fs::write(&lib, format!("{original}\nfn f( {{\n")).unwrap();
    let before = snapshot(&user);
    let out = run(&user, &target, &["copy", "-v", "-p", "old"], &[]);
    let after = snapshot(&user);
    std::fs::write(&lib, &original).unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 files left as they are (not parsed)"),
        "{err}"
    );
    assert!(err.contains("  not parsed old/src/lib.rs: "), "{err}");
    assert_eq!(after, before);
}

#[test]
fn sigint_during_the_run_is_forwarded_and_leaves_the_tree() {
    let (_lock, user, target) = fixture();
    let before = snapshot(&user);
    let mut child = command(&user, &target, &["run", "--", "wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no exit after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // The program ended by SIGINT: 128 + 2.
    assert_eq!(status.code(), Some(130));
    assert_eq!(snapshot(&user), before);
}

#[test]
fn globs_choose_the_functions_and_mark_rewrites_in_place() {
    let (_lock, user, target) = fixture();
    let out = run(
        &user,
        &target,
        &[
            "copy",
            "--mark",
            "util::*",
            "--skip",
            "*::tests::*",
            "--skip",
            "*Counter::get",
        ],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "marked 4 functions in 1 file of util (skipped 11: 1 const fn, 1 defined by a macro, \
             9 left out by --mark/--skip); -v lists them"
        ),
        "{err}"
    );
    let manifest = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(Path::new(&manifest), target.join("tickprof/ws/Cargo.toml"));
    let util = std::fs::read_to_string(target.join("tickprof/ws/util/src/lib.rs")).unwrap();
    assert!(
        util.contains("    #[::tickprof::profile(always)] pub fn bump(&self) {"),
        "{util}"
    );
    assert!(util.contains("\n    pub fn get(&self) -> u32 {"), "{util}");
    let old = std::fs::read_to_string(target.join("tickprof/ws/old/src/lib.rs")).unwrap();
    assert!(!old.contains("profile"), "{old}");
    let toml = std::fs::read_to_string(target.join("tickprof/ws/old/Cargo.toml")).unwrap();
    assert!(
        toml.contains("[dependencies]\ntickprof = { path = "),
        "{toml}"
    );

    // A trait impl's method by its name in the report (the trait resolved
    // through the file's `use`).
    let exact = "<app::shapes::Square as util::Shape>::area";
    let out = run(&user, &target, &["copy", "--mark", exact], &[]);
    let err = stderr(&out);
    assert!(
        err.contains("cargo tickprof: marked 1 function in 1 file"),
        "{err}"
    );

    // `mark DIR`: in place, for scripts that make their own copy.
    let dir = target.join("mark-in-place/src");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub fn a() {}\nconst fn b() {}\n").unwrap();
    let out = Command::new(BIN)
        .args([
            "tickprof",
            "mark",
            "--edition",
            "2015",
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        "cargo tickprof: marked 1 function in 1 file of mark_in_place (skipped 1: 1 const fn); \
         -v lists them\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("lib.rs")).unwrap(),
        "#[tickprof::profile(always)] pub fn a() {}\nconst fn b() {}\n"
    );
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let (_lock, user, target) = fixture();
    for (args, message) in [
        (
            &["frob"][..],
            "cargo tickprof: expected run, test, bench, build, copy or mark, found `frob`",
        ),
        (
            &["run", "-p", "nope"][..],
            "cargo tickprof: package `nope` is not a member of the workspace",
        ),
        (
            &["run", "--mark"][..],
            "cargo tickprof: --mark needs a value",
        ),
    ] {
        let out = run(&user, &target, args, &[]);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(
            err.starts_with(message) && err.lines().count() == 1,
            "{err}"
        );
    }
    let out = run(&user, &target, &["run", "--tickprof-path", "/"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a tickprof checkout"));
}

#[test]
fn deps_are_marked_in_a_copy_with_exact_counts() {
    let (_lock, user, target) = fixture();
    let before = snapshot(&user);
    let json = target.join("deps.json");
    let out = run(
        &user,
        &target,
        &["run", "-p", "app", "--deps", "itoa"],
        &[("TICKPROF_OUT", json.to_str().unwrap())],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sum 87 count 3\n");
    // The start line (in a workspace build of the tests, the command
    // itself links the runtime with recording on, through feature
    // unification, and its start-up may warn before it: the target
    // directory named by TICKPROF_OUT does not exist yet on a fresh clone).
    let summary = err
        .lines()
        .find(|l| l.starts_with("cargo tickprof: marked "))
        .unwrap_or_default();
    assert!(summary.contains(", itoa "), "{err}");
    let s = sites(&json);
    assert_eq!(s.get("itoa::Buffer::new"), Some(&1), "{s:?}");
    assert_eq!(s.get("itoa::Buffer::format"), Some(&1), "{s:?}");
    assert_eq!(s.get("app::work"), Some(&1), "{s:?}");
    assert_eq!(snapshot(&user), before);
    let config = std::fs::read_to_string(target.join("tickprof/deps.toml")).unwrap();
    assert!(
        config.starts_with("[patch.crates-io]\n\"itoa@1."),
        "{config}"
    );

    // Without --deps the copy of the dependency and its patch are gone.
    let out = run(&user, &target, &["copy"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!target.join("tickprof/deps").exists());
    assert!(!target.join("tickprof/deps.toml").exists());
}
