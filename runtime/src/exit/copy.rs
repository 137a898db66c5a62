//! Reports written from a copy of the process, so that the program's
//! global allocator is left alone (issue 33): building a report and its
//! files allocates in proportion to the sites, paths and threads, and a
//! program's `#[global_allocator]` may count those allocations, or abort
//! past a fixed number of them.
//!
//! [`run`] makes the copy with a raw `clone` system call, as `fork` does
//! but without libc's `fork` (issue 54): the program's `pthread_atfork`
//! handlers do not run (one may take a lock a blocked thread holds, or
//! print), and the copy has no exit signal, so the program never sees it
//! as a child: no `SIGCHLD`, and `waitpid(-1)` (which waits only for
//! children that signal `SIGCHLD` on exit) neither reaps nor waits for it;
//! it is waited for with `__WCLONE`. tickprof's own locks are taken around
//! the `clone` as its `fork` handlers take them (`record::fork`,
//! `log::live`) and released on both sides; the copy keeps the profile.
//! The copy (one thread, the caller's, with the whole address space
//! copied) ignores `SIGPIPE`, does the work, allocating through its own
//! copy of the allocator, and leaves with `_exit` (no destructor, no
//! `atexit` handler, no buffered stdout of the program's written twice);
//! the program waits for it, allocating nothing.
//!
//! libc's bookkeeping of a `fork` is skipped with it: above all the
//! allocator's locks, which `fork` takes around the copy and a raw `clone`
//! does not. A lock another thread held at the `clone` (glibc's arena
//! lock, a spin lock of the program's allocator) is held for ever in the
//! copy, so its first allocation (a 64 KiB block, past glibc's per-thread
//! cache) is a probe: a copy that has not made it after [`ANSWER`], or
//! that is still running after [`LIFE`] (wall time, whatever it does), is
//! killed, and the work is done here instead, as when no copy can be made.
//! What the copy finished is not done twice ([`once`]: the final push,
//! the report on stderr, each file).
//!
//! Where no copy can be made the caller does the work itself: on other
//! systems than Linux, under a seccomp filter (a filter may kill the
//! process on `clone`; `/proc/self/status` says whether one is on), or
//! when `clone` fails (memory, process limits). A copy that dies (its
//! copy of the allocator aborts, say) is reported in one line and the work
//! is not done again; the program goes on.

// The copy is made on Linux only; elsewhere the work is done in place and
// the copy's machinery is unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::cell::Cell;
#[cfg(any(test, target_os = "linux"))]
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

#[cfg(target_os = "linux")]
mod wait;
#[cfg(all(test, target_os = "linux"))]
use wait::ended;
#[cfg(target_os = "linux")]
use wait::{futex, wait, Why};

/// How long a copy may take to make its first allocation (the probe of the
/// program's allocator) before it is taken for deadlocked, killed, and the
/// work done here (a fifth of a second in unit tests).
pub(super) const ANSWER: Duration = Duration::from_millis(if cfg!(test) { 200 } else { 500 });

/// How long a copy may run in all (wall time) before it is killed and the
/// work done here (a second in unit tests).
pub(super) const LIFE: Duration = if cfg!(test) {
    Duration::from_secs(1)
} else {
    Duration::from_secs(10)
};

/// The page the copy and the program share while a copy runs (mapped
/// `MAP_SHARED` before the `clone`, so at the same address in both).
#[repr(C)]
struct Page {
    /// Set by the copy once its allocator answered the probe.
    answered: AtomicU32,
    /// The parts of the work the copy finished ([`once`]), a bit each.
    done: AtomicU64,
    /// Set by the copy when its work is over, just before `_exit`: the
    /// program's wait ([`wait`]) sleeps on it (a futex) rather than in
    /// naps of up to 5 ms past the copy's end.
    finished: AtomicU32,
}

thread_local! {
    /// The shared page of the copy under way on this thread (and then in
    /// the copy, which is this thread), null else. Per thread: a dump and
    /// the exit report may run at once. (A `Cell` of a pointer: no
    /// destructor, so usable after the thread's TLS destructors ran.)
    static PAGE: Cell<*mut Page> = const { Cell::new(std::ptr::null_mut()) };
}

/// The bit of part `part` (parts past 63 share the last bit).
fn bit(part: usize) -> u64 {
    1 << part.min(63)
}

/// Does `f`, part `part` of a [`run`]'s work, unless the copy finished it
/// already (the work is then being done again here, after the copy was
/// killed), and notes it done. Parts: [`PUSH`], [`STDERR`], then the
/// output files from [`FILES`] in their order.
pub(super) fn once<T>(part: usize, f: impl FnOnce() -> T) -> Option<T> {
    // SAFETY: a non-null `PAGE` is mapped until the `run` that set it on
    // this thread returns (and in the copy, which inherited it).
    let page = unsafe { PAGE.with(Cell::get).as_ref() };
    if page.is_some_and(|p| p.done.load(Ordering::Acquire) & bit(part) != 0) {
        return None;
    }
    let out = f();
    if let Some(p) = page {
        p.done.fetch_or(bit(part), Ordering::AcqRel);
    }
    Some(out)
}

/// The part of the final push ([`once`]).
pub(super) const PUSH: usize = 0;
/// The part of the report on stderr.
pub(super) const STDERR: usize = 1;
/// The part of the first output file.
pub(super) const FILES: usize = 2;

/// How [`run`] went.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ran {
    /// The copy did the work and ended well.
    Copy,
    /// The copy ended badly (a line on stderr said how).
    Lost,
    /// The caller did the work: no copy was made, or it was killed late.
    Here,
}

/// Does `work` in a copy of the process and waits for it; where no copy
/// can be made, or it is killed late, does it here. `what` names the work
/// in the line that reports a copy that ended badly (`the exit report`).
pub(super) fn run(what: &str, work: impl FnOnce()) -> Ran {
    run_saying(what, work, super::write_stderr)
}

/// [`run`], with the line about a copy that ended badly given to `say`.
fn run_saying(what: &str, work: impl FnOnce(), say: fn(&str)) -> Ran {
    #[cfg(target_os = "linux")]
    if let Some(page) = (!seccomp_filtered()).then(map_page).flatten() {
        let ran = in_a_copy(what, work, say, page);
        PAGE.with(|p| p.set(std::ptr::null_mut()));
        // SAFETY: unmaps the page `map_page` mapped; nothing refers to it
        // any more (`PAGE` is null, the copy ended).
        unsafe { libc::munmap(page.cast(), PAGE_BYTES) };
        return ran;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (what, say);
    work();
    Ran::Here
}

/// The bytes of the shared page.
#[cfg(target_os = "linux")]
const PAGE_BYTES: usize = 4096;

/// Maps the shared page (zeroed), `None` if it cannot be.
#[cfg(target_os = "linux")]
fn map_page() -> Option<*mut Page> {
    // SAFETY: a fresh anonymous mapping; no memory of the program's is
    // touched. Zeroed pages are a valid `Page` (atomics of 0).
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGE_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

/// `waitpid`'s flag for children that signal nothing on exit.
#[cfg(target_os = "linux")]
const WCLONE: i32 = 0x8000_0000_u32 as i32;

/// [`run`] with the shared `page`: the `clone`, the copy's life, the wait.
#[cfg(target_os = "linux")]
fn in_a_copy(what: &str, work: impl FnOnce(), say: fn(&str), page: *mut Page) -> Ran {
    PAGE.with(|p| p.set(page));
    let program = crate::process::program_pid();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // tickprof's locks, taken as its `fork` handlers take them.
    crate::log::live::fork_prepare();
    crate::record::fork::prepare();
    // SAFETY: `clone` with no flag but the exit signal 0: a new process
    // with a copy of the address space, as `fork` makes, running on a copy
    // of this stack (no new stack given), with this thread alone. In the
    // copy, `copy_life` runs and ends with `_exit`.
    let pid = unsafe { libc::syscall(libc::SYS_clone, 0_i64, 0_i64, 0_i64, 0_i64, 0_i64) };
    crate::record::fork::parent();
    crate::log::live::fork_parent();
    if pid == 0 {
        copy_life(work, program, parent, page);
    }
    if pid < 0 {
        work();
        return Ran::Here;
    }
    match wait(pid as libc::pid_t, page) {
        Ok(()) => Ran::Copy,
        Err(Why::Late) => {
            work();
            Ran::Here
        }
        Err(why) => {
            let mut line = Line::new();
            let _ = writeln!(
                line,
                "tickprof: warning: {what} was not written: the copy of the process writing it {why}"
            );
            say(line.as_str());
            Ran::Lost
        }
    }
}

/// The life of the copy: it dies with the program, ignores `SIGPIPE`,
/// probes the allocator, does `work`, and ends at once.
#[cfg(target_os = "linux")]
fn copy_life(work: impl FnOnce(), program: u32, parent: libc::pid_t, page: *mut Page) -> ! {
    // SAFETY: in the copy, which ends with `_exit` below. `prctl` and
    // `signal` change this process only (a `clone` without
    // `CLONE_SIGHAND`); the probe is a valid layout allocated and freed
    // through the global allocator; `page` is mapped (shared).
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        crate::process::set_copy_of(program);
        let probe = std::alloc::Layout::from_size_align_unchecked(PROBE_BYTES, 16);
        // (`black_box` and the write: the pair is not optimised away.)
        let p = std::hint::black_box(std::alloc::alloc(probe));
        if !p.is_null() {
            p.write_volatile(1);
            std::alloc::dealloc(p, probe);
        }
        (*page).answered.store(1, Ordering::Release);
    }
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).is_ok();
    // SAFETY: `page` is mapped (shared); the wake names its word.
    unsafe {
        (*page).finished.store(1, Ordering::Release);
        futex(&(*page).finished, libc::FUTEX_WAKE, 1, std::ptr::null());
    }
    // SAFETY: ends the copy at once, running nothing of the program's (no
    // destructor, no `atexit` handler).
    unsafe { libc::_exit(if ok { 0 } else { PANICKED }) }
}

/// The probe's size: past glibc's per-thread cache (1 KiB), under its
/// `mmap` threshold (128 KiB), so that it takes the arena's lock.
#[cfg(target_os = "linux")]
const PROBE_BYTES: usize = 64 * 1024;

/// The exit code of a copy whose work panicked.
const PANICKED: i32 = 101;

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
    fn lines_and_proc_files() {
        let mut l = Line::new();
        let long = "é".repeat(200);
        assert!(write!(l, "{long}").is_err());
        assert_eq!(l.as_str().len(), 256);
        // This process: a filter is off under `cargo test`.
        #[cfg(target_os = "linux")]
        assert!(!seccomp_filtered());
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

    /// This process's id.
    #[cfg(target_os = "linux")]
    fn pid() -> u32 {
        // SAFETY: getpid has no preconditions.
        unsafe { libc::getpid() as u32 }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_copy_past_its_deadline_is_killed_and_the_rest_done_here() {
        let dir = std::env::temp_dir().join(format!("tickprof-late-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (first, second) = (dir.join("first"), dir.join("second"));
        let me = pid();
        let (f, g) = (first.clone(), second.clone());
        let started = std::time::Instant::now();
        let late = move || {
            once(FILES, || std::fs::write(&f, pid().to_string()).unwrap());
            // Stuck in the copy only (a lock held for ever, say).
            while pid() != me {
                std::thread::sleep(Duration::from_millis(10));
            }
            once(FILES + 1, || std::fs::write(&g, pid().to_string()).unwrap());
        };
        assert_eq!(
            run_saying("a test", late, |_| panic!("nothing said")),
            Ran::Here
        );
        assert!(started.elapsed() >= LIFE);
        let by = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
        assert_ne!(
            by(&first),
            me.to_string(),
            "the copy's part is not done again"
        );
        assert_eq!(by(&second), me.to_string(), "the rest is done here");
        assert!(PAGE.with(Cell::get).is_null());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_copy_that_dies_is_said_and_its_work_not_done_again() {
        let say = |s: &str| *SAID.lock().unwrap() = s.to_owned();
        let me = pid();
        let dies = move || {
            assert_ne!(pid(), me, "not done here");
            // SAFETY: ends the copy as an aborting allocator would.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        };
        assert_eq!(run_saying("a test", dies, say), Ran::Lost);
        assert_eq!(
            *SAID.lock().unwrap(),
            "tickprof: warning: a test was not written: the copy of the process writing it died of signal 9\n"
        );
    }
}
