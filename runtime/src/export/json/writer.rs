//! A small JSON writer into a `String`, in the layout of serde_json's
//! compact and pretty printers.

use std::fmt::Write as _;

/// A small JSON writer into a `String`: compact, or pretty-printed the way
/// `serde_json` does it (two-space indent, `"key": value`, `[]` and `{}`
/// for empty containers).
///
/// Values are written in order: `key` then a value inside an object,
/// values alone inside an array (the writer puts the commas). Unbalanced
/// calls give invalid JSON but never panic.
pub(crate) struct Writer<'a> {
    out: &'a mut String,
    pretty: bool,
    depth: usize,
    /// The open container has no element yet.
    empty: bool,
    /// A key was just written: the value goes on the same line.
    after_key: bool,
}

impl<'a> Writer<'a> {
    /// A pretty-printing writer appending to `out`.
    pub(crate) fn pretty(out: &'a mut String) -> Self {
        Writer {
            out,
            pretty: true,
            depth: 0,
            empty: true,
            after_key: false,
        }
    }

    /// A compact writer (no whitespace) appending to `out`.
    pub(crate) fn compact(out: &'a mut String) -> Self {
        Writer {
            pretty: false,
            ..Writer::pretty(out)
        }
    }

    /// Before a value: the separator and indentation an array element
    /// needs, nothing after a key.
    pub(crate) fn value_start(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if self.depth > 0 {
            if !self.empty {
                self.out.push(',');
            }
            self.newline();
        }
        self.empty = false;
    }

    pub(crate) fn newline(&mut self) {
        if self.pretty {
            self.out.push('\n');
            for _ in 0..self.depth {
                self.out.push_str("  ");
            }
        }
    }

    /// An object key (escaped), then `: `.
    pub(crate) fn key(&mut self, k: &str) {
        self.value_start();
        push_str_literal(self.out, k);
        self.out.push(':');
        if self.pretty {
            self.out.push(' ');
        }
        self.after_key = true;
    }

    /// Opens an object.
    pub(crate) fn begin_object(&mut self) {
        self.value_start();
        self.out.push('{');
        self.depth += 1;
        self.empty = true;
    }

    /// Closes an object.
    pub(crate) fn end_object(&mut self) {
        self.end('}');
    }

    /// Opens an array.
    pub(crate) fn begin_array(&mut self) {
        self.value_start();
        self.out.push('[');
        self.depth += 1;
        self.empty = true;
    }

    /// Closes an array.
    pub(crate) fn end_array(&mut self) {
        self.end(']');
    }

    pub(crate) fn end(&mut self, c: char) {
        self.depth = self.depth.saturating_sub(1);
        if !self.empty {
            self.newline();
        }
        self.out.push(c);
        self.empty = false;
        self.after_key = false;
    }

    /// An array of `items`, each written by `each`.
    pub(crate) fn array<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.begin_array();
        for item in items {
            each(self, item);
        }
        self.end_array();
    }

    /// A string value.
    pub(crate) fn str(&mut self, s: &str) {
        self.value_start();
        push_str_literal(self.out, s);
    }

    /// An unsigned integer value.
    pub(crate) fn u64(&mut self, n: u64) {
        self.value_start();
        let _ = write!(self.out, "{n}");
    }

    /// A float value (`null` unless finite).
    pub(crate) fn f64(&mut self, x: f64) {
        self.value_start();
        push_f64(self.out, x);
    }

    /// `true` or `false`.
    pub(crate) fn bool(&mut self, b: bool) {
        self.value_start();
        self.out.push_str(if b { "true" } else { "false" });
    }

    /// `null`.
    pub(crate) fn null(&mut self) {
        self.value_start();
        self.out.push_str("null");
    }
}

/// Appends `s` as a JSON string literal: quoted, with `"` and `\` escaped,
/// control characters as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00XX` (the
/// escapes `serde_json` writes). Everything else, non-ASCII included, is
/// kept as is.
///
/// Inside an HTML `<script>`, also replace `<` (see the HTML writer): JSON
/// does not escape it.
pub(crate) fn push_str_literal(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0A => "\\n",
            0x0C => "\\f",
            0x0D => "\\r",
            0x00..=0x1F => "",
            _ => continue,
        };
        // Escaped bytes are ASCII, so `i` and `i + 1` are char boundaries.
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends `x` as a JSON number in the shortest form that reads back as the
/// same `f64`, laid out as `serde_json` does: plain decimals for exponents
/// -5 to 15 (`3.0`, `0.00001`, `123456789.5`), otherwise `1.5e+16`,
/// `1e-7`. A NaN or an infinity is written as `null`, as `serde_json` does.
pub(crate) fn push_f64(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    // `{:e}` gives the shortest round-trip digits: `-1.2345e-7`, `3e0`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mantissa = match mantissa.strip_prefix('-') {
        Some(m) => {
            out.push('-');
            m
        }
        None => mantissa,
    };
    let (first, rest) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = || first.chars().chain(rest.chars());
    let len = (first.len() + rest.len()) as i32;
    let zeros = |out: &mut String, n: i32| (0..n).for_each(|_| out.push('0'));
    if (-5..=15).contains(&exp) {
        if exp >= len - 1 {
            // 1234e7 -> 12340000000.0
            out.extend(digits());
            zeros(out, exp - (len - 1));
            out.push_str(".0");
        } else if exp >= 0 {
            // 1234e-2 -> 12.34
            let int = (exp + 1) as usize;
            out.extend(digits().take(int));
            out.push('.');
            out.extend(digits().skip(int));
        } else {
            // 1234e-6 -> 0.001234
            out.push_str("0.");
            zeros(out, -exp - 1);
            out.extend(digits());
        }
    } else {
        // 1234e30 -> 1.234e+33
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(
            out,
            "e{}{}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
    }
}
