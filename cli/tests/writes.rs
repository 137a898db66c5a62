//! The files `tickprof show` writes (`--html`, `--out`) go through the
//! runtime's safe writer: a symlink at the file is replaced, never written
//! through; an existing file keeps its mode; paths need not be UTF-8.
#![cfg(unix)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;
use support::{data, tickprof};

/// A fresh world-writable sticky directory (not `/tmp` itself).
fn sticky_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tickprof-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn show_replaces_a_symlink_at_its_files_and_never_writes_through_it() {
    let dir = sticky_dir("links");
    let victim = dir.join("victim");
    std::fs::write(&victim, "secret").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let html = dir.join("page.html");
    let out = dir.join("r.csv");
    std::os::unix::fs::symlink(&victim, &html).unwrap();
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let o = tickprof(&[
        OsStr::new("show"),
        data("before.json").as_os_str(),
        OsStr::new("--html"),
        html.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
    assert_eq!(mode(&victim), 0o600);
    for f in [&html, &out] {
        assert!(std::fs::symlink_metadata(f).unwrap().is_file(), "{f:?}");
    }
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["page.html", "r.csv", "victim"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn show_keeps_a_files_mode_and_takes_paths_that_are_not_utf8() {
    let dir = sticky_dir("mode");
    let html = dir.join("page.html");
    std::fs::write(&html, "old").unwrap();
    std::fs::set_permissions(&html, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A report copied to a name that is not UTF-8, written to another.
    let input = dir.join(OsStr::from_bytes(b"in\xff.json"));
    std::fs::copy(data("before.json"), &input).unwrap();
    let out = dir.join(OsStr::from_bytes(b"out\xfe.json"));
    let o = tickprof(&[
        OsStr::new("show"),
        input.as_os_str(),
        OsStr::new("--html"),
        html.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(mode(&html), 0o600);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(data("before.json")).unwrap()
    );
    // A FIFO given as the output is refused at once (exit 2), not opened.
    let fifo = dir.join("fifo.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let o = tickprof(&[
        OsStr::new("show"),
        data("before.json").as_os_str(),
        OsStr::new("--out"),
        fifo.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a regular file (a FIFO)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--html` and `--out` at a symlink to a device (`/dev/null`, as
/// `/dev/stdout` is one) or to a directory: exit 2 with one line, and the
/// link stays (as root the rename would have replaced it).
#[test]
fn show_refuses_a_symlink_to_a_device_or_directory() {
    let dir = sticky_dir("devlinks");
    let before = data("before.json");
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink("/dev/null", dir.join("null.html")).unwrap();
    std::os::unix::fs::symlink(dir.join("sub"), dir.join("dir.csv")).unwrap();
    for (flag, name) in [("--html", "null.html"), ("--out", "dir.csv")] {
        let link = dir.join(name);
        let out = tickprof(&[
            "show".as_ref(),
            before.as_os_str(),
            flag.as_ref(),
            link.as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag} {name}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("not to a regular file"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["dir.csv", "null.html", "sub"]);
    let _ = std::fs::remove_dir_all(&dir);
}
