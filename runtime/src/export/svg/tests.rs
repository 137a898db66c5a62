use super::*;
use crate::export::test_node;

/// Parses `svg` as XML; returns the number of `rect` elements.
fn parse(svg: &str) -> usize {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut rects = 0;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => return rects,
            Ok(quick_xml::events::Event::Empty(e) | quick_xml::events::Event::Start(e)) => {
                if e.name().as_ref() == b"rect" {
                    rects += 1;
                }
                for a in e.attributes() {
                    a.unwrap_or_else(|err| panic!("bad attribute: {err}"));
                }
            }
            Ok(quick_xml::events::Event::Text(t)) => {
                t.decode().unwrap_or_else(|err| panic!("bad text: {err}"));
            }
            Ok(_) => {}
            Err(e) => panic!("not XML at {}: {e}", reader.buffer_position()),
        }
    }
}

fn svg(r: &Report) -> String {
    String::from_utf8(render(r).unwrap()).unwrap()
}

#[test]
fn empty_profile_gives_a_complete_svg() {
    let s = svg(&Report::empty());
    assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
    assert!(s.contains("no recorded time"));
    parse(&s);
    let mut r = Report::empty();
    for (name, parent) in [("", None), ("idle", Some(0))] {
        r.tree.push(test_node(name, parent, 0));
    }
    let s = svg(&r);
    assert!(s.trim_end().ends_with("</svg>"));
    parse(&s);
}

#[test]
fn names_are_escaped_and_the_document_is_xml() {
    let mut r = Report::empty();
    let hostile = "<b>&\"x\" ]]> </script> \u{1}\u{ffff} é ✓";
    for (name, parent) in [("", None), (hostile, Some(0)), ("k", Some(1))] {
        r.tree.push(test_node(name, parent, 9));
    }
    let s = svg(&r);
    assert!(!s.contains("<b>&"), "raw name in SVG");
    assert!(s.contains("<title>&lt;b&gt;&amp;&quot;x&quot; ]]&gt; &lt;/script&gt;"));
    // all, the hostile frame and its callee, plus the background.
    assert_eq!(parse(&s), 4);
}

#[test]
fn widths_are_shares_of_the_total_and_titles_say_time_and_share() {
    let mut r = Report::empty();
    for (name, parent, ns) in [
        ("", None, 0),
        ("main", Some(0), 100),
        ("a", Some(1), 300),
        ("b", Some(1), 600),
    ] {
        r.tree.push(test_node(name, parent, ns));
    }
    let s = svg(&r);
    parse(&s);
    let width = |name: &str| -> f64 {
        let g = s
            .split("<g class")
            .find(|g| g.contains(&format!("<title>{name} (")))
            .unwrap_or_else(|| panic!("no box {name}"));
        let w = g.split("width=\"").nth(1).unwrap();
        w[..w.find('"').unwrap()].parse().unwrap()
    };
    let plot = WIDTH - 2.0 * XPAD;
    assert!((width("all") - plot).abs() < 0.01);
    assert!((width("main") - plot).abs() < 0.01);
    assert!((width("a") - plot * 0.3).abs() < 0.01);
    assert!((width("b") - plot * 0.6).abs() < 0.01);
    assert!(s.contains("<title>b (600 ns, 60.00%)</title>"), "{s}");
    assert_eq!(colour("b"), colour("b"));
    assert_ne!(colour("a"), colour("b"));
}

#[test]
fn huge_and_deep_profiles_stay_bounded() {
    // 100,000 siblings of one nanosecond next to one big frame: the
    // small ones are far below the minimum width.
    let mut r = Report::empty();
    r.tree.push(test_node("", None, 0));
    r.tree.push(test_node("big", Some(0), 1_000_000_000));
    for i in 0..100_000 {
        r.tree.push(test_node(&format!("tiny{i}"), Some(0), 1));
    }
    let s = svg(&r);
    assert_eq!(parse(&s), 1 + 2, "background, all, big");
    // 10,000 paths four levels deep, each 0.118 px wide: 40,001 boxes
    // wide enough to draw, more than the limit.
    let mut r = Report::empty();
    r.tree.push(test_node("", None, 0));
    for i in 0..10_000 {
        let base = r.tree.len();
        r.tree.push(test_node(&format!("a{i}"), Some(0), 0));
        r.tree.push(test_node(&format!("b{i}"), Some(base), 0));
        r.tree.push(test_node(&format!("c{i}"), Some(base + 1), 0));
        r.tree.push(test_node(&format!("d{i}"), Some(base + 2), 1));
    }
    let s = svg(&r);
    assert_eq!(parse(&s), 1 + MAX_FRAMES);
    assert!(s.contains("; 10001 more boxes not drawn"), "{}", &s[..2000]);
    assert!(s.len() < 400 * MAX_FRAMES, "{} bytes", s.len());
    // A deep chain: every level drawn, the picture as tall as the chain.
    let mut r = Report::empty();
    r.tree.push(test_node("", None, 0));
    for i in 0..1_000 {
        r.tree.push(test_node(&format!("f{i}"), Some(i), 1));
    }
    let s = svg(&r);
    assert_eq!(parse(&s), 1 + 1_001);
    assert!(s.contains(&format!(
        "height=\"{}\"",
        TOP + 1_001.0 * FRAME_HEIGHT + BOTTOM
    )));
}

#[test]
fn deep_recursion_is_collapsed_and_cut_as_in_the_folded_file() {
    // Direct recursion 200,000 deep: one box, labelled with the depth.
    let mut r = Report::empty();
    r.tree.push(test_node("", None, 0));
    for i in 0..200_000 {
        r.tree.push(test_node("fib", Some(i), 1));
    }
    let s = svg(&r);
    assert_eq!(parse(&s), 1 + 2, "background, all, fib");
    assert!(s.contains("<title>fib [×200000] (200.00 µs, 100.00%)</title>"));
    // Mutual recursion 200,000 deep: cut at MAX_DEPTH frames.
    let mut r = Report::empty();
    r.tree.push(test_node("", None, 0));
    for i in 0..200_000 {
        r.tree.push(test_node(["a", "b"][i % 2], Some(i), 1));
    }
    let s = svg(&r);
    assert_eq!(parse(&s), 1 + 1 + MAX_DEPTH + 1);
    assert!(s.contains("<title>[… 199000 frames] (199.00 µs, 99.50%)</title>"));
    assert!(s.contains("; paths cut at 1000 frames"));
    assert!(s.contains(&format!(
        "height=\"{}\"",
        TOP + (MAX_DEPTH + 2) as f64 * FRAME_HEIGHT + BOTTOM
    )));
}

#[test]
fn labels_are_truncated_to_fit() {
    assert_eq!(label("main", 200.0).as_deref(), Some("main"));
    assert_eq!(
        label("abcdefghij", 6.0 + 5.0 * FONT_SIZE * FONT_WIDTH).as_deref(),
        Some("abc..")
    );
    assert_eq!(label("abcdefghij", 10.0), None);
}
