//! One `cargo tickprof` at a time per target directory.
//!
//! The copy (`<target-dir>/tickprof/ws`), the probe build and the marked
//! build's directory are rewritten by every run, and the program or the
//! tests then run from the copy (a test reads its data files beside
//! `CARGO_MANIFEST_DIR`, which is the copy's). Two runs sharing a target
//! directory — two terminals, or two workspaces with one
//! `CARGO_TARGET_DIR` — would rewrite each other's copy under a running
//! build. So a run holds an exclusive lock on `<target-dir>/tickprof/lock`
//! from before its first write until it exits; a second run says it waits
//! and waits, as cargo does for its build directory. The lock is the
//! kernel's (`flock`): it goes with the process, so a run killed leaves
//! none behind, and the file descriptor is not inherited by cargo or the
//! program (close-on-exec). Not taken on other systems than Unix, nor on
//! a file system that has no locks (some network ones: as cargo does).

use std::path::Path;

/// The lock, held while this value lives.
pub(crate) struct Held {
    #[cfg(unix)]
    _file: std::fs::File,
}

/// Takes the lock of `dir` (created if needed), waiting for another run
/// that holds it; says so on stderr when it has to wait.
///
/// # Errors
///
/// The directory or its lock file cannot be created, or the lock taken.
pub(crate) fn hold(dir: &Path) -> Result<Held, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    imp::hold(dir)
}

#[cfg(unix)]
mod imp {
    use super::Held;
    use std::os::fd::AsRawFd;
    use std::path::Path;

    /// `flock(fd, op)`, retried when a signal interrupts it.
    fn flock(file: &std::fs::File, op: libc::c_int) -> std::io::Result<()> {
        loop {
            // SAFETY: the descriptor is open for as long as `file` lives;
            // flock takes plain integers.
            if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// The file system does not lock (`flock` says so, not "busy").
    fn unsupported(e: &std::io::Error) -> bool {
        let code = e.raw_os_error();
        [libc::ENOTSUP, libc::EOPNOTSUPP, libc::ENOLCK, libc::ENOSYS]
            .iter()
            .any(|c| code == Some(*c))
    }

    pub(super) fn hold(dir: &Path) -> Result<Held, String> {
        let path = dir.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open the lock {}: {e}", path.display()))?;
        let err = |e: std::io::Error| format!("cannot lock {}: {e}", path.display());
        match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => {}
            // A file system without locks (some network ones): go on
            // unlocked, as cargo does for its own locks.
            Err(e) if unsupported(&e) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                eprintln!(
                    "cargo tickprof: waiting for another cargo tickprof using {} to end \
                     (give each its own --target-dir to run both at once)",
                    dir.display()
                );
                flock(&file, libc::LOCK_EX).map_err(err)?;
            }
            Err(e) => return Err(err(e)),
        }
        Ok(Held { _file: file })
    }
}

#[cfg(not(unix))]
mod imp {
    use super::Held;
    use std::path::Path;

    pub(super) fn hold(_: &Path) -> Result<Held, String> {
        Ok(Held {})
    }
}
