//! A thread's perf event for program-counter samples: a software
//! task-clock event (CPU time of the thread, the kernel's part included
//! where the system allows), its
//! overflows at the period asked delivered as `SIGURG` to the thread
//! (`fcntl` `F_SETSIG` and `F_SETOWN_EX`), no ring buffer. What `perf
//! record -e task-clock` samples with, read from the signal's context.

use super::table::Source;
use super::SIGNAL;
use core::sync::atomic::{AtomicBool, Ordering};

/// `perf_event_attr` up to `config2` (`PERF_ATTR_SIZE_VER1`, 72 bytes);
/// the kernel takes the size given and zeroes the rest.
#[repr(C)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
}

/// `PERF_TYPE_SOFTWARE`.
const TYPE_SOFTWARE: u32 = 1;
/// `PERF_COUNT_SW_TASK_CLOCK`.
const SW_TASK_CLOCK: u64 = 1;
/// `exclude_kernel` and `exclude_hv` (bits 5 and 6 of the flags): what an
/// unprivileged process may ask at `perf_event_paranoid` 2.
const EXCLUDE_KERNEL_HV: u64 = 1 << 5 | 1 << 6;
/// `exclude_hv` alone: the thread's time in the kernel sampled too, where
/// the system allows it (`perf_event_paranoid` 1 or below, or
/// `CAP_PERFMON`).
const EXCLUDE_HV: u64 = 1 << 6;
/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `F_SETSIG`, `F_SETOWN_EX`, `F_OWNER_TID` (asm-generic/fcntl.h).
const F_SETSIG: libc::c_int = 10;
const F_SETOWN_EX: libc::c_int = 15;
const F_OWNER_TID: libc::c_int = 0;

/// `struct f_owner_ex`.
#[repr(C)]
struct Owner {
    kind: libc::c_int,
    pid: libc::pid_t,
}

/// Opens thread `tid`'s event, signalling it every `ns` of its CPU time —
/// in the kernel too if asked ([`ask_kernel`]) and the system allows it,
/// else in user mode only; `None` when the system refuses.
///
/// A sample taken in the kernel (a page fault, a system call made for the
/// program) is delivered when the thread returns to user mode, and its
/// signal's context holds the user-mode address that entered the kernel:
/// the time is counted where perf's call chains put it, on the program's
/// function that faulted or called (hashbrown's `resize_inner` clearing
/// fresh pages: 25% of perf's samples, 9% of tickprof's in user mode
/// only). The POSIX timer fallback counts both already (its clock is the
/// thread's CPU time).
pub(super) fn open(tid: libc::pid_t, ns: u64) -> Option<Source> {
    if KERNEL.load(Ordering::Relaxed) {
        if let Some(source) = open_with(tid, ns, EXCLUDE_HV) {
            return Some(source);
        }
    }
    let source = open_with(tid, ns, EXCLUDE_KERNEL_HV);
    if source.is_some() {
        // The kernel's time refused (or not asked), user mode allowed:
        // later threads ask for user mode at once.
        KERNEL.store(false, Ordering::Relaxed);
    }
    source
}

/// Whether the next event asks for the kernel's time too: set at start-up
/// from `TICKPROF_PC_KERNEL` ([`ask_kernel`]), cleared once the system
/// refused it and allowed user mode (each later thread then makes one
/// `perf_event_open`).
static KERNEL: AtomicBool = AtomicBool::new(true);

/// Sets whether the events ask for the kernel's time too
/// (`TICKPROF_PC_KERNEL`).
pub(super) fn ask_kernel(kernel: bool) {
    KERNEL.store(kernel, Ordering::Relaxed);
}

/// [`open`] with the `exclude_*` `flags` given.
fn open_with(tid: libc::pid_t, ns: u64, flags: u64) -> Option<Source> {
    let attr = Attr {
        kind: TYPE_SOFTWARE,
        size: core::mem::size_of::<Attr>() as u32,
        config: SW_TASK_CLOCK,
        sample_period: ns,
        sample_type: 0,
        read_format: 0,
        flags,
        wakeup_events: 0,
        bp_type: 0,
        config1: 0,
        config2: 0,
    };
    // SAFETY: a valid attribute of the size it gives; pid 0 (this thread),
    // any CPU, no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    let fd = fd as libc::c_int;
    let owner = Owner {
        kind: F_OWNER_TID,
        pid: tid,
    };
    // SAFETY: `fcntl`s on the descriptor just opened, with valid arguments:
    // the signal, the owner thread (a valid `f_owner_ex`), then
    // asynchronous notification on (its overflows become signals).
    let ok = unsafe {
        libc::fcntl(fd, F_SETSIG, SIGNAL) == 0
            && libc::fcntl(fd, F_SETOWN_EX, &owner as *const Owner) == 0
            && libc::fcntl(fd, libc::F_SETFL, libc::O_ASYNC) == 0
    };
    if !ok {
        // SAFETY: the descriptor just opened, closed once.
        unsafe { libc::close(fd) };
        return None;
    }
    Some(Source::Perf(fd))
}
