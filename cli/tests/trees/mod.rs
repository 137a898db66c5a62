//! Trees on disk for the `cargo tickprof` tests: a fixture copied to a
//! scratch directory (the "user's tree"), and every file of a tree with
//! its content, to show it unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Copies the directory `from` to `to` (files and directories; links are
/// not expected in fixtures).
#[allow(dead_code)] // not every test file starts from a fixture
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Every file under `dir` (links not followed: a link's target path
/// stands for its content) with its content.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(p, target.to_string_lossy().as_bytes().to_vec());
            } else if meta.is_dir() {
                walk(&p, out);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}
