//! Small programs that a user's program could be, for `tests/behaviour.rs`
//! (issue 54: the program behaves as if tickprof were not there). Each is
//! run with tickprof on and with `TICKPROF=off`; the test compares their
//! exit status and stdout. `cargo run -p tickprof-testsuite --example
//! behaviour -- <case>`; the cases are the arms of `main`.
//!
//! Each makes a few marked calls, prints `done` on stdout, and returns
//! from `main` while the case's condition holds: the exit report is made
//! then.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// The global allocator: the system's, behind a spin lock when [`SPIN`] is
/// set (as `spin::Mutex`-based allocators are).
struct SpinAlloc;

/// Whether allocations take the spin lock (the `spin_alloc` case).
static SPIN: AtomicBool = AtomicBool::new(false);
/// The spin lock.
static HELD: AtomicBool = AtomicBool::new(false);

impl SpinAlloc {
    fn locked<T>(&self, f: impl FnOnce() -> T) -> T {
        if !SPIN.load(Ordering::Relaxed) {
            return f();
        }
        while HELD
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        let out = f();
        // A slow allocator: the lock is held most of the time.
        for _ in 0..50 {
            std::hint::spin_loop();
        }
        HELD.store(false, Ordering::Release);
        out
    }
}

/// Whether allocations are counted by tickprof (`tickprof::Alloc`: the
/// `*_alloc` cases).
static COUNT: AtomicBool = AtomicBool::new(false);
/// tickprof's counting allocator, used when [`COUNT`] is set.
static COUNTING: tickprof::Alloc<System> = tickprof::Alloc::system();

// SAFETY: every call is forwarded to `System` (or to tickprof's counting
// wrapper of it), under the lock.
unsafe impl GlobalAlloc for SpinAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNT.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract.
            return unsafe { COUNTING.alloc(l) };
        }
        // SAFETY: as the caller's contract.
        self.locked(|| unsafe { System.alloc(l) })
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if COUNT.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract.
            return unsafe { COUNTING.dealloc(p, l) };
        }
        // SAFETY: as the caller's contract.
        self.locked(|| unsafe { System.dealloc(p, l) })
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if COUNT.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract.
            return unsafe { COUNTING.realloc(p, l, n) };
        }
        // SAFETY: as the caller's contract.
        self.locked(|| unsafe { System.realloc(p, l, n) })
    }
}

#[global_allocator]
static A: SpinAlloc = SpinAlloc;

#[tickprof::profile]
#[inline(never)]
fn work(i: u64) -> u64 {
    std::hint::black_box(i * 3)
}

/// A few marked calls.
fn calls() {
    for i in 0..100 {
        work(i);
    }
}

/// Writes `s` to stdout unbuffered (safe in a `fork` handler).
fn say(s: &str) {
    // SAFETY: writes from the bytes of `s`.
    unsafe { libc::write(1, s.as_ptr().cast(), s.len()) };
}

fn main() {
    let case = std::env::args().nth(1).unwrap_or_default();
    match case.as_str() {
        // Another thread allocates in a loop through a spin-lock
        // allocator while `main` returns.
        "spin_alloc" => {
            SPIN.store(true, Ordering::Relaxed);
            std::thread::spawn(|| loop {
                let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(64));
                drop(v);
            });
            calls();
        }
        // A `fork` prepare handler takes a lock that a worker holds while
        // it is blocked in `read` for ever.
        "atfork_lock" => {
            static mut LOCK: libc::pthread_mutex_t = libc::PTHREAD_MUTEX_INITIALIZER;
            extern "C" fn prepare() {
                // SAFETY: the static mutex is initialised.
                unsafe { libc::pthread_mutex_lock(std::ptr::addr_of_mut!(LOCK)) };
            }
            extern "C" fn release() {
                // SAFETY: taken by `prepare`.
                unsafe { libc::pthread_mutex_unlock(std::ptr::addr_of_mut!(LOCK)) };
            }
            let mut fds = [0; 2];
            // SAFETY: registers handlers that live as long as the process;
            // `fds` has room for a pipe's two ends.
            unsafe {
                libc::pthread_atfork(Some(prepare), Some(release), Some(release));
                libc::pipe(fds.as_mut_ptr());
            }
            let (held_tx, held_rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                prepare();
                let _ = held_tx.send(());
                let mut b = [0u8; 1];
                // SAFETY: reads into `b`; blocks for ever (nobody writes).
                unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
                release();
            });
            let _ = held_rx.recv();
            calls();
        }
        // A `fork` child handler prints.
        "atfork_print" => {
            extern "C" fn child() {
                say("atfork child handler ran\n");
            }
            // SAFETY: registers a handler that lives as long as the process.
            unsafe { libc::pthread_atfork(None, None, Some(child)) };
            calls();
        }
        // `SIGPIPE` restored to its default (the CLI idiom); the test
        // makes stderr a pipe with no reader.
        "sigpipe" => {
            // SAFETY: sets a disposition; no handler.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
            calls();
        }
        // A thread reaps any child (`waitpid(-1)`) and a `SIGCHLD` handler
        // says when one ends; the program has no child of its own.
        "children" => {
            extern "C" fn on_chld(_: i32) {
                say("SIGCHLD\n");
            }
            // SAFETY: installs a handler that only writes (async-signal-safe).
            unsafe {
                libc::signal(
                    libc::SIGCHLD,
                    on_chld as extern "C" fn(i32) as libc::sighandler_t,
                )
            };
            std::thread::spawn(|| loop {
                let mut status = 0;
                // SAFETY: `status` is a valid out-pointer.
                let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
                if pid > 0 {
                    say(&format!("reaped unknown child {pid}\n"));
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            });
            calls();
        }
        // `main` blocks SIGINT and SIGTERM before it starts its threads,
        // and a `sigwait` thread takes them; the workers make marked
        // calls for about 200 ms.
        "sigwait" => {
            // SAFETY: a set built by the libc calls, blocked on this thread
            // (and inherited by the threads it starts).
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGINT);
                libc::sigaddset(&mut set, libc::SIGTERM);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                std::thread::spawn(move || {
                    let mut sig = 0;
                    libc::sigwait(&set, &mut sig);
                    say("signal\n");
                });
            }
            let start = std::time::Instant::now();
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    std::thread::spawn(move || {
                        let mut i = 0;
                        while start.elapsed() < std::time::Duration::from_millis(200) {
                            work(i);
                            i += 1;
                        }
                    })
                })
                .collect();
            for w in workers {
                let _ = w.join();
            }
        }
        // 500 threads, each interrupted by SIGUSR1 (whose handler makes
        // a marked call) from another thread as fast as it can send, so
        // that handlers run at every point of the threads' lives, their
        // exit past the TLS destructors included. `exit_signals_alloc`:
        // the same with tickprof counting allocations.
        "exit_signals" | "exit_signals_alloc" => {
            use std::sync::atomic::AtomicI64;
            COUNT.store(case == "exit_signals_alloc", Ordering::Relaxed);
            extern "C" fn on_usr1(_: i32) {
                work(7);
            }
            // SAFETY: a handler that makes a marked call (what is tested).
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_usr1 as extern "C" fn(i32) as libc::sighandler_t;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
            }
            static TARGET: AtomicI64 = AtomicI64::new(0);
            static DONE: AtomicBool = AtomicBool::new(false);
            let sender = std::thread::spawn(|| {
                // SAFETY: getpid has no preconditions.
                let pid = unsafe { libc::getpid() };
                while !DONE.load(Ordering::Relaxed) {
                    let tid = TARGET.load(Ordering::Relaxed);
                    if tid > 0 {
                        // SAFETY: signals a thread of this process (ESRCH
                        // once it is gone).
                        unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGUSR1) };
                    }
                }
            });
            for t in 0..500 {
                let h = std::thread::spawn(move || {
                    // SAFETY: gettid has no arguments.
                    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
                    TARGET.store(tid, Ordering::Relaxed);
                    for i in 0..5 {
                        work(t + i);
                    }
                });
                let _ = h.join();
            }
            DONE.store(true, Ordering::Relaxed);
            let _ = sender.join();
        }
        // 2,000 short threads of 5 marked calls, one after the other
        // (`scripts/thread_churn_bench.sh` times it against `TICKPROF=off`).
        "churn" => {
            for t in 0..2000 {
                let h = std::thread::spawn(move || {
                    for i in 0..5 {
                        work(t + i);
                    }
                });
                let _ = h.join();
            }
        }
        other => {
            eprintln!("unknown case {other:?}");
            std::process::exit(2);
        }
    }
    say("done\n");
}
