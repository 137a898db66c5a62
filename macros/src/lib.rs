//! Procedural macros for [tickprof]: the `#[profile]` attribute.
//!
//! Do not depend on this crate directly: use the `tickprof` crate, which
//! re-exports [`macro@profile`] and provides the runtime items the expansion
//! refers to (`tickprof::__private::{CallSite, Guard, path_of}`).
//!
//! This crate only parses, validates and generates code. Everything the
//! generated code does at run time (reading the clock, registering call sites,
//! accumulating and reporting) lives in `tickprof-runtime`.
//!
//! [tickprof]: https://docs.rs/tickprof
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod args;
mod container;
mod expand;
mod fail;
mod future;
mod item;
mod twin;

use proc_macro::TokenStream;
use proc_macro2::{TokenStream as TokenStream2, TokenTree};
use quote::quote;
use syn::{Error, Item};

/// Times every call of the function it marks, or of every function in the
/// `impl`, `trait` or inline `mod` it marks.
///
/// Use it through the `tickprof` crate (`#[tickprof::profile]`), whose
/// documentation lists the options, the expansion and the overhead.
///
/// # Options
///
/// - `name = "text"`: the name shown in the report (default: the function's
///   full path). Not on a container.
/// - `crate = path`: where the `tickprof` crate is (default: `::tickprof`).
///   On a container, it applies to every function inside.
/// - `fail`: a failpoint's `return` makes the function return
///   `Err(tickprof::Injected{..}.into())` (default: off). Needs a function
///   returning `Result<_, E>`, not `async`. Not on a container.
/// - `skip`: on a function or nested container inside a marked container,
///   leave it unmarked (default: marked). Alone; not on a top-level item.
///
/// # Containers
///
/// On an inherent or trait `impl`, a `trait` (its default methods) or an
/// inline `mod` (recursively), every function with a body is marked as if
/// it carried `#[profile]`: the same expansion, names and behaviour. Inside:
/// `#[profile(skip)]` opts out; a function's own `#[profile(...)]` keeps its
/// options (and the container's `crate` unless it gives one) and marks it
/// once; `#[profile]`, `#[tickprof::profile]` and `#[<crate>::profile]` are
/// recognised and removed, also with the `enabled` feature off. Functions
/// the attribute cannot mark (`const fn`, C-variadic, no body, a returned
/// future whose body is not one `async` block, `default fn`) and macro
/// invocations are left alone, not rejected. The container is parsed once
/// and each function expanded once.
///
/// # Errors
///
/// Reports a compile error, spanned on the offending token, for unknown,
/// duplicate or malformed options, and for items that are not functions with
/// a body or containers, `const fn`, C-variadic functions, and functions
/// returning a future whose body is not one `async` block; on a container,
/// for `name`, `fail`, a top-level `skip`, a `mod foo;` (its items are in
/// another file, which an attribute cannot see), and for errors in the
/// functions' own marks. The item itself is emitted beside the error (its
/// inner marks removed) so the rest of the crate still compiles.
///
/// # Examples
///
/// ```ignore
/// #[tickprof::profile(name = "tokenize")]
/// fn tokens(input: &str) -> Vec<&str> {
///     input.split(',').collect()
/// }
/// ```
#[proc_macro_attribute]
pub fn profile(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args.into(), item.into(), cfg!(feature = "enabled")).into()
}

/// Whole expansion: validates `args` and `item`, then instruments the
/// function if `enabled`, or returns it unchanged.
///
/// On error, returns the errors followed by the unchanged item.
fn expand(args: TokenStream2, item: TokenStream2, enabled: bool) -> TokenStream2 {
    let args = args::parse_args(args);
    if container::looks_like_container(&item) {
        if let Ok(parsed @ (Item::Impl(_) | Item::Trait(_) | Item::Mod(_))) =
            syn::parse2(item.clone())
        {
            return container::expand(args, parsed, enabled);
        }
    }
    let func = item::parse_item(&item);
    match (args, func) {
        (Ok(args), Ok(marked)) => {
            if let Err(error) = fail::check(&args, &marked).and_then(|()| outside(&args)) {
                let errors = compile_errors(error);
                return quote!(#errors #item);
            }
            if enabled {
                expand::instrument(&args, marked)
            } else {
                item
            }
        }
        (args, func) => {
            let mut errors: Option<Error> = None;
            for error in [args.err(), func.err()].into_iter().flatten() {
                push_error(&mut errors, error);
            }
            let errors = errors.map(compile_errors);
            quote!(#errors #item)
        }
    }
}

/// The error for `skip` on a function outside a marked container, where
/// it would mean "do not mark" under a mark.
fn outside(args: &args::Args) -> Result<(), Error> {
    match &args.skip {
        Some(skip) => Err(Error::new(
            skip.span(),
            "`skip` opts a function out of a marked `impl`, `trait` or `mod`; \
             outside one, remove #[profile(skip)] to leave the function unmarked",
        )),
        None => Ok(()),
    }
}

/// Checks the name given to `prof_scope!` or `prof_guard!` and returns it.
///
/// Used by those macros (in both feature settings, so both reject the
/// same input), not public API: `scope_name!(prof_scope, "name")` expands
/// to `"name"`, and to a compile error spanned on the argument when it is not
/// a non-empty string literal.
#[doc(hidden)]
#[proc_macro]
pub fn scope_name(input: TokenStream) -> TokenStream {
    match args::scope_name(input.into()) {
        Ok(lit) => quote!(#lit).into(),
        Err(error) => compile_errors(error).into(),
    }
}

/// `error` as `compile_error!` invocations, each spanned on its token.
///
/// syn writes `::core::compile_error!`, whose `::core` takes the edition of
/// the user's token: in an edition-2015 crate it means `crate::core` and the
/// real message is lost behind "cannot find `core`". The builtin macro is
/// found by its bare name in every edition, so the path is dropped.
fn compile_errors(error: Error) -> TokenStream2 {
    let tokens: Vec<TokenTree> = error.to_compile_error().into_iter().collect();
    let mut out = TokenStream2::new();
    let mut i = 0;
    while i < tokens.len() {
        let is_core_prefix = matches!(
            &tokens[i..],
            [TokenTree::Punct(a), TokenTree::Punct(b), TokenTree::Ident(core), TokenTree::Punct(c), TokenTree::Punct(d), TokenTree::Ident(name), ..]
                if [a, b, c, d].iter().all(|p| p.as_char() == ':')
                    && core == "core"
                    && name == "compile_error"
        );
        if is_core_prefix {
            i += 5;
        } else {
            out.extend([tokens[i].clone()]);
            i += 1;
        }
    }
    out
}

/// Adds `error` to `errors`, combining with the errors already there.
fn push_error(errors: &mut Option<Error>, error: Error) {
    match errors {
        Some(existing) => existing.combine(error),
        None => *errors = Some(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_builtin_macro_without_a_path() {
        let out = expand(quote!(nam = "f", bad), quote! { fn f() {} }, true).to_string();
        assert_eq!(out.matches("compile_error !").count(), 2, "{out}");
        assert!(!out.contains("core"), "{out}");
        let scope = compile_errors(Error::new(proc_macro2::Span::call_site(), "m")).to_string();
        assert_eq!(scope, quote!(compile_error! { "m" }).to_string());
    }

    #[test]
    fn disabled_returns_item_unchanged() {
        let item = quote! { fn f(x: u8) -> u8 { x } };
        assert_eq!(
            expand(quote!(name = "f"), item.clone(), false).to_string(),
            item.to_string()
        );
    }

    #[test]
    fn disabled_still_validates() {
        let item = quote! { fn f() {} };
        let out = expand(quote!(nam = "f"), item, false).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("unknown option `nam`"), "{out}");
        assert!(out.ends_with(&quote! { fn f() {} }.to_string()), "{out}");
    }

    #[test]
    fn errors_keep_the_item() {
        let out = expand(quote!(), quote! { struct S; }, true).to_string();
        assert!(out.contains("compile_error"));
        assert!(out.ends_with(&quote! { struct S; }.to_string()));
    }
}
