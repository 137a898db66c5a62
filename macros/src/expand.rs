//! Code generation: the call-site static, the guard, the original body.
//!
//! Spans are chosen so that the expansion resolves and stays quiet in every
//! edition. Generated tokens carry `Span::call_site()`: rustc gives them
//! the edition of this crate (2021), not the user's, so `::tickprof` is the
//! extern crate even in a 2015 crate, and lints treat them as code from an
//! external macro. `file!()` and `line!()` therefore name the `#[profile]`
//! attribute's line (for a function marked by its container, the
//! container's attribute: a `line!()` spanned on the user's `fn` would need
//! a path resolved in the user's scope, not an absolute one). The guard's local and the body's label are
//! `Span::mixed_site()`, so the body cannot see them. The user's tokens
//! (signature, body) keep their spans, so errors in them point at user code
//! and user lints apply as written. The expansion contains no `allow`: an
//! `allow` under a user's `forbid` is itself an error.

use crate::args::Args;
use crate::item::{mentions_impl, Kind, Marked};
use proc_macro2::{Ident, Span, TokenStream as TokenStream2};
use quote::{quote, ToTokens};
use syn::Lifetime;
use syn::{AttrStyle, Attribute, Block, Expr, ItemFn, ReturnType, Stmt};

/// Wraps the body of the marked function with the call-site static and the
/// guard (or, for futures, the poll-by-poll timer).
///
/// Items come first (so `clippy::items_after_statements` stays quiet), then
/// the guard, then the original block, spans untouched, as a labeled block:
/// `unused_braces` fires on a user-spanned one-line block `{ x + 1 }` in
/// statement position, but never on a labeled one.
pub(crate) fn instrument(args: &Args, marked: Marked) -> TokenStream2 {
    let Marked { func, kind } = marked;
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let (inner, outer): (Vec<Attribute>, Vec<Attribute>) = attrs
        .into_iter()
        .partition(|attr| matches!(attr.style, AttrStyle::Inner(_)));
    let private = match &args.krate {
        Some(path) => quote!(#path::__private),
        None => quote!(::tickprof::__private),
    };
    let name = args.name.as_ref().map_or_else(
        || quote!(#private::None),
        |lit| quote!(#private::Some(#lit)),
    );
    let (constructor, run) = match kind {
        Kind::Plain => {
            let fail = crate::fail::early_return(args, &private);
            let run = match returned_type(&sig.output) {
                ty if args.once.is_some() => once(&private, ty.as_ref(), &fail, &block),
                Some(ty) if twin_bodies(&outer, &block) => {
                    // Profiling off or paused: the body as written, inline,
                    // after one compare with memory and one branch.
                    // Recording: the body in a closure, timed out of line
                    // by the runtime (`timed`, its guard inline in it), so
                    // that the off path saves no register for it. The
                    // closure's declared return type keeps `return` and `?`
                    // in the body as they are in the function. With
                    // `fail`, its check comes first; a labeled block (never
                    // `unused_braces`) then holds the body.
                    let timed = if fail.is_empty() {
                        block.to_token_stream()
                    } else {
                        let label = Lifetime::new("'__tickprof_body", Span::mixed_site());
                        quote!({ #fail #label: #block })
                    };
                    let mode = Ident::new("__tickprof_mode", Span::mixed_site());
                    let counted = Ident::new("__tickprof_counted", Span::mixed_site());
                    let value = Ident::new("__tickprof_value", Span::mixed_site());
                    let label = Lifetime::new("'__tickprof_body", Span::mixed_site());
                    // Recording plainly, a counted call whose parent caches
                    // it: counted inline (`Counted`), the body again, in
                    // the function; any other call: the body in a closure,
                    // timed out of line (`timed`; `timed_in_mode` for the
                    // other modes: hooks, tracing, failpoints, pause). The
                    // plain recording's test first: with profiling off, two
                    // tests of the mode read once, then the body.
                    let closure = quote!(move || -> #ty #timed);
                    let counted_or_timed = quote! {
                        if let #private::Some(#counted) = #private::Counted::enter(&__TICKPROF_SITE) {
                            #fail
                            let #value: #ty = if #private::ALWAYS {
                                #label: #block
                            } else {
                                #private::never_taken()
                            };
                            #counted.exit();
                            #value
                        } else {
                            #private::timed(#closure, &__TICKPROF_SITE)
                        }
                    };
                    let in_mode = quote!(#private::timed_in_mode(#closure, &__TICKPROF_SITE));
                    if args.always.is_some() {
                        // `always` (a build that records, as `cargo
                        // tickprof` makes): three copies of the body, not
                        // four. The inline one serves a counted call and
                        // profiling off alike (`TICKPROF=off` runs the body
                        // as written, in the function, as unmarked code
                        // would: out of line in `timed_in_mode` it cost
                        // semver's workload 1.5 times its unmarked time).
                        quote! {
                            let #mode = #private::mode();
                            let #counted = if #mode == #private::RECORD {
                                #private::Counted::enter_any(&__TICKPROF_SITE)
                            } else {
                                #private::None
                            };
                            if #mode == #private::OFF || #counted.is_some() {
                                if #counted.is_some() {
                                    #fail
                                }
                                let #value: #ty = if #private::ALWAYS {
                                    #label: #block
                                } else {
                                    #private::never_taken()
                                };
                                if let #private::Some(#counted) = #counted {
                                    #counted.exit();
                                }
                                #value
                            } else if #mode == #private::RECORD {
                                #private::timed(#closure, &__TICKPROF_SITE)
                            } else {
                                #in_mode
                            }
                        }
                    } else {
                        let other = quote!(if #mode == #private::OFF #block else { #in_mode });
                        quote! {
                            let #mode = #private::mode();
                            if #mode == #private::RECORD { #counted_or_timed } else { #other }
                        }
                    }
                }
                other => guarded(&private, quote!(BodyGuard), other.as_ref(), &fail, &block),
            };
            (quote!(function), run)
        }
        Kind::Async => {
            let output = async_output(&sig.output);
            let run = quote! {
                #private::instrument::<#output, _>(&__TICKPROF_SITE, async move #block).await
            };
            (quote!(async_function), run)
        }
        Kind::ReturnsFuture { output } => {
            let output = output.map_or_else(|| quote!(_), |ty| ty.to_token_stream());
            (
                quote!(async_function),
                timed_future(&private, &output, *block),
            )
        }
    };
    quote! {
        #(#outer)* #vis #sig {
            #(#inner)*
            fn __tickprof_here() {}
            static __TICKPROF_SITE: #private::CallSite = #private::CallSite::#constructor(
                #private::path_of(__tickprof_here),
                #name,
                #private::file!(),
                #private::line!(),
            );
            #private::mark!(__TICKPROF_SITE);
            #run
        }
    }
}

/// Whether the body is emitted twice (see `twin`): it can be, and the
/// function is not `#[track_caller]` (a closure would not pass the
/// caller's location on to the body).
fn twin_bodies(outer: &[Attribute], block: &Block) -> bool {
    !outer.iter().any(|a| a.path().is_ident("track_caller"))
        && crate::twin::duplicable(block.to_token_stream())
}

/// One body, timed by a guard in the function (`guard`: `Guard`, inline,
/// or `BodyGuard`, whose entry and exit are out of line): `ty`, the
/// declared return type where a `let` can name it.
///
/// The body's value is taken, then the guard ends on the normal path, with
/// no unwinding check; early returns and panics leave through its drop.
/// The `if` keeps a body that never returns (`todo!()`, `loop {}`,
/// `exit(..)`) from making the exit unreachable code: its `else`, never
/// taken, has the function's type and does not diverge. Without a nameable
/// type the body stays the tail and the drop ends the call.
fn guarded(
    private: &TokenStream2,
    kind: TokenStream2,
    ty: Option<&TokenStream2>,
    fail: &TokenStream2,
    block: &Block,
) -> TokenStream2 {
    let guard = Ident::new("__tickprof_guard", Span::mixed_site());
    let label = Lifetime::new("'__tickprof_body", Span::mixed_site());
    let enter = quote! {
        let #guard = #private::#kind::enter(&__TICKPROF_SITE);
        #fail
    };
    match ty {
        Some(ty) => {
            let value = Ident::new("__tickprof_value", Span::mixed_site());
            quote! {
                #enter
                let #value: #ty = if #private::ALWAYS {
                    #label: #block
                } else {
                    #private::never_taken()
                };
                #guard.exit_with(#value)
            }
        }
        None => quote! {
            #enter
            #label: #block
        },
    }
}

/// `once`: the body emitted once, in the function, the guard's entry and
/// exit inline around it (the runtime's `Guard`).
/// A body emitted several times (inline for a counted call and profiling
/// off, in closures for timed calls) calls each function it calls from
/// several places, and the optimiser keeps out of line what it inlined
/// at the one call of the unmarked build (indexmap's `IndexMap::get` in
/// the workload's `main`, `Core::push_entry` in `insert_full`: see
/// docs/measured.md, "One copy of the body"). The value passes to the
/// exit, which hands it back (through an opaque pass on a timed call's
/// path only); an unnameable return type leaves through the guard's drop.
fn once(
    private: &TokenStream2,
    ty: Option<&TokenStream2>,
    fail: &TokenStream2,
    block: &Block,
) -> TokenStream2 {
    guarded(private, quote!(Guard), ty, fail, block)
}

/// The output type of an `async fn`, to pin the body's future to it so
/// `?` and `return` inside infer as they do in the function; `_` for an
/// `impl Trait` return, which cannot be named in the body, and for `!`,
/// which cannot be a type argument on stable.
fn async_output(output: &ReturnType) -> TokenStream2 {
    match output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty)
            if mentions_impl(&ty.to_token_stream()) || matches!(**ty, syn::Type::Never(_)) =>
        {
            quote!(_)
        }
        ReturnType::Type(_, ty) => ty.to_token_stream(),
    }
}

/// The type to hold the body's value in, so that the body infers as it
/// does as the function's tail; `None` where it cannot be written in a
/// `let`: an `impl Trait` (closures in the body infer their signature from
/// it) and `!` (not a type on stable).
fn returned_type(output: &ReturnType) -> Option<TokenStream2> {
    match output {
        ReturnType::Default => Some(quote!(())),
        ReturnType::Type(_, ty)
            if mentions_impl(&ty.to_token_stream()) || matches!(**ty, syn::Type::Never(_)) =>
        {
            None
        }
        ReturnType::Type(_, ty) => Some(ty.to_token_stream()),
    }
}

/// The body of a function returning a future: its one `async` block (alone
/// or in `Box::pin(..)`) wrapped in the runtime's poll-by-poll timer.
fn timed_future(private: &TokenStream2, output: &TokenStream2, block: Block) -> TokenStream2 {
    let wrap = |future: &dyn ToTokens| quote!(#private::instrument::<#output, _>(&__TICKPROF_SITE, #future));
    let mut stmts = block.stmts;
    // `item::future_block` accepted the body, so this is its one expression.
    match stmts.pop() {
        Some(Stmt::Expr(Expr::Async(future), None)) => wrap(&future),
        Some(Stmt::Expr(Expr::Call(mut call), None)) => {
            if let Some(future) = call.args.pop() {
                call.args.push(Expr::Verbatim(wrap(future.value())));
            }
            call.into_token_stream()
        }
        other => other.into_token_stream(),
    }
}

#[cfg(test)]
mod tests {
    use crate::expand;
    use proc_macro2::TokenStream as TokenStream2;
    use quote::quote;

    /// The expansion of `item` with profiling on, as a string.
    fn expanded(args: TokenStream2, item: TokenStream2) -> String {
        expand(args, item, true).to_string()
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
        let expected = quote! {
            #[inline]
            pub fn work<T: Copy>(x: T) -> T {
                #![allow(unused)]
                fn __tickprof_here() {}
                static __TICKPROF_SITE: my::tp::__private::CallSite =
                    my::tp::__private::CallSite::function(
                        my::tp::__private::path_of(__tickprof_here),
                        my::tp::__private::Some("w"),
                        my::tp::__private::file!(),
                        my::tp::__private::line!(),
                    );
                my::tp::__private::mark!(__TICKPROF_SITE);
                let __tickprof_mode = my::tp::__private::mode();
                if __tickprof_mode == my::tp::__private::RECORD {
                    if let my::tp::__private::Some(__tickprof_counted) =
                        my::tp::__private::Counted::enter(&__TICKPROF_SITE)
                    {
                        let __tickprof_value: T = if my::tp::__private::ALWAYS {
                            '__tickprof_body: { x }
                        } else {
                            my::tp::__private::never_taken()
                        };
                        __tickprof_counted.exit();
                        __tickprof_value
                    } else {
                        my::tp::__private::timed(move || -> T { x }, &__TICKPROF_SITE)
                    }
                } else {
                    if __tickprof_mode == my::tp::__private::OFF {
                        x
                    } else {
                        my::tp::__private::timed_in_mode(move || -> T { x }, &__TICKPROF_SITE)
                    }
                }
            }
        };
        assert_eq!(
            expanded(quote!(name = "w", crate = my::tp), item),
            expected.to_string()
        );
    }

    /// A return type that cannot be written in a `let` (`impl Trait`, `!`)
    /// keeps the body as the tail: the guard ends in its drop.
    #[test]
    fn unnameable_return_types_end_in_the_drop() {
        for item in [
            quote! { fn f() -> impl Fn(u8) -> u8 { |x| x } },
            quote! { fn f() -> Box<impl Fn()> { Box::new(|| ()) } },
            quote! { fn f() -> ! { loop {} } },
        ] {
            let out = expanded(quote!(), item);
            assert!(!out.contains("exit"), "{out}");
            assert!(out.contains("'__tickprof_body"), "{out}");
        }
        // A body kept once (it defines a `static`) with a nameable type
        // ends on the normal path.
        let out = expanded(quote!(), quote! { fn f() { static S: u8 = 0; } });
        assert!(out.contains("BodyGuard"), "{out}");
        assert!(
            out.contains(&quote!(let __tickprof_value: () =).to_string()),
            "{out}"
        );
        assert!(
            out.contains(&quote!(__tickprof_guard.exit_with(__tickprof_value)).to_string()),
            "{out}"
        );
    }

    /// A body that can be emitted twice is: once as written behind the
    /// mode test, once in a closure timed out of line; one that cannot,
    /// or a `#[track_caller]` function's (a closure would hide the
    /// caller's location), keeps one body under a `BodyGuard`.
    #[test]
    fn twin_bodies_and_their_exceptions() {
        let twin = expanded(quote!(), quote! { fn f(x: u8) -> u8 { x + 1 } });
        assert!(twin.contains("__private :: OFF { x + 1 }"), "{twin}");
        assert!(twin.contains("move || -> u8 { x + 1 }"), "{twin}");
        assert!(!twin.contains("Guard"), "{twin}");
        for item in [
            quote! { #[track_caller] fn f(x: u8) -> u8 { x + 1 } },
            quote! { fn f(x: u8) -> u8 { my_macro!(x) } },
        ] {
            let out = expanded(quote!(), item);
            assert!(!out.contains("OFF"), "{out}");
            assert!(out.contains("BodyGuard :: enter"), "{out}");
        }
    }

    /// `always`: three copies of the body, not four: the inline one for a
    /// counted call and profiling off alike, and the two closures; a body
    /// kept once keeps its guard.
    #[test]
    fn always_runs_the_inline_body_when_off_or_counted() {
        let out = expanded(quote!(always), quote! { fn f(x: u8) -> u8 { x + 1 } });
        assert!(out.contains("__private :: Counted :: enter"), "{out}");
        assert!(
            out.contains("__private :: timed_in_mode (move || -> u8 { x + 1 }"),
            "{out}"
        );
        assert!(
            out.contains("__private :: OFF || __tickprof_counted . is_some ()"),
            "{out}"
        );
        assert_eq!(out.matches("x + 1").count(), 3, "{out}");
        let out = expanded(
            quote!(always),
            quote! { fn f(x: u8) -> u8 { my_macro!(x) } },
        );
        assert!(!out.contains("OFF"), "{out}");
        assert!(out.contains("BodyGuard :: enter"), "{out}");
    }

    /// `once`: the body once, the inline guard around it, whatever else
    /// is given (`always`) and whatever the return type.
    #[test]
    fn once_emits_the_body_once_under_an_inline_guard() {
        for args in [quote!(once), quote!(always, once)] {
            let out = expanded(args, quote! { fn f(x: u8) -> u8 { x + 1 } });
            assert_eq!(out.matches("x + 1").count(), 1, "{out}");
            assert!(out.contains("__private :: Guard :: enter"), "{out}");
            assert!(out.contains("__tickprof_guard . exit_with"), "{out}");
            assert!(!out.contains("timed"), "{out}");
            assert!(!out.contains("Counted"), "{out}");
        }
        let out = expanded(
            quote!(once),
            quote! { fn f() -> impl Fn(u8) -> u8 { |x| x + 1 } },
        );
        assert_eq!(out.matches("x + 1").count(), 1, "{out}");
        assert!(out.contains("__private :: Guard :: enter"), "{out}");
        assert!(!out.contains("exit_with"), "{out}");
    }

    #[test]
    fn default_crate_and_no_name() {
        let out = expanded(quote!(), quote! { fn f() {} });
        assert!(out.contains(
            &quote! { static __TICKPROF_SITE: ::tickprof::__private::CallSite = }.to_string()
        ));
        assert!(out.contains(&quote!(::tickprof::__private::None,).to_string()));
        // Every path is absolute and goes through `__private`, so it
        // resolves in every edition and whatever the user's prelude holds.
        assert!(!out.contains("core"), "{out}");
    }

    #[test]
    fn async_fn_pins_the_output_type() {
        let out = expanded(
            quote!(),
            quote! { async fn f(s: &str) -> Result<u8, E> { Ok(s.parse()?) } },
        );
        let expected = quote! {
            ::tickprof::__private::instrument::<Result<u8, E>, _>(
                &__TICKPROF_SITE,
                async move { Ok(s.parse()?) }
            ).await
        };
        assert!(out.contains(&expected.to_string()), "{out}");
        assert!(out.contains("CallSite :: async_function"), "{out}");
        let unit = expanded(quote!(), quote! { async fn g() {} });
        assert!(unit.contains("instrument :: < () , _ >"), "{unit}");
        let opaque = expanded(quote!(), quote! { async fn h() -> impl Copy { 1 } });
        assert!(opaque.contains("instrument :: < _ , _ >"), "{opaque}");
        let never = expanded(quote!(), quote! { async fn n() -> ! { loop {} } });
        assert!(never.contains("instrument :: < _ , _ >"), "{never}");
    }

    #[test]
    fn returned_futures_are_timed() {
        let out = expanded(
            quote!(),
            quote! { fn f() -> impl Future<Output = u8> + Send { async move { 1 } } },
        );
        let expected = quote! {
            ; ::tickprof::__private::instrument::<u8, _>(&__TICKPROF_SITE, async move { 1 })
        };
        assert!(out.ends_with(&format!("{expected} }}")), "{out}");
        assert!(out.contains("CallSite :: async_function"), "{out}");
        assert!(!out.contains("Guard"), "{out}");

        let boxed = expanded(
            quote!(),
            quote! {
                fn f<'a>(x: &'a u8) -> Pin<Box<dyn Future<Output = u8> + Send + 'a>> {
                    Box::pin(async move { *x })
                }
            },
        );
        let expected = quote! {
            ; Box::pin(::tickprof::__private::instrument::<u8, _>(
                &__TICKPROF_SITE,
                async move { *x }
            ))
        };
        assert!(boxed.ends_with(&format!("{expected} }}")), "{boxed}");
    }
}
