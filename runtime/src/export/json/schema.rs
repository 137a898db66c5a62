//! The JSON schema, written once: per report type, the list of its fields
//! in the order they are written, each with the default an older file
//! that lacks it is read with. [`schema!`] turns a list into both the
//! writer and the reader, so they cannot disagree.
//!
//! Names are the Rust field names; enums are lower-case strings; `null`
//! stands for `None` and for a float that is not a number. A field without
//! a default is required; unknown fields are ignored (newer files).

use super::value::{Number, Value};
use super::writer::Writer;
use super::ParseError;
use crate::report::{
    AllocStats, Coverage, Edge, Faults, Mark, Report, RunInfo, SiteKind, SiteStats, ThreadSite,
    ThreadStats, Timing, TreeNode,
};

/// Where a value is in the document, for error messages: `sites[3].alloc`.
#[derive(Clone, Copy)]
pub(super) enum At<'a> {
    /// The document itself.
    Root,
    /// A member of an object.
    Key(&'a At<'a>, &'a str),
    /// An element of an array.
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    /// The path, `report` for the document itself.
    pub(super) fn path(&self) -> String {
        match self {
            At::Root => "report".to_owned(),
            At::Key(At::Root, k) => (*k).to_owned(),
            At::Key(p, k) => format!("{}.{k}", p.path()),
            At::Index(p, i) => format!("{}[{i}]", p.path()),
        }
    }

    /// The error "the value here is not `what`".
    pub(super) fn not(&self, what: &str) -> ParseError {
        ParseError::Schema {
            at: self.path(),
            what: format!("not {what}"),
        }
    }
}

/// A type with a place in the JSON document: how it is written, and read
/// back.
pub(super) trait Json: Sized {
    /// Writes the value.
    fn write(&self, w: &mut Writer<'_>);
    /// Reads the value at `at`.
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError>;
}

/// A type written as a JSON object of its fields (what [`schema!`] gives).
pub(super) trait Fields: Sized {
    /// Writes the fields into the open object.
    fn write_fields(&self, w: &mut Writer<'_>);
    /// Reads the fields from the object at `o`.
    fn read_fields(o: &Object<'_, '_>) -> Result<Self, ParseError>;
}

/// An object of the document and where it is.
pub(super) struct Object<'v, 'a> {
    members: &'v [(String, Value)],
    at: &'a At<'a>,
}

impl<'v, 'a> Object<'v, 'a> {
    /// The object `v` is, or an error.
    pub(super) fn of(v: &'v Value, at: &'a At<'a>) -> Result<Self, ParseError> {
        match v {
            Value::Object(members) => Ok(Object { members, at }),
            _ => Err(at.not("an object")),
        }
    }

    /// The value of `key` (its last, if given twice).
    pub(super) fn get(&self, key: &str) -> Option<&'v Value> {
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The field `key` read as a `T`; `default` when the object lacks it
    /// (an error when there is no default).
    pub(super) fn field<T: Json>(&self, key: &str, default: Option<T>) -> Result<T, ParseError> {
        match (self.get(key), default) {
            (Some(v), _) => T::read(v, &At::Key(self.at, key)),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(ParseError::Schema {
                at: self.at.path(),
                what: format!("no \"{key}\""),
            }),
        }
    }
}

/// Writer and reader of a struct from one list of its fields:
/// `schema!(Type { field, field = default_for_older_files, … })`, plus
/// `skip { field = value }` for fields left out of the JSON. The writer
/// destructures the struct and the reader builds it with a struct literal,
/// so a field added to the type fails to compile until it is listed.
macro_rules! schema {
    ($ty:ident { $($field:ident $(= $default:expr)?),* $(,)? }
     $(skip { $($skip:ident = $value:expr),* $(,)? })?) => {
        impl Fields for $ty {
            fn write_fields(&self, w: &mut Writer<'_>) {
                let $ty { $($field,)* $($($skip: _,)*)? } = self;
                $(
                    w.key(stringify!($field));
                    Json::write($field, w);
                )*
            }

            fn read_fields(o: &Object<'_, '_>) -> Result<Self, ParseError> {
                Ok($ty {
                    $($field: o.field(stringify!($field), schema!(@default $($default)?))?,)*
                    $($($skip: $value,)*)?
                })
            }
        }

        impl Json for $ty {
            fn write(&self, w: &mut Writer<'_>) {
                w.begin_object();
                self.write_fields(w);
                w.end_object();
            }

            fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
                Self::read_fields(&Object::of(v, at)?)
            }
        }
    };
    (@default) => { None };
    (@default $default:expr) => { Some($default) };
}

// The document: `"version"`, then these (see `document`).
schema!(Report {
    run,
    sites,
    threads,
    tree,
    coverage = None,
    faults = None,
} skip {
    // Its own format (`.trace.json`).
    trace = None,
});

schema!(RunInfo {
    clock,
    frequency_hz,
    frequency_source,
    invariant_tsc,
    wall_ns,
    threads,
    max_delta_ns,
    out_of_order,
    lost,
    reentrant,
    leaked,
    folded_calls,
    complete,
    compensated,
    overhead_inner_ns,
    overhead_inner_ticks,
    overhead_call_ns,
    overhead_call_ticks,
    overhead_timed_ns = 0.0,
    overhead_counted_ns = 0.0,
    counted_sites = 0,
    counted_calls = 0,
    debug_build = false,
    calibration,
    overhead_share,
    sampled_ns = 0,
    instrumentation_ns = 0,
    waited_ns = 0,
    setup_ns = 0,
    setup_threads = 0,
    sample_hz = 0,
    clamped,
    carried,
    tracing,
    trace_dropped,
    pid,
    alloc_installed = false,
    outside = AllocStats::default(),
    pushed = 0,
    push_failed = 0,
    push_dropped = 0,
    pauses = 0,
    paused_ns = 0,
});

schema!(AllocStats {
    allocs,
    bytes,
    frees,
    freed_bytes,
});

schema!(Edge {
    name,
    calls,
    total_ns,
});

schema!(SiteStats {
    name,
    function,
    kind,
    file,
    line,
    column,
    calls,
    timing = Timing::Timed, // older files: every call timed (`timed_calls` capped at `calls`)
    timed_calls = u64::MAX,
    total_ns,
    self_ns,
    p_self,
    mean_ns,
    resolved = true,
    min_ns,
    max_ns,
    total_ticks,
    self_ticks,
    min_ticks,
    max_ticks,
    raw_total_ns,
    raw_self_ns,
    compensated_total_ns,
    compensated_self_ns,
    self_sampled_ns = 0,
    total_sampled_ns = 0,
    reversed,
    oversized,
    unwound,
    wall_ns,
    cancelled,
    alloc = AllocStats::default(),
    self_alloc = AllocStats::default(),
    callers,
    callees,
    p50_ns = 0,
    p90_ns = 0,
    p99_ns = 0,
    hist = Vec::new(),
    hist_sum_ns = 0,
    pc_samples = 0,
});

schema!(ThreadSite {
    name,
    calls,
    total_ns,
    self_ns,
    alloc = AllocStats::default(),
});

schema!(ThreadStats {
    name,
    id,
    finished,
    count,
    sites,
});

schema!(TreeNode {
    name,
    parent,
    depth,
    calls,
    total_ns,
    self_ns,
    raw_total_ns,
    raw_self_ns,
    alloc = AllocStats::default(),
    self_alloc = AllocStats::default(),
});

schema!(Coverage {
    marked,
    ran,
    never_called,
});

schema!(Mark {
    name,
    kind,
    file,
    line,
});

schema!(Faults { seed, sites });

/// A whole number: `u64`, and the narrower ones through it.
fn whole(v: &Value, at: &At<'_>) -> Result<u64, ParseError> {
    match v {
        Value::Number(Number { whole: Some(n), .. }) => Ok(*n),
        _ => Err(at.not("a whole number")),
    }
}

impl Json for u64 {
    fn write(&self, w: &mut Writer<'_>) {
        w.u64(*self);
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        whole(v, at)
    }
}

impl Json for u32 {
    fn write(&self, w: &mut Writer<'_>) {
        w.u64(u64::from(*self));
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        u32::try_from(whole(v, at)?).map_err(|_| at.not("a 32-bit number"))
    }
}

impl Json for usize {
    fn write(&self, w: &mut Writer<'_>) {
        w.u64(*self as u64);
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        usize::try_from(whole(v, at)?).map_err(|_| at.not("an index"))
    }
}

/// A float; `null` is one that was not a number (NaN or infinite).
impl Json for f64 {
    fn write(&self, w: &mut Writer<'_>) {
        w.f64(*self);
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        match v {
            Value::Null => Ok(f64::NAN),
            Value::Number(n) => Ok(n.float),
            _ => Err(at.not("a number")),
        }
    }
}

impl Json for bool {
    fn write(&self, w: &mut Writer<'_>) {
        w.bool(*self);
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(at.not("true or false")),
        }
    }
}

impl Json for String {
    fn write(&self, w: &mut Writer<'_>) {
        w.str(self);
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        match v {
            Value::String(s) => Ok(s.clone()),
            _ => Err(at.not("a string")),
        }
    }
}

/// `null` for `None`.
impl<T: Json> Json for Option<T> {
    fn write(&self, w: &mut Writer<'_>) {
        match self {
            Some(x) => x.write(w),
            None => w.null(),
        }
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        match v {
            Value::Null => Ok(None),
            v => T::read(v, at).map(Some),
        }
    }
}

impl<T: Json> Json for Vec<T> {
    fn write(&self, w: &mut Writer<'_>) {
        w.array(self, |w, x| x.write(w));
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        match v {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, x)| T::read(x, &At::Index(at, i)))
                .collect(),
            _ => Err(at.not("an array")),
        }
    }
}

/// A pair as a two-element array: a fault count `[name, count]`, a
/// histogram bucket `[upper_ns, count]`.
impl<A: Json, B: Json> Json for (A, B) {
    fn write(&self, w: &mut Writer<'_>) {
        w.begin_array();
        self.0.write(w);
        self.1.write(w);
        w.end_array();
    }
    fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
        match v {
            Value::Array(pair) => match pair.as_slice() {
                [a, b] => Ok((
                    A::read(a, &At::Index(at, 0))?,
                    B::read(b, &At::Index(at, 1))?,
                )),
                _ => Err(at.not("a pair")),
            },
            _ => Err(at.not("a pair")),
        }
    }
}

/// Enums written as their lower-case name: `as_str` out, `parse` back in.
macro_rules! named {
    ($($ty:ident: $what:literal),*) => {$(
        impl Json for $ty {
            fn write(&self, w: &mut Writer<'_>) {
                w.str(self.as_str());
            }
            fn read(v: &Value, at: &At<'_>) -> Result<Self, ParseError> {
                let s = if let Value::String(s) = v { s.as_str() } else { "" };
                $ty::parse(s).ok_or_else(|| at.not($what))
            }
        }
    )*};
}

named!(SiteKind: "a known site kind", Timing: "timed or counted");
