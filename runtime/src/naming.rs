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

mod fit;
mod parser;

pub(crate) use fit::{abbreviate, spreadsheet_safe, terminal_safe};
use parser::Parser;

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

#[cfg(test)]
mod tests;
