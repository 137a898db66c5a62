//! A saved JSON report (`TICKPROF_OUT=run.json`) read back into the
//! [`Report`] the program had, so that every writer gives what the program
//! would have written.
//!
//! Every field of the JSON is a field of `Report`; only `Report::trace`
//! (individual calls, written as its own `.trace.json` format) is not in
//! it, and comes back as `None`.

use serde_json::{Map, Value};
use tickprof_runtime::export::json::VERSION;
use tickprof_runtime::{
    AllocStats, ClockSource, Coverage, Edge, Faults, Mark, Report, RunInfo, SiteKind, SiteStats,
    ThreadSite, ThreadStats, TreeNode,
};

/// Why a file is not a report this command reads: one line.
pub type Error = String;

/// Reads and parses the report saved at `path`.
pub fn read(path: &str) -> Result<Report, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    parse(&text).map_err(|e| format!("{path}: {e}"))
}

/// Parses a saved report.
pub fn parse(text: &str) -> Result<Report, Error> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| format!("not a tickprof JSON report (not JSON: {e})"))?;
    let Some(obj) = doc.as_object() else {
        return Err("not a tickprof JSON report (not a JSON object)".to_owned());
    };
    let version = match obj.get("version") {
        Some(v) => v
            .as_u64()
            .ok_or("not a tickprof JSON report (bad \"version\")")?,
        None => return Err("not a tickprof JSON report (no \"version\" field)".to_owned()),
    };
    if version != u64::from(VERSION) {
        return Err(format!(
            "JSON report version {version}; this tickprof reads version {VERSION}"
        ));
    }
    let o = Obj(obj, "report");
    Ok(Report {
        run: run_info(&o.obj("run")?)?,
        sites: o.array("sites", site_stats)?,
        threads: o.array("threads", thread_stats)?,
        tree: o.array("tree", tree_node)?,
        trace: None,
        coverage: o.optional("coverage", coverage)?,
        faults: o.optional("faults", faults)?,
    })
}

/// The `coverage` section: `{marked, ran, never_called: [{name, kind, file, line}]}`.
fn coverage(o: &Obj<'_>) -> Result<Coverage, Error> {
    Ok(Coverage {
        marked: o.usize("marked")?,
        ran: o.usize("ran")?,
        never_called: o.array("never_called", mark)?,
    })
}

fn mark(o: &Obj<'_>) -> Result<Mark, Error> {
    let kind = o.str("kind")?;
    Ok(Mark {
        name: o.str("name")?,
        kind: SiteKind::parse(&kind).ok_or_else(|| o.bad("kind", "a known site kind"))?,
        file: o.str("file")?,
        line: o.u32("line")?,
    })
}

/// The `faults` section: `{seed, sites: [[name, count]]}`.
fn faults(o: &Obj<'_>) -> Result<Faults, Error> {
    let bad = || o.bad("sites", "an array of [name, count] pairs");
    let items = o.get("sites")?.as_array().ok_or_else(bad)?;
    let sites = items
        .iter()
        .map(|v| match v.as_array().map(Vec::as_slice) {
            Some([Value::String(name), count]) => {
                count.as_u64().map(|c| (name.clone(), c)).ok_or_else(bad)
            }
            _ => Err(bad()),
        })
        .collect::<Result<_, _>>()?;
    Ok(Faults {
        seed: o.u64("seed")?,
        sites,
    })
}

/// An object of the document and where it is, for error messages.
struct Obj<'a>(&'a Map<String, Value>, &'a str);

impl<'a> Obj<'a> {
    fn get(&self, key: &str) -> Result<&'a Value, Error> {
        self.0
            .get(key)
            .ok_or_else(|| format!("not a tickprof JSON report ({}: no \"{key}\")", self.1))
    }

    fn bad(&self, key: &str, what: &str) -> Error {
        format!("not a tickprof JSON report ({}.{key}: not {what})", self.1)
    }

    fn u64(&self, key: &str) -> Result<u64, Error> {
        self.get(key)?
            .as_u64()
            .ok_or_else(|| self.bad(key, "a whole number"))
    }

    fn usize(&self, key: &str) -> Result<usize, Error> {
        usize::try_from(self.u64(key)?).map_err(|_| self.bad(key, "an index"))
    }

    fn u32(&self, key: &str) -> Result<u32, Error> {
        u32::try_from(self.u64(key)?).map_err(|_| self.bad(key, "a 32-bit number"))
    }

    /// A float; `null` is a float that was not a number.
    fn f64(&self, key: &str) -> Result<f64, Error> {
        match self.get(key)? {
            Value::Null => Ok(f64::NAN),
            v => v.as_f64().ok_or_else(|| self.bad(key, "a number")),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, Error> {
        self.get(key)?
            .as_bool()
            .ok_or_else(|| self.bad(key, "true or false"))
    }

    fn str(&self, key: &str) -> Result<String, Error> {
        self.get(key)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.bad(key, "a string"))
    }

    fn obj(&self, key: &'a str) -> Result<Obj<'a>, Error> {
        self.get(key)?
            .as_object()
            .map(|m| Obj(m, key))
            .ok_or_else(|| self.bad(key, "an object"))
    }

    /// An allocation-count object (`{allocs, bytes, frees, freed_bytes}`);
    /// all zero when absent (reports written before allocation profiling).
    fn alloc(&self, key: &'a str) -> Result<AllocStats, Error> {
        if !self.0.contains_key(key) {
            return Ok(AllocStats::default());
        }
        let o = self.obj(key)?;
        Ok(AllocStats {
            allocs: o.u64("allocs")?,
            bytes: o.u64("bytes")?,
            frees: o.u64("frees")?,
            freed_bytes: o.u64("freed_bytes")?,
        })
    }

    /// A boolean that older reports lack (`default` then).
    fn bool_or(&self, key: &str, default: bool) -> Result<bool, Error> {
        if self.0.contains_key(key) {
            self.bool(key)
        } else {
            Ok(default)
        }
    }

    /// An object field that may be absent or `null` (sections a run did
    /// not produce, or reports written before they existed).
    fn optional<T>(
        &self,
        key: &'a str,
        f: fn(&Obj<'_>) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => f(&self.obj(key)?).map(Some),
        }
    }

    fn array<T>(&self, key: &'a str, f: fn(&Obj<'_>) -> Result<T, Error>) -> Result<Vec<T>, Error> {
        let items = self
            .get(key)?
            .as_array()
            .ok_or_else(|| self.bad(key, "an array"))?;
        items
            .iter()
            .map(|v| {
                v.as_object()
                    .ok_or_else(|| self.bad(key, "an array of objects"))
                    .and_then(|m| f(&Obj(m, key)))
            })
            .collect()
    }
}

fn run_info(o: &Obj<'_>) -> Result<RunInfo, Error> {
    let clock = match o.str("clock")?.as_str() {
        "tsc" => ClockSource::Tsc,
        "monotonic" => ClockSource::Monotonic,
        "off" => ClockSource::Off,
        _ => return Err(o.bad("clock", "tsc, monotonic or off")),
    };
    let invariant_tsc = match o.get("invariant_tsc")? {
        Value::Null => None,
        v => Some(
            v.as_bool()
                .ok_or_else(|| o.bad("invariant_tsc", "true, false or null"))?,
        ),
    };
    Ok(RunInfo {
        clock,
        frequency_hz: o.f64("frequency_hz")?,
        frequency_source: o.str("frequency_source")?,
        invariant_tsc,
        wall_ns: o.u64("wall_ns")?,
        threads: o.usize("threads")?,
        max_delta_ns: o.u64("max_delta_ns")?,
        out_of_order: o.u64("out_of_order")?,
        lost: o.u64("lost")?,
        reentrant: o.u64("reentrant")?,
        leaked: o.u64("leaked")?,
        folded_calls: o.u64("folded_calls")?,
        complete: o.bool("complete")?,
        compensated: o.bool("compensated")?,
        overhead_inner_ns: o.f64("overhead_inner_ns")?,
        overhead_inner_ticks: o.f64("overhead_inner_ticks")?,
        overhead_call_ns: o.f64("overhead_call_ns")?,
        overhead_call_ticks: o.f64("overhead_call_ticks")?,
        calibration: o.str("calibration")?,
        overhead_share: o.f64("overhead_share")?,
        clamped: o.u64("clamped")?,
        carried: o.u64("carried")?,
        tracing: o.bool("tracing")?,
        trace_dropped: o.u64("trace_dropped")?,
        pid: o.u32("pid")?,
        alloc_installed: o.bool_or("alloc_installed", false)?,
        outside: o.alloc("outside")?,
    })
}

fn edge(o: &Obj<'_>) -> Result<Edge, Error> {
    Ok(Edge {
        name: o.str("name")?,
        calls: o.u64("calls")?,
        total_ns: o.u64("total_ns")?,
    })
}

fn site_stats(o: &Obj<'_>) -> Result<SiteStats, Error> {
    let kind = o.str("kind")?;
    Ok(SiteStats {
        name: o.str("name")?,
        function: o.str("function")?,
        kind: SiteKind::parse(&kind).ok_or_else(|| o.bad("kind", "a known site kind"))?,
        file: o.str("file")?,
        line: o.u32("line")?,
        column: o.u32("column")?,
        calls: o.u64("calls")?,
        total_ns: o.u64("total_ns")?,
        self_ns: o.u64("self_ns")?,
        p_self: o.f64("p_self")?,
        mean_ns: o.f64("mean_ns")?,
        resolved: o.bool_or("resolved", true)?,
        min_ns: o.u64("min_ns")?,
        max_ns: o.u64("max_ns")?,
        total_ticks: o.u64("total_ticks")?,
        self_ticks: o.u64("self_ticks")?,
        min_ticks: o.u64("min_ticks")?,
        max_ticks: o.u64("max_ticks")?,
        raw_total_ns: o.u64("raw_total_ns")?,
        raw_self_ns: o.u64("raw_self_ns")?,
        compensated_total_ns: o.u64("compensated_total_ns")?,
        compensated_self_ns: o.u64("compensated_self_ns")?,
        reversed: o.u64("reversed")?,
        oversized: o.u64("oversized")?,
        unwound: o.u64("unwound")?,
        wall_ns: o.u64("wall_ns")?,
        cancelled: o.u64("cancelled")?,
        callers: o.array("callers", edge)?,
        callees: o.array("callees", edge)?,
        alloc: o.alloc("alloc")?,
        self_alloc: o.alloc("self_alloc")?,
    })
}

fn thread_site(o: &Obj<'_>) -> Result<ThreadSite, Error> {
    Ok(ThreadSite {
        name: o.str("name")?,
        calls: o.u64("calls")?,
        total_ns: o.u64("total_ns")?,
        self_ns: o.u64("self_ns")?,
        alloc: o.alloc("alloc")?,
    })
}

fn thread_stats(o: &Obj<'_>) -> Result<ThreadStats, Error> {
    Ok(ThreadStats {
        name: o.str("name")?,
        id: o.u64("id")?,
        finished: o.bool("finished")?,
        count: o.u64("count")?,
        sites: o.array("sites", thread_site)?,
    })
}

fn tree_node(o: &Obj<'_>) -> Result<TreeNode, Error> {
    let parent = match o.get("parent")? {
        Value::Null => None,
        _ => Some(o.usize("parent")?),
    };
    Ok(TreeNode {
        name: o.str("name")?,
        parent,
        depth: o.usize("depth")?,
        calls: o.u64("calls")?,
        total_ns: o.u64("total_ns")?,
        self_ns: o.u64("self_ns")?,
        raw_total_ns: o.u64("raw_total_ns")?,
        raw_self_ns: o.u64("raw_self_ns")?,
        alloc: o.alloc("alloc")?,
        self_alloc: o.alloc("self_alloc")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickprof_runtime::export::json;

    /// A report with every kind of field set.
    fn sample() -> Report {
        let text = include_str!("../tests/data/before.json");
        parse(text).expect("the sample parses")
    }

    #[test]
    fn a_report_read_back_writes_the_same_json() {
        let text = include_str!("../tests/data/before.json");
        let again = json::render(&sample()).unwrap();
        assert_eq!(std::str::from_utf8(&again).unwrap(), text);
    }

    #[test]
    fn bad_input_is_one_line_saying_what_is_wrong() {
        let cases = [
            ("[1]", "not a tickprof JSON report (not a JSON object)"),
            ("{}", "not a tickprof JSON report (no \"version\" field)"),
            (
                "{\"version\": 9}",
                "JSON report version 9; this tickprof reads version 1",
            ),
            (
                "{\"version\": 1, \"run\": {}}",
                "not a tickprof JSON report (run: no \"clock\")",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).err().as_deref(), Some(want), "{text}");
        }
        let e = parse("nope").unwrap_err();
        assert!(
            e.starts_with("not a tickprof JSON report (not JSON: "),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
