//! The copy of the workspace: brought up to date file by file, so that a
//! file whose (transformed) content did not change is not written and
//! keeps its modification time — cargo then rebuilds only what changed.
//! A file whose metadata and copy are those the last update left (see
//! [`super::cache`]) is not even read. The user's tree is only read.

use super::cache::{Cache, Entry, Stamp};
use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a file of the tree becomes in the copy.
pub(crate) trait Transform {
    /// The copy's content for the file at `from` (in the tree) whose
    /// content is `content`, and the notes to keep for it in the cache
    /// (`None`: the result depends on more than the file; never cached).
    fn content(&mut self, from: &Path, content: Vec<u8>) -> (Vec<u8>, Option<Vec<String>>);
    /// A file found unchanged by the cache: its notes, said again.
    fn again(&mut self, from: &Path, notes: &[String]);
    /// Whether the notes the cache kept for an unchanged file still hold
    /// (its copy depends on nothing else that changed).
    fn fresh(&mut self, _from: &Path, _notes: &[String]) -> bool {
        true
    }
}

/// A plain function of the content: nothing to note.
impl<F: FnMut(&Path, Vec<u8>) -> Vec<u8>> Transform for F {
    fn content(&mut self, from: &Path, content: Vec<u8>) -> (Vec<u8>, Option<Vec<String>>) {
        (self(from, content), Some(Vec::new()))
    }
    fn again(&mut self, _from: &Path, _notes: &[String]) {}
}

/// What [`sync`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Synced {
    /// Files (and links) written because they were new or changed.
    pub(crate) written: usize,
    /// Entries removed because the user's tree no longer has them.
    pub(crate) removed: usize,
    /// Files read (the others were found unchanged by their metadata).
    pub(crate) read: usize,
}

/// Brings `copy` up to date with `root`: every file below `root` except
/// the directories in `exclude` (as written or canonical; and `keep`,
/// names at the top of `copy` that are neither copied nor removed),
/// passed through `transform`; `cache` (saved at the end) spares the
/// reads of files unchanged since the last update.
///
/// # Errors
///
/// The first read or write that fails.
pub(crate) fn sync(
    root: &Path,
    copy: &Path,
    exclude: &[PathBuf],
    keep: &[&str],
    transform: &mut dyn Transform,
    cache: &mut Cache,
) -> io::Result<Synced> {
    let mut done = Synced::default();
    let mut seen = HashSet::new();
    fs::create_dir_all(copy)?;
    let mut walk = Walk {
        root,
        copy,
        exclude,
        keep,
        transform,
        cache,
        seen: &mut seen,
        done: &mut done,
    };
    walk.dir(Path::new(""))?;
    walk.cache.save();
    prune(copy, Path::new(""), keep, &seen, &mut done)?;
    Ok(done)
}

/// One update's walk of the tree.
struct Walk<'a> {
    root: &'a Path,
    copy: &'a Path,
    exclude: &'a [PathBuf],
    keep: &'a [&'a str],
    transform: &'a mut dyn Transform,
    cache: &'a mut Cache,
    seen: &'a mut HashSet<PathBuf>,
    done: &'a mut Synced,
}

impl Walk<'_> {
    fn dir(&mut self, rel: &Path) -> io::Result<()> {
        let (root, copy) = (self.root, self.copy);
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
            if self.exclude.contains(&from)
                || (rel.parent() == Some(Path::new("")) && self.keep.iter().any(|k| name == *k))
            {
                continue;
            }
            let meta = fs::symlink_metadata(&from)?;
            // `exclude` holds canonical paths: a directory is compared by its
            // own (links in `root`'s path resolved).
            if meta.is_dir() && fs::canonicalize(&from).is_ok_and(|c| self.exclude.contains(&c)) {
                continue;
            }
            self.seen.insert(rel.clone());
            if meta.file_type().is_symlink() {
                let target = link_target(root, &rel, &fs::read_link(&from)?, self.exclude);
                if fs::read_link(&to).ok() != Some(target.clone()) {
                    remove_any(&to)?;
                    symlink(&target, &to)?;
                    self.done.written += 1;
                }
            } else if meta.is_dir() {
                if !fs::symlink_metadata(&to).is_ok_and(|m| m.is_dir()) {
                    remove_any(&to)?;
                    fs::create_dir(&to)?;
                }
                self.dir(&rel)?;
            } else if meta.is_file() {
                self.file(&rel, &from, &to, &meta)?;
            }
        }
        Ok(())
    }

    fn file(&mut self, rel: &Path, from: &Path, to: &Path, meta: &fs::Metadata) -> io::Result<()> {
        let original = Stamp::of(meta);
        let copied = fs::symlink_metadata(to)
            .ok()
            .filter(fs::Metadata::is_file)
            .and_then(|m| Stamp::of(&m));
        let hit = original
            .and_then(|o| self.cache.hit(rel, o, copied))
            .cloned();
        if let Some(entry) = hit.filter(|e| self.transform.fresh(from, &e.notes)) {
            self.transform.again(from, &entry.notes);
            self.cache.keep(rel, entry);
            return Ok(());
        }
        self.done.read += 1;
        let (content, notes) = self.transform.content(from, fs::read(from)?);
        let same = copied.is_some() && fs::read(to).is_ok_and(|old| old == content);
        if !same {
            remove_any(to)?;
            fs::write(to, &content)?;
            copy_mode(meta, to)?;
            self.done.written += 1;
        }
        let copy = fs::symlink_metadata(to).ok().and_then(|m| Stamp::of(&m));
        if let (Some(original), Some(copy), Some(notes)) = (original, copy, notes) {
            self.cache.keep(
                rel,
                Entry {
                    original,
                    copy,
                    notes,
                },
            );
        }
        Ok(())
    }
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
            let mut out: PathBuf = std::iter::repeat_n("..", up).collect();
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
    use super::{link_target, sync, Synced, Transform};
    use crate::cargo::cache::Cache;
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
        let saved = base.join("cache");
        let run = |f: &mut dyn Transform| {
            let mut cache = Cache::load(&saved, "k").trusting();
            sync(&root, &copy, &exclude, &["Cargo.lock"], f, &mut cache).unwrap()
        };
        assert_eq!(
            run(&mut upper),
            Synced {
                written: 2,
                removed: 0,
                read: 2,
            }
        );
        assert_eq!(fs::read_to_string(copy.join("src/a.rs")).unwrap(), "A");
        assert!(!copy.join("target").exists() && !copy.join("Cargo.lock").exists());
        fs::write(copy.join("Cargo.lock"), "copy's own").unwrap();
        // Unchanged: nothing read, nothing written.
        assert_eq!(run(&mut upper), Synced::default());
        fs::write(root.join("src/a.rs"), "c").unwrap();
        fs::remove_file(root.join("src/sub/b.txt")).unwrap();
        assert_eq!(
            run(&mut upper),
            Synced {
                written: 1,
                removed: 1,
                read: 1,
            }
        );
        assert_eq!(fs::read_to_string(copy.join("src/a.rs")).unwrap(), "C");
        // The copy's file changed behind the cache's back: read again and
        // put right.
        fs::write(copy.join("src/a.rs"), "edited").unwrap();
        assert_eq!(
            run(&mut upper),
            Synced {
                written: 1,
                removed: 0,
                read: 1,
            }
        );
        assert_eq!(fs::read_to_string(copy.join("src/a.rs")).unwrap(), "C");
        assert_eq!(
            fs::read_to_string(copy.join("Cargo.lock")).unwrap(),
            "copy's own"
        );
        // Notes are said again from the cache, exactly.
        struct Noting(Vec<String>);
        impl Transform for Noting {
            fn content(&mut self, from: &Path, c: Vec<u8>) -> (Vec<u8>, Option<Vec<String>>) {
                let note = format!("read {}", from.file_name().unwrap().to_string_lossy());
                self.0.push(note.clone());
                (c.to_ascii_uppercase(), Some(vec![note]))
            }
            fn again(&mut self, _from: &Path, notes: &[String]) {
                self.0.extend(notes.iter().map(|n| format!("again {n}")));
            }
        }
        let _ = fs::remove_file(&saved);
        let mut noting = Noting(Vec::new());
        run(&mut noting);
        run(&mut noting);
        assert_eq!(noting.0, ["read a.rs", "again read a.rs"]);
        // Another plan: the cache is not used.
        let mut cache = Cache::load(&saved, "other").trusting();
        let mut noting = Noting(Vec::new());
        sync(
            &root,
            &copy,
            &exclude,
            &["Cargo.lock"],
            &mut noting,
            &mut cache,
        )
        .unwrap();
        assert_eq!(noting.0, ["read a.rs"]);
        fs::remove_dir_all(&base).unwrap();
    }
}
