//! Paths in a source file that leave the workspace: a `#[path = "…"]`
//! attribute's and the literal of `include!`, `include_str!` or
//! `include_bytes!`, each relative to the file's directory. The copy lives
//! elsewhere, so such a path, still relative there, would name another
//! file or none (E0583, `couldn't read`): in the copy it becomes the
//! absolute path of what it named in the original. Paths inside the
//! workspace stay as written (they name the copy's, marked, files).

use std::path::Path;

/// What introduces a path literal: `#[path` then `=`, or a macro name then
/// `(`.
const STARTS: [(&str, char); 4] = [
    ("#[path", '='),
    ("include_str!", '('),
    ("include_bytes!", '('),
    ("include!", '('),
];

/// `text` (the file's source, in directory `dir`) with every path literal
/// that leaves `root` (canonical) made absolute; `None` when none does.
/// A literal with an escape, a path that does not exist or is not UTF-8
/// once resolved, and an absolute path are left as written.
pub(crate) fn rewrite(text: &str, dir: &Path, root: &Path) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some((start, end, path)) = next_literal(text, at) {
        at = end;
        if let Some(abs) = outside(path, dir, root) {
            out.push_str(&text[copied..start]);
            out.push_str(&abs);
            copied = end;
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Whether `text` has a path literal (`#[path]`, `include!` and its
/// kin) at all.
pub(crate) fn names_paths(text: &str) -> bool {
    next_literal(text, 0).is_some()
}

/// The next path literal at or after byte `from`: the byte range of its
/// content (between the quotes) and the content.
fn next_literal(text: &str, from: usize) -> Option<(usize, usize, &str)> {
    let mut from = from;
    loop {
        let (pos, word, sep) = STARTS
            .iter()
            .filter_map(|(w, sep)| text[from..].find(w).map(|p| (from + p, *w, *sep)))
            .min_by_key(|x| x.0)?;
        // `include!` is also the end of `my_include!`: a name must start
        // there.
        let ident_before = text[..pos]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        from = pos + word.len();
        if ident_before && !word.starts_with('#') {
            continue;
        }
        let rest = &text[from..];
        let rest_trim = rest.trim_start();
        let Some(after_sep) = rest_trim.strip_prefix(sep) else {
            continue;
        };
        let after_trim = after_sep.trim_start();
        let Some(lit) = after_trim.strip_prefix('"') else {
            continue;
        };
        let start = text.len() - lit.len();
        let len = lit.find('"')?;
        let path = &lit[..len];
        if path.contains('\\') || path.contains('\n') {
            from = start + len + 1;
            continue;
        }
        return Some((start, start + len, path));
    }
}

/// `path` made absolute when, resolved from `dir`, it names an existing
/// file outside `root`.
fn outside(path: &str, dir: &Path, root: &Path) -> Option<String> {
    let p = Path::new(path);
    if p.is_absolute() {
        return None;
    }
    let resolved = std::fs::canonicalize(dir.join(p)).ok()?;
    if resolved.starts_with(root) {
        return None;
    }
    resolved.to_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (std::path::PathBuf, std::path::PathBuf) {
        let base = std::env::temp_dir().join(format!("tickprof-escape-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("ws/src")).unwrap();
        std::fs::create_dir_all(base.join("ext")).unwrap();
        std::fs::write(base.join("ext/o.rs"), "").unwrap();
        std::fs::write(base.join("ws/src/in.rs"), "").unwrap();
        let base = std::fs::canonicalize(base).unwrap();
        (base.join("ws/src"), base.join("ws"))
    }

    #[test]
    fn only_paths_leaving_the_workspace_become_absolute() {
        let (dir, root) = tree();
        let ext = dir.join("../../ext/o.rs");
        let ext = std::fs::canonicalize(ext).unwrap();
        let ext = ext.to_str().unwrap();
        let src = concat!(
            "#[path = \"../../ext/o.rs\"]\nmod o;\n",
            "#[path=\"in.rs\"] mod i;\n",
            "const A: &str = include_str!( \"../../ext/o.rs\" );\n",
            "const B: &[u8] = include_bytes!(\"in.rs\");\n",
            "my_include!(\"../../ext/o.rs\");\n",
            "include!(\"../../ext/missing.rs\");\n",
            "include!(\"..\\\\..\\\\ext\\\\o.rs\");\n",
        );
        let out = rewrite(src, &dir, &root).unwrap();
        let want = src
            .replacen("\"../../ext/o.rs\"", &format!("\"{ext}\""), 2)
            .to_string();
        assert_eq!(out, want);
        assert!(out.contains("my_include!(\"../../ext/o.rs\")"));
        assert!(out.contains("#[path=\"in.rs\"]"));
        assert_eq!(rewrite("#[path = \"in.rs\"] mod i;", &dir, &root), None);
        assert_eq!(rewrite("include_str!(\"unterminated", &dir, &root), None);
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }
}
