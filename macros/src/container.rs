//! `#[profile]` on an `impl`, a `trait` or an inline `mod`: every function
//! with a body inside is marked exactly as if it carried `#[profile]`.
//!
//! The container is parsed once and each function expanded once, by the
//! same [`instrument`](crate::expand::instrument) a function marked on its
//! own goes through, so names, behaviour and compile cost match marks
//! written one by one. Inside a marked container:
//!
//! - a function with a body is marked; one `#[profile]` cannot mark
//!   (`const fn`, C-variadic, a returned future whose body is not one
//!   `async` block, `default fn`) is left alone, without an error;
//! - a trait method without a body, `macro_rules!` and item macros are
//!   left alone (a `mod foo;` inside is rejected by rustc itself: file
//!   modules in attribute-macro input are unstable);
//! - nested inline `mod`s, `impl`s and `trait`s are marked recursively;
//! - `#[profile(skip)]` on a function or a nested container leaves it
//!   unmarked; any other `#[profile(...)]` keeps its own options (taking
//!   the container's `crate = path` unless it gives its own) and marks
//!   the function once. `#[profile]`, `#[tickprof::profile]`,
//!   `#[::tickprof::profile]` and `#[<crate path>::profile]` are
//!   recognised; the attribute is removed in both feature settings.

use crate::args::{self, Args};
use crate::expand::instrument;
use crate::item::{self, Marked};
use crate::push_error;
use proc_macro2::{Delimiter, TokenStream as TokenStream2, TokenTree};
use quote::{quote, ToTokens};
use syn::{
    Attribute, Error, ImplItem, ImplItemFn, Item, ItemFn, Meta, Path, Result, TraitItem,
    TraitItemFn, Visibility,
};

/// Whether the item's keyword (after attributes and visibility) is
/// `impl`, `trait` or `mod`: a cheap look before parsing, so a function
/// is parsed once.
pub(crate) fn looks_like_container(item: &TokenStream2) -> bool {
    for token in item.clone() {
        match token {
            TokenTree::Ident(ident) if ident == "impl" || ident == "trait" || ident == "mod" => {
                return true
            }
            TokenTree::Ident(ident) if ident == "fn" => return false,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return false,
            _ => {}
        }
    }
    false
}

/// The expansion of `#[profile(args)]` on a container: errors (if any),
/// then the container with its functions marked (or, with `enabled` off
/// or invalid arguments, unmarked), and the inner `#[profile(...)]`
/// attributes removed.
pub(crate) fn expand(args: Result<Args>, mut item: Item, enabled: bool) -> TokenStream2 {
    let mut walker = Walker {
        enabled,
        errors: None,
    };
    let args = match args.and_then(|args| check_container(&args, &item, true).map(|()| args)) {
        Ok(args) => args,
        Err(error) => {
            // Still remove (and check) the inner marks, so `skip` does not
            // fail to resolve and only the real errors are shown.
            walker.enabled = false;
            push_error(&mut walker.errors, error);
            Args::default()
        }
    };
    walker.container(&mut item, &args);
    let errors = walker.errors.map(crate::compile_errors);
    quote!(#errors #item)
}

/// Checks the arguments of a mark on a container: no `name` and no `fail`
/// (they belong to one function), no `skip` at the top, and a body to see.
fn check_container(args: &Args, item: &Item, top: bool) -> Result<()> {
    let what = match item {
        Item::Impl(_) => "an impl block",
        Item::Trait(_) => "a trait",
        _ => "a module",
    };
    let mut errors = None;
    if let Some(name) = &args.name {
        push_error(
            &mut errors,
            Error::new(
                name.span(),
                format!(
                    "`name` names one function, not {what}; put \
                     #[profile(name = {})] on the function inside",
                    name.to_token_stream()
                ),
            ),
        );
    }
    if let Some(fail) = &args.fail {
        push_error(
            &mut errors,
            Error::new(
                fail.span(),
                format!(
                    "`fail` is chosen per function, not for {what}; put \
                     #[profile(fail)] on each function inside that returns a `Result`"
                ),
            ),
        );
    }
    if let (Some(skip), true) = (&args.skip, top) {
        push_error(
            &mut errors,
            Error::new(
                skip.span(),
                "`skip` opts an item out of a marked `impl`, `trait` or `mod` and has no \
                 meaning here; remove #[profile(skip)] to leave it unmarked",
            ),
        );
    }
    if let Item::Mod(module) = item {
        if module.content.is_none() {
            let mut tokens = module.mod_token.to_token_stream();
            module.ident.to_tokens(&mut tokens);
            push_error(
                &mut errors,
                Error::new_spanned(
                    tokens,
                    "#[profile] cannot see the items of a module in another file; \
                     put #[profile] on the impl blocks and functions in that file, \
                     or write the module inline as `mod name { ... }`",
                ),
            );
        }
    }
    errors.map_or(Ok(()), Err)
}

/// The `skip` error when other options are given beside it.
fn skip_alone(args: &Args) -> Result<()> {
    match (
        &args.skip,
        args.name.is_some()
            || args.krate.is_some()
            || args.fail.is_some()
            || args.always.is_some()
            || args.once.is_some(),
    ) {
        (Some(skip), true) => Err(Error::new(
            skip.span(),
            "`skip` leaves the item unmarked and takes no other option; \
             write #[profile(skip)] alone, or remove `skip`",
        )),
        _ => Ok(()),
    }
}

/// Walks a container, marking functions and collecting errors.
struct Walker {
    /// Whether functions are instrumented (else only checked).
    enabled: bool,
    /// Every error found, combined.
    errors: Option<Error>,
}

/// What became of one function.
enum Done {
    /// Replaced by its expansion.
    Marked(TokenStream2),
    /// Kept as it was, apart from its removed `#[profile(...)]`.
    Kept(Box<ItemFn>),
}

impl Walker {
    /// Marks the functions of a container item (`impl`, `trait`, `mod`
    /// with a body) with `args`; other items are left alone.
    fn container(&mut self, item: &mut Item, args: &Args) {
        match item {
            Item::Impl(block) => {
                for member in &mut block.items {
                    let taken = std::mem::replace(member, ImplItem::Verbatim(TokenStream2::new()));
                    *member = self.impl_item(taken, args);
                }
            }
            Item::Trait(block) => {
                for member in &mut block.items {
                    let taken = std::mem::replace(member, TraitItem::Verbatim(TokenStream2::new()));
                    *member = self.trait_item(taken, args);
                }
            }
            Item::Mod(module) => {
                if let Some((_, items)) = &mut module.content {
                    for member in items {
                        let taken = std::mem::replace(member, Item::Verbatim(TokenStream2::new()));
                        *member = self.mod_item(taken, args);
                    }
                }
            }
            _ => {}
        }
    }

    /// One item of an inline module.
    fn mod_item(&mut self, item: Item, args: &Args) -> Item {
        match item {
            Item::Fn(func) => match self.function(func, args) {
                Done::Marked(tokens) => Item::Verbatim(tokens),
                Done::Kept(func) => Item::Fn(*func),
            },
            mut nested @ (Item::Impl(_) | Item::Trait(_) | Item::Mod(_)) => {
                self.nested(&mut nested, args);
                nested
            }
            other => other,
        }
    }

    /// A container inside a marked module: marked with the outer
    /// arguments, or its own, or not at all (`skip`).
    fn nested(&mut self, item: &mut Item, args: &Args) {
        let attrs = match item {
            Item::Impl(i) => &mut i.attrs,
            Item::Trait(t) => &mut t.attrs,
            Item::Mod(m) => &mut m.attrs,
            _ => return,
        };
        let own = match take_mark(attrs, args.krate.as_ref()) {
            None if matches!(item, Item::Mod(m) if m.content.is_none()) => return,
            None => None,
            Some(own) => {
                match own.and_then(|own| {
                    skip_alone(&own)?;
                    check_container(&own, item, false)?;
                    Ok(own)
                }) {
                    Ok(own) if own.skip.is_some() => return,
                    Ok(own) => Some(inherit(own, args)),
                    Err(error) => {
                        // Still remove (and check) the marks inside.
                        push_error(&mut self.errors, error);
                        let enabled = std::mem::replace(&mut self.enabled, false);
                        self.container(item, args);
                        self.enabled = enabled;
                        return;
                    }
                }
            }
        };
        self.container(item, own.as_ref().unwrap_or(args));
    }

    /// One item of an `impl` block.
    fn impl_item(&mut self, item: ImplItem, args: &Args) -> ImplItem {
        let ImplItem::Fn(method) = item else {
            return item;
        };
        if method.defaultness.is_some() {
            return ImplItem::Fn(method);
        }
        let ImplItemFn {
            attrs,
            vis,
            defaultness,
            sig,
            block,
        } = method;
        let func = ItemFn {
            attrs,
            vis,
            sig,
            block: Box::new(block),
        };
        match self.function(func, args) {
            Done::Marked(tokens) => ImplItem::Verbatim(tokens),
            Done::Kept(func) => ImplItem::Fn(ImplItemFn {
                attrs: func.attrs,
                vis: func.vis,
                defaultness,
                sig: func.sig,
                block: *func.block,
            }),
        }
    }

    /// One item of a trait: default methods are marked, the others keep
    /// only their `skip` removed.
    fn trait_item(&mut self, item: TraitItem, args: &Args) -> TraitItem {
        let TraitItem::Fn(mut method) = item else {
            return item;
        };
        let Some(block) = method.default.take() else {
            if let Some(own) = take_mark(&mut method.attrs, args.krate.as_ref()) {
                match own {
                    Ok(own) if own.skip.is_some() => {}
                    Ok(_) => {
                        if let Err(error) = item::parse_item(&method.to_token_stream()) {
                            push_error(&mut self.errors, error);
                        }
                    }
                    Err(error) => push_error(&mut self.errors, error),
                }
            }
            return TraitItem::Fn(method);
        };
        let TraitItemFn {
            attrs,
            sig,
            semi_token,
            ..
        } = method;
        let func = ItemFn {
            attrs,
            vis: Visibility::Inherited,
            sig,
            block: Box::new(block),
        };
        match self.function(func, args) {
            Done::Marked(tokens) => TraitItem::Verbatim(tokens),
            Done::Kept(func) => TraitItem::Fn(TraitItemFn {
                attrs: func.attrs,
                sig: func.sig,
                default: Some(*func.block),
                semi_token,
            }),
        }
    }

    /// One function with a body: marked with the container's arguments,
    /// with its own, or left alone.
    fn function(&mut self, mut func: ItemFn, args: &Args) -> Done {
        let Some(own) = take_mark(&mut func.attrs, args.krate.as_ref()) else {
            // Marked by the container: what `#[profile]` cannot mark is
            // left alone.
            let Ok(kind) = item::kind_of(&func) else {
                return Done::Kept(Box::new(func));
            };
            if !self.enabled {
                return Done::Kept(Box::new(func));
            }
            return Done::Marked(instrument(args, Marked { func, kind }));
        };
        // Its own mark: checked as that mark would check it.
        let own = match own.and_then(|own| skip_alone(&own).map(|()| own)) {
            Ok(own) if own.skip.is_some() => return Done::Kept(Box::new(func)),
            Ok(own) => inherit(own, args),
            Err(error) => {
                push_error(&mut self.errors, error);
                return Done::Kept(Box::new(func));
            }
        };
        let kind = match item::kind_of(&func) {
            Ok(kind) => kind,
            Err(error) => {
                push_error(&mut self.errors, error);
                return Done::Kept(Box::new(func));
            }
        };
        let marked = Marked { func, kind };
        if let Err(error) = crate::fail::check(&own, &marked) {
            push_error(&mut self.errors, error);
            return Done::Kept(Box::new(marked.func));
        }
        if !self.enabled {
            return Done::Kept(Box::new(marked.func));
        }
        Done::Marked(instrument(&own, marked))
    }
}

/// `own` with the container's `crate = path` when it gives none, and its
/// `always` and `once`.
fn inherit(mut own: Args, outer: &Args) -> Args {
    if own.krate.is_none() {
        own.krate.clone_from(&outer.krate);
    }
    if own.always.is_none() {
        own.always.clone_from(&outer.always);
    }
    if own.once.is_none() {
        own.once.clone_from(&outer.once);
    }
    own
}

/// Removes the `#[profile(...)]` attributes from `attrs` and returns the
/// first one's parsed arguments (an error for a second one, or for
/// `#[profile = ...]`).
fn take_mark(attrs: &mut Vec<Attribute>, krate: Option<&Path>) -> Option<Result<Args>> {
    let mut found: Option<Result<Args>> = None;
    attrs.retain(|attr| {
        if !is_profile(attr.path(), krate) {
            return true;
        }
        let parsed = match &attr.meta {
            Meta::Path(_) => Ok(Args::default()),
            Meta::List(list) => args::parse_args(list.tokens.clone()),
            Meta::NameValue(nv) => Err(Error::new_spanned(
                nv.eq_token,
                "write the options in parentheses: #[profile(...)]",
            )),
        };
        match &mut found {
            None => found = Some(parsed),
            Some(first) => {
                let again = Error::new_spanned(
                    attr.path(),
                    "#[profile] is given more than once on this item; keep one",
                );
                match first {
                    Ok(_) => *first = Err(again),
                    Err(error) => error.combine(again),
                }
            }
        }
        false
    });
    found
}

/// Whether `path` names the `profile` attribute: `profile`,
/// `tickprof::profile`, `::tickprof::profile` or `<crate>::profile` for the
/// container's `crate = <crate>`.
fn is_profile(path: &Path, krate: Option<&Path>) -> bool {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let Some((last, prefix)) = names.split_last() else {
        return false;
    };
    if last != "profile" {
        return false;
    }
    if prefix.is_empty() || prefix == ["tickprof"] {
        return true;
    }
    krate.is_some_and(|krate| {
        krate.segments.len() == prefix.len()
            && krate.segments.iter().zip(prefix).all(|(s, p)| s.ident == p)
    })
}

#[cfg(test)]
mod tests;
