//! The copy's graph, resolved against the user's lock: `cargo metadata`
//! on the copy; when cargo cannot select a version, only the packages it
//! names are updated, in the copy's lock, and the moves are said.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use toml_edit::{DocumentMut, Item};

/// How many packages may be updated, one `cargo update -p` each, before
/// giving up.
const MAX_UPDATES: usize = 12;

/// The copy's resolved graph and what moved to get it.
pub(crate) struct Resolved {
    /// `cargo metadata` of the copy (with dependencies).
    pub(crate) metadata: Value,
    /// Packages of the user's lock at another version in the copy's:
    /// (name, from, to), sorted.
    pub(crate) moved: Vec<(String, String, String)>,
}

/// Resolves the copy at `manifest`, whose lock is `lock` (already seeded
/// from `user`, the user's lock text, plus tickprof's own versions).
/// The graph read is the one of the build's `platforms` (its target
/// triples): `cargo metadata` without a filter downloads every package of
/// every platform, which fails offline on a fresh machine and fetches
/// crates the build never compiles.
///
/// When that does not resolve, tickprof's versions give way first: the
/// lock is seeded from the user's alone and cargo picks versions of
/// tickprof's dependencies that fit it (nothing of the user's moves).
/// When that does not resolve either, the packages cargo names are
/// unlocked, together, in one `cargo update -p A -p B …`, and each error
/// of that update adds the packages it names, up to [`MAX_UPDATES`].
///
/// # Errors
///
/// Cargo's last error when no update of the packages it named helps.
pub(crate) fn resolve(
    cargo: &Path,
    manifest: &Path,
    lock: &Path,
    config: &[String],
    user: Option<&str>,
    platforms: &[String],
) -> Result<Resolved, String> {
    let metadata = |()| {
        let mut cmd = Command::new(cargo);
        cmd.args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(manifest)
            .args(config);
        for p in platforms {
            cmd.args(["--filter-platform", p]);
        }
        cmd.output()
            .map_err(|e| format!("cannot run {}: {e}", cargo.display()))
    };
    let done = |out: &std::process::Output| -> Result<Resolved, String> {
        let metadata: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("cannot read `cargo metadata` output: {e}"))?;
        let copy = std::fs::read_to_string(lock).unwrap_or_default();
        let moved = user.map_or_else(Vec::new, |u| moves(u, &copy));
        Ok(Resolved { metadata, moved })
    };
    let out = metadata(())?;
    if out.status.success() {
        return done(&out);
    }
    let mut err = String::from_utf8_lossy(&out.stderr).into_owned();
    if let Some(user) = user {
        std::fs::write(lock, user).map_err(|e| format!("{}: {e}", lock.display()))?;
        let out = metadata(())?;
        if out.status.success() {
            return done(&out);
        }
        err = String::from_utf8_lossy(&out.stderr).into_owned();
    }
    let mut unlocked: Vec<String> = Vec::new();
    loop {
        let new: Vec<String> = conflicting(&err)
            .into_iter()
            .filter(|p| !unlocked.contains(p))
            .collect();
        if new.is_empty() || unlocked.len() >= MAX_UPDATES {
            eprint!("{err}");
            return Err(format!(
                "the marked copy does not resolve against the lock{} (cargo's error above)",
                if unlocked.is_empty() {
                    String::new()
                } else {
                    format!(" even with {} updated", unlocked.join(", "))
                }
            ));
        }
        unlocked.extend(new);
        let out = update(cargo, manifest, lock, config, &unlocked)?;
        if out.status.success() {
            let out = metadata(())?;
            if out.status.success() {
                return done(&out);
            }
            err = String::from_utf8_lossy(&out.stderr).into_owned();
        } else {
            err = String::from_utf8_lossy(&out.stderr).into_owned();
        }
    }
}

/// `cargo update -p NAME …` in the copy, each NAME as `NAME@VERSION` when
/// the lock holds several versions of it.
fn update(
    cargo: &Path,
    manifest: &Path,
    lock: &Path,
    config: &[String],
    names: &[String],
) -> Result<std::process::Output, String> {
    let locked = versions(&std::fs::read_to_string(lock).unwrap_or_default());
    let mut cmd = Command::new(cargo);
    cmd.args(["update", "--quiet", "--manifest-path"])
        .arg(manifest)
        .args(config);
    for name in names {
        match locked.get(name).map(Vec::as_slice) {
            Some([_, _, ..]) => {
                for v in &locked[name] {
                    cmd.args(["-p", &format!("{name}@{v}")]);
                }
            }
            _ => {
                cmd.args(["-p", name]);
            }
        }
    }
    cmd.output()
        .map_err(|e| format!("cannot run {}: {e}", cargo.display()))
}

/// The packages cargo's resolution error names as the ones it could not
/// select (`failed to select a version for `X``, `… for the requirement
/// `X = "…"``) and the locked ones they conflict with (`previously
/// selected package `X v1.2.3``), in that order.
pub(crate) fn conflicting(err: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        let name = name.trim();
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    };
    for line in err.lines() {
        for (marker, end) in [
            ("previously selected package `", ' '),
            ("failed to select a version for the requirement `", ' '),
            ("failed to select a version for `", '`'),
        ] {
            if let Some(rest) = line.split(marker).nth(1) {
                push(rest.split([end, '`']).next().unwrap_or(""));
            }
        }
    }
    // The locked package that blocks is the one to move: first.
    if let Some(i) = err
        .lines()
        .find_map(|l| l.split("previously selected package `").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|name| out.iter().position(|n| n == name))
    {
        let blocker = out.remove(i);
        out.insert(0, blocker);
    }
    out
}

/// Name → versions of the registry and git packages of a lock.
fn versions(lock: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(doc) = lock.parse::<DocumentMut>() else {
        return out;
    };
    let Some(pkgs) = doc.get("package").and_then(Item::as_array_of_tables) else {
        return out;
    };
    for p in pkgs {
        let get = |k: &str| p.get(k).and_then(Item::as_str);
        if let (Some(name), Some(version), Some(_)) = (get("name"), get("version"), get("source")) {
            out.entry(name.to_string())
                .or_default()
                .push(version.to_string());
        }
    }
    out
}

/// The packages of `user` (a lock) whose versions differ in `copy`:
/// (name, from, to); several versions of one name are joined with `, `.
pub(crate) fn moves(user: &str, copy: &str) -> Vec<(String, String, String)> {
    let (before, after) = (versions(user), versions(copy));
    let mut out = Vec::new();
    for (name, mut from) in before {
        let Some(mut to) = after.get(&name).cloned() else {
            continue;
        };
        from.sort();
        to.sort();
        let kept: Vec<String> = from.iter().filter(|v| to.contains(v)).cloned().collect();
        from.retain(|v| !kept.contains(v));
        to.retain(|v| !kept.contains(v));
        if !from.is_empty() && !to.is_empty() {
            out.push((name, from.join(", "), to.join(", ")));
        }
    }
    out
}

/// The target triples the build compiles for: each `--target T` (or
/// `--target=T`) of `cargo_args`, else the host of the `rustc` cargo runs
/// (`RUSTC`, else `rustc`), else none (then the graph is read whole).
pub(crate) fn platforms(cargo_args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = cargo_args.iter();
    while let Some(a) = it.next() {
        if a == "--target" {
            out.extend(it.next().cloned());
        } else if let Some(t) = a.strip_prefix("--target=") {
            out.push(t.to_string());
        }
    }
    if out.is_empty() {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        if let Ok(o) = Command::new(rustc).arg("-vV").output() {
            let text = String::from_utf8_lossy(&o.stdout);
            out.extend(
                text.lines()
                    .find_map(|l| l.strip_prefix("host: "))
                    .map(|h| h.trim().to_string()),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{conflicting, moves, platforms};

    #[test]
    fn names_the_conflicting_packages() {
        let err = "error: failed to select a version for `proc-macro2`.\n    \
                   ... required by package `syn v3.0.9`\n\
                   all possible versions conflict with previously selected packages.\n\n  \
                   previously selected package `proc-macro2 v1.0.88`\n";
        assert_eq!(conflicting(err), ["proc-macro2"]);
        let err = "error: failed to select a version for the requirement `syn = \"^2.0.46\"`\n\
                   candidate versions found which didn't match: 2.0.20\n";
        assert_eq!(conflicting(err), ["syn"]);
        assert!(conflicting("error: no such file").is_empty());
    }

    #[test]
    fn lists_what_moved() {
        let pkg = |n: &str, v: &str| {
            format!("[[package]]\nname = \"{n}\"\nversion = \"{v}\"\nsource = \"registry+x\"\n\n")
        };
        let user = [
            pkg("syn", "1.0.0"),
            pkg("syn", "2.0.50"),
            pkg("quote", "1.0.30"),
            pkg("gone", "1.0.0"),
            "[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n".into(),
        ]
        .concat();
        let copy = [
            pkg("syn", "1.0.0"),
            pkg("syn", "2.0.119"),
            pkg("quote", "1.0.30"),
            pkg("added", "1.0.0"),
        ]
        .concat();
        assert_eq!(
            moves(&user, &copy),
            [(
                "syn".to_string(),
                "2.0.50".to_string(),
                "2.0.119".to_string()
            )]
        );
    }

    #[test]
    fn platforms_are_the_targets_asked_for_else_the_host() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            platforms(&args(&["--release", "--target", "a-b-c", "--target=d-e-f"])),
            ["a-b-c", "d-e-f"]
        );
        let host = platforms(&args(&["--release"]));
        assert_eq!(host.len(), 1, "{host:?}");
        assert!(host[0].contains('-'), "{host:?}");
    }
}
