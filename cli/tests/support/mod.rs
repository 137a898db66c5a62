//! What every test of the command needs: its input files and a way to run
//! it as a child process.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The path of the input file `name` in `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs `tickprof ARGS` with no `TICKPROF_OUT` and no exit report of its
/// own, and waits for it.
pub fn tickprof<A: AsRef<OsStr>>(args: &[A]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickprof"))
        .args(args)
        .env_remove("TICKPROF_OUT")
        .env("TICKPROF_STDERR", "0")
        .output()
        .expect("the command runs")
}
