//! Files written at exit (`TICKPROF_OUT`) and the trace log's file
//! (`TICKPROF_LOG`) cannot be redirected or stalled by what another user
//! plants beside them: symlinks and FIFOs at the temporary names (old and
//! new) and at the target, in a sticky world-writable directory; an
//! existing file's mode is kept; long and non-UTF-8 names are written
//! exactly; an unwritable directory is reported at start-up.
//!
//! Each test runs this test binary as a child (`child_workload`), which
//! makes marked calls and, when told, waits for a "go" file before
//! returning from its test, so that the parent can plant files at names
//! that depend on the child's process id.
#![cfg(all(unix, feature = "enabled"))]

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::child;

const CHILD: &str = "TPTEST_FILE_WRITES_CHILD";
/// The file whose appearance lets the child go on to exit.
const GO: &str = "TPTEST_FILE_WRITES_GO";
/// The file the child creates when its main runs.
const STARTED: &str = "TPTEST_FILE_WRITES_STARTED";
/// The directory the child changes to after its work.
const CHDIR: &str = "TPTEST_FILE_WRITES_CHDIR";
/// Another user's id (`nobody`), for files planted by "another user".
const NOBODY: u32 = 65534;
/// The longest a child may take: past it the test fails (a hang).
const LIMIT: Duration = Duration::from_secs(30);

#[tickprof::profile]
fn step(n: u64) -> u64 {
    n.wrapping_mul(3).wrapping_add(1)
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    eprintln!("child: main ran");
    if let Some(started) = std::env::var_os(STARTED) {
        std::fs::write(started, "").unwrap();
    }
    let mut x = 0;
    for i in 0..5 {
        x = step(x ^ i);
    }
    assert!(x > 0);
    // A daemon's `chdir("/")`, after the start-up check.
    if let Some(dir) = std::env::var_os(CHDIR) {
        std::env::set_current_dir(dir).unwrap();
    }
    if let Some(go) = std::env::var_os(GO) {
        let t = Instant::now();
        while !Path::new(&go).exists() && t.elapsed() < LIMIT {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// A fresh directory like `/tmp` itself: world-writable and sticky, and not
/// `/tmp` (whose `fs.protected_*` rules could hide a followed link).
fn sticky_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tickprof-fw-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Starts the child with `env` (and its exit report off).
fn spawn(env: &[(&str, &OsStr)]) -> Child {
    let mut cmd = child::child_command(CHILD, "1");
    cmd.env("TICKPROF_STDERR", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd.spawn().expect("the child starts")
}

/// Waits for the child, at most [`LIMIT`] (then kills it and fails): its
/// status and stderr.
fn finish(mut child: Child) -> (ExitStatus, String) {
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child hung (killed after {LIMIT:?})");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status, err)
}

/// A 0600 file holding `secret`, as another user's private file would.
fn victim(dir: &Path) -> PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, "secret").unwrap();
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o600)).unwrap();
    v
}

fn assert_untouched(victim: &Path) {
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "secret");
    let mode = std::fs::metadata(victim).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The names the temporary file of `target` had (or could be guessed to
/// have) for process `pid`: the old `.NAME.tickprof-PID.tmp`, and the new
/// scheme's prefix without its random part.
fn guessable_temp_names(target: &str, pid: u32) -> Vec<String> {
    vec![
        format!(".{target}.tickprof-{pid}.tmp"),
        format!(".tickprof-{pid}.tmp"),
        format!(".tickprof-{pid}-0000000000000000.tmp"),
    ]
}

fn report_is_json(path: &Path) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    assert!(meta.is_file(), "{path:?} is not a regular file");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert!(v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"].as_str().unwrap().ends_with("step")));
}

#[test]
fn symlinks_planted_at_the_temporary_names_are_never_followed() {
    let dir = sticky_dir("links");
    let victim = victim(&dir);
    let go = dir.join("go");
    let out = dir.join("report.json");
    let child = spawn(&[
        ("TICKPROF_OUT", out.as_os_str()),
        ("TICKPROF_LOG", dir.join("log.txt").as_os_str()),
        (GO, go.as_os_str()),
    ]);
    // Every name that depends only on the process id, for this child and
    // the next hundred process ids, points at the victim. The report's are
    // given to another user (`nobody`, where this test runs as root), as a
    // second user on a shared machine would plant them; the log's stay the
    // test's own (which `fs.protected_symlinks=1` would not stop either).
    let mut planted = Vec::new();
    for pid in child.id()..child.id() + 100 {
        for target in ["report.json", "log.txt"] {
            for name in guessable_temp_names(target, pid) {
                if !planted.contains(&name) {
                    let link = dir.join(&name);
                    std::os::unix::fs::symlink(&victim, &link).unwrap();
                    if target == "report.json" {
                        let _ = std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY));
                    }
                    planted.push(name);
                }
            }
        }
    }
    std::fs::write(&go, "").unwrap();
    let (status, err) = finish(child);
    assert!(status.success(), "{status:?}: {err}");
    assert!(!err.contains("warning"), "{err}");
    assert_untouched(&victim);
    report_is_json(&out);
    let log = std::fs::read_to_string(dir.join("log.txt")).unwrap();
    assert!(log.contains("step"), "{log}");
    // Nothing but what was there, the report and the log: no temporary
    // file stays.
    let mut want: Vec<String> = planted;
    want.extend(["go", "log.txt", "report.json", "victim"].map(String::from));
    want.sort();
    assert_eq!(names(&dir), want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_symlink_at_the_target_is_replaced_not_followed() {
    let dir = sticky_dir("target-link");
    let victim = victim(&dir);
    let out = dir.join("report.json");
    let log = dir.join("log.txt");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    let (status, err) = finish(spawn(&[
        ("TICKPROF_OUT", out.as_os_str()),
        ("TICKPROF_LOG", log.as_os_str()),
    ]));
    assert!(status.success(), "{status:?}: {err}");
    assert_untouched(&victim);
    report_is_json(&out);
    assert!(std::fs::symlink_metadata(&log).unwrap().is_file());
    assert!(std::fs::read_to_string(&log).unwrap().contains("step"));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(ok.success());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

#[test]
fn fifos_at_the_target_or_a_temporary_name_never_hang_the_program() {
    let dir = sticky_dir("fifo");
    let go = dir.join("go");
    let stuck = dir.join("stuck.json");
    let log = dir.join("log.txt");
    let ok = dir.join("ok.json");
    mkfifo(&stuck);
    mkfifo(&log);
    let outputs = format!("{},{}", stuck.display(), ok.display());
    let child = spawn(&[
        ("TICKPROF_OUT", OsStr::new(&outputs)),
        ("TICKPROF_LOG", log.as_os_str()),
        (GO, go.as_os_str()),
    ]);
    for name in guessable_temp_names("ok.json", child.id()) {
        mkfifo(&dir.join(name));
    }
    std::fs::write(&go, "").unwrap();
    let (status, err) = finish(child);
    assert!(status.success(), "{status:?}: {err}");
    // The FIFO target: one warning (at start-up; the same failure at exit is
    // not repeated); the log's: one warning and no log.
    let fifo_warnings = err
        .lines()
        .filter(|l| l.contains("stuck.json") && l.contains("not a regular file (a FIFO)"))
        .count();
    assert_eq!(fifo_warnings, 1, "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("TICKPROF_LOG") && l.contains("a FIFO")),
        "{err}"
    );
    assert!(is_fifo(&stuck) && is_fifo(&log));
    report_is_json(&ok);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rewrite_keeps_the_files_mode() {
    let dir = sticky_dir("mode");
    let out = dir.join("report.json");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let csv = dir.join("report.csv");
    std::fs::write(&csv, "old").unwrap();
    std::fs::set_permissions(&csv, std::fs::Permissions::from_mode(0o640)).unwrap();
    let outputs = format!("{},{}", out.display(), csv.display());
    let (status, err) = finish(spawn(&[("TICKPROF_OUT", OsStr::new(&outputs))]));
    assert!(status.success(), "{status:?}: {err}");
    report_is_json(&out);
    assert!(std::fs::read_to_string(&csv).unwrap().contains("step"));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&out), 0o600);
    assert_eq!(mode(&csv), 0o640);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_name_of_250_bytes_and_a_name_that_is_not_utf8_are_written_exactly() {
    let dir = sticky_dir("names");
    let long = dir.join(format!("{}.json", "n".repeat(245)));
    assert_eq!(long.file_name().unwrap().len(), 250);
    let odd = dir.join(OsStr::from_bytes(b"r\xff\xfe.json"));
    let mut outputs = long.clone().into_os_string();
    outputs.push(",");
    outputs.push(odd.as_os_str());
    let (status, err) = finish(spawn(&[("TICKPROF_OUT", &outputs)]));
    assert!(status.success(), "{status:?}: {err}");
    assert!(!err.contains("warning"), "{err}");
    report_is_json(&long);
    report_is_json(&odd);
    let mut got: Vec<OsString> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    got.sort();
    let mut want = vec![
        long.file_name().unwrap().to_owned(),
        OsString::from_vec(b"r\xff\xfe.json".to_vec()),
    ];
    want.sort();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_directory_is_reported_once_at_start_up_and_tried_again_at_exit() {
    let dir = sticky_dir("missing");
    // Stays missing: one warning, before main.
    let never = dir.join("no/such/dir/report.json");
    // Made while the program runs: the same warning, then written at exit.
    let later = dir.join("later/report.json");
    let go = dir.join("go");
    let mut outputs = never.clone().into_os_string();
    outputs.push(",");
    outputs.push(later.as_os_str());
    let started = dir.join("started");
    let child = spawn(&[
        ("TICKPROF_OUT", &outputs),
        (GO, go.as_os_str()),
        (STARTED, started.as_os_str()),
    ]);
    // The directory appears once the program's main runs.
    let t = Instant::now();
    while !started.exists() && t.elapsed() < LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::create_dir(dir.join("later")).unwrap();
    std::fs::write(&go, "").unwrap();
    let (status, err) = finish(child);
    assert!(status.success(), "{status:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    let main = lines.iter().position(|l| *l == "child: main ran").unwrap();
    let warned: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("tickprof: warning: cannot write TICKPROF_OUT file"))
        .collect();
    assert_eq!(warned.len(), 2, "{err}");
    assert!(warned[0].contains("no/such/dir/report.json"), "{err}");
    assert!(warned[1].contains("later/report.json"), "{err}");
    for w in &warned {
        assert!(w.ends_with("(os error 2); tried again at exit"), "{err}");
        assert!(lines.iter().position(|l| l == w).unwrap() < main, "{err}");
    }
    assert!(!dir.join("no").exists());
    report_is_json(&later);
    assert_eq!(names(&dir.join("later")), ["report.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A relative `TICKPROF_OUT` path is relative to the directory the program
/// started in (where the start-up check looked), even when the program
/// changes its directory before it exits.
#[test]
fn relative_outputs_go_where_the_program_started() {
    let start = sticky_dir("reldir-start");
    let moved = sticky_dir("reldir-moved");
    let mut cmd = child::child_command(CHILD, "1");
    cmd.env("TICKPROF_STDERR", "0")
        .env("TICKPROF_OUT", "sub/run.json,top.csv")
        .env(CHDIR, &moved)
        .current_dir(&start)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    std::fs::create_dir(start.join("sub")).unwrap();
    let (status, err) = finish(cmd.spawn().expect("the child starts"));
    assert!(status.success(), "{err}");
    assert!(!err.contains("cannot write"), "{err}");
    assert!(std::fs::read_to_string(start.join("sub/run.json"))
        .unwrap()
        .contains("step"));
    assert!(start.join("top.csv").is_file());
    assert!(names(&moved).is_empty(), "{:?}", names(&moved));
    let _ = std::fs::remove_dir_all(&start);
    let _ = std::fs::remove_dir_all(&moved);
}
