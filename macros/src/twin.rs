//! Whether a marked function's body may be emitted twice: once plain, run
//! when profiling is off or paused, and once with the guard.
//!
//! Two copies of a body behave as one only if the body defines nothing
//! whose identity matters: a `static` (or a nested marked function, whose
//! call site is a `static`) would split into two, an `impl` or `macro_rules!`
//! would be defined twice, a nested `fn` would be compiled twice. So a body
//! is duplicated only if none of its tokens is an item keyword and every
//! macro it invokes is one of the standard library's expression macros
//! (a user macro may expand to items). Bodies longer than
//! [`MAX_TOKENS`] keep one copy: the off path's saving is a few
//! instructions, negligible beside a long body, and the copy would double
//! its compile time. Anything else keeps today's single guarded body.

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The longest body (in tokens, groups' contents included) that is
/// duplicated.
pub(crate) const MAX_TOKENS: usize = 512;

/// Keywords that start an item whose duplication would change what the
/// program does or how it compiles.
const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "static",
    "struct",
    "enum",
    "union",
    "impl",
    "trait",
    "mod",
    "extern",
    "macro_rules",
];

/// Macros known to expand to an expression or statement with no item:
/// the standard library's, by the last segment of their path.
const EXPRESSION_MACROS: &[&str] = &[
    "addr_of",
    "addr_of_mut",
    "assert",
    "assert_eq",
    "assert_ne",
    "cfg",
    "column",
    "concat",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "include_bytes",
    "include_str",
    "line",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
];

/// Whether `body` (a function's block, braces included) may be emitted
/// twice (see the module docs).
pub(crate) fn duplicable(body: TokenStream) -> bool {
    let mut budget = MAX_TOKENS;
    scan(body, &mut budget)
}

/// Walks `tokens` (and the groups within), spending one of `budget` per
/// token; false on an item keyword, an unknown macro, or an empty budget.
fn scan(tokens: TokenStream, budget: &mut usize) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        match token {
            TokenTree::Group(group) => {
                if !scan(group.stream(), budget) {
                    return false;
                }
            }
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                let lifetime =
                    i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '\'');
                if !lifetime && ITEM_KEYWORDS.contains(&name.as_str()) {
                    return false;
                }
                if invoked(&tokens[i + 1..]) && !EXPRESSION_MACROS.contains(&name.as_str()) {
                    return false;
                }
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
    true
}

/// Whether `rest`, the tokens after an identifier, make it a macro
/// invocation: `!` then a delimited group (`x != y` and `!flag` are not).
fn invoked(rest: &[TokenTree]) -> bool {
    matches!(
        rest,
        [TokenTree::Punct(bang), TokenTree::Group(g), ..]
            if bang.as_char() == '!' && g.delimiter() != Delimiter::None
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn plain_bodies_are_duplicable() {
        for body in [
            quote!({ x + 1 }),
            quote!({
                let v: &'static str = "a";
                if x != 0 && !flag {
                    return v;
                }
                v
            }),
            quote!({
                println!("{}", x);
                assert_eq!(x, 1);
                std::vec![1, 2]
            }),
            quote!({
                let f = |a: u8| a + 1;
                f(x)?
            }),
            quote!({
                'outer: loop {
                    break 'outer x;
                }
            }),
            quote!({
                const N: usize = 4;
                [0u8; N]
            }),
        ] {
            assert!(duplicable(body.clone()), "{body}");
        }
    }

    #[test]
    fn items_and_unknown_macros_keep_one_body() {
        for body in [
            quote!({
                static COUNT: AtomicU8 = AtomicU8::new(0);
                COUNT.load(Relaxed)
            }),
            quote!({
                fn inner() {}
                inner()
            }),
            quote!({
                if x {
                    struct S;
                }
            }),
            quote!({
                impl Foo for u8 {}
            }),
            quote!({
                macro_rules! m {
                    () => {};
                }
                m!()
            }),
            quote!({
                thread_local! { static T: u8 = 0; }
            }),
            quote!({
                tickprof::prof_scope!();
                x
            }),
            quote!({
                let p: fn(u8) -> u8 = f;
                p(x)
            }),
            quote!({
                extern "C" {
                    fn abs(x: i32) -> i32;
                }
            }),
        ] {
            assert!(!duplicable(body.clone()), "{body}");
        }
    }

    #[test]
    fn long_bodies_keep_one_body() {
        let stmts = (0..MAX_TOKENS).map(|_| quote!(x += 1;));
        assert!(!duplicable(quote!({ #(#stmts)* })));
        assert!(duplicable(quote!({
            x += 1;
        })));
    }
}
