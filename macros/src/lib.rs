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

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{
    AttrStyle, Attribute, Error, Expr, Ident, Item, ItemFn, Lit, LitStr, Path, Result, Signature,
    Token, Visibility,
};

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

/// Valid option keys, as listed in error messages.
const VALID_KEYS: &str = "`name = \"...\"` and `crate = path`";

/// Tells the user what to use instead when the item is not a function.
const SCOPE_HINT: &str = "for a block use tickprof::prof_scope!()";

/// Whole expansion: validates `args` and `item`, then instruments the
/// function if `enabled`, or returns it unchanged.
///
/// On error, returns the errors followed by the unchanged item.
fn expand(args: TokenStream2, item: TokenStream2, enabled: bool) -> TokenStream2 {
    let args = parse_args(args);
    let func = parse_item(&item);
    match (args, func) {
        (Ok(args), Ok(func)) => {
            if enabled {
                instrument(&args, func)
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

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

/// Validated arguments of `#[profile(...)]`.
#[derive(Default)]
struct Args {
    /// `name = "..."`: the report name, non-empty.
    name: Option<LitStr>,
    /// `crate = path`: path of the `tickprof` crate.
    krate: Option<Path>,
}

/// Syntax of `#[profile(...)]`: comma-separated `key` or `key = value`,
/// not yet validated.
struct RawArgs {
    /// The entries in the order written.
    entries: Punctuated<RawArg, Token![,]>,
}

/// One `key = value` (or bare `key`) entry, not yet validated.
struct RawArg {
    /// The key; any identifier or keyword (`crate`).
    key: Ident,
    /// `= value`, if written.
    value: Option<(Token![=], Expr)>,
}

impl Parse for RawArgs {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut entries = Punctuated::new();
        while !input.is_empty() {
            entries.push_value(input.parse()?);
            if input.is_empty() {
                break;
            }
            if !input.peek(Token![,]) {
                return Err(input.error("expected `,` between options"));
            }
            entries.push_punct(input.parse()?);
        }
        Ok(Self { entries })
    }
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> Result<Self> {
        if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            return Err(Error::new(
                lit.span(),
                format!(
                    "a bare string is not an option; write `name = {}` to name the call site",
                    lit.to_token_stream()
                ),
            ));
        }
        if !input.peek(Ident::peek_any) {
            return Err(input.error(format!(
                "expected an option of the form `key = value`; valid options are {VALID_KEYS}"
            )));
        }
        let key = input.call(Ident::parse_any)?;
        let value = if input.peek(Token![=]) {
            let eq: Token![=] = input.parse()?;
            if input.is_empty() || input.peek(Token![,]) {
                return Err(Error::new(
                    eq.span,
                    format!("expected a value after `{key} =`"),
                ));
            }
            Some((eq, input.parse()?))
        } else {
            None
        };
        Ok(Self { key, value })
    }
}

/// Parses and validates the attribute arguments.
fn parse_args(tokens: TokenStream2) -> Result<Args> {
    validate(syn::parse2(tokens)?)
}

/// Checks keys and values, turning the raw syntax into [`Args`].
///
/// Every problem is reported, combined into one [`Error`].
fn validate(raw: RawArgs) -> Result<Args> {
    let mut args = Args::default();
    let mut errors = None;
    // Keys already given, valid or not, so a repeat is always a duplicate.
    let (mut seen_name, mut seen_crate) = (false, false);
    for RawArg { key, value } in raw.entries {
        let key_name = key.unraw().to_string();
        let checked = match key_name.as_str() {
            "name" => check_name(&key, value, std::mem::replace(&mut seen_name, true))
                .map(|lit| args.name = Some(lit)),
            "crate" => check_crate(&key, value, std::mem::replace(&mut seen_crate, true))
                .map(|path| args.krate = Some(path)),
            _ => Err(Error::new(
                key.span(),
                format!("unknown option `{key}`; valid options are {VALID_KEYS}"),
            )),
        };
        if let Err(error) = checked {
            push_error(&mut errors, error);
        }
    }
    errors.map_or(Ok(args), Err)
}

/// Error for a key given twice.
fn duplicate(key: &Ident) -> Error {
    Error::new(
        key.span(),
        format!("`{key}` is given more than once; keep only one"),
    )
}

/// Validates `name = "..."`.
fn check_name(key: &Ident, value: Option<(Token![=], Expr)>, seen: bool) -> Result<LitStr> {
    if seen {
        return Err(duplicate(key));
    }
    let Some((_, value)) = value else {
        return Err(Error::new(
            key.span(),
            "`name` needs a value: write `name = \"...\"`, or remove it to use the function's path",
        ));
    };
    let value = strip_groups(value);
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    else {
        let instead = match &value {
            Expr::Lit(syn::ExprLit {
                lit: lit @ (Lit::Int(_) | Lit::Float(_) | Lit::Bool(_)),
                ..
            }) => format!("name = \"{}\"", lit.to_token_stream()),
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                format!("name = \"{}\"", p.to_token_stream())
            }
            _ => "name = \"...\"".to_owned(),
        };
        return Err(Error::new_spanned(
            value,
            format!("`name` must be a string literal: write `{instead}`"),
        ));
    };
    if lit.value().trim().is_empty() {
        return Err(Error::new(
            lit.span(),
            "`name` must not be empty: write a label such as `name = \"parse\"`, \
             or remove `name` to use the function's path",
        ));
    }
    Ok(lit)
}

/// Validates `crate = path`.
fn check_crate(key: &Ident, value: Option<(Token![=], Expr)>, seen: bool) -> Result<Path> {
    if seen {
        return Err(duplicate(key));
    }
    let Some((_, value)) = value else {
        return Err(Error::new(
            key.span(),
            "`crate` needs a value: write `crate = path::to::tickprof`",
        ));
    };
    match strip_groups(value) {
        Expr::Path(p)
            if p.qself.is_none()
                && p.attrs.is_empty()
                && p.path.segments.iter().all(|s| s.arguments.is_none()) =>
        {
            Ok(p.path)
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => {
            let instead = syn::parse_str::<Path>(&s.value())
                .map_or_else(|_| "path::to::tickprof".to_owned(), |_| s.value());
            Err(Error::new(
                s.span(),
                format!("`crate` takes a path, not a string: write `crate = {instead}`"),
            ))
        }
        other => Err(Error::new_spanned(
            other,
            "`crate` takes a path: write `crate = path::to::tickprof`",
        )),
    }
}

/// Removes invisible groups (from `macro_rules!` fragments) around a value.
fn strip_groups(mut value: Expr) -> Expr {
    while let Expr::Group(group) = value {
        value = *group.expr;
    }
    value
}

// ---------------------------------------------------------------------------
// Item
// ---------------------------------------------------------------------------

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
fn parse_item(item: &TokenStream2) -> Result<ItemFn> {
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

// ---------------------------------------------------------------------------
// Code generation
// ---------------------------------------------------------------------------

/// Wraps the body of `func` with the call-site static and the guard.
///
/// Items come first (so `clippy::items_after_statements` stays quiet), then
/// the guard, then the original block as a nested block expression with its
/// spans untouched.
fn instrument(args: &Args, func: ItemFn) -> TokenStream2 {
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
    use super::*;

    /// Parses and validates, returning the error messages on failure.
    fn args(tokens: TokenStream2) -> std::result::Result<Args, Vec<String>> {
        parse_args(tokens).map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
    }

    fn errors(tokens: TokenStream2) -> Vec<String> {
        match args(tokens) {
            Ok(_) => panic!("expected an error"),
            Err(messages) => messages,
        }
    }

    #[test]
    fn empty_args() {
        let parsed = args(quote!()).unwrap();
        assert!(parsed.name.is_none());
        assert!(parsed.krate.is_none());
    }

    #[test]
    fn name_and_crate() {
        let parsed = args(quote!(name = "tokenize", crate = my::tick,)).unwrap();
        assert_eq!(parsed.name.unwrap().value(), "tokenize");
        let krate = parsed.krate.unwrap();
        assert_eq!(quote!(#krate).to_string(), quote!(my::tick).to_string());
    }

    #[test]
    fn crate_with_leading_colons_and_raw_key() {
        let parsed = args(quote!(crate = ::tickprof, r#name = "x")).unwrap();
        let krate = parsed.krate.unwrap();
        assert!(krate.leading_colon.is_some());
        assert_eq!(parsed.name.unwrap().value(), "x");
    }

    #[test]
    fn raw_string_name() {
        let parsed: Args = syn::parse_str::<RawArgs>("name = r\"a 'b'\"")
            .and_then(validate)
            .unwrap();
        assert_eq!(parsed.name.unwrap().value(), "a 'b'");
    }

    #[test]
    fn unknown_key() {
        let messages = errors(quote!(label = "x"));
        assert_eq!(
            messages,
            ["unknown option `label`; valid options are `name = \"...\"` and `crate = path`"]
        );
    }

    #[test]
    fn duplicate_keys() {
        assert_eq!(
            errors(quote!(name = "a", name = "b")),
            ["`name` is given more than once; keep only one"]
        );
        assert_eq!(
            errors(quote!(crate = a, crate = b)),
            ["`crate` is given more than once; keep only one"]
        );
        // A repeat of an invalid entry is still a duplicate.
        assert_eq!(
            errors(quote!(name = 1, name = "b")),
            [
                "`name` must be a string literal: write `name = \"1\"`",
                "`name` is given more than once; keep only one"
            ]
        );
    }

    #[test]
    fn name_not_string() {
        assert_eq!(
            errors(quote!(name = 5)),
            ["`name` must be a string literal: write `name = \"5\"`"]
        );
        assert_eq!(
            errors(quote!(name = parse)),
            ["`name` must be a string literal: write `name = \"parse\"`"]
        );
        assert_eq!(
            errors(quote!(name = concat!("a", "b"))),
            ["`name` must be a string literal: write `name = \"...\"`"]
        );
    }

    #[test]
    fn name_empty_or_blank() {
        for tokens in [quote!(name = ""), quote!(name = "  ")] {
            let messages = errors(tokens);
            assert_eq!(messages.len(), 1);
            assert!(
                messages[0].starts_with("`name` must not be empty"),
                "{messages:?}"
            );
        }
    }

    #[test]
    fn key_without_value() {
        assert_eq!(
            errors(quote!(name)),
            ["`name` needs a value: write `name = \"...\"`, or remove it to use the function's path"]
        );
        assert_eq!(
            errors(quote!(crate)),
            ["`crate` needs a value: write `crate = path::to::tickprof`"]
        );
        assert_eq!(errors(quote!(name =)), ["expected a value after `name =`"]);
    }

    #[test]
    fn crate_not_a_path() {
        assert_eq!(
            errors(quote!(crate = "tickprof")),
            ["`crate` takes a path, not a string: write `crate = tickprof`"]
        );
        assert_eq!(
            errors(quote!(crate = "not a path")),
            ["`crate` takes a path, not a string: write `crate = path::to::tickprof`"]
        );
        assert_eq!(
            errors(quote!(crate = a::<u8>::b)),
            ["`crate` takes a path: write `crate = path::to::tickprof`"]
        );
        assert_eq!(
            errors(quote!(crate = 1 + 2)),
            ["`crate` takes a path: write `crate = path::to::tickprof`"]
        );
    }

    #[test]
    fn bare_literal_and_garbage() {
        assert_eq!(
            errors(quote!("x")),
            ["a bare string is not an option; write `name = \"x\"` to name the call site"]
        );
        assert_eq!(
            errors(quote!(5)),
            ["expected an option of the form `key = value`; valid options are `name = \"...\"` and `crate = path`"]
        );
        assert_eq!(
            errors(quote!(name = "a" "b")),
            ["expected `,` between options"]
        );
    }

    #[test]
    fn errors_are_combined() {
        let messages = errors(quote!(foo = 1, name = 3, name = "b", crate, crate = ""));
        assert_eq!(messages.len(), 5, "{messages:?}");
        assert!(messages[0].starts_with("unknown option `foo`"));
        assert!(messages[1].starts_with("`name` must be a string literal"));
        assert!(messages[2].starts_with("`name` is given more than once"));
        assert!(messages[3].starts_with("`crate` needs a value"));
        assert!(messages[4].starts_with("`crate` is given more than once"));
    }

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

    #[test]
    fn errors_keep_the_item() {
        let out = expand(quote!(), quote! { struct S; }, true).to_string();
        assert!(out.contains("compile_error"));
        assert!(out.ends_with(&quote! { struct S; }.to_string()));
    }
}
