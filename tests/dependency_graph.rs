//! tickprof's normal dependency graph holds only audited crates.
//!
//! Every library linked into the user's program takes part in the user's
//! type checking: trait impls are global, so a dependency that adds, say,
//! `impl PartialEq<Value> for i32` (serde_json) or `From<RGB<T>> for [T; 3]`
//! (rgb, via inferno) gives the compiler a second candidate where the user's
//! code relied on there being one, and it stops compiling (E0282, E0283,
//! E0284; `compat/inference` has the patterns). So each crate in the graph
//! is checked for impls of std traits whose `Self` is a std type before it
//! goes on this list; a new dependency fails this test until it is.
//!
//! Runs `cargo tree` on the workspace (every target platform; offline when
//! the registry already holds every platform's crates, else downloading
//! them), with the default features, with `--no-default-features`, and
//! with the opt-in `tracing` feature. The `criterion05` … `criterion08` features add
//! criterion's own graph (serde_json among it): they are meant for
//! `[dev-dependencies]`, where criterion already is, and are not audited
//! here.

use std::collections::BTreeSet;
use std::process::Command;

/// Crates allowed in the graph with the `enabled` feature on, and why each
/// is safe.
const ALLOWED: &[(&str, &str)] = &[
    ("tickprof", "ours"),
    ("tickprof-macros", "ours; a proc-macro crate"),
    ("tickprof-runtime", "ours"),
    // Dependencies of proc-macro crates run inside the compiler and are never
    // linked into the user's program: their impls are not visible to it.
    ("proc-macro2", "build-time only (proc-macro dependency)"),
    ("quote", "build-time only (proc-macro dependency)"),
    ("syn", "build-time only (proc-macro dependency)"),
    ("unicode-ident", "build-time only (proc-macro dependency)"),
    ("linktime-proc-macro", "a proc-macro crate (of ctor, dtor)"),
    // Linked into the user's program, audited in ~/.cargo/registry/src:
    (
        "ctor",
        "impls only on its own types (`Static<T>`: Deref, Debug, Display, Drop)",
    ),
    ("dtor", "no trait impls"),
    (
        "linkme",
        "the link-time list of marks (coverage, failpoint names); impls only on its own \
         types (`DistributedSlice`: Copy, Clone, Deref, IntoIterator, Debug; `StaticPtr`: \
         Send, Sync, Copy, Clone) and its own private trait `Slice` for `[T]`, which only \
         matters where that hidden trait is imported",
    ),
    ("linkme-impl", "a proc-macro crate (of linkme)"),
    (
        "link-section",
        "impls on its own section types; its own trait `SectionItemLocation` for `&T`, \
         which only matters where that trait is imported",
    ),
    (
        "raw-cpuid",
        "impls only on its own types (its own `RowGen` trait for integers is in the \
         `display` module, behind the off-by-default `display` feature)",
    ),
    (
        "bitflags",
        "no impls on std types; its macro implements std traits for the flag types \
         it defines (raw-cpuid's)",
    ),
    (
        "signal-hook",
        "impls only on its own types (iterator, pipe, siginfo); opt-in signal reports \
         (TICKPROF_DUMP_SIGNAL, TICKPROF_ON_TERM): installs nothing unless asked",
    ),
    (
        "signal-hook-registry",
        "impls only on its own types (locks, guards)",
    ),
    (
        "libc",
        "impls (Clone, Copy, Debug; more behind the off `extra_traits` feature) only on \
         its own C types",
    ),
    (
        "errno",
        "Debug, Display, Error for its own `Errno`; `From<Errno> for i32` and \
         `From<Errno> for io::Error` add a candidate where std already has several \
         (`From<u8>`, `From<bool>`, ... for i32; `From<ErrorKind>`, `From<NulError>`, ... \
         for io::Error), so no inference that compiled before becomes ambiguous",
    ),
    (
        "windows-sys",
        "Windows only (errno's); impls only on its own FFI types",
    ),
    ("windows-link", "Windows only; no trait impls"),
];

/// Crates the opt-in `tracing` feature adds, and why each is safe (audited
/// in ~/.cargo/registry/src for impls of std traits on std types).
const TRACING: &[(&str, &str)] = &[
    (
        "tracing-core",
        "its own `Value` trait for primitives (matters only where imported); `From` impls \
         whose `Self` is `Option<Level>` / `Option<Id>` / `Option<&Id>`, reached only from \
         tracing's own types",
    ),
    (
        "tracing-subscriber",
        "registry + std only (no fmt): its own traits (`Layer`, `LookupSpan`) for `Option`, \
         `Box`, `Vec`, `Arc` of layers; matter only where imported",
    ),
    (
        "dashmap",
        "impls on its own types only (`Sub<&Q> for &DashMap`, iterators)",
    ),
    (
        "hashbrown",
        "impls on its own types only (dashmap's tables)",
    ),
    ("lock_api", "impls on its own lock and guard types"),
    ("parking_lot_core", "no trait impls on std types"),
    (
        "crossbeam-utils",
        "impls on its own types (`CachePadded`, `AtomicCell`)",
    ),
    ("once_cell", "impls on its own cell types"),
    ("sharded-slab", "impls on its own types"),
    ("thread_local", "impls on its own types"),
    (
        "smallvec",
        "impls on `SmallVec`; its own `Array` trait for arrays",
    ),
    ("lazy_static", "its own `LazyStatic` trait only"),
    ("scopeguard", "impls on its own guard type"),
    ("cfg-if", "a macro only"),
    ("libc", "impls on its own C types"),
    ("redox_syscall", "Redox only; impls on its own types"),
    ("windows-link", "a macro only"),
];

/// With the `enabled` feature off, only tickprof and what its proc-macro
/// crate needs at build time: no runtime dependency at all.
const DISABLED: &[&str] = &[
    "tickprof",
    "tickprof-macros",
    "tickprof-runtime",
    "proc-macro2",
    "quote",
    "syn",
    "unicode-ident",
];

/// `cargo tree -e normal -p tickprof` for every target platform (plus
/// `extra`), offline first; when a platform's dependency is not in the
/// local registry (a plain build downloads only the host's), once more
/// with downloads allowed, so the audit works from a fresh cargo home.
fn cargo_tree(extra: &[&str]) -> std::process::Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.args(["tree", "--locked", "--quiet", "--manifest-path", manifest]);
        if offline {
            cmd.arg("--offline");
        }
        cmd.args(["-p", "tickprof", "-e", "normal", "--prefix", "none"])
            .args(["--target", "all", "--format", "{p}"])
            .args(extra)
            .output()
            .expect("cargo runs")
    };
    let out = run(true);
    if out.status.success() {
        out
    } else {
        run(false)
    }
}

/// The crate names in `cargo tree -e normal -p tickprof` (plus `extra`).
fn graph(extra: &[&str]) -> BTreeSet<String> {
    let out = cargo_tree(extra);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(
        names.contains("tickprof-runtime"),
        "unexpected output:\n{text}"
    );
    names
}

#[test]
fn enabled_graph_holds_only_audited_crates() {
    let allowed: BTreeSet<&str> = ALLOWED.iter().map(|(name, _)| *name).collect();
    let unknown: Vec<String> = graph(&[])
        .into_iter()
        .filter(|n| !allowed.contains(n.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "not audited: {unknown:?}. Check each for impls of std traits on std types \
         (PartialEq, From, AsRef, Add, FromStr, Extend, Sum, Index, ... for integers, \
         floats, str, slices, arrays, tuples, Vec, String, references) and add it to \
         ALLOWED with the reason, or drop the dependency"
    );
}

#[test]
fn disabled_graph_is_tickprof_and_its_build_time_macro_dependencies() {
    let names = graph(&["--no-default-features"]);
    let expected: BTreeSet<String> = DISABLED.iter().map(|n| (*n).to_owned()).collect();
    assert_eq!(names, expected);
}

#[test]
fn opt_in_tracing_graph_holds_only_audited_crates() {
    let allowed: BTreeSet<&str> = ALLOWED
        .iter()
        .chain(TRACING)
        .map(|(name, _)| *name)
        .collect();
    let names = graph(&["--features", "tracing"]);
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !allowed.contains(n.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "not audited with the tracing feature: {unknown:?} (see enabled_graph_holds_only_audited_crates)"
    );
    assert!(names.contains("tracing-subscriber") && names.contains("dashmap"));
}
