//! A model-based test of the recorder: proptest generates sequences of
//! marked calls (guards entered and dropped, in order or not, leaked,
//! marked functions, panics unwinding through marks), threads that run a
//! sub-sequence and exit, reports, snapshots and their differences, and
//! resets; each sequence runs on the real recorder, through the public API
//! only, and on the plain model in `support/cct_model.rs`, and every report
//! is compared with the model: per-site calls and unwound calls, every
//! call path of the tree, every caller → callee edge, the per-thread rows,
//! the out-of-order, leaked and folded counts, and the report's
//! invariants. No time is asserted.
//!
//! `recorder_matches_the_model` runs in this process, with the default node
//! cap. `a_small_node_cap_folds_as_modelled` re-runs this binary as a child
//! (`child_workload`) with small `TICKPROF_MAX_NODES` and
//! `TICKPROF_THREADS_KEPT` (`CHILDREN`), so that calls on new paths are
//! folded into overflow nodes and finished threads share the
//! `<other threads>` row.
//!
//! Cases: 128 by default each, or `PROPTEST_CASES` (the CI's longer run).
#![cfg(feature = "enabled")]

use crate::support::child;

use crate::support::cct_model;

use cct_model::{Capture, Expected, Model, Site};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The marker of the child process.
const CHILD: &str = "TPTEST_RECORDER_MODEL_CHILD";
/// The children's settings: (`TICKPROF_MAX_NODES`, `TICKPROF_THREADS_KEPT`).
/// A cap of 1 folds every call (the root is the only regular node); 8 is
/// reached by most sequences part-way. A sequence's threads have up to four
/// names (`THREAD_NAMES` and `CASE_THREAD`): past the first one or two to
/// finish, they share `<other threads>`.
const CHILDREN: &[(&str, &str)] = &[("1", "1"), ("8", "2")];
/// Cases per run unless `PROPTEST_CASES` says otherwise.
const DEFAULT_CASES: u32 = 128;

/// The guard sites, each its own `prof_guard!` (its own static call site):
/// sites `0..GUARD_SITES`.
macro_rules! guard_sites {
    ($($k:literal => $name:literal),* $(,)?) => {
        const GUARD_NAMES: &[&str] = &[$($name),*];

        /// A guard of guard site `k`.
        fn enter_guard(k: Site) -> tickprof::Guard {
            match k {
                $($k => tickprof::prof_guard!($name),)*
                _ => unreachable!("guard site {k}"),
            }
        }
    };
}

guard_sites!(0 => "g0", 1 => "g1", 2 => "g2", 3 => "g3", 4 => "g4", 5 => "g5");

const GUARD_SITES: Site = GUARD_NAMES.len() as Site;

/// The marked functions, sites `GUARD_SITES..ALL_SITES`: each runs `body`
/// inside its call.
#[tickprof::profile(name = "recorder_model f0")]
fn call_f0(body: &mut dyn FnMut()) {
    body()
}

#[tickprof::profile(name = "recorder_model f1")]
fn call_f1(body: &mut dyn FnMut()) {
    body()
}

const FN_NAMES: &[&str] = &["recorder_model f0", "recorder_model f1"];
const ALL_SITES: Site = GUARD_SITES + FN_NAMES.len() as Site;

fn call_fn(k: Site, body: &mut dyn FnMut()) {
    match k - GUARD_SITES {
        0 => call_f0(body),
        _ => call_f1(body),
    }
}

/// Names of the finished threads a sequence may start.
const THREAD_NAMES: &[&str] = &["model-a", "model-b", "model-c"];
/// The thread each case runs on.
const CASE_THREAD: &str = "model-case";

/// One step of a sequence.
#[derive(Clone, Debug)]
enum Op {
    /// Enter guard site `k`: its guard goes on top of the sequence's stack
    /// of guards.
    Enter(Site),
    /// Drop the guard on top (nothing if none).
    Exit,
    /// Drop the guard `i % len` below the top (out of order unless 0).
    DropAt(u8),
    /// `mem::forget` the guard `i % len` below the top.
    Leak(u8),
    /// Call marked function `k`, running the sub-sequence inside it (its
    /// guards stay on the stack of guards after the call returns).
    Call(Site, Vec<Op>),
    /// Enter these sites (guards and functions) nested, and panic in the
    /// innermost: `catch_unwind` catches it here.
    Panic(Vec<Site>),
    /// Run the sub-sequence on a new thread with this name, drop its
    /// remaining guards in order, let it exit and join it.
    Thread(u8, Vec<Op>),
    /// `tickprof::report()` and `tickprof::sites()`, compared.
    Check,
    /// `tickprof::snapshot()`: its report is compared, and the snapshot kept.
    Snapshot,
    /// A snapshot now minus the kept snapshot `i % len` from the latest.
    Diff(u8),
    /// `tickprof::reset()`.
    Reset,
    /// A call of guard site `k` made in a signal handler on this thread
    /// (`raise`: the handler runs at once, its call a child of the frame
    /// on top; on a new thread, often its first marked call).
    Signal(Site),
}

fn op() -> impl Strategy<Value = Op> {
    let leaf = prop_oneof![
        8 => (0..GUARD_SITES).prop_map(Op::Enter),
        6 => Just(Op::Exit),
        2 => any::<u8>().prop_map(Op::DropAt),
        1 => any::<u8>().prop_map(Op::Leak),
        1 => vec(0..ALL_SITES, 1..5).prop_map(Op::Panic),
        1 => Just(Op::Check),
        1 => Just(Op::Snapshot),
        1 => any::<u8>().prop_map(Op::Diff),
        1 => Just(Op::Reset),
        2 => (0..GUARD_SITES).prop_map(Op::Signal),
    ];
    leaf.prop_recursive(3, 48, 10, |inner| {
        prop_oneof![
            (GUARD_SITES..ALL_SITES, vec(inner.clone(), 0..10)).prop_map(|(k, b)| Op::Call(k, b)),
            (0..THREAD_NAMES.len() as u8, vec(inner, 0..10)).prop_map(|(n, b)| Op::Thread(n, b)),
        ]
    })
}

/// The guard site the signal handler enters.
static SIGNAL_SITE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    drop(enter_guard(
        SIGNAL_SITE.load(std::sync::atomic::Ordering::Relaxed) as Site,
    ));
}

/// Makes one call of guard site `k` in a signal handler on this thread.
fn in_a_handler(k: Site) {
    SIGNAL_SITE.store(u32::from(k), std::sync::atomic::Ordering::Relaxed);
    #[cfg(unix)]
    {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        // SAFETY: a zeroed `sigaction` is valid; the handler lives as long
        // as the process; `raise` runs it on this thread before returning.
        unsafe {
            INSTALL.call_once(|| {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut());
            });
            libc::raise(libc::SIGUSR2);
        }
    }
    #[cfg(not(unix))]
    drop(enter_guard(k));
}

/// The payload of the test's panics.
struct ModelPanic;

/// Enters `chain` nested, and panics inside the innermost.
fn unwind_through(chain: &[Site]) {
    match chain.split_first() {
        None => resume_unwind(Box::new(ModelPanic)),
        Some((&k, rest)) if k < GUARD_SITES => {
            let _g = enter_guard(k);
            unwind_through(rest);
        }
        Some((&k, rest)) => call_fn(k, &mut || unwind_through(rest)),
    }
}

/// The sites' names in reports, by site number.
struct Names(Vec<String>);

impl Names {
    /// From `tickprof::sites()`, which lists every mark, called or not.
    fn find() -> Names {
        let all = tickprof::sites();
        let find = |suffix: String| {
            let hits: Vec<_> = all.iter().filter(|s| s.name.ends_with(&suffix)).collect();
            assert_eq!(hits.len(), 1, "one mark named *{suffix}");
            hits[0].name.clone()
        };
        let mut v: Vec<String> = GUARD_NAMES
            .iter()
            .map(|n| find(format!("::enter_guard::{n}")))
            .collect();
        v.extend(FN_NAMES.iter().map(|n| find((*n).to_owned())));
        Names(v)
    }

    fn site(&self, name: &str) -> Result<Site, String> {
        self.0
            .iter()
            .position(|n| n == name)
            .map(|i| i as Site)
            .ok_or_else(|| format!("a site not in the sequence: {name}"))
    }

    fn caller(&self, name: &str) -> Result<Option<Site>, String> {
        if name == "<root>" {
            Ok(None)
        } else {
            self.site(name).map(Some)
        }
    }
}

/// What a report shows, in the model's terms (edges: from the callers
/// lists; the callees lists must be their mirror).
fn observe(r: &tickprof::Report, names: &Names) -> Result<Expected, String> {
    let mut sites = BTreeMap::new();
    let mut edges = BTreeMap::new();
    let mut mirror = BTreeMap::new();
    for s in &r.sites {
        let k = names.site(&s.name)?;
        sites.insert(k, (s.calls, s.unwound));
        for e in s.callers.iter().filter(|e| e.calls > 0) {
            edges.insert((names.caller(&e.name)?, k), e.calls);
        }
        for e in s.callees.iter().filter(|e| e.calls > 0) {
            mirror.insert((Some(k), names.site(&e.name)?), e.calls);
        }
    }
    let called: BTreeMap<_, _> = edges
        .iter()
        // A caller with no completed call has no row, hence no callees.
        .filter(|((caller, _), _)| caller.is_some_and(|c| sites.contains_key(&c)))
        .map(|(k, v)| (*k, *v))
        .collect();
    if called != mirror {
        return Err(format!(
            "callees are not the callers' mirror: {called:?} vs {mirror:?}"
        ));
    }
    let mut tree = BTreeMap::new();
    for i in 1..r.tree.len() {
        let path = r
            .path(i)
            .iter()
            .map(|n| names.site(n))
            .collect::<Result<Vec<_>, _>>()?;
        if tree.insert(path.clone(), r.tree[i].calls).is_some() {
            return Err(format!("path {path:?} twice in the tree"));
        }
    }
    let mut threads = Vec::new();
    for t in &r.threads {
        let mut calls = BTreeMap::new();
        for s in &t.sites {
            *calls.entry(names.site(&s.name)?).or_insert(0) += s.calls;
        }
        threads.push((t.name.clone(), t.finished, t.count, calls));
    }
    threads.sort();
    Ok(Expected {
        sites,
        folded: r.run.folded_calls,
        tree,
        edges,
        threads,
        out_of_order: r.run.out_of_order,
        leaked: r.run.leaked,
    })
}

/// The invariants every report keeps, whatever the sequence.
///
/// Of a difference across a reset (`want.across_reset`) only what holds
/// by construction is checked; the rows are checked where they are
/// expected to hold exactly the calls of the sites (`want.exact_rows`).
fn invariants(r: &tickprof::Report, want: &Capture) -> Result<(), String> {
    let exact_rows = want.exact_rows;
    let fail = |what: &str, detail: String| Err(format!("invariant {what}: {detail}"));
    if r.run.lost != 0 || r.run.reentrant != 0 {
        return fail("nothing lost or re-entrant", format!("{:?}", r.run));
    }
    let threads: u64 = r.threads.iter().map(|t| t.count).sum();
    if r.run.threads as u64 != threads {
        return fail(
            "threads = Σ row counts",
            format!("{} vs {threads}", r.run.threads),
        );
    }
    for s in &r.sites {
        let d = || format!("{s:?}");
        if s.self_ns > s.total_ns
            || s.raw_self_ns > s.raw_total_ns
            || s.compensated_self_ns > s.compensated_total_ns
        {
            return fail("self ≤ total", d());
        }
        if s.rejected() > s.calls || (s.unwound > s.calls && !want.across_reset) {
            return fail("rejected, unwound ≤ calls", d());
        }
        if s.calls > s.rejected() && !(s.min_ns as f64 <= s.mean_ns && s.mean_ns <= s.max_ns as f64)
        {
            return fail("min ≤ mean ≤ max", d());
        }
        if let Some(e) = s.callers.iter().find(|e| e.total_ns > s.total_ns) {
            return fail(
                "caller edge ≤ the site's total",
                format!("{e:?} of {}", d()),
            );
        }
        for e in &s.callees {
            match r.site(&e.name) {
                Some(callee) if e.total_ns <= callee.total_ns => {}
                // A callee whose every call is still open or leaked has no
                // row; its edge may carry its completed children's time.
                None if e.calls == 0 => {}
                _ => {
                    return fail(
                        "callee edge ≤ the callee's total",
                        format!("{e:?} of {}", d()),
                    )
                }
            }
        }
        let per_thread: u64 = r
            .threads
            .iter()
            .flat_map(|t| &t.sites)
            .filter(|t| t.name == s.name)
            .map(|t| t.calls)
            .sum();
        if exact_rows && per_thread != s.calls {
            return fail(
                "Σ per-thread calls = site calls",
                format!("{per_thread} vs {}", d()),
            );
        }
    }
    if let Some(t) = r
        .threads
        .iter()
        .flat_map(|t| &t.sites)
        .find(|t| t.calls > 0 && r.site(&t.name).is_none())
    {
        if exact_rows {
            return fail(
                "a per-thread row's site is a site of the report",
                format!("{t:?}"),
            );
        }
    }
    for (i, n) in r.tree.iter().enumerate() {
        let d = || format!("node {i} {n:?}");
        match n.parent {
            None if i == 0 && n.depth == 0 => {}
            Some(p) if p < i && n.depth == r.tree[p].depth + 1 => {}
            _ => return fail("parents first, depth = parent's + 1", d()),
        }
        if n.self_ns > n.total_ns || n.raw_self_ns > n.raw_total_ns {
            return fail("node self ≤ total", d());
        }
        let kids = r.tree.iter().filter(|c| c.parent == Some(i));
        let (t, raw) = kids.fold((0, 0), |(t, raw), c| (t + c.total_ns, raw + c.raw_total_ns));
        if t > n.total_ns || raw > n.raw_total_ns {
            return fail("children ≤ parent", format!("{} ({t}, {raw})", d()));
        }
    }
    Ok(())
}

/// Whether the recorder's thread rows are the model's. A live thread whose
/// first marked call ran in a signal handler is listed as `<thread N>`
/// until a later call finds its name (see the docs of signal handlers in
/// docs/internals.md): such a row stands for any live row of the model
/// with the same calls.
fn same_rows<R: PartialEq + std::fmt::Debug>(
    got: &[(String, bool, u64, R)],
    want: &[(String, bool, u64, R)],
) -> bool {
    if got.len() != want.len() {
        return false;
    }
    let mut left: Vec<&(String, bool, u64, R)> = want.iter().collect();
    let pending = |g: &(String, bool, u64, R)| !g.1 && g.0.starts_with("<thread ");
    // Named rows first, then each placeholder against what is left.
    let (placeholders, named): (Vec<_>, Vec<_>) = got.iter().partition(|g| pending(g));
    for g in named.into_iter().chain(placeholders) {
        let at = left.iter().position(|w| {
            (w.0 == g.0 || pending(g) && !w.1) && w.1 == g.1 && w.2 == g.2 && w.3 == g.3
        });
        match at {
            Some(i) => {
                left.remove(i);
            }
            None => return false,
        }
    }
    true
}

/// Compares a report with the model's capture.
fn compare(what: &str, r: &tickprof::Report, want: &Capture, names: &Names) -> Result<(), String> {
    let got = observe(r, names).map_err(|e| format!("{what}: {e}"))?;
    let want_rows_exact = want.exact_rows;
    let expected = want.expect();
    let diff = |field: &str, g: &dyn std::fmt::Debug, w: &dyn std::fmt::Debug| {
        Err(format!("{what}: {field}: recorder {g:?}, model {w:?}"))
    };
    if got.sites != expected.sites {
        return diff("site (calls, unwound)", &got.sites, &expected.sites);
    }
    if got.tree != expected.tree {
        return diff("tree path → calls", &got.tree, &expected.tree);
    }
    if got.edges != expected.edges {
        return diff("edges", &got.edges, &expected.edges);
    }
    // Rows are compared, and add up, except across a reset, where a
    // difference's rows have no meaning.
    if want_rows_exact && !same_rows(&got.threads, &expected.threads) {
        return diff("thread rows", &got.threads, &expected.threads);
    }
    if (got.folded, got.out_of_order, got.leaked)
        != (expected.folded, expected.out_of_order, expected.leaked)
    {
        return diff(
            "(folded, out of order, leaked)",
            &(got.folded, got.out_of_order, got.leaked),
            &(expected.folded, expected.out_of_order, expected.leaked),
        );
    }
    invariants(r, want).map_err(|e| format!("{what}: {e}"))
}

/// The state of one case, shared by its threads (which run one at a time).
struct World<'n> {
    model: Model,
    snapshots: Vec<(tickprof::Snapshot, Capture)>,
    names: &'n Names,
}

/// A guard on the real recorder and its model twin.
type Pair = (tickprof::Guard, cct_model::Guard);

fn drop_guard(w: &mut World, level: usize, (g, m): Pair) {
    drop(g);
    w.model.pop(level, m, false);
}

/// Runs `ops` on the thread at `level`, then drops its remaining guards,
/// innermost first.
fn run_thread(w: &mut World, level: usize, ops: &[Op]) -> Result<(), String> {
    let mut guards = Vec::new();
    let r = run_ops(w, level, &mut guards, ops);
    while let Some(p) = guards.pop() {
        drop_guard(w, level, p);
    }
    r
}

fn run_ops(w: &mut World, level: usize, guards: &mut Vec<Pair>, ops: &[Op]) -> Result<(), String> {
    for op in ops {
        match op {
            Op::Enter(k) => {
                let g = enter_guard(*k);
                guards.push((g, w.model.push(level, *k)));
            }
            Op::Exit => {
                if let Some(p) = guards.pop() {
                    drop_guard(w, level, p);
                }
            }
            Op::DropAt(i) | Op::Leak(i) if !guards.is_empty() => {
                let at = guards.len() - 1 - *i as usize % guards.len();
                let p = guards.remove(at);
                if matches!(op, Op::Leak(_)) {
                    std::mem::forget(p.0);
                } else {
                    drop_guard(w, level, p);
                }
            }
            Op::DropAt(_) | Op::Leak(_) => {}
            Op::Call(k, body) => {
                let m = w.model.push(level, *k);
                let mut r = Ok(());
                call_fn(*k, &mut || r = run_ops(w, level, guards, body));
                // The function returned: its guard's explicit exit, not an
                // unwinding drop.
                w.model.pop(level, m, false);
                r?;
            }
            Op::Panic(chain) => {
                let ms: Vec<_> = chain.iter().map(|&k| w.model.push(level, k)).collect();
                let caught = catch_unwind(AssertUnwindSafe(|| unwind_through(chain)));
                if caught.is_ok() {
                    return Err("the panic was not caught".to_owned());
                }
                for m in ms.into_iter().rev() {
                    w.model.pop(level, m, true);
                }
            }
            Op::Thread(n, body) => {
                let name = THREAD_NAMES[*n as usize];
                let child = w.model.spawn(name);
                let r = run_on_thread(w, child, name, body);
                w.model.exit();
                r?;
            }
            Op::Check => {
                compare("report()", &tickprof::report(), &w.model.capture(), w.names)?;
                check_sites(&w.model.capture(), w.names)?;
            }
            Op::Snapshot => {
                let s = tickprof::snapshot();
                let c = w.model.capture();
                compare("snapshot().report()", &s.report(), &c, w.names)?;
                w.snapshots.push((s, c));
            }
            Op::Diff(i) => {
                if !w.snapshots.is_empty() {
                    let now = tickprof::snapshot();
                    let want = w.model.capture();
                    // The whole run first, then the difference.
                    compare("snapshot().report()", &now.report(), &want, w.names)?;
                    let at = w.snapshots.len() - 1 - *i as usize % w.snapshots.len();
                    let (earlier, was) = &w.snapshots[at];
                    compare(
                        "later - earlier",
                        &(&now - earlier),
                        &want.minus(was),
                        w.names,
                    )?;
                }
            }
            Op::Reset => {
                tickprof::reset();
                w.model.reset();
            }
            Op::Signal(k) => {
                let m = w.model.push(level, *k);
                in_a_handler(*k);
                w.model.pop(level, m, false);
            }
        }
    }
    Ok(())
}

/// Runs `ops` on a new thread named `name` (the model's thread `level`)
/// and joins it: the thread has exited, its data is the finished threads'.
fn run_on_thread(w: &mut World, level: usize, name: &str, ops: &[Op]) -> Result<(), String> {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn_scoped(s, || run_thread(w, level, ops))
            .map_err(|e| format!("spawn: {e}"))?;
        h.join()
            .unwrap_or_else(|_| Err(format!("thread {name} panicked")))
    })
}

/// `tickprof::sites()`: every mark of the sequence listed, with the calls
/// of the report.
fn check_sites(want: &Capture, names: &Names) -> Result<(), String> {
    let want = want.expect().sites;
    let listed = tickprof::sites();
    for (k, name) in names.0.iter().enumerate() {
        let calls = listed.iter().find(|s| &s.name == name).map(|s| s.calls);
        let expected = want.get(&(k as Site)).map_or(0, |c| c.0);
        if calls != Some(expected) {
            return Err(format!("sites(): {name}: {calls:?}, model {expected}"));
        }
    }
    Ok(())
}

/// One case: a fresh profile, `ops` on a thread of its own, then checks
/// after the thread has exited.
fn run_case(names: &Names, caps: (usize, usize), ops: &[Op]) -> Result<(), String> {
    tickprof::reset();
    let mut w = World {
        model: Model::new(caps.0, caps.1),
        snapshots: Vec::new(),
        names,
    };
    let level = w.model.spawn(CASE_THREAD);
    let r = run_on_thread(&mut w, level, CASE_THREAD, ops);
    w.model.exit();
    r?;
    let want = w.model.capture();
    compare("final report()", &tickprof::report(), &want, names)?;
    check_sites(&want, names)?;
    if let Some((first, was)) = w.snapshots.first() {
        let now = tickprof::snapshot();
        compare("final snapshot().report()", &now.report(), &want, names)?;
        compare(
            "final - first snapshot",
            &(&now - first),
            &want.minus(was),
            names,
        )?;
    }
    Ok(())
}

/// A positive whole number from the environment, as tickprof reads it.
fn env_number(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(default)
}

/// Runs the cases on this process's recorder, with the node cap and the
/// bound on thread names it was started with.
fn run_cases() {
    // tickprof's defaults (`TICKPROF_MAX_NODES`, `TICKPROF_THREADS_KEPT`).
    let caps = (
        env_number("TICKPROF_MAX_NODES", 1_000_000),
        env_number("TICKPROF_THREADS_KEPT", 64),
    );
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    // The first report (its one-time work) done before the cases.
    let _ = tickprof::report();
    let names = Names::find();
    let result = runner.run(&vec(op(), 0..32), |ops| {
        run_case(&names, caps, &ops).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn recorder_matches_the_model() {
    let _turn = crate::support::alone();
    run_cases();
}

#[test]
fn a_small_node_cap_folds_as_modelled() {
    let _turn = crate::support::alone();
    for &(max_nodes, kept) in CHILDREN {
        let (out, stderr) = child::run_quiet(
            CHILD,
            "1",
            &[
                ("TICKPROF_MAX_NODES", max_nodes),
                ("TICKPROF_THREADS_KEPT", kept),
            ],
        );
        assert!(
            out.status.success(),
            "the child with TICKPROF_MAX_NODES={max_nodes}, TICKPROF_THREADS_KEPT={kept} \
             failed: {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// The child's work (does nothing unless run as the child).
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_some() {
        run_cases();
    }
}
