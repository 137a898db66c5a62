//! The trace log of a recorded `.trace.json` (what `TICKPROF_OUT=x.trace.json`
//! or `TICKPROF_TRACE=1` writes): a long run recorded cheaply, read later.

use super::render::Thread;
use super::LogOptions;
use crate::export::json::value::{self, Value};
use crate::naming::terminal_safe;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

/// Bytes of finished lines gathered before they are written to `out`.
const BATCH: usize = 1 << 16;

/// Renders a `.trace.json` written by tickprof as the trace log
/// (`TICKPROF_LOG`'s format), one section per thread in thread-number
/// order, filtered by `opts`.
///
/// The trace holds each call's start and duration, so the call tree is
/// rebuilt by nesting: a call inside another's time span on the same thread
/// is its child. It does not record unwinding, so no line says `unwound`.
/// The `tickprof replay trace.json` command calls this.
///
/// Lines are written to `out` as they are made, in batches (buffer `out`
/// for speed), and indentation stops growing at 64 levels (a deeper line
/// shows its level, `[depth 70] `): memory and output grow with the
/// number of calls, whatever their depth. Names (of sites and threads) are
/// made terminal-safe: control characters become spaces and invisible or
/// bidirectional characters visible escapes, so a name cannot forge lines
/// or drive the terminal; filters match the names as recorded.
///
/// # Errors
///
/// A message if `input` is not JSON in the Chrome trace format (no
/// `"traceEvents"` array, an event that is not an object with a `"ph"`
/// string, an `"X"` event without `ts`, `dur` or `name`, events of other
/// kinds (`"B"`/`"E"` pairs, say) and not one `"X"`), or if writing to
/// `out` fails (what was written before stays written).
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
/// // Not a trace: an error, never an empty output.
/// let bare = r#"{"traceEvents": [1, 2]}"#;
/// assert!(tickprof_runtime::log::replay_trace_json(bare, &mut Vec::new(), &opts).is_err());
/// ```
pub fn replay_trace_json(
    input: &str,
    out: &mut dyn Write,
    opts: &LogOptions,
) -> Result<(), String> {
    let root = value::parse(input).map_err(|e| format!("not JSON: {e}"))?;
    let events = match get(&root, "traceEvents") {
        Some(Value::Array(events)) => events,
        _ => return Err("no \"traceEvents\" array: not a Chrome trace".into()),
    };
    let mut names: BTreeMap<u64, &str> = BTreeMap::new();
    // Per thread: (start ns, end ns, name).
    let mut calls: BTreeMap<u64, Vec<(i64, i64, &str)>> = BTreeMap::new();
    // The first event of another kind (skipped): its index and `ph`.
    let mut skipped: Option<(usize, &str)> = None;
    for (i, e) in events.iter().enumerate() {
        let (Value::Object(_), Some(Value::String(ph))) = (e, get(e, "ph")) else {
            return Err(format!(
                "traceEvents[{i}] is not an event (an object with a \"ph\" string): not a Chrome trace"
            ));
        };
        let tid = num(e, "tid").unwrap_or(0.0) as u64;
        match ph.as_str() {
            "M" => {
                if let Some(Value::String(n)) = get(e, "args").and_then(|a| get(a, "name")) {
                    names.insert(tid, n);
                }
            }
            "X" => {
                let (Some(ts), Some(dur), Some(Value::String(name))) =
                    (num(e, "ts"), num(e, "dur"), get(e, "name"))
                else {
                    return Err(format!(
                        "traceEvents[{i}]: an \"X\" event without ts, dur or name"
                    ));
                };
                // Float to integer casts saturate; so does the sum.
                let start = (ts * 1e3).round() as i64;
                let end = start.saturating_add((dur * 1e3).round() as i64);
                calls.entry(tid).or_default().push((start, end, name));
            }
            other => {
                skipped.get_or_insert((i, other));
            }
        }
    }
    // Events, none of them a call: not a trace this renders (begin/end
    // pairs, say), rather than an empty output.
    if let (true, Some((i, ph))) = (calls.is_empty(), skipped) {
        return Err(format!(
            "traceEvents[{i}]: a \"{}\" event, and no \"X\" (complete) event: \
             not a tickprof trace (only \"X\" events are replayed)",
            terminal_safe(ph).escape_default()
        ));
    }
    let mut write = |text: &mut String| {
        let r = out.write_all(text.as_bytes()).map_err(|e| e.to_string());
        text.clear();
        r
    };
    for (tid, mut list) in calls {
        if !opts.shows_thread(tid) {
            continue;
        }
        // Parents before children: earlier start first, longer first on a tie.
        list.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let name = names.get(&tid).copied().unwrap_or("?");
        let mut t = Thread::new(tid, name);
        let mut open: Vec<(i64, i64, &str)> = Vec::new();
        let mut shared: BTreeMap<&str, Arc<str>> = BTreeMap::new();
        let close = |t: &mut Thread, open: &mut Vec<(i64, i64, &str)>| {
            if let Some((s, e, n)) = open.pop() {
                let n = terminal_safe(n);
                t.exit(
                    opts,
                    (open.len() + 1, 0),
                    &n,
                    e.saturating_sub(s) as f64,
                    false,
                );
            }
        };
        for call in list {
            while open.last().is_some_and(|o| o.1 <= call.0 || call.1 > o.1) {
                close(&mut t, &mut open);
            }
            open.push(call);
            let name = shared
                .entry(call.2)
                .or_insert_with(|| Arc::from(terminal_safe(call.2)));
            t.enter(opts, (open.len(), 0), name, opts.matches(call.2));
            if t.out.len() >= BATCH {
                write(&mut t.out)?;
            }
        }
        while !open.is_empty() {
            close(&mut t, &mut open);
            if t.out.len() >= BATCH {
                write(&mut t.out)?;
            }
        }
        t.finish();
        write(&mut t.out)?;
    }
    Ok(())
}

/// The member `key` of an object (its last, if given twice).
fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    match v {
        Value::Object(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

/// The number `key` of an object.
fn num(v: &Value, key: &str) -> Option<f64> {
    match get(v, key) {
        Some(Value::Number(n)) => Some(n.float),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(input: &str) -> Result<String, String> {
        let mut out = Vec::new();
        replay_trace_json(input, &mut out, &LogOptions::default())?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn what_is_not_a_trace_is_an_error() {
        let not = "no \"traceEvents\" array: not a Chrome trace";
        assert_eq!(
            replay("1 2 3").unwrap_err(),
            "not JSON: trailing characters at byte 2"
        );
        assert_eq!(replay("12").unwrap_err(), not);
        assert_eq!(replay("[1, 2]").unwrap_err(), not);
        assert_eq!(replay("{\"traceEvents\": 3}").unwrap_err(), not);
        assert_eq!(
            replay("{\"traceEvents\": [1, 2]}").unwrap_err(),
            "traceEvents[0] is not an event (an object with a \"ph\" string): not a Chrome trace"
        );
        assert!(replay("{\"traceEvents\": [{\"ph\": 1}]}").is_err());
        assert_eq!(
            replay("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1}]}").unwrap_err(),
            "traceEvents[0]: an \"X\" event without ts, dur or name"
        );
        assert_eq!(replay("{\"traceEvents\": []}").unwrap(), "");
        // Begin/end pairs (another tool's trace): an error, not nothing.
        assert_eq!(
            replay(
                "{\"traceEvents\": [{\"ph\": \"M\"}, {\"ph\": \"B\", \"name\": \"a\", \"ts\": 0}, \
                 {\"ph\": \"E\", \"ts\": 5}]}"
            )
            .unwrap_err(),
            "traceEvents[1]: a \"B\" event, and no \"X\" (complete) event: \
             not a tickprof trace (only \"X\" events are replayed)"
        );
        // Only thread names: nothing to replay, and nothing wrong.
        assert_eq!(replay("{\"traceEvents\": [{\"ph\": \"M\"}]}").unwrap(), "");
        // Other kinds beside calls are skipped.
        assert!(replay(
            "{\"traceEvents\": [{\"ph\": \"i\"}, {\"ph\": \"X\", \"name\": \"a\", \"ts\": 0, \"dur\": 1}]}"
        )
        .unwrap()
        .contains("a();"));
    }

    #[test]
    fn names_cannot_forge_lines_or_drive_the_terminal() {
        let t = r#"{"traceEvents":[
          {"ph":"M","name":"thread_name","tid":1,"args":{"name":"m\n[1] fake"}},
          {"ph":"X","name":"a\n[1] forged();  1 ns\u001b[2J","tid":1,"ts":0,"dur":1}]}"#;
        assert_eq!(
            replay(t).unwrap(),
            "# thread 1: m [1] fake\n[1] a [1] forged();  1 ns [2J();  1.00 µs\n"
        );
    }

    #[test]
    fn extreme_times_neither_overflow_nor_panic() {
        let t = r#"{"traceEvents":[
          {"ph":"X","name":"a","tid":1,"ts":-1e300,"dur":1e300},
          {"ph":"X","name":"b","tid":1,"ts":1e300,"dur":1e300},
          {"ph":"X","name":"c","tid":1e30,"ts":0,"dur":-5}]}"#;
        assert_eq!(replay(t).unwrap().lines().count(), 5);
    }

    #[test]
    fn a_deep_trace_is_written_in_batches_with_bounded_indentation() {
        let depth = 5_000;
        let mut t = String::from("{\"traceEvents\":[");
        for i in 0..depth {
            let sep = if i == 0 { "" } else { "," };
            let dur = 2 * (depth - i);
            t.push_str(&format!(
                "{sep}{{\"ph\":\"X\",\"name\":\"r\",\"tid\":1,\"ts\":{i},\"dur\":{dur}}}"
            ));
        }
        t.push_str("]}");
        /// Counts the writes and the largest.
        #[derive(Default)]
        struct Sink(usize, usize, usize);
        impl Write for Sink {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                (self.0, self.1, self.2) = (self.0 + 1, self.1.max(b.len()), self.2 + b.len());
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut sink = Sink::default();
        replay_trace_json(&t, &mut sink, &LogOptions::default()).unwrap();
        assert!(sink.0 > 10, "{} writes", sink.0);
        assert!(sink.1 < 2 * BATCH, "{}", sink.1);
        // 2 × depth lines of at most ~170 bytes.
        assert!(sink.2 < 2 * depth * 200, "{}", sink.2);
    }
}
