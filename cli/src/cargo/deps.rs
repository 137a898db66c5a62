//! `--deps`: registry and git dependencies marked too. Each chosen
//! package is copied from cargo's sources to `<target-dir>/tickprof/deps/
//! NAME-VERSION`, marked with the members' rules (its lib target's files,
//! the same globs and skips), given a tickprof dependency, and put in
//! place of the original by a `[patch]` in a cargo configuration file
//! passed to every cargo command on the copy (`--config FILE`): the
//! user's manifests stay as they are, and the lock keeps the version.
//!
//! Never marked: workspace members (marked as such) and path packages,
//! proc-macro crates (they run in the compiler), packages without a lib,
//! and tickprof with everything it depends on (a mark there would depend
//! on itself).

use super::meta::{self, Package, Workspace};
use super::{copy, plan, Tally};
use crate::mark::Glob;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One dependency to mark.
pub(crate) struct Dep {
    package: Package,
    version: String,
    /// The `[patch]` table it goes in (`crates-io`, or the source's URL).
    patch: String,
}

/// The packages of the resolved graph `metadata` whose name matches one of
/// `globs` (the package's name or its lib's, `-` or `_`), marked or not.
pub(crate) fn choose(metadata: &Value, globs: &[Glob]) -> Vec<Dep> {
    if globs.is_empty() {
        return Vec::new();
    }
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let excluded = tickprof_closure(metadata);
    let mut out = Vec::new();
    for p in metadata["packages"].as_array().into_iter().flatten() {
        let (Some(id), Some(source), Some(version)) = (
            p["id"].as_str(),
            p["source"].as_str(),
            p["version"].as_str(),
        ) else {
            continue;
        };
        let Some(package) = meta::package(p) else {
            continue;
        };
        let lib = package
            .targets
            .iter()
            .find(|t| t.kinds.iter().any(|k| k.contains("lib")));
        let names = [package.name.clone(), package.name.replace('-', "_")];
        let wanted = globs.iter().any(|g| names.iter().any(|n| g.matches(n)));
        let Some(patch) = patch_table(source) else {
            continue;
        };
        if !wanted
            || members.contains(id)
            || excluded.contains(id)
            || package.is_proc_macro()
            || lib.is_none()
        {
            continue;
        }
        out.push(Dep {
            package,
            version: version.to_string(),
            patch,
        });
    }
    out.sort_by(|a, b| (&a.package.name, &a.version).cmp(&(&b.package.name, &b.version)));
    out
}

/// The ids of tickprof's packages and of everything they depend on.
fn tickprof_closure(metadata: &Value) -> BTreeSet<String> {
    let nodes: HashMap<&str, Vec<&str>> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let deps = n["deps"].as_array()?;
            let ids = deps.iter().filter_map(|d| d["pkg"].as_str()).collect();
            Some((n["id"].as_str()?, ids))
        })
        .collect();
    let mut todo: Vec<&str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            matches!(
                p["name"].as_str(),
                Some("tickprof" | "tickprof-runtime" | "tickprof-macros")
            )
        })
        .filter_map(|p| p["id"].as_str())
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(id) = todo.pop() {
        if seen.insert(id.to_string()) {
            todo.extend(nodes.get(id).into_iter().flatten().copied());
        }
    }
    seen
}

/// The `[patch]` table for a package from `source`: `crates-io` for
/// crates.io, the repository's URL for git; `None` for anything else.
fn patch_table(source: &str) -> Option<String> {
    if source == "registry+https://github.com/rust-lang/crates.io-index"
        || source == "sparse+https://index.crates.io/"
    {
        return Some("crates-io".into());
    }
    let url = source.strip_prefix("git+")?;
    Some(url.split(['?', '#']).next().unwrap_or(url).to_string())
}

/// Brings the marked copy of each of `deps` up to date under `dir/deps`,
/// and writes `dir/deps.toml`, the `[patch]` configuration that puts them
/// in place. Returns the `--config` arguments for cargo (none without
/// dependencies to mark).
///
/// # Errors
///
/// A copy that cannot be written.
pub(crate) fn sync(
    deps: &[Dep],
    dir: &Path,
    source: &super::manifest::Source,
    mark: &[Glob],
    skip: &[Glob],
    built: Option<&super::probe::Kept>,
    tally: &mut Tally,
) -> Result<Vec<String>, String> {
    let root = dir.join("deps");
    let config = dir.join("deps.toml");
    if deps.is_empty() {
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_file(&config);
        return Ok(Vec::new());
    }
    let mut doc = toml_edit::DocumentMut::new();
    let mut kept = BTreeSet::new();
    for dep in deps {
        let from = dep.package.dir().to_path_buf();
        let name = format!("{}-{}", dep.package.name, dep.version);
        let to = root.join(&name);
        kept.insert(name.clone());
        let ws = Workspace {
            root: from.clone(),
            target_dir: from.join("target"),
            members: vec![dep.package.clone()],
            default_members: Vec::new(),
        };
        let plan = plan::Plan::new(&ws, &[&dep.package], source, mark.to_vec(), skip.to_vec())
            .after_inlining(built);
        let exclude: [PathBuf; 2] = [from.join("target"), from.join(".git")];
        kept.insert(format!("{name}.cache"));
        let mut cache = super::cache::Cache::load(&root.join(format!("{name}.cache")), &plan.key());
        let mut marking = plan::Marking { plan: &plan, tally };
        copy::sync(&from, &to, &exclude, &[], &mut marking, &mut cache)
            .map_err(|e| format!("cannot copy {name} to {}: {e}", to.display()))?;
        let table = doc
            .entry("patch")
            .or_insert(toml_edit::table())
            .as_table_mut()
            .and_then(|t| {
                t.set_implicit(true);
                t.entry(&dep.patch)
                    .or_insert(toml_edit::table())
                    .as_table_mut()
            });
        if let Some(table) = table {
            let mut entry = toml_edit::InlineTable::new();
            entry.insert("path", to.to_string_lossy().as_ref().into());
            entry.insert("package", dep.package.name.as_str().into());
            table.insert(
                &format!("{}@{}", dep.package.name, dep.version),
                toml_edit::value(entry),
            );
        }
    }
    if let Ok(entries) = std::fs::read_dir(&root) {
        for e in entries.flatten() {
            if !kept.contains(&e.file_name().to_string_lossy().into_owned()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let text = doc.to_string();
    if std::fs::read_to_string(&config).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&config, &text).map_err(|e| format!("{}: {e}", config.display()))?;
    }
    Ok(vec![
        "--config".into(),
        config.to_string_lossy().into_owned(),
    ])
}

/// `--config` arguments that keep debug information (`limited`) for the
/// packages the report reads it of — the workspace's (cargo's `*` leaves
/// them alone) and the marked dependencies — and leave it out of every
/// other one (tickprof's runtime, its symboliser, dependencies not
/// marked), in each profile the command may build with, unless the
/// user's environment sets the profile's `debug`. What the report looks
/// up at exit is then the marked code's only: semver's workload read 414
/// compilation units (326 of them tickprof's and its symboliser's) and
/// 16 MB, now 50 units and 6.8 MB; a function of an unmarked package is
/// still named by its symbol.
pub(crate) fn debug_config(deps: &[Dep], profiles: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for p in profiles {
        let env = format!("CARGO_PROFILE_{}_DEBUG", p.to_uppercase().replace('-', "_"));
        if std::env::var_os(env).is_some() {
            continue;
        }
        out.push("--config".into());
        out.push(format!("profile.{p}.package.\"*\".debug=0"));
        for dep in deps {
            out.push("--config".into());
            out.push(format!(
                "profile.{p}.package.\"{}\".debug=\"limited\"",
                dep.package.name
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{debug_config, patch_table, Dep};
    use crate::cargo::meta::Package;

    #[test]
    fn debug_info_for_the_marked_packages_only_in_every_profile() {
        let dep = Dep {
            package: Package {
                name: "lz4-flex".into(),
                manifest: "/r/lz4-flex/Cargo.toml".into(),
                targets: Vec::new(),
            },
            version: "0.11.3".into(),
            patch: "crates-io".into(),
        };
        // A profile named in no environment variable here.
        let profiles = ["release".to_string(), "tp-test-no-env".to_string()];
        assert_eq!(
            debug_config(&[dep], &profiles),
            [
                "--config",
                "profile.release.package.\"*\".debug=0",
                "--config",
                "profile.release.package.\"lz4-flex\".debug=\"limited\"",
                "--config",
                "profile.tp-test-no-env.package.\"*\".debug=0",
                "--config",
                "profile.tp-test-no-env.package.\"lz4-flex\".debug=\"limited\"",
            ]
        );
        assert_eq!(debug_config(&[], &profiles[1..]).len(), 2);
    }

    #[test]
    fn patch_tables() {
        assert_eq!(
            patch_table("registry+https://github.com/rust-lang/crates.io-index").as_deref(),
            Some("crates-io")
        );
        assert_eq!(
            patch_table("sparse+https://index.crates.io/").as_deref(),
            Some("crates-io")
        );
        assert_eq!(
            patch_table("git+https://example.org/a/b?branch=x#0123").as_deref(),
            Some("https://example.org/a/b")
        );
        assert_eq!(patch_table("path+file:///x"), None);
    }
}
