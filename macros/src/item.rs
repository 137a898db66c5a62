//! The marked item: which items `#[profile]` accepts, and the error for
//! each kind it does not.

use crate::push_error;
use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Error, Item, ItemFn, Result, Signature, Token, Visibility};

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

/// Parses the marked item as a function and checks it can be instrumented.
pub(crate) fn parse_item(item: &TokenStream2) -> Result<ItemFn> {
    let func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(fn_error) => return Err(not_a_fn(item, &fn_error)),
    };
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
    errors.map_or(Ok(func), Err)
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
        Ok(Item::Mod(m)) => kind("a module", pair(&m.mod_token, &m.ident)),
        Ok(Item::Trait(t)) => Error::new_spanned(
            pair(&t.trait_token, &t.ident),
            "#[profile] applies to functions with a body, not to a trait; \
             put #[profile] on each default method you want timed",
        ),
        Ok(Item::Impl(i)) => Error::new_spanned(
            i.impl_token,
            "#[profile] applies to functions with a body, not to an impl block; \
             put #[profile] on each method you want timed",
        ),
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
        assert!(parse_item(&quote! { async fn f() {} }).is_ok());
        assert_eq!(item_error(&quote! { const async fn f() {} }).len(), 1);
        assert!(item_error(&quote! { fn f(&self); })[0]
            .starts_with("#[profile] needs a function with a body, and this declaration has none"));
        assert!(item_error(&quote! { pub fn f(); })[0]
            .starts_with("#[profile] needs a function with a body, and this declaration has none"));
        assert!(item_error(&quote! { impl S {} })[0].contains("not to an impl block"));
        assert!(item_error(&quote! { static X: u8 = 1; })[0].contains("not to a static"));
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
