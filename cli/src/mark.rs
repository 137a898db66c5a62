//! The source rewriter of `cargo tickprof`: adds `#[::tickprof::profile]`
//! before every function with a body in a Rust source file, and leaves all
//! other text untouched (byte for byte).
//!
//! Marked: free functions, inherent and trait-impl methods, default trait
//! methods, functions nested in function bodies, and all of these inside
//! inline `mod`s — `#[cfg(test)]` modules and `#[test]` functions included.
//! Skipped, each with a [`Reason`] (counted, listed with `-v`, never an
//! error): what `#[profile]` cannot mark (`const fn`, C-variadic,
//! `default fn`, a returned future whose body is not one `async` block),
//! functions that already carry a `#[profile…]` or sit in a container
//! that does, functions a macro defines (`macro_rules!` transcribers and
//! item macros are not expanded: each `fn` in them is counted), functions
//! with `#[expect(dead_code)]` (a mark makes them look used, and the
//! expectation would warn), and functions the `--mark`/`--skip` globs
//! leave out. With [`Options::built`] (marks after inlining), also the
//! functions the optimised unmarked build does not keep as functions of
//! their own. A file syn cannot parse is left as it is.

mod future;
mod glob;
mod names;
mod visit;

#[cfg(test)]
mod tests;

pub(crate) use glob::Glob;

/// Why a function was left unmarked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Reason {
    /// `const fn`: the clock cannot be read at compile time.
    Const,
    /// A C-variadic function.
    Variadic,
    /// `default fn` (specialization).
    Default,
    /// Returns a future and its body is not one `async` block.
    FutureBody,
    /// Carries its own `#[profile…]`, or sits in a marked container.
    AlreadyMarked,
    /// Defined by a macro (a `macro_rules!` transcriber or an item macro).
    Macro,
    /// Carries `#[expect(dead_code)]` (or `unused`): a mark makes the
    /// function look used, and the unfulfilled expectation would warn.
    ExpectedDead,
    /// Left out by `--mark` / `--skip`.
    Glob,
    /// Inlined wherever the unmarked build calls it: no code of its own.
    Inlined,
    /// Nowhere in the unmarked build: not called (or not compiled) by
    /// what the command builds, or inlined without a trace.
    NotBuilt,
    /// Kept by the unmarked build, but smaller than `--min-bytes` (and not
    /// inlined elsewhere): a mark would cost more than its body.
    Small,
}

impl Reason {
    /// Every reason, in a fixed order (the copy's cache keeps the index).
    pub(crate) const ALL: [Reason; 11] = [
        Reason::Const,
        Reason::Variadic,
        Reason::Default,
        Reason::FutureBody,
        Reason::AlreadyMarked,
        Reason::Macro,
        Reason::ExpectedDead,
        Reason::Glob,
        Reason::Inlined,
        Reason::NotBuilt,
        Reason::Small,
    ];

    /// The short label used in the summary line and in `-v` listings.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Reason::Const => "const fn",
            Reason::Variadic => "C-variadic",
            Reason::Default => "default fn",
            Reason::FutureBody => "future body not one async block",
            Reason::AlreadyMarked => "already marked",
            Reason::Macro => "defined by a macro",
            Reason::ExpectedDead => "#[expect(dead_code)]",
            Reason::Glob => "left out by --mark/--skip",
            Reason::Inlined => "inlined",
            Reason::NotBuilt => "not in the build",
            Reason::Small => "small",
        }
    }

    /// Whether the reason is the unmarked build's (marks after inlining)
    /// rather than the source's.
    pub(crate) fn after_inlining(self) -> bool {
        matches!(self, Reason::Inlined | Reason::NotBuilt | Reason::Small)
    }
}

/// A function of a file as the unmarked build has it (its debug info's
/// declaration): `name` (`{async_fn#0}` for an `async fn`'s body) declared
/// at `line` (its first token after the attributes), with code of its own
/// (`kept`) or only inlined; a kept one `small` when its code is under
/// `--min-bytes`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Built {
    /// The declaration's line.
    pub(crate) line: u32,
    /// The declared name, without generic arguments.
    pub(crate) name: String,
    /// Whether some instance has code of its own.
    pub(crate) kept: bool,
    /// Kept, but its largest copy is smaller than `--min-bytes`: left
    /// unmarked.
    pub(crate) small: bool,
    /// Kept, and an instance holds a function inlined into its own code
    /// of at least [`ONCE_BYTES`]: marked with `once` (the body emitted
    /// once, the guard around it), so that the optimiser inlines it
    /// again: a body emitted three times calls it from three places, and
    /// one inlined at its only call in the unmarked build stays a call.
    pub(crate) once: bool,
}

/// The size of an inlined function (bytes of code, at a call in a kept
/// function's own code) from which the kept function's mark emits its
/// body once (`#[profile(always, once)]`), measured on the four crates of
/// docs/measured.md ("One copy of the body"): the body emitted three
/// times kept out of line what the unmarked build inlined into indexmap's
/// `insert_full` (397 bytes inlined there), `swap_remove_full` (240) and
/// the workload's `main` (1,268): 1.77 times the unmarked CPU time, 1.33
/// with one copy. A call of a body emitted once costs more (callgrind:
/// counted 43 instructions against 20, with profiling off 27 against 11),
/// which on semver's small parsers (inlining 100 to 250 bytes each, 18
/// M calls a run) outweighed what it saved.
pub(crate) const ONCE_BYTES: u64 = 200;

/// What to mark, and how the mark is spelled.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The crate's name as in report names (`-` replaced by `_`).
    pub(crate) crate_name: String,
    /// The name the marked crate knows tickprof by (its dependency key).
    pub(crate) dep: String,
    /// Edition 2015: `#[tickprof::profile]` (a leading `::` names the
    /// crate root there) instead of `#[::tickprof::profile]`.
    pub(crate) edition2015: bool,
    /// Mark only functions whose name matches one of these (all if empty).
    pub(crate) mark: Vec<Glob>,
    /// Never mark functions whose name matches one of these.
    pub(crate) skip: Vec<Glob>,
    /// Marks after inlining: the file's functions as the unmarked build
    /// has them; a function marked only when one of them is it, kept
    /// (unless `mark` names it). `None`: every function.
    pub(crate) built: Option<Vec<Built>>,
}

impl Options {
    /// The attribute inserted before each marked function, with the
    /// space that separates it from the function.
    pub(crate) fn attribute(&self, once: bool) -> String {
        let root = if self.edition2015 { "" } else { "::" };
        let how = if once { "always, once" } else { "always" };
        if self.dep == "tickprof" {
            format!("#[{root}tickprof::profile({how})] ")
        } else {
            format!("#[{root}{0}::profile(crate = {root}{0}, {how})] ", self.dep)
        }
    }

    /// Whether the globs let a function with these candidate names be
    /// marked.
    fn wanted(&self, names: &[String]) -> bool {
        let any = |globs: &[Glob]| globs.iter().any(|g| names.iter().any(|n| g.matches(n)));
        (self.mark.is_empty() || any(&self.mark)) && !any(&self.skip)
    }
}

/// One function the rewriter saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Function {
    /// Its name as the report will show it, approximately (the first of
    /// the candidates the globs are matched against): the module path
    /// comes from the file's place and the inline `mod`s, an `impl`'s type
    /// and trait are resolved through the `use` items in scope.
    pub(crate) name: String,
    /// Its line (1-based).
    pub(crate) line: usize,
    /// `None` when marked, else why not.
    pub(crate) skipped: Option<Reason>,
    /// Compiled only under `cfg(test)` (`#[cfg(test)]` module, `#[test]`
    /// function, or inside one): it runs under `cargo tickprof test` only.
    pub(crate) test_only: bool,
}

/// The result of rewriting one file.
#[derive(Debug)]
pub(crate) struct Rewrite {
    /// The new text (equal to the input when nothing was marked).
    pub(crate) text: String,
    /// Every function seen, marked or not, in source order.
    pub(crate) functions: Vec<Function>,
}

impl Rewrite {
    /// The number of functions marked.
    pub(crate) fn marked(&self) -> usize {
        self.functions
            .iter()
            .filter(|f| f.skipped.is_none())
            .count()
    }
}

/// Rewrites `src`, the text of a file whose module path in its crate is
/// `module` (empty for the crate root).
///
/// # Errors
///
/// syn's error when the file does not parse; the caller leaves it as it is.
pub(crate) fn rewrite(src: &str, module: &[String], opts: &Options) -> Result<Rewrite, String> {
    // syn skips a byte-order mark; positions are counted after it.
    let bom = if src.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &src[bom..];
    let file = syn::parse_file(body).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}: {e}", at.line, at.column + 1)
    })?;
    let mut path = vec![opts.crate_name.clone()];
    path.extend(module.iter().cloned());
    let found = visit::find(&file, path, opts);
    let mut line_starts = vec![0usize];
    line_starts.extend(body.match_indices('\n').map(|(i, _)| i + 1));
    // proc-macro2 columns count chars: convert to byte offsets.
    let mut offsets: Vec<(usize, bool)> = found
        .insert_at
        .iter()
        .filter_map(|&(line, col, once)| {
            let start = *line_starts.get(line.checked_sub(1)?)?;
            let rest = &body[start..];
            let at = start + rest.char_indices().nth(col).map_or(rest.len(), |(i, _)| i);
            Some((at, once))
        })
        .collect();
    offsets.sort_unstable();
    offsets.dedup_by_key(|o| o.0);
    let attribute = [opts.attribute(false), opts.attribute(true)];
    let mut text = String::with_capacity(src.len() + offsets.len() * attribute[1].len());
    text.push_str(&src[..bom]);
    let mut last = 0;
    for &(o, once) in &offsets {
        text.push_str(&body[last..o]);
        text.push_str(&attribute[usize::from(once)]);
        last = o;
    }
    text.push_str(&body[last..]);
    Ok(Rewrite {
        text,
        functions: found.functions,
    })
}
