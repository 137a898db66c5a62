//! What is served: one table of paths and their handlers ([`ROUTES`]; a
//! new path is a new row), and the handlers.

use super::request::Request;
use super::response::Response;
use crate::export::pprof;
use crate::record::Capture;
use crate::report::Report;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// What the handlers read reports from, passed in by whoever starts the
/// server (the start-up code owns the runtime; this module cannot import
/// it).
#[derive(Clone, Copy)]
pub(crate) struct Source {
    /// Copies everything recorded so far.
    pub capture: fn() -> Capture,
    /// The report of a capture, or of its difference from an earlier one.
    pub report_of: fn(&Capture, Option<&Capture>) -> Report,
}

/// One served path.
pub(super) struct Route {
    /// The path, matched exactly (the query is the handler's).
    pub path: &'static str,
    /// One line for the `404` page's list.
    pub what: &'static str,
    /// Answers a `GET` or `HEAD` of `path`.
    pub handler: fn(&Request, &Source) -> Response,
}

/// Every path served.
pub(super) const ROUTES: &[Route] = &[
    Route {
        path: "/debug/pprof/profile",
        what: "pprof profile (.pb.gz): ?seconds=N (1-300) the next N seconds; \
               without: since the previous such request",
        handler: profile,
    },
    Route {
        path: "/debug/pprof/allocs",
        what: "allocations per path (.pb.gz; needs tickprof::Alloc, else empty): \
               the whole run; ?seconds=N the next N seconds",
        handler: allocs,
    },
    Route {
        path: "/debug/pprof/block",
        what: "empty (.pb.gz): tickprof records no blocking",
        handler: block,
    },
    Route {
        path: "/debug/pprof/mutex",
        what: "empty (.pb.gz): tickprof records no lock contention",
        handler: mutex,
    },
    Route {
        path: "/debug/pprof/goroutine",
        what: "empty (.pb.gz): a Rust program has no goroutines",
        handler: goroutine,
    },
    Route {
        path: "/metrics",
        what: "Prometheus metrics: per-site calls, times and latency histograms",
        handler: |req, source| {
            super::metrics::metrics(req, || (source.report_of)(&(source.capture)(), None))
        },
    },
];

/// The comment of an allocation profile without allocation data.
pub(super) const NO_ALLOC: &str = "tickprof: no allocation data: tickprof::Alloc is not \
                                   the global allocator (see tickprof's docs/tools.md)";

/// The longest `seconds=N` accepted.
pub(super) const MAX_SECONDS: u64 = 300;

/// The most `?seconds=N` requests waiting at once; one more gets `503`, so
/// waiting requests leave workers for the others.
pub(super) const MAX_WAITING: usize = 8;

/// The `?seconds=N` requests waiting now.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// The base of the next delta scrape (`None`: the start or the last
/// `reset()`). Held while a delta is taken, so concurrent scrapes are
/// serialised and each interval goes to exactly one of them.
static DELTA_BASE: Mutex<Option<Capture>> = Mutex::new(None);

/// The response to `req`: its path's handler, `404` for a path not in
/// [`ROUTES`], `405` for a method other than `GET` and `HEAD`.
pub(super) fn answer(req: &Request, source: &Source) -> Response {
    let Some(route) = ROUTES.iter().find(|r| r.path == req.path) else {
        let mut msg = String::from("tickprof: not found; served paths:");
        for r in ROUTES {
            msg.push_str(&format!("\n  {}  {}", r.path, r.what));
        }
        return Response::text(404, &msg);
    };
    if req.method != "GET" && req.method != "HEAD" {
        return Response::text(405, "tickprof: only GET and HEAD are served")
            .with("Allow: GET, HEAD".to_owned());
    }
    (route.handler)(req, source)
}

/// `/debug/pprof/profile`: with `?seconds=N` the profile of the next N
/// seconds; without, the delta since the previous delta scrape. A `HEAD`
/// is checked the same way but takes no profile and moves no base.
fn profile(req: &Request, source: &Source) -> Response {
    served(req, source, Since::DeltaBase, |r| {
        pprof::render_live(r, pprof::Kind::Calls, "")
    })
}

/// `/debug/pprof/allocs`: the allocations per path of the whole run (as
/// Go's, cumulative), or with `?seconds=N` of the next N seconds; without
/// `tickprof::Alloc`, an empty profile saying so.
fn allocs(req: &Request, source: &Source) -> Response {
    served(req, source, Since::Start, |r| {
        if r.run.alloc_installed {
            pprof::render_live(r, pprof::Kind::Allocs, "")
        } else {
            pprof::empty_gz(pprof::ALLOC_SAMPLE_TYPES, NO_ALLOC)
        }
    })
}

/// `/debug/pprof/block`: tickprof has no such data; a valid empty profile
/// of Go's sample types saying so (agents scrape it by default).
fn block(req: &Request, _: &Source) -> Response {
    empty(
        req,
        pprof::CONTENTION_SAMPLE_TYPES,
        "tickprof: no block profile: tickprof records marked calls, not blocking",
    )
}

/// `/debug/pprof/mutex`: as [`block`].
fn mutex(req: &Request, _: &Source) -> Response {
    empty(
        req,
        pprof::CONTENTION_SAMPLE_TYPES,
        "tickprof: no mutex profile: tickprof records marked calls, not lock contention",
    )
}

/// `/debug/pprof/goroutine`: as [`block`].
fn goroutine(req: &Request, _: &Source) -> Response {
    empty(
        req,
        pprof::GOROUTINE_SAMPLE_TYPES,
        "tickprof: no goroutine profile: a Rust program has no goroutines",
    )
}

/// Where a profile without `?seconds=N` starts.
enum Since {
    /// At the previous such request (the documented delta base).
    DeltaBase,
    /// At the start of the run (or the last `reset()`).
    Start,
}

/// A profile made by `render` from the report `req` asks for: the next N
/// seconds with `?seconds=N` (at most [`MAX_WAITING`] at once), else the
/// report since `since`. A `HEAD` is checked the same way and makes no
/// report.
fn served(
    req: &Request,
    source: &Source,
    since: Since,
    render: fn(&Report) -> Vec<u8>,
) -> Response {
    let seconds = match seconds(&req.query) {
        Ok(s) => s,
        Err(why) => return Response::text(400, &format!("tickprof: {why}")),
    };
    let report = if req.head_only() {
        None
    } else if let Some(s) = seconds {
        let Some(_waiting) = Waiting::take() else {
            return Response::busy(&format!(
                "{MAX_WAITING} ?seconds=N requests are in progress already"
            ));
        };
        let start = (source.capture)();
        std::thread::sleep(Duration::from_secs(s));
        Some((source.report_of)(&(source.capture)(), Some(&start)))
    } else {
        match since {
            Since::DeltaBase => {
                let mut base = DELTA_BASE.lock().unwrap_or_else(PoisonError::into_inner);
                let now = (source.capture)();
                let r = (source.report_of)(&now, base.as_ref());
                *base = Some(now);
                Some(r)
            }
            Since::Start => Some((source.report_of)(&(source.capture)(), None)),
        }
    };
    gz(req, report.as_ref().map(render))
}

/// A valid empty profile of `types` saying `why` (`?seconds=N` is checked
/// and answered at once: there is nothing to wait for).
fn empty(req: &Request, types: &'static [pprof::SampleType], why: &str) -> Response {
    if let Err(why) = seconds(&req.query) {
        return Response::text(400, &format!("tickprof: {why}"));
    }
    gz(req, (!req.head_only()).then(|| pprof::empty_gz(types, why)))
}

/// A `200` carrying a `.pb.gz` (`None`: a `HEAD`, no body, no length).
fn gz(req: &Request, body: Option<Vec<u8>>) -> Response {
    let name = req.path.rsplit('/').next().unwrap_or("profile");
    Response {
        status: 200,
        fields: vec![format!(
            "Content-Disposition: attachment; filename=\"{name}.pb.gz\""
        )],
        content_type: "application/octet-stream",
        sized: body.is_some(),
        body: body.unwrap_or_default(),
    }
}

/// A place among the [`MAX_WAITING`], given back on drop.
struct Waiting;

impl Waiting {
    /// A place, if one is free.
    fn take() -> Option<Waiting> {
        let was = WAITING.fetch_add(1, Ordering::AcqRel);
        let place = Waiting;
        (was < MAX_WAITING).then_some(place)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The `seconds` of a profile query: `Ok(None)` without it. The query may
/// hold only `seconds`, once, a whole number from 1 to [`MAX_SECONDS`]
/// written in decimal digits; anything else is an error saying why.
pub(super) fn seconds(query: &str) -> Result<Option<u64>, String> {
    let mut found = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key != "seconds" {
            return Err(format!(
                "unknown parameter `{}`: this path takes only `seconds`",
                key.escape_default()
            ));
        }
        if found.is_some() {
            return Err("`seconds` is given more than once".to_owned());
        }
        let n =
            (!value.is_empty() && value.len() <= 3 && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse::<u64>().ok())
                .flatten()
                .filter(|n| (1..=MAX_SECONDS).contains(n));
        let Some(n) = n else {
            return Err(format!(
                "`seconds={}`: want a whole number from 1 to {MAX_SECONDS}",
                value.escape_default()
            ));
        };
        found = Some(n);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::{seconds, ROUTES};

    #[test]
    fn seconds_is_strict() {
        assert_eq!(seconds(""), Ok(None));
        assert_eq!(seconds("seconds=5"), Ok(Some(5)));
        assert_eq!(seconds("seconds=1"), Ok(Some(1)));
        assert_eq!(seconds("seconds=300"), Ok(Some(300)));
        assert_eq!(seconds("seconds=030"), Ok(Some(30)));
        assert_eq!(seconds("&seconds=7&"), Ok(Some(7)));
        for bad in [
            "seconds=0",
            "seconds=301",
            "seconds=-1",
            "seconds=+5",
            "seconds=abc",
            "seconds=1e1",
            "seconds=1.5",
            "seconds= 5",
            "seconds=",
            "seconds",
            "seconds=12345678901234567890",
            "seconds=0005",
            "seconds=5&seconds=5",
            "seconds=5&seconds=6",
            "Seconds=5",
            "seconds%3D5",
            "x=1",
            "seconds=5&debug=1",
        ] {
            assert!(seconds(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn routes_are_distinct_paths() {
        for (i, r) in ROUTES.iter().enumerate() {
            assert!(r.path.starts_with('/'), "{}", r.path);
            assert!(!r.path.contains('?'), "{}", r.path);
            assert!(ROUTES[..i].iter().all(|o| o.path != r.path), "{}", r.path);
        }
    }
}
