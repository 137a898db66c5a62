//! Folded stacks (`.folded`): one line per calling-context path,
//! `outer;inner;leaf <self-ns>`, as read by inferno, speedscope and
//! `flamegraph.pl`.
//!
//! Each line is a path of the [stack tree](super::stacks) built from
//! [`Report::tree`], then a space and its self time in whole nanoseconds.
//! That tree follows one rule for deep and recursive paths: direct
//! recursion is collapsed into one frame labelled with its depth
//! (`main;fib [×200000]`), and paths are cut at
//! [`MAX_DEPTH`](stacks::MAX_DEPTH) frames with a `[… N frames]` frame holding all the time
//! below. Every path gets a line, also those with zero self time (readers
//! accept a count of 0 and draw nothing for it), so the file lists every
//! calling context that ran; paths that become equal after [`frame`] are
//! merged by adding their times.
//!
//! **Order**: lines come depth first, a path before the paths below it,
//! siblings sorted by name. They are not sorted bytewise as a whole:
//! inferno and `flamegraph.pl` sort their input themselves (unless told
//! `--no-sort`), speedscope takes any order.
//!
//! **Size**: at most one line per tree node (so at most
//! `TICKPROF_MAX_NODES` per thread), each of at most [`MAX_DEPTH`](stacks::MAX_DEPTH)` + 1`
//! frames. The file is written line by line ([`write`](fn@write)): memory is the
//! stack tree (proportional to the tree) and one path, whatever the depth.
//! The sum of the counts equals the sum of the tree nodes' self times.
//!
//! [`Report::tree`]: crate::report::Report::tree

use super::stacks;
pub use super::stacks::frame;
use crate::report::Report;
use std::io;

/// The folded lines as `(stack, self_ns)`, one per frame of
/// [`stacks::build`], in the order [`write`](fn@write) writes them.
///
/// This holds every line at once (bounded by the [rule](super::stacks):
/// at most one line per tree node, at most [`MAX_DEPTH`](stacks::MAX_DEPTH)` + 1` frames per
/// line); [`write`](fn@write) streams them instead.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// for (stack, ns) in tickprof_runtime::export::folded::stacks(&report) {
///     assert!(!stack.is_empty() && !stack.contains('\n'));
/// }
/// ```
pub fn stacks(report: &Report) -> Vec<(String, u64)> {
    let mut lines = Vec::new();
    let frames = stacks::build(report);
    let _ = stacks::walk::<()>(&frames, |path, f| {
        lines.push((path.to_owned(), f.self_ns));
        Ok(())
    });
    lines
}

/// Writes the folded-stack text to `out`, one `stack self_ns` line at a
/// time: memory is the [stack tree](super::stacks) and one path.
///
/// # Errors
/// The first error of `out`.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let mut out = Vec::new();
/// tickprof_runtime::export::folded::write(&report, &mut out).unwrap();
/// assert_eq!(out, tickprof_runtime::export::folded::render(&report).into_bytes());
/// ```
pub fn write(report: &Report, out: &mut impl io::Write) -> io::Result<()> {
    let frames = stacks::build(report);
    stacks::walk(&frames, |path, f| writeln!(out, "{path} {}", f.self_ns))
}

/// The folded-stack text: one `stack self_ns` line per path, `\n`-ended.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let text = tickprof_runtime::export::folded::render(&report);
/// assert!(text.lines().all(|l| l.rsplit_once(' ').is_some()));
/// ```
pub fn render(report: &Report) -> String {
    let mut out = Vec::new();
    let _ = write(report, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// The report's tree with each node's self bytes allocated in place of its
/// self time, and the root's (allocations outside marked calls) as a
/// first-level node named `<outside marked calls>`: what `.alloc.folded`
/// draws, through the same [stack rule](super::stacks).
fn bytes_view(report: &Report) -> Report {
    let mut r = Report::empty();
    r.tree = report
        .tree
        .iter()
        .map(|n| crate::report::TreeNode {
            self_ns: n.self_alloc.bytes,
            ..n.clone()
        })
        .collect();
    if let Some(root) = report.tree.first() {
        let mut outside = root.clone();
        outside.name = super::columns::OUTSIDE.to_owned();
        outside.parent = Some(0);
        outside.depth = 1;
        outside.self_ns = root.self_alloc.bytes;
        r.tree.push(outside);
    }
    r
}

/// Writes folded stacks of bytes allocated (`.alloc.folded`): one
/// `stack self_bytes` line per path, as [`write`](fn@write) does for time,
/// plus an `<outside marked calls>` line. The sum of the counts is every
/// byte counted by `tickprof::Alloc`.
///
/// # Errors
/// The first error of `out`.
pub fn write_bytes(report: &Report, out: &mut impl io::Write) -> io::Result<()> {
    write(&bytes_view(report), out)
}

/// The folded stacks of bytes allocated, as text (see [`write_bytes`]).
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let text = tickprof_runtime::export::folded::render_bytes(&report);
/// assert!(text.lines().all(|l| l.rsplit_once(' ').is_some()));
/// ```
pub fn render_bytes(report: &Report) -> String {
    render(&bytes_view(report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_node as node;
    use std::borrow::Cow;

    #[test]
    fn frames_are_sanitized() {
        assert!(matches!(frame("plain::name"), Cow::Borrowed(_)));
        assert_eq!(frame("a;b"), "a\u{FF1B}b");
        assert_eq!(frame(" x\r\ny\t"), "x  y");
        assert_eq!(frame(""), "(unnamed)");
        assert_eq!(frame("\n"), "(unnamed)");
        assert_eq!(frame("retry 3"), "retry_3");
        assert_eq!(frame("ratio 1.5"), "ratio_1.5");
        assert_eq!(frame("# heading"), "#_heading");
        assert_eq!(frame("3"), "3");
        assert_eq!(frame("Foo<A, B> & \"q\" é"), "Foo<A, B> & \"q\" é");
    }

    #[test]
    fn one_line_per_path_depth_first_zero_self_included() {
        let mut r = Report::empty();
        r.tree = vec![
            node("", None, 0),
            node("main", Some(0), 0),
            node("b", Some(1), 30),
            node("a", Some(1), 5),
            node("x;y", Some(3), 7),
        ];
        assert_eq!(
            render(&r),
            "main 0\nmain;a 5\nmain;a;x\u{FF1B}y 7\nmain;b 30\n".to_owned()
        );
    }

    #[test]
    fn equal_paths_after_sanitizing_are_merged() {
        let mut r = Report::empty();
        r.tree = vec![
            node("", None, 0),
            node("a\nb", Some(0), 2),
            node("a b", Some(0), 3),
        ];
        assert_eq!(stacks(&r), vec![("a b".to_owned(), 5)]);
    }

    #[test]
    fn bytes_lines_carry_self_bytes_and_the_outside_row() {
        let mut r = Report::empty();
        r.tree = vec![
            node("", None, 0),
            node("main", Some(0), 9),
            node("a", Some(1), 9),
        ];
        r.tree[0].self_alloc.bytes = 7;
        r.tree[1].self_alloc.bytes = 100;
        r.tree[2].self_alloc.bytes = 20;
        assert_eq!(
            render_bytes(&r),
            "<outside marked calls> 7\nmain 100\nmain;a 20\n".to_owned()
        );
    }

    #[test]
    fn a_bad_parent_index_is_skipped_not_panicked() {
        let mut r = Report::empty();
        r.tree = vec![
            node("", None, 0),
            node("a", Some(7), 2),
            node("b", Some(1), 3),
            node("c", Some(0), 4),
        ];
        assert_eq!(stacks(&r), vec![("c".to_owned(), 4)]);
        assert_eq!(render(&r), "c 4\n");
    }
}
