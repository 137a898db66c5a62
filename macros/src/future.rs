//! The returned-future rule, one file for the two crates that apply it:
//! `tickprof-macros` (`#[profile]` times such a function poll by poll, or
//! rejects it) and the `cargo tickprof` rewriter (which leaves unmarked
//! what `#[profile]` would reject). `cli/src/mark/future.rs` is a link to
//! this file, so both packages carry it and the rule cannot drift.
//!
//! A function returns a future when its return type is `impl Future<..>`
//! (with any other bounds) or `Pin<Box<dyn Future<..> ..>>`, recognised by
//! the last segment of each path (a type alias is not seen through). Such
//! a function can be timed when its body is one `async` block, or one
//! `Box::pin(<async block>)` (the shape `async-trait` writes).
//!
//! Only `syn` is used here (no `crate::` path), so the file compiles in
//! either crate.

use syn::{
    AngleBracketedGenericArguments, Expr, GenericArgument, PathArguments, ReturnType, Stmt, Type,
    TypeParamBound,
};

/// If the return type is a future, `Some` of its declared `Output` type.
///
/// Recognises `impl Future<..>` (with any other bounds) and
/// `Pin<Box<dyn Future<..> ..>>`, by the last segment of each path: a type
/// alias for a future is not seen through.
pub(crate) fn returned_future(output: &ReturnType) -> Option<Option<Type>> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    match strip_type_groups(ty) {
        Type::ImplTrait(imp) => future_bound(imp.bounds.iter()),
        Type::Path(path) if path.qself.is_none() => {
            let boxed = only_type_arg(path.path.segments.last()?, "Pin")?;
            let Type::Path(boxed) = strip_type_groups(boxed) else {
                return None;
            };
            let object = only_type_arg(boxed.path.segments.last()?, "Box")?;
            match strip_type_groups(object) {
                Type::TraitObject(object) => future_bound(object.bounds.iter()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The single type argument of `segment` if it is named `name`.
fn only_type_arg<'a>(segment: &'a syn::PathSegment, name: &str) -> Option<&'a Type> {
    if segment.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(AngleBracketedGenericArguments { args, .. }) =
        &segment.arguments
    else {
        return None;
    };
    match args.first() {
        Some(GenericArgument::Type(ty)) if args.len() == 1 => Some(ty),
        _ => None,
    }
}

/// `Some(output)` if one of `bounds` is `Future<Output = output>` (or a
/// `Future` bound without `Output`: `Some(None)`).
fn future_bound<'a>(mut bounds: impl Iterator<Item = &'a TypeParamBound>) -> Option<Option<Type>> {
    bounds.find_map(|bound| {
        let TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let last = bound.path.segments.last()?;
        if last.ident != "Future" {
            return None;
        }
        let PathArguments::AngleBracketed(args) = &last.arguments else {
            return Some(None);
        };
        Some(args.args.iter().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(assoc.ty.clone()),
            _ => None,
        }))
    })
}

/// Removes invisible groups and parentheses around a type.
fn strip_type_groups(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(g) => ty = &g.elem,
            Type::Paren(p) => ty = &p.elem,
            _ => return ty,
        }
    }
}

/// The `async` block a future-returning body consists of: the body is
/// that one block, or one `Box::pin(<async block>)` call.
pub(crate) fn future_block(stmts: &[Stmt]) -> Option<&syn::ExprAsync> {
    let [Stmt::Expr(expr, None)] = stmts else {
        return None;
    };
    match expr {
        Expr::Async(block) => Some(block),
        Expr::Call(call) if call.args.len() == 1 && is_box_pin(&call.func) => {
            match call.args.first() {
                Some(Expr::Async(block)) => Some(block),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `func` is a path ending in `Box::pin`.
fn is_box_pin(func: &Expr) -> bool {
    let Expr::Path(path) = func else {
        return false;
    };
    let segments: Vec<_> = path.path.segments.iter().map(|s| &s.ident).collect();
    matches!(segments.as_slice(), [.., b, p] if *b == "Box" && *p == "pin")
}

#[cfg(test)]
mod tests {
    use super::{future_block, returned_future};
    use quote::{quote, ToTokens};

    fn output(sig: proc_macro2::TokenStream) -> Option<Option<String>> {
        let f: syn::ItemFn = syn::parse2(sig).unwrap();
        returned_future(&f.sig.output).map(|o| o.map(|t| t.to_token_stream().to_string()))
    }

    fn timed(body: proc_macro2::TokenStream) -> bool {
        let f: syn::ItemFn = syn::parse2(body).unwrap();
        future_block(&f.block.stmts).is_some()
    }

    #[test]
    fn futures_and_their_output() {
        assert_eq!(
            output(quote! { fn f() -> impl Future<Output = u8> + Send { todo!() } }),
            Some(Some("u8".into()))
        );
        assert_eq!(
            output(quote! { fn f() -> impl core::future::Future { todo!() } }),
            Some(None)
        );
        assert_eq!(
            output(quote! { fn f() -> Pin<Box<dyn Future<Output = ()> + 'static>> { todo!() } }),
            Some(Some("()".into()))
        );
        assert_eq!(
            output(quote! { fn f() -> (impl Future<Output = u8>) { todo!() } }),
            Some(Some("u8".into()))
        );
        for not in [
            quote! { fn f() -> u8 { 1 } },
            quote! { fn f() {} },
            quote! { fn f() -> impl Iterator<Item = u8> { todo!() } },
            quote! { fn f() -> Box<dyn Future<Output = u8>> { todo!() } },
            quote! { fn f() -> BoxFuture<'static, u8> { todo!() } },
        ] {
            assert_eq!(output(not.clone()), None, "{not}");
        }
    }

    #[test]
    fn bodies_timed_poll_by_poll() {
        assert!(timed(quote! { fn f() { async move { 1 } } }));
        assert!(timed(quote! { fn f() { Box::pin(async { 1 }) } }));
        assert!(timed(
            quote! { fn f() { std::boxed::Box::pin(async { 1 }) } }
        ));
        for not in [
            quote! { fn f() { let x = 1; async move { x } } },
            quote! { fn f() { ready(1) } },
            quote! { fn f() { Box::pin(ready(1)) } },
            quote! { fn f() { async { 1 }; } },
        ] {
            assert!(!timed(not.clone()), "{not}");
        }
    }
}
