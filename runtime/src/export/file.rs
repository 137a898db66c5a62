//! Every file tickprof writes, written one way: replaced atomically through
//! a temporary file that nobody else can have prepared.
//!
//! The guarantees (also in `docs/formats.md`):
//!
//! - The temporary file is created beside the target with `O_CREAT|O_EXCL`
//!   (and `O_NOFOLLOW` with the `enabled` feature) under an unpredictable
//!   name, `.tickprof-PID-RANDOM.tmp` (64 random bits from the standard
//!   library's per-process random hasher keys), retried under a new name
//!   if one exists. A symlink, FIFO or any other file planted at that name
//!   is never opened: the creation fails and the next name is tried.
//! - The target is replaced by `rename`, so a reader sees the old file or
//!   the whole new one. A symlink *at the target* is replaced by the new
//!   file (the file it pointed to is left alone), as `sed -i` does; a
//!   target that exists and is neither a regular file nor a symlink (a
//!   FIFO, a device, a socket, a directory), or a symlink to one of those
//!   (`/dev/stdout`, `/dev/null`), is refused, and nothing is written.
//! - An existing regular target keeps its permission bits (`0o777`; a 0600
//!   report stays 0600, and the temporary file never has more than them),
//!   and its owner and group where the process may set them (as root; a
//!   failure is ignored). A new file gets `0o666` less the umask, as
//!   `File::create` gives.
//! - The temporary name is short (at most 40 bytes), so any target name up
//!   to the file system's `NAME_MAX` can be written.
//! - On any error the temporary file is removed.

use std::fs::{File, Metadata};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Names tried for the temporary file before giving up.
const TEMP_TRIES: u32 = 16;

/// Replaces `path` with what `write` writes, atomically.
///
/// # Errors
/// A target that is not a regular file or a symlink (`InvalidInput`); any
/// error creating, writing or renaming the temporary file, which is then
/// removed.
pub(crate) fn replace_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let existing = existing_target(path)?;
    let (tmp, file) = create_temp(path, existing.as_ref())?;
    let written = (|| {
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        out.flush()?;
        drop(out.into_inner().map_err(io::IntoInnerError::into_error)?);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Replaces `path` with `bytes`, atomically and safely, as
/// [`write_to_path`](super::write_to_path) replaces its file (`tickprof show
/// --html` writes through it).
///
/// # Errors
/// A target that is not a regular file or a symlink (`InvalidInput`); any
/// error creating, writing or renaming the temporary file, which is then
/// removed.
pub fn replace_with_bytes(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    replace_with(path.as_ref(), |out| out.write_all(bytes))
}

/// Replaces `path` with a new, empty file at once and returns it open for
/// writing (the trace log, written as the program runs): the same checks,
/// temporary file and mode as [`replace_with`], renamed before the first
/// write.
///
/// # Errors
/// As [`replace_with`].
// Used by the recorder's exit path (`enabled`) and the unit tests.
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
pub(crate) fn create_replacing(path: &Path) -> io::Result<File> {
    let existing = existing_target(path)?;
    let (tmp, file) = create_temp(path, existing.as_ref())?;
    match std::fs::rename(&tmp, path) {
        Ok(()) => Ok(file),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Checks now what [`replace_with`] would meet later: a target that is not
/// a regular file, a directory that is missing or where no file can be
/// created (a temporary file is created there and removed at once).
///
/// # Errors
/// The error [`replace_with`] would give.
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
pub(crate) fn check_writable(path: &Path) -> io::Result<()> {
    let existing = existing_target(path)?;
    let (tmp, file) = create_temp(path, existing.as_ref())?;
    drop(file);
    std::fs::remove_file(tmp)
}

/// The target's metadata if it exists as a regular file; `None` if it does
/// not exist or is a symlink to a regular file or to nothing (which the
/// rename replaces); an error for anything else, a symlink to something
/// else included (the link is only examined, never opened).
fn existing_target(path: &Path) -> io::Result<Option<Metadata>> {
    if path.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file name",
        ));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(Some(m)),
        // A symlink to a device, FIFO or directory (`/dev/stdout`,
        // `/dev/null`): refused like the file it names, so that the
        // rename never replaces such a link (as root, in `/dev`).
        Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(path) {
            Ok(t) if !t.file_type().is_file() => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a symlink to {}, not to a regular file; not replaced",
                    kind_of(&t)
                ),
            )),
            _ => Ok(None),
        },
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({}); not replaced", kind_of(&m)),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What a file that is not a regular file is, for the error.
fn kind_of(m: &Metadata) -> &'static str {
    let t = m.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Creates a new temporary file beside `target` under an unpredictable
/// name, with the existing target's mode and owner if there is one.
fn create_temp(target: &Path, existing: Option<&Metadata>) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..TEMP_TRIES {
        let tmp = target.with_file_name(temp_name());
        match open_exclusive(&tmp, existing) {
            Ok(file) => {
                if let Err(e) = keep_owner_and_mode(&file, existing) {
                    drop(file);
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
                return Ok((tmp, file));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// `.tickprof-PID-RANDOM.tmp`: 64 bits no other user can predict.
fn temp_name() -> String {
    format!(
        ".tickprof-{}-{:016x}.tmp",
        crate::report::process_id(),
        random()
    )
}

/// 64 unpredictable bits: the standard library's `RandomState` (SipHash
/// keyed from the OS's random source once per thread, the key changed for
/// every instance) over the time and a counter.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// Creates `path`, which must not exist: `O_CREAT|O_EXCL` (a symlink at
/// `path`, even a dangling one, makes it fail with `EEXIST`), `O_NOFOLLOW`
/// where available, and at most the existing target's permissions.
pub(crate) fn open_exclusive(path: &Path, existing: Option<&Metadata>) -> io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        if let Some(m) = existing {
            opts.mode(m.mode() & 0o777);
        }
        #[cfg(feature = "enabled")]
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    let _ = existing;
    opts.open(path)
}

/// Gives `file` the existing target's owner and group (where permitted:
/// errors ignored) and exactly its permission bits (which the umask may
/// have narrowed at creation).
fn keep_owner_and_mode(file: &File, existing: Option<&Metadata>) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(m) = existing {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let mine = file.metadata()?;
        let differs = mine.uid() != m.uid() || mine.gid() != m.gid();
        // Owner and group where permitted (root), else the group alone.
        if differs && std::os::unix::fs::fchown(file, Some(m.uid()), Some(m.gid())).is_err() {
            let _ = std::os::unix::fs::fchown(file, None, Some(m.gid()));
        }
        file.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o777))?;
    }
    #[cfg(not(unix))]
    let _ = (file, existing);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tickprof-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temporary_names_are_short_and_differ() {
        let a = temp_name();
        let b = temp_name();
        assert_ne!(a, b);
        assert!(a.len() <= 40, "{a}");
        assert!(a.starts_with(".tickprof-") && a.ends_with(".tmp"));
    }

    #[cfg(unix)]
    #[test]
    fn the_exclusive_open_never_follows_a_symlink_or_opens_a_fifo() {
        let d = dir("excl");
        let victim = d.join("victim");
        std::fs::write(&victim, "secret").unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_exclusive(&link, None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        assert!(open_exclusive(&dangling, None).is_err());
        assert!(!d.join("nowhere").exists());
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.map(|s| s.success()).unwrap_or(false) {
            // Would block forever if opened for writing.
            assert!(open_exclusive(&fifo, None).is_err());
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_rewrite_keeps_the_mode_and_a_symlink_target_is_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("mode");
        let path = d.join("r.txt");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        replace_with_bytes(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        let victim = d.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = d.join("l.txt");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        replace_with_bytes(&link, b"report").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "report");
        assert_eq!(names(&d), ["l.txt", "r.txt", "victim"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_directory_target_is_refused_and_nothing_stays() {
        let d = dir("refuse");
        std::fs::create_dir(d.join("sub.json")).unwrap();
        let e = replace_with_bytes(d.join("sub.json"), b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("a directory"), "{e}");
        let e = check_writable(&d.join("missing/a.json")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        check_writable(&d.join("a.json")).unwrap();
        assert_eq!(names(&d), ["sub.json"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    #[cfg(unix)]
    fn a_symlink_to_a_device_or_directory_is_refused_and_kept() {
        let d = dir("devlink");
        let sub = d.join("sub");
        std::fs::create_dir(&sub).unwrap();
        for (name, to, what) in [
            ("null.html", Path::new("/dev/null"), "a device"),
            ("dir.json", sub.as_path(), "a directory"),
        ] {
            let link = d.join(name);
            std::os::unix::fs::symlink(to, &link).unwrap();
            for e in [
                replace_with_bytes(&link, b"x").unwrap_err(),
                check_writable(&link).unwrap_err(),
                create_replacing(&link).unwrap_err(),
            ] {
                assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
                assert!(e.to_string().contains(what), "{e}");
            }
            assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        }
        // A dangling symlink is replaced, as one to a regular file is.
        let dangling = d.join("gone.json");
        std::os::unix::fs::symlink(d.join("nothing"), &dangling).unwrap();
        replace_with_bytes(&dangling, b"r").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().is_file());
        assert_eq!(names(&d), ["dir.json", "gone.json", "null.html", "sub"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_name_of_250_bytes_is_written() {
        let d = dir("long");
        let path = d.join(format!("{}.json", "n".repeat(245)));
        replace_with_bytes(&path, b"{}").unwrap();
        let mut f = create_replacing(&path).unwrap();
        f.write_all(b"log").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "log");
        assert_eq!(names(&d).len(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
