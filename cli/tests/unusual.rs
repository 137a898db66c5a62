//! `cargo tickprof` on unusual trees, every file outside the copy hashed
//! before and after: a target directory inside the workspace named through
//! `..` and through a link (never copied into the copy), and `mark DIR`
//! with links out of DIR and a link loop (never followed, nothing outside
//! DIR written, each file visited once).

use std::path::Path;
use std::process::Command;

mod trees;
use trees::snapshot;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-tickprof");

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("unusual-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[cfg(unix)]
#[test]
fn a_target_dir_named_through_dotdot_or_a_link_is_left_out() {
    let base = scratch("target");
    let user = base.join("user");
    write(
        &user.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    );
    write(&user.join("src/main.rs"), "fn main() {}\n");
    std::fs::create_dir_all(user.join("d")).unwrap();
    std::os::unix::fs::symlink(user.join("tt"), user.join("linked")).unwrap();
    for target in ["d/../tt", "linked"] {
        let before = snapshot(&user);
        let out = Command::new(BIN)
            .args(["tickprof", "copy", "--target-dir", target])
            .current_dir(&user)
            .env("CARGO_NET_OFFLINE", "true")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{target}: {err}");
        let copy = user.join("tt/tickprof/ws");
        assert!(copy.join("src/main.rs").is_file(), "{target}");
        assert!(
            !copy.join("tt").exists(),
            "{target}: the copy copied itself"
        );
        // Outside the copy (and its build, lock seed and lock), nothing
        // changed.
        let outside = |s: &std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>| {
            s.iter()
                .filter(|(p, _)| !p.starts_with(user.join("tt")))
                .map(|(p, c)| (p.clone(), c.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(outside(&snapshot(&user)), outside(&before), "{target}");
    }
}

#[cfg(unix)]
#[test]
fn mark_follows_no_link_out_of_dir_nor_round_a_loop() {
    let base = scratch("mark-links");
    let dir = base.join("crate/src");
    write(&dir.join("lib.rs"), "pub fn a() {}\n");
    write(&dir.join("sub/b.rs"), "pub fn b() {}\n");
    write(&base.join("outside/o.rs"), "pub fn outside() {}\n");
    let link = |to: &Path, at: &str| std::os::unix::fs::symlink(to, dir.join(at)).unwrap();
    link(&base.join("outside"), "out_dir");
    link(&base.join("outside/o.rs"), "out_file.rs");
    link(&dir, "sub/loop");
    let before = snapshot(&base.join("outside"));
    let out = Command::new(BIN)
        .args(["tickprof", "mark", "-v", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with(
            "cargo tickprof: marked 2 functions in 2 files of crate (skipped 0); \
             3 links not followed\n"
        ),
        "{err}"
    );
    assert_eq!(err.matches("  not followed ").count(), 3, "{err}");
    assert_eq!(snapshot(&base.join("outside")), before);
    let lib = std::fs::read_to_string(dir.join("lib.rs")).unwrap();
    assert_eq!(lib, "#[::tickprof::profile(always)] pub fn a() {}\n");
}
