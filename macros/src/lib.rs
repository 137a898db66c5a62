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
mod expand;
mod item;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::Error;

/// Times every call of the function it marks.
///
/// Use it through the `tickprof` crate (`#[tickprof::profile]`), whose
/// documentation lists the options, the expansion and the overhead.
///
/// # Options
///
/// - `name = "text"`: the name shown in the report (default: the function's
///   full path).
/// - `crate = path`: where the `tickprof` crate is (default: `::tickprof`).
///
/// # Errors
///
/// Reports a compile error, spanned on the offending token, for unknown,
/// duplicate or malformed options, and for items that are not functions with
/// a body, `const fn` and `async fn`. The item itself is emitted unchanged
/// beside the error so the rest of the crate still compiles.
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
    let func = item::parse_item(&item);
    match (args, func) {
        (Ok(args), Ok(marked)) => {
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
            let errors = errors.map(|e| e.to_compile_error());
            quote!(#errors #item)
        }
    }
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
