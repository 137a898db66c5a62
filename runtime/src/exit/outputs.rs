//! Where the report files go: the `TICKPROF_OUT` paths (and the default
//! trace file), their `%p`/`%e` expansion byte for byte, the start-up check
//! and the warnings for files not written.

use super::write_stderr;
use crate::config::Config;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where `TICKPROF_TRACE=1` writes the trace when no `.trace.json` output
/// is named.
pub(super) const DEFAULT_TRACE_FILE: &str = "tickprof.trace.json";

/// The files a report goes to: every `TICKPROF_OUT` path, and the default
/// trace file when `TICKPROF_TRACE=1` names none.
pub(super) fn templates(config: &Config) -> Vec<PathBuf> {
    let mut outputs = config.outputs.clone();
    if config.trace
        && !outputs
            .iter()
            .any(|p| p.to_string_lossy().ends_with(".trace.json"))
    {
        outputs.push(PathBuf::from(DEFAULT_TRACE_FILE));
    }
    outputs
}

/// The paths warned about at start-up, with the kind of error each gave.
static FAILED_AT_START: OnceLock<Vec<(PathBuf, io::ErrorKind)>> = OnceLock::new();

/// At start-up, what can be checked of the output files: each one's
/// directory exists and takes a new file, and nothing but a regular file
/// or a symlink is at the path. One warning per failing path. The file is
/// still tried at exit (the directory may have appeared by then); a failure
/// there with the same kind of error is not repeated.
pub(super) fn check(config: &Config) {
    let mut failed = Vec::new();
    for template in &templates(config) {
        let path = expand_path(template);
        if let Err(e) = crate::export::file::check_writable(&path) {
            write_stderr(&format!(
                "tickprof: warning: cannot write TICKPROF_OUT file {}: {e}; tried again at exit\n",
                shown(&path)
            ));
            failed.push((path, e.kind()));
        }
    }
    let _ = FAILED_AT_START.set(failed);
}

/// The warning for an output file not written, unless the start-up check
/// gave it already.
pub(super) fn warn_unwritten(path: &Path, e: &io::Error) {
    let said = FAILED_AT_START
        .get()
        .is_some_and(|f| f.iter().any(|(p, k)| p == path && *k == e.kind()));
    if !said {
        write_stderr(&format!(
            "tickprof: warning: cannot write TICKPROF_OUT file {}: {e}\n",
            shown(path)
        ));
    }
}

/// A path as a warning line quotes it (100 bytes at most).
pub(crate) fn shown(path: &Path) -> String {
    crate::config::quoted(&path.to_string_lossy())
}

/// An output path with `%p` replaced by the process id, `%e` by the
/// executable's file name and `%%` by `%`, so that several processes (the
/// test binaries of one `cargo test`, say) do not overwrite one file. Byte
/// for byte: a path that is not UTF-8 stays as it is. A relative path is
/// relative to the working directory at start-up (the first call, from
/// the start-up check), so a program that changes its directory (a daemon
/// going to `/`) still writes where it was started, where the check
/// looked.
pub(crate) fn expand_path(template: &Path) -> PathBuf {
    let bytes = os_bytes(template.as_os_str());
    let path = if bytes.contains(&b'%') {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| os_bytes(n).into_owned()))
            .unwrap_or_else(|| b"unknown".to_vec());
        os_from_bytes(expand_with(&bytes, crate::process::program_pid(), &exe))
    } else {
        template.to_owned()
    };
    match start_dir() {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path,
    }
}

/// The working directory when first asked (at start-up); `None` if it
/// could not be read (then paths stay relative).
fn start_dir() -> Option<&'static Path> {
    static START_DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    START_DIR
        .get_or_init(|| std::env::current_dir().ok())
        .as_deref()
}

/// The bytes of `s` (on other platforms than Unix, its text).
fn os_bytes(s: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        std::os::unix::ffi::OsStrExt::as_bytes(s).into()
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy().into_owned().into_bytes().into()
    }
}

/// The path of bytes made by [`os_bytes`].
fn os_from_bytes(b: Vec<u8>) -> PathBuf {
    #[cfg(unix)]
    {
        <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(b).into()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(&b).into_owned().into()
    }
}

fn expand_with(template: &[u8], pid: u32, exe: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(template.len() + 16);
    let mut bytes = template.iter().copied();
    while let Some(c) = bytes.next() {
        if c != b'%' {
            out.push(c);
            continue;
        }
        match bytes.next() {
            Some(b'p') => out.extend_from_slice(pid.to_string().as_bytes()),
            Some(b'e') => out.extend_from_slice(exe),
            Some(b'%') => out.push(b'%'),
            Some(other) => {
                out.push(b'%');
                out.push(other);
            }
            None => out.push(b'%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::expand_with;

    #[test]
    fn output_paths_expand_pid_and_executable() {
        assert_eq!(
            expand_with(b"out/%e-%p.json", 42, b"app"),
            b"out/app-42.json"
        );
        assert_eq!(expand_with(b"100%%.csv", 1, b"a"), b"100%.csv");
        assert_eq!(expand_with(b"a%xb%", 1, b"a"), b"a%xb%");
        assert_eq!(expand_with(b"plain.txt", 1, b"a"), b"plain.txt");
        assert_eq!(expand_with(b"r\xff-%p.json", 7, b"\xfe"), b"r\xff-7.json");
        assert_eq!(expand_with(b"%e.json", 7, b"\xfe"), b"\xfe.json");
    }
}
