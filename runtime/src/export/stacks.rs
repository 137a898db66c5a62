//! The calling-context tree as stack-based formats draw it (`.folded`,
//! `.svg`, and any later stack format such as pprof): one rule for deep and
//! recursive paths, so that every such file stays bounded however deep the
//! recursion was.
//!
//! # The rule
//!
//! [`Report::tree`] is turned into a tree of [`Frame`]s:
//!
//! 1. **Names** are made safe as folded frames by [`frame`]; two
//!    paths equal after that are merged (their self times added).
//! 2. **Runs of one frame are collapsed.** A node named like its parent
//!    frame (direct recursion: `fib;fib;fib`) is merged into that frame: its
//!    self time is added to it and its children become the frame's
//!    children. The frame is labelled with the longest run merged into it,
//!    `fib [×3]` (a label no reader takes for a count or a second frame);
//!    a frame with no run keeps its plain name.
//! 3. **Paths are cut at [`MAX_DEPTH`] frames.** Everything below a frame
//!    at depth [`MAX_DEPTH`] (after collapsing) is merged into one frame
//!    `[… N frames]`, where `N` is the longest path merged into it (in
//!    calls), with the self time of all of it. Mutual recursion (`a;b;a;b…`)
//!    is not collapsed; it is cut.
//!
//! What is kept exactly: the self time of every node lands in exactly one
//! frame, so the sum of all frames' self times equals the sum of the self
//! times of the tree's nodes (the root excluded; a node whose parent index
//! breaks the tree's parents-first order is left out with its subtree). What is bounded: there are
//! at most as many frames as tree nodes, and no path has more than
//! [`MAX_DEPTH`]` + 1` frames. Building takes memory proportional to the
//! number of tree nodes, never to the sum of path lengths.
//!
//! [`Report::tree`]: crate::report::Report::tree

use crate::report::{Report, TreeNode};
use std::borrow::Cow;
use std::collections::HashMap;

/// A name made safe as one frame of a folded line.
///
/// Folded readers split frames on `;`, take the last space-separated number
/// as the count and skip lines starting with `# `. So:
/// - `;` becomes `；` (U+FF1B FULLWIDTH SEMICOLON), keeping e.g. `[u8; 4]`
///   readable as `[u8； 4]`;
/// - control characters (newline, tab, …) become a space, then leading and
///   trailing whitespace is trimmed;
/// - a space before a trailing number (`retry 3`) or after a leading `#`
///   becomes `_` (`retry_3`), so it is not read as a count or a comment;
/// - an empty name becomes `(unnamed)`.
///
/// Everything else (`<`, `&`, quotes, commas, non-ASCII) is kept as is.
///
/// # Examples
///
/// ```
/// use tickprof_runtime::export::folded::frame;
/// assert_eq!(frame("<[u8; 4] as Foo>::bar"), "<[u8； 4] as Foo>::bar");
/// assert_eq!(frame("line\nbreak"), "line break");
/// assert_eq!(frame("retry 3"), "retry_3");
/// assert_eq!(frame("a::b"), "a::b");
/// ```
pub fn frame(name: &str) -> Cow<'_, str> {
    let clean = |c: char| c != ';' && !c.is_control();
    let trimmed = name.trim();
    if trimmed.len() == name.len()
        && !name.is_empty()
        && name.chars().all(clean)
        && !count_like(name)
        && !name.starts_with("# ")
    {
        return Cow::Borrowed(name);
    }
    let mapped: String = name
        .chars()
        .map(|c| match c {
            ';' => '\u{FF1B}',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let mut s = mapped.trim().to_owned();
    if s.is_empty() {
        return Cow::Borrowed("(unnamed)");
    }
    if count_like(&s) {
        if let Some(i) = s.rfind(' ') {
            s.replace_range(i..=i, "_");
        }
    }
    if s.starts_with("# ") {
        s.replace_range(1..2, "_");
    }
    Cow::Owned(s)
}

/// Whether the last space-separated word of `s` would be read as a count.
fn count_like(s: &str) -> bool {
    match s.rfind(' ') {
        Some(i) => {
            let w = &s[i + 1..];
            !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        }
        None => false,
    }
}

/// Paths are cut below this many frames (after collapsing recursion); the
/// rest of a deeper path becomes one `[… N frames]` frame.
pub const MAX_DEPTH: usize = 1_000;

/// One frame of the stack tree: a path after the [rule](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The frame name made safe by [`frame`] (empty for the root
    /// and for a cut frame).
    pub name: Cow<'a, str>,
    /// The parent frame (`None` for the root, `frames[0]`).
    pub parent: Option<usize>,
    /// Frames from the root (the root is 0).
    pub depth: usize,
    /// The longest run of directly recursive calls merged into this frame
    /// (1: no recursion).
    pub repeat: u64,
    /// For a cut frame, the longest path merged into it, in calls; 0 for
    /// every other frame.
    pub cut: u64,
    /// Self time of every tree node merged into this frame, in nanoseconds.
    pub self_ns: u64,
    /// Calls of every tree node merged into this frame (so the calls of a
    /// collapsed recursive run are all its activations).
    pub calls: u64,
    /// Allocations made directly in every tree node merged into this frame
    /// (`tickprof::Alloc`; zero without it).
    pub self_allocs: u64,
    /// Bytes those allocations asked for.
    pub self_alloc_bytes: u64,
    /// The child frames, sorted by name, a cut frame last.
    pub children: Vec<usize>,
}

impl Frame<'_> {
    /// Adds a tree node's own figures into this frame.
    fn absorb(&mut self, n: &TreeNode) {
        self.self_ns = self.self_ns.saturating_add(n.self_ns);
        self.calls = self.calls.saturating_add(n.calls);
        self.self_allocs = self.self_allocs.saturating_add(n.self_alloc.allocs);
        self.self_alloc_bytes = self.self_alloc_bytes.saturating_add(n.self_alloc.bytes);
    }

    /// The frame as written: `name`, `name [×N]` for collapsed recursion,
    /// `[… N frames]` for a cut.
    ///
    /// # Examples
    ///
    /// ```
    /// use tickprof_runtime::export::stacks::Frame;
    /// let mut f = Frame { name: "fib".into(), parent: Some(0), depth: 1, repeat: 1,
    ///     cut: 0, self_ns: 0, calls: 0, self_allocs: 0, self_alloc_bytes: 0,
    ///     children: Vec::new() };
    /// assert_eq!(f.label(), "fib");
    /// f.repeat = 1000;
    /// assert_eq!(f.label(), "fib [×1000]");
    /// ```
    pub fn label(&self) -> Cow<'_, str> {
        if self.cut > 0 {
            Cow::Owned(format!("[… {} frames]", self.cut))
        } else if self.repeat > 1 {
            Cow::Owned(format!("{} [×{}]", self.name, self.repeat))
        } else {
            Cow::Borrowed(&self.name)
        }
    }
}

/// The stack tree of `report`: `frames[0]` is the root, and every parent
/// comes before its children.
///
/// Nodes whose parent index is out of order (after the node) are left out
/// with their subtrees, rather than given an invented path.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let frames = tickprof_runtime::export::stacks::build(&report);
/// assert!(frames.iter().all(|f| f.depth <= tickprof_runtime::export::stacks::MAX_DEPTH + 1));
/// ```
pub fn build(report: &Report) -> Vec<Frame<'_>> {
    const SKIP: usize = usize::MAX;
    let mut frames = vec![Frame {
        name: Cow::Borrowed(""),
        parent: None,
        depth: 0,
        repeat: 1,
        cut: 0,
        self_ns: 0,
        calls: 0,
        self_allocs: 0,
        self_alloc_bytes: 0,
        children: Vec::new(),
    }];
    // Per tree node: its frame, and its run length (calls below the cut,
    // in a cut frame).
    let mut at: Vec<(usize, u64)> = Vec::with_capacity(report.tree.len());
    // (parent frame, name) → frame; a cut frame has the empty name, which
    // no sanitized frame has.
    let mut index: HashMap<(usize, Cow<'_, str>), usize> = HashMap::new();
    for n in &report.tree {
        let Some(p) = n.parent else {
            at.push((0, 0));
            continue;
        };
        let Some(&(dp, run)) = at.get(p).filter(|(dp, _)| *dp != SKIP) else {
            at.push((SKIP, 0));
            continue;
        };
        let parent = &mut frames[dp];
        if parent.cut > 0 {
            parent.cut = parent.cut.max(run + 1);
            parent.absorb(n);
            at.push((dp, run + 1));
            continue;
        }
        let name = frame(&n.name);
        if dp != 0 && parent.name == name {
            parent.repeat = parent.repeat.max(run + 1);
            parent.absorb(n);
            at.push((dp, run + 1));
            continue;
        }
        let cut = parent.depth >= MAX_DEPTH;
        let key = (dp, if cut { Cow::Borrowed("") } else { name });
        let depth = parent.depth + 1;
        let next = frames.len();
        let f = *index.entry(key.clone()).or_insert(next);
        if f == next {
            frames[dp].children.push(f);
            frames.push(Frame {
                name: key.1,
                parent: Some(dp),
                depth,
                repeat: 1,
                cut: u64::from(cut),
                self_ns: 0,
                calls: 0,
                self_allocs: 0,
                self_alloc_bytes: 0,
                children: Vec::new(),
            });
        }
        frames[f].absorb(n);
        at.push((f, 1));
    }
    drop(index);
    for i in 0..frames.len() {
        let mut children = std::mem::take(&mut frames[i].children);
        children.sort_by(|&a, &b| {
            let (a, b) = (&frames[a], &frames[b]);
            (a.cut > 0, &a.name).cmp(&(b.cut > 0, &b.name))
        });
        frames[i].children = children;
    }
    frames
}

/// Visits every frame but the root depth first, children in order, with
/// the path from the root's child down to it as `;`-joined labels. One
/// path buffer is reused: memory is one path, not all of them.
pub(crate) fn walk<E>(
    frames: &[Frame<'_>],
    mut visit: impl FnMut(&str, &Frame<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut path = String::new();
    // (frame, next child to visit, path length before this frame)
    let mut stack: Vec<(usize, usize, usize)> = vec![(0, 0, 0)];
    while let Some(top) = stack.last_mut() {
        let (i, next, _) = *top;
        let Some(&c) = frames.get(i).and_then(|f| f.children.get(next)) else {
            if let Some((_, _, len)) = stack.pop() {
                path.truncate(len);
            }
            continue;
        };
        top.1 += 1;
        let len = path.len();
        if !path.is_empty() {
            path.push(';');
        }
        path.push_str(&frames[c].label());
        visit(&path, &frames[c])?;
        stack.push((c, 0, len));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
