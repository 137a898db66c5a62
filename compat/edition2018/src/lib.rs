//! tickprof's marks in an edition-2018 crate, under the strictest lints.
//!
//! `cargo clippy` and `cargo test` on this crate, with and without the
//! `enabled` feature, check that no expansion fails to resolve in this
//! edition or raises a lint in user code.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![deny(warnings, clippy::all, clippy::pedantic)]
#![deny(missing_docs, unreachable_pub, non_snake_case)]

#[cfg(test)]
#[path = "../../common/quiet.rs"]
mod quiet;

#[path = "../../common/marks.rs"]
pub mod marks;

#[path = "../../common/async_marks.rs"]
pub mod async_marks;
