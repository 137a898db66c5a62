//! A small JSON reader: RFC 8259 text into a [`Value`] tree, with bounded
//! nesting and an error (never a panic) for any input. It reads untrusted
//! files (`tickprof show`, `tickprof diff`).

use std::fmt;

/// Containers nested deeper than this are an error (a report nests 5 deep).
pub(crate) const MAX_NESTING: usize = 64;

/// A JSON value. Objects keep their members in order; a key given twice
/// means its last value (as serde_json reads it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// A JSON number: its value as a float, and as a whole number when it is a
/// non-negative integer literal that fits a `u64` (no fraction, no
/// exponent), as serde_json tells them apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Number {
    pub(crate) float: f64,
    pub(crate) whole: Option<u64>,
}

/// Why a text is not JSON: what was wrong, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) what: &'static str,
    pub(crate) offset: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

/// Parses one JSON document (surrounding whitespace allowed).
pub(crate) fn parse(text: &str) -> Result<Value, SyntaxError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return p.err("trailing characters");
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn err<T>(&self, what: &'static str) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            what,
            offset: self.i,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.s.get(self.i..).is_some_and(|r| r.starts_with(lit)) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, nesting: usize) -> Result<Value, SyntaxError> {
        self.ws();
        match self.peek() {
            None => self.err("unexpected end of input"),
            Some(b'{' | b'[') if nesting >= MAX_NESTING => self.err("nesting too deep"),
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.eat(b"}") {
                    return Ok(Value::Object(members));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return self.err("expected a key");
                    }
                    let key = self.string()?;
                    self.ws();
                    if !self.eat(b":") {
                        return self.err("expected ':'");
                    }
                    members.push((key, self.value(nesting + 1)?));
                    self.ws();
                    if self.eat(b"}") {
                        return Ok(Value::Object(members));
                    }
                    if !self.eat(b",") {
                        return self.err("expected ',' or '}'");
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat(b"]") {
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value(nesting + 1)?);
                    self.ws();
                    if self.eat(b"]") {
                        return Ok(Value::Array(items));
                    }
                    if !self.eat(b",") {
                        return self.err("expected ',' or ']'");
                    }
                }
            }
            Some(b'"') => self.string().map(Value::String),
            Some(b'n') if self.eat(b"null") => Ok(Value::Null),
            Some(b't') if self.eat(b"true") => Ok(Value::Bool(true)),
            Some(b'f') if self.eat(b"false") => Ok(Value::Bool(false)),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(_) => self.err("expected a value"),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<Number, SyntaxError> {
        let start = self.i;
        let negative = self.eat(b"-");
        let int_start = self.i;
        match self.digits() {
            0 => return self.err("expected a digit"),
            n if n > 1 && self.s[int_start] == b'0' => {
                self.i = int_start;
                return self.err("leading zero");
            }
            _ => {}
        }
        let mut whole = !negative;
        if self.eat(b".") {
            whole = false;
            if self.digits() == 0 {
                return self.err("expected a digit after '.'");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            whole = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.err("expected a digit in the exponent");
            }
        }
        // The grammar above is a subset of what `f64::from_str` reads, and
        // all ASCII, so the slice is on char boundaries.
        let text = self.text.get(start..self.i).unwrap_or("");
        let float: f64 = match text.parse() {
            Ok(x) if f64::is_finite(x) => x,
            _ => {
                self.i = start;
                return self.err("number out of range");
            }
        };
        let whole = if whole { text.parse().ok() } else { None };
        Ok(Number { float, whole })
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let code = self
            .s
            .get(self.i..self.i + 4)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        match code {
            Some(c) => {
                self.i += 4;
                Ok(c)
            }
            None => self.err("expected four hex digits after \\u"),
        }
    }

    /// A string, the opening quote next.
    fn string(&mut self) -> Result<String, SyntaxError> {
        self.i += 1;
        let mut out = String::new();
        let mut run = self.i;
        loop {
            match self.peek() {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    out.push_str(self.text.get(run..self.i).unwrap_or(""));
                    self.i += 1;
                    return Ok(out);
                }
                Some(0..=0x1F) => return self.err("control character in a string"),
                Some(b'\\') => {
                    // Runs end before a backslash (ASCII): a char boundary.
                    out.push_str(self.text.get(run..self.i).unwrap_or(""));
                    self.i += 1;
                    let Some(c) = self.peek() else {
                        return self.err("unterminated escape");
                    };
                    self.i += 1;
                    let ch = match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => {
                            self.i -= 1;
                            return self.err("unknown escape");
                        }
                    };
                    out.push(ch);
                    run = self.i;
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// The character of a `\uXXXX` escape (a surrogate pair: two escapes),
    /// `\u` just read.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let hi = self.hex4()?;
        let code = match hi {
            0xD800..=0xDBFF => {
                if !self.eat(b"\\u") {
                    return self.err("lone surrogate in \\u escape");
                }
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return self.err("lone surrogate in \\u escape");
                }
                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
            }
            0xDC00..=0xDFFF => return self.err("lone surrogate in \\u escape"),
            c => c,
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.err("invalid \\u escape"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same_as_serde(text: &str) {
        let ours = parse(text);
        let theirs = serde_json::from_str::<serde_json::Value>(text);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert!(equal(a, b), "{text:?}: {a:?} vs {b:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{text:?}: ours {ours:?}, serde_json {theirs:?}"),
        }
    }

    /// The same value; numbers by their float, and whole the same way.
    fn equal(a: &Value, b: &serde_json::Value) -> bool {
        use serde_json::Value as S;
        match (a, b) {
            (Value::Null, S::Null) => true,
            (Value::Bool(x), S::Bool(y)) => x == y,
            (Value::Number(n), S::Number(m)) => {
                // `-0`: serde_json may read it as the integer 0.
                m.as_f64() == Some(n.float) && (n.whole == m.as_u64() || n.float == 0.0)
            }
            (Value::String(x), S::String(y)) => x == y,
            (Value::Array(x), S::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
            }
            (Value::Object(x), S::Object(y)) => {
                let mut last = std::collections::BTreeMap::new();
                for (k, v) in x {
                    last.insert(k, v);
                }
                last.len() == y.len()
                    && last
                        .iter()
                        .all(|(k, v)| y.get(k.as_str()).is_some_and(|w| equal(v, w)))
            }
            _ => false,
        }
    }

    #[test]
    fn reads_what_serde_json_reads_and_rejects_what_it_rejects() {
        for text in [
            "null",
            " true ",
            "false",
            "0",
            "-0",
            "12",
            "18446744073709551615",
            "18446744073709551616",
            "-5",
            "1.5",
            "1e3",
            "1E-3",
            "2.5e+10",
            "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83e\\udd80\"",
            "\"ß 中文 🦀\"",
            "[]",
            "{}",
            "[1, [2, {\"a\": []}]]",
            "{\"a\": 1, \"a\": 2}",
            "",
            "nul",
            "tru",
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "-",
            "[1,]",
            "{\"a\" 1}",
            "{\"a\": 1,}",
            "{1: 2}",
            "\"unterminated",
            "\"bad \\x escape\"",
            "\"raw \n newline\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\u12\"",
            "[1] x",
            "1e999",
            "NaN",
        ] {
            same_as_serde(text);
        }
    }

    #[test]
    fn nesting_is_bounded_without_a_stack_overflow() {
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(parse(&ok).is_ok());
        let deep = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert_eq!(parse(&deep).unwrap_err().what, "nesting too deep");
        let huge = "{\"a\":".repeat(1_000_000);
        assert_eq!(parse(&huge).unwrap_err().what, "nesting too deep");
    }

    proptest! {
        #[test]
        fn any_text_gives_a_value_or_an_error(text in "\\PC{0,64}") {
            let _ = parse(&text);
        }

        #[test]
        fn json_like_text_reads_as_serde_json_reads_it(
            text in "[\\[\\]{}\",:0-9.eE+\\-a-z\\\\ ]{0,40}"
        ) {
            same_as_serde(&text);
        }
    }
}
