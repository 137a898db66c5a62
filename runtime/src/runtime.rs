//! Process-wide state: settings, clock, report collection and the exit hook.

use crate::calibrate::{calibrate, Calibration, CALIBRATION_SITE};
use crate::clock::{self, Clock};
use crate::config::Config;
use crate::report::{
    ClockSource, Edge, Report, RunInfo, SiteStats, TextOptions, ThreadSite, ThreadStats, TreeNode,
};
use crate::site::CallSite;
use crate::thread::{self, try_lock_global, LOST, MAX_NODES, MAX_TICKS, RECORDING};
use crate::trace::{RawEvent, TRACE_LIMIT, TRACE_ON};
use crate::tree::{compensate, flatten, Tree};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where `TICKPROF_TRACE=1` writes the trace when no `.trace.json` output
/// is named.
const DEFAULT_TRACE_FILE: &str = "tickprof.trace.json";

/// How long a report waits for a finishing thread to release the lock.
const REPORT_LOCK_WAIT: Duration = Duration::from_millis(200);

pub(crate) struct Runtime {
    pub config: Config,
    pub clock: Clock,
    /// Start of the measured wall time (process start or last reset).
    pub epoch: Mutex<Instant>,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Sets everything up once: before `main` through the constructor, or on the
/// first report if constructors do not run on this platform.
pub(crate) fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        let (config, warnings) = Config::from_env();
        for w in &warnings {
            write_stderr(&format!("{w}\n"));
        }
        let clock = Clock::start();
        if !config.enabled {
            RECORDING.store(false, Ordering::Relaxed);
        }
        let hz = clock.startup_hz();
        let max = (config.max_delta.as_secs_f64() * hz).min(i64::MAX as f64) as u64;
        MAX_TICKS.store(max, Ordering::Relaxed);
        MAX_NODES.store(config.max_nodes, Ordering::Relaxed);
        TRACE_LIMIT.store(config.trace_events, Ordering::Relaxed);
        if clock::SOURCE == ClockSource::Monotonic {
            write_stderr(
                "tickprof: no time-stamp counter on this target; using the OS monotonic clock\n",
            );
        }
        Runtime {
            config,
            clock,
            epoch: Mutex::new(Instant::now()),
        }
    })
}

/// Unbuffered, lock-free, fallible write to file descriptor 2. Safe after
/// `main` returned; errors are dropped.
pub(crate) fn write_stderr(s: &str) {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: fd 2 stays open for the life of the process (if it was
        // closed, writes fail with EBADF and are dropped); `ManuallyDrop`
        // keeps this `File` from closing it.
        let mut f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(2) });
        let _ = f.write_all(s.as_bytes());
    }
    #[cfg(not(unix))]
    {
        let _ = std::io::stderr().write_all(s.as_bytes());
    }
}

/// Everything recorded so far, as plain data: the input of a report.
#[derive(Clone)]
pub(crate) struct Capture {
    pub merged: Tree,
    pub per_thread: Vec<(String, u64, bool, Tree)>,
    pub resynced: u64,
    pub orphaned: u64,
    pub reentrant: u64,
    pub lost: u64,
    pub complete: bool,
    pub at: Instant,
    /// (thread id, name, events, dropped), when tracing is on.
    pub traces: Vec<(u64, String, Vec<RawEvent>, u64)>,
}

/// Copies every live thread's tree and the finished threads' data.
pub(crate) fn capture() -> Capture {
    let at = Instant::now();
    let lost = LOST.load(Ordering::Relaxed);
    let Some(g) = try_lock_global(REPORT_LOCK_WAIT) else {
        return Capture {
            merged: Tree::new(),
            per_thread: Vec::new(),
            resynced: 0,
            orphaned: 0,
            reentrant: 0,
            lost,
            complete: false,
            at,
            traces: Vec::new(),
        };
    };
    let tracing = TRACE_ON.load(Ordering::Relaxed);
    let mut traces = if tracing {
        g.finished_traces.clone()
    } else {
        Vec::new()
    };
    let mut merged = g.finished.clone();
    let mut per_thread: Vec<(String, u64, bool, Tree)> = g
        .finished_threads
        .iter()
        .map(|(n, id, t)| (n.clone(), *id, true, t.clone()))
        .collect();
    let (mut resynced, mut orphaned, mut reentrant) = (
        g.finished_resynced,
        g.finished_orphaned,
        g.finished_reentrant,
    );
    let live = g.live.clone();
    drop(g);
    for a in &live {
        let t = a.snapshot();
        merged.merge(&t);
        resynced += a.resynced.load(Ordering::Relaxed);
        orphaned += a.orphaned.load(Ordering::Relaxed);
        reentrant += a.reentrant.load(Ordering::Relaxed);
        per_thread.push((a.thread_name.clone(), a.thread_id, false, t));
        if tracing {
            let (events, dropped) = a.trace.copy();
            traces.push((a.thread_id, a.thread_name.clone(), events, dropped));
        }
    }
    per_thread.sort_by_key(|t| t.1);
    traces.sort_by_key(|t| t.0);
    Capture {
        merged,
        per_thread,
        resynced,
        orphaned,
        reentrant,
        lost,
        complete: true,
        at,
        traces,
    }
}

/// The calibrated overhead, measured once on the first thread that can.
static CALIBRATION: OnceLock<Calibration> = OnceLock::new();

pub(crate) fn calibration() -> Option<Calibration> {
    if let Some(c) = CALIBRATION.get() {
        return Some(*c);
    }
    let c = calibrate()?;
    Some(*CALIBRATION.get_or_init(|| c))
}

/// Builds the report from every live thread and every finished one.
pub(crate) fn collect() -> Report {
    let rt = runtime();
    if !rt.config.enabled {
        return Report::empty();
    }
    let wall_ns = rt
        .epoch
        .lock()
        .map_or(Duration::ZERO, |e| e.elapsed())
        .as_nanos() as u64;
    build(&capture(), wall_ns)
}

/// The report of one capture, or of the difference `c - earlier`.
pub(crate) fn report_of(c: &Capture, earlier: Option<&Capture>) -> Report {
    let rt = runtime();
    if !rt.config.enabled {
        return Report::empty();
    }
    match earlier {
        None => {
            let epoch = rt.epoch.lock().map_or(c.at, |e| *e);
            build(c, c.at.saturating_duration_since(epoch).as_nanos() as u64)
        }
        Some(e) => {
            let diff = Capture {
                merged: c.merged.minus(&e.merged),
                per_thread: c
                    .per_thread
                    .iter()
                    .map(|(n, id, fin, t)| {
                        let before = e.per_thread.iter().find(|p| p.1 == *id);
                        let t = before.map_or_else(|| t.clone(), |b| t.minus(&b.3));
                        (n.clone(), *id, *fin, t)
                    })
                    .collect(),
                resynced: c.resynced.saturating_sub(e.resynced),
                orphaned: c.orphaned.saturating_sub(e.orphaned),
                reentrant: c.reentrant.saturating_sub(e.reentrant),
                lost: c.lost.saturating_sub(e.lost),
                complete: c.complete && e.complete,
                at: c.at,
                traces: Vec::new(),
            };
            build(
                &diff,
                c.at.saturating_duration_since(e.at).as_nanos() as u64,
            )
        }
    }
}

/// Turns captured data into a report.
pub(crate) fn build(c: &Capture, wall_ns: u64) -> Report {
    let rt = runtime();
    let freq = rt.clock.frequency();
    let ns_per_tick = 1e9 / freq.hz;
    let to_ns = |t: u64| (t as f64 * ns_per_tick).round() as u64;
    let cal = CALIBRATION.get().copied();
    let (inner, call) = cal.map_or((0.0, 0.0), |c| (c.inner_ticks, c.call_ticks));
    let skip = &CALIBRATION_SITE as *const CallSite as usize;
    let merged = &c.merged;
    let children = merged.children();
    let comp = compensate(merged, &children, inner, call);
    let shown_comp = rt.config.compensate && cal.is_some();

    let flat = flatten(merged, Some(&comp), skip);
    let names: HashMap<usize, String> = flat.iter().map(|(&k, (s, _))| (k, s.name())).collect();
    let name_of = |k: usize| {
        names
            .get(&k)
            .cloned()
            .unwrap_or_else(|| "<root>".to_owned())
    };
    let edges = |m: &HashMap<usize, (u64, u64)>| {
        let mut v: Vec<Edge> = m
            .iter()
            .map(|(&k, &(calls, ticks))| Edge {
                name: name_of(k),
                calls,
                total_ns: to_ns(ticks),
            })
            .collect();
        v.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.name.cmp(&b.name))
        });
        v
    };
    let mut total_calls = 0u64;
    let mut sites: Vec<SiteStats> = flat
        .iter()
        .filter(|(_, (_, f))| f.acc.calls > 0 || f.acc.cancelled > 0)
        .map(|(&k, (site, f))| {
            let a = &f.acc;
            total_calls += a.calls;
            let accepted = a.calls - a.reversed - a.oversized;
            let min = if a.min == u64::MAX { 0 } else { a.min };
            let (total, self_t, lo, hi) = if shown_comp {
                // Per call: the inner cost and the average cost of the marked
                // calls beneath; then keep min <= mean <= max.
                let own = inner.min(min as f64);
                let per_call = own + f.below as f64 / a.calls.max(1) as f64 * call;
                let mean = if accepted == 0 {
                    0.0
                } else {
                    f.comp_ticks as f64 / accepted as f64
                };
                let lo = (min as f64 - per_call).max(0.0).min(mean);
                let hi = (a.max as f64 - per_call).max(0.0).max(mean);
                (
                    f.comp_ticks,
                    f.comp_self_ticks,
                    lo.round() as u64,
                    hi.round() as u64,
                )
            } else {
                (a.ticks, f.self_ticks, min, a.max)
            };
            SiteStats {
                name: names[&k].clone(),
                function: site.function_path(),
                kind: site.kind(),
                file: site.file().to_owned(),
                line: site.line(),
                calls: a.calls,
                total_ns: to_ns(total),
                self_ns: to_ns(self_t),
                mean_ns: if accepted == 0 {
                    0.0
                } else {
                    total as f64 * ns_per_tick / accepted as f64
                },
                min_ns: to_ns(lo),
                max_ns: to_ns(hi),
                total_ticks: a.ticks,
                self_ticks: f.self_ticks,
                min_ticks: min,
                max_ticks: a.max,
                raw_total_ns: to_ns(a.ticks),
                raw_self_ns: to_ns(f.self_ticks),
                compensated_total_ns: to_ns(f.comp_ticks),
                compensated_self_ns: to_ns(f.comp_self_ticks),
                reversed: a.reversed,
                oversized: a.oversized,
                unwound: a.unwound,
                wall_ns: to_ns(a.wall),
                cancelled: a.cancelled,
                callers: edges(&f.callers),
                callees: edges(&f.callees),
            }
        })
        .collect();
    sites.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });

    let threads: Vec<ThreadStats> = c
        .per_thread
        .iter()
        .filter(|(_, _, _, t)| t.nodes.len() > 1)
        .filter_map(|(name, id, finished, t)| {
            let ch = t.children();
            let tc = compensate(t, &ch, inner, call);
            let mut v: Vec<ThreadSite> = flatten(t, Some(&tc), skip)
                .values()
                .filter(|(_, f)| f.acc.calls > 0 || f.acc.cancelled > 0)
                .map(|(s, f)| ThreadSite {
                    name: s.name(),
                    calls: f.acc.calls,
                    total_ns: to_ns(if shown_comp {
                        f.comp_ticks
                    } else {
                        f.acc.ticks
                    }),
                    self_ns: to_ns(if shown_comp {
                        f.comp_self_ticks
                    } else {
                        f.self_ticks
                    }),
                })
                .collect();
            if v.is_empty() {
                return None;
            }
            v.sort_by(|a, b| {
                b.total_ns
                    .cmp(&a.total_ns)
                    .then_with(|| a.name.cmp(&b.name))
            });
            Some(ThreadStats {
                name: name.clone(),
                id: *id,
                finished: *finished,
                sites: v,
            })
        })
        .collect();

    let raw_selfs = merged.self_ticks(&children);
    let tree = tree_nodes(merged, &names, skip, |i| {
        let (t, s) = if shown_comp {
            (comp.ticks[i], comp.self_ticks[i])
        } else {
            (merged.nodes[i].acc.ticks, raw_selfs[i])
        };
        (
            to_ns(t),
            to_ns(s),
            to_ns(merged.nodes[i].acc.ticks),
            to_ns(raw_selfs[i]),
        )
    });
    let call_ns = call * ns_per_tick;
    let tracing = TRACE_ON.load(Ordering::Relaxed);
    let trace =
        tracing.then(|| crate::trace::build(&c.traces, rt.clock.start_ticks, ns_per_tick, skip));
    let trace_dropped = trace.as_ref().map_or(0, crate::trace::Trace::dropped);
    Report {
        run: RunInfo {
            clock: clock::SOURCE,
            frequency_hz: freq.hz,
            frequency_source: freq.how,
            invariant_tsc: rt.clock.invariant,
            wall_ns,
            threads: threads.len(),
            max_delta_ns: rt.config.max_delta.as_nanos().min(u128::from(u64::MAX)) as u64,
            out_of_order: c.resynced + c.orphaned,
            lost: c.lost,
            reentrant: c.reentrant,
            folded_calls: merged.folded_calls(),
            complete: c.complete,
            compensated: shown_comp,
            overhead_inner_ns: inner * ns_per_tick,
            overhead_inner_ticks: inner,
            overhead_call_ns: call_ns,
            overhead_call_ticks: call,
            calibration: cal.map_or_else(
                || "not calibrated".to_owned(),
                |c| format!("start-up calibration, medians over {} calls", c.calls),
            ),
            overhead_share: if wall_ns == 0 {
                0.0
            } else {
                total_calls as f64 * call_ns / wall_ns as f64
            },
            clamped: comp.clamped,
            tracing,
            trace_dropped,
        },
        sites,
        threads,
        tree,
        trace,
    }
}

/// The merged tree's regular nodes as report values (overflow nodes and the
/// calibration site left out). `times(i)` gives node i's shown total and
/// self and raw total and self, in nanoseconds.
fn tree_nodes(
    t: &Tree,
    names: &HashMap<usize, String>,
    skip: usize,
    times: impl Fn(usize) -> (u64, u64, u64, u64),
) -> Vec<TreeNode> {
    if t.nodes.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(t.nodes.len());
    let mut new_index = vec![usize::MAX; t.nodes.len()];
    for (i, n) in t.nodes.iter().enumerate() {
        if i == 0 {
            new_index[0] = 0;
            out.push(TreeNode {
                name: String::new(),
                parent: None,
                depth: 0,
                calls: 0,
                total_ns: 0,
                self_ns: 0,
                raw_total_ns: 0,
                raw_self_ns: 0,
            });
            continue;
        }
        let p = new_index
            .get(n.parent as usize)
            .copied()
            .unwrap_or(usize::MAX);
        let site_ptr = n.site.map_or(0, |s| s as *const CallSite as usize);
        if n.flags != 0 || p == usize::MAX || site_ptr == skip {
            continue;
        }
        let name = n.site.map_or_else(String::new, |s| {
            names.get(&site_ptr).cloned().unwrap_or_else(|| s.name())
        });
        new_index[i] = out.len();
        let depth = out[p].depth + 1;
        let (total_ns, self_ns, raw_total_ns, raw_self_ns) = times(i);
        out.push(TreeNode {
            name,
            parent: Some(p),
            depth,
            calls: n.acc.calls,
            total_ns,
            self_ns,
            raw_total_ns,
            raw_self_ns,
        });
    }
    out
}

/// Zeroes every site and restarts the wall clock.
pub(crate) fn reset() {
    let rt = runtime();
    thread::reset_all();
    if let Ok(mut e) = rt.epoch.lock() {
        *e = Instant::now();
    }
}

/// Whether no thread ever made a marked call (then the exit report, and the
/// frequency check it would wait for, are skipped).
fn nothing_recorded() -> bool {
    !crate::thread::RECORDED_ANY.load(Ordering::Relaxed)
}

/// The exit report: text to stderr (unless `TICKPROF_STDERR=0`), then the
/// `TICKPROF_OUT` files.
pub(crate) fn exit_report() {
    let rt = runtime();
    if !rt.config.enabled || nothing_recorded() {
        return;
    }
    if !rt.config.stderr && rt.config.outputs.is_empty() && !rt.config.trace {
        return;
    }
    let mut report = collect();
    RECORDING.store(false, Ordering::Relaxed);
    if report.sites.is_empty() {
        return;
    }
    report.sort(rt.config.sort);
    let opts = TextOptions {
        top: rt.config.top,
        tree: rt.config.layout == crate::config::Layout::Tree,
        threads: rt.config.threads,
    };
    if rt.config.stderr {
        write_stderr(&report.text(&opts));
    }
    let mut outputs = rt.config.outputs.clone();
    if rt.config.trace && !outputs.iter().any(|p| p.ends_with(".trace.json")) {
        outputs.push(DEFAULT_TRACE_FILE.to_owned());
    }
    for path in &outputs {
        if let Err(e) = crate::export::write_to_path(&report, path, &opts) {
            write_stderr(&format!(
                "tickprof: warning: cannot write TICKPROF_OUT file {path:?}: {e}\n"
            ));
        }
    }
}

#[ctor::ctor(unsafe)]
fn tickprof_init() {
    let _ = std::panic::catch_unwind(|| {
        let config = &runtime().config;
        if config.enabled {
            let _ = calibration();
            // After calibration, whose calls are not the program's.
            if config.trace {
                TRACE_ON.store(true, Ordering::Relaxed);
            }
        }
    });
}

#[dtor::dtor(unsafe)]
fn tickprof_exit_report() {
    let _ = std::panic::catch_unwind(exit_report);
}

/// Records a raw delta against `site` as if a guard had measured it.
pub fn record_raw(site: &'static CallSite, delta: u64) {
    thread::record_raw(site, delta);
}
