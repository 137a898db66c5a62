//! The `tickprof` command: compare saved tickprof JSON reports (a
//! regression gate for CI) and render a saved report again.
//!
//! Exit codes: 0 success; 1 `diff --fail-if-slower` exceeded; 2 bad input
//! (a missing file, a file over [`load::MAX_INPUT`], not a tickprof JSON
//! report or trace, a broken tree, a version this command does not read, a
//! bad option) or an output that cannot be written — with one line on
//! stderr saying which. Names from the files, and the file names in
//! errors, are printed terminal-safe.

mod diff;
mod load;
mod percentiles;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tickprof_runtime::__private::terminal_safe;
use tickprof_runtime::TextOptions;

/// Compare and render tickprof JSON reports (`TICKPROF_OUT=run.json`).
#[derive(Parser, Debug)]
#[command(name = "tickprof", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Per-site changes from one report to another (`diff BEFORE AFTER`)
    /// or between several runs a side (`diff B1 B2 B3 -- A1 A2 A3`: each
    /// side's median, a change counted only beyond the runs' spread),
    /// significant changes first; exit 1 when `--fail-if-slower` is
    /// exceeded.
    Diff {
        /// BEFORE AFTER; or, followed by `--` and the after runs, every
        /// before run.
        #[arg(required = true, value_name = "REPORT")]
        before: Vec<PathBuf>,
        /// The after runs (after `--`).
        #[arg(last = true, value_name = "AFTER")]
        after: Vec<PathBuf>,
        /// Fail (exit 1) when a site's figure grew significantly by more
        /// than this, e.g. `5%` (the `--metric`), or `p99:10%` (a figure
        /// named: total, self, mean, p50, p90, p99); repeatable.
        #[arg(long, value_name = "[METRIC:]PERCENT", value_parser = gate)]
        fail_if_slower: Vec<diff::Gate>,
        /// Gate on this site only (its full name, as in the report).
        #[arg(long, value_name = "NAME", requires = "fail_if_slower")]
        site: Option<String>,
        /// Changes below this are noise: not shown, never failing.
        #[arg(long, value_name = "PERCENT", value_parser = percent, default_value = "1%")]
        noise: f64,
        /// The figure compared, sorted by and gated on.
        #[arg(long, value_enum, default_value = "total")]
        metric: diff::Metric,
        /// Show the sites within the noise too.
        #[arg(long)]
        all: bool,
        /// Print every site's figures in ns, tab-separated, for scripts.
        #[arg(long)]
        raw: bool,
    },
    /// Render a saved report as the program would have: the text report
    /// (default), with callers and callees (`--tree`), or as files.
    Show {
        /// The saved report.
        report: PathBuf,
        /// Add a caller/callee section per site.
        #[arg(long)]
        tree: bool,
        /// Add the per-thread breakdown.
        #[arg(long)]
        threads: bool,
        /// List the marked functions that never ran (reports with a
        /// coverage section).
        #[arg(long)]
        coverage: bool,
        /// Show at most this many sites.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// Write the HTML drill-down page here instead of printing.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        // The help lists the extensions of the runtime's formats table.
        #[arg(long, value_name = "FILE", help = out_help())]
        out: Vec<PathBuf>,
    },
    /// Render a recorded trace (`TICKPROF_OUT=run.trace.json`) as the trace
    /// log (`TICKPROF_LOG`), with the same filters.
    Replay {
        /// The recorded trace.
        trace: PathBuf,
        /// Only calls matching these glob patterns, and their subtrees
        /// (comma-separated, as `TICKPROF_LOG_FILTER`).
        #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
        filter: Vec<String>,
        /// Hide calls matching these glob patterns, with their subtrees.
        #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
        notrace: Vec<String>,
        /// At most this many levels of shown calls (0: no limit).
        #[arg(long, value_name = "N", default_value_t = 0)]
        depth: usize,
        /// Hide calls shorter than this (`5us`, `2ms`), with their subtrees.
        #[arg(long, value_name = "DURATION", value_parser = duration_ns, default_value = "0")]
        threshold: u64,
        /// Only these threads (tickprof's thread numbers; comma-separated).
        #[arg(long, value_name = "IDS", value_delimiter = ',')]
        tid: Vec<u64>,
    },
}

/// The help of `show --out`: the extensions of the runtime's formats table.
fn out_help() -> String {
    format!(
        "Write this file instead of printing, in the format its extension names \
         (repeatable): {}",
        tickprof_runtime::export::EXTENSIONS.join(" ")
    )
}

/// `5us`, `2ms`, `1s`, `100ns` or `0`: nanoseconds (the runtime's
/// parser, as `TICKPROF_LOG_THRESHOLD` reads it).
fn duration_ns(s: &str) -> Result<u64, String> {
    match tickprof_runtime::__private::parse_duration(s) {
        Some(d) => Ok(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        None => Err(format!("{s:?} is not a duration (e.g. 5us, 2ms)")),
    }
}

/// `5%`, `5` or `0.5%`: a fraction.
fn percent(s: &str) -> Result<f64, String> {
    let n = s.strip_suffix('%').unwrap_or(s).trim();
    match n.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / 100.0),
        _ => Err(format!("{s:?} is not a percentage (e.g. 5%)")),
    }
}

/// `5%`, or `p99:10%`: a gate on the `--metric` or on the named figure.
fn gate(s: &str) -> Result<diff::Gate, String> {
    use clap::ValueEnum;
    let (metric, limit) = match s.split_once(':') {
        Some((m, l)) => {
            let m = diff::Metric::from_str(m.trim(), true)
                .map_err(|_| format!("{m:?} is not a figure (total, self, mean, p50, p90, p99)"))?;
            (Some(m), l)
        }
        None => (None, s),
    };
    Ok(diff::Gate {
        metric,
        limit: percent(limit)?,
    })
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            // The message may hold a file name as given (a glob over a
            // shared directory's files, say): terminal-safe, as names are.
            eprintln!("tickprof: {}", terminal_safe(&e));
            ExitCode::from(2)
        }
    }
}

/// Prints to stdout; a closed pipe is not an error worth reporting.
fn print(s: &str) {
    let _ = std::io::stdout().lock().write_all(s.as_bytes());
}

/// Buffered stdout that remembers a closed pipe (`tickprof replay … |
/// head`), which ends the output without an error.
#[derive(Default)]
struct Stdout {
    out: Option<std::io::BufWriter<std::io::StdoutLock<'static>>>,
    closed: bool,
}

impl Stdout {
    fn check<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            self.closed |= e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        r
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let out = self
            .out
            .get_or_insert_with(|| std::io::BufWriter::new(std::io::stdout().lock()));
        let r = out.write(buf);
        self.check(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.out.as_mut().map_or(Ok(()), Write::flush);
        self.check(r)
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Diff {
            before,
            after,
            fail_if_slower,
            site,
            noise,
            metric,
            all,
            raw,
        } => {
            let (before, after) = match (before.len(), after.is_empty()) {
                (2, true) => (vec![before[0].clone()], vec![before[1].clone()]),
                (_, true) => {
                    return Err(format!(
                        "diff takes BEFORE AFTER, or several runs a side: B1 B2 … -- A1 A2 … ({} reports given, no `--`)",
                        before.len()
                    ))
                }
                _ => (before, after),
            };
            // The percentiles are read from the files only when compared.
            let field = std::iter::once(metric)
                .chain(fail_if_slower.iter().filter_map(|g| g.metric))
                .find_map(|m| m.percentile())
                .map(|i| percentiles::FIELDS[i]);
            let load = |files: &[PathBuf]| -> Result<Vec<_>, String> {
                files
                    .iter()
                    .map(|f| {
                        let text = load::text(f, load::MAX_INPUT)?;
                        let r = load::parse(&text).map_err(|e| format!("{}: {e}", f.display()))?;
                        let p = field
                            .map(|field| percentiles::read(&text, field))
                            .transpose()
                            .map_err(|e| format!("{}: {e}", f.display()))?;
                        Ok((r, p))
                    })
                    .collect()
            };
            let (b, a) = (load(&before)?, load(&after)?);
            fn runs(
                v: &[(tickprof_runtime::Report, Option<percentiles::Sites>)],
            ) -> Vec<diff::Run<'_>> {
                v.iter().map(|(r, p)| (r, p.as_ref())).collect()
            }
            let o = diff::Options {
                noise,
                metric,
                fail_if_slower,
                site,
                all,
            };
            let rows = diff::rows_of_runs(&runs(&b), &runs(&a), metric, noise);
            let bad = diff::violations(&rows, &o)?;
            if raw {
                print(&diff::raw(&rows, metric));
            } else {
                let side = |v: &[PathBuf]| {
                    let names: Vec<String> = v
                        .iter()
                        .map(|p| terminal_safe(&p.display().to_string()).into_owned())
                        .collect();
                    match names.len() {
                        1 => names[0].clone(),
                        n => format!("{n} runs ({})", names.join(", ")),
                    }
                };
                print(&format!(
                    "tickprof diff: {} → {}\n",
                    side(&before),
                    side(&after)
                ));
                print(&diff::table(&rows, &o));
            }
            if bad.is_empty() {
                return Ok(ExitCode::SUCCESS);
            }
            for line in &bad {
                eprintln!("tickprof: slower than allowed: {line}");
            }
            Ok(ExitCode::from(1))
        }
        Command::Show {
            report,
            tree,
            threads,
            coverage,
            top,
            html,
            out,
        } => {
            let r = load::read(&report)?;
            let opts = TextOptions::default()
                .with_top(top)
                .with_tree(tree)
                .with_threads(threads)
                .with_coverage(coverage);
            if html.is_none() && out.is_empty() {
                print(&r.text(&opts));
            }
            // Both replace the file safely (the runtime's writer: a new
            // temporary file, never opened through a planted link, renamed
            // over FILE; an existing file's mode kept).
            if let Some(f) = &html {
                let page = tickprof_runtime::export::html::render(&r);
                tickprof_runtime::export::replace_with_bytes(f, page.as_bytes())
                    .map_err(|e| format!("{}: {e}", f.display()))?;
            }
            for f in &out {
                tickprof_runtime::export::write_file(&r, f, &opts)
                    .map_err(|e| format!("{}: {e}", f.display()))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay {
            trace,
            filter,
            notrace,
            depth,
            threshold,
            tid,
        } => {
            let text = load::text(&trace, load::MAX_INPUT)?;
            let mut opts = tickprof_runtime::log::LogOptions::default();
            (opts.filter, opts.notrace, opts.depth) = (filter, notrace, depth);
            (opts.threshold_ns, opts.tids) = (threshold, tid);
            // Streamed: lines reach stdout as they are made.
            let mut out = Stdout::default();
            let done = tickprof_runtime::log::replay_trace_json(&text, &mut out, &opts)
                .and_then(|()| out.flush().map_err(|e| e.to_string()));
            match done {
                Err(_) if out.closed => {}
                Err(e) => return Err(format!("{}: {e}", trace.display())),
                Ok(()) => {}
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
