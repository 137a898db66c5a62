//! How often a forked child hangs when it starts a thread while the parent
//! churns threads, with profiling on and off: the rate belongs to Rust's
//! std (its stack-overflow handler's thread list is behind a lock every new
//! thread takes), not to tickprof, whose `fork` handlers never let a child
//! inherit one of its locks held.
//!
//! ```text
//! cargo build --release --example fork_hangs
//! TICKPROF=on  TICKPROF_STDERR=0 target/release/examples/fork_hangs 400
//! TICKPROF=off TICKPROF_STDERR=0 target/release/examples/fork_hangs 400
//! ```
//!
//! Prints `forks N: hangs H; threads churned C`. A child still running
//! after 3 s is counted as hung and killed. Unix only.

#[cfg(unix)]
mod run {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    extern "C" {
        fn fork() -> i32;
        fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
        fn kill(pid: i32, sig: i32) -> i32;
        fn _exit(code: i32) -> !;
    }
    const WNOHANG: i32 = 1;
    const SIGKILL: i32 = 9;

    #[tickprof::profile]
    fn churned() {
        std::hint::black_box(Vec::<u8>::with_capacity(64));
    }

    #[tickprof::profile]
    fn in_child() {}

    /// In the forked child: start a thread that makes three marked calls.
    fn child() -> ! {
        let h = std::thread::Builder::new()
            .name("forked-worker".into())
            .spawn(|| {
                for _ in 0..3 {
                    in_child();
                }
                std::thread::sleep(Duration::from_millis(6));
            });
        let ok = h.is_ok_and(|h| h.join().is_ok());
        // SAFETY: ends the forked child without running the parent's exit
        // handlers.
        unsafe { _exit(if ok { 0 } else { 2 }) }
    }

    /// Whether the child `pid` ran longer than the limit (then killed).
    fn hung(pid: i32) -> bool {
        let start = Instant::now();
        loop {
            let mut status = 0;
            // SAFETY: `pid` is our child; `status` is a valid out-pointer.
            if unsafe { waitpid(pid, &mut status, WNOHANG) } == pid {
                return false;
            }
            if start.elapsed() > Duration::from_secs(3) {
                // SAFETY: plain system calls on our own child.
                unsafe {
                    kill(pid, SIGKILL);
                    waitpid(pid, &mut status, 0);
                }
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Forks `n` children while another thread starts and joins threads.
    pub fn main() {
        let n: u32 = std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(400);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let churner = std::thread::Builder::new()
            .name("churner".into())
            .spawn(move || {
                let mut churned_threads = 0u64;
                while !stopped.load(Ordering::Relaxed) {
                    let t = std::thread::Builder::new().name("churned".into());
                    if let Ok(h) = t.spawn(churned) {
                        let _ = h.join();
                        churned_threads += 1;
                    }
                }
                churned_threads
            })
            .expect("start the churner");
        let mut hangs = 0;
        for _ in 0..n {
            // SAFETY: the child runs only `child`, which leaves with `_exit`.
            let pid = unsafe { fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                child();
            }
            hangs += u32::from(hung(pid));
        }
        stop.store(true, Ordering::Relaxed);
        let churned_threads = churner.join().expect("churner");
        println!("forks {n}: hangs {hangs}; threads churned {churned_threads}");
    }
}

fn main() {
    #[cfg(unix)]
    run::main();
}
