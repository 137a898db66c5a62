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
#[path = "../tests/support/forking.rs"]
mod forking;

#[cfg(unix)]
mod run {
    use super::forking::{self, fork, kill_child, start_churn, wait_for};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

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
        unsafe { forking::_exit(if ok { 0 } else { 2 }) }
    }

    /// Forks `n` children while another thread starts and joins threads.
    pub fn main() {
        let n: u32 = std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(400);
        let stop = Arc::new(AtomicBool::new(false));
        let churner = start_churn(Arc::clone(&stop), churned);
        let mut hangs = 0;
        for _ in 0..n {
            // SAFETY: the child runs only `child`, which leaves with `_exit`.
            let pid = unsafe { fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                child();
            }
            if wait_for(pid, Duration::from_secs(3)).is_none() {
                kill_child(pid);
                hangs += 1;
            }
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
