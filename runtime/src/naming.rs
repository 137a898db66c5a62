//! Site names: one canonical form for every path `type_name` prints, and
//! the escaping each output needs (text column, terminal, spreadsheet).
//!
//! # The canonical form of a function path
//!
//! A marked function's path comes from `core::any::type_name` of the marker
//! fn nested in its body (`…::__tickprof_here`). rustc prints item paths in
//! several shapes; [`clean_path`] turns all of them into one form:
//!
//! | shape | `type_name` (rustc 1.95) | shown |
//! |---|---|---|
//! | free fn | `app::parser::parse` | `app::parser::parse` |
//! | inherent method | `app::parser::Parser::next_token` | `app::parser::Parser::next_token` |
//! | `impl` in another module | `app::other::<impl app::parser::Parser>::elsewhere` | `app::parser::Parser::elsewhere` |
//! | trait impl method | `<app::Square as app::Shape>::area` | `<app::Square as app::Shape>::area` |
//! | trait impl in another module | `app::b::<impl core::str::traits::FromStr for app::c::Version>::from_str` | `<app::c::Version as FromStr>::from_str` |
//! | trait default method | `app::Shape::double_area` | `app::Shape::double_area` |
//! | generic impl | `app::Entry<'_, _, _>::insert` | `app::Entry::insert` |
//! | impl for a concrete instance | `app::Arr<u8, 4>::concrete` | `app::Arr<u8, 4>::concrete` |
//! | generic trait | `<app::Stack<_> as app::GenTr<alloc::vec::Vec<_>>>::h` | `<app::Stack as app::GenTr<Vec<_>>>::h` |
//! | impl for a non-path type | `app::m::<impl app::Named for &[app::Parser]>::nm` | `<&[app::Parser] as app::Named>::nm` |
//! | inherent impl on `dyn` | `app::m::<impl dyn app::Shape>::on_dyn` | `<dyn app::Shape>::on_dyn` |
//! | closure, async body | `app::run::{{closure}}` | `app::run::{{closure}}` |
//!
//! The rules:
//!
//! 1. The marker segment `::__tickprof_here` is removed.
//! 2. An `<impl Trait for Type>` segment becomes `<Type as Trait>` and an
//!    `<impl Type>` segment becomes `Type` (`<Type>` when `Type` is not a
//!    plain path, e.g. `dyn Trait`); the module path that rustc prints in
//!    front of such a segment (where the `impl` block is written) is dropped,
//!    since the type's own path already says where it lives.
//! 3. Lifetimes are left out everywhere (`&'_ u8` → `&u8`, `L<'_>` → `L`).
//! 4. The generic arguments of a type or trait named in the path (the impl's
//!    self type and trait) are left out when they are only placeholders (`_`
//!    for a type parameter, the name of a const parameter): `Stack<_>` →
//!    `Stack`, `GenTr<_>` → `GenTr`, `Arr<_, N>` → `Arr`. A list with any
//!    concrete argument is kept (`Arr<u8, 4>`, `From<u8>`, `Arr<_, 3>`,
//!    `From<Vec<_>>`): it tells apart impls for different instances of one
//!    type or trait (`impl From<u8> for E` and `impl From<u16> for E`).
//!    Inside a kept list, `_` stays, so every argument reads as a type.
//! 5. Paths into `std`, `core` and `alloc` are shown by their bare name, as
//!    rustc's own diagnostics do (`core::str::traits::FromStr` → `FromStr`,
//!    `alloc::vec::Vec<u8>` → `Vec<u8>`); the internal module path
//!    (`core::iter::traits::collect`) is not where users know the item from.
//!    Paths into every other crate are kept in full.
//! 6. `{{closure}}` segments are kept: a scope in a closure shows as
//!    `app::run::{{closure}}@12`. For async functions the caller
//!    (`CallSite::function_path`) strips the trailing `::{{closure}}` of the
//!    body's generated closure.
//!
//! Input that does not parse as a `type_name` path (nothing rustc prints
//! today) falls back to rule 1 and the removal of placeholder-only lists,
//! so a future rustc with a new shape still gives a readable name.

use std::borrow::Cow;

/// The segment the expansion's marker fn adds to the path.
const MARKER: &str = "__tickprof_here";

/// Nesting (types in paths in types …) beyond which a name is not parsed
/// but cleaned by the fallback; keeps recursion bounded on any input.
const MAX_DEPTH: usize = 64;

/// Crates whose paths are shown by the item's bare name (rule 5).
const STD_CRATES: [&str; 3] = ["core", "alloc", "std"];

/// Primitive types and `bool` values: the only single identifiers in a
/// generic argument list that are not a const parameter's name (every other
/// type has a crate path in `type_name` output).
const CONCRETE_IDENTS: [&str; 21] = [
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f16", "f32", "f64", "f128", "true", "false",
];

/// Turns the type name of the marker fn into the enclosing function's path,
/// in the canonical form described in the [module docs](self).
///
/// Never panics; the result never contains `__tickprof_here`.
pub(crate) fn clean_path(raw: &str) -> String {
    let trimmed = raw
        .strip_suffix(MARKER)
        .map_or(raw, |rest| rest.strip_suffix("::").unwrap_or(rest));
    let cleaned = Parser::new(trimmed)
        .whole_path()
        .unwrap_or_else(|| fallback(trimmed));
    remove_marker(cleaned)
}

/// Removes every remaining `::__tickprof_here` / `__tickprof_here`, so no
/// input, however odd, shows the marker.
fn remove_marker(mut name: String) -> String {
    while let Some(at) = name.find(MARKER) {
        let start = if name[..at].ends_with("::") {
            at - 2
        } else {
            at
        };
        name.replace_range(start..at + MARKER.len(), "");
    }
    name
}

/// The cleaning for input the parser does not understand: drops
/// placeholder-only argument lists such as `<_>` and `<'_, _, _>`.
fn fallback(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let placeholder = after.find('>').filter(|&close| close > 0).filter(|&close| {
            after[..close]
                .chars()
                .all(|c| matches!(c, '_' | ',' | ' ' | '\''))
        });
        match placeholder {
            Some(close) => {
                out.push_str(&rest[..open]);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A type as printed in canonical form, and whether it is a plain path
/// (which can stand before `::method` without angle brackets).
struct Shown {
    text: String,
    is_path: bool,
}

/// A recursive-descent reader of the paths and types that rustc's
/// `type_name` prints. Every method returns `None` on input it does not
/// recognise; the cursor only moves over ASCII tokens and whole
/// identifiers, so it always sits on a char boundary.
struct Parser<'a> {
    src: &'a str,
    pos: usize,
    /// Nesting of `path`/`ty` calls, bounded by [`MAX_DEPTH`].
    depth: usize,
    /// How many generic argument lists enclose the cursor.
    args_depth: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            src,
            pos: 0,
            depth: 0,
            args_depth: 0,
        }
    }

    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Option<()> {
        self.eat(token).then_some(())
    }

    /// Runs `f` one nesting level deeper, failing past [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
    }

    /// The whole input as one path, or `None` if anything is left over.
    fn whole_path(mut self) -> Option<String> {
        let path = self.path()?;
        self.rest().is_empty().then_some(path)
    }

    /// Reads identifier characters (anything but the ASCII punctuation and
    /// spaces that separate tokens in `type_name` output).
    fn ident(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(_, c)| !is_ident_char(c))
            .map_or(rest.len(), |(i, _)| i);
        if len == 0 {
            return None;
        }
        self.pos += len;
        rest.get(..len)
    }

    /// Reads a balanced `{…}` verbatim (`{{closure}}`, const blocks).
    fn braces(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        self.pos += i + 1;
                        return rest.get(..=i);
                    }
                }
                _ if depth == 0 => return None,
                _ => {}
            }
        }
        None
    }

    /// A path: segments joined by `::`, each an identifier with optional
    /// generic arguments or `Fn(..) -> ..` sugar, a `{{closure}}`, a
    /// qualified `<Type as Trait>` or an `<impl …>` segment.
    fn path(&mut self) -> Option<String> {
        self.nested(|p| {
            let mut out = String::new();
            // Where the last segment starts in `out`, and whether the path
            // so far is rooted in a standard library crate.
            let mut last_start = 0;
            let mut std_rooted = false;
            let mut segments = 0usize;
            loop {
                if p.eat("<impl ") {
                    let first = p.ty()?;
                    out = if p.eat(" for ") {
                        let self_ty = p.ty()?;
                        format!("<{} as {}>", self_ty.text, first.text)
                    } else if first.is_path {
                        first.text
                    } else {
                        format!("<{}>", first.text)
                    };
                    p.expect(">")?;
                    std_rooted = false;
                } else if p.eat("<") {
                    let self_ty = p.ty()?;
                    out = if p.eat(" as ") {
                        format!("<{} as {}>", self_ty.text, p.path()?)
                    } else if self_ty.is_path {
                        self_ty.text
                    } else {
                        format!("<{}>", self_ty.text)
                    };
                    p.expect(">")?;
                    std_rooted = false;
                } else {
                    if segments > 0 {
                        out.push_str("::");
                    }
                    last_start = out.len();
                    if p.peek() == Some('{') {
                        out.push_str(p.braces()?);
                    } else {
                        let name = p.ident()?;
                        if segments == 0 {
                            std_rooted = STD_CRATES.contains(&name);
                        }
                        out.push_str(name);
                        if p.peek() == Some('<') {
                            out.push_str(&p.generic_args()?);
                        } else if p.peek() == Some('(') {
                            out.push_str(&p.paren_sugar()?);
                        }
                    }
                }
                segments += 1;
                if !p.eat("::") {
                    break;
                }
            }
            if std_rooted && segments > 1 {
                out.replace_range(..last_start, "");
            }
            Some(out)
        })
    }

    /// `<arg, arg, …>` after a path segment, in canonical form: lifetimes
    /// left out, and the whole list left out if nothing remains or, outside
    /// any other argument list, only placeholders remain.
    fn generic_args(&mut self) -> Option<String> {
        self.expect("<")?;
        let outermost = self.args_depth == 0;
        self.args_depth += 1;
        let kept = self.generic_arg_list();
        self.args_depth -= 1;
        let kept = kept?;
        let informative = kept.iter().any(|arg| !is_placeholder(arg));
        Some(if kept.is_empty() || (outermost && !informative) {
            String::new()
        } else {
            format!("<{}>", kept.join(", "))
        })
    }

    /// The arguments after `<` up to and including `>`, lifetimes left out.
    fn generic_arg_list(&mut self) -> Option<Vec<String>> {
        let mut kept = Vec::new();
        loop {
            if let Some(arg) = self.generic_arg()? {
                kept.push(arg);
            }
            if self.eat(">") {
                return Some(kept);
            }
            self.expect(", ")?;
        }
    }

    /// One generic argument; `Some(None)` for a lifetime (left out).
    fn generic_arg(&mut self) -> Option<Option<String>> {
        match self.peek()? {
            '\'' => {
                let lifetime_or_char = self.quoted()?;
                Some(
                    lifetime_or_char
                        .ends_with('\'')
                        .then(|| lifetime_or_char.to_owned()),
                )
            }
            '{' => Some(Some(self.braces()?.to_owned())),
            c if c == '-' || c.is_ascii_digit() => Some(Some(self.literal()?.to_owned())),
            _ => {
                // An associated type binding `Item = u8` (in `dyn` bounds).
                let save = self.pos;
                if let Some(name) = self.ident() {
                    if self.eat(" = ") {
                        return Some(Some(format!("{name} = {}", self.ty()?.text)));
                    }
                }
                self.pos = save;
                Some(Some(self.ty()?.text))
            }
        }
    }

    /// A lifetime (`'_`, `'a`) or a char literal (`'x'`), verbatim.
    fn quoted(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut end = rest.len();
        for (i, c) in rest.char_indices().skip(1) {
            if c == '\'' {
                end = i + 1;
                break;
            }
            if !is_ident_char(c) && c != '\\' {
                end = i;
                break;
            }
        }
        if end <= 1 {
            return None;
        }
        self.pos += end;
        rest.get(..end)
    }

    /// A numeric literal (a const argument or an array length).
    fn literal(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .skip(1)
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += len;
        rest.get(..len)
    }

    /// `(A, B) -> R` after `Fn`, `FnMut`, `FnOnce` in bounds.
    fn paren_sugar(&mut self) -> Option<String> {
        let mut out = self.ty_list("(", ")")?;
        if self.eat(" -> ") {
            out.push_str(" -> ");
            out.push_str(&self.ty()?.text);
        }
        Some(out)
    }

    /// `open ty, ty, … close`, allowing the trailing comma of a 1-tuple.
    fn ty_list(&mut self, open: &str, close: &str) -> Option<String> {
        self.expect(open)?;
        let mut items = Vec::new();
        let mut trailing_comma = false;
        if !self.eat(close) {
            loop {
                items.push(self.ty()?.text);
                if self.eat(close) {
                    break;
                }
                if self.eat(",") && self.eat(close) {
                    trailing_comma = true;
                    break;
                }
                self.expect(" ")?;
            }
        }
        let comma = if trailing_comma { "," } else { "" };
        Some(format!("{open}{}{comma}{close}", items.join(", ")))
    }

    /// A type, in canonical form.
    fn ty(&mut self) -> Option<Shown> {
        self.nested(|p| {
            let not_path = |text: String| {
                Some(Shown {
                    text,
                    is_path: false,
                })
            };
            if p.eat("&") {
                if p.peek() == Some('\'') {
                    p.quoted()?;
                    p.expect(" ")?;
                }
                let mutability = if p.eat("mut ") { "mut " } else { "" };
                return not_path(format!("&{mutability}{}", p.ty()?.text));
            }
            for prefix in ["*const ", "*mut ", "unsafe ", "dyn ", "impl "] {
                if p.eat(prefix) {
                    let inner = if matches!(prefix, "dyn " | "impl ") {
                        p.bounds()?
                    } else {
                        p.ty()?.text
                    };
                    return not_path(format!("{prefix}{inner}"));
                }
            }
            if p.eat("extern \"") {
                let abi = p.rest().split('"').next()?;
                p.pos += abi.len();
                p.expect("\" ")?;
                return not_path(format!("extern \"{abi}\" {}", p.ty()?.text));
            }
            if p.eat("for<") {
                // A higher-ranked binder: lifetimes only, left out.
                loop {
                    p.quoted()?;
                    if p.eat("> ") {
                        break;
                    }
                    p.expect(", ")?;
                }
                return p.ty();
            }
            if p.rest().starts_with("fn(") {
                p.pos += "fn".len();
                return not_path(format!("fn{}", p.paren_sugar()?));
            }
            if p.eat("[") {
                let elem = p.ty()?.text;
                let text = if p.eat("; ") {
                    let len = match p.peek()? {
                        '{' => p.braces()?,
                        c if c == '-' || c.is_ascii_digit() => p.literal()?,
                        _ => p.ident()?,
                    };
                    format!("[{elem}; {len}]")
                } else {
                    format!("[{elem}]")
                };
                p.expect("]")?;
                return not_path(text);
            }
            if p.peek() == Some('(') {
                return not_path(p.ty_list("(", ")")?);
            }
            if p.eat("!") {
                return not_path("!".to_owned());
            }
            let text = p.path()?;
            let is_path = !text.starts_with('<');
            Some(Shown { text, is_path })
        })
    }

    /// `Bound + Bound + …` after `dyn`/`impl`; lifetime bounds left out.
    fn bounds(&mut self) -> Option<String> {
        let mut kept = Vec::new();
        loop {
            if self.peek() == Some('\'') {
                self.quoted()?;
            } else {
                kept.push(self.ty()?.text);
            }
            if !self.eat(" + ") {
                break;
            }
        }
        (!kept.is_empty()).then(|| kept.join(" + "))
    }
}

/// Whether `c` can be part of an identifier in `type_name` output.
fn is_ident_char(c: char) -> bool {
    !(c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            ':' | '<'
                | '>'
                | ','
                | ';'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '&'
                | '*'
                | '+'
                | '='
                | '\''
                | '"'
                | '!'
                | '-'
        ))
}

/// Whether a canonical generic argument says nothing: `_` (a type
/// parameter) or a const parameter's name (a single identifier that is not
/// a primitive type or `false`/`true`), or nothing.
fn is_placeholder(arg: &str) -> bool {
    arg == "_"
        || (arg.chars().all(is_ident_char)
            && !arg.starts_with(|c: char| c.is_ascii_digit())
            && !CONCRETE_IDENTS.contains(&arg))
}

/// Fits `name` into `max_chars` characters for a text column.
///
/// Returns `name` itself when it fits. Otherwise keeps the start (the
/// crate) and the end (the method) and puts `…` in place of the middle:
///
/// 1. Whole path segments when that fits: one run of consecutive segments
///    between the first and the last, each a plain identifier (not
///    `Type as Trait>` or `Vec<u8>`), so brackets stay balanced. The run
///    that ends earliest is chosen, and of those the shortest, keeping the
///    segments nearest the method: `myapp::…::Parser::next_token`,
///    `<semver::…::Version as FromStr>::from_str`.
/// 2. Else every such run, then characters from the middle of what is left
///    (a third of the room for the start, the rest for the end):
///    `myapp::pa…ng_method_name`.
///
/// Counts `char`s and never splits one; the result has at most `max_chars`
/// of them (is empty when `max_chars` is 0). For the text table only: the
/// files (CSV, JSON, HTML) carry the full name.
// Used by the text writer once it is wired to it.
#[allow(dead_code)]
pub(crate) fn abbreviate(name: &str, max_chars: usize) -> Cow<'_, str> {
    if name.chars().count() <= max_chars {
        return Cow::Borrowed(name);
    }
    let segments: Vec<&str> = name.split("::").collect();
    if let Some(shorter) = elide_segments(&segments, max_chars) {
        return Cow::Owned(shorter);
    }
    let runs = plain_runs(&segments);
    let all_runs_elided = if runs.is_empty() {
        name.to_owned()
    } else {
        join_eliding(&segments, &runs)
    };
    Cow::Owned(elide_chars(&all_runs_elided, max_chars))
}

/// The ellipsis that stands for what was left out.
const ELLIPSIS: char = '…';

/// Whether a segment can be left out without unbalancing brackets (an
/// identifier or a `{{closure}}`).
fn is_plain(segment: &str) -> bool {
    !segment.is_empty()
        && !segment
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '<' | '>' | '(' | ')' | '[' | ']'))
}

/// The maximal runs `[start, end)` of plain segments strictly between the
/// first and the last segment.
fn plain_runs(segments: &[&str]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, segment) in segments
        .iter()
        .enumerate()
        .take(segments.len().saturating_sub(1))
        .skip(1)
    {
        match (is_plain(segment), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, segments.len() - 1));
    }
    runs
}

/// Step 1 of [`abbreviate`]: one run of plain segments replaced by `…`.
fn elide_segments(segments: &[&str], max_chars: usize) -> Option<String> {
    // prefix[i]: chars of segments[..i] with their `::` separators.
    let mut prefix = Vec::with_capacity(segments.len() + 1);
    prefix.push(0usize);
    for segment in segments {
        prefix.push(prefix.last().copied().unwrap_or(0) + segment.chars().count() + 2);
    }
    let total = prefix.last().copied().unwrap_or(0).saturating_sub(2);
    // Leaving out segments [i, j) (j > i) removes their chars and the `::`
    // between them, and adds one `…`.
    let shown = |i: usize, j: usize| total - (prefix[j] - prefix[i] - 2) + 1;
    let mut best: Option<(usize, usize)> = None;
    for (start, end) in plain_runs(segments) {
        for j in start + 1..=end {
            if best.is_some_and(|(_, bj)| bj <= j) {
                break;
            }
            // Fewer chars are shown the longer the run: if the whole run up
            // to j is too long, every shorter one is.
            if shown(start, j) > max_chars {
                continue;
            }
            // The latest start that fits is the shortest run ending at j.
            if let Some(i) = (start..j).rev().find(|&i| shown(i, j) <= max_chars) {
                best = Some((i, j));
                break;
            }
        }
    }
    best.map(|run| join_eliding(segments, &[run]))
}

/// The segments joined by `::`, each run `[start, end)` replaced by `…`.
fn join_eliding(segments: &[&str], runs: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < segments.len() {
        if i > 0 {
            out.push_str("::");
        }
        match runs.iter().find(|&&(start, _)| start == i) {
            Some(&(_, end)) => {
                out.push(ELLIPSIS);
                i = end;
            }
            None => {
                out.push_str(segments[i]);
                i += 1;
            }
        }
    }
    out
}

/// Step 2 of [`abbreviate`]: the middle characters replaced by `…`.
fn elide_chars(name: &str, max_chars: usize) -> String {
    let total = name.chars().count();
    if total <= max_chars {
        return name.to_owned();
    }
    let Some(room) = max_chars.checked_sub(1) else {
        return String::new();
    };
    let head = room / 3;
    let tail = room - head;
    let mut out: String = name.chars().take(head).collect();
    out.push(ELLIPSIS);
    out.extend(name.chars().skip(total - tail));
    out
}

/// Makes `name` safe to print as part of one line on a terminal.
///
/// - Control characters (C0, DEL, C1, which include newline, tab, escape
///   and `\u{85}`) and the line and paragraph separators U+2028/U+2029
///   become a space, as they would break the line or drive the terminal.
/// - Bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
///   U+2066–U+2069), which can make the text display in another order than
///   it is stored ("Trojan Source"), and invisible characters that can
///   make two different names look the same — zero-width space U+200B,
///   word joiner and invisible operators U+2060–U+2064, deprecated format
///   controls U+206A–U+206F, the byte order mark U+FEFF, the soft hyphen
///   U+00AD, the Mongolian vowel separator U+180E, interlinear annotation
///   U+FFF9–U+FFFB and tag characters U+E0000–U+E007F — are shown as
///   visible escapes such as `\u{202e}`.
/// - Zero-width joiner and non-joiner (U+200C, U+200D) and variation
///   selectors are kept: they are legitimate in labels (emoji sequences,
///   Persian and Indic scripts) and do not reorder text.
// Used by the text and CSV writers once they are wired to it.
#[allow(dead_code)]
pub(crate) fn terminal_safe(name: &str) -> Cow<'_, str> {
    if !name.chars().any(|c| is_line_breaking(c) || is_hidden(c)) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 16);
    for c in name.chars() {
        if is_line_breaking(c) {
            out.push(' ');
        } else if is_hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Characters that would break or drive a terminal line.
fn is_line_breaking(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Bidirectional controls and invisible format characters.
fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Neutralises a CSV field that a spreadsheet would run as a formula.
///
/// Following OWASP's CSV injection advice, a field starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return gets a leading `'`, which
/// spreadsheets take as "text" and do not show. Function paths cannot start
/// with these (they start with an identifier or `<`), but custom names
/// (`#[profile(name = "...")]`, `prof_scope!("...")` labels used as whole
/// names) can. The CSV writer must still quote the field as CSV requires
/// (commas, quotes, newlines); this only guards the first character.
// Used by the text and CSV writers once they are wired to it.
#[allow(dead_code)]
pub(crate) fn spreadsheet_safe(field: &str) -> Cow<'_, str> {
    if field.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{field}"))
    } else {
        Cow::Borrowed(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `type_name` outputs captured from rustc 1.95 (a scratch crate `app`
    /// printing the type name of a nested `fn __tickprof_here() {}` in each
    /// shape) and the canonical form each must give.
    const REAL: &[(&str, &str)] = &[
        // Free fn, inherent method, impl in another module.
        ("app::free::__tickprof_here", "app::free"),
        (
            "app::parser::Parser::next_token::__tickprof_here",
            "app::parser::Parser::next_token",
        ),
        (
            "app::other::<impl app::parser::Parser>::elsewhere::__tickprof_here",
            "app::parser::Parser::elsewhere",
        ),
        // Trait impls, same and other module; std traits by bare name.
        (
            "app::other::<impl core::str::traits::FromStr for app::c::Version>::from_str::__tickprof_here",
            "<app::c::Version as FromStr>::from_str",
        ),
        (
            "app::other::<impl app::Shape for app::c::Version>::area::__tickprof_here",
            "<app::c::Version as app::Shape>::area",
        ),
        (
            "<app::c::Version as app::Shape2>::area2::__tickprof_here",
            "<app::c::Version as app::Shape2>::area2",
        ),
        (
            "<app::c::Version as core::fmt::Display>::fmt::__tickprof_here",
            "<app::c::Version as Display>::fmt",
        ),
        (
            "<app::c::Version as core::ops::arith::Add>::add::__tickprof_here",
            "<app::c::Version as Add>::add",
        ),
        (
            "<app::c::Version as core::iter::traits::collect::FromIterator<u8>>::from_iter::__tickprof_here",
            "<app::c::Version as FromIterator<u8>>::from_iter",
        ),
        (
            "<app::c::Version as core::convert::From<u8>>::from::__tickprof_here",
            "<app::c::Version as From<u8>>::from",
        ),
        (
            "<app::c::Version as core::convert::AsRef<[u8]>>::as_ref::__tickprof_here",
            "<app::c::Version as AsRef<[u8]>>::as_ref",
        ),
        (
            "<app::c::Version as core::ops::index::Index<usize>>::index::__tickprof_here",
            "<app::c::Version as Index<usize>>::index",
        ),
        (
            "<app::c::Version as std::io::Write>::write::__tickprof_here",
            "<app::c::Version as Write>::write",
        ),
        (
            "<app::c::Version as core::ops::drop::Drop>::drop::__tickprof_here",
            "<app::c::Version as Drop>::drop",
        ),
        // Trait default method, generic fn.
        ("app::Shape::double_area::__tickprof_here", "app::Shape::double_area"),
        ("app::GenTr::g::__tickprof_here", "app::GenTr::g"),
        ("app::generic::__tickprof_here", "app::generic"),
        // Generic impls: type params, lifetimes, const generics, nesting.
        ("app::Stack<_>::push::__tickprof_here", "app::Stack::push"),
        ("app::Entry<'_, _, _>::insert::__tickprof_here", "app::Entry::insert"),
        ("app::Arr<_, N>::len::__tickprof_here", "app::Arr::len"),
        ("app::Arr<_, 3>::three::__tickprof_here", "app::Arr<_, 3>::three"),
        ("app::Arr<u8, 4>::concrete::__tickprof_here", "app::Arr<u8, 4>::concrete"),
        ("app::more::L<'_>::stat::__tickprof_here", "app::more::L::stat"),
        ("app::more::B<true>::t::__tickprof_here", "app::more::B<true>::t"),
        ("app::more::C<'x'>::c::__tickprof_here", "app::more::C<'x'>::c"),
        ("app::more::I<-1>::neg::__tickprof_here", "app::more::I<-1>::neg"),
        (
            "app::Nested<alloc::vec::Vec<core::option::Option<_>>>::nested::__tickprof_here",
            "app::Nested<Vec<Option<_>>>::nested",
        ),
        (
            "app::Nested<alloc::vec::Vec<u8>>::concrete_nested::__tickprof_here",
            "app::Nested<Vec<u8>>::concrete_nested",
        ),
        (
            "<app::Nested<_> as core::clone::Clone>::clone::__tickprof_here",
            "<app::Nested as Clone>::clone",
        ),
        (
            "app::m2::<impl app::Stack<_>>::pop2::__tickprof_here",
            "app::Stack::pop2",
        ),
        (
            "app::m2::<impl app::Entry<'_, _, _>>::other_insert::__tickprof_here",
            "app::Entry::other_insert",
        ),
        (
            "<app::Entry<'_, _, _> as app::Shape>::area::__tickprof_here",
            "<app::Entry as app::Shape>::area",
        ),
        // Generic traits.
        ("<app::Square as app::GenTr<_>>::h::__tickprof_here", "<app::Square as app::GenTr>::h"),
        (
            "<app::Stack<u8> as app::GenTr<u8>>::h::__tickprof_here",
            "<app::Stack<u8> as app::GenTr<u8>>::h",
        ),
        (
            "<app::Stack<_> as app::GenTr<alloc::vec::Vec<_>>>::h::__tickprof_here",
            "<app::Stack as app::GenTr<Vec<_>>>::h",
        ),
        (
            "app::m2::<impl app::GenTr2<_> for app::Stack<_>>::h2::__tickprof_here",
            "<app::Stack as app::GenTr2>::h2",
        ),
        (
            "app::m2::<impl core::convert::From<alloc::vec::Vec<_>> for app::Stack<_>>::from::__tickprof_here",
            "<app::Stack as From<Vec<_>>>::from",
        ),
        // Impls for references, slices, tuples, arrays, dyn, pointers, fns.
        ("<[_] as app::Named>::nm::__tickprof_here", "<[_] as app::Named>::nm"),
        ("<(u8, u16) as app::Named>::nm::__tickprof_here", "<(u8, u16) as app::Named>::nm"),
        ("<(_, _, u8) as app::Named>::nm::__tickprof_here", "<(_, _, u8) as app::Named>::nm"),
        ("<[u8; 4] as app::Named>::nm::__tickprof_here", "<[u8; 4] as app::Named>::nm"),
        ("<[_; N] as app::Named3>::nm3::__tickprof_here", "<[_; N] as app::Named3>::nm3"),
        ("<dyn app::Shape as app::Named>::nm::__tickprof_here", "<dyn app::Shape as app::Named>::nm"),
        (
            "<dyn app::Shape + core::marker::Send as app::Named>::nm::__tickprof_here",
            "<dyn app::Shape + Send as app::Named>::nm",
        ),
        (
            "<&mut dyn app::Shape as app::Named>::nm::__tickprof_here",
            "<&mut dyn app::Shape as app::Named>::nm",
        ),
        ("<*const u8 as app::Named>::nm::__tickprof_here", "<*const u8 as app::Named>::nm"),
        ("<fn(u8) -> u8 as app::Named>::nm::__tickprof_here", "<fn(u8) -> u8 as app::Named>::nm"),
        ("<u8 as app::Named>::nm::__tickprof_here", "<u8 as app::Named>::nm"),
        ("<str as app::Named>::nm::__tickprof_here", "<str as app::Named>::nm"),
        (
            "<alloc::boxed::Box<dyn app::Shape> as app::Named>::nm::__tickprof_here",
            "<Box<dyn app::Shape> as app::Named>::nm",
        ),
        ("<alloc::vec::Vec<_> as app::Named>::nm::__tickprof_here", "<Vec as app::Named>::nm"),
        (
            "<core::option::Option<app::Square> as app::Named>::nm::__tickprof_here",
            "<Option<app::Square> as app::Named>::nm",
        ),
        ("<_ as app::Named2>::nm2::__tickprof_here", "<_ as app::Named2>::nm2"),
        (
            "app::m2::<impl app::Named for app::parser::deep::Deep>::nm::__tickprof_here",
            "<app::parser::deep::Deep as app::Named>::nm",
        ),
        (
            "app::m2::<impl app::Named4 for &[app::parser::Parser]>::nm4::__tickprof_here",
            "<&[app::parser::Parser] as app::Named4>::nm4",
        ),
        (
            "app::m2::<impl app::Named for dyn app::Shape + core::marker::Sync>::nm::__tickprof_here",
            "<dyn app::Shape + Sync as app::Named>::nm",
        ),
        ("app::m2::<impl app::Named for u16>::nm::__tickprof_here", "<u16 as app::Named>::nm"),
        (
            "app::m2::<impl app::Named for core::option::Option<alloc::vec::Vec<_>>>::nm::__tickprof_here",
            "<Option<Vec<_>> as app::Named>::nm",
        ),
        (
            "app::more::<impl dyn app::Shape>::on_dyn::__tickprof_here",
            "<dyn app::Shape>::on_dyn",
        ),
        (
            "app::more::<impl app::Named for dyn core::iter::traits::iterator::Iterator<Item = u8>>::nm::__tickprof_here",
            "<dyn Iterator<Item = u8> as app::Named>::nm",
        ),
        (
            "app::more::<impl app::Named for alloc::boxed::Box<dyn core::ops::function::Fn(u8) -> u8>>::nm::__tickprof_here",
            "<Box<dyn Fn(u8) -> u8> as app::Named>::nm",
        ),
        (
            "app::more::<impl app::Named for fn(&'_ u8) -> &'_ u8>::nm::__tickprof_here",
            "<fn(&u8) -> &u8 as app::Named>::nm",
        ),
        ("app::more::<impl app::Named for ()>::nm::__tickprof_here", "<() as app::Named>::nm"),
        ("app::more::<impl app::Named for (u32,)>::nm::__tickprof_here", "<(u32,) as app::Named>::nm"),
        (
            "app::more::<impl app::Named for extern \"C\" fn(u8)>::nm::__tickprof_here",
            "<extern \"C\" fn(u8) as app::Named>::nm",
        ),
        (
            "app::more::<impl app::Named for unsafe fn()>::nm::__tickprof_here",
            "<unsafe fn() as app::Named>::nm",
        ),
        ("app::more::<impl app::Named for &str>::nm::__tickprof_here", "<&str as app::Named>::nm"),
        (
            "app::more::<impl app::Named for alloc::boxed::Box<dyn app::Shape + core::marker::Send>>::nm::__tickprof_here",
            "<Box<dyn app::Shape + Send> as app::Named>::nm",
        ),
        (
            "app::more::<impl app::Named for dyn core::ops::function::Fn(&'_ u8) -> u8>::nm::__tickprof_here",
            "<dyn Fn(&u8) -> u8 as app::Named>::nm",
        ),
        ("<app::more::W<_> as app::Named>::nm::__tickprof_here", "<app::more::W as app::Named>::nm"),
        (
            "<app::more::W<dyn core::ops::function::Fn(&'_ u8)> as app::Named2>::nm2::__tickprof_here",
            "<app::more::W<dyn Fn(&u8)> as app::Named2>::nm2",
        ),
        (
            "app::more::<impl app::Named for std::collections::hash::map::HashMap<u8, alloc::vec::Vec<(u8, &str)>>>::nm::__tickprof_here",
            "<HashMap<u8, Vec<(u8, &str)>> as app::Named>::nm",
        ),
        (
            "app::more::<impl app::Named for core::sync::atomic::AtomicUsize>::nm::__tickprof_here",
            "<AtomicUsize as app::Named>::nm",
        ),
        // Closures, async bodies, fns and impls nested in fns.
        ("app::closure_host::{{closure}}::__tickprof_here", "app::closure_host::{{closure}}"),
        (
            "app::closure_host::{{closure}}::{{closure}}::__tickprof_here",
            "app::closure_host::{{closure}}::{{closure}}",
        ),
        ("app::async_fn::{{closure}}::__tickprof_here", "app::async_fn::{{closure}}"),
        (
            "app::A::async_method::{{closure}}::__tickprof_here",
            "app::A::async_method::{{closure}}",
        ),
        (
            "<app::A as app::Shape>::area::{{closure}}::__tickprof_here",
            "<app::A as app::Shape>::area::{{closure}}",
        ),
        ("app::AsyncTr::at::{{closure}}::__tickprof_here", "app::AsyncTr::at::{{closure}}"),
        (
            "app::with_async_block::{{closure}}::__tickprof_here",
            "app::with_async_block::{{closure}}",
        ),
        (
            "app::with_async_closure::{{closure}}::{{closure}}::__tickprof_here",
            "app::with_async_closure::{{closure}}::{{closure}}",
        ),
        (
            "app::with_inline_const::{{constant}}::in_inline::__tickprof_here",
            "app::with_inline_const::{{constant}}::in_inline",
        ),
        ("app::S::in_static::__tickprof_here", "app::S::in_static"),
        ("app::G<_>::m::{{closure}}::__tickprof_here", "app::G::m::{{closure}}"),
        ("app::outer::inner::innermost::__tickprof_here", "app::outer::inner::innermost"),
        (
            "app::outer::Local::local_method::__tickprof_here",
            "app::outer::Local::local_method",
        ),
        (
            "<app::outer::Local as app::Shape>::area::__tickprof_here",
            "<app::outer::Local as app::Shape>::area",
        ),
        ("app::outer::LocalTr::lt::__tickprof_here", "app::outer::LocalTr::lt"),
        (
            "app::outer::{{closure}}::in_closure::__tickprof_here",
            "app::outer::{{closure}}::in_closure",
        ),
        (
            "app::block_impl::<impl app::Square>::in_block::__tickprof_here",
            "app::Square::in_block",
        ),
        ("app::_::<impl app::Square>::in_const::__tickprof_here", "app::Square::in_const"),
        (
            "<<app::more::Here as app::Shape>::area::Inner as app::Shape>::area::__tickprof_here",
            "<<app::more::Here as app::Shape>::area::Inner as app::Shape>::area",
        ),
        (
            "<app::more::Here as app::Shape>::area::Inner::inh::__tickprof_here",
            "<app::more::Here as app::Shape>::area::Inner::inh",
        ),
        // From marking every fn of semver 1.0.28 and indexmap 2.14.2.
        (
            "semver::display::<impl core::fmt::Display for semver::Version>::fmt::__tickprof_here",
            "<semver::Version as Display>::fmt",
        ),
        (
            "<semver::serde::<impl serde_core::de::Deserialize<'_> for semver::Version>::deserialize::VersionVisitor as serde_core::de::Visitor<'_>>::visit_str::__tickprof_here",
            "<<semver::Version as serde_core::de::Deserialize>::deserialize::VersionVisitor as serde_core::de::Visitor>::visit_str",
        ),
        (
            "<indexmap::map::entry::IndexedEntry<'_, _, _> as core::convert::From<indexmap::inner::entry::OccupiedEntry<'_, _, _>>>::from::__tickprof_here",
            "<indexmap::map::entry::IndexedEntry as From<indexmap::inner::entry::OccupiedEntry<_, _>>>::from",
        ),
        (
            "indexmap::set::slice::<impl core::default::Default for alloc::boxed::Box<indexmap::set::slice::Slice<_>>>::default::__tickprof_here",
            "<Box<indexmap::set::slice::Slice<_>> as Default>::default",
        ),
        (
            "indexmap::rayon::set::<impl rayon::iter::ParallelExtend<&_> for indexmap::set::IndexSet<_, _>>::par_extend::__tickprof_here",
            "<indexmap::set::IndexSet as rayon::iter::ParallelExtend<&_>>::par_extend",
        ),
        (
            "<indexmap::set::iter::Drain<'_, _> as core::iter::traits::exact_size::ExactSizeIterator>::len::__tickprof_here",
            "<indexmap::set::iter::Drain as ExactSizeIterator>::len",
        ),
        // Raw identifiers print without `r#`.
        ("app::Type::match::__tickprof_here", "app::Type::match"),
        ("app::async::fn::__tickprof_here", "app::async::fn"),
    ];

    #[test]
    fn every_real_shape_gets_its_canonical_form() {
        let wrong: Vec<String> = REAL
            .iter()
            .filter(|(raw, want)| clean_path(raw) != *want)
            .map(|(raw, want)| format!("{raw}\n  got  {}\n  want {want}", clean_path(raw)))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn the_canonical_form_is_a_fixed_point() {
        for (_, shown) in REAL {
            assert_eq!(clean_path(shown), *shown);
        }
    }

    #[test]
    fn unparsable_input_falls_back_to_placeholder_removal() {
        assert_eq!(
            clean_path("app::Foo<_>::bar::<<oops"),
            "app::Foo::bar::<<oops"
        );
        assert_eq!(
            clean_path("app::E<'_, _>::f::(::__tickprof_here"),
            "app::E::f::("
        );
        assert_eq!(clean_path(""), "");
        assert_eq!(clean_path("__tickprof_here"), "");
    }

    #[test]
    fn the_marker_never_survives() {
        assert_eq!(clean_path("a::__tickprof_here::b"), "a::b");
        assert_eq!(clean_path("__tickprof___tickprof_herehere"), "");
        assert_eq!(clean_path("x<__tickprof_here"), "x<");
    }

    #[test]
    fn deep_nesting_is_bounded_not_overflowed() {
        let deep = format!("a::{}_{}::f", "B<".repeat(10_000), ">".repeat(10_000));
        let out = clean_path(&deep);
        assert!(out.ends_with("::f"), "{}", &out[out.len() - 10..]);
        let shallow = format!("a::{}u8{}::f", "B<".repeat(10), ">".repeat(10));
        assert_eq!(clean_path(&shallow), shallow);
    }

    #[test]
    fn abbreviate_is_identity_when_the_name_fits() {
        let name = "app::parser::Parser::next_token";
        assert!(matches!(abbreviate(name, 31), Cow::Borrowed(n) if n == name));
        assert!(matches!(abbreviate(name, 100), Cow::Borrowed(_)));
        assert_eq!(abbreviate("", 0), "");
    }

    #[test]
    fn abbreviate_elides_whole_middle_segments_first() {
        let name = "myapp::parser::lexer::Parser::next_token";
        assert_eq!(abbreviate(name, 35), "myapp::…::lexer::Parser::next_token");
        assert_eq!(abbreviate(name, 29), "myapp::…::Parser::next_token");
        assert_eq!(abbreviate(name, 21), "myapp::…::next_token");
        // Room left over after the tail goes to more leading segments.
        let long_middle = "ab::cd::efghijklmnop::qr::stuvwxyz";
        assert_eq!(abbreviate(long_middle, 24), "ab::cd::…::qr::stuvwxyz");
    }

    #[test]
    fn abbreviate_keeps_brackets_balanced_in_qualified_names() {
        let name = "<semver::parse::Version as FromStr>::from_str";
        assert_eq!(
            abbreviate(name, 41),
            "<semver::…::Version as FromStr>::from_str"
        );
        // The type's modules go first, the trait's if that is not enough.
        let both = "<a::bb::cc::T as x::yy::zz::Tr>::m";
        assert_eq!(abbreviate(both, 30), "<a::…::T as x::yy::zz::Tr>::m");
        assert_eq!(abbreviate(both, 25), "<a::…::T as x::…::Tr>::m");
        let generic = "<app::mod_a::Stack<u8> as app::mod_b::GenTr<app::mod_c::Item>>::h";
        assert_eq!(
            abbreviate(generic, 61),
            "<app::…::Stack<u8> as app::mod_b::GenTr<app::mod_c::Item>>::h"
        );
        assert_eq!(
            abbreviate(generic, 53),
            "<app::…::Stack<u8> as app::…::GenTr<app::…::Item>>::h"
        );
    }

    #[test]
    fn abbreviate_falls_back_to_characters() {
        let name = "myapp::parser::Parser::a_very_long_method_name_indeed";
        let short = abbreviate(name, 20);
        assert_eq!(short.chars().count(), 20);
        assert!(short.starts_with("myapp:"), "{short}");
        assert!(short.ends_with("_name_indeed"), "{short}");
        assert!(short.contains('…'));
        assert_eq!(abbreviate(name, 1), "…");
        assert_eq!(abbreviate(name, 0), "");
        // Multi-byte characters are counted and never split.
        let wide = "äöü::ßßß::ééé::ñññ";
        for max in 0..wide.chars().count() {
            let out = abbreviate(wide, max);
            assert!(out.chars().count() <= max, "{out} > {max}");
        }
    }

    #[test]
    fn a_ten_thousand_character_name_is_cut_to_the_column() {
        let name = format!("app::{}::method", "x".repeat(10_000));
        assert_eq!(abbreviate(&name, 78), "app::…::method");
        let one_segment = "x".repeat(10_000);
        let out = abbreviate(&one_segment, 78);
        assert_eq!(out.chars().count(), 78);
    }

    #[test]
    fn terminal_safe_blanks_controls_and_escapes_bidi_and_invisibles() {
        assert!(matches!(terminal_safe("app::f"), Cow::Borrowed("app::f")));
        assert_eq!(terminal_safe("a\nb\tc\u{1b}[31m"), "a b c [31m");
        assert_eq!(terminal_safe("a\u{2028}b"), "a b");
        assert_eq!(
            terminal_safe("admin\u{202e}gpj.exe"),
            "admin\\u{202e}gpj.exe"
        );
        assert_eq!(terminal_safe("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        assert_eq!(terminal_safe("a\u{200b}b\u{feff}"), "a\\u{200b}b\\u{feff}");
        assert_eq!(terminal_safe("\u{e0041}"), "\\u{e0041}");
        // Joiners in emoji sequences and scripts are kept.
        let family = "👨\u{200d}👩\u{200d}👧";
        assert!(matches!(terminal_safe(family), Cow::Borrowed(_)));
        assert!(matches!(terminal_safe("می\u{200c}خواهم"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_bidi_control_is_escaped() {
        let bidi = ['\u{061c}', '\u{200e}', '\u{200f}']
            .into_iter()
            .chain('\u{202a}'..='\u{202e}')
            .chain('\u{2066}'..='\u{2069}');
        for c in bidi {
            let out = terminal_safe(&c.to_string()).into_owned();
            assert_eq!(out, format!("\\u{{{:x}}}", c as u32));
        }
    }

    #[test]
    fn spreadsheet_safe_quotes_formula_starts_only() {
        for bad in ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(spreadsheet_safe(bad), format!("'{bad}"));
        }
        for fine in ["app::f", "<app::X as Tr>::f", "", "a=b", " =x"] {
            assert!(matches!(spreadsheet_safe(fine), Cow::Borrowed(f) if f == fine));
        }
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// Strings made of the tokens `type_name` output is built from, so
        /// the parser's paths are exercised, not only the fallback.
        fn tokens() -> impl Strategy<Value = String> {
            let token = prop::sample::select(vec![
                "app",
                "::",
                "<",
                ">",
                "impl ",
                " for ",
                " as ",
                "_",
                "'_",
                ", ",
                "&",
                "mut ",
                "dyn ",
                " + ",
                "(",
                ")",
                "[",
                "]",
                "; ",
                "{{closure}}",
                "core",
                "fn",
                " -> ",
                "__tickprof_here",
                "3",
                "é",
                "\u{202e}",
            ]);
            prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
        }

        /// Types in the shapes `type_name` prints, nested.
        fn types() -> impl Strategy<Value = String> {
            let leaf = prop::sample::select(vec![
                "u8",
                "_",
                "str",
                "app::m::T",
                "core::option::Option<u8>",
                "N",
                "3",
            ])
            .prop_map(str::to_owned);
            leaf.prop_recursive(4, 24, 3, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 1..3)
                        .prop_map(|args| format!("app::m::G<'_, {}>", args.join(", "))),
                    prop::collection::vec(inner.clone(), 1..3)
                        .prop_map(|args| format!("alloc::vec::Vec<{}>", args.join(", "))),
                    inner.clone().prop_map(|t| format!("&'_ mut {t}")),
                    inner.clone().prop_map(|t| format!("[{t}]")),
                    inner.clone().prop_map(|t| format!("[{t}; 4]")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
                    inner
                        .clone()
                        .prop_map(|t| format!("dyn app::Tr<{t}> + core::marker::Send")),
                    inner.clone().prop_map(|t| format!("fn({t}) -> {t}")),
                ]
            })
        }

        /// Marker paths in every shape, built from [`types`].
        fn marker_paths() -> impl Strategy<Value = String> {
            let t = types;
            prop_oneof![
                Just("app::m::f".to_owned()),
                t().prop_map(|a| format!("app::m::S<{a}>::f")),
                (t(), t()).prop_map(|(a, b)| format!("<{a} as app::Tr<{b}>>::f")),
                (t(), t()).prop_map(|(a, b)| format!("app::x::<impl app::Tr<{b}> for {a}>::f")),
                t().prop_map(|a| format!("app::x::<impl core::str::traits::FromStr for {a}>::f")),
                t().prop_map(|a| format!("app::x::<impl app::m::S<{a}>>::f")),
            ]
            .prop_flat_map(|p| {
                prop::sample::select(vec!["", "::{{closure}}", "::g::{{closure}}"])
                    .prop_map(move |tail| format!("{p}{tail}::__tickprof_here"))
            })
        }

        proptest! {
            #[test]
            fn every_generated_shape_parses_into_the_canonical_form(raw in marker_paths()) {
                let trimmed = raw.strip_suffix("::__tickprof_here").unwrap_or(&raw);
                let parsed = Parser::new(trimmed).whole_path();
                prop_assert!(parsed.is_some(), "did not parse: {}", raw);
                let out = clean_path(&raw);
                prop_assert!(!out.contains("<impl "), "{}", out);
                prop_assert!(!out.contains('\''), "{}", out);
                prop_assert!(!out.contains("core::") && !out.contains("alloc::"), "{}", out);
                prop_assert!(out.ends_with("f") || out.ends_with("{{closure}}"), "{}", out);
                prop_assert_eq!(clean_path(&out), out.clone());
            }

            #[test]
            fn clean_path_never_panics_nor_shows_the_marker(raw in any::<String>()) {
                let out = clean_path(&raw);
                prop_assert!(!out.contains(MARKER));
            }

            #[test]
            fn clean_path_on_token_soup(raw in tokens()) {
                let out = clean_path(&raw);
                prop_assert!(!out.contains(MARKER));
            }

            #[test]
            fn a_parsed_name_is_a_fixed_point(raw in tokens()) {
                if let Some(once) = Parser::new(&raw).whole_path() {
                    let twice = Parser::new(&once).whole_path();
                    prop_assert_eq!(twice.as_deref(), Some(once.as_str()), "from {}", raw);
                }
            }

            #[test]
            fn abbreviate_fits_and_keeps_the_ends(name in any::<String>(), max in 0usize..100) {
                let out = abbreviate(&name, max);
                let n = name.chars().count();
                prop_assert!(out.chars().count() <= max);
                if n <= max {
                    prop_assert_eq!(out.as_ref(), name.as_str());
                } else if max > 1 {
                    prop_assert!(out.contains('…'));
                    let last: String = name.chars().skip(n - 1).collect();
                    prop_assert!(out.ends_with(&last));
                    if max > 3 {
                        prop_assert!(out.starts_with(name.chars().next().unwrap_or('…')));
                    }
                }
            }

            #[test]
            fn abbreviate_fits_path_like_names(name in tokens(), max in 0usize..60) {
                let out = abbreviate(&name, max);
                prop_assert!(out.chars().count() <= max);
                if name.chars().count() <= max {
                    prop_assert_eq!(out.as_ref(), name.as_str());
                }
            }

            #[test]
            fn terminal_safe_leaves_no_control_or_bidi(name in any::<String>()) {
                let out = terminal_safe(&name);
                prop_assert!(!out.chars().any(|c| is_line_breaking(c) || is_hidden(c)));
            }

            #[test]
            fn spreadsheet_safe_output_never_starts_a_formula(field in any::<String>()) {
                let out = spreadsheet_safe(&field);
                prop_assert!(!out.starts_with(['=', '+', '-', '@', '\t', '\r']));
                prop_assert!(out.ends_with(field.as_str()));
            }
        }
    }
}
