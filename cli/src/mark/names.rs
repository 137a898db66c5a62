//! Report-like names for the `--mark`/`--skip` globs: the type and trait
//! of an `impl`, resolved through the `use` items in scope, written the way
//! reports write them (`<app::shapes::Square as util::Shape>::area`;
//! paths into `std`, `core` and `alloc` by their bare name).
//!
//! Without name resolution this is a guess: where a path could mean two
//! things (a local module or an external crate, a local trait or one of
//! the prelude) every reading is a candidate, and a glob matching any
//! candidate matches the function.

use std::collections::HashMap;
use syn::{Item, Type, UseTree};

/// Names brought into a module by its `use` items: name → full path.
pub(super) type Uses = HashMap<String, Vec<String>>;

/// Traits of the prelude a bare trait name most likely means.
const PRELUDE: &[&str] = &[
    "Clone",
    "Copy",
    "Default",
    "Drop",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Extend",
    "FromIterator",
    "From",
    "Into",
    "TryFrom",
    "TryInto",
    "AsRef",
    "AsMut",
    "Fn",
    "FnMut",
    "FnOnce",
    "Send",
    "Sync",
    "ToString",
    "ToOwned",
];

/// The `use` items among `items`.
pub(super) fn uses_of(items: &[Item]) -> Uses {
    fn walk(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Uses) {
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            UseTree::Name(n) if n.ident == "self" => {
                if let Some(last) = prefix.last() {
                    out.insert(last.clone(), prefix.clone());
                }
            }
            UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                out.insert(n.ident.to_string(), full);
            }
            UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.insert(r.rename.to_string(), full);
            }
            UseTree::Group(g) => g.items.iter().for_each(|t| walk(t, prefix, out)),
            UseTree::Glob(_) => {}
        }
    }
    let mut out = Uses::new();
    for item in items {
        if let Item::Use(u) = item {
            let mut prefix = Vec::new();
            if u.leading_colon.is_some() {
                prefix.push(String::new());
            }
            walk(&u.tree, &mut prefix, &mut out);
        }
    }
    out
}

/// The segments of a path type, without generic arguments; `None` for
/// other types.
pub(super) fn segments(ty: &Type) -> Option<Vec<String>> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let mut out: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            if p.path.leading_colon.is_some() {
                out.insert(0, String::new());
            }
            Some(out)
        }
        Type::Group(g) => segments(&g.elem),
        Type::Paren(p) => segments(&p.elem),
        _ => None,
    }
}

/// The candidate full names of `path` written in module `module` (crate
/// name first), with `uses` the `use` maps in scope (innermost last).
pub(super) fn resolve(
    path: &[String],
    module: &[String],
    uses: &[Uses],
    is_trait: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    resolve_into(path, module, uses, is_trait, 0, &mut out);
    let mut shown: Vec<String> = out.into_iter().map(|p| shown(&p)).collect();
    shown.dedup();
    shown
}

fn resolve_into(
    path: &[String],
    module: &[String],
    uses: &[Uses],
    is_trait: bool,
    depth: usize,
    out: &mut Vec<Vec<String>>,
) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let join = |head: &[String]| head.iter().chain(rest).cloned().collect::<Vec<_>>();
    let krate = &module[..1.min(module.len())];
    match first.as_str() {
        "" | "std" | "core" | "alloc" => {
            out.push(path.iter().filter(|s| !s.is_empty()).cloned().collect())
        }
        "crate" => out.push(join(krate)),
        "self" => out.push(join(module)),
        "super" => {
            let mut m = module.to_vec();
            let mut rest = rest;
            m.pop();
            while let Some(("super", r)) = rest.split_first().map(|(s, r)| (s.as_str(), r)) {
                m.pop();
                rest = r;
            }
            out.push(m.into_iter().chain(rest.iter().cloned()).collect());
        }
        _ => {
            let imported = uses.iter().rev().find_map(|u| u.get(first));
            match imported {
                Some(full) if depth < 4 => {
                    let full: Vec<String> = full.iter().chain(rest).cloned().collect();
                    // A `use` path is relative to the crate root in 2015,
                    // to the module in 2018+: both readings.
                    resolve_into(&full, module, uses, is_trait, depth + 1, out);
                    if !matches!(
                        full[0].as_str(),
                        "" | "crate" | "self" | "super" | "std" | "core" | "alloc"
                    ) {
                        out.push(module.iter().chain(&full).cloned().collect());
                    }
                }
                _ if path.len() == 1 && is_trait && PRELUDE.contains(&first.as_str()) => {
                    out.push(path.to_vec());
                }
                _ => {
                    // Defined here, or (several segments) an external crate.
                    if path.len() > 1 {
                        out.push(path.to_vec());
                    }
                    out.push(module.iter().chain(path).cloned().collect());
                    if path.len() == 1 && is_trait {
                        out.push(path.to_vec());
                    }
                }
            }
        }
    }
}

/// A full path as reports show it: paths into `std`, `core` and `alloc`
/// by their last segment.
fn shown(path: &[String]) -> String {
    match path.first().map(String::as_str) {
        Some("std" | "core" | "alloc") => path.last().cloned().unwrap_or_default(),
        _ => path.join("::"),
    }
}

#[cfg(test)]
mod tests {
    use super::{resolve, uses_of};

    #[test]
    fn resolves_through_uses() {
        let file: syn::File = syn::parse_str(
            "use util::Shape; use std::fmt::{self, Display as Show}; use crate::other::Thing;\n\
             use super::up::Up;",
        )
        .unwrap();
        let uses = [uses_of(&file.items)];
        let m: Vec<String> = ["app", "m"].map(String::from).to_vec();
        let r = |p: &str, t: bool| {
            let path: Vec<String> = p.split("::").map(String::from).collect();
            resolve(&path, &m, &uses, t)
        };
        assert_eq!(r("Shape", true), ["util::Shape", "app::m::util::Shape"]);
        assert_eq!(r("Show", true), ["Display"]);
        assert_eq!(r("fmt::Debug", true), ["Debug"]);
        assert_eq!(r("Thing", false), ["app::other::Thing"]);
        assert_eq!(r("Up", false), ["app::up::Up"]);
        assert_eq!(r("Local", false), ["app::m::Local"]);
        assert_eq!(r("Clone", true), ["Clone"]);
        assert_eq!(r("MyTrait", true), ["app::m::MyTrait", "MyTrait"]);
        assert_eq!(r("crate::a::B", false), ["app::a::B"]);
        assert_eq!(r("ext::B", false), ["ext::B", "app::m::ext::B"]);
    }
}
