//! The command line of `cargo tickprof`: its own options are taken out,
//! everything else goes to cargo, and what follows `--` to the program.

use std::path::PathBuf;

/// What to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// `cargo run` on the marked copy.
    Run,
    /// `cargo test` on the marked copy.
    Test,
    /// `cargo bench` on the marked copy.
    Bench,
    /// `cargo build` on the marked copy (to time the build, or to run
    /// the marked binary directly).
    Build,
    /// Make or update the marked copy, print its manifest's path, build
    /// nothing.
    Copy,
    /// Rewrite the `.rs` files under directories in place (for scripts).
    Mark,
}

impl Action {
    /// The cargo subcommand, for those that run one.
    pub(crate) fn cargo_command(self) -> Option<&'static str> {
        match self {
            Action::Run => Some("run"),
            Action::Test => Some("test"),
            Action::Bench => Some("bench"),
            Action::Build => Some("build"),
            Action::Copy | Action::Mark => None,
        }
    }
}

/// The parsed command line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Args {
    /// `None` for `--help` / `--version` (already answered).
    pub(crate) action: Option<Action>,
    /// `-p` / `--package` (also passed to cargo).
    pub(crate) packages: Vec<String>,
    /// `--workspace` (also passed to cargo).
    pub(crate) workspace: bool,
    /// `--all`: mark every function, not only those the optimised
    /// unmarked build keeps (no probe build).
    pub(crate) all: bool,
    /// `--mark GLOB`.
    pub(crate) mark: Vec<String>,
    /// `--skip GLOB`.
    pub(crate) skip: Vec<String>,
    /// `--min-bytes N`: a kept function with less code is left unmarked
    /// (default: `probe::MIN_BYTES`).
    pub(crate) min_bytes: Option<u64>,
    /// `--once-bytes N`: a kept function holding an inlined function of
    /// at least N bytes emits its body once (default: `mark::ONCE_BYTES`).
    pub(crate) once_bytes: Option<u64>,
    /// `--deps NAME[,NAME…]` (globs; `--all-deps` is `*`): dependencies
    /// marked too.
    pub(crate) deps: Vec<String>,
    /// `-v`: list the functions left unmarked.
    pub(crate) verbose: bool,
    /// `--manifest-path`.
    pub(crate) manifest_path: Option<PathBuf>,
    /// `--target-dir`: where the copy and its build go (under `tickprof/`).
    pub(crate) target_dir: Option<PathBuf>,
    /// `--tickprof-path`: the tickprof checkout the marks use.
    pub(crate) tickprof_path: Option<PathBuf>,
    /// `mark`: `--crate-name`, `--edition`, `--dep`, and the directories.
    pub(crate) crate_name: Option<String>,
    /// `mark --edition`.
    pub(crate) edition: Option<String>,
    /// `mark --dep`.
    pub(crate) dep: Option<String>,
    /// `mark`: the directories rewritten in place.
    pub(crate) dirs: Vec<PathBuf>,
    /// Arguments for cargo.
    pub(crate) cargo_args: Vec<String>,
    /// `--` and what follows it, for the program (or the test harness).
    pub(crate) program_args: Option<Vec<String>>,
}

/// The usage text (`cargo tickprof --help`).
pub(crate) const USAGE: &str = "\
Profile a crate with its functions marked, without touching its sources.

Usage: cargo tickprof <run|test|bench|build> [OPTIONS] [CARGO OPTIONS] [-- ARGS]
       cargo tickprof copy [OPTIONS]
       cargo tickprof mark [--crate-name NAME] [--edition E] [--dep NAME] DIR...

run, test, bench and build first build the program unmarked (same options,
in <target-dir>/tickprof/probe) to see which functions the optimiser keeps
as functions of their own, then make (or update) a copy of the workspace
under <target-dir>/tickprof/ws with those functions marked, and run
`cargo run|test|bench|build` on it with the other options; ARGS after `--`
go to the program (or the test harness).
copy only makes the copy, every function marked, and prints its
manifest's path. mark rewrites the .rs files under each DIR in place,
every function marked (for scripts with their own copy).

Options:
  -p, --package SPEC     mark this member (repeatable; also passed to cargo);
                         default: the members the command builds
      --workspace        mark every member (also passed to cargo)
      --all              mark every function, inlined or not (no unmarked
                         build); not cargo's old alias of --workspace
      --mark GLOB        mark only functions whose name matches, inlined or
                         not (repeatable; no unmarked build)
      --skip GLOB        never mark functions whose name matches (repeatable)
      --min-bytes N      leave unmarked a function the optimiser keeps whose
                         code is under N bytes (default: MINB in an
                         optimised build, else 0; 0 marks them)
      --once-bytes N     emit the body once, the guard around it, in a kept
                         function holding an inlined function of N bytes
                         or more (default: ONCEB; 0: every mark)
      --deps NAME,...    mark these registry or git dependencies too (globs,
                         repeatable); never tickprof's own, proc macros
      --all-deps         mark every dependency that can be (slow to build)
  -v, --verbose          list the functions left unmarked, with the reason
      --manifest-path P  the workspace to profile (default: found from the
                         current directory)
      --target-dir DIR   where the copy and its build live (under tickprof/)
      --tickprof-path P  the tickprof checkout to mark with (also
                         TICKPROF_PATH; default: the one this command was
                         built from)
  -h, --help             this text
  -V, --version          the version

Globs match names as reports show them (app::parser::Parser::next,
<app::S as Trait>::f): `*` any run of characters, `?` one character.
Exit code: the program's (run), cargo's (test, bench, or a failed build);
2 when cargo tickprof itself cannot go on (one line on stderr says why).
";

/// A byte count given to `flag`, or the error that says what it takes.
fn bytes(flag: &str, v: String) -> Result<u64, String> {
    v.parse()
        .map_err(|_| format!("{flag} takes a number of bytes, found `{v}`"))
}

/// The usage text with its defaults filled in.
pub(crate) fn usage() -> String {
    USAGE
        .replace("MINB", &super::probe::MIN_BYTES.to_string())
        .replace("ONCEB", &crate::mark::ONCE_BYTES.to_string())
}

/// Parses the arguments after the program name (and after cargo's
/// `tickprof`, when run as `cargo tickprof`).
///
/// # Errors
///
/// A missing subcommand or option value, or an unknown subcommand.
pub(crate) fn parse(mut argv: Vec<String>) -> Result<Args, String> {
    if argv.first().is_some_and(|a| a == "tickprof") {
        argv.remove(0);
    }
    let mut args = Args::default();
    let mut it = argv.into_iter();
    while let Some(arg) = it.next() {
        if arg == "--" {
            args.program_args = Some(it.by_ref().collect());
            break;
        }
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{name} needs a value (see cargo tickprof --help)"))
        };
        match key.as_str() {
            "-h" | "--help" | "help" if args.action.is_none() => {
                print!("{}", usage());
                return Ok(Args::default());
            }
            "-V" | "--version" if args.action.is_none() => {
                println!("cargo-tickprof {}", env!("CARGO_PKG_VERSION"));
                return Ok(Args::default());
            }
            "run" | "test" | "bench" | "build" | "copy" | "mark" if args.action.is_none() => {
                args.action = Some(match key.as_str() {
                    "run" => Action::Run,
                    "test" => Action::Test,
                    "bench" => Action::Bench,
                    "build" => Action::Build,
                    "copy" => Action::Copy,
                    _ => Action::Mark,
                });
            }
            _ if args.action.is_none() => {
                return Err(format!(
                    "expected run, test, bench, build, copy or mark, found `{arg}` \
                     (see cargo tickprof --help)"
                ))
            }
            "-p" | "--package" => {
                let p = value("--package")?;
                args.cargo_args.extend(["--package".to_string(), p.clone()]);
                args.packages.push(p);
            }
            p if p.starts_with("-p") => {
                args.cargo_args
                    .extend(["--package".to_string(), p[2..].to_string()]);
                args.packages.push(p[2..].to_string());
            }
            "--workspace" => {
                args.workspace = true;
                args.cargo_args.push(arg);
            }
            "--all" => args.all = true,
            "--mark" => args.mark.push(value("--mark")?),
            "--skip" => args.skip.push(value("--skip")?),
            "--min-bytes" => args.min_bytes = Some(bytes("--min-bytes", value("--min-bytes")?)?),
            "--once-bytes" => {
                args.once_bytes = Some(bytes("--once-bytes", value("--once-bytes")?)?);
            }
            "--deps" => args.deps.extend(
                value("--deps")?
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(String::from),
            ),
            "--all-deps" => args.deps.push("*".into()),
            "-v" | "--verbose" => args.verbose = true,
            "--manifest-path" => args.manifest_path = Some(value("--manifest-path")?.into()),
            "--target-dir" => args.target_dir = Some(value("--target-dir")?.into()),
            "--tickprof-path" => args.tickprof_path = Some(value("--tickprof-path")?.into()),
            "--crate-name" => args.crate_name = Some(value("--crate-name")?),
            "--edition" => args.edition = Some(value("--edition")?),
            "--dep" => args.dep = Some(value("--dep")?),
            _ if args.action == Some(Action::Mark) && !arg.starts_with('-') => {
                args.dirs.push(arg.into());
            }
            _ => args.cargo_args.push(arg),
        }
    }
    if args.action.is_none() {
        return Err(
            "expected run, test, bench, build, copy or mark (see cargo tickprof --help)".into(),
        );
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::{parse, Action};

    fn p(s: &str) -> super::Args {
        parse(s.split_whitespace().map(String::from).collect()).unwrap()
    }

    #[test]
    fn splits_own_cargo_and_program_arguments() {
        let a = p("tickprof run --release -p app --mark app::* -v --example x -- --skip y");
        assert_eq!(a.action, Some(Action::Run));
        assert_eq!(a.packages, ["app"]);
        assert_eq!(a.mark, ["app::*"]);
        assert!(a.verbose);
        assert_eq!(
            a.cargo_args,
            ["--release", "--package", "app", "--example", "x"]
        );
        assert_eq!(a.program_args.unwrap(), ["--skip", "y"]);
        let a = p("test -pa --manifest-path=x/Cargo.toml --skip=*::t --no-fail-fast");
        assert_eq!(a.packages, ["a"]);
        assert_eq!(a.skip, ["*::t"]);
        assert_eq!(a.manifest_path.unwrap().to_str(), Some("x/Cargo.toml"));
        assert_eq!(a.cargo_args, ["--package", "a", "--no-fail-fast"]);
        assert!(a.program_args.is_none());
        let a = p("mark --crate-name c src other");
        assert_eq!(a.dirs.len(), 2);
        assert!(parse(vec!["frobnicate".into()]).is_err());
        assert!(parse(vec!["run".into(), "--mark".into()]).is_err());
        assert!(parse(Vec::new()).is_err());
    }
}
