//! tickprof's test package: the integration tests (`tests/`; the ui tests
//! of `tests/ui/` run from `ui/`), the benches (`benches/`) and the
//! README's examples, run as doctests here because one of them uses
//! criterion. Nothing to use.

/// The README's code blocks, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The code blocks of `docs/integrations.md` (criterion).
#[cfg(doctest)]
#[doc = include_str!("../../docs/integrations.md")]
pub struct IntegrationsDoctests;
