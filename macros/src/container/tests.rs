//! Unit tests of container marks: what is marked, what is left alone, and
//! what both feature settings remove.

use super::*;
use quote::quote;

/// The expansion of `#[profile(args)]` on `item`, as a string.
fn expanded(args: TokenStream2, item: TokenStream2, enabled: bool) -> String {
    crate::expand(args, item, enabled).to_string()
}

/// How many functions of the expansion got a call site.
fn sites(out: &str) -> usize {
    out.matches("static __TICKPROF_SITE").count()
}

#[test]
fn containers_are_recognised_by_their_keyword() {
    assert!(looks_like_container(&quote! { impl S {} }));
    assert!(looks_like_container(
        &quote! { #[doc = "x"] pub(crate) unsafe impl<T> Tr for S<T> {} }
    ));
    assert!(looks_like_container(&quote! { pub unsafe trait T {} }));
    assert!(looks_like_container(&quote! { mod m {} }));
    assert!(!looks_like_container(&quote! { fn f() -> impl Copy { 1 } }));
    assert!(!looks_like_container(
        &quote! { pub async unsafe fn f() {} }
    ));
    assert!(!looks_like_container(&quote! { struct S { x: u8 } }));
}

#[test]
fn every_function_with_a_body_is_marked_once() {
    let out = expanded(
        quote!(),
        quote! {
            impl S {
                fn a(&self) {}
                pub fn b<T: Copy>(x: T) -> T where T: Clone { x }
                async fn c() {}
                const fn d() -> u8 { 1 }
                #[profile(skip)]
                fn e() {}
                #[profile(name = "own")]
                fn f() {}
                fn g() -> impl Future<Output = u8> { ready(1) }
            }
        },
        true,
    );
    // a, b, c and f; d and g cannot be marked, e is skipped.
    assert_eq!(sites(&out), 4, "{out}");
    assert_eq!(out.matches("Some (\"own\")").count(), 1, "{out}");
    assert!(!out.contains("profile"), "{out}");
    assert!(
        out.contains(
            &quote!(
                const fn d() -> u8 {
                    1
                }
            )
            .to_string()
        ),
        "{out}"
    );
    assert!(
        out.contains(
            &quote!(
                fn e() {}
            )
            .to_string()
        ),
        "{out}"
    );
    assert!(!out.contains("compile_error"), "{out}");
}

#[test]
fn traits_mark_default_methods_only() {
    let out = expanded(
        quote!(crate = my::tp),
        quote! {
            trait T {
                fn req(&self);
                fn def(&self) -> u8 { 1 }
                #[my::tp::profile(skip)]
                fn skipped(&self) {}
            }
        },
        true,
    );
    assert_eq!(sites(&out), 1, "{out}");
    assert!(out.contains("my :: tp :: __private :: CallSite"), "{out}");
    assert!(
        out.contains(
            &quote!(
                fn req(&self);
            )
            .to_string()
        ),
        "{out}"
    );
    assert!(!out.contains("profile"), "{out}");
}

#[test]
fn modules_are_marked_recursively() {
    let out = expanded(
        quote!(crate = my::tp),
        quote! {
            mod m {
                fn a() {}
                mod inner {
                    fn b() {}
                    impl S { fn c(&self) {} }
                    trait T { fn d(&self) {} }
                    #[profile(skip)]
                    mod quiet { fn e() {} }
                    #[tickprof::profile]
                    impl R { fn f(&self) {} }
                }
                macro_rules! m { () => { fn g() {} } }
                m!();
                const _: () = { fn h() {} };
            }
        },
        true,
    );
    // a, b, c, d and f, each with the container's crate path (f's own
    // mark gives none, so it inherits it).
    assert_eq!(sites(&out), 5, "{out}");
    assert_eq!(
        out.matches("my :: tp :: __private :: CallSite ::").count(),
        5
    );
    assert!(!out.contains("profile"), "{out}");
    assert!(
        out.contains(
            &quote!(
                mod quiet {
                    fn e() {}
                }
            )
            .to_string()
        ),
        "{out}"
    );
}

#[test]
fn disabled_removes_the_inner_marks_and_keeps_the_rest() {
    let item = quote! {
        impl S {
            #[inline]
            #[profile(skip)]
            fn a(&self) {}
            #[tickprof::profile(name = "b")]
            fn b(&self) {}
            fn c(&self) {}
        }
    };
    let unmarked = quote! {
        impl S {
            #[inline]
            fn a(&self) {}
            fn b(&self) {}
            fn c(&self) {}
        }
    };
    assert_eq!(expanded(quote!(), item, false), unmarked.to_string());
}

#[test]
fn disabled_still_checks_the_inner_marks() {
    let out = expanded(
        quote!(),
        quote! { impl S { #[profile(fail)] fn f(&self) -> u8 { 1 } } },
        false,
    );
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("needs a function returning `Result"), "{out}");
}

#[test]
fn container_misuse() {
    for (args, item, message) in [
        (
            quote!(name = "x"),
            quote! { impl S {} },
            "`name` names one function, not an impl block",
        ),
        (
            quote!(fail),
            quote! { trait T {} },
            "`fail` is chosen per function, not for a trait",
        ),
        (quote!(skip), quote! { mod m {} }, "`skip` opts an item out"),
        (
            quote!(),
            quote! { mod m; },
            "cannot see the items of a module in another file",
        ),
        (quote!(nam), quote! { impl S {} }, "unknown option `nam`"),
    ] {
        let out = expanded(args, item, true);
        assert!(out.contains(message), "{out}");
    }
    // With the container's arguments wrong, the inner marks are still
    // removed (and only the real error is shown).
    let out = expanded(
        quote!(nam),
        quote! { impl S { #[profile(skip)] fn f(&self) {} fn g(&self) {} } },
        true,
    );
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert_eq!(sites(&out), 0, "{out}");
    assert!(!out.contains("# [profile"), "{out}");
    // The same for a nested container with wrong arguments.
    let out = expanded(
        quote!(),
        quote! { mod m { #[profile(fail)] mod n { #[profile(skip)] fn f() {} fn g() {} } } },
        true,
    );
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert_eq!(sites(&out), 0, "{out}");
    assert!(!out.contains("# [profile"), "{out}");
}

#[test]
fn skip_is_only_for_items_inside_a_container() {
    let out = expanded(quote!(skip), quote! { fn f() {} }, true);
    assert!(out.contains("`skip` opts a function out"), "{out}");
    let out = expanded(
        quote!(),
        quote! { impl S { #[profile(skip, name = "x")] fn f() {} } },
        true,
    );
    assert!(out.contains("takes no other option"), "{out}");
}

#[test]
fn profile_paths() {
    let path = |tokens: TokenStream2| syn::parse2::<Path>(tokens).unwrap();
    let krate = path(quote!(my::tp));
    for yes in [
        quote!(profile),
        quote!(tickprof::profile),
        quote!(::tickprof::profile),
        quote!(my::tp::profile),
    ] {
        assert!(is_profile(&path(yes.clone()), Some(&krate)), "{yes}");
    }
    for no in [
        quote!(inline),
        quote!(other::profile),
        quote!(my::tp::profile),
    ] {
        assert!(!is_profile(&path(no.clone()), None), "{no}");
    }
}
