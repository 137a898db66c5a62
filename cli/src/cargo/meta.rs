//! What `cargo metadata` says about the workspace, and which members the
//! command marks.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One target of a package (lib, bin, example, test, bench, build script).
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// Its kinds (`lib`, `bin`, `proc-macro`, `custom-build`, …).
    pub(crate) kinds: Vec<String>,
    /// Its crate name (`-` replaced by `_`).
    pub(crate) name: String,
    /// Its root file.
    pub(crate) src_path: PathBuf,
    /// Its edition.
    pub(crate) edition: String,
}

/// One workspace member.
#[derive(Clone, Debug)]
pub(crate) struct Package {
    /// Its name.
    pub(crate) name: String,
    /// Its `Cargo.toml`.
    pub(crate) manifest: PathBuf,
    /// Its targets.
    pub(crate) targets: Vec<Target>,
}

impl Package {
    /// Its directory.
    pub(crate) fn dir(&self) -> &Path {
        self.manifest.parent().unwrap_or(Path::new("/"))
    }

    /// Whether it is a proc-macro crate (never marked).
    pub(crate) fn is_proc_macro(&self) -> bool {
        self.targets
            .iter()
            .any(|t| t.kinds.iter().any(|k| k == "proc-macro"))
    }
}

/// The workspace.
#[derive(Clone, Debug)]
pub(crate) struct Workspace {
    /// Its root directory.
    pub(crate) root: PathBuf,
    /// Cargo's target directory for it.
    pub(crate) target_dir: PathBuf,
    /// Its members.
    pub(crate) members: Vec<Package>,
    /// The names of its default members.
    pub(crate) default_members: Vec<String>,
}

/// Runs `cargo metadata --no-deps` for `manifest`.
///
/// # Errors
///
/// Cargo's failure (its stderr was shown), or output that does not read.
pub(crate) fn load(cargo: &Path, manifest: &Path) -> Result<Workspace, String> {
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cargo.display()))?;
    if !out.status.success() {
        return Err(format!("`cargo metadata` failed ({})", out.status));
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cannot read `cargo metadata` output: {e}"))?;
    parse(&v).ok_or_else(|| "unexpected `cargo metadata` output".to_string())
}

fn parse(v: &Value) -> Option<Workspace> {
    let ids = |key: &str| -> Option<Vec<&str>> {
        v.get(key)?.as_array()?.iter().map(Value::as_str).collect()
    };
    let member_ids = ids("workspace_members")?;
    let mut members = Vec::new();
    let mut id_names = Vec::new();
    for p in v.get("packages")?.as_array()? {
        let id = p.get("id")?.as_str()?;
        if !member_ids.contains(&id) {
            continue;
        }
        let package = package(p)?;
        id_names.push((id, package.name.clone()));
        members.push(package);
    }
    let defaults = ids("workspace_default_members").unwrap_or_else(|| member_ids.clone());
    Some(Workspace {
        root: v.get("workspace_root")?.as_str()?.into(),
        target_dir: v.get("target_directory")?.as_str()?.into(),
        default_members: id_names
            .iter()
            .filter(|(id, _)| defaults.contains(id))
            .map(|(_, n)| n.clone())
            .collect(),
        members,
    })
}

/// One package of `cargo metadata`'s `packages`.
pub(crate) fn package(p: &Value) -> Option<Package> {
    let mut targets = Vec::new();
    for t in p.get("targets")?.as_array()? {
        targets.push(Target {
            kinds: t
                .get("kind")?
                .as_array()?
                .iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect(),
            name: t.get("name")?.as_str()?.replace('-', "_"),
            src_path: t.get("src_path")?.as_str()?.into(),
            edition: t.get("edition")?.as_str()?.to_string(),
        });
    }
    Some(Package {
        name: p.get("name")?.as_str()?.to_string(),
        manifest: p.get("manifest_path")?.as_str()?.into(),
        targets,
    })
}

/// The manifest cargo would use: `--manifest-path`, else the nearest
/// `Cargo.toml` from the current directory up.
///
/// # Errors
///
/// No `Cargo.toml` found.
pub(crate) fn locate(manifest_path: Option<&Path>) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    if let Some(p) = manifest_path {
        return std::fs::canonicalize(cwd.join(p))
            .map_err(|e| format!("--manifest-path {}: {e}", p.display()));
    }
    cwd.ancestors()
        .map(|d| d.join("Cargo.toml"))
        .find(|m| m.is_file())
        .ok_or_else(|| {
            format!(
                "could not find Cargo.toml in {} or any parent directory",
                cwd.display()
            )
        })
}

/// The members to mark, as cargo would select packages to build:
/// `-p` (names or globs), `--workspace`, the package of `manifest` when it
/// is a member other than the root, else the default members. Proc-macro
/// members are never marked.
///
/// # Errors
///
/// A `-p` that names no member.
pub(crate) fn select<'w>(
    ws: &'w Workspace,
    manifest: &Path,
    packages: &[String],
    workspace: bool,
) -> Result<Vec<&'w Package>, String> {
    let chosen: Vec<&Package> = if !packages.is_empty() {
        let mut out = Vec::new();
        for spec in packages {
            let name = spec.split(['@', ':']).next().unwrap_or(spec);
            let glob = crate::mark::Glob::new(name);
            let found: Vec<_> = ws
                .members
                .iter()
                .filter(|p| glob.matches(&p.name))
                .collect();
            if found.is_empty() {
                return Err(format!("package `{spec}` is not a member of the workspace"));
            }
            out.extend(found);
        }
        out
    } else if workspace {
        ws.members.iter().collect()
    } else if let Some(p) = ws
        .members
        .iter()
        .find(|p| p.manifest == manifest && p.dir() != ws.root)
    {
        vec![p]
    } else {
        ws.members
            .iter()
            .filter(|p| ws.default_members.contains(&p.name))
            .collect()
    };
    let mut chosen: Vec<&Package> = chosen.into_iter().filter(|p| !p.is_proc_macro()).collect();
    chosen.sort_by(|a, b| a.name.cmp(&b.name));
    chosen.dedup_by(|a, b| a.name == b.name);
    Ok(chosen)
}
