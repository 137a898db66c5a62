//! The functions the compiler inlined into marked functions, and the small
//! ones left unmarked, as rows beneath them (feature `inlined`, Linux):
//! each thread's program-counter samples (`record::pcs`) resolved through
//! the binary's debug information into the chain of functions inlined at
//! that address (rust-lang's symboliser, the `backtrace` crate), and each
//! marked call path's own time shared out by them.
//!
//! A sample of node N (a marked call path) at address A counts for:
//!
//! - tickprof's instrumentation when the innermost function at A that is
//!   not the standard library's is tickprof's own (the guard inlined into
//!   the marked function, a counted child's entry, `timed`'s frame): left
//!   out of the shares, and N's own time in the share its samples found
//!   there (weighed with the run's) is the instrumentation's
//!   ([`expand::expand`]): the windows the sampler's looks find (a
//!   lookup, a count, a clock read) are only part of a mark's code;
//! - an **inlined row** when, inside N's function (its frame, or its
//!   body's closure, found in A's chain), a function of the program (not
//!   the standard library's, not tickprof's) was inlined: the innermost
//!   such function;
//! - an **unmarked row** when A lies in another function the program did
//!   not inline and nobody marked (a small one, left unmarked by `cargo
//!   tickprof`): the innermost function of the program there;
//! - N's own code otherwise (the standard library's code inlined or
//!   called, a C library's).
//!
//! A row is a child of N in the tree, of kind `SiteKind::Inlined`, with no
//! calls: its time is N's own time as the sampler found it
//! (`sampled`), in the share its samples found among N's (`pc_samples`
//! says how many), taken out of N's own; the report then fits it in N's
//! time as it fits a counted child. Rows resting on few samples are
//! rough, and the notes under the table say so.

pub(crate) mod expand;
mod units;

use crate::site::{CallSite, SiteKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What an address is, once resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
enum At {
    /// Inside tickprof's instrumentation.
    Instrumentation,
    /// In the function `name` (innermost first), with, outermost to
    /// innermost, the functions there: each a name and its source file.
    Chain(Vec<(String, String)>),
}

/// Resolved addresses, kept for the process's life (a binary's addresses
/// are few; reports come again).
fn cache() -> &'static Mutex<HashMap<u64, Arc<At>>> {
    static C: OnceLock<Mutex<HashMap<u64, Arc<At>>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The functions at `pc`, innermost first (name, source file), as the
/// binary's debug information gives them (its symbol alone without it).
fn frames(pc: u64) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // `resolve` takes a return address and looks one byte before it; a
    // sample's address is the instruction itself.
    let addr = (pc as usize).wrapping_add(1);
    backtrace::resolve(addr as *mut core::ffi::c_void, |sym| {
        let name = sym.name().map(|n| format!("{n:#}")).unwrap_or_default();
        let file = sym
            .filename()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push((name, file));
    });
    out
}

/// The load address of the object (executable or shared library) that
/// holds `addr`; `None` outside any.
fn object_of(addr: usize) -> Option<usize> {
    // SAFETY: `Dl_info` is plain data; `dladdr` only reads the loader's
    // tables and writes `info`.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: as above; any address may be asked.
    let found = unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) };
    (found != 0).then_some(info.dli_fbase as usize)
}

/// Whether `pc` lies in the object tickprof is linked into: the marked
/// functions' object (Rust links its crates statically into the
/// executable, or into the one shared library they make). A sample
/// elsewhere (the C library, the loader, another shared library) is the
/// marked function's own code whatever its name, and is not resolved:
/// resolving it read the C library's detached debug information where
/// one is installed (Debian's `libc6-dbg`), decompressing it at exit,
/// 6% of a marked semver run's CPU samples.
fn in_marked_object(pc: u64) -> bool {
    static OWN: OnceLock<Option<usize>> = OnceLock::new();
    let own = *OWN.get_or_init(|| object_of(in_marked_object as *const () as usize));
    own.is_some() && object_of(pc as usize) == own
}

/// `pc` resolved (cached).
fn at(pc: u64) -> Arc<At> {
    if let Some(a) = cache().lock().ok().and_then(|c| c.get(&pc).cloned()) {
        return a;
    }
    let f = if in_marked_object(pc) && !units::in_std_code(pc) {
        frames(pc)
    } else {
        Vec::new()
    };
    let a = Arc::new(if is_instrumentation(&f) {
        At::Instrumentation
    } else {
        At::Chain(f.into_iter().rev().collect())
    });
    if let Ok(mut c) = cache().lock() {
        c.insert(pc, a.clone());
    }
    a
}

/// Whether the functions at an address (innermost first) are tickprof's
/// instrumentation: the innermost that is not the standard library's
/// (whose code tickprof's inlines: an atomic's store, `rdtsc`) is
/// tickprof's. The runtime's functions that run a marked function's body
/// (`__private::timed` and the like, the body inlined in them) count only
/// with line information: then an address in their own code (their
/// frame's set-up) is theirs, an address in the body has the body's
/// functions inside; without it, every address there is theirs.
fn is_instrumentation(frames: &[(String, String)]) -> bool {
    let Some((name, file)) = frames.iter().find(|(n, _)| !is_std(n)) else {
        return false;
    };
    is_tickprof(name) && (!name.contains("::__private::") || !file.is_empty())
}

/// Whether `name` is the standard library's (`core`, `std`, `alloc`).
fn is_std(name: &str) -> bool {
    let n = name.trim_start_matches('<');
    ["core::", "std::", "alloc::", "__rustc::"]
        .iter()
        .any(|p| n.starts_with(p))
}

/// Whether `name` is one of tickprof's own functions.
fn is_tickprof(name: &str) -> bool {
    let n = name.trim_start_matches('<');
    n.starts_with("tickprof_runtime::") || n.starts_with("tickprof::")
}

/// Whether a function is the program's (a row may be made of it): a Rust
/// path, not the standard library's, not tickprof's. The standard
/// library's sources are the toolchain's, under `/rustc/`; the crates it
/// is built from are under `/rust/deps/` (its `HashMap` is `hashbrown`'s:
/// a program's `HashMap::entry` showed as `hashbrown::map::make_hash
/// (inlined)` and four more such rows), or have no line information at
/// all (its symboliser's `miniz_oxide`, `gimli`: a panic's backtrace).
fn is_program(name: &str, file: &str) -> bool {
    let n = name.trim_start_matches('<');
    name.contains("::")
        && !is_tickprof(name)
        && !is_std(n)
        && !file.contains("/rustc/")
        && !file.starts_with("/rust/deps/")
        && (!file.is_empty() || !is_std_dependency(n))
}

/// Whether a path's crate is one the standard library is built from
/// (its `Cargo.toml`'s dependencies, and theirs).
fn is_std_dependency(path: &str) -> bool {
    const CRATES: [&str; 14] = [
        "addr2line",
        "adler2",
        "cfg_if",
        "compiler_builtins",
        "gimli",
        "hashbrown",
        "libc",
        "memchr",
        "miniz_oxide",
        "object",
        "panic_unwind",
        "rustc_demangle",
        "std_detect",
        "unwind",
    ];
    let krate = path.split("::").next().unwrap_or(path);
    CRATES.contains(&krate)
}

/// `name` without generic arguments (`a::b<T>::c` → `a::b::c`), for
/// comparing a frame's name with a marked function's path.
fn bare(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0u32;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// A name's key for matching a frame with a mark, whichever way the name
/// was written: a trait impl's method as `Type as Trait::method` (the
/// type's path, the trait's last segment), generic arguments left out —
/// `<a::S<T> as core::fmt::Display>::fmt` (a mark's path, a symbol's) and
/// `a::m::<impl core::fmt::Display for a::S<T>>::fmt` (the debug info's
/// namespaces) are both `a::S as Display::fmt`; an inherent impl's
/// `<impl a::S>::new` is `a::S::new`; any other name its bare path.
fn key(name: &str) -> String {
    let Some((ty, tr, rest)) = impl_parts(name) else {
        return bare(name);
    };
    let ty = bare(ty);
    let rest = bare(rest.trim_start_matches("::"));
    match tr {
        Some(tr) => {
            let tr = bare(tr);
            let last = tr.rsplit("::").next().unwrap_or(&tr);
            format!("{ty} as {last}::{rest}")
        }
        None => format!("{ty}::{rest}"),
    }
}

/// A qualified or impl-namespaced name's (self type, trait, what follows
/// the closing `>`): `<T as Tr>::m` and `path::<impl Tr for T>::m` give
/// `(T, Some(Tr), "::m")`, `<T>::m` and `path::<impl T>::m` `(T, None,
/// "::m")`; any other name `None`.
fn impl_parts(name: &str) -> Option<(&str, Option<&str>, &str)> {
    if let Some(after) = name.strip_prefix('<') {
        let (inner, rest) = split_angle(after)?;
        return Some(match inner.split_once(" as ") {
            Some((ty, tr)) => (ty, Some(tr), rest),
            None => (inner, None, rest),
        });
    }
    let i = name.find("<impl ")?;
    let (inner, rest) = split_angle(&name[i + 1..])?;
    let inner = inner.strip_prefix("impl ")?;
    Some(match inner.split_once(" for ") {
        Some((tr, ty)) => (ty, Some(tr), rest),
        None => (inner, None, rest),
    })
}

/// `s`, just after an opening `<`, split at its matching `>`: (inside,
/// after).
fn split_angle(s: &str) -> Option<(&str, &str)> {
    let mut depth = 1u32;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&s[..i], &s[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// A row's name for `name`: generic arguments left out (`a::B<T>::f` →
/// `a::B::f`), a qualified path kept (`<a::S<T> as core::fmt::Display>::fmt`
/// → `<a::S as core::fmt::Display>::fmt`), and a closure's frames given to
/// their function (`a::f::{{closure}}` → `a::f`), as tickprof marks them.
fn shown(name: &str) -> String {
    // The debug info's `path::<impl Tr for T>::m` as a qualified path.
    let rebuilt;
    let name = match (name.starts_with('<'), impl_parts(name)) {
        (false, Some((ty, Some(tr), rest))) => {
            rebuilt = format!("<{ty} as {tr}>{rest}");
            rebuilt.as_str()
        }
        (false, Some((ty, None, rest))) => {
            rebuilt = format!("{ty}{rest}");
            rebuilt.as_str()
        }
        _ => name,
    };
    let mut out = String::with_capacity(name.len());
    // Per open `<`: whether it is kept (a qualified path's, at the start of
    // the name or after `as `) or generic arguments (dropped, with all
    // inside).
    let mut open: Vec<bool> = Vec::new();
    for c in name.chars() {
        let dropping = open.iter().any(|kept| !kept);
        match c {
            '<' => {
                let kept = !dropping && (out.is_empty() || out.ends_with(' '));
                open.push(kept);
                if kept {
                    out.push(c);
                }
            }
            '>' => out.extend((open.pop() == Some(true)).then_some(c)),
            _ if !dropping => out.push(c),
            _ => {}
        }
    }
    let mut s = out.replace("::{{closure}}", "");
    while s.ends_with("::") {
        s.truncate(s.len() - 2);
    }
    if s.is_empty() {
        s = name.to_owned();
    }
    s
}

/// Whether the frame `name` is the marked function `holder`, or a closure
/// inside it (a duplicated body runs as one).
fn is_holder(name: &str, holder: &str) -> bool {
    let (n, h) = (key(name), key(holder));
    n == h
        || n.strip_prefix(h.as_str())
            .is_some_and(|rest| rest.starts_with("::{{closure}}"))
}

/// The functions marked in this program (every mark's function path): a
/// sample in one of them that is not its node's own is that function's
/// code outside its instrumentation's windows (its return, after its
/// caller's node was put back), not a row.
fn marked() -> &'static std::collections::HashSet<String> {
    static M: OnceLock<std::collections::HashSet<String>> = OnceLock::new();
    M.get_or_init(|| {
        crate::coverage::marks()
            .into_iter()
            .filter(|s| matches!(s.kind(), SiteKind::Function | SiteKind::AsyncFunction))
            .map(|s| key(&s.function_path()))
            .collect()
    })
}

/// What a sample of `holder`'s node at `chain` (outermost first) counts
/// for: `None`, the holder's own code; `Some((name, file, inlined))`, a
/// row.
fn row_of<'a>(chain: &'a [(String, String)], holder: &str) -> Option<(&'a str, &'a str, bool)> {
    // Inside the holder's frame when it is in the chain; else the whole
    // chain is another function's (called out of line).
    let (inner, inlined) = match chain.iter().rposition(|(n, _)| is_holder(n, holder)) {
        Some(h) => (&chain[h + 1..], true),
        None => (chain, false),
    };
    inner
        .iter()
        .rev()
        .find(|(n, f)| is_program(n, f))
        .map(|(n, f)| (n.as_str(), f.as_str(), inlined || inner.len() > 1))
}

/// The site of a row named `name` (`(inlined)` or `(unmarked)` after
/// the function's path), made once per name and kept.
fn site_of(name: &str, file: &str, inlined: bool) -> &'static CallSite {
    static SITES: OnceLock<Mutex<HashMap<String, &'static CallSite>>> = OnceLock::new();
    let shown = format!(
        "{} ({})",
        shown(name),
        if inlined { "inlined" } else { "unmarked" }
    );
    let sites = SITES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut sites = match sites.lock() {
        Ok(g) => g,
        Err(e) => e.into_inner(),
    };
    sites.entry(shown.clone()).or_insert_with(|| {
        let name: &'static str = Box::leak(shown.into_boxed_str());
        let file: &'static str = Box::leak(file.to_owned().into_boxed_str());
        Box::leak(Box::new(CallSite::inlined(name, file, 0)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| (n.to_string(), "src/lib.rs".to_owned()))
            .collect()
    }

    #[test]
    fn a_sample_counts_for_the_innermost_program_function_inside_its_holder() {
        let holder = "app::parse";
        // In the holder's own code.
        assert_eq!(row_of(&chain(&["app::parse"]), holder), None);
        // In the body's closure (the recording copy), then inlined code.
        let c = chain(&[
            "tickprof_runtime::__private::timed<app::parse::{{closure}}>",
            "app::parse::{{closure}}",
            "app::scan",
            "core::slice::iter::next",
        ]);
        assert_eq!(row_of(&c, holder), Some(("app::scan", "src/lib.rs", true)));
        // Only the standard library's code inlined: the holder's own.
        let c = chain(&["app::parse", "alloc::vec::Vec<T>::push"]);
        assert_eq!(row_of(&c, holder), None);
        // Another function, called out of line and unmarked.
        let c = chain(&["app::class_of"]);
        assert_eq!(
            row_of(&c, holder),
            Some(("app::class_of", "src/lib.rs", false))
        );
        // A C library's function: the holder's own.
        assert_eq!(row_of(&chain(&["__memmove_avx_unaligned"]), holder), None);
        // Generic arguments do not hide the holder.
        let c = chain(&["app::Parser<u8>::run", "app::step"]);
        assert_eq!(
            row_of(&c, "app::Parser::run"),
            Some(("app::step", "src/lib.rs", true))
        );
    }

    #[test]
    fn tickprofs_and_the_standard_librarys_functions_are_not_the_programs() {
        assert!(is_tickprof("tickprof_runtime::record::guard::Guard::enter"));
        assert!(is_tickprof(
            "<tickprof_runtime::record::counted::Counted as core::ops::Drop>::drop"
        ));
        assert!(!is_program(
            "core::ptr::read",
            "/rustc/abc/library/core/src/ptr.rs"
        ));
        assert!(!is_program(
            "<alloc::vec::Vec<T> as core::ops::Index>::index",
            "x.rs"
        ));
        assert!(!is_program("app::f", "/rustc/abc/library/std/src/x.rs"));
        assert!(is_program(
            "<app::Tree as core::ops::Index<usize>>::index",
            "src/tree.rs"
        ));
        assert_eq!(bare("a::B<T, C<U>>::f"), "a::B::f");
        assert!(!is_program("__rustc::__rust_alloc", ""));
    }

    /// A trait method's mark matches its own frames however the name is
    /// written (semver's `from_str` was a row under itself).
    #[test]
    fn a_trait_methods_frames_are_its_own_whichever_way_named() {
        let holder = "<semver::Version as core::str::traits::FromStr>::from_str";
        for frame in [
            "semver::parse::<impl core::str::traits::FromStr for semver::Version>::from_str",
            "<semver::Version as core::str::traits::FromStr>::from_str",
            "semver::parse::<impl core::str::traits::FromStr for semver::Version>::from_str::{{closure}}",
        ] {
            assert!(is_holder(frame, holder), "{frame}");
            assert!(is_holder(frame, "<semver::Version as FromStr>::from_str"), "{frame}");
        }
        assert!(!is_holder(
            "semver::parse::<impl core::str::traits::FromStr for semver::VersionReq>::from_str",
            holder
        ));
        assert!(is_holder("a::<impl a::S<T>>::new", "a::S<T>::new"));
        assert_eq!(
            key("<a::S<T> as core::ops::Index<usize>>::index"),
            "a::S as Index::index"
        );
        assert_eq!(
            shown(
                "semver::parse::<impl core::str::traits::FromStr for semver::VersionReq>::from_str"
            ),
            "<semver::VersionReq as core::str::traits::FromStr>::from_str"
        );
        assert_eq!(shown("a::<impl a::S<T>>::new"), "a::S::new");
    }

    #[test]
    fn a_rows_name_keeps_a_qualified_path_and_gives_closures_to_their_function() {
        assert_eq!(shown("a::B<T, C<U>>::f"), "a::B::f");
        assert_eq!(
            shown("<quickstart::Stats as core::fmt::Display>::fmt"),
            "<quickstart::Stats as core::fmt::Display>::fmt"
        );
        assert_eq!(
            shown("<a::S<T> as core::ops::Index<usize>>::index"),
            "<a::S as core::ops::Index>::index"
        );
        assert_eq!(shown("lookup::buffer::{{closure}}"), "lookup::buffer");
        assert_eq!(shown("a::f::{{closure}}::{{closure}}"), "a::f");
        assert_eq!(shown("a::f::<u8>"), "a::f");
    }

    /// This test binary's own addresses resolve (it has debug information:
    /// the test profile's): a function's address gives its name.
    #[test]
    fn an_address_of_this_binary_resolves_to_its_function() {
        #[inline(never)]
        fn marker() -> u64 {
            std::hint::black_box(7)
        }
        let pc = marker as *const () as u64;
        // `frames`, not `at`: this test's function is tickprof's own.
        let c = frames(pc);
        assert!(c.iter().any(|(n, _)| n.ends_with("marker")), "{c:?}");
    }

    /// An address is tickprof's instrumentation when the innermost
    /// function there that is not the standard library's is tickprof's;
    /// in a function that runs a marked body (`__private::timed`), only
    /// with line information (else the body's addresses are its too).
    #[test]
    fn tickprofs_code_is_the_innermost_function_past_the_standard_librarys() {
        let at = |names: &[(&str, &str)]| {
            let f: Vec<(String, String)> = names
                .iter()
                .map(|(n, f)| (n.to_string(), f.to_string()))
                .collect();
            is_instrumentation(&f)
        };
        let lib = "src/lib.rs";
        // The clock read inlined in the guard's exit, in `timed`.
        assert!(at(&[
            ("core::core_arch::x86::rdtsc::_rdtsc", "/rustc/x/rdtsc.rs"),
            ("tickprof_runtime::clock::ticks", "runtime/src/clock.rs"),
            (
                "tickprof_runtime::record::guard::Guard::end",
                "runtime/src/record/guard.rs"
            ),
            (
                "tickprof_runtime::__private::timed<app::f::{{closure}}>",
                "runtime/src/private.rs"
            ),
        ]));
        // A counted child's check, inlined in the marked function.
        assert!(at(&[
            (
                "core::sync::atomic::AtomicPtr<T>::load",
                "/rustc/x/atomic.rs"
            ),
            (
                "tickprof_runtime::record::counted::Counted::enter_any",
                "runtime/src/record/counted.rs"
            ),
            ("app::f", lib),
        ]));
        // The body in `timed`: the program's.
        assert!(!at(&[
            ("core::slice::iter::next", "/rustc/x/iter.rs"),
            ("app::f::{{closure}}", lib),
            (
                "tickprof_runtime::__private::timed<app::f::{{closure}}>",
                "runtime/src/private.rs"
            ),
        ]));
        // `timed`'s own code (its frame's set-up) with line information;
        // without, the body's and its own cannot be told: not counted.
        assert!(at(&[(
            "tickprof_runtime::__private::timed<app::f::{{closure}}>",
            "runtime/src/private.rs"
        )]));
        assert!(!at(&[(
            "tickprof_runtime::__private::timed<app::f::{{closure}}>",
            ""
        )]));
        // The program's code, the standard library's, a C library's.
        assert!(!at(&[("app::f", lib)]));
        assert!(!at(&[("core::fmt::write", "/rustc/x/mod.rs")]));
        assert!(!at(&[("__memmove_avx_unaligned", "")]));
    }

    /// The standard library's own crates are not the program's, by their
    /// sources' place or, without line information, by name; the same
    /// crates built from the registry are.
    #[test]
    fn the_standard_librarys_crates_are_no_rows() {
        let std_hashbrown = "/rust/deps/hashbrown-0.16.1/src/map.rs";
        assert!(!is_program("hashbrown::map::make_hash", std_hashbrown));
        assert!(!is_program(
            "miniz_oxide::inflate::core::decompress_fast",
            ""
        ));
        assert!(!is_program("<gimli::read::abbrev::Abbreviation>::new", ""));
        let registry = "/home/u/.cargo/registry/src/index.crates.io-1/hashbrown-0.17.1/src/map.rs";
        assert!(is_program("hashbrown::map::make_hash", registry));
        assert!(is_program("app::parse", ""));
        assert!(is_program("app::parse", "/w/app/src/lib.rs"));
        assert!(!is_program("core::fmt::write", ""));
    }

    /// An address in the C library is not resolved: the marked
    /// function's own code (no row), whatever debug information the
    /// system has for it.
    #[test]
    fn an_address_in_the_c_library_is_no_row() {
        let pc = libc::getpid as *const () as u64;
        let own = an_address_of_this_binary_resolves_to_its_function as *const () as u64;
        assert!(in_marked_object(own));
        if object_of(pc as usize) == object_of(own as usize) {
            return; // a C library linked statically: nothing to tell apart
        }
        assert!(!in_marked_object(pc));
        let At::Chain(c) = &*at(pc) else {
            panic!("instrumentation?");
        };
        assert!(c.is_empty(), "{c:?}");
        assert_eq!(row_of(c, "a::b"), None);
    }
}
