//! `TICKPROF_HTTP`: pprof profiles served at `/debug/pprof/profile` by
//! the thread `tickprof http` (std::net, one request at a time), for
//! `go tool pprof http://…` and continuous-profiling agents.
//!
//! - `?seconds=N` (what `go tool pprof` sends; 1 to 300): the profile of
//!   the next N seconds, as Go's own endpoint does;
//! - without it: the profile since the previous request (the first: since
//!   the start or the last `reset()`), a delta per scrape.

use super::super::{capture, report_of, write_stderr};
use crate::export::pprof;
use crate::record::{self, Capture};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// The path served.
const PATH: &str = "/debug/pprof/profile";
/// The longest `seconds=N` accepted.
const MAX_SECONDS: u64 = 300;
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Binds `addr` and starts `tickprof http`. A failure is one warning line.
pub(in crate::exit) fn serve(addr: SocketAddr) {
    if !addr.ip().is_loopback() {
        write_stderr(&format!(
            "tickprof: warning: TICKPROF_HTTP={addr}: profiles are served beyond this machine (anyone who can reach {addr} can read the names and timings of your code)\n"
        ));
    }
    let started = TcpListener::bind(addr).and_then(|listener| {
        std::thread::Builder::new()
            .name("tickprof http".to_owned())
            .spawn(move || run(&listener))
    });
    if let Err(e) = started {
        write_stderr(&format!(
            "tickprof: warning: TICKPROF_HTTP={addr}: cannot serve: {e}\n"
        ));
    }
}

fn run(listener: &TcpListener) {
    let mut last: Option<Capture> = None;
    for stream in listener.incoming().flatten() {
        let _ = record::quietly(|| answer(stream, &mut last));
    }
}

/// The `seconds` of a request target such as `/debug/pprof/profile?seconds=5`
/// (`Some(None)`: the path without it; `None`: another path).
fn target_seconds(target: &str) -> Option<Option<u64>> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != PATH {
        return None;
    }
    let seconds = query
        .split('&')
        .filter_map(|kv| kv.strip_prefix("seconds="))
        .find_map(|v| v.parse::<u64>().ok())
        .map(|s| s.clamp(1, MAX_SECONDS));
    Some(seconds)
}

fn answer(mut stream: TcpStream, last: &mut Option<Capture>) -> io::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut request = String::new();
    BufReader::new((&stream).take(8192)).read_line(&mut request)?;
    let mut words = request.split_whitespace();
    let (method, target) = (words.next(), words.next().unwrap_or(""));
    let Some(seconds) = target_seconds(target).filter(|_| method == Some("GET")) else {
        return stream.write_all(
            b"HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\ntickprof serves /debug/pprof/profile\n",
        );
    };
    let report = match seconds {
        Some(s) => {
            let start = capture();
            std::thread::sleep(Duration::from_secs(s));
            report_of(&capture(), Some(&start))
        }
        None => {
            let now = capture();
            let r = report_of(&now, last.as_ref());
            *last = Some(now);
            r
        }
    };
    let body = pprof::render_gz(&report);
    write!(
        stream,
        "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"profile.pb.gz\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)
}

#[cfg(test)]
mod tests {
    use super::target_seconds;

    #[test]
    fn targets() {
        assert_eq!(target_seconds("/debug/pprof/profile"), Some(None));
        assert_eq!(
            target_seconds("/debug/pprof/profile?seconds=5"),
            Some(Some(5))
        );
        assert_eq!(
            target_seconds("/debug/pprof/profile?x=1&seconds=0"),
            Some(Some(1))
        );
        assert_eq!(
            target_seconds("/debug/pprof/profile?seconds=9999"),
            Some(Some(300))
        );
        assert_eq!(target_seconds("/debug/pprof/heap"), None);
        assert_eq!(target_seconds("/"), None);
    }
}
