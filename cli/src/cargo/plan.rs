//! What each file of the copy becomes: `.rs` files of the marked
//! members' lib and bin targets are rewritten, every `Cargo.toml` edited,
//! everything else copied as it is.
//!
//! Marked: the directory of each lib and bin target's root file (usually
//! `src/`), recursively — `#[cfg(test)]` modules included — except build
//! scripts, files of other packages nested there, and proc-macro members.
//! Examples, integration tests and benches are not marked: they call the
//! crate.

use super::manifest::{self, Edit, Source};
use super::meta::{Package, Workspace};
use super::probe::Kept;
use super::Tally;
use crate::mark::{self, Built, Glob};
use std::path::{Path, PathBuf};

/// The largest source file parsed (syn's tree takes about a hundred
/// times the text): a larger one, a generated table most likely, is
/// copied unmarked and named on the summary line.
const MAX_PARSED: usize = 4 << 20;

/// One marked directory.
#[derive(Debug)]
struct Dir {
    path: PathBuf,
    /// The package it belongs to (its directory).
    package: PathBuf,
    /// The lib's crate name (else the first bin's), for files that are
    /// not a target's root.
    crate_name: String,
    /// (root file, crate name) of each lib and bin target in it.
    roots: Vec<(PathBuf, String)>,
    edition2015: bool,
    dep: String,
}

/// The plan for one update of the copy.
pub(crate) struct Plan<'a> {
    ws: &'a Workspace,
    dirs: Vec<Dir>,
    /// Build scripts of every member: never marked.
    build_scripts: Vec<PathBuf>,
    /// Manifests of the marked members.
    marked: Vec<PathBuf>,
    source: &'a Source,
    mark: Vec<Glob>,
    skip: Vec<Glob>,
    /// The workspace root, links resolved: a path resolving outside it
    /// leaves the workspace (see [`super::escape`]).
    canonical_root: PathBuf,
    /// Marks after inlining: what the unmarked build keeps (`None`:
    /// every function).
    kept: Option<&'a Kept>,
}

impl<'a> Plan<'a> {
    /// The plan marking `chosen` with tickprof from `source`.
    pub(crate) fn new(
        ws: &'a Workspace,
        chosen: &[&Package],
        source: &'a Source,
        mark: Vec<Glob>,
        skip: Vec<Glob>,
    ) -> Self {
        let mut dirs: Vec<Dir> = Vec::new();
        for p in chosen {
            let text = std::fs::read_to_string(&p.manifest).unwrap_or_default();
            let dep = manifest::dependency_name(&text);
            let code: Vec<_> = p
                .targets
                .iter()
                .filter(|t| t.kinds.iter().any(|k| k.contains("lib") || k == "bin"))
                .collect();
            let crate_name = code
                .iter()
                .find(|t| t.kinds.iter().any(|k| k.contains("lib")))
                .or(code.first())
                .map_or_else(|| p.name.replace('-', "_"), |t| t.name.clone());
            for t in &code {
                let Some(path) = t.src_path.parent() else {
                    continue;
                };
                let root = (t.src_path.clone(), t.name.clone());
                match dirs.iter_mut().find(|d| d.path == path) {
                    Some(d) => d.roots.push(root),
                    None => dirs.push(Dir {
                        path: path.to_path_buf(),
                        package: p.dir().to_path_buf(),
                        crate_name: crate_name.clone(),
                        roots: vec![root],
                        edition2015: t.edition == "2015",
                        dep: dep.clone(),
                    }),
                }
            }
        }
        // Deepest first, so a file goes with its nearest marked directory.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.path.components().count()));
        Plan {
            ws,
            dirs,
            build_scripts: ws
                .members
                .iter()
                .flat_map(|p| &p.targets)
                .filter(|t| t.kinds.iter().any(|k| k == "custom-build"))
                .map(|t| t.src_path.clone())
                .collect(),
            marked: chosen.iter().map(|p| p.manifest.clone()).collect(),
            source,
            mark,
            skip,
            canonical_root: std::fs::canonicalize(&ws.root).unwrap_or_else(|_| ws.root.clone()),
            kept: None,
        }
    }

    /// The same plan, marking after inlining: only the functions `kept`
    /// (the unmarked build) keeps, when given.
    pub(crate) fn after_inlining(mut self, kept: Option<&'a Kept>) -> Self {
        self.kept = kept;
        self
    }

    /// The functions of the file at `path` as the unmarked build has
    /// them, when marking after inlining and the file is one of a marked
    /// directory.
    fn built(&self, path: &Path) -> Option<Vec<Built>> {
        let dir = self.dirs.iter().find(|d| path.starts_with(&d.path))?;
        self.kept?.file(&dir.package, path)
    }

    /// The cache note that says what [`Plan::built`] gave a file: its
    /// copy is up to date only while that stays the same.
    fn built_note(&self, path: &Path) -> String {
        format!(
            "B {}",
            super::cache::digest(&format!("{:?}", self.built(path)))
        )
    }

    /// The copy's content for the file at `path` (in the user's tree)
    /// whose content is `content`.
    pub(crate) fn transform(&self, path: &Path, content: Vec<u8>, tally: &mut Tally) -> Vec<u8> {
        let out = self.marked_content(path, content, tally);
        if path.extension().is_none_or(|e| e != "rs") || out.len() > MAX_PARSED {
            return out;
        }
        // Paths that leave the workspace name what they named in the
        // original (every source file: a member left unmarked, a build
        // script too).
        let (Ok(text), Some(dir)) = (std::str::from_utf8(&out), path.parent()) else {
            return out;
        };
        match super::escape::rewrite(text, dir, &self.canonical_root) {
            Some(text) => text.into_bytes(),
            None => out,
        }
    }

    /// The file at `path` as the summary and `-v` name it.
    pub(crate) fn shown<'p>(&self, path: &'p Path) -> &'p Path {
        path.strip_prefix(&self.ws.root).unwrap_or(path)
    }

    /// What the copy's cache depends on besides each file: the plan, and
    /// this command's own binary (a new one may mark differently).
    pub(crate) fn key(&self) -> String {
        let exe = std::env::current_exe()
            .and_then(std::fs::metadata)
            .ok()
            .and_then(|m| super::cache::Stamp::of(&m));
        super::cache::digest(&format!(
            "{} {exe:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            env!("CARGO_PKG_VERSION"),
            self.ws.root,
            self.dirs,
            self.build_scripts,
            self.marked,
            self.source,
            self.mark,
            self.skip,
            self.canonical_root,
        ))
    }

    /// Whether the copy of the file at `path`, `out`, depends on that file
    /// only (so the cache may keep it): not a manifest (edited against
    /// the workspace), not a source naming a path (what it names
    /// outside the workspace may come and go).
    fn cacheable(path: &Path, out: &[u8]) -> bool {
        if path.file_name().is_some_and(|n| n == "Cargo.toml") {
            return false;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            return true;
        }
        std::str::from_utf8(out).map_or(true, |t| !super::escape::names_paths(t))
    }

    fn marked_content(&self, path: &Path, content: Vec<u8>, tally: &mut Tally) -> Vec<u8> {
        if path.file_name().is_some_and(|n| n == "Cargo.toml") {
            return self.manifest(path, content);
        }
        if path.extension().is_none_or(|e| e != "rs") {
            return content;
        }
        let shown = self.shown(path);
        if self.build_scripts.iter().any(|b| b == path) {
            tally.unmarked_file(shown, "a build script");
            return content;
        }
        let Some(dir) = self.dirs.iter().find(|d| path.starts_with(&d.path)) else {
            let why = match self.package_of(path) {
                Some(p) if !self.marked.contains(&p.manifest) => {
                    format!("package {} is not marked", p.name)
                }
                Some(_) => "not under a lib or bin target's directory \
                            (tests, examples and benches call the crate)"
                    .to_string(),
                None => "in no package of the workspace".to_string(),
            };
            tally.unmarked_file(shown, &why);
            return content;
        };
        // A file of another package nested in this directory.
        if let Some(m) = self.ws.members.iter().find(|m| {
            m.dir() != dir.package && m.dir().starts_with(&dir.package) && path.starts_with(m.dir())
        }) {
            if !self.marked.contains(&m.manifest) {
                tally.unmarked_file(shown, &format!("package {} is not marked", m.name));
            }
            return content;
        }
        if content.len() > MAX_PARSED {
            let mib = MAX_PARSED >> 20;
            tally.not_parsed(shown, &format!("larger than {mib} MiB: copied unmarked"));
            return content;
        }
        let text = match String::from_utf8(content) {
            Ok(text) => text,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                tally.not_parsed(shown, &format!("not UTF-8 (byte {at}): copied as it is"));
                return e.into_bytes();
            }
        };
        let rel = path.strip_prefix(&dir.path).unwrap_or(path);
        let (crate_name, module) = match dir.roots.iter().find(|(root, _)| root == path) {
            Some((_, name)) => (name.clone(), Vec::new()),
            None => match rel.components().next() {
                Some(c) if c.as_os_str() == "bin" && rel.components().count() > 1 => {
                    let mut parts = module_of(rel.strip_prefix("bin").unwrap_or(rel));
                    let name = if parts.is_empty() {
                        String::new()
                    } else {
                        parts.remove(0)
                    };
                    (name.replace('-', "_"), parts)
                }
                _ => (dir.crate_name.clone(), module_of(rel)),
            },
        };
        let opts = mark::Options {
            crate_name,
            dep: dir.dep.clone(),
            edition2015: dir.edition2015,
            mark: self.mark.clone(),
            skip: self.skip.clone(),
            built: self.built(path),
        };
        let result = mark::rewrite(&text, &module, &opts);
        tally.add(shown, &opts.crate_name, &result);
        match result {
            Ok(r) => r.text.into_bytes(),
            Err(_) => text.into_bytes(),
        }
    }

    /// The member whose directory holds `path` (the deepest one).
    fn package_of(&self, path: &Path) -> Option<&Package> {
        self.ws
            .members
            .iter()
            .filter(|m| path.starts_with(m.dir()))
            .max_by_key(|m| m.dir().components().count())
    }

    fn manifest(&self, path: &Path, content: Vec<u8>) -> Vec<u8> {
        let Ok(text) = std::str::from_utf8(&content) else {
            return content;
        };
        let dir = path.parent().unwrap_or(Path::new("/"));
        let edit = Edit {
            dir,
            root: &self.ws.root,
            is_root: dir == self.ws.root,
            tickprof: self.source,
            marked: self.marked.iter().any(|m| m == path),
        };
        // A manifest that does not parse is copied as it is: cargo says
        // what is wrong with it.
        manifest::edit(text, &edit).map_or(content, String::into_bytes)
    }
}

/// The copy's transformation of the marked members: [`Plan::transform`],
/// its notes counted in `tally` and kept in the copy's cache.
pub(crate) struct Marking<'a, 'p> {
    /// The plan.
    pub(crate) plan: &'a Plan<'p>,
    /// The counts of the summary line.
    pub(crate) tally: &'a mut Tally,
}

impl super::copy::Transform for Marking<'_, '_> {
    fn content(&mut self, from: &Path, content: Vec<u8>) -> (Vec<u8>, Option<Vec<String>>) {
        self.tally.said.clear();
        let out = self.plan.transform(from, content, self.tally);
        let mut notes = std::mem::take(&mut self.tally.said);
        notes.push(self.plan.built_note(from));
        let keep = Plan::cacheable(from, &out);
        (out, keep.then_some(notes))
    }

    fn fresh(&mut self, from: &Path, notes: &[String]) -> bool {
        notes.last() == Some(&self.plan.built_note(from))
    }

    fn again(&mut self, from: &Path, notes: &[String]) {
        self.tally.replay(self.plan.shown(from), notes);
    }
}

/// The module path of a file from its path relative to the crate's root
/// directory: `a/b.rs` → `a::b`, `a/mod.rs` → `a`, `lib.rs` → nothing.
pub(crate) fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
        let root = parts.is_empty() && matches!(stem.as_str(), "lib" | "main");
        if stem != "mod" && !root {
            parts.push(stem);
        }
    }
    parts
}

/// Every `.rs` file under `dir`, sorted. Symbolic links are never
/// followed (a link may lead out of `dir`, or back into it, in a loop):
/// they go to `links`, each visited file is a real file under `dir`, once.
///
/// # Errors
///
/// A directory that cannot be read.
pub(crate) fn rust_files(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    links: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    for p in entries {
        let kind = std::fs::symlink_metadata(&p)?.file_type();
        if kind.is_symlink() {
            links.push(p);
        } else if kind.is_dir() {
            rust_files(&p, out, links)?;
        } else if kind.is_file() && p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::module_of;
    use std::path::Path;

    #[test]
    fn module_paths() {
        let m = |p: &str| module_of(Path::new(p)).join("::");
        assert_eq!(m("lib.rs"), "");
        assert_eq!(m("main.rs"), "");
        assert_eq!(m("a.rs"), "a");
        assert_eq!(m("a/mod.rs"), "a");
        assert_eq!(m("a/b.rs"), "a::b");
        assert_eq!(m("a/main.rs"), "a::main");
    }
}
