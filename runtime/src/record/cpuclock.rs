//! The clocks the sampler reads of another thread: its CPU time (the
//! kernel's per-thread CPU clock: exact, also for a thread running on
//! another CPU at that moment, unlike `schedstat`'s first field, which
//! moves at scheduler ticks), its run-queue delay (`schedstat`), and the
//! monotonic clock. Linux only; elsewhere there is none.

/// No clock: the thread's CPU time is not known.
pub(super) const NONE: i64 = i64::MAX;

/// The calling thread's CPU clock ([`NONE`] where there is none):
/// `pthread_getcpuclockid`'s value, computed as the kernel's ABI defines
/// it (`MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`: the complemented
/// thread id shifted by 3, with the per-thread bit and the scheduler
/// clock), so that no libc version is needed for it. Async-signal-safe.
pub(super) fn own() -> i64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `gettid` has no arguments and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
        let id = ((!tid) << 3) | 4 | 2;
        // Checked once: a clock the kernel rejects is no clock.
        if read_ns(i64::from(id as i32)).is_some() {
            return i64::from(id as i32);
        }
    }
    NONE
}

/// The CPU time of the thread whose clock is `clock`, in nanoseconds;
/// `None` without a clock, or once the thread has ended.
pub(super) fn read_ns(clock: i64) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let id = libc::clockid_t::try_from(clock).ok()?;
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out pointer; an invalid clock is an error return.
        if unsafe { libc::clock_gettime(id, &mut t) } != 0 {
            return None;
        }
        return Some((t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64);
    }
    #[allow(unreachable_code)]
    {
        let _ = clock;
        None
    }
}

/// The calling thread's id (0 off Linux). Async-signal-safe.
pub(super) fn own_tid() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `gettid` has no arguments and cannot fail.
        return unsafe { libc::syscall(libc::SYS_gettid) } as u64;
    }
    #[allow(unreachable_code)]
    0
}

/// Opens the `schedstat` of this process's thread `tid` (async-signal-safe:
/// `open`, the path written on the stack); -1 when there is none.
pub(super) fn open_schedstat(tid: u64) -> i32 {
    #[cfg(target_os = "linux")]
    {
        let mut path = [0u8; 64];
        let mut n = 0;
        let mut put = |part: &[u8]| {
            path[n..n + part.len()].copy_from_slice(part);
            n += part.len();
        };
        put(b"/proc/self/task/");
        put(crate::digits::Decimal::new(tid).as_bytes());
        put(b"/schedstat\0");
        // SAFETY: a NUL-terminated path in `path`.
        let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
        return fd.max(-1);
    }
    #[allow(unreachable_code)]
    {
        let _ = tid;
        -1
    }
}

/// A thread's run-queue delay so far, in nanoseconds, from its open
/// `schedstat` (`cpu_ns delay_ns slices`); `None` when unreadable.
pub(super) fn delay_ns(fd: i32) -> Option<u64> {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 96];
        // SAFETY: `buf` is writable for its length; `fd` is open.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        let text = core::str::from_utf8(buf.get(..usize::try_from(n).ok()?)?).ok()?;
        text.split_ascii_whitespace().nth(1)?.parse().ok()
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        None
    }
}

/// The monotonic clock, in nanoseconds.
pub(super) fn mono_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out pointer.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) } == 0 {
            return (t.tv_sec as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(t.tv_nsec as u64);
        }
    }
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{own, read_ns, NONE};

    #[test]
    fn a_thread_reads_its_own_cpu_time_from_another() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(own()).unwrap();
            // Spin until told: CPU time grows.
            while stop_rx.try_recv().is_err() {
                std::hint::spin_loop();
            }
        });
        let clock = rx.recv().unwrap();
        assert_ne!(clock, NONE);
        let a = read_ns(clock).unwrap();
        let mut b = a;
        while b < a + 1_000_000 {
            b = read_ns(clock).unwrap();
        }
        stop_tx.send(()).unwrap();
        t.join().unwrap();
        // Its clock goes with it (once the kernel has released the thread,
        // which `join` does not wait for).
        let gone = std::time::Instant::now();
        while read_ns(clock).is_some() {
            assert!(
                gone.elapsed().as_secs() < 10,
                "the clock outlived its thread"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(read_ns(NONE), None);
    }
}
