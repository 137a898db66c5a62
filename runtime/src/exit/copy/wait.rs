//! The program's wait for its copy ([`wait`]): a futex on the shared
//! page until the copy's work is over, its end reaped, a copy past its
//! deadlines killed; and how a copy ended ([`Why`]).

use super::{Page, ANSWER, LIFE, PANICKED, WCLONE};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Waits for the copy `pid` to end, killing it past [`ANSWER`] without an
/// answer from its allocator or past [`LIFE`]; `Err` says how it ended
/// badly.
#[cfg(target_os = "linux")]
pub(super) fn wait(pid: libc::pid_t, page: *mut Page) -> Result<(), Why> {
    let start = Instant::now();
    let mut nap = Duration::from_micros(100);
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer; WNOHANG never blocks.
        let r = unsafe { libc::waitpid(pid, &mut status, WCLONE | libc::WNOHANG) };
        if r == pid {
            return ended(status);
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Reaped by someone else (`__WALL`): its end is unknown, and
            // it is over.
            return Ok(());
        }
        // SAFETY: `page` is mapped until `run` returns.
        let finished = unsafe { &(*page).finished };
        if finished.load(Ordering::Acquire) != 0 {
            // Its work is over and `_exit` is all it has left: its end,
            // waited for.
            loop {
                // SAFETY: as above, blocking.
                let r = unsafe { libc::waitpid(pid, &mut status, WCLONE) };
                if r == pid {
                    return ended(status);
                }
                if r < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    return Ok(());
                }
            }
        }
        // Until the copy says its work is over, or `nap` passed.
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: nap.as_nanos() as libc::c_long,
        };
        futex(finished, libc::FUTEX_WAIT, 0, &ts);
        nap = (nap * 2).min(Duration::from_millis(5));
        // SAFETY: as above.
        let answered = unsafe { (*page).answered.load(Ordering::Acquire) } != 0;
        let age = start.elapsed();
        if (!answered && age >= ANSWER) || age >= LIFE {
            // SAFETY: signals and reaps our own copy.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, WCLONE);
            }
            return Err(Why::Late);
        }
    }
}

/// `futex(2)` on a word of the shared page (a shared futex: the page is
/// `MAP_SHARED`, the waiter and the waker are two processes): `FUTEX_WAIT`
/// while it holds `val`, at most `timeout`, or `FUTEX_WAKE` of `val`
/// waiters. Its result does not matter: the callers read the word again.
#[cfg(target_os = "linux")]
pub(super) fn futex(word: &AtomicU32, op: libc::c_int, val: u32, timeout: *const libc::timespec) {
    // SAFETY: a valid, aligned word that lives while the page is mapped;
    // a valid or null timeout; the other arguments unused by these ops.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            val,
            timeout,
            std::ptr::null::<u32>(),
            0,
        );
    }
}

/// How a copy ended badly.
#[cfg(target_os = "linux")]
pub(super) enum Why {
    Exited(i32),
    Signal(i32),
    /// Killed past its deadline: the work is done here.
    Late,
}

#[cfg(target_os = "linux")]
impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Why::Exited(PANICKED) => f.write_str("panicked"),
            Why::Exited(code) => write!(f, "exited with code {code}"),
            Why::Signal(libc::SIGABRT) => f.write_str(
                "died of SIGABRT (the program's global allocator may refuse the report's allocations)",
            ),
            Why::Signal(sig) => write!(f, "died of signal {sig}"),
            Why::Late => f.write_str("was killed past its deadline"),
        }
    }
}

/// The end of a copy from its wait status, decoded as Linux encodes it
/// (glibc's and musl's `WIFSIGNALED`, `WTERMSIG`, `WEXITSTATUS`): libc
/// before 0.2.67 declares these `unsafe fn`, later ones safe, and a
/// program's lock may pin either (szip 1.0.0's pins 0.2.66).
#[cfg(target_os = "linux")]
pub(super) fn ended(status: i32) -> Result<(), Why> {
    let signal = status & 0x7f;
    if signal != 0 && signal != 0x7f {
        Err(Why::Signal(signal))
    } else {
        match (status >> 8) & 0xff {
            0 => Ok(()),
            code => Err(Why::Exited(code)),
        }
    }
}
