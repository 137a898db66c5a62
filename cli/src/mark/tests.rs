//! Unit and property tests of the rewriter.

use super::{rewrite, Built, Glob, Options, Reason};
use proptest::prelude::*;

fn opts() -> Options {
    Options {
        crate_name: "app".into(),
        dep: "tickprof".into(),
        edition2015: false,
        mark: Vec::new(),
        skip: Vec::new(),
        built: None,
    }
}

fn run(src: &str, opts: &Options) -> (String, Vec<(String, Option<Reason>)>) {
    let r = rewrite(src, &["m".to_string()], opts).unwrap();
    let fns = r
        .functions
        .into_iter()
        .map(|f| (f.name, f.skipped))
        .collect();
    (r.text, fns)
}

#[test]
fn marks_every_kind_of_function() {
    let src = "\
/// doc
#[inline]
pub(crate) fn free() { fn inner() {} }
struct S;
impl S { pub fn method(&self) {} unsafe fn u() {} }
trait T { fn required(&self); fn provided(&self) {} }
impl T for S { fn required(&self) {} }
mod inner { #[cfg(test)] mod tests { #[test] fn t() {} } }
async fn a() {}
extern \"C\" fn c() {}
";
    let (text, fns) = run(src, &opts());
    let expected = "\
/// doc
#[inline]
#[::tickprof::profile(always)] pub(crate) fn free() { #[::tickprof::profile(always)] fn inner() {} }
struct S;
impl S { #[::tickprof::profile(always)] pub fn method(&self) {} #[::tickprof::profile(always)] unsafe fn u() {} }
trait T { fn required(&self); #[::tickprof::profile(always)] fn provided(&self) {} }
impl T for S { #[::tickprof::profile(always)] fn required(&self) {} }
mod inner { #[cfg(test)] mod tests { #[test] #[::tickprof::profile(always)] fn t() {} } }
#[::tickprof::profile(always)] async fn a() {}
#[::tickprof::profile(always)] extern \"C\" fn c() {}
";
    assert_eq!(text, expected);
    let names: Vec<&str> = fns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "app::m::free",
            "app::m::free::inner",
            "app::m::S::method",
            "app::m::S::u",
            "app::m::T::provided",
            "<app::m::S as app::m::T>::required",
            "app::m::inner::tests::t",
            "app::m::a",
            "app::m::c",
        ]
    );
    assert!(fns.iter().all(|(_, s)| s.is_none()));
}

#[test]
fn skips_what_profile_cannot_mark() {
    let src = "\
const fn k() {}
unsafe extern \"C\" fn v(x: i32, args: ...) {}
fn fut() -> impl Future<Output = u8> { ready(1) }
fn fut_ok() -> impl Future<Output = u8> { async { 1 } }
fn boxed() -> Pin<Box<dyn Future<Output = u8>>> { Box::pin(async move { 1 }) }
#[tickprof::profile(name = \"x\")] fn own() {}
#[profile] impl S { fn in_marked(&self) {} }
impl<T> W<T> { default fn spec() {} }
macro_rules! make { ($n:ident) => { fn $n() {} fn fixed() {} }; }
make!(made);
other! { fn via_other() {} }
#[expect(dead_code)] fn dead() {}
#[cfg_attr(test, expect(unused))] fn dead_in_tests() {}
";
    let (text, fns) = run(src, &opts());
    let reasons: Vec<_> = fns.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    assert_eq!(
        reasons,
        [
            ("app::m::k", Some(Reason::Const)),
            ("app::m::v", Some(Reason::Variadic)),
            ("app::m::fut", Some(Reason::FutureBody)),
            ("app::m::fut_ok", None),
            ("app::m::boxed", None),
            ("app::m::own", Some(Reason::AlreadyMarked)),
            ("app::m::S::in_marked", Some(Reason::AlreadyMarked)),
            ("app::m::spec", Some(Reason::Default)),
            ("app::m::$n (macro_rules!)", Some(Reason::Macro)),
            ("app::m::fixed (macro_rules!)", Some(Reason::Macro)),
            ("app::m::via_other (other!)", Some(Reason::Macro)),
            ("app::m::dead", Some(Reason::ExpectedDead)),
            ("app::m::dead_in_tests", Some(Reason::ExpectedDead)),
        ]
    );
    assert_eq!(text.matches("#[::tickprof::profile(always)] ").count(), 2);
    assert!(text.contains("#[::tickprof::profile(always)] fn fut_ok"));
}

#[test]
fn globs_and_spellings() {
    let src = "fn parse() {}\nfn print() {}\nimpl Tr for S { fn go(&self) {} }\n";
    let mut o = opts();
    o.mark = vec![Glob::new("app::m::p*"), Glob::new("<*as Tr>::*")];
    o.skip = vec![Glob::new("*::print")];
    let (text, fns) = run(src, &o);
    assert_eq!(
        fns.iter().map(|f| f.1).collect::<Vec<_>>(),
        [None, Some(Reason::Glob), None]
    );
    assert_eq!(text.matches("profile(always)]").count(), 2);
    let mut o = opts();
    o.edition2015 = true;
    assert!(run(src, &o)
        .0
        .starts_with("#[tickprof::profile(always)] fn parse"));
    o.dep = "tp".into();
    assert!(run(src, &o)
        .0
        .starts_with("#[tp::profile(crate = tp, always)] fn parse"));
}

#[test]
fn after_inlining_marks_what_the_build_keeps() {
    let src = "\
/// doc
#[inline(never)]
pub(crate)
fn kept() {}
fn small() {}
fn gone() {}
impl S { fn r#type(&self) {} fn same_line(&self) {} }
async fn body() {}
fn fut() -> impl Future<Output = u8> {
    async { 1 }
}
fn tiny() {}
";
    let built = |line, name: &str, kept| Built {
        line,
        name: name.into(),
        kept,
        small: false,
        once: false,
    };
    let mut o = opts();
    o.built = Some(vec![
        // rustc's line: the first token after the attributes.
        built(3, "kept", true),
        built(5, "small", false),
        // Holding a large inlined function: its body once.
        Built {
            once: true,
            ..built(7, "type", true)
        },
        // Another function's name on the line: not this one.
        built(7, "kept", true),
        built(8, "{async_fn#0}", true),
        built(10, "{async_block#0}", true),
        // A closure on a function's line is not the function.
        built(6, "{closure#0}", true),
        // Kept, but under `--min-bytes`.
        Built {
            small: true,
            ..built(12, "tiny", true)
        },
    ]);
    let (text, fns) = run(src, &o);
    let reasons: Vec<_> = fns.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    assert_eq!(
        reasons,
        [
            ("app::m::kept", None),
            ("app::m::small", Some(Reason::Inlined)),
            ("app::m::gone", Some(Reason::NotBuilt)),
            ("app::m::S::r#type", None),
            ("app::m::S::same_line", Some(Reason::NotBuilt)),
            ("app::m::body", None),
            ("app::m::fut", None),
            ("app::m::tiny", Some(Reason::Small)),
        ]
    );
    assert!(text.contains("#[::tickprof::profile(always)] pub(crate)\nfn kept"));
    assert!(text.contains("impl S { #[::tickprof::profile(always, once)] fn r#type(&self)"));
    assert_eq!(text.matches("once").count(), 1, "{text}");
    // `--mark` marks what it names, inlined or not.
    o.mark = vec![Glob::new("app::m::small")];
    let (_, fns) = run(src, &o);
    assert_eq!(fns[1], ("app::m::small".to_string(), None));
    assert_eq!(fns[0].1, Some(Reason::Glob));
}

#[test]
fn keeps_offsets_with_multibyte_text_bom_and_crlf() {
    let src = "\u{feff}// é\r\nfn a() { let s = \"ü\"; } fn b() {}\r\n";
    let (text, _) = run(src, &opts());
    assert_eq!(
        text,
        "\u{feff}// é\r\n#[::tickprof::profile(always)] fn a() { let s = \"ü\"; } #[::tickprof::profile(always)] fn b() {}\r\n"
    );
}

#[test]
fn unparsable_files_are_errors() {
    assert!(rewrite("fn f( {", &[], &opts()).is_err());
}

/// Small source files built from pieces that cover the shapes above.
fn source() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("fn f() {}\n"),
        Just("pub fn g(x: u8) -> u8 { x }\n"),
        Just("const fn k() {}\n"),
        Just("struct S;\n"),
        Just("impl S { fn m(&self) { fn n() {} } }\n"),
        Just("trait T { fn r(&self); fn d(&self) {} }\n"),
        Just("mod a { fn h() {} }\n"),
        Just("// fn not_code() {}\n"),
        Just("/* é */ static X: u8 = 1;\n"),
        Just("macro_rules! m { () => { fn z() {} } }\n"),
        Just("async fn w() {}\n"),
        Just("use std::fmt;\n"),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn rewriting_parses_is_idempotent_and_only_inserts(src in source()) {
        let once = rewrite(&src, &[], &opts()).unwrap();
        prop_assert!(syn::parse_file(&once.text).is_ok());
        let twice = rewrite(&once.text, &[], &opts()).unwrap();
        prop_assert_eq!(&twice.text, &once.text);
        prop_assert_eq!(twice.marked(), 0);
        prop_assert_eq!(once.text.replace("#[::tickprof::profile(always)] ", ""), src.clone());
        if once.functions.is_empty() {
            prop_assert_eq!(&once.text, &src);
        }
        prop_assert_eq!(once.marked(), once.text.matches("#[::tickprof::profile(always)]").count());
    }
}
