//! `#[profile(fail)]`: which functions may take a failpoint's `return`,
//! and the check the expansion puts before their body.

use crate::args::Args;
use crate::item::{Kind, Marked};
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{Error, ReturnType, Type};

/// `fail` needs a plain (not `async`) function returning `Result<_, _>`:
/// a spanned error on the return type (or the name) otherwise.
pub(crate) fn check(args: &Args, marked: &Marked) -> syn::Result<()> {
    let Some(key) = &args.fail else {
        return Ok(());
    };
    if !matches!(marked.kind, Kind::Plain) {
        return Err(Error::new(
            key.span(),
            "`fail` is not supported on async functions or functions returning a future; \
             remove `fail` (panics and delays still work at every mark)",
        ));
    }
    let sig = &marked.func.sig;
    match &sig.output {
        ReturnType::Type(_, ty) if returns_result(ty) => Ok(()),
        ReturnType::Type(_, ty) => Err(Error::new_spanned(
            ty,
            "`#[profile(fail)]` needs a function returning `Result<_, E>` with \
             `E: From<tickprof::Injected>`, to return the injected error",
        )),
        ReturnType::Default => Err(Error::new_spanned(
            &sig.ident,
            "`#[profile(fail)]` needs a function returning `Result<_, E>` with \
             `E: From<tickprof::Injected>`; this one returns `()`",
        )),
    }
}

/// Whether the type's last path segment is `Result` (`Result<T, E>`,
/// `io::Result<T>`, `anyhow::Result<T>`, …).
fn returns_result(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Result"),
        Type::Group(g) => returns_result(&g.elem),
        Type::Paren(p) => returns_result(&p.elem),
        _ => false,
    }
}

/// The check before the body of a `#[profile(fail)]` function: a call of
/// the runtime's `injected` (one relaxed load when no table is armed); when
/// a `return` fired at this call's entry, the function returns the
/// injected error.
pub(crate) fn early_return(args: &Args, private: &TokenStream2) -> TokenStream2 {
    if args.fail.is_none() || !cfg!(feature = "failpoints") {
        return TokenStream2::new();
    }
    quote! {
        if let #private::Some(__tickprof_injected) = #private::injected(&__TICKPROF_SITE) {
            return #private::Err(#private::From::from(__tickprof_injected));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn check_of(
        args: proc_macro2::TokenStream,
        item: proc_macro2::TokenStream,
    ) -> Result<(), String> {
        let args = crate::args::parse_args(args).map_err(|e| e.to_string())?;
        let marked = crate::item::parse_item(&item).map_err(|e| e.to_string())?;
        check(&args, &marked).map_err(|e| e.to_string())
    }

    #[test]
    fn fail_needs_a_result() {
        assert_eq!(
            check_of(quote!(fail), quote! { fn f() -> Result<u8, E> { Ok(1) } }),
            Ok(())
        );
        assert_eq!(
            check_of(quote!(fail), quote! { fn f() -> io::Result<()> { Ok(()) } }),
            Ok(())
        );
        assert!(check_of(quote!(fail), quote! { fn f() -> u8 { 1 } })
            .unwrap_err()
            .contains("needs a function returning `Result"));
        assert!(check_of(quote!(fail), quote! { fn f() {} })
            .unwrap_err()
            .contains("returns `()`"));
        assert!(check_of(
            quote!(fail),
            quote! { async fn f() -> Result<(), E> { Ok(()) } }
        )
        .unwrap_err()
        .contains("not supported on async"));
        assert!(check_of(quote!(fail = 1), quote! { fn f() {} })
            .unwrap_err()
            .contains("takes no value"));
        assert!(check_of(quote!(fail, fail), quote! { fn f() {} })
            .unwrap_err()
            .contains("more than once"));
    }
}
