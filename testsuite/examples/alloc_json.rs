//! A realistic allocation-heavy program for the DHAT cross-check
//! (`scripts/ci_alloc_dhat.sh`): generate a few MB of JSON, parse it with
//! serde_json, transform the document, serialize it again. Each stage is a
//! marked `#[inline(never)]` function, so tickprof's per-site bytes can be
//! compared with DHAT's per-frame inclusive bytes.
//!
//! `cargo run --release -p tickprof-testsuite --example alloc_json [records]`

use serde_json::{Map, Value};
use std::hint::black_box;

#[global_allocator]
static A: tickprof::Alloc = tickprof::Alloc::system();

/// The input: `n` records of a few fields each.
#[tickprof::profile]
#[inline(never)]
fn generate(n: usize) -> String {
    let mut out = String::from("[");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#"{{"id":{i},"name":"user-{i}","email":"user{i}@example.org","score":{},"tags":["t{}","t{}","t{}"],"active":{}}}"#,
            i as f64 * 0.25,
            i % 7,
            i % 11,
            i % 13,
            i % 2 == 0
        ));
    }
    out.push(']');
    out
}

#[tickprof::profile]
#[inline(never)]
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Upper-cases names, drops e-mails, adds a tag count and a label.
#[tickprof::profile]
#[inline(never)]
fn transform(doc: Value) -> Value {
    let Value::Array(records) = doc else {
        return Value::Null;
    };
    Value::Array(records.into_iter().map(record).collect())
}

#[tickprof::profile]
#[inline(never)]
fn record(v: Value) -> Value {
    let Value::Object(fields) = v else {
        return v;
    };
    let mut out = Map::new();
    for (k, v) in fields {
        match (k.as_str(), v) {
            ("email", _) => {}
            ("name", Value::String(s)) => {
                out.insert(k, Value::String(s.to_uppercase()));
            }
            ("tags", Value::Array(t)) => {
                out.insert("tag_count".to_owned(), Value::from(t.len()));
                out.insert(k, Value::Array(t));
            }
            (_, v) => {
                out.insert(k, v);
            }
        }
    }
    let label = format!(
        "record {}",
        out.get("id").and_then(Value::as_u64).unwrap_or(0)
    );
    out.insert("label".to_owned(), Value::String(label));
    Value::Object(out)
}

#[tickprof::profile]
#[inline(never)]
fn serialize(doc: &Value) -> String {
    serde_json::to_string(doc).unwrap_or_default()
}

#[tickprof::profile]
#[inline(never)]
fn run(n: usize) -> usize {
    let text = generate(n);
    let doc = parse(&text);
    drop(text);
    let doc = transform(doc);
    let out = serialize(&doc);
    black_box(out.len())
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let len = run(n);
    println!("{n} records, {len} bytes of output");
}
