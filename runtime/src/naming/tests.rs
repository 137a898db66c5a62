//! Tests of the naming rules, from real `type_name` output.

use super::fit::{is_hidden, is_line_breaking};
use super::*;
use std::borrow::Cow;

/// `type_name` outputs captured from rustc 1.95 (a scratch crate `app`
/// printing the type name of a nested `fn __tickprof_here() {}` in each
/// shape) and the canonical form each must give.
const REAL: &[(&str, &str)] = &[
    // Free fn, inherent method, impl in another module.
    ("app::free::__tickprof_here", "app::free"),
    (
        "app::parser::Parser::next_token::__tickprof_here",
        "app::parser::Parser::next_token",
    ),
    (
        "app::other::<impl app::parser::Parser>::elsewhere::__tickprof_here",
        "app::parser::Parser::elsewhere",
    ),
    // Trait impls, same and other module; std traits by bare name.
    (
        "app::other::<impl core::str::traits::FromStr for app::c::Version>::from_str::__tickprof_here",
        "<app::c::Version as FromStr>::from_str",
    ),
    (
        "app::other::<impl app::Shape for app::c::Version>::area::__tickprof_here",
        "<app::c::Version as app::Shape>::area",
    ),
    (
        "<app::c::Version as app::Shape2>::area2::__tickprof_here",
        "<app::c::Version as app::Shape2>::area2",
    ),
    (
        "<app::c::Version as core::fmt::Display>::fmt::__tickprof_here",
        "<app::c::Version as Display>::fmt",
    ),
    (
        "<app::c::Version as core::ops::arith::Add>::add::__tickprof_here",
        "<app::c::Version as Add>::add",
    ),
    (
        "<app::c::Version as core::iter::traits::collect::FromIterator<u8>>::from_iter::__tickprof_here",
        "<app::c::Version as FromIterator<u8>>::from_iter",
    ),
    (
        "<app::c::Version as core::convert::From<u8>>::from::__tickprof_here",
        "<app::c::Version as From<u8>>::from",
    ),
    (
        "<app::c::Version as core::convert::AsRef<[u8]>>::as_ref::__tickprof_here",
        "<app::c::Version as AsRef<[u8]>>::as_ref",
    ),
    (
        "<app::c::Version as core::ops::index::Index<usize>>::index::__tickprof_here",
        "<app::c::Version as Index<usize>>::index",
    ),
    (
        "<app::c::Version as std::io::Write>::write::__tickprof_here",
        "<app::c::Version as Write>::write",
    ),
    (
        "<app::c::Version as core::ops::drop::Drop>::drop::__tickprof_here",
        "<app::c::Version as Drop>::drop",
    ),
    // Trait default method, generic fn.
    ("app::Shape::double_area::__tickprof_here", "app::Shape::double_area"),
    ("app::GenTr::g::__tickprof_here", "app::GenTr::g"),
    ("app::generic::__tickprof_here", "app::generic"),
    // Generic impls: type params, lifetimes, const generics, nesting.
    ("app::Stack<_>::push::__tickprof_here", "app::Stack::push"),
    ("app::Entry<'_, _, _>::insert::__tickprof_here", "app::Entry::insert"),
    ("app::Arr<_, N>::len::__tickprof_here", "app::Arr::len"),
    ("app::Arr<_, 3>::three::__tickprof_here", "app::Arr<_, 3>::three"),
    ("app::Arr<u8, 4>::concrete::__tickprof_here", "app::Arr<u8, 4>::concrete"),
    ("app::more::L<'_>::stat::__tickprof_here", "app::more::L::stat"),
    ("app::more::B<true>::t::__tickprof_here", "app::more::B<true>::t"),
    ("app::more::C<'x'>::c::__tickprof_here", "app::more::C<'x'>::c"),
    ("app::more::I<-1>::neg::__tickprof_here", "app::more::I<-1>::neg"),
    (
        "app::Nested<alloc::vec::Vec<core::option::Option<_>>>::nested::__tickprof_here",
        "app::Nested<Vec<Option<_>>>::nested",
    ),
    (
        "app::Nested<alloc::vec::Vec<u8>>::concrete_nested::__tickprof_here",
        "app::Nested<Vec<u8>>::concrete_nested",
    ),
    (
        "<app::Nested<_> as core::clone::Clone>::clone::__tickprof_here",
        "<app::Nested as Clone>::clone",
    ),
    (
        "app::m2::<impl app::Stack<_>>::pop2::__tickprof_here",
        "app::Stack::pop2",
    ),
    (
        "app::m2::<impl app::Entry<'_, _, _>>::other_insert::__tickprof_here",
        "app::Entry::other_insert",
    ),
    (
        "<app::Entry<'_, _, _> as app::Shape>::area::__tickprof_here",
        "<app::Entry as app::Shape>::area",
    ),
    // Generic traits.
    ("<app::Square as app::GenTr<_>>::h::__tickprof_here", "<app::Square as app::GenTr>::h"),
    (
        "<app::Stack<u8> as app::GenTr<u8>>::h::__tickprof_here",
        "<app::Stack<u8> as app::GenTr<u8>>::h",
    ),
    (
        "<app::Stack<_> as app::GenTr<alloc::vec::Vec<_>>>::h::__tickprof_here",
        "<app::Stack as app::GenTr<Vec<_>>>::h",
    ),
    (
        "app::m2::<impl app::GenTr2<_> for app::Stack<_>>::h2::__tickprof_here",
        "<app::Stack as app::GenTr2>::h2",
    ),
    (
        "app::m2::<impl core::convert::From<alloc::vec::Vec<_>> for app::Stack<_>>::from::__tickprof_here",
        "<app::Stack as From<Vec<_>>>::from",
    ),
    // Impls for references, slices, tuples, arrays, dyn, pointers, fns.
    ("<[_] as app::Named>::nm::__tickprof_here", "<[_] as app::Named>::nm"),
    ("<(u8, u16) as app::Named>::nm::__tickprof_here", "<(u8, u16) as app::Named>::nm"),
    ("<(_, _, u8) as app::Named>::nm::__tickprof_here", "<(_, _, u8) as app::Named>::nm"),
    ("<[u8; 4] as app::Named>::nm::__tickprof_here", "<[u8; 4] as app::Named>::nm"),
    ("<[_; N] as app::Named3>::nm3::__tickprof_here", "<[_; N] as app::Named3>::nm3"),
    ("<dyn app::Shape as app::Named>::nm::__tickprof_here", "<dyn app::Shape as app::Named>::nm"),
    (
        "<dyn app::Shape + core::marker::Send as app::Named>::nm::__tickprof_here",
        "<dyn app::Shape + Send as app::Named>::nm",
    ),
    (
        "<&mut dyn app::Shape as app::Named>::nm::__tickprof_here",
        "<&mut dyn app::Shape as app::Named>::nm",
    ),
    ("<*const u8 as app::Named>::nm::__tickprof_here", "<*const u8 as app::Named>::nm"),
    ("<fn(u8) -> u8 as app::Named>::nm::__tickprof_here", "<fn(u8) -> u8 as app::Named>::nm"),
    ("<u8 as app::Named>::nm::__tickprof_here", "<u8 as app::Named>::nm"),
    ("<str as app::Named>::nm::__tickprof_here", "<str as app::Named>::nm"),
    (
        "<alloc::boxed::Box<dyn app::Shape> as app::Named>::nm::__tickprof_here",
        "<Box<dyn app::Shape> as app::Named>::nm",
    ),
    ("<alloc::vec::Vec<_> as app::Named>::nm::__tickprof_here", "<Vec as app::Named>::nm"),
    (
        "<core::option::Option<app::Square> as app::Named>::nm::__tickprof_here",
        "<Option<app::Square> as app::Named>::nm",
    ),
    ("<_ as app::Named2>::nm2::__tickprof_here", "<_ as app::Named2>::nm2"),
    (
        "app::m2::<impl app::Named for app::parser::deep::Deep>::nm::__tickprof_here",
        "<app::parser::deep::Deep as app::Named>::nm",
    ),
    (
        "app::m2::<impl app::Named4 for &[app::parser::Parser]>::nm4::__tickprof_here",
        "<&[app::parser::Parser] as app::Named4>::nm4",
    ),
    (
        "app::m2::<impl app::Named for dyn app::Shape + core::marker::Sync>::nm::__tickprof_here",
        "<dyn app::Shape + Sync as app::Named>::nm",
    ),
    ("app::m2::<impl app::Named for u16>::nm::__tickprof_here", "<u16 as app::Named>::nm"),
    (
        "app::m2::<impl app::Named for core::option::Option<alloc::vec::Vec<_>>>::nm::__tickprof_here",
        "<Option<Vec<_>> as app::Named>::nm",
    ),
    (
        "app::more::<impl dyn app::Shape>::on_dyn::__tickprof_here",
        "<dyn app::Shape>::on_dyn",
    ),
    (
        "app::more::<impl app::Named for dyn core::iter::traits::iterator::Iterator<Item = u8>>::nm::__tickprof_here",
        "<dyn Iterator<Item = u8> as app::Named>::nm",
    ),
    (
        "app::more::<impl app::Named for alloc::boxed::Box<dyn core::ops::function::Fn(u8) -> u8>>::nm::__tickprof_here",
        "<Box<dyn Fn(u8) -> u8> as app::Named>::nm",
    ),
    (
        "app::more::<impl app::Named for fn(&'_ u8) -> &'_ u8>::nm::__tickprof_here",
        "<fn(&u8) -> &u8 as app::Named>::nm",
    ),
    ("app::more::<impl app::Named for ()>::nm::__tickprof_here", "<() as app::Named>::nm"),
    ("app::more::<impl app::Named for (u32,)>::nm::__tickprof_here", "<(u32,) as app::Named>::nm"),
    (
        "app::more::<impl app::Named for extern \"C\" fn(u8)>::nm::__tickprof_here",
        "<extern \"C\" fn(u8) as app::Named>::nm",
    ),
    (
        "app::more::<impl app::Named for unsafe fn()>::nm::__tickprof_here",
        "<unsafe fn() as app::Named>::nm",
    ),
    ("app::more::<impl app::Named for &str>::nm::__tickprof_here", "<&str as app::Named>::nm"),
    (
        "app::more::<impl app::Named for alloc::boxed::Box<dyn app::Shape + core::marker::Send>>::nm::__tickprof_here",
        "<Box<dyn app::Shape + Send> as app::Named>::nm",
    ),
    (
        "app::more::<impl app::Named for dyn core::ops::function::Fn(&'_ u8) -> u8>::nm::__tickprof_here",
        "<dyn Fn(&u8) -> u8 as app::Named>::nm",
    ),
    ("<app::more::W<_> as app::Named>::nm::__tickprof_here", "<app::more::W as app::Named>::nm"),
    (
        "<app::more::W<dyn core::ops::function::Fn(&'_ u8)> as app::Named2>::nm2::__tickprof_here",
        "<app::more::W<dyn Fn(&u8)> as app::Named2>::nm2",
    ),
    (
        "app::more::<impl app::Named for std::collections::hash::map::HashMap<u8, alloc::vec::Vec<(u8, &str)>>>::nm::__tickprof_here",
        "<HashMap<u8, Vec<(u8, &str)>> as app::Named>::nm",
    ),
    (
        "app::more::<impl app::Named for core::sync::atomic::AtomicUsize>::nm::__tickprof_here",
        "<AtomicUsize as app::Named>::nm",
    ),
    // Closures, async bodies, fns and impls nested in fns.
    ("app::closure_host::{{closure}}::__tickprof_here", "app::closure_host::{{closure}}"),
    (
        "app::closure_host::{{closure}}::{{closure}}::__tickprof_here",
        "app::closure_host::{{closure}}::{{closure}}",
    ),
    ("app::async_fn::{{closure}}::__tickprof_here", "app::async_fn::{{closure}}"),
    (
        "app::A::async_method::{{closure}}::__tickprof_here",
        "app::A::async_method::{{closure}}",
    ),
    (
        "<app::A as app::Shape>::area::{{closure}}::__tickprof_here",
        "<app::A as app::Shape>::area::{{closure}}",
    ),
    ("app::AsyncTr::at::{{closure}}::__tickprof_here", "app::AsyncTr::at::{{closure}}"),
    (
        "app::with_async_block::{{closure}}::__tickprof_here",
        "app::with_async_block::{{closure}}",
    ),
    (
        "app::with_async_closure::{{closure}}::{{closure}}::__tickprof_here",
        "app::with_async_closure::{{closure}}::{{closure}}",
    ),
    (
        "app::with_inline_const::{{constant}}::in_inline::__tickprof_here",
        "app::with_inline_const::{{constant}}::in_inline",
    ),
    ("app::S::in_static::__tickprof_here", "app::S::in_static"),
    ("app::G<_>::m::{{closure}}::__tickprof_here", "app::G::m::{{closure}}"),
    ("app::outer::inner::innermost::__tickprof_here", "app::outer::inner::innermost"),
    (
        "app::outer::Local::local_method::__tickprof_here",
        "app::outer::Local::local_method",
    ),
    (
        "<app::outer::Local as app::Shape>::area::__tickprof_here",
        "<app::outer::Local as app::Shape>::area",
    ),
    ("app::outer::LocalTr::lt::__tickprof_here", "app::outer::LocalTr::lt"),
    (
        "app::outer::{{closure}}::in_closure::__tickprof_here",
        "app::outer::{{closure}}::in_closure",
    ),
    (
        "app::block_impl::<impl app::Square>::in_block::__tickprof_here",
        "app::Square::in_block",
    ),
    ("app::_::<impl app::Square>::in_const::__tickprof_here", "app::Square::in_const"),
    (
        "<<app::more::Here as app::Shape>::area::Inner as app::Shape>::area::__tickprof_here",
        "<<app::more::Here as app::Shape>::area::Inner as app::Shape>::area",
    ),
    (
        "<app::more::Here as app::Shape>::area::Inner::inh::__tickprof_here",
        "<app::more::Here as app::Shape>::area::Inner::inh",
    ),
    // From marking every fn of semver 1.0.28 and indexmap 2.14.2.
    (
        "semver::display::<impl core::fmt::Display for semver::Version>::fmt::__tickprof_here",
        "<semver::Version as Display>::fmt",
    ),
    (
        "<semver::serde::<impl serde_core::de::Deserialize<'_> for semver::Version>::deserialize::VersionVisitor as serde_core::de::Visitor<'_>>::visit_str::__tickprof_here",
        "<<semver::Version as serde_core::de::Deserialize>::deserialize::VersionVisitor as serde_core::de::Visitor>::visit_str",
    ),
    (
        "<indexmap::map::entry::IndexedEntry<'_, _, _> as core::convert::From<indexmap::inner::entry::OccupiedEntry<'_, _, _>>>::from::__tickprof_here",
        "<indexmap::map::entry::IndexedEntry as From<indexmap::inner::entry::OccupiedEntry<_, _>>>::from",
    ),
    (
        "indexmap::set::slice::<impl core::default::Default for alloc::boxed::Box<indexmap::set::slice::Slice<_>>>::default::__tickprof_here",
        "<Box<indexmap::set::slice::Slice<_>> as Default>::default",
    ),
    (
        "indexmap::rayon::set::<impl rayon::iter::ParallelExtend<&_> for indexmap::set::IndexSet<_, _>>::par_extend::__tickprof_here",
        "<indexmap::set::IndexSet as rayon::iter::ParallelExtend<&_>>::par_extend",
    ),
    (
        "<indexmap::set::iter::Drain<'_, _> as core::iter::traits::exact_size::ExactSizeIterator>::len::__tickprof_here",
        "<indexmap::set::iter::Drain as ExactSizeIterator>::len",
    ),
    // Raw identifiers print without `r#`.
    ("app::Type::match::__tickprof_here", "app::Type::match"),
    ("app::async::fn::__tickprof_here", "app::async::fn"),
];

#[test]
fn every_real_shape_gets_its_canonical_form() {
    let wrong: Vec<String> = REAL
        .iter()
        .filter(|(raw, want)| clean_path(raw) != *want)
        .map(|(raw, want)| format!("{raw}\n  got  {}\n  want {want}", clean_path(raw)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_canonical_form_is_a_fixed_point() {
    for (_, shown) in REAL {
        assert_eq!(clean_path(shown), *shown);
    }
}

#[test]
fn unparsable_input_falls_back_to_placeholder_removal() {
    assert_eq!(
        clean_path("app::Foo<_>::bar::<<oops"),
        "app::Foo::bar::<<oops"
    );
    assert_eq!(
        clean_path("app::E<'_, _>::f::(::__tickprof_here"),
        "app::E::f::("
    );
    assert_eq!(clean_path(""), "");
    assert_eq!(clean_path("__tickprof_here"), "");
}

#[test]
fn the_marker_never_survives() {
    assert_eq!(clean_path("a::__tickprof_here::b"), "a::b");
    assert_eq!(clean_path("__tickprof___tickprof_herehere"), "");
    assert_eq!(clean_path("x<__tickprof_here"), "x<");
}

#[test]
fn deep_nesting_is_bounded_not_overflowed() {
    let deep = format!("a::{}_{}::f", "B<".repeat(10_000), ">".repeat(10_000));
    let out = clean_path(&deep);
    assert!(out.ends_with("::f"), "{}", &out[out.len() - 10..]);
    let shallow = format!("a::{}u8{}::f", "B<".repeat(10), ">".repeat(10));
    assert_eq!(clean_path(&shallow), shallow);
}

#[test]
fn abbreviate_is_identity_when_the_name_fits() {
    let name = "app::parser::Parser::next_token";
    assert!(matches!(abbreviate(name, 31), Cow::Borrowed(n) if n == name));
    assert!(matches!(abbreviate(name, 100), Cow::Borrowed(_)));
    assert_eq!(abbreviate("", 0), "");
}

#[test]
fn abbreviate_elides_whole_middle_segments_first() {
    let name = "myapp::parser::lexer::Parser::next_token";
    assert_eq!(abbreviate(name, 35), "myapp::…::lexer::Parser::next_token");
    assert_eq!(abbreviate(name, 29), "myapp::…::Parser::next_token");
    assert_eq!(abbreviate(name, 21), "myapp::…::next_token");
    // Room left over after the tail goes to more leading segments.
    let long_middle = "ab::cd::efghijklmnop::qr::stuvwxyz";
    assert_eq!(abbreviate(long_middle, 24), "ab::cd::…::qr::stuvwxyz");
}

#[test]
fn abbreviate_keeps_brackets_balanced_in_qualified_names() {
    let name = "<semver::parse::Version as FromStr>::from_str";
    assert_eq!(
        abbreviate(name, 41),
        "<semver::…::Version as FromStr>::from_str"
    );
    // The type's modules go first, the trait's if that is not enough.
    let both = "<a::bb::cc::T as x::yy::zz::Tr>::m";
    assert_eq!(abbreviate(both, 30), "<a::…::T as x::yy::zz::Tr>::m");
    assert_eq!(abbreviate(both, 25), "<a::…::T as x::…::Tr>::m");
    let generic = "<app::mod_a::Stack<u8> as app::mod_b::GenTr<app::mod_c::Item>>::h";
    assert_eq!(
        abbreviate(generic, 61),
        "<app::…::Stack<u8> as app::mod_b::GenTr<app::mod_c::Item>>::h"
    );
    assert_eq!(
        abbreviate(generic, 53),
        "<app::…::Stack<u8> as app::…::GenTr<app::…::Item>>::h"
    );
}

#[test]
fn abbreviate_falls_back_to_characters() {
    let name = "myapp::parser::Parser::a_very_long_method_name_indeed";
    let short = abbreviate(name, 20);
    assert_eq!(short.chars().count(), 20);
    assert!(short.starts_with("myapp:"), "{short}");
    assert!(short.ends_with("_name_indeed"), "{short}");
    assert!(short.contains('…'));
    assert_eq!(abbreviate(name, 1), "…");
    assert_eq!(abbreviate(name, 0), "");
    // Multi-byte characters are counted and never split.
    let wide = "äöü::ßßß::ééé::ñññ";
    for max in 0..wide.chars().count() {
        let out = abbreviate(wide, max);
        assert!(out.chars().count() <= max, "{out} > {max}");
    }
}

#[test]
fn a_ten_thousand_character_name_is_cut_to_the_column() {
    let name = format!("app::{}::method", "x".repeat(10_000));
    assert_eq!(abbreviate(&name, 78), "app::…::method");
    let one_segment = "x".repeat(10_000);
    let out = abbreviate(&one_segment, 78);
    assert_eq!(out.chars().count(), 78);
}

#[test]
fn terminal_safe_blanks_controls_and_escapes_bidi_and_invisibles() {
    assert!(matches!(terminal_safe("app::f"), Cow::Borrowed("app::f")));
    assert_eq!(terminal_safe("a\nb\tc\u{1b}[31m"), "a b c [31m");
    assert_eq!(terminal_safe("a\u{2028}b"), "a b");
    assert_eq!(
        terminal_safe("admin\u{202e}gpj.exe"),
        "admin\\u{202e}gpj.exe"
    );
    assert_eq!(terminal_safe("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
    assert_eq!(terminal_safe("a\u{200b}b\u{feff}"), "a\\u{200b}b\\u{feff}");
    assert_eq!(terminal_safe("\u{e0041}"), "\\u{e0041}");
    // Joiners in emoji sequences and scripts are kept.
    let family = "👨\u{200d}👩\u{200d}👧";
    assert!(matches!(terminal_safe(family), Cow::Borrowed(_)));
    assert!(matches!(terminal_safe("می\u{200c}خواهم"), Cow::Borrowed(_)));
}

#[test]
fn every_bidi_control_is_escaped() {
    let bidi = ['\u{061c}', '\u{200e}', '\u{200f}']
        .into_iter()
        .chain('\u{202a}'..='\u{202e}')
        .chain('\u{2066}'..='\u{2069}');
    for c in bidi {
        let out = terminal_safe(&c.to_string()).into_owned();
        assert_eq!(out, format!("\\u{{{:x}}}", c as u32));
    }
}

#[test]
fn spreadsheet_safe_quotes_formula_starts_only() {
    for bad in ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx"] {
        assert_eq!(spreadsheet_safe(bad), format!("'{bad}"));
    }
    for fine in ["app::f", "<app::X as Tr>::f", "", "a=b", " =x"] {
        assert!(matches!(spreadsheet_safe(fine), Cow::Borrowed(f) if f == fine));
    }
}

mod prop {
    use super::super::*;
    use super::{is_hidden, is_line_breaking};
    use proptest::prelude::*;

    /// Strings made of the tokens `type_name` output is built from, so
    /// the parser's paths are exercised, not only the fallback.
    fn tokens() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            "app",
            "::",
            "<",
            ">",
            "impl ",
            " for ",
            " as ",
            "_",
            "'_",
            ", ",
            "&",
            "mut ",
            "dyn ",
            " + ",
            "(",
            ")",
            "[",
            "]",
            "; ",
            "{{closure}}",
            "core",
            "fn",
            " -> ",
            "__tickprof_here",
            "3",
            "é",
            "\u{202e}",
        ]);
        prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
    }

    /// Types in the shapes `type_name` prints, nested.
    fn types() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            "u8",
            "_",
            "str",
            "app::m::T",
            "core::option::Option<u8>",
            "N",
            "3",
        ])
        .prop_map(str::to_owned);
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|args| format!("app::m::G<'_, {}>", args.join(", "))),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|args| format!("alloc::vec::Vec<{}>", args.join(", "))),
                inner.clone().prop_map(|t| format!("&'_ mut {t}")),
                inner.clone().prop_map(|t| format!("[{t}]")),
                inner.clone().prop_map(|t| format!("[{t}; 4]")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
                inner
                    .clone()
                    .prop_map(|t| format!("dyn app::Tr<{t}> + core::marker::Send")),
                inner.clone().prop_map(|t| format!("fn({t}) -> {t}")),
            ]
        })
    }

    /// Marker paths in every shape, built from [`types`].
    fn marker_paths() -> impl Strategy<Value = String> {
        let t = types;
        prop_oneof![
            Just("app::m::f".to_owned()),
            t().prop_map(|a| format!("app::m::S<{a}>::f")),
            (t(), t()).prop_map(|(a, b)| format!("<{a} as app::Tr<{b}>>::f")),
            (t(), t()).prop_map(|(a, b)| format!("app::x::<impl app::Tr<{b}> for {a}>::f")),
            t().prop_map(|a| format!("app::x::<impl core::str::traits::FromStr for {a}>::f")),
            t().prop_map(|a| format!("app::x::<impl app::m::S<{a}>>::f")),
        ]
        .prop_flat_map(|p| {
            prop::sample::select(vec!["", "::{{closure}}", "::g::{{closure}}"])
                .prop_map(move |tail| format!("{p}{tail}::__tickprof_here"))
        })
    }

    proptest! {
        #[test]
        fn every_generated_shape_parses_into_the_canonical_form(raw in marker_paths()) {
            let trimmed = raw.strip_suffix("::__tickprof_here").unwrap_or(&raw);
            let parsed = Parser::new(trimmed).whole_path();
            prop_assert!(parsed.is_some(), "did not parse: {}", raw);
            let out = clean_path(&raw);
            prop_assert!(!out.contains("<impl "), "{}", out);
            prop_assert!(!out.contains('\''), "{}", out);
            prop_assert!(!out.contains("core::") && !out.contains("alloc::"), "{}", out);
            prop_assert!(out.ends_with("f") || out.ends_with("{{closure}}"), "{}", out);
            prop_assert_eq!(clean_path(&out), out.clone());
        }

        #[test]
        fn clean_path_never_panics_nor_shows_the_marker(raw in any::<String>()) {
            let out = clean_path(&raw);
            prop_assert!(!out.contains(MARKER));
        }

        #[test]
        fn clean_path_on_token_soup(raw in tokens()) {
            let out = clean_path(&raw);
            prop_assert!(!out.contains(MARKER));
        }

        #[test]
        fn a_parsed_name_is_a_fixed_point(raw in tokens()) {
            if let Some(once) = Parser::new(&raw).whole_path() {
                let twice = Parser::new(&once).whole_path();
                prop_assert_eq!(twice.as_deref(), Some(once.as_str()), "from {}", raw);
            }
        }

        #[test]
        fn abbreviate_fits_and_keeps_the_ends(name in any::<String>(), max in 0usize..100) {
            let out = abbreviate(&name, max);
            let n = name.chars().count();
            prop_assert!(out.chars().count() <= max);
            if n <= max {
                prop_assert_eq!(out.as_ref(), name.as_str());
            } else if max > 1 {
                prop_assert!(out.contains('…'));
                let last: String = name.chars().skip(n - 1).collect();
                prop_assert!(out.ends_with(&last));
                if max > 3 {
                    prop_assert!(out.starts_with(name.chars().next().unwrap_or('…')));
                }
            }
        }

        #[test]
        fn abbreviate_fits_path_like_names(name in tokens(), max in 0usize..60) {
            let out = abbreviate(&name, max);
            prop_assert!(out.chars().count() <= max);
            if name.chars().count() <= max {
                prop_assert_eq!(out.as_ref(), name.as_str());
            }
        }

        #[test]
        fn terminal_safe_leaves_no_control_or_bidi(name in any::<String>()) {
            let out = terminal_safe(&name);
            prop_assert!(!out.chars().any(|c| is_line_breaking(c) || is_hidden(c)));
        }

        #[test]
        fn spreadsheet_safe_output_never_starts_a_formula(field in any::<String>()) {
            let out = spreadsheet_safe(&field);
            prop_assert!(!out.starts_with(['=', '+', '-', '@', '\t', '\r']));
            prop_assert!(out.ends_with(field.as_str()));
        }
    }
}
