//! `TICKPROF_HTTP`: the HTTP server, for `go tool pprof http://…` and
//! continuous-profiling agents. Its paths are one table
//! ([`routes::ROUTES`]): the five pprof paths agents scrape
//! (`/debug/pprof/profile`, `allocs`, `block`, `mutex`, `goroutine`) and
//! Prometheus' `/metrics` ([`metrics`]). No request changes the program's
//! state except the delta base of `/debug/pprof/profile` without `seconds`.
//!
//! No client can stall it, another client or the program:
//!
//! - the thread `tickprof http` ([`gate`]) accepts connections and
//!   receives their request heads, all at once (`poll`), at most
//!   [`gate::MAX_PENDING`] at a time; one more gets `503` at once, unread;
//! - the whole head must arrive within [`request::HEAD_DEADLINE`] of the
//!   accept (`408` otherwise) and fit in [`request::HEAD_CAP`] bytes
//!   (`431`); a malformed request line is a `400`, a method other than
//!   `GET`/`HEAD` a `405`, an unknown path a `404` listing the served paths;
//! - each complete head is answered on its own thread (`tickprof http
//!   conn`, [`conn`]), at most [`conn::MAX_WORKERS`] at a time (`503`
//!   beyond), so a `?seconds=N` request delays no other;
//! - the response must be read within [`response::WRITE_DEADLINE`]; then
//!   the server stops writing and drains what the client still sends
//!   (bounded: at most [`conn::MAX_DRAINING`] at once, outside the
//!   workers' places), so closing does not reset the connection under the
//!   answer.
//!
//! Everything runs inside `record::quietly`: the server's own work is
//! never recorded, and its threads never appear in reports.

mod conn;
mod gate;
mod metrics;
mod poll;
mod request;
mod response;
mod routes;

pub(crate) use routes::Source;

use crate::record;
use std::net::{SocketAddr, TcpListener};

/// Binds `addr` and starts the thread `tickprof http`. Returns the warning
/// lines to print (an address beyond this machine; a failure to bind or
/// to start, after which nothing is served).
pub(crate) fn start(addr: SocketAddr, source: Source) -> Vec<String> {
    let mut warnings = Vec::new();
    if !addr.ip().is_loopback() {
        warnings.push(format!(
            "tickprof: warning: TICKPROF_HTTP={addr}: profiles are served beyond this machine (anyone who can reach {addr} can read the names and timings of your code)\n"
        ));
    }
    let started = TcpListener::bind(addr).and_then(|listener| {
        listener.set_nonblocking(true)?;
        std::thread::Builder::new()
            .name("tickprof http".to_owned())
            .spawn(move || record::quietly(|| gate::run(&listener, source)))
    });
    if let Err(e) = started {
        warnings.push(format!(
            "tickprof: warning: TICKPROF_HTTP={addr}: cannot serve: {e}\n"
        ));
    }
    warnings
}
