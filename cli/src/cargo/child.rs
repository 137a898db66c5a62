//! Runs cargo on the copy and passes its exit status on.
//!
//! While cargo runs, SIGINT, SIGTERM and SIGHUP do not end this process.
//! With a terminal on stdin, cargo stays in this process group (the
//! program can read the terminal; a signal typed there reaches cargo and
//! the program directly) and a signal sent to this process alone (`kill`)
//! is forwarded to cargo. Otherwise cargo gets its own process group and
//! every such signal is forwarded to that group (test binaries included). This process then exits with the
//! child's status, `128 + signal` for a child ended by a signal.

use std::process::{Command, ExitStatus};

/// Runs `cmd` to completion and returns the exit code to leave with.
///
/// # Errors
///
/// Cargo could not be started.
pub(crate) fn run(cmd: &mut Command) -> Result<u8, String> {
    imp::run(cmd).map(|(status, _)| code(status))
}

/// Runs `cmd` to completion as [`run`] does, its stdout read (stderr
/// left as it is): the exit code to leave with, and what it printed.
///
/// # Errors
///
/// Cargo could not be started.
pub(crate) fn capture(cmd: &mut Command) -> Result<(u8, Vec<u8>), String> {
    cmd.stdout(std::process::Stdio::piped());
    imp::run(cmd).map(|(status, out)| (code(status), out))
}

/// Reads what `child` prints on its stdout, if it was piped.
fn stdout_of(child: &mut std::process::Child) -> Vec<u8> {
    use std::io::Read as _;
    let mut out = Vec::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_end(&mut out);
    }
    out
}

/// The exit code that reproduces `status`.
fn code(status: ExitStatus) -> u8 {
    if let Some(c) = status.code() {
        return u8::try_from(c & 0xff).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return u8::try_from(128 + (sig & 0x7f)).unwrap_or(1);
        }
    }
    1
}

#[cfg(unix)]
mod imp {
    use std::io::IsTerminal;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, ExitStatus};
    use std::sync::atomic::{AtomicI32, Ordering};

    /// Where forwarded signals go: the child's pid, negated for its
    /// process group; 0 when there is no child.
    static TARGET: AtomicI32 = AtomicI32::new(0);

    extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO
        // handler; it is only read.
        let code = unsafe { info.as_ref() }.map_or(0, |i| i.si_code);
        let target = TARGET.load(Ordering::SeqCst);
        // A child in its own group gets every signal. One in ours gets
        // only those sent by a process (si_code <= 0: kill, sigqueue,
        // tkill): one from the terminal (SI_KERNEL) already reached it.
        if target < 0 || (target > 0 && code <= 0) {
            // SAFETY: kill is async-signal-safe and takes plain integers.
            unsafe { libc::kill(target, sig) };
        }
    }

    fn install() {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: a zeroed sigaction is a valid "no flags, empty mask"
            // value; the handler has the SA_SIGINFO signature and only
            // calls async-signal-safe functions and atomics.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = forward as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    }

    pub(super) fn run(cmd: &mut Command) -> Result<(ExitStatus, Vec<u8>), String> {
        // Not reading from a terminal: the child gets its own process
        // group, so a forwarded signal reaches cargo's children too (a
        // test binary). From a terminal the child stays in the foreground
        // group, where it can read the terminal and gets typed signals.
        let group = !std::io::stdin().is_terminal();
        if group {
            cmd.process_group(0);
        }
        install();
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
        let pid = i32::try_from(child.id()).unwrap_or(0);
        TARGET.store(if group { -pid } else { pid }, Ordering::SeqCst);
        let out = super::stdout_of(&mut child);
        let status = child.wait().map_err(|e| format!("waiting for cargo: {e}"));
        TARGET.store(0, Ordering::SeqCst);
        Ok((status?, out))
    }
}

#[cfg(not(unix))]
mod imp {
    use std::process::{Command, ExitStatus};

    pub(super) fn run(cmd: &mut Command) -> Result<(ExitStatus, Vec<u8>), String> {
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
        let out = super::stdout_of(&mut child);
        let status = child
            .wait()
            .map_err(|e| format!("waiting for cargo: {e}"))?;
        Ok((status, out))
    }
}
