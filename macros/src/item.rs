//! The marked function: which functions `#[profile]` accepts, and the
//! error for each other kind of item (containers are in `container`).

use crate::future::{future_block, returned_future};
use crate::push_error;
use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Error, Item, ItemFn, Result, Signature, Token, Type, Visibility};

/// Tells the user what to use instead when the item is not a function.
const SCOPE_HINT: &str = "for a block use tickprof::prof_scope!()";

/// A function signature that ends with `;` instead of a body (a trait method
/// without default, or a foreign function).
struct FnDecl {
    /// Where the body should be.
    semi: Token![;],
}

impl Parse for FnDecl {
    fn parse(input: ParseStream) -> Result<Self> {
        input.call(Attribute::parse_outer)?;
        let _: Visibility = input.parse()?;
        let _: Signature = input.parse()?;
        let semi = input.parse()?;
        Ok(Self { semi })
    }
}

/// A function `#[profile]` can time, and how.
pub(crate) struct Marked {
    /// The function as written.
    pub(crate) func: ItemFn,
    /// What its body is timed as.
    pub(crate) kind: Kind,
}

/// How the expansion times the function.
pub(crate) enum Kind {
    /// A plain function: a guard around the body.
    Plain,
    /// An `async fn`: the body's future, poll by poll.
    Async,
    /// A plain function that returns a future and whose body is one
    /// `async` block, or `Box::pin(async ...)` (the shape `async-trait`
    /// writes): that block is timed poll by poll.
    ReturnsFuture {
        /// The declared `Output = T`, when it names no `impl` type, so the
        /// block's `?` and `return` infer as they did unwrapped.
        output: Option<Box<Type>>,
    },
}

/// Parses the marked item as a function and checks it can be instrumented.
pub(crate) fn parse_item(item: &TokenStream2) -> Result<Marked> {
    let func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(fn_error) => return Err(not_a_fn(item, &fn_error)),
    };
    let kind = kind_of(&func)?;
    Ok(Marked { func, kind })
}

/// How `func` is timed, or the spanned errors for a function `#[profile]`
/// cannot time (`const fn`, C-variadic, a returned future whose body is
/// not one `async` block).
pub(crate) fn kind_of(func: &ItemFn) -> Result<Kind> {
    let sig = &func.sig;
    let mut errors = None;
    if let Some(constness) = &sig.constness {
        push_error(
            &mut errors,
            Error::new(
                constness.span,
                "#[profile] cannot time a `const fn`: the clock cannot be read at compile \
                 time; remove `const`, or time the calling code with tickprof::prof_scope!()",
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        push_error(
            &mut errors,
            Error::new_spanned(
                variadic.dots,
                "#[profile] does not support C-variadic functions; \
                 time the calling code with tickprof::prof_scope!()",
            ),
        );
    }
    let kind = if sig.asyncness.is_some() {
        Kind::Async
    } else if let Some(output) = returned_future(&sig.output) {
        match future_block(&func.block.stmts) {
            Some(_) => Kind::ReturnsFuture {
                output: output
                    .filter(|ty| !mentions_impl(&ty.to_token_stream()))
                    .map(Box::new),
            },
            None => {
                push_error(
                    &mut errors,
                    Error::new_spanned(
                        &sig.output,
                        "#[profile] would time only the creation of the future this function \
                         returns, not the future itself; make it an `async fn`, or make the body \
                         a single `async move { ... }` block (`Box::pin(async move { ... })` for \
                         a boxed future), which #[profile] times poll by poll",
                    ),
                );
                Kind::Plain
            }
        }
    } else {
        Kind::Plain
    };
    errors.map_or(Ok(kind), Err)
}

/// The error for an item that did not parse as a function with a body.
///
/// `fn_error` is syn's error from parsing the item as a function; it is
/// shown when the item looks like a function that syn could not read.
fn not_a_fn(item: &TokenStream2, fn_error: &Error) -> Error {
    if let Ok(decl) = syn::parse2::<FnDecl>(item.clone()) {
        return Error::new(
            decl.semi.span,
            "#[profile] needs a function with a body, and this declaration has none; \
             for a trait method, give it a default body or put #[profile] on the method \
             in each impl",
        );
    }
    let kind = |what: &str, tokens: TokenStream2| {
        Error::new_spanned(
            tokens,
            format!("#[profile] applies to functions with a body, not to {what}; {SCOPE_HINT}"),
        )
    };
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(s)) => kind("a struct", pair(&s.struct_token, &s.ident)),
        Ok(Item::Enum(e)) => kind("an enum", pair(&e.enum_token, &e.ident)),
        Ok(Item::Union(u)) => kind("a union", pair(&u.union_token, &u.ident)),
        Ok(Item::Const(c)) => kind("a const", pair(&c.const_token, &c.ident)),
        Ok(Item::Static(s)) => kind("a static", pair(&s.static_token, &s.ident)),
        Ok(Item::Type(t)) => kind("a type alias", pair(&t.type_token, &t.ident)),
        Ok(Item::Use(u)) => kind("a use declaration", u.use_token.to_token_stream()),
        Ok(Item::ExternCrate(e)) => kind("an extern crate", pair(&e.extern_token, &e.crate_token)),
        Ok(Item::ForeignMod(f)) => kind("an extern block", f.abi.to_token_stream()),
        Ok(Item::Macro(m)) => kind("a macro", m.mac.path.to_token_stream()),
        Ok(Item::TraitAlias(t)) => kind("a trait alias", pair(&t.trait_token, &t.ident)),
        _ if looks_like_fn(item) => Error::new(
            fn_error.span(),
            format!("#[profile] could not read this function: {fn_error}"),
        ),
        _ => Error::new(
            first_item_token(item),
            format!("#[profile] applies to functions with a body; {SCOPE_HINT}"),
        ),
    }
}

/// Tokens of `a` followed by `b`, to span an error from one to the other.
fn pair(a: &dyn ToTokens, b: &dyn ToTokens) -> TokenStream2 {
    let mut tokens = a.to_token_stream();
    b.to_tokens(&mut tokens);
    tokens
}

/// Whether `fn` appears before any braced group, skipping attributes.
fn looks_like_fn(item: &TokenStream2) -> bool {
    for token in item.clone() {
        match token {
            TokenTree::Ident(ident) if ident == "fn" => return true,
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => return false,
            _ => {}
        }
    }
    false
}

/// Span of the first token after the outer attributes, for errors on
/// unrecognised items.
fn first_item_token(item: &TokenStream2) -> Span {
    let mut tokens = item.clone().into_iter().peekable();
    while let Some(TokenTree::Punct(p)) = tokens.peek() {
        if p.as_char() != '#' {
            break;
        }
        tokens.next();
        tokens.next(); // the `[...]` group
    }
    tokens.next().map_or_else(Span::call_site, |t| t.span())
}

/// Whether a type mentions `impl` anywhere (e.g. `Box<impl Fn()>`).
pub(crate) fn mentions_impl(tokens: &TokenStream2) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => mentions_impl(&g.stream()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn item_error(item: &TokenStream2) -> Vec<String> {
        match parse_item(item) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn item_errors() {
        let msg = item_error(&quote! { struct S; });
        assert_eq!(
            msg,
            ["#[profile] applies to functions with a body, not to a struct; for a block use tickprof::prof_scope!()"]
        );
        assert!(item_error(&quote! { const fn f() {} })[0].contains("`const fn`"));
        assert!(matches!(
            parse_item(&quote! { async fn f() {} }).map(|m| m.kind),
            Ok(Kind::Async)
        ));
        assert_eq!(item_error(&quote! { const async fn f() {} }).len(), 1);
        assert!(item_error(&quote! { fn f(&self); })[0]
            .starts_with("#[profile] needs a function with a body, and this declaration has none"));
        assert!(item_error(&quote! { pub fn f(); })[0]
            .starts_with("#[profile] needs a function with a body, and this declaration has none"));
        assert!(item_error(&quote! { static X: u8 = 1; })[0].contains("not to a static"));
    }

    fn kind(item: &TokenStream2) -> Kind {
        match parse_item(item) {
            Ok(marked) => marked.kind,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn output_of(item: &TokenStream2) -> Option<String> {
        match kind(item) {
            Kind::ReturnsFuture { output } => output.map(|t| t.to_token_stream().to_string()),
            _ => panic!("not a future-returning function"),
        }
    }

    #[test]
    fn future_returns() {
        assert!(matches!(kind(&quote! { fn f() -> u8 { 1 } }), Kind::Plain));
        assert_eq!(
            output_of(&quote! { fn f() -> impl Future<Output = u8> + Send { async { 1 } } }),
            Some("u8".to_owned())
        );
        assert_eq!(
            output_of(&quote! {
                fn f<'a>(x: &'a u8) -> ::core::pin::Pin<Box<dyn core::future::Future<Output = Result<u8, E>> + Send + 'a>> {
                    Box::pin(async move { Ok(*x) })
                }
            }),
            Some("Result < u8 , E >".to_owned())
        );
        // An `Output` that is itself `impl Trait` cannot be named in the body.
        assert_eq!(
            output_of(&quote! { fn f() -> impl Future<Output = impl Copy> { async move { 1 } } }),
            None
        );
        // Not futures, or not recognisably.
        assert!(matches!(
            kind(&quote! { fn f() -> impl Iterator<Item = u8> { None.into_iter() } }),
            Kind::Plain
        ));
        assert!(matches!(
            kind(&quote! { fn f() -> Pin<Box<dyn Iterator<Item = u8>>> { todo!() } }),
            Kind::Plain
        ));
        assert!(matches!(
            kind(&quote! { fn f() -> BoxFuture<'static, u8> { todo!() } }),
            Kind::Plain
        ));
    }

    #[test]
    fn future_returns_with_other_bodies() {
        for item in [
            quote! { fn f() -> impl Future<Output = u8> { let x = 1; async move { x } } },
            quote! { fn f() -> impl Future<Output = u8> { ready(1) } },
            quote! { fn f() -> Pin<Box<dyn Future<Output = u8>>> { Box::pin(ready(1)) } },
            quote! { fn f() -> Pin<Box<dyn Future<Output = u8>>> { Box::new(async { 1 }).into() } },
        ] {
            let messages = item_error(&item);
            assert_eq!(messages.len(), 1, "{item}");
            assert!(
                messages[0].starts_with("#[profile] would time only the creation of the future"),
                "{item}: {messages:?}"
            );
        }
    }

    #[test]
    fn variadic_and_unreadable_items() {
        assert!(
            item_error(&quote! { unsafe extern "C" fn f(x: i32, args: ...) {} })[0]
                .starts_with("#[profile] does not support C-variadic functions")
        );
        let odd: TokenStream2 = "fn f() -> ? {}".parse().unwrap();
        assert!(item_error(&odd)[0].starts_with("#[profile] could not read this function: "));
        assert_eq!(
            item_error(&quote!(5)),
            ["#[profile] applies to functions with a body; for a block use tickprof::prof_scope!()"]
        );
    }
}
