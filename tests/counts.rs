//! Exact counts under threads, and every mark is its own site.
#![cfg(feature = "enabled")]

use tickprof::{prof_scope, profile};

#[profile]
fn counted(x: u64) -> u64 {
    std::hint::black_box(x) + 1
}

#[test]
fn four_threads_times_ten_thousand_is_exactly_forty_thousand() {
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let mut s = 0;
                for i in 0..10_000 {
                    s += counted(i);
                }
                s
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), (1..=10_000).sum::<u64>());
    }
    let r = tickprof::report();
    let site = r.find("::counted").expect("counted ran");
    assert_eq!(site.calls, 40_000);
    assert_eq!(site.rejected(), 0);
    // Raw time is measured; compensated time of a ~1 ns body may be 0.
    assert!(site.raw_total_ns > 0);
    assert!(site.total_ns <= site.raw_total_ns);
    assert!(site.min_ns <= site.max_ns);
}

fn scopes(n: usize) -> usize {
    prof_scope!("outer");
    let mut total = 0;
    for i in 0..n {
        prof_scope!();
        total += i;
        if i % 2 == 0 {
            prof_scope!("even");
            total += 1;
        }
    }
    total
}

#[test]
fn each_scope_is_its_own_site_with_exact_counts() {
    assert_eq!(scopes(10), 45 + 5);
    let r = tickprof::report();
    let outer = r.find("::scopes::outer").expect("outer scope");
    assert_eq!(outer.calls, 1);
    let even = r.find("::scopes::even").expect("even scope");
    assert_eq!(even.calls, 5);
    let body = r
        .sites
        .iter()
        .find(|s| s.name.contains("::scopes@"))
        .expect("unnamed loop scope");
    assert_eq!(body.calls, 10);
    assert_eq!(body.kind, tickprof::SiteKind::Scope);
    assert!(
        body.name.ends_with(&format!("@{}", body.line)),
        "{}",
        body.name
    );
}

mod parser {
    /// A type with methods.
    pub struct Parser(pub u32);

    impl Parser {
        #[tickprof::profile]
        pub fn next_token(&mut self) -> u32 {
            self.0 += 1;
            self.0
        }
    }

    pub trait Lexer {
        #[tickprof::profile]
        fn lex(&self) -> u32 {
            7
        }
    }

    impl Lexer for Parser {}

    #[tickprof::profile]
    pub fn generic<T: std::fmt::Debug>(t: T) -> String {
        format!("{t:?}")
    }

    #[tickprof::profile(name = "custom name")]
    pub fn renamed() -> u8 {
        1
    }
}

#[test]
fn names_are_full_paths_and_generics_share_one_site() {
    use parser::Lexer;
    let mut p = parser::Parser(0);
    assert_eq!(p.next_token(), 1);
    assert_eq!(p.lex(), 7);
    assert_eq!(parser::generic(1u8), "1");
    assert_eq!(parser::generic("x"), "\"x\"");
    assert_eq!(parser::renamed(), 1);
    let r = tickprof::report();
    let next = r
        .site(concat!(module_path!(), "::parser::Parser::next_token"))
        .expect("method path");
    assert_eq!(next.calls, 1);
    assert_eq!(next.kind, tickprof::SiteKind::Function);
    assert!(next.file.ends_with("counts.rs"));
    assert!(
        r.find("Lexer::lex").is_some(),
        "{:?}",
        r.sites.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let g: Vec<_> = r
        .sites
        .iter()
        .filter(|s| s.name.ends_with("parser::generic"))
        .collect();
    assert_eq!(g.len(), 1, "one entry per generic function");
    assert_eq!(g[0].calls, 2);
    assert_eq!(r.site("custom name").map(|s| s.calls), Some(1));
}
