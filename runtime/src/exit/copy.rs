//! Reports written from a copy of the process, so that the program's
//! global allocator is left alone (issue 33): building a report and its
//! files allocates in proportion to the sites, paths and threads, and a
//! program's `#[global_allocator]` may count those allocations, or abort
//! past a fixed number of them.
//!
//! [`run`] forks; the copy (one thread, the caller's, with the whole
//! address space copied) does the work, allocating through its own copy of
//! the allocator, and leaves with `_exit` (no destructor, no `atexit`
//! handler, no buffered stdout of the program's written twice); the
//! program waits for it, allocating nothing. The copy keeps the profile:
//! the `fork` handlers in `exit.rs` do not reset it for this fork.
//!
//! Where no copy can be made the caller does the work itself, as before:
//! on other systems than Linux, under a seccomp filter (a filter may kill
//! the process on `fork`; `/proc/self/status` says whether one is on), or
//! when `fork` fails (memory, process limits). A copy that dies (its copy
//! of the allocator aborts, say) or makes no progress for [`STALL`] (a
//! lock that another thread of the program held at the fork is held for
//! ever in the copy) is killed and reported in one line; the program goes
//! on.

// The copy is made on Linux only; elsewhere the work is done in place and
// the copy's machinery is unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

#[cfg(any(test, target_os = "linux"))]
use std::fmt::Write as _;
use std::sync::atomic::AtomicUsize;
#[cfg(unix)]
use std::sync::atomic::Ordering;
use std::time::Duration;
#[cfg(target_os = "linux")]
use std::time::Instant;

/// How long a copy may run without using the CPU or doing I/O before it is
/// taken for deadlocked and killed (a third of a second in unit tests).
pub(super) const STALL: Duration = if cfg!(test) {
    Duration::from_millis(300)
} else {
    Duration::from_secs(5)
};

/// The thread (`pthread_self`) forking in [`run`], 0 else: the `fork`
/// handlers keep the profile in the copy (a `fork` of the program's own,
/// on another thread at the same time, still starts a fresh one).
static COPYING: AtomicUsize = AtomicUsize::new(0);

/// This thread, as [`COPYING`] holds it.
#[cfg(unix)]
fn this_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// Whether the `fork` under way on this thread is [`run`]'s.
#[cfg(unix)]
pub(super) fn copying() -> bool {
    COPYING.load(Ordering::Acquire) == this_thread()
}

/// How [`run`] went.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ran {
    /// The copy did the work and ended well.
    Copy,
    /// The copy ended badly (a line on stderr said how).
    Lost,
    /// No copy was made: the caller did the work.
    Here,
}

/// Does `work` in a copy of the process and waits for it; where no copy
/// can be made, does it here. `what` names the work in the line that
/// reports a copy that ended badly (`the exit report`).
pub(super) fn run(what: &str, work: impl FnOnce()) -> Ran {
    run_saying(what, work, super::write_stderr)
}

/// [`run`], with the line about a copy that ended badly given to `say`.
fn run_saying(what: &str, work: impl FnOnce(), say: fn(&str)) -> Ran {
    #[cfg(target_os = "linux")]
    if !seccomp_filtered() {
        let program = crate::process::program_pid();
        COPYING.store(this_thread(), Ordering::Release);
        // SAFETY: `fork` has no preconditions. In the copy only this thread
        // exists: the work runs there with tickprof's locks released by
        // the `fork` handlers, then `_exit` ends it.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            crate::process::set_copy_of(program);
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).is_ok();
            // SAFETY: ends the copy at once, running nothing of the
            // program's (no destructor, no `atexit` handler).
            unsafe { libc::_exit(if ok { 0 } else { PANICKED }) };
        }
        COPYING.store(0, Ordering::Release);
        if pid > 0 {
            return match wait(pid) {
                Ok(()) => Ran::Copy,
                Err(why) => {
                    let mut line = Line::new();
                    let _ = writeln!(
                        line,
                        "tickprof: warning: {what} was not written: the copy of the process writing it {why}"
                    );
                    say(line.as_str());
                    Ran::Lost
                }
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (what, say);
    work();
    Ran::Here
}

/// The exit code of a copy whose work panicked.
const PANICKED: i32 = 101;

/// Waits for the copy `pid` to end; `Err` says how it ended badly.
#[cfg(target_os = "linux")]
fn wait(pid: libc::pid_t) -> Result<(), Why> {
    let mut last = progress(pid);
    let mut since = Instant::now();
    let mut nap = Duration::from_micros(200);
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer; WNOHANG never blocks.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return ended(status);
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Reaped by the program (a SIGCHLD handler, SIG_IGN): its
            // end is unknown, and it is over.
            return Ok(());
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(10));
        let now = progress(pid);
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= STALL {
            // SAFETY: signals and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(Why::Stalled);
        }
    }
}

/// How a copy ended badly.
#[cfg(target_os = "linux")]
enum Why {
    Exited(i32),
    Signal(i32),
    Stalled,
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
            Why::Stalled => write!(
                f,
                "made no progress for {} s and was killed (a lock held by another thread at the fork?)",
                STALL.as_secs()
            ),
        }
    }
}

/// The end of a copy from its wait status, decoded as Linux encodes it
/// (glibc's and musl's `WIFSIGNALED`, `WTERMSIG`, `WEXITSTATUS`): libc
/// before 0.2.67 declares these `unsafe fn`, later ones safe, and a
/// program's lock may pin either (szip 1.0.0's pins 0.2.66).
#[cfg(target_os = "linux")]
fn ended(status: i32) -> Result<(), Why> {
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

/// What shows a copy at work: its CPU time (`/proc/PID/stat`, fields 14
/// and 15) and the bytes it read and wrote (`/proc/PID/io`), summed; 0
/// when they cannot be read.
#[cfg(target_os = "linux")]
fn progress(pid: libc::pid_t) -> u64 {
    let mut buf = [0u8; 1024];
    let mut sum = 0u64;
    if let Some(stat) = read_proc(pid, "stat", &mut buf) {
        // After the command name, which may hold spaces: `) S ppid …`.
        if let Some(at) = stat.iter().rposition(|&b| b == b')') {
            let fields = stat[at + 1..]
                .split(|&b| b == b' ')
                .filter(|f| !f.is_empty());
            sum = fields.skip(11).take(2).map(number).sum();
        }
    }
    if let Some(io) = read_proc(pid, "io", &mut buf) {
        for line in io.split(|&b| b == b'\n') {
            if line.starts_with(b"rchar: ") || line.starts_with(b"wchar: ") {
                sum = sum.wrapping_add(number(&line[7..]));
            }
        }
    }
    sum
}

/// The leading decimal number of `b` (0 if none).
fn number(b: &[u8]) -> u64 {
    b.iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0u64, |n, c| {
            n.wrapping_mul(10).wrapping_add(u64::from(c - b'0'))
        })
}

/// Reads `/proc/PID/NAME` (`PID` 0: `self`) into `buf`, without allocating;
/// the bytes read.
#[cfg(target_os = "linux")]
fn read_proc<'b>(pid: libc::pid_t, name: &str, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let mut path = Line::new();
    if pid == 0 {
        let _ = write!(path, "/proc/self/{name}\0");
    } else {
        let _ = write!(path, "/proc/{pid}/{name}\0");
    }
    // SAFETY: `path` is NUL-terminated; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            path.as_str().as_ptr().cast(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    let mut len = 0;
    while len < buf.len() {
        // SAFETY: reads into the unfilled part of `buf`.
        let n = unsafe { libc::read(fd, buf[len..].as_mut_ptr().cast(), buf.len() - len) };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    Some(&buf[..len])
}

/// Whether a seccomp filter is on (`Seccomp:` in `/proc/self/status` not
/// 0), or that cannot be known: then no copy is made.
#[cfg(target_os = "linux")]
fn seccomp_filtered() -> bool {
    let mut buf = [0u8; 8192];
    let Some(status) = read_proc(0, "status", &mut buf) else {
        return true;
    };
    match status.windows(9).position(|w| w == b"Seccomp:\t") {
        Some(at) => status.get(at + 9) != Some(&b'0'),
        // No such field: a kernel without seccomp.
        None => false,
    }
}

/// A line of text in a fixed buffer (writing past its end cuts it): for
/// messages written without allocating.
struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 256],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s are copied in (see `write_str`).
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            Err(std::fmt::Error)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_and_proc_files() {
        assert_eq!(number(b"1234 x"), 1234);
        assert_eq!(number(b"x"), 0);
        let mut l = Line::new();
        let long = "é".repeat(200);
        assert!(write!(l, "{long}").is_err());
        assert_eq!(l.as_str().len(), 256);
        #[cfg(target_os = "linux")]
        {
            // This process: a filter is off under `cargo test`, and its
            // CPU time is positive.
            assert!(!seccomp_filtered());
            // SAFETY: getpid has no preconditions.
            assert!(progress(unsafe { libc::getpid() }) > 0);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_copy_does_the_work_and_its_end_is_known() {
        let dir = std::env::temp_dir().join(format!("tickprof-copy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("done");
        let m = marker.clone();
        assert_eq!(
            run("a test", move || std::fs::write(&m, b"x").unwrap()),
            Ran::Copy
        );
        assert_eq!(std::fs::read(&marker).unwrap(), b"x");
        assert!(matches!(ended(0), Ok(())));
        assert!(matches!(ended(6), Err(Why::Signal(6))));
        assert!(matches!(ended(3 << 8), Err(Why::Exited(3))));
        assert!(matches!(ended(0x80 | 11), Err(Why::Signal(11))));
        // The decoding agrees with the libc macros on every status.
        for status in [0, 1, 6, 9, 0x7f, 0x80 | 6, 1 << 8, 255 << 8, 0x137f] {
            #[allow(unused_unsafe)]
            // SAFETY: the macros only decode the integer (unsafe in libc
            // before 0.2.67, safe after).
            let (signalled, sig, code) = unsafe {
                (
                    libc::WIFSIGNALED(status),
                    libc::WTERMSIG(status),
                    libc::WEXITSTATUS(status),
                )
            };
            match ended(status) {
                Err(Why::Signal(s)) => assert!(signalled && s == sig, "{status:#x}"),
                Ok(()) => assert!(!signalled && code == 0, "{status:#x}"),
                Err(Why::Exited(c)) => assert!(!signalled && c == code, "{status:#x}"),
                Err(_) => panic!("{status:#x}"),
            }
        }
        assert_eq!(
            Why::Signal(libc::SIGABRT).to_string(),
            "died of SIGABRT (the program's global allocator may refuse the report's allocations)"
        );
        assert_eq!(Why::Exited(PANICKED).to_string(), "panicked");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The line said about the last copy that ended badly.
    static SAID: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

    #[cfg(target_os = "linux")]
    #[test]
    fn a_copy_that_stalls_or_dies_is_killed_and_said() {
        let say = |s: &str| *SAID.lock().unwrap() = s.to_owned();
        let stuck = || loop {
            std::thread::sleep(Duration::from_secs(1));
        };
        assert_eq!(run_saying("a test", stuck, say), Ran::Lost);
        assert_eq!(
            *SAID.lock().unwrap(),
            "tickprof: warning: a test was not written: the copy of the process writing it made no progress for 0 s and was killed (a lock held by another thread at the fork?)\n"
        );
        // SAFETY: ends the copy as an aborting allocator would.
        let dies = || unsafe { libc::raise(libc::SIGKILL) };
        assert_eq!(
            run_saying(
                "a test",
                || {
                    dies();
                },
                say
            ),
            Ran::Lost
        );
        assert!(SAID.lock().unwrap().ends_with("died of signal 9\n"));
    }
}
