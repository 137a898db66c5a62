//! The exit path and the program's `#[global_allocator]` (issue 33, item
//! 2), in child processes whose global allocator is a ledger: it counts
//! live allocations, aborts the process past a fixed number of them (as
//! bytes' `test_bytes_vec_alloc` does with its 2,048 slots), and, once the
//! program's work is over, writes what it sees to a file with `pwrite`
//! after each allocation and free (no allocation of its own): the
//! allocations made after that point, the most live at once beyond the
//! ones live then, and how many are still outstanding.
//!
//! The program: 500 marked functions, each called beneath 50 others (500
//! sites × 50 paths, 25,500 call paths) on a thread that ends before the
//! exit, then `exit(0)`, with the default stderr report, `TICKPROF_OUT`
//! naming a file of every format, `TICKPROF_PUSH` to a receiver here, and
//! a `dump_now()` after the work. Bound: nothing beyond what the same
//! program allocates after its work with `TICKPROF=off` (the runtime's
//! exit, one allocation), since reports, files and the final push are made
//! in a copy of the process.
//!
//! Not bounded here (the recorder's, `runtime/src/record`): a thread that
//! made marked calls merges its tree into the finished threads' when it
//! ends, allocating per call path; when that thread is the one calling
//! `exit` (the main thread returning from `main`), this happens after
//! `main`: 8,263 allocations, 2,157 live at most, 1,639 left for this
//! program's 25,500 paths with the work on the exiting thread.
#![cfg(all(feature = "enabled", target_os = "linux"))]

use crate::support::http;

use http::child;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering::SeqCst};

const CHILD: &str = "TPTEST_LEDGER_CHILD";
/// The figures' file (the child writes, the test reads).
const FIGURES: &str = "TPTEST_LEDGER_FILE";
/// Set: the work runs on a thread of its own, which ends before the exit.
const ON_A_THREAD: &str = "TPTEST_LEDGER_ON_A_THREAD";
/// Slots beyond the allocations live when the work ends (unset: no cap).
const SLOTS: &str = "TPTEST_LEDGER_SLOTS";

/// The ledger: `tests/all.rs` installs it in the children
/// (`TPTEST_ALLOCATOR=ledger`), the plain system allocator behind it.
pub struct Ledger;

/// Live allocations (of the whole process).
static LIVE: AtomicI64 = AtomicI64::new(0);
/// The most live allocations before the process aborts.
static CAP: AtomicI64 = AtomicI64::new(i64::MAX);
/// Set when the program's work is over.
static AFTER: AtomicBool = AtomicBool::new(false);
/// Live allocations when the work ended.
static AT_END: AtomicI64 = AtomicI64::new(0);
/// Allocations (and reallocations) since.
static ALLOCS_AFTER: AtomicU64 = AtomicU64::new(0);
/// The most live allocations since.
static PEAK_AFTER: AtomicI64 = AtomicI64::new(0);
/// The process that armed the ledger, and the figures' file.
static OWNER: AtomicI32 = AtomicI32::new(0);
static FD: AtomicI32 = AtomicI32::new(-1);

impl Ledger {
    /// One allocation more (`1`), one less (`-1`), or moved (`0`).
    fn note(&self, delta: i64) {
        let live = LIVE.fetch_add(delta, SeqCst) + delta;
        if live > CAP.load(SeqCst) {
            // SAFETY: async-signal-safe; no allocation.
            unsafe { libc::abort() };
        }
        // SAFETY: getpid has no preconditions.
        if !AFTER.load(SeqCst) || OWNER.load(SeqCst) != unsafe { libc::getpid() } {
            return;
        }
        if delta >= 0 {
            ALLOCS_AFTER.fetch_add(1, SeqCst);
        }
        PEAK_AFTER.fetch_max(live, SeqCst);
        let base = AT_END.load(SeqCst);
        let figures = [
            ALLOCS_AFTER.load(SeqCst) as i64,
            PEAK_AFTER.load(SeqCst) - base,
            live - base,
        ];
        // SAFETY: writes 24 bytes from a local array to an open file.
        unsafe {
            libc::pwrite(FD.load(SeqCst), figures.as_ptr().cast(), 24, 0);
        }
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// ledger only counts.
unsafe impl GlobalAlloc for Ledger {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            self.note(1);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            self.note(1);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(p, l) };
        self.note(-1);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            self.note(0);
        }
        q
    }
}

/// 500 marked functions, `crate::exit_allocator::aN::bM::f` (20 × 25): each runs the
/// function at index `next` of [`ALL`], if any, beneath itself.
macro_rules! inner {
    ($($b:ident)*) => {
        $(pub mod $b {
            #[tickprof::profile]
            pub fn f(next: Option<usize>) {
                if let Some(n) = next {
                    crate::exit_allocator::call(n, None);
                }
            }
        })*
        pub static ALL: &[fn(Option<usize>)] = &[$($b::f),*];
    };
}

macro_rules! outer {
    ($($a:ident)*) => {
        $(mod $a {
            inner!(b0 b1 b2 b3 b4 b5 b6 b7 b8 b9 b10 b11 b12 b13 b14 b15 b16 b17 b18 b19 b20 b21 b22 b23 b24);
        })*
        static ALL: &[&[fn(Option<usize>)]] = &[$($a::ALL),*];
    };
}

outer!(a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19);

const SITES: usize = 500;
const PARENTS: usize = 50;

fn call(i: usize, next: Option<usize>) {
    ALL[i / 25][i % 25](next);
}

/// The child: every site beneath 50 parents, then the exit.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let path = std::ffi::CString::new(std::env::var(FIGURES).unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; the flags and mode are valid.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
            0o600,
        )
    };
    assert!(fd >= 0);
    let slots: Option<i64> = std::env::var(SLOTS).ok().map(|s| s.parse().unwrap());
    let work = || {
        for child in 0..SITES {
            for k in 0..PARENTS {
                call((child + 1 + k * 7) % SITES, Some(child));
            }
        }
    };
    if std::env::var(ON_A_THREAD).is_ok() {
        std::thread::spawn(work).join().unwrap();
    } else {
        work();
    }
    let dump = std::env::var("TPTEST_LEDGER_DUMP").is_ok();
    FD.store(fd, SeqCst);
    // SAFETY: getpid has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, SeqCst);
    let live = LIVE.load(SeqCst);
    AT_END.store(live, SeqCst);
    PEAK_AFTER.store(live, SeqCst);
    if let Some(slots) = slots {
        CAP.store(live + slots, SeqCst);
    }
    AFTER.store(true, SeqCst);
    Ledger.note(0); // the figures so far: none
    if dump && !tickprof::dump_now() {
        // SAFETY: no allocation.
        unsafe { libc::_exit(9) };
    }
    std::process::exit(0);
}

/// What the ledger saw after the work: allocations, the most live at once
/// beyond those live at the end of the work, and those still outstanding.
#[derive(Debug)]
struct Figures {
    allocs: i64,
    peak: i64,
    outstanding: i64,
}

impl Figures {
    /// No more allocations, live at once or outstanding than `bound`
    /// (freeing more is fine: a thread of tickprof's that ended, say).
    fn within(&self, bound: &Figures) -> bool {
        self.allocs <= bound.allocs
            && self.peak <= bound.peak
            && self.outstanding <= bound.outstanding
    }
}

/// Runs the child with `env`; its exit status, stderr and the figures.
fn run(name: &str, env: &[(&str, &str)]) -> (std::process::ExitStatus, String, Figures) {
    let dir = std::env::temp_dir().join(format!("tickprof-ledger-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let figures = dir.join("figures");
    let mut all = env.to_vec();
    let figures_path = figures.to_str().unwrap().to_owned();
    all.push((FIGURES, &figures_path));
    all.push((child::ALLOCATOR, "ledger"));
    let (out, stderr) = child::run(CHILD, "1", &all);
    let bytes = std::fs::read(&figures).unwrap_or_default();
    let word = |i: usize| i64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    assert_eq!(bytes.len(), 24, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status,
        stderr,
        Figures {
            allocs: word(0),
            peak: word(1),
            outstanding: word(2),
        },
    )
}

/// `TICKPROF_OUT`: one file of every format in `dir`.
fn every_format(dir: &std::path::Path) -> String {
    [
        "r.txt",
        "r.csv",
        "r.trace.json",
        "r.json",
        "r.html",
        "r.alloc.folded",
        "r.folded",
        "r.svg",
        "r.pb.gz",
        "r.pb",
        "r.lcov",
    ]
    .iter()
    .map(|f| dir.join(f).to_str().unwrap().to_owned())
    .collect::<Vec<_>>()
    .join(",")
}

/// A receiver that answers `200` to every push; its port and the pushes
/// it took.
fn receiver() -> (u16, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let got = std::sync::Arc::new(AtomicU64::new(0));
    let g = std::sync::Arc::clone(&got);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            if http::read_request(&mut s).is_some() {
                g.fetch_add(1, SeqCst);
                let _ = std::io::Write::write_all(&mut s, b"HTTP/1.1 200 OK\r\n\r\n");
            }
        }
    });
    (port, got)
}

#[test]
fn the_exit_path_leaves_the_programs_allocator_alone() {
    let (baseline_status, _, baseline) = run("off", &[("TICKPROF", "off"), (ON_A_THREAD, "1")]);
    assert!(baseline_status.success());
    let out = std::env::temp_dir().join(format!("tickprof-ledger-out-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let files = every_format(&out);
    let (port, pushes) = receiver();
    let url = format!("http://127.0.0.1:{port}");
    let env = [
        ("TICKPROF_OUT", files.as_str()),
        ("TICKPROF_PUSH", &url),
        ("TICKPROF_PUSH_INTERVAL", "1h"),
        (ON_A_THREAD, "1"),
        ("TPTEST_LEDGER_DUMP", "1"),
    ];
    let (status, stderr, figures) = run("report", &env);
    let shown: String = stderr.chars().take(3000).collect();
    assert_eq!(status.code(), Some(0), "{shown}");
    assert!(
        figures.within(&baseline),
        "{figures:?} beyond {baseline:?}: {shown}"
    );
    // The dump and the exit report, on stderr and in every file.
    assert_eq!(stderr.matches(" sites on ").count(), 2, "{shown}");
    assert!(stderr.contains("tickprof: report 1 (dump_now; the run so far)"));
    for f in files.split(',') {
        assert!(
            std::fs::metadata(f).is_ok_and(|m| m.len() > 0),
            "{f} written"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    // The final push, made by the copy.
    assert_eq!(pushes.load(SeqCst), 1, "{shown}");
    let line = format!("tickprof: TICKPROF_PUSH={url}: 1 pushed, 0 failed, 0 dropped");
    assert!(stderr.contains(&line), "{shown}");
}

/// A ledger with 64 free slots when the work ends: the copy that writes the
/// report runs out of them and aborts; the program does not, its exit
/// status is its own, and one line says what was lost.
#[test]
fn a_ledger_that_aborts_aborts_only_the_copy() {
    let (_, _, baseline) = run(
        "off-64",
        &[("TICKPROF", "off"), (ON_A_THREAD, "1"), (SLOTS, "64")],
    );
    let (status, stderr, figures) = run("slots", &[(ON_A_THREAD, "1"), (SLOTS, "64")]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(figures.within(&baseline), "{figures:?} beyond {baseline:?}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("tickprof:"))
        .collect();
    assert_eq!(
        lines,
        ["tickprof: warning: the final report was not written: the copy of the process writing it died of SIGABRT (the program's global allocator may refuse the report's allocations)"]
    );
}
