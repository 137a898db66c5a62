//! `cargo tickprof run` on a workspace whose lock is older than
//! tickprof's own graph (tests/fixtures/pinned): proc-macro2 1.0.80 and
//! syn 2.0.50, which tickprof builds with as they are, and libc 0.2.50,
//! older than tickprof's runtime needs. The copy's lock keeps what it can,
//! moves libc alone, the summary line says so, and the user's tree (its
//! lock included) is unchanged. Needs crates.io (through cargo) the
//! first time, for the pinned versions.

use std::path::Path;
use std::process::Command;

mod trees;
use trees::{copy_tree, snapshot};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-tickprof");

/// The version of each package `name` in a lock.
fn locked(lock: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                out.push(v.trim_end_matches('"').to_string());
            }
        }
    }
    out
}

#[test]
fn an_old_lock_is_kept_where_it_can_be_and_moves_are_said() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cargo-tickprof-lock");
    let user = base.join("user");
    let _ = std::fs::remove_dir_all(&user);
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pinned"),
        &user,
    );
    let before = snapshot(&user);
    let out = Command::new(BIN)
        .args(["tickprof", "run"])
        .current_dir(&user)
        .env("CARGO_TARGET_DIR", base.join("target"))
        .env("TICKPROF_STDERR", "off")
        .env_remove("TICKPROF")
        .env_remove("TICKPROF_OUT")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sum 9 page true\n");
    let summary = err
        .lines()
        .find(|l| l.starts_with("cargo tickprof: marked"))
        .unwrap_or_else(|| panic!("no summary line: {err}"));
    assert!(
        summary.starts_with(
            "cargo tickprof: marked 2 functions in 1 file of app \
             (after inlining: 0 left inlined, 0 not in the build; skipped 0)"
        ),
        "{summary}"
    );
    assert!(
        summary.ends_with("; lock: moved libc 0.2.50 → 0.2.")
            || summary.contains("; lock: moved libc 0.2.50 → 0.2."),
        "{summary}"
    );
    assert!(
        !summary.contains("syn") && !summary.contains("proc-macro2"),
        "{summary}"
    );
    let copy = std::fs::read_to_string(base.join("target/tickprof/ws/Cargo.lock")).unwrap();
    assert_eq!(locked(&copy, "proc-macro2"), ["1.0.80"]);
    assert_eq!(locked(&copy, "syn"), ["2.0.50"], "one syn major");
    assert_ne!(locked(&copy, "libc"), ["0.2.50"]);
    assert_eq!(
        snapshot(&user),
        before,
        "the user's tree and lock are unchanged"
    );
}
