//! The docs hold together: every relative link of the README, CONTRIBUTING,
//! the command's README and the `docs/` pages points at a file that exists,
//! and a `#fragment` at one of that file's headings (GitHub's anchors); the
//! README stays a front page of at most 300 lines.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The README's budget (the project's rule for a front page).
const README_MAX_LINES: usize = 300;

/// The repository's root (this package lives in `testsuite/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testsuite/ has a parent")
        .to_path_buf()
}

/// The markdown files whose links are checked, relative to the root.
fn doc_files() -> Vec<PathBuf> {
    let root = root();
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "cli/README.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut pages: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(&root).expect("under the root").to_path_buf())
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// The text of `md` outside fenced code blocks, one entry per line (fenced
/// lines become empty, so line numbers stay right).
fn prose_lines(md: &str) -> Vec<String> {
    let mut fence: Option<(char, usize)> = None;
    md.lines()
        .map(|line| {
            let t = line.trim_start();
            let marker = t.chars().next().filter(|c| *c == '`' || *c == '~');
            let run = marker.map_or(0, |m| t.chars().take_while(|c| *c == m).count());
            match (fence, marker) {
                (None, Some(m)) if run >= 3 => {
                    fence = Some((m, run));
                    String::new()
                }
                (Some((m, n)), Some(c)) if c == m && run >= n && t[run..].trim().is_empty() => {
                    fence = None;
                    String::new()
                }
                (Some(_), _) => String::new(),
                (None, _) => line.to_string(),
            }
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, every other
/// character that is not a letter, digit, `-` or `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown file's headings, with GitHub's `-1`, `-2`, …
/// for repeated ones.
fn anchors(md: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose_lines(md) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().trim_end_matches('#').trim_end();
        let base = slug(text);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// Removes inline code spans (`` `…` ``), whose brackets are not links.
fn without_code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        match after.find(&closing) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                out.push_str(&rest[start..start + ticks]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links `[text](target)` and images of `md`, with
/// the line of each target; a link's text may span lines.
fn links(md: &str) -> Vec<(usize, String)> {
    let prose = prose_lines(md);
    let mut found = Vec::new();
    // Paragraphs joined, so a link text broken over two lines is found too.
    let mut para: Vec<(usize, String)> = Vec::new();
    let mut flush = |para: &mut Vec<(usize, String)>| {
        let joined: String = para
            .iter()
            .map(|(_, l)| without_code_spans(l))
            .collect::<Vec<_>>()
            .join("\n");
        let starts: Vec<usize> = para.iter().map(|(n, _)| *n).collect();
        let mut offset = 0;
        while let Some(i) = joined[offset..].find("](") {
            let begin = offset + i + 2;
            let end = joined[begin..]
                .find([')', ' ', '\n'])
                .map_or(joined.len(), |e| begin + e);
            let line_index = joined[..begin].matches('\n').count();
            found.push((starts[line_index], joined[begin..end].to_string()));
            offset = end;
        }
        para.clear();
    };
    for (i, line) in prose.iter().enumerate() {
        if line.trim().is_empty() {
            flush(&mut para);
        } else {
            para.push((i + 1, line.clone()));
        }
    }
    flush(&mut para);
    found
}

/// Every broken link of `file` (relative to the root), as messages.
fn broken_links(file: &Path) -> Vec<String> {
    let root = root();
    let md = fs::read_to_string(root.join(file)).expect("the file is readable");
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut broken = Vec::new();
    for (line, target) in links(&md) {
        if target.starts_with("http://")
            || target.starts_with("https://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        let (path, fragment) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target.as_str(), None),
        };
        let where_ = format!("{}:{line}: ({target})", file.display());
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        let full = root.join(&resolved);
        if !full.exists() {
            broken.push(format!("{where_}: no file {}", resolved.display()));
            continue;
        }
        let Some(fragment) = fragment else { continue };
        if full.extension().is_none_or(|x| x != "md") {
            broken.push(format!(
                "{where_}: a #fragment on a file that is not markdown"
            ));
            continue;
        }
        let text = fs::read_to_string(&full).expect("the target is readable");
        if !anchors(&text).contains(fragment) {
            broken.push(format!(
                "{where_}: {} has no heading with the anchor #{fragment}",
                resolved.display()
            ));
        }
    }
    broken
}

#[test]
fn every_relative_link_resolves() {
    let files = doc_files();
    assert!(files.len() > 3, "docs/ holds the pages the README links to");
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn readme_is_a_front_page() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; at most {README_MAX_LINES}: move the detail to docs/"
    );
}

#[test]
fn anchors_follow_github() {
    let md = "# Title\n## criterion's `--profile-time`\n## Trace log (`TICKPROF_LOG`)\n\
              ```sh\n# not a heading\n```\n## `#[profile]`\n## Title\n";
    let expected: BTreeSet<String> = [
        "title",
        "criterions---profile-time",
        "trace-log-tickprof_log",
        "profile",
        "title-1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(anchors(md), expected);
}

#[test]
fn links_are_found_across_lines_and_not_in_code() {
    let md = "See [a\nb](x.md#y) and `[c](not-a-link)`.\n\n```text\n[d](nor-this)\n```\n\
              ![pic](img.png) [e](https://example.com)\n";
    let targets: Vec<(usize, String)> = links(md);
    assert_eq!(
        targets,
        vec![
            (2, "x.md#y".to_string()),
            (7, "img.png".to_string()),
            (7, "https://example.com".to_string()),
        ]
    );
}
