//! What `benches/accuracy.rs` adds to the shared cases: case D (a parent
//! alternating a ~20 ns leaf and a ~2 µs child), case E (a parent of
//! known per-call duration with many marked calls beneath), the busy mode
//! (`ACCURACY_BUSY=1`: a spinning thread per core while the cases run), and
//! whether a report timed or counted a site (its JSON `timing` field).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;
use tickprof::profile;

/// Rounds of dependent arithmetic in the leaf: about 20 ns optimised.
const LEAF_ROUNDS: u32 = 28;
/// Rounds in the child: a hundred leaves, about 2 µs.
const CHILD_ROUNDS: u32 = 100 * LEAF_ROUNDS;

/// `rounds` steps of a dependent multiply-rotate-xor chain on `x`.
#[inline(always)]
fn chain(x: u64, rounds: u32) -> u64 {
    let mut h = black_box(x);
    for _ in 0..black_box(rounds) {
        h = h.wrapping_mul(0x2545_F491_4F6C_DD1D).rotate_left(11) ^ x;
    }
    h
}

#[inline(never)]
#[profile]
fn d_leaf(x: u64) -> u64 {
    chain(x, LEAF_ROUNDS)
}

#[inline(never)]
#[profile]
fn d_child(x: u64) -> u64 {
    chain(x, CHILD_ROUNDS)
}

/// Case D: the leaf and the child alternate, each call depending on the
/// previous result.
#[inline(never)]
#[profile]
fn d_parent(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = d_leaf(acc ^ i);
        acc = d_child(acc);
    }
    acc
}

#[inline(never)]
fn plain_leaf(x: u64) -> u64 {
    chain(x, LEAF_ROUNDS)
}

#[inline(never)]
fn plain_child(x: u64) -> u64 {
    chain(x, CHILD_ROUNDS)
}

#[inline(never)]
fn plain_parent(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = plain_leaf(acc ^ i);
        acc = plain_child(acc);
    }
    acc
}

/// `f` alone in a chain of `n` calls: its true cost per call.
#[inline(never)]
fn plain_alone(f: fn(u64) -> u64, n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = f(acc ^ i);
    }
    acc
}

/// Calls of the leaf alone per call of the parent's loop when timing the
/// leaf's true cost: enough for a measurement of tens of milliseconds.
const LEAF_REPEAT: u64 = 50;

/// Errors of case D, medians over the rounds.
pub struct CaseD {
    /// The child's true cost: the unmarked child loop's time per call, ns.
    pub child_ns: f64,
    /// The leaf's true cost: the unmarked leaf loop's time per call, ns.
    pub leaf_ns: f64,
    /// (parent compensated total − truth) ÷ truth, and the same raw.
    pub parent: (f64, f64),
    /// (child compensated mean − truth) ÷ truth, and the same raw.
    pub child: (f64, f64),
    /// Leaf compensated mean ÷ its true cost, and the same raw.
    pub leaf: (f64, f64),
    /// Invariants broken in any round (empty when all held).
    pub broken: Vec<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs case D: `n` leaf-child pairs per round, `rounds` rounds, each
/// against the unmarked loops timed with `Instant` just before.
pub fn case_d(n: u64, rounds: usize) -> CaseD {
    let mut v: [Vec<f64>; 8] = Default::default();
    let mut broken = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let a = plain_parent(n);
        let truth = t.elapsed().as_nanos() as f64;
        let t = Instant::now();
        black_box(plain_alone(plain_child, n));
        let child_truth = t.elapsed().as_nanos() as f64 / n as f64;
        let t = Instant::now();
        black_box(plain_alone(plain_leaf, LEAF_REPEAT * n));
        let leaf_truth = t.elapsed().as_nanos() as f64 / (LEAF_REPEAT * n) as f64;
        let before = tickprof::snapshot();
        let b = d_parent(n);
        let r = &tickprof::snapshot() - &before;
        assert_eq!(a, b);
        let (Some(p), Some(c), Some(l)) = (
            r.find("::d_parent"),
            r.find("::d_child"),
            r.find("::d_leaf"),
        ) else {
            broken.push("a site of case D is missing from the report".to_owned());
            continue;
        };
        assert_eq!((p.calls, c.calls, l.calls), (1, n, n));
        for s in [p, c, l] {
            if s.self_ns > s.total_ns || s.raw_self_ns > s.raw_total_ns {
                broken.push(format!("{}: self above total", s.name));
            }
            if !(s.min_ns as f64 <= s.mean_ns + 0.5 && s.mean_ns <= s.max_ns as f64 + 0.5) {
                broken.push(format!("{}: min > mean or mean > max", s.name));
            }
        }
        if c.total_ns + l.total_ns > p.total_ns || c.raw_total_ns + l.raw_total_ns > p.raw_total_ns
        {
            broken.push("children's totals above their parent's".to_owned());
        }
        let per = |total: u64| total as f64 / n as f64;
        v[0].push(child_truth);
        v[1].push(leaf_truth);
        v[2].push((p.compensated_total_ns as f64 - truth) / truth);
        v[3].push((p.raw_total_ns as f64 - truth) / truth);
        v[4].push((per(c.compensated_total_ns) - child_truth) / child_truth);
        v[5].push((per(c.raw_total_ns) - child_truth) / child_truth);
        v[6].push(per(l.compensated_total_ns) / leaf_truth);
        v[7].push(per(l.raw_total_ns) / leaf_truth);
    }
    let [c_ns, l_ns, p, pr, c, cr, l, lr] =
        v.map(|x| if x.is_empty() { f64::NAN } else { median(x) });
    CaseD {
        child_ns: c_ns,
        leaf_ns: l_ns,
        parent: (p, pr),
        child: (c, cr),
        leaf: (l, lr),
        broken,
    }
}

/// Marked calls case E's parent makes beneath each of its calls.
const E_KIDS: u64 = 40;

#[inline(never)]
#[profile]
fn e_kid(x: u64) -> u64 {
    chain(x, LEAF_ROUNDS)
}

/// Case E's parent: ~2 µs of its own and `E_KIDS` marked calls beneath.
#[inline(never)]
#[profile]
fn e_parent(x: u64) -> u64 {
    let mut acc = chain(x, CHILD_ROUNDS);
    for i in 0..E_KIDS {
        acc = e_kid(acc ^ i);
    }
    acc
}

#[inline(never)]
fn plain_e_parent(x: u64) -> u64 {
    let mut acc = chain(x, CHILD_ROUNDS);
    for i in 0..E_KIDS {
        acc = plain_leaf(acc ^ i);
    }
    acc
}

/// The median of `n` calls of `f`, each timed alone (a chain, as in
/// [`plain_alone`]), less the median of an empty timing: a call's true
/// median, which a mean over a loop is not where some calls wait for
/// the CPU (a busy host preempts a few calls for milliseconds).
fn plain_median(f: fn(u64) -> u64, n: u64) -> f64 {
    let mut acc = 0u64;
    let (mut calls, mut empty) = (Vec::new(), Vec::new());
    for i in 0..n {
        let t = Instant::now();
        acc = f(acc ^ i);
        calls.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        empty.push(black_box(t).elapsed().as_nanos() as f64);
    }
    black_box(acc);
    median(calls) - median(empty)
}

/// Errors of case E, medians over the rounds.
pub struct CaseE {
    /// The parent's true cost per call (the unmarked twin's mean), ns.
    pub truth_ns: f64,
    /// The parent's true median call (the unmarked twin's, each call
    /// timed alone), ns.
    pub truth_p50_ns: f64,
    /// (p50 − true median) ÷ true median, measured and raw.
    pub p50: (f64, f64),
    /// (mean − truth) ÷ truth, measured and raw.
    pub mean: (f64, f64),
    /// Invariants broken in any round.
    pub broken: Vec<String>,
}

/// Case E: a parent of known per-call duration (its unmarked twin, timed
/// just before each round) making `E_KIDS` marked calls beneath each call:
/// its median call, with its own instrumentation taken out, against the
/// twin's median call, and its mean against the twin's. `n` calls a
/// round.
pub fn case_e(n: u64, rounds: usize) -> CaseE {
    let mut v: [Vec<f64>; 6] = Default::default();
    let mut broken = Vec::new();
    for _ in 0..rounds {
        let truth_p50 = plain_median(plain_e_parent, n);
        let t = Instant::now();
        let a = plain_alone(plain_e_parent, n);
        let truth = t.elapsed().as_nanos() as f64 / n as f64;
        let before = tickprof::snapshot();
        let b = plain_alone(e_parent, n);
        let r = &tickprof::snapshot() - &before;
        assert_eq!(a, b);
        let Some(p) = r.find("::e_parent") else {
            broken.push("case E's parent is missing from the report".to_owned());
            continue;
        };
        if !(p.min_ns <= p.p50_ns
            && p.p50_ns <= p.p90_ns
            && p.p90_ns <= p.p99_ns
            && p.p99_ns <= p.max_ns)
        {
            broken.push(format!("e_parent: percentiles out of order: {p:?}"));
        }
        // The raw median: the histogram's, without correction.
        let raw_p50 = raw_quantile(&p.hist, 0.5);
        v[0].push(truth);
        v[1].push((p.p50_ns as f64 - truth_p50) / truth_p50);
        v[2].push((raw_p50 - truth_p50) / truth_p50);
        v[3].push((p.mean_ns - truth) / truth);
        v[4].push((p.raw_total_ns as f64 / p.calls as f64 - truth) / truth);
        v[5].push(truth_p50);
    }
    let [t, p50, p50r, m, mr, tp] = v.map(|x| if x.is_empty() { f64::NAN } else { median(x) });
    CaseE {
        truth_ns: t,
        truth_p50_ns: tp,
        p50: (p50, p50r),
        mean: (m, mr),
        broken,
    }
}

/// The `q` quantile of a report's histogram (`(upper_ns, count)`), ns.
fn raw_quantile(hist: &[(u64, u64)], q: f64) -> f64 {
    let n: u64 = hist.iter().map(|h| h.1).sum();
    let rank = ((q * n as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for &(upper, c) in hist {
        seen += c;
        if seen >= rank {
            return upper as f64;
        }
    }
    0.0
}

/// Spinning threads, one per core, while alive (the busy mode).
pub struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Busy {
    /// Reads `ACCURACY_BUSY` (`1` busy, `0` or unset quiet; anything else
    /// is one warning line and quiet) and, when busy, starts a spinning
    /// thread per core.
    pub fn from_env() -> Busy {
        let on = match std::env::var("ACCURACY_BUSY").as_deref() {
            Ok("1") => true,
            Ok("0") | Err(_) => false,
            Ok(other) => {
                eprintln!("ACCURACY_BUSY={other:?} is not 0 or 1; using the default, 0 (quiet)");
                false
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let cores = if on {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            0
        };
        let threads = (0..cores)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..1000 {
                            x = black_box(x.wrapping_mul(3).wrapping_add(1));
                        }
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }

    /// How many spinning threads run.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// How the report timed the site whose name ends in `suffix`: its JSON
/// `timing` field (`timed` when the field is missing, as in reports
/// written before adaptive timing), with the calls that read the clock,
/// e.g. `counted (3,125 of 1,000,000 calls timed)`.
pub fn timing(report: &tickprof::Report, suffix: &str) -> String {
    let json = match tickprof::export::json::render(report) {
        Ok(j) => j,
        Err(e) => return format!("? ({e})"),
    };
    let doc: serde_json::Value = match serde_json::from_slice(&json) {
        Ok(d) => d,
        Err(e) => return format!("? ({e})"),
    };
    let site = doc["sites"].as_array().and_then(|sites| {
        sites
            .iter()
            .find(|s| s["name"].as_str().is_some_and(|n| n.ends_with(suffix)))
    });
    let Some(site) = site else {
        return "? (no such site)".to_owned();
    };
    let how = site["timing"].as_str().unwrap_or("timed");
    let calls = site["calls"].as_u64().unwrap_or(0);
    let timed = site["timed_calls"].as_u64().unwrap_or(calls);
    format!("{how} ({timed} of {calls} calls timed)")
}
