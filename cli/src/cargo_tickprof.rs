//! `cargo tickprof`: profile a crate with its functions marked, without
//! touching its sources.
//!
//! `cargo tickprof run|test|bench [OPTIONS] [-- ARGS]` builds the program
//! unmarked to see which functions the optimiser keeps as functions of
//! their own, makes (or updates) a copy of the workspace under
//! `<target-dir>/tickprof/ws` in which those functions of the chosen
//! members carry `#[::tickprof::profile]` (every function with `--all`),
//! points their tickprof dependency at this tickprof, and runs `cargo
//! run|test|bench` on it. See `cargo tickprof --help` and cli/README.md.
//!
//! Exit codes: the program's (`run`), cargo's (`test`, `bench`, a failed
//! build), `128 + N` when cargo or the program ended by signal N, 2 when
//! the command cannot go on (one line on stderr says why).

mod cargo;
mod mark;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match cargo::args::parse(argv).and_then(cargo::main) {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "cargo tickprof: {}",
                tickprof_runtime::__private::terminal_safe(&e)
            );
            ExitCode::from(2)
        }
    }
}
