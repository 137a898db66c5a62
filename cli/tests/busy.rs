//! Two `cargo tickprof run`s sharing one target directory: the second
//! waits for the first to end (it says so) instead of rewriting the copy
//! under it, and then builds and runs its own workspace. Before the lock,
//! one run's copy replaced the other's mid-build ("couldn't read
//! `util/src/lib.rs`"), which failed this suite by chance.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-tickprof");

/// A one-package workspace at `dir` whose `main` is `body`.
fn workspace(dir: &Path, body: &str) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/main.rs"), body).unwrap();
}

fn command(user: &Path, target: &Path, json: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["tickprof", "run", "--target-dir"])
        .arg(target)
        .current_dir(user)
        .env_remove("CARGO_TARGET_DIR")
        .env("CARGO_NET_OFFLINE", "true")
        .env("TICKPROF_STDERR", "off")
        .env("TICKPROF_OUT", json);
    cmd
}

#[cfg(unix)]
#[test]
fn a_second_run_on_the_same_target_dir_waits_for_the_first() {
    let (_guard, target) = crate::cargo_tickprof::shared_target();
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("busy");
    let (first, second) = (base.join("first"), base.join("second"));
    // The first program holds its run open until the test lets it go.
    workspace(
        &first,
        "fn wait() -> usize {\n    let mut line = String::new();\n    \
         std::io::stdin().read_line(&mut line).unwrap()\n}\n\
         fn main() {\n    println!(\"started\");\n    wait();\n    println!(\"first\");\n}\n",
    );
    workspace(
        &second,
        "fn only_in_second() -> u32 {\n    2\n}\nfn main() {\n    \
         println!(\"second {}\", only_in_second());\n}\n",
    );
    let mut a = command(&first, &target, &base.join("first.json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut a_out = BufReader::new(a.stdout.take().unwrap());
    let mut line = String::new();
    a_out.read_line(&mut line).unwrap();
    assert_eq!(line, "started\n", "the first run did not start its program");
    let mut b = command(&second, &target, &base.join("second.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The second run's stderr, line by line, read on a thread: waiting
    // for its line with a deadline, so that a second run blocked without
    // saying so fails the test instead of hanging it.
    let b_err = BufReader::new(b.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in b_err.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !said.contains("waiting for another") {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => said += &(line + "\n"),
            Err(_) => break,
        }
    }
    // The first run is still running its program: let it end.
    a.stdin.take().unwrap().write_all(b"\n").unwrap();
    assert!(
        said.contains(&format!(
            "cargo tickprof: waiting for another cargo tickprof using {} to end",
            target.join("tickprof").display()
        )),
        "{said}"
    );
    let a = a.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut a_out, &mut rest).unwrap();
    assert_eq!((a.code(), rest.as_str()), (Some(0), "first\n"));
    let b = b.wait_with_output().unwrap();
    reader.join().unwrap();
    let err: String = rx.try_iter().map(|l| l + "\n").collect();
    assert_eq!(b.status.code(), Some(0), "{said}{err}");
    assert_eq!(String::from_utf8_lossy(&b.stdout), "second 2\n");
    let report = std::fs::read_to_string(base.join("second.json")).unwrap();
    assert!(report.contains("\"app::only_in_second\""), "{report}");
}
