//! The signal side of dumps, through `signal-hook`: its handler only writes
//! to a self-pipe (and chains to any handler installed before it, e.g.
//! tokio's or the program's own); the thread `tickprof signals` reads the
//! pipe and writes the reports.

use super::{dump, final_report};
use crate::config::DumpSignal;
use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
use signal_hook::iterator::{Handle, Signals};
use std::io;
use std::sync::Mutex;

/// The handle of the `tickprof signals` thread's iterator, once started.
static HANDLE: Mutex<Option<Handle>> = Mutex::new(None);

/// The signals whose default action `TICKPROF_ON_TERM` takes over.
const TERMINATION: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

fn number(sig: DumpSignal) -> i32 {
    match sig {
        DumpSignal::Usr1 => SIGUSR1,
        DumpSignal::Usr2 => SIGUSR2,
    }
}

fn name(sig: i32) -> &'static str {
    match sig {
        SIGUSR1 => "SIGUSR1",
        SIGUSR2 => "SIGUSR2",
        SIGTERM => "SIGTERM",
        SIGINT => "SIGINT",
        SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Adds `sigs` to the set `tickprof signals` waits for (starting it).
fn watch(sigs: &[i32]) -> io::Result<()> {
    let mut handle = HANDLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if handle.is_none() {
        let mut signals = Signals::new(sigs)?;
        let h = signals.handle();
        std::thread::Builder::new()
            .name("tickprof signals".to_owned())
            .spawn(move || {
                for sig in signals.forever() {
                    arrived(sig);
                }
            })?;
        *handle = Some(h);
        return Ok(());
    }
    if let Some(h) = handle.as_ref() {
        for &sig in sigs {
            h.add_signal(sig)?;
        }
    }
    Ok(())
}

/// On `tickprof signals`: what to do with one arrived signal.
fn arrived(sig: i32) {
    if !TERMINATION.contains(&sig) {
        dump(name(sig));
        return;
    }
    final_report(Some(name(sig)));
    // Terminate as the default action would: restore it and re-raise, so
    // the parent sees the signal's status (143, 130, 129 in a shell).
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    // Not reached unless the signal could not be re-raised.
    std::process::exit(128 + sig);
}

/// `TICKPROF_DUMP_SIGNAL` / `dump_on_signal`.
pub(super) fn on_dump_signal(sig: DumpSignal) -> io::Result<()> {
    watch(&[number(sig)])
}

/// `TICKPROF_ON_TERM`: SIGTERM, SIGINT and SIGHUP write the final report,
/// then terminate the process. A signal the process is ignoring when this
/// runs (one started under `nohup` ignores SIGHUP; a background job of a
/// non-interactive shell, SIGINT) stays ignored: without tickprof it would
/// not end the process, so it does not with tickprof either.
pub(super) fn on_termination() -> io::Result<()> {
    let sigs: Vec<i32> = TERMINATION
        .into_iter()
        .filter(|&sig| !ignored(sig))
        .collect();
    if sigs.is_empty() {
        return Ok(());
    }
    watch(&sigs)
}

/// Whether `sig`'s disposition is "ignore" (`SIG_IGN`).
fn ignored(sig: i32) -> bool {
    // SAFETY: `sigaction` with a null new action only reads the current
    // disposition into `old`, a zeroed `sigaction` owned by this frame (an
    // all-zero `sigaction` is a valid value of the C struct).
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}
