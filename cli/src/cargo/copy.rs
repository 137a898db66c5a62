//! The copy of the workspace: brought up to date file by file, so that a
//! file whose (transformed) content did not change is not written and
//! keeps its modification time — cargo then rebuilds only what changed.
//! The user's tree is only read.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What [`sync`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Synced {
    /// Files (and links) written because they were new or changed.
    pub(crate) written: usize,
    /// Entries removed because the user's tree no longer has them.
    pub(crate) removed: usize,
}

/// Brings `copy` up to date with `root`: every file below `root` except
/// the directories in `exclude` (as written or canonical; and `keep`,
/// names at the top of `copy` that are neither copied nor removed),
/// passed through `transform`
/// (original path, content → content to write).
///
/// # Errors
///
/// The first read or write that fails.
pub(crate) fn sync(
    root: &Path,
    copy: &Path,
    exclude: &[PathBuf],
    keep: &[&str],
    transform: &mut dyn FnMut(&Path, Vec<u8>) -> Vec<u8>,
) -> io::Result<Synced> {
    let mut done = Synced::default();
    let mut seen = HashSet::new();
    fs::create_dir_all(copy)?;
    copy_dir(
        root,
        copy,
        Path::new(""),
        exclude,
        keep,
        transform,
        &mut seen,
        &mut done,
    )?;
    prune(copy, Path::new(""), keep, &seen, &mut done)?;
    Ok(done)
}

#[allow(clippy::too_many_arguments)]
fn copy_dir(
    root: &Path,
    copy: &Path,
    rel: &Path,
    exclude: &[PathBuf],
    keep: &[&str],
    transform: &mut dyn FnMut(&Path, Vec<u8>) -> Vec<u8>,
    seen: &mut HashSet<PathBuf>,
    done: &mut Synced,
) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(root.join(rel))?
        .collect::<io::Result<Vec<_>>>()?
        .into_iter()
        .map(|e| e.file_name())
        .collect();
    entries.sort();
    for name in entries {
        let rel = rel.join(&name);
        let from = root.join(&rel);
        let to = copy.join(&rel);
        if exclude.contains(&from)
            || (rel.parent() == Some(Path::new("")) && keep.iter().any(|k| name == *k))
        {
            continue;
        }
        let meta = fs::symlink_metadata(&from)?;
        // `exclude` holds canonical paths: a directory is compared by its
        // own (links in `root`'s path resolved).
        if meta.is_dir() && fs::canonicalize(&from).is_ok_and(|c| exclude.contains(&c)) {
            continue;
        }
        seen.insert(rel.clone());
        if meta.file_type().is_symlink() {
            let target = link_target(root, &rel, &fs::read_link(&from)?, exclude);
            if fs::read_link(&to).ok() != Some(target.clone()) {
                remove_any(&to)?;
                symlink(&target, &to)?;
                done.written += 1;
            }
        } else if meta.is_dir() {
            if !fs::symlink_metadata(&to).is_ok_and(|m| m.is_dir()) {
                remove_any(&to)?;
                fs::create_dir(&to)?;
            }
            copy_dir(root, copy, &rel, exclude, keep, transform, seen, done)?;
        } else if meta.is_file() {
            let content = transform(&from, fs::read(&from)?);
            let same = fs::symlink_metadata(&to).is_ok_and(|m| m.is_file())
                && fs::read(&to).is_ok_and(|old| old == content);
            if !same {
                remove_any(&to)?;
                fs::write(&to, &content)?;
                copy_mode(&meta, &to)?;
                done.written += 1;
            }
        }
    }
    Ok(())
}

/// What the copy's link at `rel` points to, for a link of the tree that
/// points to `target`: a link into the tree (its copied part) points to
/// the same place in the copy, relative, so what it names is the copy's
/// (marked) file; a link out of the tree (or into a left-out directory)
/// points to the original, absolute, so a relative link that leaves the
/// tree still names what it named; a dangling link is kept as written.
fn link_target(root: &Path, rel: &Path, target: &Path, exclude: &[PathBuf]) -> PathBuf {
    let parent = rel.parent().unwrap_or(Path::new(""));
    let Ok(resolved) = fs::canonicalize(root.join(parent).join(target)) else {
        return target.to_path_buf();
    };
    let canon_root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    match resolved.strip_prefix(&canon_root) {
        Ok(inside)
            if !exclude
                .iter()
                .any(|e| e.starts_with(&canon_root) && resolved.starts_with(e)) =>
        {
            let up = parent.components().count();
            let mut out: PathBuf = std::iter::repeat("..").take(up).collect();
            out.push(inside);
            if out.as_os_str().is_empty() {
                out.push(".");
            }
            out
        }
        _ => resolved,
    }
}

/// Removes what the copy has and the tree no longer does.
fn prune(
    copy: &Path,
    rel: &Path,
    keep: &[&str],
    seen: &HashSet<PathBuf>,
    done: &mut Synced,
) -> io::Result<()> {
    for entry in fs::read_dir(copy.join(rel))? {
        let entry = entry?;
        let rel = rel.join(entry.file_name());
        if rel.parent() == Some(Path::new("")) && keep.iter().any(|k| entry.file_name() == *k) {
            continue;
        }
        if !seen.contains(&rel) {
            remove_any(&copy.join(&rel))?;
            done.removed += 1;
        } else if entry.file_type()?.is_dir() {
            prune(copy, &rel, keep, seen, done)?;
        }
    }
    Ok(())
}

fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> io::Result<()> {
    Ok(())
}

/// The original's mode, writable by the owner (so the next update can
/// rewrite a file copied from a read-only tree).
#[cfg(unix)]
fn copy_mode(meta: &fs::Metadata, to: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(
        to,
        fs::Permissions::from_mode(meta.permissions().mode() | 0o200),
    )
}

#[cfg(not(unix))]
fn copy_mode(_meta: &fs::Metadata, _to: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{link_target, sync, Synced};
    use std::fs;
    use std::path::Path;

    #[cfg(unix)]
    #[test]
    fn links_name_what_they_named() {
        let base = std::env::temp_dir().join(format!("tickprof-links-test-{}", std::process::id()));
        let root = base.join("ws");
        fs::create_dir_all(root.join("src/m")).unwrap();
        fs::create_dir_all(root.join("target")).unwrap();
        fs::write(root.join("src/a.rs"), "").unwrap();
        fs::write(base.join("outside.rs"), "").unwrap();
        let root = fs::canonicalize(&root).unwrap();
        let exclude = [root.join("target")];
        let at = |rel: &str, target: &Path| link_target(&root, Path::new(rel), target, &exclude);
        // Absolute, into the tree: relative, to the copy's file.
        assert_eq!(
            at("src/m/l.rs", &root.join("src/a.rs")),
            Path::new("../../src/a.rs")
        );
        // Relative, into the tree: the same.
        assert_eq!(at("src/l.rs", Path::new("a.rs")), Path::new("../src/a.rs"));
        // Relative, out of the tree, or into the target dir: the original.
        let out = fs::canonicalize(base.join("outside.rs")).unwrap();
        assert_eq!(at("src/l.rs", Path::new("../../outside.rs")), out);
        assert_eq!(at("l", Path::new("target")), root.join("target"));
        // Dangling: as written.
        assert_eq!(at("l", Path::new("nowhere")), Path::new("nowhere"));
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn updates_only_what_changed() {
        let base = std::env::temp_dir().join(format!("tickprof-copy-test-{}", std::process::id()));
        let (root, copy) = (base.join("root"), base.join("copy"));
        fs::create_dir_all(root.join("src/sub")).unwrap();
        fs::create_dir_all(root.join("target")).unwrap();
        fs::write(root.join("src/a.rs"), "a").unwrap();
        fs::write(root.join("src/sub/b.txt"), "b").unwrap();
        fs::write(root.join("target/big"), "x").unwrap();
        fs::write(root.join("Cargo.lock"), "user").unwrap();
        let exclude = [root.join("target")];
        let mut upper = |p: &std::path::Path, c: Vec<u8>| {
            if p.extension().is_some_and(|e| e == "rs") {
                c.to_ascii_uppercase()
            } else {
                c
            }
        };
        let run = |f: &mut dyn FnMut(&std::path::Path, Vec<u8>) -> Vec<u8>| {
            sync(&root, &copy, &exclude, &["Cargo.lock"], f).unwrap()
        };
        assert_eq!(
            run(&mut upper),
            Synced {
                written: 2,
                removed: 0
            }
        );
        assert_eq!(fs::read_to_string(copy.join("src/a.rs")).unwrap(), "A");
        assert!(!copy.join("target").exists() && !copy.join("Cargo.lock").exists());
        fs::write(copy.join("Cargo.lock"), "copy's own").unwrap();
        assert_eq!(run(&mut upper), Synced::default());
        fs::write(root.join("src/a.rs"), "c").unwrap();
        fs::remove_file(root.join("src/sub/b.txt")).unwrap();
        assert_eq!(
            run(&mut upper),
            Synced {
                written: 1,
                removed: 1
            }
        );
        assert_eq!(
            fs::read_to_string(copy.join("Cargo.lock")).unwrap(),
            "copy's own"
        );
        fs::remove_dir_all(&base).unwrap();
    }
}
