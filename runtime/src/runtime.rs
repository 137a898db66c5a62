//! Process-wide state: settings, clock, report collection and the exit hook.

use crate::clock::{self, Clock};
use crate::config::Config;
use crate::report::{
    ClockSource, Edge, Report, RunInfo, SiteStats, TextOptions, ThreadSite, ThreadStats, TreeNode,
};
use crate::site::CallSite;
use crate::thread::{self, try_lock_global, LOST, MAX_NODES, MAX_TICKS, RECORDING};
use crate::tree::{flatten, Tree};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

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

/// Builds the report from every live thread and every finished one.
pub(crate) fn collect() -> Report {
    let rt = runtime();
    if !rt.config.enabled {
        return Report::empty();
    }
    let freq = rt.clock.frequency();
    let wall_ns = rt
        .epoch
        .lock()
        .map_or(Duration::ZERO, |e| e.elapsed())
        .as_nanos() as u64;
    let (merged, mut per_thread, resynced, orphaned, reentrant, complete) =
        match try_lock_global(REPORT_LOCK_WAIT) {
            Some(g) => {
                let mut merged = g.finished.clone();
                let mut per_thread: Vec<(String, u64, bool, Tree)> = g
                    .finished_threads
                    .iter()
                    .map(|(n, id, t)| (n.clone(), *id, true, t.clone()))
                    .collect();
                let (mut rs, mut or, mut re) = (
                    g.finished_resynced,
                    g.finished_orphaned,
                    g.finished_reentrant,
                );
                let live = g.live.clone();
                drop(g);
                for a in &live {
                    let t = a.snapshot();
                    merged.merge(&t);
                    rs += a.resynced.load(Ordering::Relaxed);
                    or += a.orphaned.load(Ordering::Relaxed);
                    re += a.reentrant.load(Ordering::Relaxed);
                    per_thread.push((a.thread_name.clone(), a.thread_id, false, t));
                }
                (merged, per_thread, rs, or, re, true)
            }
            None => (Tree::new(), Vec::new(), 0, 0, 0, false),
        };
    per_thread.sort_by_key(|t| t.1);
    let ns_per_tick = 1e9 / freq.hz;
    let to_ns = |t: u64| (t as f64 * ns_per_tick).round() as u64;

    let flat = flatten(&merged);
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
    let mut sites: Vec<SiteStats> = flat
        .iter()
        .filter(|(_, (_, f))| f.acc.calls > 0 || f.acc.cancelled > 0)
        .map(|(&k, (site, f))| {
            let a = &f.acc;
            let accepted = a.calls - a.reversed - a.oversized;
            let min = if a.min == u64::MAX { 0 } else { a.min };
            SiteStats {
                name: names[&k].clone(),
                function: site.function_path(),
                kind: site.kind(),
                file: site.file().to_owned(),
                line: site.line(),
                calls: a.calls,
                total_ns: to_ns(a.ticks),
                self_ns: to_ns(f.self_ticks),
                mean_ns: if accepted == 0 {
                    0.0
                } else {
                    a.ticks as f64 * ns_per_tick / accepted as f64
                },
                min_ns: to_ns(min),
                max_ns: to_ns(a.max),
                total_ticks: a.ticks,
                self_ticks: f.self_ticks,
                min_ticks: min,
                max_ticks: a.max,
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

    let threads: Vec<ThreadStats> = per_thread
        .iter()
        .filter(|(_, _, _, t)| t.nodes.len() > 1)
        .map(|(name, id, finished, t)| {
            let mut v: Vec<ThreadSite> = flatten(t)
                .values()
                .map(|(s, f)| ThreadSite {
                    name: s.name(),
                    calls: f.acc.calls,
                    total_ns: to_ns(f.acc.ticks),
                    self_ns: to_ns(f.self_ticks),
                })
                .collect();
            v.sort_by(|a, b| {
                b.total_ns
                    .cmp(&a.total_ns)
                    .then_with(|| a.name.cmp(&b.name))
            });
            ThreadStats {
                name: name.clone(),
                id: *id,
                finished: *finished,
                sites: v,
            }
        })
        .collect();

    let tree = tree_nodes(&merged, &names, to_ns);
    Report {
        run: RunInfo {
            clock: clock::SOURCE,
            frequency_hz: freq.hz,
            frequency_source: freq.how,
            invariant_tsc: rt.clock.invariant,
            wall_ns,
            threads: threads.len(),
            max_delta_ns: rt.config.max_delta.as_nanos().min(u128::from(u64::MAX)) as u64,
            out_of_order: resynced + orphaned,
            lost: LOST.load(Ordering::Relaxed),
            reentrant,
            folded_calls: merged.folded_calls(),
            complete,
        },
        sites,
        threads,
        tree,
    }
}

/// The merged tree's regular nodes as report values (overflow nodes left out).
fn tree_nodes(
    t: &Tree,
    names: &HashMap<usize, String>,
    to_ns: impl Fn(u64) -> u64,
) -> Vec<TreeNode> {
    if t.nodes.is_empty() {
        return Vec::new();
    }
    let children = t.children();
    let selfs = t.self_ticks(&children);
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
            });
            continue;
        }
        let p = new_index
            .get(n.parent as usize)
            .copied()
            .unwrap_or(usize::MAX);
        if n.flags != 0 || p == usize::MAX {
            continue;
        }
        let name = n.site.map_or_else(String::new, |s| {
            names
                .get(&(s as *const CallSite as usize))
                .cloned()
                .unwrap_or_else(|| s.name())
        });
        new_index[i] = out.len();
        let depth = out[p].depth + 1;
        out.push(TreeNode {
            name,
            parent: Some(p),
            depth,
            calls: n.acc.calls,
            total_ns: to_ns(n.acc.ticks),
            self_ns: to_ns(selfs[i]),
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

/// The exit report: text to stderr, then the `TICKPROF_OUT` files.
pub(crate) fn exit_report() {
    let rt = runtime();
    if !rt.config.enabled {
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
    write_stderr(&report.text(&opts));
    for path in &rt.config.outputs {
        let body = if path.ends_with(".csv") {
            report.to_csv()
        } else {
            report.text(&opts)
        };
        if let Err(e) = std::fs::write(path, body) {
            write_stderr(&format!(
                "tickprof: warning: cannot write TICKPROF_OUT file {path:?}: {e}\n"
            ));
        }
    }
}

#[ctor::ctor(unsafe)]
fn tickprof_init() {
    let _ = std::panic::catch_unwind(runtime);
}

#[dtor::dtor(unsafe)]
fn tickprof_exit_report() {
    let _ = std::panic::catch_unwind(exit_report);
}

/// Records a raw delta against `site` as if a guard had measured it.
pub fn record_raw(site: &'static CallSite, delta: u64) {
    thread::record_raw(site, delta);
}
