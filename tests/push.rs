//! `TICKPROF_PUSH` against a receiver in the test (a `TcpListener` that
//! records each request), in child processes:
//!
//! - a working receiver gets `POST /ingest` requests with Pyroscope's
//!   query parameters (`name=app{labels}`, `from` ≤ `until`,
//!   `format=pprof`, `spyName`) and a `multipart/form-data` body whose
//!   `profile` field is a gzipped pprof and whose `sample_type_config` is
//!   the documented JSON; the pushed deltas' calls sum to exactly the
//!   calls the child made (none lost, none twice), with several pushes
//!   during the run and the final one at exit; `go tool pprof` reads a
//!   pushed profile when `go` is installed;
//! - a receiver that is down, and one that accepts and never answers: the
//!   child's exit code is its own, its exit waits at most the documented
//!   cap (a generous bound here), and its last line counts the failures;
//! - the exit report's run header counts the pushes; with
//!   `TICKPROF_ON_TERM=1` a SIGTERM pushes the final profile.
#![cfg(all(feature = "enabled", unix))]

use crate::support::http;
use crate::support::pprof_proto;

use http::{find, free_port, read_request, Request};
use pprof_proto::Profile;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CHILD: &str = "TPTEST_PUSH_CHILD";
/// Calls the child makes: `ROUNDS` rounds of `PER_ROUND`, a pause after
/// each (so that several pushes happen during the run).
const ROUNDS: u64 = 8;
const PER_ROUND: u64 = 250;

/// The child: the calls, then exit code 3 (its own).
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    if mode == "term" {
        // 500 calls, then wait for SIGTERM (TICKPROF_ON_TERM=1).
        (0..500).for_each(|_| http::work());
        println!("ready");
        std::thread::sleep(Duration::from_secs(60));
        std::process::exit(4);
    }
    for _ in 0..ROUNDS {
        (0..PER_ROUND).for_each(|_| http::work());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::process::exit(3);
}

/// What the tests read of a pushed request.
trait Pushed {
    fn query(&self) -> HashMap<String, String>;
    fn parts(&self) -> HashMap<String, Vec<u8>>;
}

impl Pushed for Request {
    /// The query parameters, percent-decoded.
    fn query(&self) -> HashMap<String, String> {
        let q = self.target().split_once('?').map_or("", |(_, q)| q);
        q.split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_owned(), decode(v)))
            .collect()
    }

    /// The multipart parts: name → bytes.
    fn parts(&self) -> HashMap<String, Vec<u8>> {
        let ct = self.field("content-type");
        let boundary = ct
            .strip_prefix("multipart/form-data; boundary=")
            .expect("multipart");
        let delim = format!("--{boundary}");
        let mut out = HashMap::new();
        let mut rest = &self.body[..];
        assert!(rest.starts_with(delim.as_bytes()));
        loop {
            rest = &rest[delim.len()..];
            if rest.starts_with(b"--\r\n") {
                break;
            }
            let head_end = find(rest, b"\r\n\r\n").expect("part head");
            let head = String::from_utf8_lossy(&rest[..head_end]).into_owned();
            let name = head
                .split("name=\"")
                .nth(1)
                .and_then(|n| n.split('"').next())
                .expect("a name")
                .to_owned();
            let body = &rest[head_end + 4..];
            let end = find(body, format!("\r\n{delim}").as_bytes()).expect("part end");
            out.insert(name, body[..end].to_vec());
            rest = &body[end + 2..];
        }
        out
    }
}

fn decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// How the receiver behaves.
#[derive(Clone, Copy)]
enum Receiver {
    /// Answers `200` to every request.
    Works,
    /// Reads the request, never answers, keeps the connection open.
    Hangs,
    /// Answers these bytes to every request, then closes.
    Says(&'static [u8]),
}

/// Starts a receiver; its port and the requests it recorded.
fn receiver(kind: Receiver) -> (u16, Arc<Mutex<Vec<Request>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = Arc::clone(&got);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            if let Some(r) = read_request(&mut s) {
                assert!(
                    r.line.starts_with("POST ") && r.line.ends_with(" HTTP/1.1"),
                    "{}",
                    r.line
                );
                g.lock().unwrap().push(r);
            }
            match kind {
                Receiver::Works => {
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                }
                Receiver::Hangs => held.push(s),
                Receiver::Says(answer) => {
                    let _ = s.write_all(answer);
                }
            }
        }
    });
    (port, got)
}

/// Runs the child pushing to `port`; its exit code, stderr and run time.
fn run_child(port: u16, extra: &[(&str, &str)]) -> (Option<i32>, String, Duration) {
    let url = format!("http://127.0.0.1:{port}");
    let mut env: Vec<(&str, &str)> = vec![
        ("TICKPROF_PUSH", url.as_str()),
        ("TICKPROF_PUSH_INTERVAL", "250ms"),
        ("TICKPROF_PUSH_NAME", "push-test"),
        ("TICKPROF_PUSH_LABELS", "service_name=api,env=ci"),
    ];
    env.extend_from_slice(extra);
    let start = Instant::now();
    let (out, stderr) = http::child::run_quiet(CHILD, "1", &env);
    (out.status.code(), stderr, start.elapsed())
}

/// The calls of `work` in a pushed `profile` part.
fn work_calls(p: &Profile) -> i64 {
    p.leaf_sum("::work", ("calls", "count"))
}

#[test]
fn pushed_deltas_sum_to_the_exact_calls_in_pyroscopes_ingest_form() {
    let (port, got) = receiver(Receiver::Works);
    let (code, stderr, _) = run_child(port, &[]);
    assert_eq!(code, Some(3), "{stderr}");
    let reqs = got.lock().unwrap();
    assert!(reqs.len() >= 2, "{} pushes: {stderr}", reqs.len());
    let mut total = 0;
    let mut last_until = 0u64;
    for r in reqs.iter() {
        assert!(r.target().starts_with("/ingest?"), "{}", r.line);
        let q = r.query();
        assert_eq!(q["name"], "push-test{service_name=api,env=ci}");
        assert_eq!(q["format"], "pprof");
        assert_eq!(q["spyName"], "tickprof");
        let (from, until): (u64, u64) = (q["from"].parse().unwrap(), q["until"].parse().unwrap());
        assert!(from <= until, "{from} > {until}");
        assert!(from >= last_until, "intervals in order, not overlapping");
        last_until = until;
        let parts = r.parts();
        let config = String::from_utf8(parts["sample_type_config"].clone()).unwrap();
        assert!(config.contains(r#""calls":{"units":"samples","aggregation":"sum""#));
        assert!(config.contains(r#""time":{"units":"nanoseconds","aggregation":"sum""#));
        let p = Profile::from_gz(&parts["profile"]);
        assert_eq!(p.types(), [("calls", "count"), ("time", "nanoseconds")]);
        total += work_calls(&p);
    }
    assert_eq!(total as u64, ROUNDS * PER_ROUND, "{stderr}");
    let line = format!(
        "TICKPROF_PUSH=http://127.0.0.1:{port}: {} pushed, 0 failed, 0 dropped (queue full)",
        reqs.len()
    );
    assert!(stderr.contains(&line), "{line:?} not in {stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    go_reads(&reqs[0].parts()["profile"]);
}

/// The exit report's `run` counts the pushes: `(pushed, failed, dropped)`.
fn counted(json: &std::path::Path) -> (u64, u64, u64) {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let n = |k: &str| v["run"][k].as_u64().unwrap();
    (n("pushed"), n("push_failed"), n("push_dropped"))
}

#[test]
fn the_report_counts_the_pushes() {
    let dir = std::env::temp_dir().join(format!("tickprof-push-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let out = json.to_str().unwrap().to_owned();
    let (port, got) = receiver(Receiver::Works);
    let (code, stderr, _) = run_child(port, &[("TICKPROF_OUT", &out)]);
    assert_eq!(code, Some(3), "{stderr}");
    let sent = got.lock().unwrap().len() as u64;
    assert_eq!(counted(&json), (sent, 0, 0), "{stderr}");
    // Down: every interval's push queued, the oldest dropped past 8, the
    // rest failed at the final push.
    let down = free_port();
    let (code, stderr, _) = run_child(down, &[("TICKPROF_OUT", &out)]);
    assert_eq!(code, Some(3), "{stderr}");
    let (pushed, failed, dropped) = counted(&json);
    assert_eq!(pushed, 0);
    assert!(failed > 0, "{stderr}");
    let line = format!(": 0 pushed, {failed} failed, {dropped} dropped (queue full)");
    assert!(stderr.contains(&line), "{line} in {stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `go tool pprof -top` reads a pushed profile (skipped without `go`).
fn go_reads(gz: &[u8]) {
    let dir = std::env::temp_dir().join(format!("tickprof-push-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pushed.pb.gz");
    std::fs::write(&file, gz).unwrap();
    let out = std::process::Command::new("go")
        .args(["tool", "pprof", "-top", "-sample_index=calls"])
        .arg(&file)
        .env("HOME", &dir)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    match out {
        Err(_) => eprintln!("SKIP: go is not installed; go tool pprof not tried"),
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(text.contains("::work"), "{text}");
            // The pushing program is this test binary (`all-HASH`).
            let exe = std::env::current_exe().unwrap();
            let name = exe.file_name().unwrap().to_string_lossy();
            let stem = name.split('-').next().unwrap_or_default();
            assert!(
                text.contains(&format!("File: {stem}-")),
                "the program's name: {text}"
            );
        }
    }
}

#[test]
fn a_receiver_that_is_down_costs_the_exit_nothing_and_is_counted() {
    let port = free_port();
    let (code, stderr, took) = run_child(port, &[]);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(
        stderr.matches("cannot connect").count(),
        1,
        "one warning line for the kind: {stderr}"
    );
    assert!(stderr.contains(": 0 pushed, "), "{stderr}");
    // Refused connections are retried with a backoff, so pushes stay
    // queued: the final push gives up on them and counts them as failed.
    assert!(!stderr.contains(", 0 failed"), "{stderr}");
    // The run is 8 × 100 ms of work; the cap on the exit is 2 s.
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn a_receiver_that_never_answers_holds_the_exit_at_most_the_cap() {
    let (port, got) = receiver(Receiver::Hangs);
    let (code, stderr, took) = run_child(port, &[]);
    assert_eq!(code, Some(3), "{stderr}");
    // The first push waits for its answer (up to 5 s) when the exit
    // comes: the exit waits 2 s, then says what was not sent.
    assert!(
        stderr.contains(": 0 pushed, 0 failed, 0 dropped (queue full); the final push did not finish within 2 s: "),
        "{stderr}"
    );
    assert!(
        stderr.contains(" and the last interval not sent"),
        "{stderr}"
    );
    assert!(!got.lock().unwrap().is_empty());
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// With `TICKPROF_ON_TERM=1`, a SIGTERM pushes the final profile before
/// the process dies of the signal.
#[test]
fn a_termination_signal_pushes_the_final_profile() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let (port, got) = receiver(Receiver::Works);
    let mut cmd = http::child::child_command(CHILD, "term");
    cmd.env("TICKPROF_PUSH", format!("http://127.0.0.1:{port}"))
        .env("TICKPROF_PUSH_INTERVAL", "1h")
        .env("TICKPROF_ON_TERM", "1")
        .env("TICKPROF_STDERR", "0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.trim_end().ends_with("ready") {
        line.clear();
        assert_ne!(out.read_line(&mut line).unwrap(), 0, "the child ended");
    }
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(15), "{status:?}");
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let reqs = got.lock().unwrap();
    assert_eq!(reqs.len(), 1, "{err}");
    let p = Profile::from_gz(&reqs[0].parts()["profile"]);
    assert_eq!(work_calls(&p), 500);
    assert!(err.contains(": 1 pushed, 0 failed, 0 dropped"), "{err}");
}

/// Answers that are not a well-formed `HTTP/1.x 2xx` status line are
/// failures, each kind warned about once and named by what it is.
#[test]
fn only_a_well_formed_2xx_status_line_counts_as_pushed() {
    for answer in [
        &b"HTTP/1.1 2999 OK\r\n\r\n"[..],
        b"HTTP/1.1 204x\r\n\r\n",
        b"HTTP/1.9 200 OK\r\n\r\n",
        b"\x16\x03\x01 not http at all\r\n",
    ] {
        let (port, got) = receiver(Receiver::Says(answer));
        let (code, stderr, _) = run_child(port, &[]);
        assert_eq!(code, Some(3), "{stderr}");
        let sent = got.lock().unwrap().len();
        assert!(sent >= 1, "{stderr}");
        let line = format!(": 0 pushed, {sent} failed, 0 dropped (queue full)");
        assert!(stderr.contains(&line), "{line} in {stderr}");
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{stderr}");
        assert!(
            warnings[0].contains(": the receiver's answer is not an HTTP/1.x status line: \""),
            "{}",
            warnings[0]
        );
    }
    // A receiver that closes without a word is said to have done so.
    let (port, _) = receiver(Receiver::Says(b""));
    let (_, stderr, _) = run_child(port, &[]);
    assert!(
        stderr.contains(": the receiver closed the connection without answering (later"),
        "{stderr}"
    );
}

/// A push interval too long for the clock pushes only at exit (no panic
/// on the push thread); one below the minimum gives one warning and the
/// default.
#[test]
fn huge_and_tiny_push_intervals() {
    for (interval, warning) in [
        ("3000000000000000h", None),
        ("1ns", Some("tickprof: warning: TICKPROF_PUSH_INTERVAL=\"1ns\" is shorter than the minimum, 100ms; using the default (15s)")),
    ] {
        let (port, got) = receiver(Receiver::Works);
        let mut env = vec![
            ("TICKPROF_PUSH", format!("http://127.0.0.1:{port}")),
            ("TICKPROF_PUSH_INTERVAL", interval.to_owned()),
        ];
        env.push(("TICKPROF_PUSH_NAME", "push-test".to_owned()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (out, stderr) = http::child::run_quiet(CHILD, "1", &env);
        assert_eq!(out.status.code(), Some(3), "{interval}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings, warning.into_iter().collect::<Vec<_>>(), "{stderr}");
        assert_eq!(got.lock().unwrap().len(), 1, "only the final push: {stderr}");
        assert!(stderr.contains(": 1 pushed, 0 failed, 0 dropped"), "{stderr}");
    }
}

/// Without `TICKPROF_PUSH_NAME`, the executable's file name is the
/// application name, held to the same rule: `svc{x=1}` would read as a
/// name with a label, so it is pushed as `svc_x_1_` with one warning.
#[test]
fn the_default_name_is_checked_like_the_variable() {
    let dir = std::env::temp_dir().join(format!("tickprof-push-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("svc{x=1}");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    let (port, got) = receiver(Receiver::Works);
    let out = http::child::child_command_of(&exe, CHILD, "1")
        .env("TICKPROF_PUSH", format!("http://127.0.0.1:{port}"))
        .env("TICKPROF_PUSH_INTERVAL", "1h")
        .env("TICKPROF_STDERR", "0")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let reqs = got.lock().unwrap();
    assert_eq!(reqs.len(), 1, "{stderr}");
    assert_eq!(reqs[0].query()["name"], "svc_x_1_{}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("warning")).collect::<Vec<_>>(),
        [format!("tickprof: warning: TICKPROF_PUSH=http://127.0.0.1:{port}: the executable's file name \"svc{{x=1}}\" is not a name of letters, digits and -._/:; pushing as \"svc_x_1_\" (TICKPROF_PUSH_NAME sets the name)")]
    );
}
