//! What the last update of a copy read, so the next one compares files by
//! their metadata before it reads them: a file whose size, modification
//! and change times and inode are those it had when it was last copied,
//! and whose copy is still the file written then, is neither read nor
//! parsed again (its notes, the summary line's counts, are said again
//! from the cache). The cache is one text file beside the copy; it is
//! thrown away whole when the plan that made it (the marked targets, the
//! globs, tickprof's source, this command's own binary) changes.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

const MAGIC: &str = "tickprof-copy-cache 1";

/// A file's identity as the file system keeps it: what `make` and cargo
/// compare (size, modification time), plus what no program can set back
/// (the change time) and the inode (a file replaced by a rename).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    size: u64,
    mtime: i128,
    ctime: i128,
    ino: u64,
}

impl Stamp {
    /// The stamp of `meta`; `None` where the platform gives no time.
    pub(crate) fn of(meta: &fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
            Some(Stamp {
                size: meta.size(),
                mtime: ns(meta.mtime(), meta.mtime_nsec()),
                ctime: ns(meta.ctime(), meta.ctime_nsec()),
                ino: meta.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
            Some(Stamp {
                size: meta.len(),
                mtime: i128::try_from(mtime.as_nanos()).ok()?,
                ctime: 0,
                ino: 0,
            })
        }
    }

    fn text(self) -> String {
        format!("{} {} {} {}", self.size, self.mtime, self.ctime, self.ino)
    }

    fn parse(words: &[&str]) -> Option<Stamp> {
        match words {
            [size, mtime, ctime, ino] => Some(Stamp {
                size: size.parse().ok()?,
                mtime: mtime.parse().ok()?,
                ctime: ctime.parse().ok()?,
                ino: ino.parse().ok()?,
            }),
            _ => None,
        }
    }
}

/// One file as the last update left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The original's stamp when it was read.
    pub(crate) original: Stamp,
    /// The copy's stamp once written (or found equal).
    pub(crate) copy: Stamp,
    /// What the transformation said about the file (the summary's notes).
    pub(crate) notes: Vec<String>,
}

/// The cache of one copy.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    path: Option<PathBuf>,
    key: String,
    old: HashMap<PathBuf, Entry>,
    new: HashMap<PathBuf, Entry>,
    /// Files changed this long before the update started, or less, are
    /// not kept: a change in the same clock tick as the read could keep
    /// its stamp (the "racy" case git knows).
    since: i128,
}

impl Cache {
    /// The cache kept at `path` for the plan `key`: empty when there is
    /// none, it does not parse, or it was made for another plan.
    pub(crate) fn load(path: &Path, key: &str) -> Cache {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        let mut cache = Cache {
            path: Some(path.to_path_buf()),
            key: key.to_string(),
            since: now - 2_000_000_000,
            ..Cache::default()
        };
        if let Ok(text) = fs::read_to_string(path) {
            cache.old = parse(&text, key).unwrap_or_default();
        }
        cache
    }

    /// The same cache, trusting every stamp however recent (tests).
    #[cfg(test)]
    pub(crate) fn trusting(mut self) -> Cache {
        self.since = i128::MAX;
        self
    }

    /// The entry of `rel` if the original still has the stamp `original`
    /// and the copy `copy`.
    pub(crate) fn hit(&self, rel: &Path, original: Stamp, copy: Option<Stamp>) -> Option<&Entry> {
        self.old
            .get(rel)
            .filter(|e| e.original == original && Some(e.copy) == copy)
    }

    /// Keeps `entry` for `rel` in the next cache (unless the original
    /// changed too recently to trust its stamp).
    pub(crate) fn keep(&mut self, rel: &Path, entry: Entry) {
        if entry.original.mtime < self.since && entry.original.ctime < self.since {
            self.new.insert(rel.to_path_buf(), entry);
        }
    }

    /// Writes the next cache (the entries kept by this update only). A
    /// cache that cannot be written only costs the next update its reads.
    pub(crate) fn save(&self) {
        let Some(path) = &self.path else {
            return;
        };
        let mut text = format!("{MAGIC} {}\n", self.key);
        let mut rows: Vec<_> = self.new.iter().filter_map(|(p, e)| row(p, e)).collect();
        rows.sort();
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        if fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            let _ = fs::write(path, text);
        }
    }
}

/// One line: the path, the two stamps, the notes (hex, `-` for none).
fn row(rel: &Path, e: &Entry) -> Option<String> {
    let notes: Vec<String> = e.notes.iter().map(|n| hex(n.as_bytes())).collect();
    let notes = if notes.is_empty() {
        "-".to_string()
    } else {
        notes.join(",")
    };
    Some(format!(
        "{} {} {} {notes}",
        hex(&path_bytes(rel)?),
        e.original.text(),
        e.copy.text()
    ))
}

fn parse(text: &str, key: &str) -> Option<HashMap<PathBuf, Entry>> {
    let mut lines = text.lines();
    if lines.next()? != format!("{MAGIC} {key}") {
        return None;
    }
    let mut out = HashMap::new();
    for line in lines {
        let w: Vec<&str> = line.split(' ').collect();
        let [path, o @ .., notes] = w.as_slice() else {
            return None;
        };
        if o.len() != 8 {
            return None;
        }
        let notes = if *notes == "-" {
            Vec::new()
        } else {
            notes
                .split(',')
                .map(|n| String::from_utf8(unhex(n)?).ok())
                .collect::<Option<_>>()?
        };
        let entry = Entry {
            original: Stamp::parse(&o[..4])?,
            copy: Stamp::parse(&o[4..])?,
            notes,
        };
        out.insert(path_from(unhex(path)?)?, entry);
    }
    Some(out)
}

/// A stable 64-bit digest (FNV-1a) of `text`, for cache keys.
pub(crate) fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    Some(p.as_os_str().as_bytes().to_vec())
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Option<Vec<u8>> {
    p.to_str().map(|s| s.as_bytes().to_vec())
}

#[cfg(unix)]
fn path_from(b: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(b)))
}

#[cfg(not(unix))]
fn path_from(b: Vec<u8>) -> Option<PathBuf> {
    String::from_utf8(b).ok().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::{digest, parse, row, Cache, Entry, Stamp};
    use std::path::Path;

    fn stamp(n: i128) -> Stamp {
        Stamp {
            size: 10,
            mtime: n,
            ctime: n + 1,
            ino: 7,
        }
    }

    #[test]
    fn rows_read_back_as_written() {
        let e = Entry {
            original: stamp(5),
            copy: stamp(9),
            notes: vec!["M 3 0 my crate".into(), "N not UTF-8, byte 6".into()],
        };
        let odd = Path::new("src/a b\tc,d.rs");
        let text = format!("tickprof-copy-cache 1 k\n{}\n", row(odd, &e).unwrap());
        let back = parse(&text, "k").unwrap();
        assert_eq!(back.get(odd), Some(&e));
        let none = Entry {
            notes: Vec::new(),
            ..e.clone()
        };
        let text = format!("tickprof-copy-cache 1 k\n{}\n", row(odd, &none).unwrap());
        assert_eq!(parse(&text, "k").unwrap().get(odd), Some(&none));
        // Another plan, or a damaged line: nothing of it is used.
        assert!(parse(&text, "other").is_none());
        assert!(parse("tickprof-copy-cache 1 k\nzz 1 2\n", "k").is_none());
    }

    #[test]
    fn hits_need_both_stamps_and_recent_changes_are_not_kept() {
        let mut c = Cache::default();
        let rel = Path::new("a.rs");
        let e = Entry {
            original: stamp(5),
            copy: stamp(9),
            notes: Vec::new(),
        };
        c.old.insert(rel.into(), e.clone());
        assert!(c.hit(rel, stamp(5), Some(stamp(9))).is_some());
        assert!(c.hit(rel, stamp(6), Some(stamp(9))).is_none());
        assert!(c.hit(rel, stamp(5), Some(stamp(8))).is_none());
        assert!(c.hit(rel, stamp(5), None).is_none());
        c.since = 100;
        c.keep(rel, e.clone());
        assert_eq!(c.new.len(), 1);
        c.keep(
            Path::new("b.rs"),
            Entry {
                original: stamp(99),
                ..e
            },
        );
        assert_eq!(c.new.len(), 1);
        assert_ne!(digest("a"), digest("b"));
    }
}
