//! Every report format, written for a small search-engine program.
//!
//! Run it with `cargo run --release --example report_gallery`. It builds an
//! inverted index over synthetic documents on two threads, answers a few
//! queries, then writes the profile in every format tickprof knows into
//! `target/report-gallery/`:
//!
//! | file | open it with |
//! |---|---|
//! | `report.txt` | any text viewer |
//! | `report.csv` | a spreadsheet, or `csv`-reading tools |
//! | `report.json` | `jq`, or any JSON reader |
//! | `report.html` | a web browser |
//! | `report.folded` | `inferno-flamegraph`, speedscope, `flamegraph.pl` |
//! | `report.svg` | a web browser (interactive flamegraph) |
//! | `report.trace.json` | Perfetto / `chrome://tracing` (when available) |
//!
//! It also writes `large.html`: the page for a synthetic profile of 10,000
//! sites, to check that the page stays usable at that size.
//!
//! Options: `--out DIR` (default `target/report-gallery` in the workspace),
//! `--large N` (sites in `large.html`, default 10,000; 0 skips it).
//!
//! Some sites have deliberately awkward names (markup, quotes, commas,
//! semicolons, non-ASCII) to show that every format escapes them.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use tickprof::{prof_scope, profile, Report, TextOptions};

/// Makes `n` documents of pseudo-random words, deterministically.
#[profile]
fn generate_docs(n: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "profile",
        "Rust",
        "tick",
        "counter",
        "stack",
        "frame",
        "flame",
        "graph",
        "call",
        "site",
        "thread",
        "report",
        "guard",
        "clock",
        "cycle",
        "cache",
        "branch",
        "inline",
        "Drop",
        "unwind",
        "naïve",
        "café",
        "Überblick",
        "検索",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            let len = 40 + (seed % 60) as usize;
            let mut doc = String::new();
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                doc.push_str(WORDS[(seed % WORDS.len() as u64) as usize]);
                doc.push(if seed % 11 == 0 { '.' } else { ' ' });
            }
            doc
        })
        .collect()
}

/// Splits a document into lower-case terms.
#[profile]
fn tokenize(doc: &str) -> Vec<String> {
    doc.split(|c: char| c.is_whitespace() || c == '.')
        .filter(|w| !w.is_empty())
        .map(normalize)
        .collect()
}

/// Lower-cases one term.
#[profile]
fn normalize(word: &str) -> String {
    word.to_lowercase()
}

/// Term → (document, occurrences).
#[derive(Default)]
struct Index {
    postings: HashMap<String, Vec<(usize, u32)>>,
    lengths: Vec<usize>,
}

impl Index {
    /// Adds one document's terms.
    #[profile]
    fn insert(&mut self, doc: usize, terms: &[String]) {
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for t in terms {
            *counts.entry(t).or_default() += 1;
        }
        for (t, n) in counts {
            self.postings
                .entry(t.to_owned())
                .or_default()
                .push((doc, n));
        }
        if self.lengths.len() <= doc {
            self.lengths.resize(doc + 1, 0);
        }
        self.lengths[doc] = terms.len();
    }

    /// Merges another index built over other documents.
    #[profile]
    fn merge(&mut self, other: Index) {
        for (t, mut p) in other.postings {
            prof_scope!("postings; append");
            self.postings.entry(t).or_default().append(&mut p);
        }
        if self.lengths.len() < other.lengths.len() {
            self.lengths.resize(other.lengths.len(), 0);
        }
        for (i, n) in other.lengths.into_iter().enumerate() {
            if n > 0 {
                self.lengths[i] = n;
            }
        }
    }

    /// Documents matching every term, best first.
    #[profile]
    fn search(&self, query: &str) -> Vec<(usize, f64)> {
        let terms = tokenize(query);
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for t in &terms {
            if let Some(p) = self.postings.get(t) {
                for &(doc, n) in p {
                    *scores.entry(doc).or_default() += score(n, self.lengths[doc], p.len());
                }
            }
        }
        let mut v: Vec<_> = scores.into_iter().collect();
        rank(&mut v);
        v.truncate(10);
        v
    }
}

/// A BM25-like term score.
#[profile(name = "score<Bm25, f64>")]
fn score(occurrences: u32, doc_len: usize, doc_freq: usize) -> f64 {
    let tf = f64::from(occurrences);
    let idf = (1.0 + 1000.0 / (doc_freq as f64 + 0.5)).ln();
    idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * doc_len as f64 / 70.0))
}

/// Sorts results by score, recursively (a merge sort, to show recursion).
#[profile]
fn rank(v: &mut [(usize, f64)]) {
    if v.len() <= 16 {
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        return;
    }
    let mid = v.len() / 2;
    let (a, b) = v.split_at_mut(mid);
    rank(a);
    rank(b);
    let mut merged = Vec::with_capacity(v.len());
    let (mut i, mut j) = (0, mid);
    while i < mid && j < v.len() {
        if v[j].1 > v[i].1 {
            merged.push(v[j]);
            j += 1;
        } else {
            merged.push(v[i]);
            i += 1;
        }
    }
    merged.extend_from_slice(&v[i..mid]);
    merged.extend_from_slice(&v[j..]);
    v.copy_from_slice(&merged);
}

/// Formats one result line.
#[profile(name = "render \"results\" & <html>, naïvely")]
fn render_results(results: &[(usize, f64)]) -> String {
    results
        .iter()
        .map(|(d, s)| format!("doc {d} ({s:.2})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A site whose name is markup: every format must show it as text.
#[profile(name = "<script>window.tickprofInjected=1</script>")]
fn hostile_script() -> u32 {
    std::hint::black_box(1)
}

/// A site whose name is an image tag with a handler.
#[profile(name = "<img src=x onerror=\"window.tickprofInjected=2\">")]
fn hostile_img() -> u32 {
    std::hint::black_box(2)
}

/// A site with a semicolon, a newline and a count-like tail in its name.
#[profile(name = "<[u8; 4] as Décode>::line\nbreak 42")]
fn awkward() -> u32 {
    std::hint::black_box(3)
}

/// Builds an index over `docs`, numbering them from `first`.
#[profile]
fn build(docs: &[String], first: usize) -> Index {
    let mut index = Index::default();
    for (i, d) in docs.iter().enumerate() {
        let terms = tokenize(d);
        index.insert(first + i, &terms);
    }
    index
}

/// A report of `n` synthetic sites shaped like a real one (a binary call
/// tree), made by cloning `real`'s first site and tree node, so it keeps
/// working when the report gains fields.
fn synthetic(real: &Report, n: usize) -> Option<Report> {
    let template = real.sites.first()?.clone();
    let node = real.tree.get(1)?.clone();
    let any_edge = real.sites.iter().flat_map(|s| &s.callers).next()?.clone();
    let mut r = real.clone();
    r.sites.clear();
    r.threads.clear();
    r.tree.truncate(1);
    let name = |i: usize| format!("app::module_{}::Worker<T, {}>::step_{i}", i % 97, i % 7);
    for i in 0..n {
        let mut s = template.clone();
        s.name = name(i);
        s.function = s.name.clone();
        s.calls = 1 + (i as u64 * 7919) % 10_000;
        s.total_ns = 1_000_000_000 / (i as u64 + 1);
        s.self_ns = s.total_ns / 3;
        s.mean_ns = s.total_ns as f64 / s.calls as f64;
        s.min_ns = 10;
        s.max_ns = s.total_ns;
        s.callers.clear();
        s.callees.clear();
        let mut edge = any_edge.clone();
        if i > 0 {
            edge.name = name((i - 1) / 2);
            edge.calls = s.calls;
            edge.total_ns = s.total_ns;
            s.callers.push(edge.clone());
        }
        for c in [2 * i + 1, 2 * i + 2] {
            if c < n {
                edge.name = name(c);
                edge.total_ns = 1_000_000_000 / (c as u64 + 1);
                s.callees.push(edge.clone());
            }
        }
        r.sites.push(s);
        let mut t = node.clone();
        t.name = name(i);
        t.parent = Some(if i == 0 { 0 } else { (i - 1) / 2 + 1 });
        r.tree.push(t);
    }
    Some(r)
}

fn main() {
    let mut out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/report-gallery");
    let mut large = 10_000;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--out", Some(v)) => out = PathBuf::from(v),
            ("--large", Some(v)) => match v.parse() {
                Ok(n) => large = n,
                Err(_) => return eprintln!("report_gallery: --large wants a number, got {v:?}"),
            },
            _ => return eprintln!("usage: report_gallery [--out DIR] [--large N]"),
        }
    }

    let docs = generate_docs(4_000);
    let (a, b) = docs.split_at(docs.len() / 2);
    let (mut index, other) = std::thread::scope(|s| {
        let h1 = s.spawn(|| build(a, 0));
        let h2 = s.spawn(|| build(b, a.len()));
        (h1.join().unwrap(), h2.join().unwrap())
    });
    index.merge(other);
    let mut shown = 0;
    for q in [
        "flame graph",
        "rust stack",
        "café naïve",
        "cache branch inline",
        "検索 report",
    ] {
        let hits = index.search(q);
        shown += render_results(&hits).len();
    }
    println!(
        "indexed {} documents, {} terms; {shown} bytes of results",
        docs.len(),
        index.postings.len()
    );
    hostile_script();
    hostile_img();
    awkward();

    let report = tickprof::report();
    if let Err(e) = std::fs::create_dir_all(&out) {
        return eprintln!("report_gallery: cannot create {}: {e}", out.display());
    }
    let opts = TextOptions::default().with_tree(true).with_threads(true);
    let mut files: Vec<(PathBuf, &Report)> =
        ["txt", "csv", "json", "html", "folded", "svg", "trace.json"]
            .iter()
            .map(|ext| (out.join(format!("report.{ext}")), &report))
            .collect();
    let big = if large > 0 {
        synthetic(&report, large)
    } else {
        None
    };
    if let Some(big) = &big {
        files.push((out.join("large.html"), big));
    }
    let mut failed = false;
    for (path, r) in files {
        let p = path.to_string_lossy();
        match tickprof::export::write_to_path(r, &p, &opts) {
            Ok(()) => println!("wrote {p}"),
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                println!("skipped {p}: {e}")
            }
            Err(e) => {
                eprintln!("report_gallery: cannot write {p}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
