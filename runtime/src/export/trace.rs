//! Trace output (`.trace.json`): the Chrome trace event format of the
//! report's individual calls ([`Report::trace`]).

use crate::report::{Report, Trace};

/// The Chrome trace output of `report`: its recorded calls, or an empty
/// trace (valid JSON, no events) when tracing was off.
pub fn render_report(report: &Report) -> String {
    let empty = Trace::default();
    render(report.trace.as_ref().unwrap_or(&empty))
}

/// The Chrome trace event format (JSON object form), loadable by
/// `chrome://tracing`, Perfetto (ui.perfetto.dev) and speedscope: one
/// complete event (`"ph": "X"`) per call, times in microseconds, one `tid`
/// per thread with its name as metadata.
pub fn render(trace: &Trace) -> String {
    use std::fmt::Write as _;
    let q = |s: &str| {
        let mut quoted = String::with_capacity(s.len() + 2);
        super::json::push_str_literal(&mut quoted, s);
        quoted
    };
    let names: Vec<String> = trace.names.iter().map(|n| q(n)).collect();
    let mut s = String::with_capacity(64 + trace.len() * 80);
    s.push_str("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"tickprof\",\"events\":");
    let _ = write!(
        s,
        "{},\"dropped_events\":{}}},\"traceEvents\":[",
        trace.len(),
        trace.dropped()
    );
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push_str(",\n");
        }
        first = false;
    };
    for t in &trace.threads {
        sep(&mut s);
        let _ = write!(
            s,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{},\"args\":{{\"name\":{}}}}}",
            t.id,
            q(&t.name)
        );
        for e in &t.events {
            sep(&mut s);
            let _ = write!(
                s,
                "{{\"ph\":\"X\",\"name\":{},\"pid\":1,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}}}",
                names[e.name as usize],
                t.id,
                e.start_ns / 1e3,
                e.duration_ns.max(0.0) / 1e3
            );
        }
    }
    s.push_str("]}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{TraceEvent, TraceThread};

    #[test]
    fn render_is_valid_json_with_escaped_names() {
        let t = Trace {
            names: vec!["a \"quoted\" <name>".to_owned()],
            threads: vec![TraceThread {
                id: 7,
                name: "worker \"1\"".to_owned(),
                events: vec![TraceEvent {
                    name: 0,
                    start_ns: 50.0,
                    duration_ns: 100.0,
                }],
                dropped: 2,
            }],
        };
        let v: serde_json::Value = serde_json::from_str(&render(&t)).unwrap();
        let ev = &v["traceEvents"];
        assert_eq!(ev[0]["ph"], "M");
        assert_eq!(ev[0]["args"]["name"], "worker \"1\"");
        assert_eq!(ev[1]["name"], "a \"quoted\" <name>");
        assert_eq!(ev[1]["tid"], 7);
        assert_eq!(ev[1]["ts"], 0.05);
        assert_eq!(ev[1]["dur"], 0.1);
        assert_eq!(v["otherData"]["dropped_events"], 2);
    }
}
