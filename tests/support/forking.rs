//! Forking while another thread churns threads: the system calls, the
//! churner and the bounded wait for a child, shared by `tests/fork.rs` and
//! `examples/fork_hangs.rs`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

extern "C" {
    /// `fork(2)`.
    pub fn fork() -> i32;
    /// `_exit(2)`: leaves without running exit handlers.
    pub fn _exit(code: i32) -> !;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn kill(pid: i32, sig: i32) -> i32;
}

const WNOHANG: i32 = 1;
const SIGKILL: i32 = 9;

/// Starts a thread that starts and joins short threads named `churned`,
/// each running `work`, until `stop` is set; it returns how many it ran.
pub fn start_churn(stop: Arc<AtomicBool>, work: fn()) -> std::thread::JoinHandle<u64> {
    std::thread::Builder::new()
        .name("churner".into())
        .spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let t = std::thread::Builder::new().name("churned".into());
                if let Ok(h) = t.spawn(work) {
                    let _ = h.join();
                    n += 1;
                }
            }
            n
        })
        .expect("start the churner")
}

/// Waits up to `limit` for the child `pid`: its exit code (128 + signal
/// when killed by one), or `None` if it is still running (then call
/// [`kill_child`]).
pub fn wait_for(pid: i32, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: `pid` is our child; `status` is a valid out-pointer.
        if unsafe { waitpid(pid, &mut status, WNOHANG) } == pid {
            return Some(if status & 0x7f == 0 {
                (status >> 8) & 0xff
            } else {
                128 + (status & 0x7f)
            });
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Kills the child `pid` and reaps it.
pub fn kill_child(pid: i32) {
    let mut status = 0;
    // SAFETY: plain system calls on our own child.
    unsafe {
        kill(pid, SIGKILL);
        waitpid(pid, &mut status, 0);
    }
}
