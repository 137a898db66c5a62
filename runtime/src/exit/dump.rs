//! Reports before exit: on demand (`dump_now`), on a signal
//! (`TICKPROF_DUMP_SIGNAL`, `dump_on_signal`), periodically
//! (`TICKPROF_DUMP_INTERVAL`, `dump_every`), and the final report on a
//! termination signal (`TICKPROF_ON_TERM`).
//!
//! `TICKPROF_HTTP` starts the HTTP server (`crate::serve`), which reads
//! its reports through [`serve::Source`].
//!
//! Nothing here runs unless asked for: no thread is started and no signal
//! handler installed otherwise. Reports are written on threads tickprof owns
//! (`tickprof signals`, `tickprof timer`) or on the caller's thread
//! (`dump_now`), never in a signal handler, and always inside
//! [`record::quietly`], so tickprof's own work is not recorded.

use super::{capture, copy, report_of, runtime, write_everywhere, write_stderr, writes_anything};
use crate::config::{Config, DumpMode, DumpSignal};
use crate::defaults::MIN_INTERVAL;
use crate::record::{self, Capture};
use crate::serve;
use crate::switches;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

#[cfg(unix)]
mod signals;

/// Held while a report is written, so two never interleave; holds the
/// capture of the previous dump (the base of the next delta).
static WRITER: Mutex<Option<Capture>> = Mutex::new(None);

/// Set once the final report is written (or being written): by the exit
/// report, or by a termination signal. No report is written after it.
static FINAL: AtomicBool = AtomicBool::new(false);

/// Dumps written so far (numbers the stderr headings).
static DUMPS: AtomicU64 = AtomicU64::new(0);

/// The period of `tickprof timer` in nanoseconds (0: no periodic dumps).
static PERIOD_NS: AtomicU64 = AtomicU64::new(0);
/// Whether `tickprof timer` was started.
static TIMER: AtomicBool = AtomicBool::new(false);

/// How long the exit report waits for a dump in progress.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Starts what the environment asks for (from the constructor, with
/// profiling on). A failure is one warning line.
pub(super) fn start(config: &Config) {
    if let Some(sig) = config.dump_signal {
        if let Err(e) = on_signal(sig) {
            write_stderr(&format!(
                "tickprof: warning: TICKPROF_DUMP_SIGNAL: cannot handle {sig:?}: {e}\n"
            ));
        }
    }
    if let Some(period) = config.dump_interval {
        every(period);
    }
    if let Some(addr) = config.http {
        let source = serve::Source { capture, report_of };
        for w in serve::start(addr, source) {
            write_stderr(&w);
        }
    }
    if let Some(target) = &config.push {
        let settings = crate::push::Settings {
            target: target.clone(),
            interval: config.push_interval,
            name: config.push_name.clone(),
            labels: config.push_labels.clone(),
            warn: write_stderr,
        };
        let source = serve::Source { capture, report_of };
        for w in crate::push::start(settings, source) {
            write_stderr(&w);
        }
    }
    #[cfg(unix)]
    if config.on_term {
        if let Err(e) = signals::on_termination() {
            write_stderr(&format!(
                "tickprof: warning: TICKPROF_ON_TERM: cannot handle termination signals: {e}\n"
            ));
        }
    }
    #[cfg(not(unix))]
    if config.on_term {
        write_stderr(
            "tickprof: warning: TICKPROF_ON_TERM: cannot handle termination signals: signals are only handled on Unix\n",
        );
    }
}

/// Takes the writer lock, also if a panicking writer poisoned it.
fn lock_writer() -> MutexGuard<'static, Option<Capture>> {
    WRITER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// For the exit report: the writer lock, waiting at most [`EXIT_WAIT`] for
/// a dump in progress (`None` after that: the exit report goes ahead).
pub(super) fn hold_for_exit() -> Option<MutexGuard<'static, Option<Capture>>> {
    let deadline = Instant::now() + EXIT_WAIT;
    loop {
        match WRITER.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

/// Claims the final report: true for the first caller only.
pub(super) fn claim_final() -> bool {
    !FINAL.swap(true, Ordering::AcqRel)
}

/// Writes a report now, as the environment says (`TICKPROF_DUMP`,
/// `TICKPROF_STDERR`, `TICKPROF_OUT`), with `cause` in its stderr heading.
/// Returns whether a report was written.
pub(crate) fn dump(cause: &str) -> bool {
    record::quietly(|| dump_inner(cause))
}

fn dump_inner(cause: &str) -> bool {
    let rt = runtime();
    if !rt.config.enabled || !switches::recorded_any() || !writes_anything(rt) {
        return false;
    }
    let mut last = lock_writer();
    if FINAL.load(Ordering::Acquire) {
        return false;
    }
    let n = DUMPS.fetch_add(1, Ordering::Relaxed) + 1;
    let heading = |what: &str| format!("tickprof: report {n} ({cause}; {what})\n");
    match rt.config.dump_mode {
        // Built and written in a copy of the process (the program's
        // allocator left alone), where one can be made.
        DumpMode::Total => {
            let ran = copy::run("a report", || {
                let report = report_of(&capture(), None);
                write_everywhere(rt, report, Some(&heading("the run so far")));
            });
            return ran != copy::Ran::Lost;
        }
        // The base of the next delta stays in this process: built here.
        DumpMode::Delta => {
            let now = capture();
            let report = report_of(&now, last.as_ref());
            *last = Some(now);
            write_everywhere(rt, report, Some(&heading("since the previous report")));
        }
    }
    true
}

/// The final push and the final report (the whole run), then recording
/// stops: at exit (`cause` `None`; a dump in progress is waited for at most
/// [`EXIT_WAIT`]) or on a termination signal (`Some` of its name, said in a
/// line before the report). Both are made in a copy of the process where
/// one can be made (`copy::run`), so that the program's allocator is left
/// alone; skipped when nothing is to be pushed or written (no marked call
/// was made, or nowhere to write: the frequency check is then not waited
/// for either). Returns false when the final report was written already.
pub(super) fn final_report(cause: Option<&str>) -> bool {
    record::quietly(|| {
        let rt = runtime();
        let _writing = match cause {
            None => hold_for_exit(),
            Some(_) => Some(lock_writer()),
        };
        if !claim_final() {
            return false;
        }
        let push = crate::push::stop();
        let report = rt.config.enabled && switches::recorded_any() && writes_anything(rt);
        if push.is_some() || report {
            copy::run("the final report", || {
                // The push count is the last line, after the report.
                let _counted = Counted(
                    push.and_then(|p| copy::once(copy::PUSH, || crate::push::Final::finish(p))),
                );
                if report {
                    let r = super::collect();
                    if !r.sites.is_empty() {
                        if let Some(cause) = cause {
                            write_stderr(&format!("tickprof: {cause}: final report\n"));
                        }
                        write_everywhere(rt, r, None);
                    }
                }
            });
        }
        switches::stop_recording();
        true
    })
}

/// Prints the push count line (if any) when dropped: after the final
/// report, whichever way its function returns.
pub(super) struct Counted(pub Option<String>);

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(line) = &self.0 {
            write_stderr(line);
        }
    }
}

/// Writes a report on each `sig` (see `tickprof::dump_on_signal`).
pub(crate) fn on_signal(sig: DumpSignal) -> std::io::Result<()> {
    if !runtime().config.enabled {
        return Ok(());
    }
    #[cfg(unix)]
    {
        signals::on_dump_signal(sig)
    }
    #[cfg(not(unix))]
    {
        let _ = sig;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "signals are only handled on Unix",
        ))
    }
}

/// Writes a report every `period` (see `tickprof::dump_every`), at least
/// [`MIN_INTERVAL`] (a shorter one is taken as that); zero stops.
pub(crate) fn every(period: Duration) {
    let period = if period.is_zero() {
        period
    } else {
        period.max(MIN_INTERVAL)
    };
    let ns = period.as_nanos().min(u128::from(u64::MAX)) as u64;
    PERIOD_NS.store(ns, Ordering::Relaxed);
    if ns == 0 || !runtime().config.enabled || TIMER.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("tickprof timer".to_owned())
        .spawn(timer);
    if let Err(e) = spawned {
        TIMER.store(false, Ordering::Release);
        write_stderr(&format!(
            "tickprof: warning: cannot start the periodic report thread: {e}\n"
        ));
    }
}

/// The body of `tickprof timer`: sleeps one period (re-read each time),
/// then dumps; idles while the period is 0.
fn timer() {
    let mut next = Instant::now();
    loop {
        let ns = PERIOD_NS.load(Ordering::Relaxed);
        if ns == 0 {
            std::thread::sleep(Duration::from_millis(100));
            next = Instant::now();
            continue;
        }
        // A period too long for the clock (centuries): no report until
        // it changes.
        let Some(then) = next.checked_add(Duration::from_nanos(ns)) else {
            std::thread::sleep(Duration::from_secs(1));
            continue;
        };
        next = then;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
        if FINAL.load(Ordering::Acquire) {
            return;
        }
        if PERIOD_NS.load(Ordering::Relaxed) != 0 {
            dump("TICKPROF_DUMP_INTERVAL");
        }
    }
}
