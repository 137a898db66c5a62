//! One connection, on its own thread: read the head by one deadline,
//! answer, close.

use super::request::{self, Refusal, HEAD_CAP};
use super::response::Response;
use super::routes::{self, Source};
use std::net::TcpStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// How long a client has to send its whole request head (from the
/// accept, however the bytes are spread out).
pub(super) const HEAD_DEADLINE: Duration = Duration::from_secs(5);

/// Serves one request on `stream` and closes it.
pub(super) fn handle(mut stream: TcpStream, source: &Source) {
    let deadline = Instant::now() + HEAD_DEADLINE;
    let req = match request::read(&mut stream, deadline) {
        Ok(req) => req,
        Err(refusal) => {
            if let Some(r) = refusal_response(&refusal) {
                r.send(&mut stream, false);
            }
            return;
        }
    };
    // A handler that panics (it should not) costs its client a 500, never
    // the server or the program.
    let response = catch_unwind(AssertUnwindSafe(|| routes::answer(&req, source)))
        .unwrap_or_else(|_| Response::text(500, "tickprof: internal error"));
    response.send(&mut stream, req.head_only());
}

/// The answer to a refused head (`None`: the client is gone).
fn refusal_response(refusal: &Refusal) -> Option<Response> {
    Some(match refusal {
        Refusal::Malformed(why) => Response::text(400, &format!("tickprof: {why}")),
        Refusal::TooLarge => Response::text(
            431,
            &format!("tickprof: the request head is longer than {HEAD_CAP} bytes"),
        ),
        Refusal::Timeout => Response::text(
            408,
            &format!(
                "tickprof: the request head did not arrive within {} s",
                HEAD_DEADLINE.as_secs()
            ),
        ),
        Refusal::Gone => return None,
    })
}
