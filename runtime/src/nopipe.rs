//! Writes that never raise `SIGPIPE`: tickprof's own lines and reports on
//! stderr (and the trace log's sink) go to descriptors the program owns,
//! which may be a pipe whose reader is gone. A program that restores
//! `SIGPIPE` to its default action (the usual idiom of a command-line
//! tool) would be killed by tickprof's write where it exits 0 without
//! tickprof (issue 54). `MSG_NOSIGNAL` is for sockets only, so the
//! writing thread blocks `SIGPIPE` for the write, takes back the one its
//! own failed write raised (`sigpending`, then `sigwait` only when it is
//! pending, so it never waits: POSIX, unlike `sigtimedwait`, which macOS
//! lacks), and restores its mask: the write fails with `EPIPE`, and the
//! error is the caller's to drop. A leaf: it imports nothing of the crate.

use std::io;

/// Writes all of `bytes` to the descriptor `fd` without raising `SIGPIPE`
/// (see the module docs); retries on `EINTR`.
///
/// # Errors
///
/// The write's error (`EPIPE`, `EBADF`, …), or `WriteZero`.
pub(crate) fn write_all(fd: i32, mut bytes: &[u8]) -> io::Result<()> {
    let mut pipe = Blocked::new();
    while !bytes.is_empty() {
        // SAFETY: writes from the initialised bytes of `bytes`.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if e.raw_os_error() == Some(libc::EPIPE) {
                pipe.raised = true;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// `SIGPIPE` blocked on this thread while it lives; dropped, it consumes
/// the `SIGPIPE` a failed write raised (only when the thread did not block
/// it already: a pending one of the program's is left alone) and restores
/// the mask.
struct Blocked {
    old: libc::sigset_t,
    /// Whether the mask was changed (and must be restored).
    changed: bool,
    /// Whether a write failed with `EPIPE` (a `SIGPIPE` is pending).
    raised: bool,
}

impl Blocked {
    fn new() -> Blocked {
        // SAFETY: `sigset_t` is plain data; the sets are initialised by
        // `sigemptyset` before use, and `pthread_sigmask` writes `old`.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            let ok = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) == 0;
            let was_blocked = ok && libc::sigismember(&old, libc::SIGPIPE) == 1;
            Blocked {
                old,
                changed: ok && !was_blocked,
                raised: false,
            }
        }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        if !self.changed {
            return;
        }
        // SAFETY: as in `new`; `sigpending` writes the pending set, and
        // `sigwait` runs only when `SIGPIPE` is in it (the one this
        // thread's write raised, blocked here), so it returns at once; the
        // mask saved in `new` is restored.
        unsafe {
            if self.raised {
                let mut set: libc::sigset_t = std::mem::zeroed();
                let mut pending: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGPIPE);
                libc::sigemptyset(&mut pending);
                if libc::sigpending(&mut pending) == 0
                    && libc::sigismember(&pending, libc::SIGPIPE) == 1
                {
                    let mut sig = 0;
                    libc::sigwait(&set, &mut sig);
                }
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::write_all;

    #[test]
    fn a_write_to_a_closed_pipe_fails_without_a_signal() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: closes the read end opened above.
        unsafe { libc::close(fds[0]) };
        // SAFETY: the default action: a SIGPIPE raised and not taken back
        // would end this test process.
        let old = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        let e = write_all(fds[1], b"x").unwrap_err();
        // SAFETY: restores the disposition saved above; closes the pipe.
        unsafe {
            libc::signal(libc::SIGPIPE, old);
            libc::close(fds[1]);
        }
        assert_eq!(e.raw_os_error(), Some(libc::EPIPE));
    }
}
