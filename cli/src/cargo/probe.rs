//! Marks after inlining: the probe build. Before the marked copy is
//! built, the user's program is built unmarked by the same cargo command
//! (`build` for `run`, `test --no-run`, `bench --no-run`) with the same
//! options (profile, target, features, packages), from a plain copy of
//! the workspace (`<target-dir>/tickprof/plain`: nothing marked, the
//! marked copy's lock) into `<target-dir>/tickprof/probe`, with debug info of
//! every profile set to `limited` (functions' declarations, no types:
//! debug info does not change the code rustc makes) and never stripped.
//! Every program it links is read ([`dwarf`]): the functions with code of
//! their own are the ones marked.
//!
//! Cargo's freshness is the cache: with the sources unchanged the probe
//! rebuilds nothing, and reading a program's debug info takes tens of
//! milliseconds (pulldown-cmark's: 30 ms), so it is read every time.

pub(crate) mod dwarf;

use super::args::Action;
use super::meta::Workspace;
use super::{cache, child, copy, manifest::Source, plan, Tally};
use crate::mark::Built;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The smallest out-of-line copy (in bytes of code) of a function also
/// inlined elsewhere that is marked. A mark is a call the optimiser no
/// longer inlines, so marking a function turns every call of it into a
/// call, those it had inlined too: worth it for a large function (a
/// call is little next to its body), not for a small one, which is left
/// inlined everywhere. On pulldown-cmark 0.12.2 22 functions are both
/// kept and inlined, 21 of them under 200 bytes (accessors, `TreeIndex`
/// arithmetic, 640,000 calls of `TreeIndex::new` in the test input):
/// marking them took the program with `TICKPROF=off` from 1.30 to 1.62
/// times the unmarked time (cli/README.md, "After inlining").
const MIN_SPLIT_BYTES: u64 = 200;

/// The smallest kept function (in bytes of code, its largest copy) that
/// is marked unless `--min-bytes` says otherwise: below, a mark's cost is
/// large next to the body's (LLVM XRay leaves functions under 200
/// machine instructions without a loop uninstrumented). Such a function's
/// time is its caller's, and the program-counter samples show it beneath
/// the caller, as an `(unmarked)` row. Measured on
/// scripts/workloads/lookup (three kept functions of 15 to 20 bytes, 50 M
/// calls): marked, 4.6 times the unmarked CPU time (2.1 with
/// `TICKPROF=off`: the call alone, no recording); left unmarked at 32,
/// 1.09 times, their time on `(unmarked)` rows. 32 bytes is about eight
/// instructions, fewer than a counted mark's own.
pub(crate) const MIN_BYTES: u64 = 32;

/// What the probe build found.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Each source file's functions as the build has them (the user's
    /// paths; a dependency's, cargo's copy of it).
    files: HashMap<PathBuf, Vec<Built>>,
    /// Packages (target name, the user's directory) compiled without
    /// debug info this reads (a profile's per-package setting, or a
    /// build-time dependency's): every function of theirs is marked.
    blind: Vec<(String, PathBuf)>,
    /// The names of those [`Kept::file`] was asked about: the marked ones.
    asked: RefCell<BTreeSet<String>>,
}

impl Kept {
    /// The functions of the file at `path`, of the package in `package`,
    /// as the build has them; `None` when that package was built blind.
    pub(crate) fn file(&self, package: &Path, path: &Path) -> Option<Vec<Built>> {
        if let Some((name, _)) = self.blind.iter().find(|(_, dir)| dir == package) {
            self.asked.borrow_mut().insert(name.clone());
            return None;
        }
        Some(self.files.get(path).cloned().unwrap_or_default())
    }

    /// The marked packages built without debug info to read, so marked
    /// whole.
    pub(crate) fn blind(&self) -> Vec<String> {
        self.asked.borrow().iter().cloned().collect()
    }
}

/// How the probe ended.
pub(crate) enum Outcome {
    /// The functions each file keeps.
    Kept(Kept),
    /// Nothing to read (why): every function is marked.
    Blind(String),
    /// The unmarked build failed with this exit code.
    Failed(u8),
}

/// The command and places of one probe.
pub(crate) struct Request<'a> {
    /// Cargo.
    pub(crate) cargo: &'a Path,
    /// The user's workspace.
    pub(crate) ws: &'a Workspace,
    /// The user's manifest (`--manifest-path`, or found).
    pub(crate) manifest: &'a Path,
    /// `<target-dir>/tickprof`.
    pub(crate) dir: &'a Path,
    /// What the copy leaves out (the target directories, `.git`).
    pub(crate) exclude: &'a [PathBuf],
    /// Where marks get tickprof from (a hand-marked crate's tickprof
    /// dependency is pointed there, as in the marked copy).
    pub(crate) source: &'a Source,
    /// The subcommand.
    pub(crate) action: Action,
    /// The options for cargo.
    pub(crate) cargo_args: &'a [String],
    /// `--min-bytes`: a kept function whose code is smaller is left
    /// unmarked.
    pub(crate) min_bytes: u64,
    /// `--once-bytes`: a kept function holding an inlined function of
    /// this size emits its body once.
    pub(crate) once_bytes: u64,
}

/// Builds the user's program unmarked and reads which functions it keeps.
///
/// # Errors
///
/// The plain copy cannot be written, or cargo cannot be started.
pub(crate) fn probe(r: &Request<'_>) -> Result<Outcome, String> {
    let plain = r.dir.join("plain");
    let plan = plan::Plan::new(r.ws, &[], r.source, Vec::new(), Vec::new());
    let mut tally = Tally::default();
    let mut cache = cache::Cache::load(&r.dir.join("plain.cache"), &plan.key());
    let mut transform = plan::Marking {
        plan: &plan,
        tally: &mut tally,
    };
    copy::sync(
        &r.ws.root,
        &plain,
        r.exclude,
        &["Cargo.lock"],
        &mut transform,
        &mut cache,
    )
    .map_err(|e| {
        format!(
            "cannot update the unmarked copy in {}: {e}",
            plain.display()
        )
    })?;
    // The marked copy's lock (the user's, seeded with tickprof's versions
    // where it has none, as cargo last left it), so that both builds
    // resolve the same versions; copied when it changed (cargo then drops
    // what the plain copy does not use).
    let (lock, record) = (r.dir.join("ws/Cargo.lock"), r.dir.join("plain-lock-seed"));
    if let Ok(text) = std::fs::read(&lock) {
        let to = plain.join("Cargo.lock");
        if std::fs::read(&record).ok().as_deref() != Some(&text[..]) || !to.is_file() {
            for p in [&to, &record] {
                std::fs::write(p, &text).map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
    }
    let rel = r
        .manifest
        .strip_prefix(&r.ws.root)
        .unwrap_or(Path::new("Cargo.toml"));
    let target = r.dir.join("probe");
    let mut cmd = command(r, &plain.join(rel), &target);
    eprintln!(
        "cargo tickprof: building the unmarked program (in {}) to see which functions the optimiser keeps",
        target.display()
    );
    let (code, out) = child::capture(&mut cmd)?;
    let built = Messages::read(&out);
    for e in &built.errors {
        eprint!("{e}");
    }
    if code != 0 {
        return Ok(Outcome::Failed(code));
    }
    if built.programs.is_empty() {
        return Ok(Outcome::Blind(
            "the command links no program to read (a library alone)".into(),
        ));
    }
    // The compiled packages' files, as cargo names them and links resolved.
    let mut dirs: Vec<PathBuf> = built.packages.iter().map(|p| p.1.clone()).collect();
    dirs.extend(
        dirs.clone()
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok()),
    );
    let wanted = |p: &Path| dirs.iter().any(|d| p.starts_with(d));
    let (mut kept, mut inlined) = (BTreeMap::new(), BTreeSet::new());
    let mut holds: BTreeMap<dwarf::Decl, u64> = BTreeMap::new();
    for program in &built.programs {
        match dwarf::read(program, &wanted) {
            // None at all, though cargo gave some: something else took
            // it out (`-C debuginfo=0` in RUSTFLAGS, a split-off file).
            Ok(seen) if seen.units == 0 && built.packages.iter().all(|p| p.2) => {
                return Ok(Outcome::Blind(format!(
                    "{} has no debug info",
                    program.display()
                )))
            }
            Ok(seen) => {
                for (d, size) in seen.kept {
                    let largest = kept.entry(d).or_default();
                    *largest = size.max(*largest);
                }
                inlined.extend(seen.inlined);
                for (d, size) in seen.holds {
                    let largest = holds.entry(d).or_default();
                    *largest = size.max(*largest);
                }
            }
            Err(e) => return Ok(Outcome::Blind(format!("cannot read {e}"))),
        }
    }
    // A declaration's file as the rewriter sees it: links resolved (a
    // module reached through a link is the file the copy rewrites), the
    // plain copy's path made the user's.
    let canonical = std::fs::canonicalize(&plain).unwrap_or_else(|_| plain.clone());
    let user = |p: &Path| -> PathBuf {
        let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        for from in [&canonical, &plain] {
            if let Ok(rest) = real.strip_prefix(from) {
                return r.ws.root.join(rest);
            }
        }
        real
    };
    let mut files: HashMap<PathBuf, Vec<Built>> = HashMap::new();
    let mut paths: HashMap<&Path, PathBuf> = HashMap::new();
    let only_inlined = inlined
        .iter()
        .filter(|d| !kept.contains_key(*d))
        .map(|d| (d, false));
    // Inlined at some calls and kept for others: marked (the mark makes
    // every call a call) only when large.
    // Small: under `--min-bytes` (XRay's instruction threshold).
    // Holding a large inlined function: the body once (`--once-bytes`,
    // `mark::ONCE_BYTES`).
    let kept = kept.iter().map(|(d, size)| {
        let is_kept = !inlined.contains(d) || *size >= MIN_SPLIT_BYTES;
        let once = r.once_bytes == 0 || holds.get(d).is_some_and(|&h| h >= r.once_bytes);
        (d, is_kept, is_kept && *size < r.min_bytes, once)
    });
    let only_inlined = only_inlined.map(|(d, k)| (d, k, false, false));
    for (d, is_kept, small, once) in only_inlined.chain(kept) {
        let path = paths.entry(&d.file).or_insert_with(|| user(&d.file));
        files.entry(path.clone()).or_default().push(Built {
            line: d.line,
            name: d.name.clone(),
            kept: is_kept,
            small,
            once,
        });
    }
    for list in files.values_mut() {
        list.sort();
    }
    let blind = built
        .packages
        .iter()
        .filter(|(_, _, debug)| !debug)
        .map(|(name, dir, _)| (name.clone(), user(dir)))
        .collect();
    Ok(Outcome::Kept(Kept {
        files,
        blind,
        asked: RefCell::default(),
    }))
}

/// The unmarked build's cargo command.
fn command(r: &Request<'_>, manifest: &Path, target: &Path) -> Command {
    let mut cmd = Command::new(r.cargo);
    match r.action {
        Action::Test => cmd.args(["test", "--no-run"]),
        Action::Bench => cmd.args(["bench", "--no-run"]),
        _ => cmd.arg("build"),
    };
    cmd.arg("--manifest-path")
        .arg(manifest)
        .args(["--message-format", "json"]);
    let mut args = r.cargo_args.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--no-run" => {}
            "--message-format" => {
                args.next();
            }
            _ if a.starts_with("--message-format=") => {}
            _ => {
                cmd.arg(a);
            }
        }
    }
    cmd.env("CARGO_TARGET_DIR", target);
    for profile in profiles(r.cargo_args) {
        let key = |k: &str| format!("CARGO_PROFILE_{profile}_{k}");
        cmd.env(key("DEBUG"), "limited").env(key("STRIP"), "none");
        // Elsewhere the debug info is in another file, which this does
        // not read (the programs are then read as having none).
        if cfg!(target_os = "linux") {
            cmd.env(key("SPLIT_DEBUGINFO"), "off");
        }
    }
    cmd
}

/// The profiles the command may build with, as environment variable
/// parts: cargo's four and a `--profile` given.
pub(crate) fn profiles(cargo_args: &[String]) -> Vec<String> {
    profile_names(cargo_args)
        .iter()
        .map(|p| p.to_uppercase().replace('-', "_"))
        .collect()
}

/// The profiles the command may build with, as cargo names them: its
/// four and a `--profile` given.
pub(crate) fn profile_names(cargo_args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = ["dev", "release", "test", "bench"]
        .map(String::from)
        .to_vec();
    let mut args = cargo_args.iter();
    while let Some(a) = args.next() {
        let named = match a.strip_prefix("--profile") {
            Some("") => args.next().cloned(),
            Some(rest) => rest.strip_prefix('=').map(String::from),
            None => None,
        };
        if let Some(p) = named {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// What the unmarked build's messages say.
#[derive(Debug, Default)]
struct Messages {
    /// The programs it linked.
    programs: Vec<PathBuf>,
    /// The packages it compiled for them: (target name, directory, with
    /// debug info this reads), build scripts and proc macros aside.
    packages: Vec<(String, PathBuf, bool)>,
    /// The errors, as rustc renders them.
    errors: Vec<String>,
}

impl Messages {
    /// Reads cargo's JSON messages (one a line).
    fn read(out: &[u8]) -> Messages {
        let mut m = Messages::default();
        for line in out.split(|&b| b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            match v["reason"].as_str() {
                Some("compiler-artifact") => m.artifact(&v),
                Some("compiler-message") if v["message"]["level"] == "error" => {
                    if let Some(r) = v["message"]["rendered"].as_str() {
                        m.errors.push(r.to_string());
                    }
                }
                _ => {}
            }
        }
        m.programs.sort();
        m.programs.dedup();
        m
    }

    fn artifact(&mut self, v: &Value) {
        if let Some(exe) = v["executable"].as_str() {
            self.programs.push(exe.into());
        }
        let kinds: Vec<&str> = v["target"]["kind"]
            .as_array()
            .map(|k| k.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if kinds
            .iter()
            .any(|k| *k == "custom-build" || *k == "proc-macro")
        {
            return;
        }
        let (Some(dir), Some(name)) = (
            v["manifest_path"]
                .as_str()
                .map(Path::new)
                .and_then(Path::parent),
            v["target"]["name"].as_str(),
        ) else {
            return;
        };
        // 0, "none", "line-directives-only", "line-tables-only": no
        // declarations.
        let debug = match &v["profile"]["debuginfo"] {
            Value::Number(n) => n.as_u64().is_some_and(|n| n > 0),
            Value::String(s) => s == "limited" || s == "full",
            _ => false,
        };
        match self.packages.iter_mut().find(|(_, d, _)| d == dir) {
            Some(p) => p.2 |= debug,
            None => self
                .packages
                .push((name.to_string(), dir.to_path_buf(), debug)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{profile_names, profiles, Built, Kept, Messages};
    use std::path::{Path, PathBuf};

    #[test]
    fn a_package_built_blind_is_marked_whole_and_named_when_asked() {
        let built = Built {
            line: 3,
            name: "f".into(),
            kept: true,
            small: false,
            once: false,
        };
        let kept = Kept {
            files: [(PathBuf::from("/w/a/src/lib.rs"), vec![built.clone()])].into(),
            blind: vec![
                ("b".into(), PathBuf::from("/w/b")),
                ("syn".into(), PathBuf::from("/r/syn")),
            ],
            asked: Default::default(),
        };
        let a = Path::new("/w/a");
        assert_eq!(
            kept.file(a, Path::new("/w/a/src/lib.rs")),
            Some(vec![built])
        );
        assert_eq!(
            kept.file(a, Path::new("/w/a/src/other.rs")),
            Some(Vec::new())
        );
        assert!(kept.blind().is_empty());
        assert_eq!(
            kept.file(Path::new("/w/b"), Path::new("/w/b/src/lib.rs")),
            None
        );
        // A build-time dependency never marked is never named.
        assert_eq!(kept.blind(), ["b"]);
    }

    #[test]
    fn profiles_named() {
        let p = |a: &[&str]| profiles(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(p(&["--release"]), ["DEV", "RELEASE", "TEST", "BENCH"]);
        assert_eq!(p(&["--profile", "prof-1"]).last().unwrap(), "PROF_1");
        assert_eq!(p(&["--profile=fast"]).last().unwrap(), "FAST");
        let n = |a: &[&str]| profile_names(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(n(&["--profile", "prof-1"]).last().unwrap(), "prof-1");
        assert_eq!(n(&["--profile", "release"]).len(), 4);
    }

    #[test]
    fn messages_give_programs_packages_and_errors() {
        let out = br#"{"reason":"compiler-artifact","manifest_path":"/w/a/Cargo.toml","target":{"kind":["bin"],"name":"a"},"profile":{"debuginfo":1},"executable":"/t/a"}
{"reason":"compiler-artifact","manifest_path":"/w/b/Cargo.toml","target":{"kind":["lib"],"name":"b"},"profile":{"debuginfo":"line-tables-only"},"executable":null}
{"reason":"compiler-artifact","manifest_path":"/w/b/Cargo.toml","target":{"kind":["custom-build"],"name":"build-script-build"},"profile":{"debuginfo":0},"executable":null}
{"reason":"compiler-message","message":{"level":"warning","rendered":"w\n"}}
{"reason":"compiler-message","message":{"level":"error","rendered":"e\n"}}
not json
"#;
        let m = Messages::read(out);
        assert_eq!(m.programs, [std::path::PathBuf::from("/t/a")]);
        let packages: Vec<_> = m
            .packages
            .iter()
            .map(|(n, d, debug)| (n.as_str(), d.to_str().unwrap(), *debug))
            .collect();
        assert_eq!(packages, [("a", "/w/a", true), ("b", "/w/b", false)]);
        assert_eq!(m.errors, ["e\n"]);
    }
}
