//! The edits a copied `Cargo.toml` (and the copy's `Cargo.lock`) gets.
//!
//! With `toml_edit`, which keeps the rest of the manifest as written
//! (comments, order, formatting): the copy stays readable next to the
//! user's, and an edit touches only the keys it names.

use std::path::{Component, Path, PathBuf};
use toml_edit::{value, DocumentMut, InlineTable, Item, Table, TableLike};

/// Where the marked members get tickprof from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A tickprof checkout (a path dependency).
    Path(PathBuf),
    /// The published version this command belongs to.
    Version(String),
}

/// What to do to one copied manifest.
pub(crate) struct Edit<'a> {
    /// The original manifest's directory (relative paths resolve from it).
    pub(crate) dir: &'a Path,
    /// The workspace root: paths that leave it are made absolute.
    pub(crate) root: &'a Path,
    /// Whether this is the copy's root manifest (gets a `[workspace]`).
    pub(crate) is_root: bool,
    /// Where tickprof comes from: every tickprof dependency is pointed
    /// there, so one tickprof is linked.
    pub(crate) tickprof: &'a Source,
    /// A marked member: gets a tickprof dependency if it has none.
    pub(crate) marked: bool,
}

/// The dependency tables of a manifest: `[dependencies]`,
/// `[dev-dependencies]`, `[build-dependencies]`, the same under
/// `[target.'cfg'.…]`, `[workspace.dependencies]`, each `[patch.<source>]`
/// and `[replace]`. The first is `[dependencies]` when present.
fn dependency_tables(doc: &mut DocumentMut) -> Vec<&mut dyn TableLike> {
    const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut out: Vec<&mut dyn TableLike> = Vec::new();
    for (key, item) in doc.as_table_mut().iter_mut() {
        let Some(table) = item.as_table_like_mut() else {
            continue;
        };
        match key.get() {
            k if KINDS.contains(&k) => out.push(table),
            "replace" => out.push(table),
            "patch" => out.extend(table.iter_mut().filter_map(|(_, t)| t.as_table_like_mut())),
            "workspace" => out.extend(
                table
                    .iter_mut()
                    .filter(|(k, _)| k.get() == "dependencies")
                    .filter_map(|(_, t)| t.as_table_like_mut()),
            ),
            "target" => {
                for (_, cfg) in table.iter_mut() {
                    if let Some(cfg) = cfg.as_table_like_mut() {
                        out.extend(
                            cfg.iter_mut()
                                .filter(|(k, _)| KINDS.contains(&k.get()))
                                .filter_map(|(_, t)| t.as_table_like_mut()),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether `path` (relative to `dir`) leaves `root`.
fn leaves(dir: &Path, path: &str, root: &Path) -> Option<PathBuf> {
    let p = Path::new(path);
    if p.is_absolute() {
        return None;
    }
    let mut abs = dir.to_path_buf();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                abs.pop();
            }
            Component::Normal(n) => abs.push(n),
            _ => {}
        }
    }
    (!abs.starts_with(root)).then_some(abs)
}

/// Applies `edit` to the text of a manifest.
///
/// # Errors
///
/// A manifest that does not parse as TOML.
pub(crate) fn edit(text: &str, edit: &Edit<'_>) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    let mut found = false;
    for table in dependency_tables(&mut doc) {
        for (key, dep) in table.iter_mut() {
            if let Some(t) = dep.as_table_like_mut() {
                let path = t.get("path").and_then(Item::as_str).map(String::from);
                if let Some(abs) = path.and_then(|p| leaves(edit.dir, &p, edit.root)) {
                    t.insert("path", value(abs.to_string_lossy().as_ref()));
                }
            }
            found |= point_at_tickprof(key.get(), dep, edit.tickprof);
        }
    }
    if edit.is_root && !doc.contains_key("workspace") {
        doc.insert("workspace", Item::Table(Table::new()));
    }
    if edit.marked && !found {
        let deps = doc
            .entry("dependencies")
            .or_insert(Item::Table(Table::new()));
        if let Some(deps) = deps.as_table_like_mut() {
            let mut t = InlineTable::new();
            set_source(&mut t, edit.tickprof);
            let mut features = toml_edit::Array::new();
            features.push("inlined");
            t.insert("features", toml_edit::Value::Array(features));
            deps.insert("tickprof", value(t));
        }
    }
    Ok(doc.to_string())
}

/// If `dep` (named `key`) is tickprof, makes it come from `source`, with
/// the `enabled` and `inlined` features (the rows of the functions
/// inlined into the marked ones: program-counter samples on Linux, none
/// elsewhere), and says so. An entry inheriting from
/// `[workspace.dependencies]` keeps inheriting (that entry is edited).
fn point_at_tickprof(key: &str, dep: &mut Item, source: &Source) -> bool {
    let package = dep
        .as_table_like()
        .and_then(|t| t.get("package"))
        .and_then(Item::as_str);
    if package.map_or(key != "tickprof", |p| p != "tickprof") {
        return false;
    }
    if dep.is_str() {
        *dep = value(InlineTable::new());
    }
    let Some(t) = dep.as_table_like_mut() else {
        return false;
    };
    if t.get("workspace").and_then(Item::as_bool) != Some(true) {
        for k in ["version", "git", "branch", "tag", "rev", "registry", "path"] {
            t.remove(k);
        }
        set_source(t, source);
    }
    let mut features = t
        .get("features")
        .and_then(Item::as_array)
        .cloned()
        .unwrap_or_default();
    for f in ["enabled", "inlined"] {
        if !features.iter().any(|x| x.as_str() == Some(f)) {
            features.push(f);
        }
    }
    t.insert("features", value(features));
    t.fmt();
    true
}

fn set_source(t: &mut dyn TableLike, source: &Source) {
    match source {
        Source::Path(p) => t.insert("path", value(p.to_string_lossy().as_ref())),
        Source::Version(v) => t.insert("version", value(format!("={v}"))),
    };
}

/// The name a member's code knows tickprof by: the key of its tickprof
/// dependency (`tickprof` unless renamed).
pub(crate) fn dependency_name(manifest: &str) -> String {
    let Ok(doc) = manifest.parse::<DocumentMut>() else {
        return "tickprof".into();
    };
    let deps = doc.get("dependencies").and_then(Item::as_table_like);
    deps.and_then(|deps| {
        deps.iter().find_map(|(k, v)| {
            let package = v.as_table_like()?.get("package")?.as_str()?;
            (package == "tickprof").then(|| k.to_string())
        })
    })
    .unwrap_or_else(|| "tickprof".into())
}

/// The copy's lock file: the user's (if any) plus the registry packages of
/// tickprof's own lock that it lacks, so that tickprof's dependencies
/// resolve to the versions tickprof was tested with, without a download.
pub(crate) fn seed_lock(user: Option<&str>, tickprof: Option<&str>) -> Option<String> {
    let mut doc: DocumentMut = match user {
        Some(u) => u.parse().ok()?,
        None => "version = 4\n".parse().ok()?,
    };
    let theirs: Option<DocumentMut> = tickprof.and_then(|t| t.parse().ok());
    let Some(theirs) = theirs else {
        return user.map(String::from);
    };
    // A package from tickprof's lock is added when the user's lock has
    // no version of it at all: the user's versions win, and a locked
    // version of another major (getrandom 0.3 beside the user's 0.4)
    // cannot draw a requirement that spans both majors (tempfile's
    // `>=0.3, <0.5`) away from the user's.
    let key = |t: &Table| {
        let get = |k: &str| t.get(k).and_then(Item::as_str).unwrap_or("").to_string();
        (get("name"), compatible(&get("version")), get("source"))
    };
    let mut have: Vec<_> = doc
        .get("package")
        .and_then(Item::as_array_of_tables)
        .map(|a| a.iter().map(key).collect())
        .unwrap_or_default();
    let mut add = Vec::new();
    if let Some(pkgs) = theirs.get("package").and_then(Item::as_array_of_tables) {
        for p in pkgs {
            let k = key(p);
            if !k.2.is_empty() && !have.iter().any(|h| h.0 == k.0) {
                have.push(k);
                add.push(p.clone());
            }
        }
    }
    let pkgs = doc
        .entry("package")
        .or_insert(Item::ArrayOfTables(toml_edit::ArrayOfTables::new()));
    if let Some(pkgs) = pkgs.as_array_of_tables_mut() {
        for p in add {
            pkgs.push(p);
        }
    }
    Some(doc.to_string())
}

/// The semver-compatible range of a version: `1.2.3` → `1`, `0.2.3` →
/// `0.2`, `0.0.3` → `0.0.3`.
fn compatible(version: &str) -> String {
    let core = version.split(['-', '+']).next().unwrap_or(version);
    let parts: Vec<&str> = core.split('.').collect();
    let upto = match parts.as_slice() {
        [major, ..] if *major != "0" => 1,
        [_, minor, ..] if *minor != "0" => 2,
        _ => 3,
    };
    parts[..upto.min(parts.len())].join(".")
}

#[cfg(test)]
mod tests {
    use super::{compatible, dependency_name, edit, seed_lock, Edit, Source};
    use std::path::Path;

    #[test]
    fn edits() {
        let src = "[package]\nname = \"a\" # kept\n\n[dependencies]\nb = { path = \"../b\" }\n\
                   out = { path = \"../../out\" }\ntickprof = { version = \"0.1\", default-features = false }\n\
                   [target.'cfg(unix)'.dev-dependencies]\nz = { path = \"../../z\" }\n";
        let tp = Source::Path("/tp".into());
        let e = Edit {
            dir: Path::new("/ws/a"),
            root: Path::new("/ws"),
            is_root: false,
            tickprof: &tp,
            marked: true,
        };
        let out = edit(src, &e).unwrap();
        assert!(out.contains("name = \"a\" # kept"), "{out}");
        assert!(out.contains("b = { path = \"../b\" }"), "{out}");
        assert!(out.contains("out = { path = \"/out\" }"), "{out}");
        assert!(out.contains("z = { path = \"/z\" }"), "{out}");
        assert!(
            out.contains(
                "tickprof = { default-features = false, path = \"/tp\", features = [\"enabled\", \"inlined\"] }"
            ),
            "{out}"
        );
        assert!(!out.contains("[workspace]"));
        let e = Edit {
            dir: Path::new("/ws"),
            root: Path::new("/ws"),
            is_root: true,
            tickprof: &tp,
            marked: true,
        };
        let out = edit("[package]\nname = \"r\"\n", &e).unwrap();
        assert!(
            out.contains("[dependencies]\ntickprof = { path = \"/tp\", features = [\"inlined\"] }"),
            "{out}"
        );
        assert!(out.contains("[workspace]"), "{out}");
        assert_eq!(
            dependency_name("[dependencies]\ntp = { package = \"tickprof\", version = \"1\" }\n"),
            "tp"
        );
        assert_eq!(dependency_name("[dependencies]\n"), "tickprof");
    }

    #[test]
    fn lock_seed() {
        let user = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n";
        let tp = "version = 4\n\n[[package]]\nname = \"libc\"\nversion = \"0.2.1\"\n\
                  source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n\
                  [[package]]\nname = \"tickprof\"\nversion = \"0.1.0\"\n";
        let out = seed_lock(Some(user), Some(tp)).unwrap();
        assert_eq!(out.matches("[[package]]").count(), 2, "{out}");
        assert!(out.contains("name = \"libc\""));
        assert_eq!(seed_lock(Some(&out), Some(tp)).unwrap(), out);
        // The user's libc 0.2.9 wins over tickprof's 0.2.1.
        let user =
            format!("{user}\n[[package]]\nname = \"libc\"\nversion = \"0.2.9\"\nsource = \"x\"\n");
        assert_eq!(
            seed_lock(Some(&user), Some(tp))
                .unwrap()
                .matches("name = \"libc\"")
                .count(),
            1
        );
        assert_eq!(
            ["1.2.3", "0.2.3", "0.0.3", "3.0.10-rc"].map(compatible),
            ["1", "0.2", "0.0.3", "3"]
        );
    }
}
