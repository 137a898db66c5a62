//! What the unit tests share.

/// The cases a property test runs: `default`, or `PROPTEST_CASES` when
/// set (CI's long runs with fresh seeds, `.ci/run`). The seed is fixed
/// for `cargo test` by `PROPTEST_RNG_SEED` in `.cargo/config.toml`, so
/// the README's test command runs the same cases every time.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}
