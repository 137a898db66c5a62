//! `TICKPROF_PUSH`: the profile of each interval posted to a
//! Pyroscope-compatible receiver (`POST /ingest?name=…&from=…&until=…&
//! format=pprof`, a `multipart/form-data` body with the gzipped pprof in
//! field `profile` and [`SAMPLE_TYPE_CONFIG`] in `sample_type_config`).
//!
//! Everything happens on the thread `tickprof push`, inside
//! `record::quietly`; the program never waits for it except at exit, for
//! at most [`FINAL_WAIT`]:
//!
//! - every interval the thread takes a capture and renders the report
//!   since the previous one into a push, queued (at most [`MAX_QUEUED`];
//!   a full queue drops its oldest push, counted as dropped);
//! - each push is one request bounded by [`REQUEST_TIMEOUT`] (connect,
//!   write and answer together); a push that never reached the receiver
//!   (no connection, request not written whole) stays queued and is tried
//!   again after a backoff doubling from [`FIRST_BACKOFF`] up to
//!   [`MAX_BACKOFF`]; one the receiver may have stored (no answer, or an
//!   error status) is not sent again and counts as failed;
//! - the first failure of each kind prints one warning line; the exit
//!   report's last line counts pushes sent, failed and dropped.

mod client;
mod name;

use crate::config::PushTarget;
use crate::export::pprof;
use crate::record::Capture;
use crate::serve::Source;
use client::Failure;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The most pushes waiting to be sent.
pub(crate) const MAX_QUEUED: usize = 8;
/// The deadline of one push: connect, write and the answer's status line.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The first wait before a push is tried again...
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// ...doubling up to this.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// The longest the exit (or a termination signal) waits for the final push.
pub(crate) const FINAL_WAIT: Duration = Duration::from_secs(2);

/// The `sample_type_config` sent with each push: how Pyroscope shows and
/// aggregates each of the profile's sample types.
pub const SAMPLE_TYPE_CONFIG: &str = concat!(
    r#"{"calls":{"units":"samples","aggregation":"sum","display-name":"calls_count"},"#,
    r#""time":{"units":"nanoseconds","aggregation":"sum","display-name":"time_nanoseconds"},"#,
    r#""alloc_objects":{"units":"objects","aggregation":"sum","display-name":"alloc_objects_count"},"#,
    r#""alloc_space":{"units":"bytes","aggregation":"sum","display-name":"alloc_space_bytes"}}"#
);

/// What the push thread is told to do.
pub(crate) struct Settings {
    /// The receiver.
    pub target: PushTarget,
    /// How often.
    pub interval: Duration,
    /// The application name (`None`: the executable's file name).
    pub name: Option<String>,
    /// Static labels.
    pub labels: Vec<(String, String)>,
    /// Writes a warning line (to stderr).
    pub warn: fn(&str),
}

/// One rendered push.
struct Push {
    from_s: u64,
    until_s: u64,
    body: Vec<u8>,
}

/// The state shared by the push thread and the final push.
struct Shared {
    target: PushTarget,
    /// The process that started the thread (a forked child has none).
    pid: u32,
    /// What the pushes are made from, and the `name` query value.
    source: Source,
    name: String,
    queue: Mutex<VecDeque<Push>>,
    /// The capture of the last push and its time (Unix seconds): the
    /// start of the next interval.
    base: Mutex<Option<(Capture, u64)>>,
    /// Set by [`stop`]: the thread stops (the final push is made elsewhere).
    finishing: AtomicBool,
    /// Set by the thread when it has stopped; `wake` announces it.
    done: Mutex<bool>,
    wake: Condvar,
    sent: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    /// The failure kinds warned about already ([`Failure::bit`]).
    warned: AtomicU32,
    warn: fn(&str),
}

static SHARED: OnceLock<Shared> = OnceLock::new();

/// Starts the thread `tickprof push` (once). Returns the warning lines
/// to print (the application name mended; the thread cannot start).
pub(crate) fn start(settings: Settings, source: Source) -> Vec<String> {
    let target = settings.target.clone();
    let (app, warning) = name::app(&settings);
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let shared = Shared {
        target: target.clone(),
        pid: crate::report::process_id(),
        source,
        name: name::query_name(&app, &settings.labels),
        queue: Mutex::new(VecDeque::new()),
        base: Mutex::new(None),
        finishing: AtomicBool::new(false),
        done: Mutex::new(false),
        wake: Condvar::new(),
        sent: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
        warned: AtomicU32::new(0),
        warn: settings.warn,
    };
    if SHARED.set(shared).is_err() {
        return Vec::new();
    }
    let spawned = std::thread::Builder::new()
        .name("tickprof push".to_owned())
        .spawn(move || crate::record::quietly(|| run(settings.interval)));
    if let Err(e) = spawned {
        if let Some(s) = SHARED.get() {
            *lock(&s.done) = true;
        }
        warnings.push(format!(
            "tickprof: warning: TICKPROF_PUSH={target}: cannot start the push thread: {e}; nothing is pushed\n"
        ));
    }
    warnings
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Seconds since the Unix epoch.
fn unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The body of `tickprof push`: a push every `interval`, until [`stop`].
fn run(interval: Duration) {
    let Some(shared) = SHARED.get() else { return };
    // An interval too long to add to a clock reading (the settings take
    // any length) means no push before the final one.
    let after = |t: Instant| t.checked_add(interval);
    let mut next_capture = after(Instant::now());
    let mut backoff = FIRST_BACKOFF;
    let mut retry_at: Option<Instant> = None;
    let stopping = || shared.finishing.load(Ordering::Acquire);
    while !stopping() {
        let now = Instant::now();
        if next_capture.is_some_and(|t| now >= t) {
            take(shared);
            next_capture = after(now);
        }
        if retry_at.is_none_or(|t| Instant::now() >= t) {
            retry_at = None;
            while let Some(sent) = send_front(shared, None).filter(|_| !stopping()) {
                match sent {
                    Err(f) if f.retryable() => {
                        retry_at = Some(Instant::now() + backoff);
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        break;
                    }
                    _ => backoff = FIRST_BACKOFF,
                }
            }
        }
        // Sleep until the next capture or retry, or until `stop`.
        let until = match (retry_at, next_capture) {
            (Some(r), Some(n)) => Some(r.min(n)),
            (r, n) => r.or(n),
        };
        let done = lock(&shared.done);
        if !stopping() {
            match until.map(|t| t.saturating_duration_since(Instant::now())) {
                None => drop(shared.wake.wait(done)),
                Some(wait) if !wait.is_zero() => drop(shared.wake.wait_timeout(done, wait)),
                Some(_) => {}
            }
        }
    }
    *lock(&shared.done) = true;
    shared.wake.notify_all();
}

/// Captures, renders the report since `base` into a push and queues it
/// (dropping the oldest when full). An interval without calls is not
/// pushed.
fn take(shared: &Shared) {
    let (source, mut base) = (shared.source, lock(&shared.base));
    let now = (source.capture)();
    let until_s = unix_s();
    let report = (source.report_of)(&now, base.as_ref().map(|(c, _)| c));
    let from_s = base.as_ref().map_or_else(
        || until_s.saturating_sub(report.run.wall_ns / 1_000_000_000),
        |&(_, s)| s,
    );
    *base = Some((now, until_s));
    if report.sites.iter().all(|s| s.calls == 0) {
        return;
    }
    let body = pprof::render_live(&report, pprof::Kind::Calls, "");
    let mut q = lock(&shared.queue);
    if q.len() >= MAX_QUEUED {
        q.pop_front();
        shared.dropped.fetch_add(1, Ordering::Relaxed);
    }
    q.push_back(Push {
        from_s,
        until_s: until_s.max(from_s),
        body,
    });
}

/// Sends the oldest queued push: `None` when the queue is empty. A
/// retryable failure leaves it queued; anything else takes it off.
fn send_front(shared: &Shared, cap: Option<Instant>) -> Option<Result<(), Failure>> {
    let (from_s, until_s, body) = {
        let q = lock(&shared.queue);
        let p = q.front()?;
        (p.from_s, p.until_s, p.body.clone())
    };
    let path = format!(
        "{}/ingest?name={}&from={from_s}&until={until_s}&format=pprof&spyName=tickprof",
        shared.target.prefix, shared.name
    );
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let (form, content_type) = client::multipart(
        &[
            ("profile", "profile.pprof", &body),
            (
                "sample_type_config",
                "sample_type_config.json",
                SAMPLE_TYPE_CONFIG.as_bytes(),
            ),
        ],
        seed,
    );
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let deadline = cap.map_or(deadline, |c| c.min(deadline));
    let r = client::post(
        &shared.target.authority,
        &path,
        &content_type,
        &form,
        deadline,
    );
    match r {
        Ok(()) => {
            shared.sent.fetch_add(1, Ordering::Relaxed);
            lock(&shared.queue).pop_front();
            Some(Ok(()))
        }
        Err((f, detail)) => {
            if shared.warned.fetch_or(f.bit(), Ordering::Relaxed) & f.bit() == 0 {
                (shared.warn)(&format!(
                    "tickprof: warning: TICKPROF_PUSH={}: {} (later failures of this kind are only counted, at exit)\n",
                    shared.target,
                    f.describe(&detail)
                ));
            }
            if !f.retryable() {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                lock(&shared.queue).pop_front();
            }
            Some(Err(f))
        }
    }
}

/// Pushes sent, failed and dropped so far (zeros without `TICKPROF_PUSH`,
/// and in a forked child).
pub(crate) fn counts() -> (u64, u64, u64) {
    SHARED
        .get()
        .filter(|s| s.pid == crate::process::program_pid())
        .map_or((0, 0, 0), |s| {
            (
                s.sent.load(Ordering::Relaxed),
                s.failed.load(Ordering::Relaxed),
                s.dropped.load(Ordering::Relaxed),
            )
        })
}

/// The final push, made where [`Final::finish`] runs (a copy of the
/// process writing the final report, or this one).
pub(crate) struct Final {
    shared: &'static Shared,
    /// When the push thread was told to stop: the final push ends within
    /// [`FINAL_WAIT`] of it.
    started: Instant,
    /// Whether the thread stopped in time (not: it is in a request, whose
    /// push stays its own).
    idle: bool,
}

/// Stops `tickprof push` for the final push (from the exit report or a
/// termination signal, once), waiting at most [`FINAL_WAIT`] for a request
/// under way; allocates nothing. `None` without `TICKPROF_PUSH`, on a
/// second call, or in a forked child, which pushes nothing.
pub(crate) fn stop() -> Option<Final> {
    let shared = SHARED
        .get()
        .filter(|s| s.pid == crate::report::process_id())?;
    if shared.finishing.swap(true, Ordering::AcqRel) {
        return None;
    }
    let started = Instant::now();
    let deadline = started + FINAL_WAIT;
    let mut done = lock(&shared.done);
    shared.wake.notify_all();
    while !*done {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        done = shared
            .wake
            .wait_timeout(done, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    let idle = *done;
    Some(Final {
        shared,
        started,
        idle,
    })
}

impl Final {
    /// Pushes the last interval and what is queued, within [`FINAL_WAIT`]
    /// of [`stop`]; returns the line that counts the pushes.
    pub(crate) fn finish(self) -> String {
        let shared = self.shared;
        // The thread is in a request (at most `REQUEST_TIMEOUT`): what is
        // queued, that request's push included, is not sent.
        let late = if self.idle {
            take(shared);
            let cap = self.started + FINAL_WAIT.saturating_sub(Duration::from_millis(200));
            while let Some(sent) = send_front(shared, Some(cap)) {
                if sent.is_err_and(Failure::retryable) {
                    break;
                }
            }
            let left = lock(&shared.queue).len() as u64;
            shared.failed.fetch_add(left, Ordering::Relaxed);
            lock(&shared.queue).clear();
            String::new()
        } else {
            let queued = shared.queue.try_lock().map_or(1, |q| q.len());
            format!(
                "; the final push did not finish within {} s: {queued} queued push{} and the last interval not sent",
                FINAL_WAIT.as_secs(),
                if queued == 1 { "" } else { "es" }
            )
        };
        let (sent, failed, dropped) = (
            shared.sent.load(Ordering::Relaxed),
            shared.failed.load(Ordering::Relaxed),
            shared.dropped.load(Ordering::Relaxed),
        );
        format!(
            "tickprof: TICKPROF_PUSH={}: {sent} pushed, {failed} failed, {dropped} dropped (queue full){late}\n",
            shared.target
        )
    }
}
