//! Opt-in integrations with other crates, each behind its own feature:
//! criterion's profiler hook (`criterion05` … `criterion08`) and a
//! `tracing` layer (`tracing`).

#[cfg(any(
    feature = "criterion05",
    feature = "criterion06",
    feature = "criterion07",
    feature = "criterion08"
))]
pub mod criterion;
#[cfg(feature = "tracing")]
pub mod tracing;
