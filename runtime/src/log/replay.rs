//! The trace log of a recorded `.trace.json` (what `TICKPROF_OUT=x.trace.json`
//! or `TICKPROF_TRACE=1` writes): a long run recorded cheaply, read later.

use super::render::Thread;
use super::LogOptions;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

/// Renders a `.trace.json` written by tickprof as the trace log
/// (`TICKPROF_LOG`'s format), one section per thread in thread-number
/// order, filtered by `opts`.
///
/// The trace holds each call's start and duration, so the call tree is
/// rebuilt by nesting: a call inside another's time span on the same thread
/// is its child. It does not record unwinding, so no line says `unwound`.
/// The `tickprof replay trace.json` command calls this.
///
/// # Errors
///
/// A message if `input` is not JSON in the Chrome trace format, or if
/// writing to `out` fails.
///
/// # Examples
///
/// ```
/// let trace = r#"{"traceEvents":[
///   {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
///   {"ph":"X","name":"leaf","pid":1,"tid":1,"ts":1.0,"dur":0.5},
///   {"ph":"X","name":"root","pid":1,"tid":1,"ts":0.0,"dur":3.0}]}"#;
/// let mut out = Vec::new();
/// let opts = tickprof_runtime::log::LogOptions::default();
/// tickprof_runtime::log::replay_trace_json(trace, &mut out, &opts).unwrap();
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "# thread 1: main\n[1] root() {\n[1]   leaf();  500 ns\n[1] } 3.00 µs /* root */\n"
/// );
/// ```
pub fn replay_trace_json(
    input: &str,
    out: &mut dyn Write,
    opts: &LogOptions,
) -> Result<(), String> {
    let root = json::parse(input)?;
    let events = root
        .get("traceEvents")
        .and_then(json::Value::as_array)
        .ok_or("no \"traceEvents\" array: not a Chrome trace")?;
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    // Per thread: (start ns, end ns, name).
    let mut calls: BTreeMap<u64, Vec<(i64, i64, &str)>> = BTreeMap::new();
    for e in events {
        let tid = e.get("tid").and_then(json::Value::as_f64).unwrap_or(0.0) as u64;
        match e.get("ph").and_then(json::Value::as_str) {
            Some("M") => {
                if let Some(n) = e
                    .get("args")
                    .and_then(|a| a.get("name"))
                    .and_then(json::Value::as_str)
                {
                    names.insert(tid, n.to_owned());
                }
            }
            Some("X") => {
                let num = |k: &str| e.get(k).and_then(json::Value::as_f64);
                let (Some(ts), Some(dur), Some(name)) = (
                    num("ts"),
                    num("dur"),
                    e.get("name").and_then(json::Value::as_str),
                ) else {
                    return Err("an \"X\" event without ts, dur or name".into());
                };
                let start = (ts * 1e3).round() as i64;
                calls.entry(tid).or_default().push((
                    start,
                    start + (dur * 1e3).round() as i64,
                    name,
                ));
            }
            _ => {}
        }
    }
    for (tid, mut list) in calls {
        if !opts.shows_thread(tid) {
            continue;
        }
        // Parents before children: earlier start first, longer first on a tie.
        list.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let name = names.get(&tid).map_or("?", String::as_str);
        let mut t = Thread::new(tid, name);
        let mut open: Vec<(i64, i64, &str)> = Vec::new();
        let mut shared: BTreeMap<&str, Arc<str>> = BTreeMap::new();
        let close = |t: &mut Thread, open: &mut Vec<(i64, i64, &str)>| {
            if let Some((s, e, n)) = open.pop() {
                t.exit(opts, (open.len() + 1, 0), n, (e - s) as f64, false);
            }
        };
        for call in list {
            while open.last().is_some_and(|o| o.1 <= call.0 || call.1 > o.1) {
                close(&mut t, &mut open);
            }
            open.push(call);
            let name = shared.entry(call.2).or_insert_with(|| Arc::from(call.2));
            t.enter(opts, (open.len(), 0), name, opts.matches(call.2));
        }
        while !open.is_empty() {
            close(&mut t, &mut open);
        }
        t.finish();
        out.write_all(t.out.as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Just enough JSON to read a trace back.
mod json {
    /// A JSON value.
    pub(super) enum Value {
        Null,
        Bool,
        Num(f64),
        Str(String),
        Arr(Vec<Value>),
        Obj(Vec<(String, Value)>),
    }

    impl Value {
        pub(super) fn get(&self, key: &str) -> Option<&Value> {
            match self {
                Value::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
                _ => None,
            }
        }
        pub(super) fn as_array(&self) -> Option<&Vec<Value>> {
            match self {
                Value::Arr(a) => Some(a),
                _ => None,
            }
        }
        pub(super) fn as_f64(&self) -> Option<f64> {
            match self {
                Value::Num(n) => Some(*n),
                _ => None,
            }
        }
        pub(super) fn as_str(&self) -> Option<&str> {
            match self {
                Value::Str(s) => Some(s),
                _ => None,
            }
        }
    }

    pub(super) fn parse(s: &str) -> Result<Value, String> {
        let mut p = Parser {
            s: s.as_bytes(),
            i: 0,
        };
        let v = p.value(0)?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing characters at byte {}", p.i));
        }
        Ok(v)
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn ws(&mut self) {
            while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
                self.i += 1;
            }
        }
        fn err<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("not JSON: {what} at byte {}", self.i))
        }
        fn eat(&mut self, lit: &str) -> bool {
            if self
                .s
                .get(self.i..)
                .is_some_and(|r| r.starts_with(lit.as_bytes()))
            {
                self.i += lit.len();
                true
            } else {
                false
            }
        }
        fn value(&mut self, nesting: usize) -> Result<Value, String> {
            if nesting > 64 {
                return self.err("nesting too deep");
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b'{') => {
                    self.i += 1;
                    let mut m = Vec::new();
                    self.ws();
                    if self.eat("}") {
                        return Ok(Value::Obj(m));
                    }
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        if !self.eat(":") {
                            return self.err("expected ':'");
                        }
                        m.push((k, self.value(nesting + 1)?));
                        self.ws();
                        if self.eat("}") {
                            return Ok(Value::Obj(m));
                        }
                        if !self.eat(",") {
                            return self.err("expected ',' or '}'");
                        }
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    let mut a = Vec::new();
                    self.ws();
                    if self.eat("]") {
                        return Ok(Value::Arr(a));
                    }
                    loop {
                        a.push(self.value(nesting + 1)?);
                        self.ws();
                        if self.eat("]") {
                            return Ok(Value::Arr(a));
                        }
                        if !self.eat(",") {
                            return self.err("expected ',' or ']'");
                        }
                    }
                }
                Some(b'"') => self.string().map(Value::Str),
                _ if self.eat("null") => Ok(Value::Null),
                _ if self.eat("true") || self.eat("false") => Ok(Value::Bool),
                _ => {
                    let start = self.i;
                    while self
                        .s
                        .get(self.i)
                        .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
                    {
                        self.i += 1;
                    }
                    let text = core::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                    match text.parse::<f64>() {
                        Ok(n) => Ok(Value::Num(n)),
                        Err(_) => self.err("expected a value"),
                    }
                }
            }
        }
        fn string(&mut self) -> Result<String, String> {
            if !self.eat("\"") {
                return self.err("expected a string");
            }
            let mut out = Vec::new();
            loop {
                match self.s.get(self.i) {
                    None => return self.err("unterminated string"),
                    Some(b'"') => {
                        self.i += 1;
                        return String::from_utf8(out).or_else(|_| self.err("invalid UTF-8"));
                    }
                    Some(b'\\') => {
                        let c = self.s.get(self.i + 1).copied();
                        self.i += 2;
                        let ch = match c {
                            Some(b'n') => '\n',
                            Some(b't') => '\t',
                            Some(b'r') => '\r',
                            Some(b'b') => '\u{8}',
                            Some(b'f') => '\u{c}',
                            Some(b'u') => {
                                let hex = self.s.get(self.i..self.i + 4).unwrap_or(b"");
                                let code = core::str::from_utf8(hex)
                                    .ok()
                                    .and_then(|h| u32::from_str_radix(h, 16).ok());
                                self.i += 4;
                                code.and_then(char::from_u32).unwrap_or('\u{fffd}')
                            }
                            Some(c) => char::from(c),
                            None => return self.err("unterminated escape"),
                        };
                        let mut buf = [0; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    Some(&c) => {
                        out.push(c);
                        self.i += 1;
                    }
                }
            }
        }
    }
}
