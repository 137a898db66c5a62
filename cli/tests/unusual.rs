//! `cargo tickprof` on unusual trees, every file outside the copy hashed
//! before and after: a target directory inside the workspace named through
//! `..` and through a link (never copied into the copy); `mark DIR` with
//! links out of DIR and a link loop (never followed, nothing outside DIR
//! written, each file visited once); modules behind a relative link out of
//! the workspace and an absolute link into it, a `#[path]` module and an
//! `include_str!` file out of the workspace, a 50 MB source file no
//! module includes and a file of invalid UTF-8 (the copy builds and runs
//! as the original does).

use std::path::Path;
use std::process::Command;

use crate::trees;
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

#[cfg(unix)]
#[test]
fn links_large_and_invalid_files_build_as_in_the_original() {
    let base = scratch("links");
    let user = base.join("user");
    write(
        &user.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    );
    write(
        &user.join("src/main.rs"),
        concat!(
            "mod abs;\nmod ext;\n",
            "#[path = \"../../ext/other.rs\"]\nmod other;\n",
            "const DATA: &str = include_str!(\"../../ext/data.txt\");\n",
            "fn main() {\n",
            "    let data: u32 = DATA.trim().parse().unwrap();\n",
            "    println!(\"{}\", ext::ext() + abs::abs() + other::other() + data);\n}\n",
        ),
    );
    // Out of the workspace by `#[path]` and `include_str!`: the copy
    // names the originals.
    write(
        &base.join("ext/other.rs"),
        "pub fn other() -> u32 {\n    4\n}\n",
    );
    write(&base.join("ext/data.txt"), "8\n");
    write(
        &base.join("ext/ext.rs"),
        "pub fn ext() -> u32 {\n    1\n}\n",
    );
    write(
        &user.join("src/impls/abs.rs"),
        "pub fn abs() -> u32 {\n    2\n}\n",
    );
    std::os::unix::fs::symlink("../../ext/ext.rs", user.join("src/ext.rs")).unwrap();
    std::os::unix::fs::symlink(user.join("src/impls/abs.rs"), user.join("src/abs.rs")).unwrap();
    let line = "pub fn generated() -> u32 { 0 }\n";
    write(
        &user.join("src/unused_table.rs"),
        &line.repeat((50 << 20) / line.len()),
    );
    std::fs::write(user.join("src/latin1.rs"), b"// caf\xe9\n").unwrap();
    write(&user.join("tests/it.rs"), "#[test]\nfn t() {}\n");
    let (_guard, target) = crate::cargo_tickprof::shared_target();
    let json = base.join("run.json");
    let before = snapshot(&base);
    // Stamps of files changed less than 2 s before a run are not trusted
    // (a change in the same clock tick as the read would keep its stamp).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for run in 0..3 {
        let out = Command::new(BIN)
            .args(["tickprof", "run", "-v", "--target-dir"])
            .arg(&target)
            .current_dir(&user)
            .env_remove("CARGO_TARGET_DIR")
            .env("CARGO_NET_OFFLINE", "true")
            .env("TICKPROF_STDERR", "off")
            .env("TICKPROF_OUT", &json)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "15\n");
        assert!(
            err.contains("2 files left as they are (not parsed)"),
            "{err}"
        );
        assert!(
            err.contains("  not parsed src/unused_table.rs: larger than 4 MiB: copied unmarked"),
            "{err}"
        );
        assert!(
            err.contains("  not parsed src/latin1.rs: not UTF-8 (byte 6): copied as it is"),
            "{err}"
        );
        assert!(
            err.contains(
                "  not marked tests/it.rs: not under a lib or bin target's directory \
                 (tests, examples and benches call the crate)"
            ),
            "{err}"
        );
        // Files are compared by their metadata before they are read: the
        // first run reads every file, the next ones only the manifest and
        // `main.rs` (it names paths out of the workspace, whose files may
        // come and go). The 50 MB file is neither read nor parsed again;
        // its notes are said again (above).
        let read = if run == 0 { 6 } else { 2 };
        assert!(
            err.contains(&format!("  copy: {read} files read, ")),
            "{err}"
        );
        let report = std::fs::read_to_string(&json).unwrap();
        // Reached through the absolute link, now to the copy's file: marked.
        assert!(report.contains("\"app::abs::abs\""), "{report}");
        // Outside the workspace, through the relative link: the original.
        assert!(!report.contains("app::ext::ext"), "{report}");
        std::fs::remove_file(&json).unwrap();
        assert_eq!(snapshot(&base), before);
    }
}
