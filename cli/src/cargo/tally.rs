//! The summary line of a rewrite pass and its `-v` listing: what was
//! marked, skipped and left unparsed, counted from the notes each file's
//! rewrite makes (the copy's cache keeps them, so an unchanged file's
//! notes are said again without reading it).

use crate::mark::{self, Reason};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
    pub(crate) links: Vec<(PathBuf, PathBuf)>,
    /// Source files copied without marks (not parsed for them), and why.
    unmarked_files: Vec<(PathBuf, String)>,
    /// The notes of the file being rewritten, for the copy's cache.
    pub(crate) said: Vec<String>,
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
    /// Marked after inlining (the unmarked build was read).
    pub(crate) after_inlining: bool,
}

impl Tally {
    /// Adds one file's rewrite (`shown` is its path as printed) of crate
    /// `krate`.
    pub(crate) fn add(
        &mut self,
        shown: &Path,
        krate: &str,
        result: &Result<mark::Rewrite, String>,
    ) {
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
    pub(crate) fn not_parsed(&mut self, shown: &Path, why: &str) {
        self.note(shown, &format!("N {why}"));
    }

    /// A source file copied without marks, and why.
    pub(crate) fn unmarked_file(&mut self, shown: &Path, why: &str) {
        self.note(shown, &format!("U {why}"));
    }

    /// Counts one note about the file `shown`, and keeps it in `said`. A
    /// note is the cache's form of what a file's rewrite found: `M n
    /// crate` (n functions marked), `T` (one of them under `cfg(test)`),
    /// `S line reason name` (one skipped), `N why` (not parsed), `U why`
    /// (not marked).
    pub(crate) fn note(&mut self, shown: &Path, note: &str) {
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
    pub(crate) fn replay(&mut self, shown: &Path, notes: &[String]) {
        for n in notes {
            self.note(shown, n);
        }
    }

    /// The functions marked, and those left unmarked inside them: the
    /// unmarked build inlined them, or they are under `--min-bytes`.
    pub(crate) fn marked_and_inlined(&self) -> (usize, usize) {
        let count = |r| self.skipped.get(&r).copied().unwrap_or(0);
        (self.marked, count(Reason::Inlined) + count(Reason::Small))
    }

    /// The summary line: "marked N functions in K files of CRATE, …
    /// (after inlining: I left inlined, B not in the build[, S under
    /// --min-bytes]; T under
    /// #[cfg(test)] …; skipped M: …); lock: …".
    pub(crate) fn line(&self, notes: &Notes, verbose: bool) -> String {
        let count = |r: Reason| self.skipped.get(&r).copied().unwrap_or(0);
        let left = count(Reason::Inlined) + count(Reason::NotBuilt) + count(Reason::Small);
        let total: usize = self.skipped.values().sum::<usize>() - left;
        let crates = match self.crates.as_slice() {
            [] => String::new(),
            [(c, _)] => format!(" of {c}"),
            many => {
                let each: Vec<String> = many.iter().map(|(c, n)| format!("{c} {n}")).collect();
                format!(": {}", each.join(", "))
            }
        };
        let mut line = format!(
            "cargo tickprof: marked {} function{} in {} file{}{crates} (",
            self.marked,
            if self.marked == 1 { "" } else { "s" },
            self.files,
            if self.files == 1 { "" } else { "s" },
        );
        if notes.after_inlining {
            let _ = write!(
                line,
                "after inlining: {} left inlined, {} not in the build",
                count(Reason::Inlined),
                count(Reason::NotBuilt)
            );
            if count(Reason::Small) > 0 {
                let _ = write!(line, ", {} under --min-bytes", count(Reason::Small));
            }
            line.push_str("; ");
        }
        if self.test_only > 0 {
            let when = if notes.no_tests {
                "not built by `run`"
            } else {
                "built by `test`"
            };
            let _ = write!(line, "{} under #[cfg(test)], {when}; ", self.test_only);
        }
        let _ = write!(line, "skipped {total}");
        let skipped = self.skipped.iter().filter(|(r, _)| !r.after_inlining());
        for (i, (reason, n)) in skipped.enumerate() {
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
        if !verbose && (total + left > 0 || !self.unparsed.is_empty() || !self.links.is_empty()) {
            line.push_str("; -v lists them");
        }
        line
    }

    /// Prints the summary line and, with `verbose`, one line per function
    /// left unmarked.
    pub(crate) fn print(&self, notes: &Notes, verbose: bool) {
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
