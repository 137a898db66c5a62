//! `cargo tickprof`: a marked copy of the workspace under
//! `<target-dir>/tickprof/ws`, built and run by cargo with the user's
//! arguments. The user's tree is only read.

pub(crate) mod args;
mod cache;
mod child;
mod copy;
mod deps;
mod escape;
mod lock;
mod manifest;
mod meta;
mod plan;

use crate::mark::{self, Reason};
use args::{Action, Args};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The tickprof checkout this command was built from (`cli/..`).
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Counts of one rewrite pass, for the summary line.
#[derive(Default)]
pub(crate) struct Tally {
    files: usize,
    marked: usize,
    /// Functions marked per crate (as names show it), in order of first mark.
    crates: Vec<(String, usize)>,
    /// Marked functions compiled only under `cfg(test)`.
    test_only: usize,
    skipped: BTreeMap<Reason, usize>,
    /// (file, line, name, reason) of each function left unmarked.
    unmarked: Vec<(PathBuf, usize, String, Reason)>,
    /// Files syn could not parse, with its error.
    unparsed: Vec<(PathBuf, String)>,
    /// Symbolic links `mark` did not follow: (link, target).
    links: Vec<(PathBuf, PathBuf)>,
    /// Source files copied without marks (not parsed for them), and why.
    unmarked_files: Vec<(PathBuf, String)>,
    /// The notes of the file being rewritten, for the copy's cache.
    said: Vec<String>,
}

/// What the summary line says besides the marks.
#[derive(Default)]
pub(crate) struct Notes {
    /// The command builds for `run` (or only copies): `cfg(test)` code is
    /// not compiled.
    pub(crate) no_tests: bool,
    /// Packages of the user's lock moved in the copy's: (name, from, to).
    pub(crate) moved: Vec<(String, String, String)>,
    /// Whether the copy has a lock of the user's to compare with.
    pub(crate) user_lock: bool,
}

impl Tally {
    /// Adds one file's rewrite (`shown` is its path as printed) of crate
    /// `krate`.
    fn add(&mut self, shown: &Path, krate: &str, result: &Result<mark::Rewrite, String>) {
        match result {
            Ok(r) => {
                self.note(shown, &format!("M {} {krate}", r.marked()));
                for f in &r.functions {
                    match f.skipped {
                        None if f.test_only => self.note(shown, "T"),
                        None => {}
                        Some(reason) => {
                            let code = Reason::ALL.iter().position(|r| *r == reason).unwrap_or(0);
                            self.note(shown, &format!("S {} {code} {}", f.line, f.name));
                        }
                    }
                }
            }
            Err(e) => self.note(shown, &format!("N {e}")),
        }
    }

    /// A file copied as it is without being parsed, and why.
    fn not_parsed(&mut self, shown: &Path, why: &str) {
        self.note(shown, &format!("N {why}"));
    }

    /// A source file copied without marks, and why.
    fn unmarked_file(&mut self, shown: &Path, why: &str) {
        self.note(shown, &format!("U {why}"));
    }

    /// Counts one note about the file `shown`, and keeps it in `said`. A
    /// note is the cache's form of what a file's rewrite found: `M n
    /// crate` (n functions marked), `T` (one of them under `cfg(test)`),
    /// `S line reason name` (one skipped), `N why` (not parsed), `U why`
    /// (not marked).
    fn note(&mut self, shown: &Path, note: &str) {
        self.said.push(note.to_string());
        let (kind, rest) = note.split_once(' ').unwrap_or((note, ""));
        match kind {
            "M" => {
                let (n, krate) = rest.split_once(' ').unwrap_or((rest, ""));
                let marked: usize = n.parse().unwrap_or(0);
                if marked > 0 {
                    self.files += 1;
                    match self.crates.iter_mut().find(|(c, _)| c == krate) {
                        Some((_, n)) => *n += marked,
                        None => self.crates.push((krate.to_string(), marked)),
                    }
                }
                self.marked += marked;
            }
            "T" => self.test_only += 1,
            "S" => {
                let mut w = rest.splitn(3, ' ');
                let line = w.next().and_then(|l| l.parse().ok()).unwrap_or(0);
                let code: usize = w.next().and_then(|c| c.parse().ok()).unwrap_or(0);
                let name = w.next().unwrap_or("").to_string();
                let reason = Reason::ALL.get(code).copied().unwrap_or(Reason::Macro);
                *self.skipped.entry(reason).or_default() += 1;
                self.unmarked
                    .push((shown.to_path_buf(), line, name, reason));
            }
            "N" => self.unparsed.push((shown.to_path_buf(), rest.to_string())),
            "U" => self
                .unmarked_files
                .push((shown.to_path_buf(), rest.to_string())),
            _ => {}
        }
    }

    /// Says again the notes a cached file's rewrite made.
    fn replay(&mut self, shown: &Path, notes: &[String]) {
        for n in notes {
            self.note(shown, n);
        }
    }

    /// The summary line: "marked N functions in K files of CRATE, …
    /// (T under #[cfg(test)] …; skipped M: …); lock: …".
    fn line(&self, notes: &Notes, verbose: bool) -> String {
        let total: usize = self.skipped.values().sum();
        let crates = match self.crates.as_slice() {
            [] => String::new(),
            [(c, _)] => format!(" of {c}"),
            many => {
                let each: Vec<String> = many.iter().map(|(c, n)| format!("{c} {n}")).collect();
                format!(": {}", each.join(", "))
            }
        };
        let mut line = format!(
            "cargo tickprof: marked {} functions in {} files{crates} (",
            self.marked, self.files
        );
        if self.test_only > 0 {
            let when = if notes.no_tests {
                "not built by `run`"
            } else {
                "built by `test`"
            };
            let _ = write!(line, "{} under #[cfg(test)], {when}; ", self.test_only);
        }
        let _ = write!(line, "skipped {total}");
        for (i, (reason, n)) in self.skipped.iter().enumerate() {
            let sep = if i == 0 { ": " } else { ", " };
            let _ = write!(line, "{sep}{n} {}", reason.label());
        }
        line.push(')');
        if !self.unparsed.is_empty() {
            let _ = write!(
                line,
                "; {} files left as they are (not parsed)",
                self.unparsed.len()
            );
        }
        if notes.user_lock {
            if notes.moved.is_empty() {
                line.push_str("; lock: yours, nothing moved");
            } else {
                let moved: Vec<String> = notes
                    .moved
                    .iter()
                    .map(|(n, a, b)| format!("{n} {a} → {b}"))
                    .collect();
                let _ = write!(line, "; lock: moved {}", moved.join(", "));
            }
        }
        if !self.links.is_empty() {
            let _ = write!(line, "; {} links not followed", self.links.len());
        }
        if !verbose && (total > 0 || !self.unparsed.is_empty() || !self.links.is_empty()) {
            line.push_str("; -v lists them");
        }
        line
    }

    /// Prints the summary line and, with `verbose`, one line per function
    /// left unmarked.
    fn print(&self, notes: &Notes, verbose: bool) {
        eprintln!("{}", safe(&self.line(notes, verbose)));
        if verbose {
            for (file, line, name, reason) in &self.unmarked {
                let at = format!("{}:{line}", file.display());
                eprintln!(
                    "  skipped {} ({}): {}",
                    safe(name),
                    safe(&at),
                    reason.label()
                );
            }
            for (link, to) in &self.links {
                eprintln!(
                    "  not followed {} -> {}: a symbolic link",
                    safe(&link.display().to_string()),
                    safe(&to.display().to_string())
                );
            }
            for (file, e) in &self.unparsed {
                eprintln!(
                    "  not parsed {}: {}",
                    safe(&file.display().to_string()),
                    safe(e)
                );
            }
            for (file, why) in &self.unmarked_files {
                eprintln!(
                    "  not marked {}: {}",
                    safe(&file.display().to_string()),
                    safe(why)
                );
            }
        }
    }
}

/// A name or path as printed: control characters escaped.
fn safe(s: &str) -> String {
    tickprof_runtime::__private::terminal_safe(s).into_owned()
}

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
    let source = tickprof_source(args.tickprof_path.as_deref())?;
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let base = args
        .target_dir
        .as_ref()
        .map_or(ws.target_dir.clone(), |t| cwd.join(t));
    let dir = base.join("tickprof");
    let copy = dir.join("ws");
    let mut tally = Tally::default();
    let plan = plan::Plan::new(&ws, &chosen, &source, mark.clone(), skip.clone());
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
    let user_lock = seed_lock(&ws.root, &copy, &dir, &source)?;
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
    let config = deps::sync(&chosen_deps, &dir, &source, &mark, &skip, &mut tally)?;
    if !config.is_empty() {
        resolved = resolve(&config)?;
    }
    let notes = Notes {
        no_tests: matches!(action, Action::Run | Action::Build | Action::Copy),
        moved: resolved.moved,
        user_lock: user_lock.is_some(),
    };
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
        .args(&args.cargo_args)
        .env("CARGO_TARGET_DIR", dir.join("target"));
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
/// tickprof's dependencies), re-seeded only when that seed changes, so
/// cargo's own updates to the copy's lock are kept between runs. Returns
/// the user's lock, if any.
fn seed_lock(
    root: &Path,
    copy: &Path,
    dir: &Path,
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
    let record = dir.join("lock-seed");
    let lock = copy.join("Cargo.lock");
    if std::fs::read_to_string(&record).ok().as_deref() == Some(&seed) && lock.is_file() {
        return Ok(user);
    }
    let write = |p: &Path| std::fs::write(p, &seed).map_err(|e| format!("{}: {e}", p.display()));
    write(&lock)?;
    write(&record)?;
    Ok(user)
}
