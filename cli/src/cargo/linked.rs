//! Members reached through a symbolic link that leads out of the
//! workspace: the copy points such a link at the original (it never
//! copies what lies outside the tree), so the member's files are the
//! user's own, unmarked, and the run would say
//! "marked 0 functions" without a word why (issue 54). Each gets one
//! warning line naming it and the link.

use super::meta::Package;
use std::path::{Path, PathBuf};

/// One line per member of `chosen` whose directory is reached from the
/// workspace `root` through a symbolic link out of it, or lies outside
/// `root`.
pub(crate) fn warnings(root: &Path, chosen: &[&Package]) -> Vec<String> {
    chosen
        .iter()
        .filter_map(|p| {
            let why = match link_on_the_way(root, p.dir()) {
                Some((link, to)) => format!(
                    "is reached through the symbolic link {} -> {}, which the copy points at the original",
                    link.display(),
                    to.display()
                ),
                None if !p.dir().starts_with(root) => {
                    format!(
                        "lies outside the workspace directory (at {}), which the copy leaves out",
                        p.dir().display()
                    )
                }
                None => return None,
            };
            Some(format!(
                "cargo tickprof: warning: member {} {why}: its functions are not marked (make it a directory of the workspace)",
                p.name
            ))
        })
        .map(|line| tickprof_runtime::__private::terminal_safe(&line).into_owned())
        .collect()
}

/// The first symbolic link on the way from `root` down to `dir` that
/// leads out of `root` (the copy points it at the original), and what it
/// names.
fn link_on_the_way(root: &Path, dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let rel = dir.strip_prefix(root).ok()?;
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let inside = canonical(root);
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
            && !canonical(&at).starts_with(&inside)
        {
            let to = std::fs::read_link(&at).unwrap_or_default();
            return Some((at, to));
        }
    }
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_member_behind_a_link_or_outside_is_named() {
        let base = std::env::temp_dir().join(format!("tickprof-linked-{}", std::process::id()));
        let (root, real) = (base.join("ws"), base.join("elsewhere/b"));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(&real, root.join("b")).unwrap();
        let pkg = |name: &str, dir: &Path| Package {
            name: name.into(),
            manifest: dir.join("Cargo.toml"),
            targets: Vec::new(),
        };
        let (a, b, c) = (
            pkg("a", &root.join("a")),
            pkg("b", &root.join("b")),
            pkg("c", &real),
        );
        let w = warnings(&root, &[&a, &b, &c]);
        assert_eq!(
            w,
            [
                format!(
                    "cargo tickprof: warning: member b is reached through the symbolic link {} -> {}, which the copy points at the original: its functions are not marked (make it a directory of the workspace)",
                    root.join("b").display(),
                    real.display()
                ),
                format!(
                    "cargo tickprof: warning: member c lies outside the workspace directory (at {}), which the copy leaves out: its functions are not marked (make it a directory of the workspace)",
                    real.display()
                ),
            ]
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
