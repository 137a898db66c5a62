//! Names made to fit one output: a text column, a terminal line, a
//! spreadsheet cell.

use std::borrow::Cow;

/// Fits `name` into `max_chars` characters for a text column.
///
/// Returns `name` itself when it fits. Otherwise keeps the start (the
/// crate) and the end (the method) and puts `…` in place of the middle:
///
/// 1. Whole path segments when that fits: one run of consecutive segments
///    between the first and the last, each a plain identifier (not
///    `Type as Trait>` or `Vec<u8>`), so brackets stay balanced. The run
///    that ends earliest is chosen, and of those the shortest, keeping the
///    segments nearest the method: `myapp::…::Parser::next_token`,
///    `<semver::…::Version as FromStr>::from_str`.
/// 2. Else every such run, then characters from the middle of what is left
///    (a third of the room for the start, the rest for the end):
///    `myapp::pa…ng_method_name`.
///
/// Counts `char`s and never splits one; the result has at most `max_chars`
/// of them (is empty when `max_chars` is 0). For the text table only: the
/// files (CSV, JSON, HTML) carry the full name.
// Used by the text writer once it is wired to it.
pub(crate) fn abbreviate(name: &str, max_chars: usize) -> Cow<'_, str> {
    if name.chars().count() <= max_chars {
        return Cow::Borrowed(name);
    }
    let segments: Vec<&str> = name.split("::").collect();
    if let Some(shorter) = elide_segments(&segments, max_chars) {
        return Cow::Owned(shorter);
    }
    let runs = plain_runs(&segments);
    let all_runs_elided = if runs.is_empty() {
        name.to_owned()
    } else {
        join_eliding(&segments, &runs)
    };
    Cow::Owned(elide_chars(&all_runs_elided, max_chars))
}

/// The ellipsis that stands for what was left out.
const ELLIPSIS: char = '…';

/// Whether a segment can be left out without unbalancing brackets (an
/// identifier or a `{{closure}}`).
fn is_plain(segment: &str) -> bool {
    !segment.is_empty()
        && !segment
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '<' | '>' | '(' | ')' | '[' | ']'))
}

/// The maximal runs `[start, end)` of plain segments strictly between the
/// first and the last segment.
fn plain_runs(segments: &[&str]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, segment) in segments
        .iter()
        .enumerate()
        .take(segments.len().saturating_sub(1))
        .skip(1)
    {
        match (is_plain(segment), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, segments.len() - 1));
    }
    runs
}

/// Step 1 of [`abbreviate`]: one run of plain segments replaced by `…`.
fn elide_segments(segments: &[&str], max_chars: usize) -> Option<String> {
    // prefix[i]: chars of segments[..i] with their `::` separators.
    let mut prefix = Vec::with_capacity(segments.len() + 1);
    prefix.push(0usize);
    for segment in segments {
        prefix.push(prefix.last().copied().unwrap_or(0) + segment.chars().count() + 2);
    }
    let total = prefix.last().copied().unwrap_or(0).saturating_sub(2);
    // Leaving out segments [i, j) (j > i) removes their chars and the `::`
    // between them, and adds one `…`.
    let shown = |i: usize, j: usize| total - (prefix[j] - prefix[i] - 2) + 1;
    let mut best: Option<(usize, usize)> = None;
    for (start, end) in plain_runs(segments) {
        for j in start + 1..=end {
            if best.is_some_and(|(_, bj)| bj <= j) {
                break;
            }
            // Fewer chars are shown the longer the run: if the whole run up
            // to j is too long, every shorter one is.
            if shown(start, j) > max_chars {
                continue;
            }
            // The latest start that fits is the shortest run ending at j.
            if let Some(i) = (start..j).rev().find(|&i| shown(i, j) <= max_chars) {
                best = Some((i, j));
                break;
            }
        }
    }
    best.map(|run| join_eliding(segments, &[run]))
}

/// The segments joined by `::`, each run `[start, end)` replaced by `…`.
fn join_eliding(segments: &[&str], runs: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < segments.len() {
        if i > 0 {
            out.push_str("::");
        }
        match runs.iter().find(|&&(start, _)| start == i) {
            Some(&(_, end)) => {
                out.push(ELLIPSIS);
                i = end;
            }
            None => {
                out.push_str(segments[i]);
                i += 1;
            }
        }
    }
    out
}

/// Step 2 of [`abbreviate`]: the middle characters replaced by `…`.
fn elide_chars(name: &str, max_chars: usize) -> String {
    let total = name.chars().count();
    if total <= max_chars {
        return name.to_owned();
    }
    let Some(room) = max_chars.checked_sub(1) else {
        return String::new();
    };
    let head = room / 3;
    let tail = room - head;
    let mut out: String = name.chars().take(head).collect();
    out.push(ELLIPSIS);
    out.extend(name.chars().skip(total - tail));
    out
}

/// Makes `name` safe to print as part of one line on a terminal.
///
/// - Control characters (C0, DEL, C1, which include newline, tab, escape
///   and `\u{85}`) and the line and paragraph separators U+2028/U+2029
///   become a space, as they would break the line or drive the terminal.
/// - Bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
///   U+2066–U+2069), which can make the text display in another order than
///   it is stored ("Trojan Source"), and invisible characters that can
///   make two different names look the same — zero-width space U+200B,
///   word joiner and invisible operators U+2060–U+2064, deprecated format
///   controls U+206A–U+206F, the byte order mark U+FEFF, the soft hyphen
///   U+00AD, the Mongolian vowel separator U+180E, interlinear annotation
///   U+FFF9–U+FFFB and tag characters U+E0000–U+E007F — are shown as
///   visible escapes such as `\u{202e}`.
/// - Zero-width joiner and non-joiner (U+200C, U+200D) and variation
///   selectors are kept: they are legitimate in labels (emoji sequences,
///   Persian and Indic scripts) and do not reorder text.
// Used by the text and CSV writers once they are wired to it.
pub(crate) fn terminal_safe(name: &str) -> Cow<'_, str> {
    if !name.chars().any(|c| is_line_breaking(c) || is_hidden(c)) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 16);
    for c in name.chars() {
        if is_line_breaking(c) {
            out.push(' ');
        } else if is_hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Characters that would break or drive a terminal line.
pub(super) fn is_line_breaking(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Bidirectional controls and invisible format characters.
pub(super) fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Neutralises a CSV field that a spreadsheet would run as a formula.
///
/// Following OWASP's CSV injection advice, a field starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return gets a leading `'`, which
/// spreadsheets take as "text" and do not show. Function paths cannot start
/// with these (they start with an identifier or `<`), but custom names
/// (`#[profile(name = "...")]`, `prof_scope!("...")` labels used as whole
/// names) can. The CSV writer must still quote the field as CSV requires
/// (commas, quotes, newlines); this only guards the first character.
// Used by the text and CSV writers once they are wired to it.
pub(crate) fn spreadsheet_safe(field: &str) -> Cow<'_, str> {
    if field.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{field}"))
    } else {
        Cow::Borrowed(field)
    }
}
