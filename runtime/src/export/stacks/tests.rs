use super::*;
use crate::export::folded;
use crate::export::test_node as node;

/// A report whose tree is a chain below the root, one node per name.
fn chain(names: impl IntoIterator<Item = String>, self_ns: u64) -> Report {
    let mut r = Report::empty();
    r.tree.push(node("", None, 0));
    for (i, name) in names.into_iter().enumerate() {
        r.tree.push(node(&name, Some(i), self_ns));
    }
    r
}

/// The sum of the tree's self times, the root excluded.
fn tree_self(r: &Report) -> u64 {
    r.tree.iter().skip(1).map(|n| n.self_ns).sum()
}

/// The folded lines as (stack, count), checking the format on the way.
fn lines(r: &Report) -> Vec<(String, u64)> {
    let text = folded::render(r);
    text.lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').expect("stack, space, count");
            assert!(!stack.is_empty() && !stack.split(';').any(str::is_empty));
            (stack.to_owned(), n.parse().expect("count"))
        })
        .collect()
}

#[test]
fn a_deep_chain_of_one_name_is_one_frame_with_its_depth() {
    let r = chain((0..200_000).map(|_| "fib".to_owned()), 3);
    let frames = build(&r);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1].repeat, 200_000);
    assert_eq!(lines(&r), vec![("fib [×200000]".to_owned(), 600_000)]);
    assert_eq!(600_000, tree_self(&r));
}

#[test]
fn a_run_under_a_caller_keeps_the_callees_of_every_level() {
    // main;fib;fib;fib, with `leaf` called from the first and the third fib.
    let mut r = Report::empty();
    for (name, parent, ns) in [
        ("", None, 0),
        ("main", Some(0), 1),
        ("fib", Some(1), 2),
        ("fib", Some(2), 4),
        ("fib", Some(3), 8),
        ("leaf", Some(2), 16),
        ("leaf", Some(4), 32),
        ("other", Some(4), 64),
    ] {
        r.tree.push(node(name, parent, ns));
    }
    assert_eq!(
        lines(&r),
        vec![
            ("main".to_owned(), 1),
            ("main;fib [×3]".to_owned(), 14),
            ("main;fib [×3];leaf".to_owned(), 48),
            ("main;fib [×3];other".to_owned(), 64),
        ]
    );
}

#[test]
fn alternating_names_are_cut_at_the_maximum_depth() {
    let n = 200_000;
    let r = chain((0..n).map(|i| ["a", "b"][i % 2].to_owned()), 1);
    let lines = lines(&r);
    // MAX_DEPTH frames, then one frame for everything below.
    assert_eq!(lines.len(), MAX_DEPTH + 1);
    for (i, (stack, count)) in lines.iter().enumerate().take(MAX_DEPTH) {
        assert_eq!(stack.split(';').count(), i + 1);
        assert_eq!(*count, 1);
    }
    let (last, count) = &lines[MAX_DEPTH];
    let frames: Vec<&str> = last.split(';').collect();
    assert_eq!(frames.len(), MAX_DEPTH + 1);
    assert_eq!(frames[MAX_DEPTH - 1], "b");
    let below = (n - MAX_DEPTH) as u64;
    assert_eq!(frames[MAX_DEPTH], format!("[… {below} frames]"));
    assert_eq!(*count, below);
    assert_eq!(lines.iter().map(|l| l.1).sum::<u64>(), tree_self(&r));
    // Bounded line length: every frame is one or three bytes here.
    assert!(last.len() < 2 * MAX_DEPTH + 30, "{}", last.len());
}

#[test]
fn mixed_recursion_collapses_first_then_cuts() {
    // (x, then y repeated 3 times) 600 times: 2,400 nodes, 1,200 frames
    // after collapsing, cut at MAX_DEPTH.
    let names = (0..600).flat_map(|_| ["x", "y", "y", "y"].map(str::to_owned));
    let r = chain(names, 5);
    let frames = build(&r);
    assert_eq!(frames.len(), 1 + MAX_DEPTH + 1);
    assert!(frames[1..=MAX_DEPTH]
        .iter()
        .all(|f| f.repeat == if f.name == "x" { 1 } else { 3 }));
    let cut = &frames[MAX_DEPTH + 1];
    assert_eq!(cut.depth, MAX_DEPTH + 1);
    // 500 groups (1,000 frames) kept, 100 (x, y, y, y) groups below the cut.
    assert_eq!(cut.cut, 400);
    assert_eq!(cut.self_ns, 400 * 5);
    let lines = lines(&r);
    assert!(lines[2].0.ends_with("x;y [×3];x"), "{}", lines[2].0);
    assert_eq!(lines.iter().map(|l| l.1).sum::<u64>(), tree_self(&r));
    assert_eq!(lines.len(), frames.len() - 1);
}

#[test]
fn wide_deep_trees_keep_self_sums_and_bounded_lines() {
    // A chain of 1,500 distinct names with a leaf under every node, and
    // recursion of the leaf under every tenth.
    let mut r = chain((0..1_500).map(|i| format!("f{i}")), 1);
    for i in 1..=1_500 {
        let leaf = r.tree.len();
        r.tree.push(node("leaf", Some(i), 2));
        if i % 10 == 0 {
            r.tree.push(node("leaf", Some(leaf), 7));
        }
    }
    let frames = build(&r);
    let lines = lines(&r);
    assert_eq!(lines.len(), frames.len() - 1);
    // 1,000 chain frames, the leaves of the first 999 (the 1,000th frame's
    // callees are all cut), one cut frame.
    assert_eq!(lines.len(), 1_000 + 999 + 1);
    assert_eq!(lines.iter().map(|l| l.1).sum::<u64>(), tree_self(&r));
    assert!(lines
        .iter()
        .all(|(s, _)| s.split(';').count() <= MAX_DEPTH + 1));
    assert!(frames.iter().all(|f| f.depth <= MAX_DEPTH + 1));
    assert!(lines
        .iter()
        .any(|(s, n)| s == "f0;f1;f2;f3;f4;f5;f6;f7;f8;f9;leaf [×2]" && *n == 9));
}

#[test]
fn bad_parents_are_left_out_and_the_root_is_not_a_line() {
    let mut r = Report::empty();
    for (name, parent, ns) in [
        ("", None, 5),
        ("a", Some(7), 2),
        ("b", Some(1), 3),
        ("c", Some(0), 4),
    ] {
        r.tree.push(node(name, parent, ns));
    }
    assert_eq!(lines(&r), vec![("c".to_owned(), 4)]);
    assert!(build(&Report::empty()).len() == 1);
    assert_eq!(folded::render(&Report::empty()), "");
}
