//! The `inlined` feature's program-counter samples against what a program
//! does with signals (Linux): each check runs a marked function that
//! spends CPU time, so that ticks arrive, and fails (exit 1, a line
//! saying which) when the program sees them.
//!
//! ```text
//! cargo run --release --example pc_samples --features inlined
//! ```
//!
//! 1. `EINTR`: rounds of 0.5 ms of CPU then `poll` with a timeout, a
//!    `nanosleep` and `poll` on an empty pipe (calls a handler interrupts
//!    even with `SA_RESTART`): with `TICKPROF_PC_KERNEL=off` (samples in
//!    user mode only) at most 1% of them may return `EINTR`; by default
//!    (the kernel's time sampled too, where the system allows: a sample
//!    can land in such a call's own work) at most 5%.
//! 2. A thread that blocks the signal: its calls counted, nothing else.
//! 3. `fork`: the child records, takes samples of its own, exits 0.
//! 4. The program's own handler, set after start-up (a child process):
//!    tickprof stops its ticks within its next check (128 sampler
//!    periods); afterwards the handler is never called.
//!
//! Prints one line per check with its figures.

#[cfg(target_os = "linux")]
mod run {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    /// Burns `d` of CPU time in a marked function.
    #[tickprof::profile]
    pub fn spin(d: Duration) -> u64 {
        let t = Instant::now();
        let mut x = 1u64;
        while t.elapsed() < d {
            for _ in 0..64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        x
    }

    fn interrupted(r: libc::c_int) -> bool {
        r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    }

    /// The samples taken in `spin` so far.
    fn samples() -> u64 {
        let r = tickprof::report();
        r.find("::spin").map_or(0, |s| s.pc_samples)
    }

    pub fn eintr(rounds: u32) -> Result<String, String> {
        let mut calls = 0u32;
        let mut eintr = 0u32;
        let mut fds = [0; 2];
        // SAFETY: a valid array of two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        for _ in 0..rounds {
            spin(Duration::from_micros(500));
            // SAFETY: no descriptors, a 1 ms timeout.
            eintr += u32::from(interrupted(unsafe {
                libc::poll(core::ptr::null_mut(), 0, 1)
            }));
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 300_000,
            };
            // SAFETY: a valid request, no remainder wanted.
            eintr += u32::from(interrupted(unsafe {
                libc::nanosleep(&ts, core::ptr::null_mut())
            }));
            let mut pfd = libc::pollfd {
                fd: fds[0],
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, a 1 ms timeout.
            eintr += u32::from(interrupted(unsafe { libc::poll(&mut pfd, 1, 1) }));
            calls += 3;
        }
        let taken = samples();
        let line = format!("EINTR: {eintr} of {calls} calls; {taken} samples taken");
        if taken == 0 {
            return Err(format!("{line}: no samples (the check proves nothing)"));
        }
        let user_only = std::env::var("TICKPROF_PC_KERNEL").is_ok_and(|v| v == "off");
        if eintr * 100 > calls * if user_only { 1 } else { 5 } {
            return Err(line);
        }
        Ok(line)
    }

    pub fn blocked() -> Result<String, String> {
        let h = std::thread::spawn(|| {
            // SAFETY: a set holding only the samples' signal, blocked for
            // this thread.
            unsafe {
                let mut set: libc::sigset_t = core::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGURG);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, core::ptr::null_mut());
            }
            for _ in 0..20 {
                spin(Duration::from_millis(2));
            }
        });
        h.join()
            .map_err(|_| "the thread with the signal blocked panicked".to_owned())?;
        let calls = tickprof::report().find("::spin").map_or(0, |s| s.calls);
        Ok(format!(
            "a thread with the signal blocked: {calls} calls in all, exit normal"
        ))
    }

    pub fn fork() -> Result<String, String> {
        // SAFETY: the child only runs marked code and exits with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let before = samples();
            spin(Duration::from_millis(200));
            let after = samples();
            // SAFETY: ends the child without the parent's exit handlers.
            unsafe { libc::_exit(if after > before { 0 } else { 3 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
            (true, 0) => Ok("fork: the child took samples of its own, exit 0".into()),
            (true, 3) => Err("fork: the child took no samples".into()),
            _ => Err(format!("fork: the child ended with status {status:#x}")),
        }
    }

    static HANDLED: AtomicU64 = AtomicU64::new(0);

    extern "C" fn own(_: libc::c_int) {
        HANDLED.fetch_add(1, Ordering::Relaxed);
    }

    /// In a child process of its own: sets a handler for the signal after
    /// start-up, spins, and counts what the handler got.
    pub fn takeover() -> Result<String, String> {
        spin(Duration::from_millis(20));
        // SAFETY: a plain handler for SIGURG, as a program using
        // out-of-band data would set.
        unsafe { libc::signal(libc::SIGURG, own as *const () as libc::sighandler_t) };
        // Well past tickprof's check (128 periods of 1 ms).
        spin(Duration::from_millis(600));
        let first = HANDLED.load(Ordering::Relaxed);
        spin(Duration::from_millis(300));
        let later = HANDLED.load(Ordering::Relaxed) - first;
        let line = format!(
            "the program's own handler: {first} ticks before tickprof stopped, {later} after"
        );
        if later > 0 {
            return Err(line);
        }
        Ok(line)
    }
}

#[cfg(target_os = "linux")]
fn main() {
    if std::env::args().nth(1).as_deref() == Some("takeover") {
        match run::takeover() {
            Ok(l) => println!("{l}"),
            Err(l) => {
                println!("FAIL: {l}");
                std::process::exit(1);
            }
        }
        return;
    }
    let mut failed = false;
    let mut check = |r: Result<String, String>| match r {
        Ok(l) => println!("pc_samples: {l}"),
        Err(l) => {
            println!("pc_samples: FAIL: {l}");
            failed = true;
        }
    };
    check(run::eintr(400));
    check(run::blocked());
    check(run::fork());
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("takeover")
        .env("TICKPROF_STDERR", "off")
        .output()
        .map_err(|e| e.to_string());
    check(out.and_then(|o| {
        let line = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        if o.status.success() {
            Ok(line)
        } else {
            Err(format!("{line} ({})", o.status))
        }
    }));
    if failed {
        std::process::exit(1);
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("pc_samples: Linux only");
}
