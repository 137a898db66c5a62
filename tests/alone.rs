//! The integration tests that need the process to themselves, as the
//! modules of a second test binary: each resets the profile, pauses it,
//! or reads the whole process's figures (calling-context nodes, every
//! site's counts and rows in every format, a snapshot difference, the
//! threads' rows, of which a report keeps a bounded number), which the
//! other tests' calls would change; and the accuracy cases want the CPU to
//! themselves (beside `tests/all.rs`'s other tests on a busy host the
//! sampler found too little of a case's instrumentation to measure it).
//! They take turns: `support::alone()`, held for the whole test.
//! `no_alloc` counts its thread's allocations with this binary's global
//! allocator. Run one file's tests with
//! `cargo test -p tickprof-testsuite --test alone NAME::`.
#![cfg_attr(
    not(feature = "enabled"),
    allow(dead_code, unused_imports, unused_macros)
)]

mod support;

mod accuracy;
mod export;
mod hierarchy;
mod histograms;
mod no_alloc;
mod pause;
mod recorder_model;
mod reset;
