//! Marked calls made from signal handlers: with tracing on while the
//! interrupted code is itself in a marked call (the trace buffer's lock must
//! not be needed), and as a thread's very first marked call, delivered while
//! the thread is still starting (before std has set the thread's handle:
//! tickprof must not initialise it, which made std abort with "current
//! thread handle already set").
#![cfg(all(feature = "enabled", target_os = "linux"))]

use crate::support::child;

use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicU64, Ordering};

const CHILD: &str = "TPTEST_SIGNALS_CHILD";

static HANDLED: AtomicU64 = AtomicU64::new(0);

#[tickprof::profile]
#[inline(never)]
fn in_handler() {
    HANDLED.fetch_add(1, Ordering::Relaxed);
}

#[tickprof::profile]
#[inline(never)]
fn busy(n: u64) -> u64 {
    (0..n).fold(0, |a, i| a ^ std::hint::black_box(i))
}

extern "C" fn on_usr1(_: libc::c_int) {
    in_handler();
}

fn install_handler() {
    // SAFETY: a zeroed `sigaction` is valid; the handler is an `extern "C"`
    // function that lives as long as the process.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr1 as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
}

/// Runs one scenario in a child process; returns its exit status and stderr.
fn run(scenario: &str, trace: bool) -> (std::process::ExitStatus, String) {
    let mut cmd = child::child_command(CHILD, scenario);
    if trace {
        cmd.env("TICKPROF_TRACE", "1");
        cmd.env(
            "TICKPROF_OUT",
            std::env::temp_dir().join(format!(
                "tickprof-signals-{}.trace.json",
                std::process::id()
            )),
        );
    }
    cmd.env("TICKPROF_THREADS", "1");
    let out = cmd.output().expect("child ran");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn first_marked_call_from_a_signal_handler_while_threads_start() {
    for _ in 0..3 {
        let (status, stderr) = run("thread-start", false);
        assert!(status.success(), "child failed: {status}\n{stderr}");
        assert!(!stderr.contains("already set"), "{stderr}");
        assert!(stderr.contains("signals::in_handler"), "{stderr}");
        // The threads whose first marked call ran in the handler still get
        // their std names (found on a later call), not a placeholder.
        assert!(stderr.contains("-- thread starting-0 ("), "{stderr}");
        assert!(!stderr.contains("-- thread <thread"), "{stderr}");
    }
}

/// A thread's first marked calls made in a signal handler that
/// interrupted the program's allocator (threads allocating hard, signalled
/// before and during their first marked call): setting the thread up must
/// take no lock and allocate nothing, or the handler waits forever on the
/// allocator's lock its own thread holds. 200 child processes, each
/// bounded by a deadline: none may hang.
#[test]
fn first_marked_calls_in_handlers_that_interrupted_malloc_never_hang() {
    let runs: usize = std::env::var("TICKPROF_TEST_SIGNAL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let deadline = std::time::Duration::from_secs(20);
    let mut hung = Vec::new();
    // Two children at a time (the machine has two cores).
    for pair in (0..runs).collect::<Vec<_>>().chunks(2) {
        let mut kids: Vec<_> = pair
            .iter()
            .map(|&i| {
                let mut cmd = child::child_command(CHILD, "hammer");
                cmd.env("TICKPROF_STDERR", "0");
                cmd.stdout(std::process::Stdio::null());
                cmd.stderr(std::process::Stdio::piped());
                (i, cmd.spawn().expect("child runs"))
            })
            .collect();
        let start = std::time::Instant::now();
        for (i, kid) in &mut kids {
            loop {
                if let Some(status) = kid.try_wait().expect("wait") {
                    assert!(status.success(), "run {i}: {status}");
                    break;
                }
                if start.elapsed() > deadline {
                    let _ = kid.kill();
                    let _ = kid.wait();
                    hung.push(*i);
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
    assert!(
        hung.is_empty(),
        "{} of {runs} runs hung: {hung:?}",
        hung.len()
    );
}

#[test]
fn marked_calls_from_a_signal_handler_with_tracing_on() {
    for _ in 0..3 {
        let (status, stderr) = run("tracing", true);
        assert!(status.success(), "child failed: {status}\n{stderr}");
        assert!(stderr.contains("signals::busy"), "{stderr}");
    }
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(scenario) = std::env::var(CHILD) else {
        return;
    };
    install_handler();
    match scenario.as_str() {
        "thread-start" => {
            // Signal each new thread at once: the signal is delivered when
            // the thread first runs, often before std has set its handle,
            // and the handler's marked call is the thread's first.
            for round in 0..200 {
                let t = std::thread::Builder::new()
                    .name(format!("starting-{round}"))
                    .spawn(|| busy(1000))
                    .expect("spawned");
                // SAFETY: the thread is joined below, so its pthread_t is
                // valid here.
                unsafe { libc::pthread_kill(t.as_pthread_t(), libc::SIGUSR1) };
                t.join().expect("thread ran");
            }
        }
        "tracing" => {
            // The main thread is in marked calls (tracing on) while another
            // thread signals it over and over.
            let main = unsafe { libc::pthread_self() };
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let stop2 = stop.clone();
            // pthread_t is an integer on Linux: it crosses the thread.
            let killer = std::thread::spawn(move || {
                while !stop2.load(Ordering::Relaxed) {
                    // SAFETY: the main thread outlives this thread (joined).
                    unsafe { libc::pthread_kill(main, libc::SIGUSR1) };
                    std::thread::yield_now();
                }
            });
            let mut x = 0;
            for _ in 0..20_000 {
                x ^= busy(200);
            }
            stop.store(true, Ordering::Relaxed);
            killer.join().expect("killer");
            std::hint::black_box(x);
        }
        "hammer" => {
            // Threads allocate and free as fast as they can, and make a
            // marked call now and then; the main thread signals each of
            // them from its very start, so that many first marked calls
            // run in the handler, often while the thread is in malloc.
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let stop = stop.clone();
                    std::thread::spawn(move || {
                        let mut keep: Vec<Vec<u8>> = Vec::new();
                        let mut x = 0u64;
                        let mut i = 0usize;
                        while !stop.load(Ordering::Relaxed) {
                            keep.push(vec![i as u8; 16 + i % 1024]);
                            if keep.len() > 64 {
                                keep.clear();
                            }
                            if i % 4096 == 4095 {
                                x ^= busy(10);
                            }
                            i += 1;
                        }
                        x
                    })
                })
                .collect();
            let started = std::time::Instant::now();
            while started.elapsed() < std::time::Duration::from_millis(30) {
                for t in &threads {
                    // SAFETY: the threads run until `stop`, set after the
                    // last signal; their pthread_t are valid until joined.
                    unsafe { libc::pthread_kill(t.as_pthread_t(), libc::SIGUSR1) };
                }
                std::thread::yield_now();
            }
            stop.store(true, Ordering::Relaxed);
            for t in threads {
                std::hint::black_box(t.join().expect("thread ran"));
            }
            assert!(HANDLED.load(Ordering::Relaxed) > 0);
        }
        other => panic!("unknown scenario {other}"),
    }
}
