//! Every file format, written from a known profile and read back with a
//! real parser: `csv`, `serde_json`, inferno's folded-stack reader and
//! flamegraph writer, and a structural check of the HTML (the browser check
//! is `scripts/check_html.sh`).
//!
//! The tests of this binary share the profiler's global state and run in
//! parallel: each uses its own functions and looks its sites up by name.
#![cfg(feature = "enabled")]

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;
use tickprof::{Report, SiteStats, TextOptions};

/// Some measurable work, so every marked call has a nonzero time.
fn work() {
    std::thread::sleep(Duration::from_micros(50));
}

/// Defines `a` (calls `b` three times and `c` once), `b` and `c`, marked
/// with the given names, in module `$m`.
macro_rules! known_profile {
    ($m:ident, $a:tt, $b:tt, $c:tt) => {
        mod $m {
            #[tickprof::profile(name = $a)]
            pub fn a() {
                super::work();
                for _ in 0..3 {
                    b();
                }
                c();
            }
            #[tickprof::profile(name = $b)]
            pub fn b() {
                super::work();
            }
            #[tickprof::profile(name = $c)]
            pub fn c() {
                super::work();
            }
        }
    };
}

/// Renders `report` as the format of extension `ext`.
fn render(report: &Report, ext: &str) -> Vec<u8> {
    tickprof::export::render(report, &format!("out{ext}"), &TextOptions::default())
        .unwrap_or_else(|e| panic!("{ext}: {e}"))
}

fn site<'r>(report: &'r Report, name: &str) -> &'r SiteStats {
    report
        .site(name)
        .unwrap_or_else(|| panic!("no site {name:?} in the report"))
}

/// The index of the tree node at `path` (names from the root's child down).
fn node(report: &Report, path: &[&str]) -> usize {
    (0..report.tree.len())
        .find(|&i| report.path(i) == path)
        .unwrap_or_else(|| panic!("no tree node {path:?}"))
}

/// The known profile's figures, checked on the report itself first.
fn check_known(report: &Report, a: &str, b: &str, c: &str) {
    assert_eq!(site(report, a).calls, 1);
    assert_eq!(site(report, b).calls, 3);
    assert_eq!(site(report, c).calls, 1);
    let callees = &site(report, a).callees;
    let to_b = callees.iter().find(|e| e.name == b).expect("a calls b");
    assert_eq!(to_b.calls, 3);
    assert_eq!(
        callees.iter().find(|e| e.name == c).map(|e| e.calls),
        Some(1)
    );
    assert_eq!(report.tree[node(report, &[a, b])].calls, 3);
    assert_eq!(report.tree[node(report, &[a, c])].calls, 1);
}

known_profile!(
    csv_case,
    "csv, a \"quoted\"",
    "csv Foo<A, B>",
    "csv; naïve ✓ & <c>"
);

#[test]
fn csv_round_trips_through_a_csv_reader() {
    let _turn = crate::support::alone();
    fresh();
    let (a, b, c) = ("csv, a \"quoted\"", "csv Foo<A, B>", "csv; naïve ✓ & <c>");
    csv_case::a();
    let report = tickprof::report();
    check_known(&report, a, b, c);
    let body = render(&report, ".csv");
    let mut reader = csv::Reader::from_reader(body.as_slice());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(header.join(","), tickprof::CSV_HEADER);
    assert_eq!(
        header[..10].join(","),
        "name,calls,total_ns,mean_ns,min_ns,max_ns,reversed,oversized,self_ns,unwound",
        "the first columns are fixed; new ones are only appended"
    );
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut rows = HashMap::new();
    for rec in reader.records() {
        let rec = rec.expect("a well-formed CSV record");
        assert_eq!(rec.len(), header.len());
        rows.insert(rec[0].to_owned(), rec);
    }
    assert_eq!(rows.len(), report.sites.len(), "one row per site");
    for name in [a, b, c] {
        let rec = rows
            .get(name)
            .unwrap_or_else(|| panic!("{name:?} did not round-trip"));
        let s = site(&report, name);
        let int = |col_name: &str| rec[col(col_name)].parse::<u64>().unwrap();
        assert_eq!(int("calls"), s.calls);
        assert_eq!(int("total_ns"), s.total_ns);
        assert_eq!(int("self_ns"), s.self_ns);
        assert_eq!(int("min_ns"), s.min_ns);
        assert_eq!(int("max_ns"), s.max_ns);
        assert_eq!(int("reversed"), 0);
        assert_eq!(int("unwound"), 0);
        let mean: f64 = rec[col("mean_ns")].parse().unwrap();
        assert!((mean - s.mean_ns).abs() <= 0.05, "{mean} vs {}", s.mean_ns);
    }
    assert_eq!(rows[b][col("calls")].parse::<u64>().unwrap(), 3);
}

known_profile!(json_case, "json <a> & \"b\"", "json, b; ß", "json\nc\t✓");

#[test]
fn json_holds_the_whole_report_with_a_version() {
    let _turn = crate::support::alone();
    fresh();
    let (a, b, c) = ("json <a> & \"b\"", "json, b; ß", "json\nc\t✓");
    json_case::a();
    let report = tickprof::report();
    check_known(&report, a, b, c);
    let v: serde_json::Value = serde_json::from_slice(&render(&report, ".json")).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["version"], tickprof::export::json::VERSION);
    // It reads back as the same report: the same document again, and
    // everything but the trace (its own format) equal.
    let text = String::from_utf8(render(&report, ".json")).unwrap();
    let back = tickprof::export::json::parse(&text).unwrap();
    assert_eq!(String::from_utf8(render(&back, ".json")).unwrap(), text);
    assert_eq!(back.sites, report.sites);
    assert_eq!(back.tree, report.tree);
    assert_eq!(back.threads, report.threads);

    // Every field of every type is there, including fields added later:
    // the keys of each JSON object are the field names `Debug` shows.
    let keys = |j: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = j.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let mut top = fields(&report);
    top.retain(|f| f != "trace");
    top.push("version".to_owned());
    top.sort();
    assert_eq!(keys(&v), top);
    assert_eq!(keys(&v["run"]), fields(&report.run));
    let s0 = &report.sites[0];
    let j0 = &v["sites"][0];
    assert_eq!(keys(j0), fields(s0));
    let e0 = &site(&report, a).callees[0];
    assert_eq!(keys(&v["sites"][0]["callers"][0]), fields(e0));
    assert_eq!(keys(&v["threads"][0]), fields(&report.threads[0]));
    assert_eq!(
        keys(&v["threads"][0]["sites"][0]),
        fields(&report.threads[0].sites[0])
    );
    assert_eq!(keys(&v["tree"][0]), fields(&report.tree[0]));

    // And spot checks against the values, field by field.
    let run = &v["run"];
    assert_eq!(run["wall_ns"], report.run.wall_ns);
    assert_eq!(run["threads"], report.run.threads as u64);
    assert_eq!(
        run["clock"],
        format!("{:?}", report.run.clock).to_lowercase()
    );
    let sites = v["sites"].as_array().unwrap();
    assert_eq!(sites.len(), report.sites.len());
    let by_name = |n: &str| {
        sites
            .iter()
            .find(|s| s["name"] == n)
            .unwrap_or_else(|| panic!("{n:?} not in the JSON"))
    };
    for name in [a, b, c] {
        let (j, s) = (by_name(name), site(&report, name));
        assert_eq!(j["calls"], s.calls);
        assert_eq!(j["total_ns"], s.total_ns);
        assert_eq!(j["self_ns"], s.self_ns);
        assert_eq!(j["mean_ns"].as_f64().unwrap(), s.mean_ns);
        assert_eq!(j["min_ns"], s.min_ns);
        assert_eq!(j["max_ns"], s.max_ns);
        assert_eq!(j["line"], s.line);
        assert_eq!(j["file"], s.file.as_str());
        assert_eq!(j["kind"], "function");
    }
    let callees = by_name(a)["callees"].as_array().unwrap();
    let to_b = callees.iter().find(|e| e["name"] == b).unwrap();
    assert_eq!(to_b["calls"], 3);
    assert_eq!(
        to_b["total_ns"],
        site(&report, a)
            .callees
            .iter()
            .find(|e| e.name == b)
            .unwrap()
            .total_ns
    );
    assert_eq!(by_name(b)["callers"][0]["name"], a);

    // The tree: follow parent indices to the a → b path.
    let tree = v["tree"].as_array().unwrap();
    assert_eq!(tree.len(), report.tree.len());
    assert!(tree[0]["parent"].is_null());
    let ib = node(&report, &[a, b]);
    assert_eq!(tree[ib]["name"], b);
    assert_eq!(tree[ib]["calls"], 3);
    let ia = tree[ib]["parent"].as_u64().unwrap() as usize;
    assert_eq!(tree[ia]["name"], a);
    assert_eq!(tree[ia]["parent"], 0);
    assert_eq!(v["threads"].as_array().unwrap().len(), report.threads.len());
}

/// The field names of a struct, from its pretty `Debug` output (the lines
/// indented one level), sorted.
fn fields(value: &impl std::fmt::Debug) -> Vec<String> {
    let mut f: Vec<String> = format!("{value:#?}")
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_once(": ").map(|(k, _)| k.to_owned()))
        .collect();
    f.sort();
    f
}

/// Parses folded lines as inferno and flamegraph.pl do: `stack count`.
fn parse_folded(text: &str) -> Vec<(Vec<String>, u64)> {
    text.lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').expect("stack, space, count");
            let n = n.parse().unwrap_or_else(|_| panic!("count in {l:?}"));
            (stack.split(';').map(str::to_owned).collect(), n)
        })
        .collect()
}

known_profile!(
    folded_case,
    "folded <a> & \"q\"",
    "folded [u8; 4], b",
    "folded retry 3"
);

#[test]
fn folded_stacks_are_one_line_per_path_with_self_time() {
    let _turn = crate::support::alone();
    fresh();
    let (a, b, c) = ("folded <a> & \"q\"", "folded [u8; 4], b", "folded retry 3");
    folded_case::a();
    let report = tickprof::report();
    check_known(&report, a, b, c);
    let text = String::from_utf8(render(&report, ".folded")).unwrap();
    assert!(text.ends_with('\n'));
    let lines = parse_folded(&text);
    // Depth first: every path comes after its caller's path, and no path
    // twice.
    let mut seen = HashSet::new();
    for (path, _) in &lines {
        if path.len() > 1 {
            assert!(
                seen.contains(&path[..path.len() - 1]),
                "{path:?} before its caller"
            );
        }
        assert!(seen.insert(&path[..]), "{path:?} twice");
    }
    // Names are made safe: `;` would split a frame, a trailing number would
    // be read as a count.
    let (fa, fb, fc) = ("folded <a> & \"q\"", "folded [u8； 4], b", "folded retry_3");
    assert_eq!(tickprof::export::folded::frame(b), fb);
    assert_eq!(tickprof::export::folded::frame(c), fc);
    let find = |path: &[&str]| {
        lines
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, n)| *n)
            .unwrap_or_else(|| panic!("no line for {path:?} in\n{text}"))
    };
    assert_eq!(find(&[fa]), report.tree[node(&report, &[a])].self_ns);
    assert_eq!(find(&[fa, fb]), report.tree[node(&report, &[a, b])].self_ns);
    assert_eq!(find(&[fa, fc]), report.tree[node(&report, &[a, c])].self_ns);
    assert!(find(&[fa, fb]) > 0, "b slept, so it has self time");
    // One line per tree path (the root excluded).
    assert_eq!(lines.len(), report.tree.len() - 1);

    // inferno reads the same text and draws every frame of it.
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(
        &mut inferno::flamegraph::Options::default(),
        text.as_bytes(),
        &mut svg,
    )
    .expect("inferno reads the folded file");
    let svg = String::from_utf8(svg).unwrap();
    for f in ["folded &lt;a&gt; &amp; &quot;q&quot;", "folded [u8； 4], b"] {
        assert!(svg.contains(f), "{f} not drawn");
    }
}

/// A profile of this test's calls only, as in a process of its own: the
/// other tests of this binary ran before (their time made this test's
/// frames too narrow for the flame graph to draw).
fn fresh() {
    tickprof::reset();
}

known_profile!(svg_case, "svg <g> & \"a\"", "svg b; ünï", "svg c, C");

#[test]
fn svg_flamegraph_draws_the_frames_inferno_draws_with_escaped_names() {
    let _turn = crate::support::alone();
    fresh();
    let (a, b, c) = ("svg <g> & \"a\"", "svg b; ünï", "svg c, C");
    svg_case::a();
    let report = tickprof::report();
    check_known(&report, a, b, c);
    let svg = String::from_utf8(render(&report, ".svg")).unwrap();
    assert!(svg.starts_with("<?xml"), "{}", &svg[..svg.len().min(80)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("tickprof flamegraph"));
    // Frame titles: "name (time, P%)", names XML-escaped, as inferno's.
    for f in [
        "svg &lt;g&gt; &amp; &quot;a&quot;",
        "svg b； ünï",
        "svg c, C",
    ] {
        assert!(svg.contains(&format!("<title>{f} (")), "{f} not drawn");
    }
    assert!(!svg.contains("<g> &"), "a raw name reached the SVG");
    // The same frames as inferno draws from the folded file.
    let folded = render(&report, ".folded");
    let mut opt = inferno::flamegraph::Options::default();
    let mut direct = Vec::new();
    inferno::flamegraph::from_reader(&mut opt, folded.as_slice(), &mut direct).unwrap();
    let direct = String::from_utf8(direct).unwrap();
    let titles = |s: &str| -> HashSet<String> {
        s.split("<title>")
            .skip(1)
            .filter_map(|t| t.split_once(" (").map(|(n, _)| n.to_owned()))
            .collect()
    };
    assert_eq!(titles(&svg), titles(&direct));
}

/// Every `id="…"` and every `href="#…"` in a page.
fn ids_and_links(page: &str) -> (HashSet<&str>, Vec<&str>) {
    let grab = |marker: &str| -> Vec<&str> {
        page.split(marker)
            .skip(1)
            .map(|rest| &rest[..rest.find('"').expect("closing quote")])
            .collect()
    };
    let ids: Vec<&str> = grab(" id=\"");
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "ids are unique");
    (unique, grab(" href=\"#"))
}

/// The page's structure: links resolve, one row and one section per site
/// linking to each other, names escaped, only the page's own scripts.
fn check_page(report: &Report, page: &str) {
    let (ids, links) = ids_and_links(page);
    for l in &links {
        assert!(ids.contains(l), "link to missing #{l}");
    }
    // The stored rows and sections: line i is site i's.
    let stored = |id: &str| -> Vec<&str> {
        let start = page.find(&format!("id=\"{id}\">")).unwrap() + id.len() + 6;
        let end = start + page[start..].find("</script>").unwrap();
        match &page[start..end] {
            "" => Vec::new(),
            text => text.split('\n').collect(),
        }
    };
    let (rows, sections) = (stored("tp-rows"), stored("tp-sections"));
    assert_eq!(rows.len(), report.sites.len());
    assert_eq!(sections.len(), report.sites.len());
    for (i, (row, section)) in rows.iter().zip(&sections).enumerate() {
        let name = html_escape(&report.sites[i].name)
            .replace('\n', "&#10;")
            .replace('\r', "&#13;");
        assert!(
            row.starts_with(&format!(
                "<tr data-i=\"{i}\"><td><a href=\"#s{i}\">{name}</a>"
            )),
            "{row}"
        );
        assert!(
            section.starts_with(&format!(
                "<section id=\"s{i}\" class=\"fn\"><h3>{name}</h3>"
            )),
            "{section}"
        );
    }
    assert_eq!(page.matches("<section id=\"s").count(), report.sites.len());
    assert_eq!(page.matches("<tr data-i=\"").count(), report.sites.len());
    assert_eq!(
        page.matches("<script").count(),
        5,
        "only the page's scripts"
    );
    assert_eq!(page.matches("</script").count(), 5);
    for marker in ["http://", "https://", "src=\"//"] {
        assert!(!page.contains(marker), "no network: found {marker}");
    }
    // The sort data is JSON naming every site.
    let start = page.find("id=\"tp-data\">").unwrap() + "id=\"tp-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    let data: Vec<serde_json::Value> = serde_json::from_str(&page[start..end]).unwrap();
    assert_eq!(data.len(), report.sites.len());
    for (d, s) in data.iter().zip(&report.sites) {
        assert_eq!(d[0], s.name.as_str());
        assert_eq!(d[1], s.calls);
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

known_profile!(
    html_case,
    "<script>alert(1)</script>",
    "html <img src=x onerror=alert(2)> 'b'",
    "html & \"c\", ünï; ✓"
);

#[test]
fn html_links_resolve_and_names_cannot_inject() {
    let _turn = crate::support::alone();
    fresh();
    let (a, b, c) = (
        "<script>alert(1)</script>",
        "html <img src=x onerror=alert(2)> 'b'",
        "html & \"c\", ünï; ✓",
    );
    html_case::a();
    let report = tickprof::report();
    check_known(&report, a, b, c);
    let page = String::from_utf8(render(&report, ".html")).unwrap();
    check_page(&report, &page);
    for name in [a, b, c] {
        let i = report.sites.iter().position(|s| s.name == name).unwrap();
        let esc = html_escape(name);
        assert!(
            page.contains(&format!("<a href=\"#s{i}\">{esc}</a>")),
            "row link for {name}"
        );
        assert!(
            page.contains(&format!("<section id=\"s{i}\" class=\"fn\"><h3>{esc}</h3>")),
            "section for {name}"
        );
    }
    assert!(!page.contains("<script>alert"), "raw markup in the page");
    assert!(!page.contains("<img"), "raw markup in the page");
    // a's section lists b (3 calls) and c among its callees, as links.
    let ia = report.sites.iter().position(|s| s.name == a).unwrap();
    let ib = report.sites.iter().position(|s| s.name == b).unwrap();
    let sec = &page[page.find(&format!("<section id=\"s{ia}\"")).unwrap()..];
    let sec = &sec[..sec.find("</section>").unwrap()];
    assert!(
        sec.contains(&format!(
            "<a href=\"#s{ib}\">{}</a></td><td>3</td>",
            html_escape(b)
        )),
        "{sec}"
    );
}

/// A report of `n` sites shaped like a real one, made by cloning `real`'s
/// sites, edges and tree nodes (so it keeps compiling when fields are added).
fn synthetic(real: &Report, n: usize) -> Report {
    let template = real.sites[0].clone();
    let edge = real
        .sites
        .iter()
        .flat_map(|s| s.callers.iter())
        .next()
        .expect("an edge")
        .clone();
    let tnode = real.tree[1].clone();
    let mut r = real.clone();
    r.sites.clear();
    r.tree.truncate(1);
    let name = |i: usize| format!("big::m{}::<T as Trait<{i}, &'a str>>::f", i % 31);
    for i in 0..n {
        let mut s = template.clone();
        s.name = name(i);
        s.calls = (i as u64 * 7919) % 1000 + 1;
        s.total_ns = 10_000_000 / (i as u64 + 1);
        s.self_ns = s.total_ns / 2;
        s.callers.clear();
        s.callees.clear();
        let mut e = edge.clone();
        if i > 0 {
            e.name = name((i - 1) / 2);
            s.callers.push(e.clone());
        }
        for k in [2 * i + 1, 2 * i + 2] {
            if k < n {
                e.name = name(k);
                s.callees.push(e.clone());
            }
        }
        r.sites.push(s);
        let mut t = tnode.clone();
        t.name = name(i);
        t.parent = Some(if i == 0 { 0 } else { (i - 1) / 2 + 1 });
        r.tree.push(t);
    }
    r
}

known_profile!(
    big_case,
    "big template a",
    "big template b",
    "big template c"
);

#[test]
fn html_for_ten_thousand_sites_is_complete_and_compact() {
    let _turn = crate::support::alone();
    fresh();
    big_case::a();
    let real = tickprof::report();
    let report = synthetic(&real, 10_000);
    let page = tickprof::export::html::render(&report);
    check_page(&report, &page);
    // Every edge is a link: 9,999 callers and 9,999 callees, plus the row,
    // the section's "back to table" and 3 navigation links.
    let (_, links) = ids_and_links(&page);
    assert_eq!(links.len(), 2 * 9_999 + 2 * 10_000 + 3);
    assert!(
        page.len() < 2_000 * 10_000,
        "{} bytes for 10,000 sites",
        page.len()
    );
    // The other formats cope with the size too.
    let folded = tickprof::export::folded::render(&report);
    assert_eq!(folded.lines().count(), 10_000);
    let json: serde_json::Value =
        serde_json::from_slice(&tickprof::export::json::render(&report).unwrap()).unwrap();
    assert_eq!(json["sites"].as_array().unwrap().len(), 10_000);
}

known_profile!(
    odd_case,
    "odd <a> & \"a\", 'x'; é",
    "odd Foo<A, B>; \"b\" ✓",
    "odd c\r\nnew line 7"
);

#[test]
fn odd_names_survive_every_format() {
    let _turn = crate::support::alone();
    fresh();
    let names = [
        "odd <a> & \"a\", 'x'; é",
        "odd Foo<A, B>; \"b\" ✓",
        "odd c\r\nnew line 7",
    ];
    odd_case::a();
    let report = tickprof::report();
    check_known(&report, names[0], names[1], names[2]);

    let csv_body = render(&report, ".csv");
    let mut reader = csv::Reader::from_reader(csv_body.as_slice());
    let csv_names: HashSet<String> = reader.records().map(|r| r.unwrap()[0].to_owned()).collect();

    let json: serde_json::Value = serde_json::from_slice(&render(&report, ".json")).unwrap();
    let json_names: HashSet<&str> = json["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();

    let html = String::from_utf8(render(&report, ".html")).unwrap();
    let folded = String::from_utf8(render(&report, ".folded")).unwrap();
    let frames: HashSet<&str> = folded
        .lines()
        .flat_map(|l| l.rsplit_once(' ').unwrap().0.split(';'))
        .collect();
    let svg = String::from_utf8(render(&report, ".svg")).unwrap();
    let txt = String::from_utf8(render(&report, ".txt")).unwrap();

    for name in names {
        assert!(csv_names.contains(name), "csv: {name:?}");
        assert!(json_names.contains(name), "json: {name:?}");
        let esc = html_escape(name)
            .replace('\n', "&#10;")
            .replace('\r', "&#13;");
        assert!(html.contains(&esc), "html: {name:?}");
        assert!(!html.contains(name), "html: raw {name:?}");
        let frame = tickprof::export::folded::frame(name);
        assert!(!frame.contains(';') && !frame.contains('\n'));
        assert!(frames.contains(frame.as_ref()), "folded: {frame:?}");
        let svg_esc = frame
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        assert!(
            svg.contains(&svg_esc) || svg.contains(&svg_esc.replace('\'', "&apos;")),
            "svg: {svg_esc:?}"
        );
        assert!(txt.contains(name.lines().next().unwrap()), "txt: {name:?}");
    }
    assert_eq!(
        tickprof::export::folded::frame(names[2]),
        "odd c  new line_7",
        "line break to spaces, trailing number kept from being a count"
    );
}

#[test]
fn unknown_extension_and_unwritable_path_are_errors_not_panics() {
    let _turn = crate::support::alone();
    fresh();
    let report = tickprof::report();
    let opts = TextOptions::default();
    let e = tickprof::export::render(&report, "out.xlsx", &opts).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let dir = temp_dir("unwritable");
    let missing = dir.join("no/such/dir/report.html");
    assert!(tickprof::export::write_to_path(&report, missing.to_str().unwrap(), &opts).is_err());
    let _ = std::fs::remove_dir_all(dir);
}

/// A fresh directory under the system temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "tickprof-export-{tag}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Set in the child process of [`tickprof_out_writes_every_format`].
const CHILD: &str = "TPTEST_EXPORT_CHILD";

known_profile!(out_case, "out <a> & \"a\"", "out b; ✓", "out c, C");

/// The child's work: returns at once unless run by the parent test.
#[test]
fn child_writes_tickprof_out() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    out_case::a();
}

#[test]
fn tickprof_out_writes_every_format() {
    let _turn = crate::support::alone();
    fresh();
    let dir = temp_dir("out");
    let files = ["a.json", "b.html", "c.folded", "d.svg"];
    let out: Vec<String> = files
        .iter()
        .map(|f| dir.join(f).to_str().unwrap().to_owned())
        .collect();
    let run = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "export::child_writes_tickprof_out",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env(crate::support::child::ALLOCATOR, "system")
        .env("TICKPROF_OUT", out.join(","))
        .env_remove("TICKPROF")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "child failed:\n{stderr}");
    assert!(!stderr.contains("TICKPROF_OUT"), "{stderr}");
    let read = |i: usize| {
        std::fs::read_to_string(&out[i]).unwrap_or_else(|e| panic!("{}: {e}\n{stderr}", out[i]))
    };
    let (a, b) = ("out <a> & \"a\"", "out b; ✓");

    let json: serde_json::Value = serde_json::from_str(&read(0)).expect("a.json is JSON");
    assert_eq!(json["version"], 1);
    let sites = json["sites"].as_array().unwrap();
    let calls = |n: &str| {
        sites
            .iter()
            .find(|s| s["name"] == n)
            .map(|s| s["calls"].clone())
    };
    assert_eq!(calls(a), Some(1.into()));
    assert_eq!(calls(b), Some(3.into()));

    let html = read(1);
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "b.html is the HTML page"
    );
    let (ids, links) = ids_and_links(&html);
    assert!(links.iter().all(|l| ids.contains(l)));
    assert!(html.contains(&html_escape(a)));

    let folded = read(2);
    let lines = parse_folded(&folded);
    let fb = tickprof::export::folded::frame(b).into_owned();
    assert!(
        lines.iter().any(|(p, _)| p == &[a.to_owned(), fb.clone()]),
        "c.folded has the a;b path:\n{folded}"
    );

    let svg = read(3);
    assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("out &lt;a&gt; &amp; &quot;a&quot;"));
    let _ = std::fs::remove_dir_all(dir);
}
