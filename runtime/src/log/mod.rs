//! The trace log: every marked entry and exit as an indented, per-thread
//! log in uftrace's shape, live (`TICKPROF_LOG=stderr|path`, a built-in
//! [`Hook`](crate::Hook)) or offline from a recorded `.trace.json`
//! ([`replay_trace_json`]).
//!
//! ```text
//! [1] app::main() {
//! [1]   app::parse();  1.20 µs
//! [1]   app::eval() {
//! [1]     app::lookup();  310 ns
//! [1]   } 3.40 µs /* app::eval */
//! [1] } 5.10 µs /* app::main */
//! ```
//!
//! Each line starts with tickprof's thread number in brackets (the `id` of
//! the report's per-thread rows and the `tid` of the `.trace.json`), and a
//! `# thread N: name` line introduces each thread. A call with no shown
//! child is one line; an exit by unwinding ends in `unwound`; an exit out of
//! order (a moved or leaked guard) ends in `out of order`.
//!
//! - `render`: the per-thread state machine both use;
//! - `replay`: the `.trace.json` reader;
//! - `live`: the hook, its per-thread buffers and the sink.

#[cfg(feature = "enabled")]
pub(crate) mod live;
mod render;
mod replay;

pub use replay::replay_trace_json;

pub use crate::config::LogOptions;

impl LogOptions {
    /// Whether thread `tid` is shown.
    pub(crate) fn shows_thread(&self, tid: u64) -> bool {
        self.tids.is_empty() || self.tids.contains(&tid)
    }

    /// How a site named `name` is matched by the filters.
    pub(crate) fn matches(&self, name: &str) -> Match {
        Match {
            filter: self.filter.iter().any(|g| glob_matches(g, name)),
            notrace: self.notrace.iter().any(|g| glob_matches(g, name)),
        }
    }
}

/// A site's matches against the filters, cached per site by the live log.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Match {
    pub filter: bool,
    pub notrace: bool,
}

/// Whether glob `pattern` matches `name`, or (a pattern without `::`) its
/// last path segment, so `parse*` matches `app::parser::parse_line`.
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    if glob(pattern.as_bytes(), name.as_bytes()) {
        return true;
    }
    if pattern.contains("::") {
        return false;
    }
    let last = name.rsplit("::").next().unwrap_or(name);
    glob(pattern.as_bytes(), last.as_bytes())
}

/// Iterative glob match with one backtrack point (linear in practice).
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_matches("app::*", "app::parse"));
        assert!(glob_matches("parse*", "app::parser::parse_line"));
        assert!(glob_matches("*line", "app::parse_line"));
        assert!(glob_matches("p?rse", "app::parse"));
        assert!(!glob_matches("app::p", "app::parse"));
        assert!(!glob_matches("other::*", "app::parse"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("a*b*c", "axxbyyc"));
        assert!(!glob_matches("a*b*c", "axxbyy"));
    }
}
