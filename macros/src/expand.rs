//! Code generation: the call-site static, the guard, the original body.

use crate::args::Args;
use proc_macro2::{TokenStream as TokenStream2, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::{AttrStyle, Attribute, ItemFn};

/// Wraps the body of `func` with the call-site static and the guard.
///
/// Items come first (so `clippy::items_after_statements` stays quiet), then
/// the guard, then the original block as a nested block expression with its
/// spans untouched.
pub(crate) fn instrument(args: &Args, func: ItemFn) -> TokenStream2 {
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let (inner, outer): (Vec<Attribute>, Vec<Attribute>) = attrs
        .into_iter()
        .partition(|attr| matches!(attr.style, AttrStyle::Inner(_)));
    let krate = args
        .krate
        .as_ref()
        .map_or_else(|| quote!(::tickprof), ToTokens::to_token_stream);
    let name = args.name.as_ref().map_or_else(
        || quote!(::core::option::Option::None),
        |lit| quote!(::core::option::Option::Some(#lit)),
    );
    let line = quote_spanned!(sig.ident.span()=> ::core::line!());
    let is_async = sig.asyncness.is_some();
    let constructor = if is_async {
        quote!(async_function)
    } else {
        quote!(function)
    };
    let run = if is_async {
        async_body(&krate, &sig.output, &block)
    } else {
        quote! {
            let __tickprof_guard = #krate::__private::Guard::enter(&__TICKPROF_SITE);
            #block
        }
    };
    let mut body = TokenStream2::new();
    block.brace_token.surround(&mut body, |body| {
        body.extend(quote! {
            #(#inner)*
            fn __tickprof_here() {}
            static __TICKPROF_SITE: #krate::__private::CallSite =
                #krate::__private::CallSite::#constructor(
                    #krate::__private::path_of(__tickprof_here),
                    #name,
                    ::core::file!(),
                    #line,
                );
            #run
        });
    });
    quote!(#(#outer)* #vis #sig #body)
}

/// The body of a marked `async fn`: the original body as an `async move`
/// block inside the runtime's poll-by-poll timer, awaited.
///
/// The never-taken `return` of a value of the declared return type pins
/// the block's output type, so `?` and `return` inside it infer as they do
/// in the function (the trick `tracing` uses). It is left out for `impl
/// Trait` returns, which cannot name a local's type.
fn async_body(krate: &TokenStream2, output: &syn::ReturnType, block: &syn::Block) -> TokenStream2 {
    let pin_type = match output {
        syn::ReturnType::Type(_, ty) if !mentions_impl(&ty.to_token_stream()) => quote! {
            #[allow(unreachable_code, clippy::diverging_sub_expression)]
            if false {
                let __tickprof_return_type: #ty = loop {};
                return __tickprof_return_type;
            }
        },
        _ => TokenStream2::new(),
    };
    quote! {
        #krate::__private::Instrumented::new(&__TICKPROF_SITE, async move {
            #pin_type
            #block
        })
        .await
    }
}

/// Whether a type mentions `impl` anywhere (e.g. `Box<impl Fn()>`).
fn mentions_impl(tokens: &TokenStream2) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => mentions_impl(&g.stream()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use crate::expand;
    use quote::quote;

    #[test]
    fn expansion_shape() {
        let item = quote! {
            #[inline]
            pub fn work<T: Copy>(x: T) -> T {
                #![allow(unused)]
                x
            }
        };
        let out = expand(quote!(name = "w", crate = my::tp), item, true);
        let expected = quote! {
            #[inline]
            pub fn work<T: Copy>(x: T) -> T {
                #![allow(unused)]
                fn __tickprof_here() {}
                static __TICKPROF_SITE: my::tp::__private::CallSite =
                    my::tp::__private::CallSite::function(
                        my::tp::__private::path_of(__tickprof_here),
                        ::core::option::Option::Some("w"),
                        ::core::file!(),
                        ::core::line!(),
                    );
                let __tickprof_guard = my::tp::__private::Guard::enter(&__TICKPROF_SITE);
                {
                    x
                }
            }
        };
        assert_eq!(out.to_string(), expected.to_string());
    }

    #[test]
    fn default_crate_and_no_name() {
        let out = expand(quote!(), quote! { fn f() {} }, true).to_string();
        assert!(out.contains(
            &quote! { static __TICKPROF_SITE: ::tickprof::__private::CallSite = }.to_string()
        ));
        assert!(out.contains(&quote!(::core::option::Option::None).to_string()));
    }
}
