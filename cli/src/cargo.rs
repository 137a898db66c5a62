//! `cargo tickprof`: a marked copy of the workspace under
//! `<target-dir>/tickprof/ws`, built and run by cargo with the user's
//! arguments; the functions marked are those the unmarked build keeps
//! (see [`probe`]). The user's tree is only read.

pub(crate) mod args;
mod busy;
mod cache;
mod child;
mod copy;
mod deps;
mod escape;
mod linked;
mod lock;
mod manifest;
mod meta;
mod plan;
mod probe;
mod tally;

use crate::mark;
use args::{Action, Args};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
pub(crate) use tally::{Notes, Tally};

/// The tickprof checkout this command was built from (`cli/..`).
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Runs the command.
///
/// # Errors
///
/// Whatever stops it before cargo runs (one line for stderr).
pub(crate) fn main(args: Args) -> Result<ExitCode, String> {
    let Some(action) = args.action else {
        return Ok(ExitCode::SUCCESS);
    };
    let globs = |g: &[String]| g.iter().map(|g| mark::Glob::new(g)).collect::<Vec<_>>();
    let (mark, skip) = (globs(&args.mark), globs(&args.skip));
    if action == Action::Mark {
        return mark_in_place(&args, mark, skip);
    }
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let manifest = meta::locate(args.manifest_path.as_deref())?;
    let ws = meta::load(&cargo, &manifest)?;
    let chosen = meta::select(&ws, &manifest, &args.packages, args.workspace)?;
    for line in linked::warnings(&ws.root, &chosen) {
        eprintln!("{line}");
    }
    let source = tickprof_source(args.tickprof_path.as_deref())?;
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let base = args
        .target_dir
        .as_ref()
        .map_or(ws.target_dir.clone(), |t| cwd.join(t));
    let dir = base.join("tickprof");
    // Held until this command ends: the copy and the builds in `dir` are
    // this run's until then.
    let _held = busy::hold(&dir)?;
    let copy = dir.join("ws");
    let mut tally = Tally::default();
    // Compared as canonical paths: a target directory named through a link
    // or `..` (`../d/tt`) is still left out, and the copy never copies
    // itself.
    std::fs::create_dir_all(&copy)
        .map_err(|e| format!("cannot create the copy in {}: {e}", copy.display()))?;
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let exclude = [
        canonical(&ws.target_dir),
        canonical(&base),
        canonical(&dir),
        canonical(&ws.root).join(".git"),
    ];
    let user_lock = seed_lock(&ws.root, &copy, &dir.join("lock-seed"), &source)?;
    let kept = if args.all || !mark.is_empty() || action == Action::Copy {
        None
    } else {
        let request = probe::Request {
            cargo: &cargo,
            ws: &ws,
            manifest: &manifest,
            dir: &dir,
            exclude: &exclude,
            source: &source,
            action,
            cargo_args: &args.cargo_args,
            once_bytes: args.once_bytes.unwrap_or(crate::mark::ONCE_BYTES),
            min_bytes: args
                .min_bytes
                .unwrap_or(if optimised(action, &args.cargo_args) {
                    probe::MIN_BYTES
                } else {
                    0
                }),
        };
        match probe::probe(&request)? {
            probe::Outcome::Kept(kept) => Some(kept),
            probe::Outcome::Blind(why) => {
                eprintln!(
                    "cargo tickprof: {}: every function marked, as with --all",
                    tickprof_runtime::__private::terminal_safe(&why)
                );
                None
            }
            probe::Outcome::Failed(code) => {
                eprintln!(
                    "cargo tickprof: the unmarked build (to see what the optimiser keeps) ended with exit code {code}"
                );
                return Ok(ExitCode::from(code));
            }
        }
    };
    let plan = plan::Plan::new(&ws, &chosen, &source, mark.clone(), skip.clone())
        .after_inlining(kept.as_ref());
    let mut cache = cache::Cache::load(&dir.join("ws.cache"), &plan.key());
    let synced = copy::sync(
        &ws.root,
        &copy,
        &exclude,
        &["Cargo.lock"],
        &mut plan::Marking {
            plan: &plan,
            tally: &mut tally,
        },
        &mut cache,
    )
    .map_err(|e| format!("cannot update the copy in {}: {e}", copy.display()))?;
    let rel = manifest
        .strip_prefix(&ws.root)
        .unwrap_or(Path::new("Cargo.toml"));
    let copied_manifest = copy.join(rel);
    let platforms = lock::platforms(&args.cargo_args);
    let resolve = |config: &[String]| {
        lock::resolve(
            &cargo,
            &copied_manifest,
            &copy.join("Cargo.lock"),
            config,
            user_lock.as_deref(),
            &platforms,
        )
    };
    let mut resolved = resolve(&[])?;
    let chosen_deps = deps::choose(&resolved.metadata, &globs(&args.deps));
    let config = deps::sync(
        &chosen_deps,
        &dir,
        &source,
        &mark,
        &skip,
        kept.as_ref(),
        &mut tally,
    )?;
    if !config.is_empty() {
        resolved = resolve(&config)?;
    }
    let notes = Notes {
        no_tests: matches!(action, Action::Run | Action::Build | Action::Copy),
        moved: resolved.moved,
        user_lock: user_lock.is_some(),
        after_inlining: kept.is_some(),
    };
    for name in kept.iter().flat_map(probe::Kept::blind) {
        eprintln!(
            "cargo tickprof: {name} was built without debug info to read (a profile's per-package `debug`?): every function of it marked"
        );
    }
    tally.print(&notes, args.verbose);
    if args.verbose {
        eprintln!(
            "  copy: {} files read, {} written, {} removed; the others unchanged by their metadata",
            synced.read, synced.written, synced.removed
        );
    }
    let Some(command) = action.cargo_command() else {
        println!("{}", copied_manifest.display());
        return Ok(ExitCode::SUCCESS);
    };
    let mut cmd = Command::new(&cargo);
    cmd.arg(command)
        .arg("--manifest-path")
        .arg(&copied_manifest)
        .args(&config)
        .args(deps::debug_config(
            &chosen_deps,
            &probe::profile_names(&args.cargo_args),
        ))
        .args(&args.cargo_args)
        .env("CARGO_TARGET_DIR", dir.join("target"));
    // Debug information (`limited`: the functions' full paths, which line
    // tables alone lack) and symbols in the marked build (what the report reads
    // to name the functions inlined into the marked ones: the `inlined`
    // feature); debug information does not change the code. A setting of
    // the user's environment stands.
    for profile in probe::profiles(&args.cargo_args) {
        let key = |k: &str| format!("CARGO_PROFILE_{profile}_{k}");
        for (k, v) in [("DEBUG", "limited"), ("STRIP", "none")] {
            if std::env::var_os(key(k)).is_none() {
                cmd.env(key(k), v);
            }
        }
        if cfg!(target_os = "linux") && std::env::var_os(key("SPLIT_DEBUGINFO")).is_none() {
            cmd.env(key("SPLIT_DEBUGINFO"), "off");
        }
    }
    if kept.is_some() {
        // The report's header says how the marks were placed.
        let (marked, inlined) = tally.marked_and_inlined();
        cmd.env("TICKPROF_AFTER_INLINING", format!("{marked},{inlined}"));
    }
    if let Some(rest) = &args.program_args {
        cmd.arg("--").args(rest);
    }
    let code = child::run(&mut cmd)?;
    if code != 0 {
        eprintln!("cargo tickprof: cargo {command} on the marked copy ended with exit code {code}");
    }
    Ok(ExitCode::from(code))
}

/// `cargo tickprof mark DIR…`: rewrites in place, for scripts.
fn mark_in_place(
    args: &Args,
    mark: Vec<mark::Glob>,
    skip: Vec<mark::Glob>,
) -> Result<ExitCode, String> {
    if args.dirs.is_empty() {
        return Err("mark needs at least one directory (see cargo tickprof --help)".into());
    }
    let mut tally = Tally::default();
    for dir in &args.dirs {
        let crate_name = args.crate_name.clone().unwrap_or_else(|| {
            let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            let pkg = abs.parent().and_then(Path::file_name);
            pkg.map_or_else(|| "crate".into(), |n| n.to_string_lossy().replace('-', "_"))
        });
        let opts = mark::Options {
            crate_name,
            dep: args.dep.clone().unwrap_or_else(|| "tickprof".into()),
            edition2015: args.edition.as_deref() == Some("2015"),
            mark: mark.clone(),
            skip: skip.clone(),
            built: None,
        };
        let (mut files, mut links) = (Vec::new(), Vec::new());
        plan::rust_files(dir, &mut files, &mut links)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        for link in links {
            let to = std::fs::read_link(&link).unwrap_or_default();
            tally.links.push((link, to));
        }
        for file in files {
            let text =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let rel = file.strip_prefix(dir).unwrap_or(&file);
            let result = mark::rewrite(&text, &plan::module_of(rel), &opts);
            if let Ok(r) = &result {
                if r.text != text {
                    std::fs::write(&file, &r.text)
                        .map_err(|e| format!("{}: {e}", file.display()))?;
                }
            }
            tally.add(&file, &opts.crate_name, &result);
        }
    }
    tally.print(&Notes::default(), args.verbose);
    Ok(ExitCode::SUCCESS)
}

/// Where marked members get tickprof: `--tickprof-path`, `TICKPROF_PATH`,
/// the checkout this command was built from, else the published version.
fn tickprof_source(flag: Option<&Path>) -> Result<manifest::Source, String> {
    let given = flag
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("TICKPROF_PATH").map(PathBuf::from));
    let is_checkout = |p: &Path| {
        std::fs::read_to_string(p.join("Cargo.toml"))
            .is_ok_and(|m| m.contains("name = \"tickprof\""))
    };
    if let Some(p) = given {
        let p =
            std::fs::canonicalize(&p).map_err(|e| format!("tickprof path {}: {e}", p.display()))?;
        if !is_checkout(&p) {
            return Err(format!(
                "{} is not a tickprof checkout (no Cargo.toml of package `tickprof`); \
                 check --tickprof-path / TICKPROF_PATH",
                p.display()
            ));
        }
        return Ok(manifest::Source::Path(p));
    }
    match std::fs::canonicalize(BUILT_FROM) {
        Ok(p) if is_checkout(&p) => Ok(manifest::Source::Path(p)),
        _ => Ok(manifest::Source::Version(env!("CARGO_PKG_VERSION").into())),
    }
}

/// Gives the copy its own `Cargo.lock`, seeded from the user's (plus
/// tickprof's dependencies), re-seeded only when that seed (kept in
/// `record`) changes, so cargo's own updates to the copy's lock are kept
/// between runs. Returns the user's lock, if any.
fn seed_lock(
    root: &Path,
    copy: &Path,
    record: &Path,
    source: &manifest::Source,
) -> Result<Option<String>, String> {
    let user = std::fs::read_to_string(root.join("Cargo.lock")).ok();
    let theirs = match source {
        manifest::Source::Path(p) => std::fs::read_to_string(p.join("Cargo.lock")).ok(),
        manifest::Source::Version(_) => None,
    };
    let Some(seed) = manifest::seed_lock(user.as_deref(), theirs.as_deref()) else {
        return Ok(user);
    };
    let lock = copy.join("Cargo.lock");
    if std::fs::read_to_string(record).ok().as_deref() == Some(&seed) && lock.is_file() {
        return Ok(user);
    }
    let write = |p: &Path| std::fs::write(p, &seed).map_err(|e| format!("{}: {e}", p.display()));
    write(&lock)?;
    write(record)?;
    Ok(user)
}

/// Whether cargo builds this command with an optimised profile: `bench`,
/// `--release` (`-r`), or a `--profile` other than `dev` and `test` (a
/// custom profile is taken as optimised). The small-function rule
/// (`--min-bytes`) applies there only: an unoptimised build's sizes say
/// nothing of its functions' work.
fn optimised(action: Action, cargo_args: &[String]) -> bool {
    let mut args = cargo_args.iter().take_while(|a| *a != "--");
    let mut profile = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--release" | "-r" => return true,
            "--profile" => profile = args.next().cloned(),
            _ => {
                if let Some(p) = a.strip_prefix("--profile=") {
                    profile = Some(p.to_owned());
                }
            }
        }
    }
    match profile.as_deref() {
        Some(p) => !matches!(p, "dev" | "test"),
        None => action == Action::Bench,
    }
}

#[cfg(test)]
mod tests {
    use super::{optimised, Action};

    #[test]
    fn the_small_function_rule_is_for_optimised_profiles() {
        let o = |action, args: &[&str]| {
            let v: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
            optimised(action, &v)
        };
        assert!(o(Action::Run, &["--release"]));
        assert!(o(Action::Test, &["-p", "x", "-r"]));
        assert!(o(Action::Build, &["--profile", "prod"]));
        assert!(o(Action::Build, &["--profile=release"]));
        assert!(o(Action::Bench, &[]));
        assert!(!o(Action::Bench, &["--profile", "dev"]));
        assert!(!o(Action::Run, &[]));
        assert!(!o(Action::Test, &["--profile=test"]));
        // The program's own arguments are not cargo's.
        assert!(!o(Action::Run, &["--", "--release"]));
    }
}
