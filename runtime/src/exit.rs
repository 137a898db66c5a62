//! Start-up, stderr writes, reports of the whole run and of snapshots, and
//! the exit report: everything that ties the other modules together.
//! Nothing imports this module but the public API in `lib.rs`.

mod copy;
pub(crate) mod dump;
mod outputs;

use crate::build::{build, Facts};
use crate::clock::{self, Clock};
use crate::config::Config;
use crate::record::{self, Capture};
use crate::report::{ClockSource, Layout, Report, TextOptions};
use crate::switches;
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(unix))]
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Runtime {
    config: Config,
    clock: Clock,
    /// When the runtime was set up.
    start: Instant,
    /// Start of the measured wall time (process start, last reset, or the
    /// `fork` that made this process), in nanoseconds after `start`. An
    /// atomic, not a lock: a forked child can always read and restart it.
    epoch_ns: AtomicU64,
}

impl Runtime {
    /// Start of the measured wall time.
    fn epoch(&self) -> Instant {
        self.start + Duration::from_nanos(self.epoch_ns.load(Ordering::Relaxed))
    }

    /// Restarts the measured wall time now.
    fn restart_epoch(&self) {
        let ns = self.start.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        self.epoch_ns.store(ns, Ordering::Relaxed);
    }
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Sets everything up once: before `main` through the constructor, or on the
/// first report if constructors do not run on this platform.
fn runtime() -> &'static Runtime {
    // tickprof's own allocations (a `tickprof::Alloc` global allocator)
    // are not counted.
    RUNTIME.get_or_init(|| record::quietly(init_runtime))
}

fn init_runtime() -> Runtime {
    let (config, warnings) = Config::from_env();
    for w in &warnings {
        write_stderr(&format!("{w}\n"));
    }
    let clock = Clock::start();
    #[cfg(unix)]
    record::exit_key::create();
    record::sampler::set_job(record::calibrate::job);
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    if config.enabled {
        record::pcs::install(config.sample_hz, config.pc_kernel);
    }
    switches::apply(&config, clock.nominal_hz());
    record::timing::set_time_mode(config.time);
    if config.enabled && config.paused {
        crate::pause::started_paused();
    }
    #[cfg(feature = "failpoints")]
    if let Some(table) = &config.fail {
        for w in crate::fail::state::arm_global(table, config.fail_seed) {
            write_stderr(&format!("{w}\n"));
        }
    }
    if clock::SOURCE == ClockSource::Monotonic {
        write_stderr(
            "tickprof: no counter tickprof reads on this target (x86_64 rdtsc, aarch64 cntvct_el0); using the OS monotonic clock (std::time::Instant, nanosecond ticks)\n",
        );
    }
    Runtime {
        config,
        clock,
        start: Instant::now(),
        epoch_ns: AtomicU64::new(0),
    }
}

/// Unbuffered, lock-free, fallible write to file descriptor 2. Safe after
/// `main` returned; errors are dropped, and a closed pipe raises no
/// `SIGPIPE` (`crate::nopipe`): a failed write never changes how the
/// program ends.
pub(crate) fn write_stderr(s: &str) {
    #[cfg(unix)]
    {
        let _ = crate::nopipe::write_all(2, s.as_bytes());
    }
    #[cfg(not(unix))]
    {
        let _ = std::io::stderr().write_all(s.as_bytes());
    }
}

/// The facts of a report whose wall time is `wall_ns`.
fn facts(rt: &Runtime, wall_ns: u64) -> Facts {
    let freq = rt.clock.frequency();
    Facts {
        clock: clock::SOURCE,
        hz: freq.hz,
        frequency_source: freq.how,
        invariant_tsc: rt.clock.invariant,
        wall_ns,
        max_delta_ns: rt.config.max_delta.as_nanos().min(u128::from(u64::MAX)) as u64,
        compensate: rt.config.compensate,
        resolution_ticks: record::read_cost(),
        sample_hz: rt.config.sample_hz,
        calibration: record::calibrate::costs(),
        unsampled_threads: record::sampler::unlisted(),
        sampler: record::sampler::status(),
        tracing: switches::tracing(),
        trace_origin: rt.clock.start_ticks,
        pid: crate::process::program_pid(),
        pauses: crate::pause::totals(),
    }
}

/// Pauses (`on`) or resumes recording; false with profiling off or when
/// already in that state.
pub(crate) fn set_paused(on: bool) -> bool {
    if !runtime().config.enabled {
        return false;
    }
    if on {
        crate::pause::pause()
    } else {
        crate::pause::resume()
    }
}

/// Copies everything recorded so far.
pub(crate) fn capture() -> Capture {
    record::quietly(|| record::capture(switches::tracing()))
}

/// Builds the report from every live thread and every finished one.
pub(crate) fn collect() -> Report {
    let rt = runtime();
    if !rt.config.enabled {
        return Report::empty();
    }
    let wall_ns = rt.epoch().elapsed().as_nanos() as u64;
    record::quietly(|| whole_run(build(&capture(), &facts(rt, wall_ns))))
}

/// Adds what only a report of the whole run has: coverage, faults and the
/// push counts.
fn whole_run(mut r: Report) -> Report {
    r.coverage = Some(crate::coverage::coverage(&r.sites));
    (r.run.pushed, r.run.push_failed, r.run.push_dropped) = crate::push::counts();
    #[cfg(feature = "failpoints")]
    {
        r.faults = crate::fail::state::faults();
    }
    r
}

/// The report of one capture, or of the difference `c - earlier`.
pub(crate) fn report_of(c: &Capture, earlier: Option<&Capture>) -> Report {
    record::quietly(|| report_of_inner(c, earlier))
}

fn report_of_inner(c: &Capture, earlier: Option<&Capture>) -> Report {
    let rt = runtime();
    if !rt.config.enabled {
        return Report::empty();
    }
    match earlier {
        None => {
            let wall = c.at.saturating_duration_since(rt.epoch()).as_nanos() as u64;
            whole_run(build(c, &facts(rt, wall)))
        }
        Some(e) => {
            let wall = c.at.saturating_duration_since(e.at).as_nanos() as u64;
            build(&c.minus(e), &facts(rt, wall))
        }
    }
}

/// Zeroes every site and restarts the wall clock.
pub(crate) fn reset() {
    let rt = runtime();
    record::reset_all();
    #[cfg(feature = "failpoints")]
    crate::fail::state::reset_counts();
    crate::pause::restart();
    rt.restart_epoch();
}

/// `pthread_atfork` handlers: no tickprof lock is inherited held, and the
/// child starts a fresh profile (its report covers only its own calls).
#[cfg(unix)]
mod fork {
    use crate::record::fork;

    extern "C" {
        fn pthread_atfork(
            prepare: Option<unsafe extern "C" fn()>,
            parent: Option<unsafe extern "C" fn()>,
            child: Option<unsafe extern "C" fn()>,
        ) -> i32;
    }

    unsafe extern "C" fn prepare() {
        let _ = std::panic::catch_unwind(|| {
            crate::log::live::fork_prepare();
            fork::prepare();
        });
    }

    unsafe extern "C" fn parent() {
        let _ = std::panic::catch_unwind(|| {
            fork::parent();
            crate::log::live::fork_parent();
        });
    }

    unsafe extern "C" fn child() {
        let _ = std::panic::catch_unwind(|| {
            // (The copy writing a report, `copy::run`, is made without
            // `fork`: these handlers run for the program's forks only.)
            fork::child();
            crate::log::live::fork_child();
            if let Some(rt) = super::RUNTIME.get() {
                rt.restart_epoch();
            }
        });
    }

    /// Registers the handlers (once: from the constructor).
    pub(super) fn install() {
        // SAFETY: the three handlers are `extern "C"` functions that live
        // as long as the process and never unwind (each catches panics).
        let _ = unsafe { pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    }
}

/// Whether a report would go anywhere: stderr, a file or the trace.
fn writes_anything(rt: &Runtime) -> bool {
    rt.config.stderr || !rt.config.outputs.is_empty() || rt.config.trace
}

/// Writes `report` (sorted as configured) where the exit report goes: its
/// text to stderr (after `heading`, for a dump) unless `TICKPROF_STDERR=0`,
/// then every `TICKPROF_OUT` file (each replaced atomically), and the
/// default trace file when `TICKPROF_TRACE=1` names none.
fn write_everywhere(rt: &Runtime, mut report: Report, heading: Option<&str>) {
    report.sort(rt.config.sort);
    let opts = TextOptions {
        top: rt.config.top,
        tree: rt.config.report.layout == Layout::Tree,
        threads: rt.config.threads,
        coverage: rt.config.report.coverage,
        after_inlining: rt.config.after_inlining,
        verbose: rt.config.report.verbose,
    };
    // Each part once: a copy killed late may have written some (`copy::once`).
    if rt.config.stderr {
        copy::once(copy::STDERR, || {
            if let Some(h) = heading {
                write_stderr(h);
            }
            write_stderr(&report.text(&opts));
        });
    }
    for (i, template) in outputs::templates(&rt.config).iter().enumerate() {
        let path = &outputs::expand_path(template);
        let Some(written) = copy::once(copy::FILES + i, || {
            crate::export::write_file(&report, path, &opts)
        }) else {
            continue;
        };
        match written {
            Err(e) => outputs::warn_unwritten(path, &e),
            Ok(())
                if heading.is_none()
                    && template.as_os_str() == outputs::DEFAULT_TRACE_FILE
                    && !rt.config.outputs.contains(template) =>
            {
                write_stderr(&format!(
                    "tickprof: TICKPROF_TRACE=1: trace written to {} (open it in ui.perfetto.dev or chrome://tracing)\n",
                    outputs::DEFAULT_TRACE_FILE
                ));
            }
            Ok(()) => {}
        }
    }
}

#[ctor::ctor(unsafe)]
fn tickprof_init() {
    let _ = std::panic::catch_unwind(|| {
        record::quietly(|| {
            let config = &runtime().config;
            #[cfg(unix)]
            if config.enabled || config.log.is_some() {
                fork::install();
            }
            switches::set_tracing(config.enabled && config.trace);
            if let Some(target) = &config.log {
                start_log(target, &config.log_options);
            }
            if config.enabled {
                outputs::check(config);
                dump::start(config);
                record::at_load();
            }
        });
    });
}

/// `TICKPROF_LOG`: opens the sink and installs the log's hook. An
/// unwritable path gives one warning and no log.
fn start_log(target: &str, opts: &crate::log::LogOptions) {
    use crate::log::live::{install, Sink};
    let sink = if target == "stderr" {
        Sink::Stderr
    } else {
        let path = outputs::expand_path(Path::new(target));
        match crate::export::file::create_replacing(&path) {
            Ok(f) => Sink::File(f),
            Err(e) => {
                write_stderr(&format!(
                    "tickprof: warning: cannot write TICKPROF_LOG file {}: {e}; no trace log\n",
                    outputs::shown(&path)
                ));
                return;
            }
        }
    };
    install(sink, opts.clone());
}

#[dtor::dtor(unsafe)]
fn tickprof_exit_report() {
    let _ = std::panic::catch_unwind(|| {
        record::quietly(|| {
            crate::log::live::flush_all();
            // The final push and the exit report, from a copy of the
            // process: the program's allocator is left alone.
            dump::final_report(None);
        });
    });
}
