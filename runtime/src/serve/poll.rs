//! Waiting until one of several sockets has input: `poll(2)` on Unix; on
//! other targets a short sleep, after which every socket is tried (their
//! reads do not block).

use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Waits at most `timeout` (`None`: until something happens) until
/// `listener` has a connection or one of `streams` has input (or an end
/// or error). Returns whether the listener is ready, and which streams.
/// An interrupted wait reports nothing ready.
#[cfg(unix)]
pub(super) fn wait(
    listener: &TcpListener,
    streams: &[&TcpStream],
    timeout: Option<Duration>,
) -> (bool, Vec<bool>) {
    use std::os::fd::AsRawFd;
    let mut fds: Vec<libc::pollfd> = std::iter::once(listener.as_raw_fd())
        .chain(streams.iter().map(|s| s.as_raw_fd()))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = timeout.map_or(-1, |t| {
        // Round up, so a deadline is not polled for again just before it.
        i32::try_from(t.as_millis() + 1).unwrap_or(i32::MAX)
    });
    // SAFETY: `fds` is a live, initialised array of `fds.len()` pollfd
    // structs that poll only reads and writes (`revents`) during the call;
    // the descriptors stay open since `listener` and `streams` are borrowed.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n <= 0 {
        return (false, vec![false; streams.len()]);
    }
    let ready = |p: &libc::pollfd| p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
    (ready(&fds[0]), fds[1..].iter().map(ready).collect())
}

/// Waits at most `timeout` (and at most a few milliseconds), then reports
/// everything ready.
#[cfg(not(unix))]
pub(super) fn wait(
    _listener: &TcpListener,
    streams: &[&TcpStream],
    timeout: Option<Duration>,
) -> (bool, Vec<bool>) {
    let step = Duration::from_millis(5);
    std::thread::sleep(timeout.map_or(step, |t| t.min(step)));
    (true, vec![true; streams.len()])
}
