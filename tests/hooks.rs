//! Hooks (`tickprof::set_hook`): what they see matches the report, a hook
//! that calls a marked function or panics, async polls, the profile off.
//!
//! A hook is process-wide and installed once, so each scenario runs in a
//! child process (this test binary re-run with `TPTEST_HOOK_CHILD` set),
//! which asserts and exits non-zero on failure.
#![cfg(feature = "enabled")]

use crate::support::child;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Mutex;
use tickprof::{profile, Enter, Exit, Hook};

const CHILD: &str = "TPTEST_HOOK_CHILD";

/// Per site name: enters, exits, completed exits, unwinding exits,
/// out-of-order exits.
type Counts = BTreeMap<String, [u64; 5]>;

static SEEN: Mutex<Counts> = Mutex::new(BTreeMap::new());

thread_local! {
    /// (site address, depth) of the calls this thread's hook saw open.
    static OPEN: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
}

/// Counts every event and checks that exits match entries.
struct Counter;

impl Hook for Counter {
    fn on_enter(&self, call: &Enter<'_>) {
        bump(&call.site.name(), 0);
        OPEN.with(|o| {
            o.borrow_mut()
                .push((call.site as *const _ as usize, call.depth))
        });
        if CALL_FROM_HOOK.with(std::cell::Cell::get) {
            helper();
        }
        assert!(call.depth >= 1);
        assert_eq!(
            call.poll,
            call.site.kind() == tickprof::SiteKind::AsyncFunction
        );
    }

    fn on_exit(&self, call: &Exit<'_>) {
        let name = call.site.name();
        bump(&name, 1);
        if call.completed {
            bump(&name, 2);
        }
        if call.unwinding {
            bump(&name, 3);
        }
        if call.out_of_order {
            bump(&name, 4);
        }
        let key = (call.site as *const _ as usize, call.depth);
        if call.out_of_order {
            OPEN.with(|o| o.borrow_mut().retain(|e| *e != key));
        } else {
            let top = OPEN.with(|o| o.borrow_mut().pop());
            assert_eq!(top, Some(key), "{name}");
        }
        assert!(call.end_ticks >= call.start_ticks && call.duration_ns >= 0.0);
        let fails = name.ends_with("::explodes") || name.ends_with("::helper");
        if fails && PANIC_IN_HOOK.with(std::cell::Cell::get) {
            panic!("the hook fails");
        }
    }
}

fn bump(name: &str, i: usize) {
    SEEN.lock().unwrap().entry(name.to_owned()).or_default()[i] += 1;
}

thread_local! {
    static CALL_FROM_HOOK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC_IN_HOOK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

static COUNTER: Counter = Counter;

#[profile]
fn helper() -> u32 {
    7
}

#[profile]
fn leaf(i: u64) -> u64 {
    i * 2
}

#[profile]
fn middle(n: u64) -> u64 {
    tickprof::prof_scope!("loop");
    (0..n).map(leaf).sum()
}

#[profile]
fn recurse(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        recurse(n - 1) + 1
    }
}

#[profile]
fn explodes() {
    panic!("expected panic in explodes");
}

#[profile]
async fn fetch(i: u64) -> u64 {
    tokio::task::yield_now().await;
    leaf(i)
}

#[profile]
async fn gather() -> u64 {
    let mut s = 0;
    for i in 0..5 {
        s += fetch(i).await;
    }
    s
}

/// The report's calls per site (program sites only).
fn report_calls() -> BTreeMap<String, u64> {
    tickprof::report()
        .sites
        .iter()
        .map(|s| (s.name.clone(), s.calls))
        .collect()
}

fn seen(pick: usize) -> BTreeMap<String, u64> {
    SEEN.lock()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v[pick]))
        .filter(|(_, v)| *v > 0)
        .collect()
}

fn short(m: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    m.iter()
        .map(|(k, v)| (k.rsplit("::").take(2).collect::<Vec<_>>().join("<"), *v))
        .collect()
}

fn workload() {
    for _ in 0..3 {
        middle(4);
    }
    recurse(5);
    std::thread::Builder::new()
        .name("worker".into())
        .spawn(|| middle(2))
        .unwrap()
        .join()
        .unwrap();
    let g1 = tickprof::prof_guard!("first");
    let g2 = tickprof::prof_guard!("second");
    drop(g1); // out of order
    drop(g2);
}

/// The child's scenarios; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    tickprof::set_hook(&COUNTER).unwrap();
    assert!(
        tickprof::set_hook(&COUNTER).is_err(),
        "one hook per process"
    );
    match mode.as_str() {
        "counts" => {
            workload();
            let exits = seen(2);
            assert_eq!(short(&exits), short(&report_calls()));
            assert_eq!(seen(0), seen(1), "every entry has an exit");
            // `first` dropped while `second` was open, then `second`, whose
            // frame `first`'s exit had closed: both out of order.
            let ooo = short(&seen(4));
            assert_eq!(
                ooo.keys().collect::<Vec<_>>(),
                ["first<workload", "second<workload"]
            );
            eprintln!("hook counts ok: {}", short(&exits).len());
        }
        "reentrant" => {
            CALL_FROM_HOOK.with(|c| c.set(true));
            middle(3);
            CALL_FROM_HOOK.with(|c| c.set(false));
            helper();
            let exits = seen(2);
            let helper_seen = exits.iter().find(|(k, _)| k.ends_with("::helper"));
            assert_eq!(
                helper_seen.map(|(_, v)| *v),
                Some(1),
                "only the direct call"
            );
            let calls = report_calls();
            let helper_calls = calls.iter().find(|(k, _)| k.ends_with("::helper"));
            assert_eq!(
                helper_calls.map(|(_, v)| *v),
                Some(1),
                "calls in hooks unrecorded"
            );
            assert_eq!(short(&exits), short(&calls));
            eprintln!("reentrant ok");
        }
        "panic" | "panic-unwinding" => {
            PANIC_IN_HOOK.with(|c| c.set(true));
            if mode == "panic" {
                // The hook panics at `helper`'s exit.
                assert_eq!(helper(), 7);
            } else {
                // The hook panics at `explodes`' exit, while it unwinds.
                assert!(std::panic::catch_unwind(explodes).is_err());
            }
            assert!(std::panic::catch_unwind(explodes).is_err());
            middle(2);
            let exits = seen(1);
            assert!(
                !exits.keys().any(|k| k.ends_with("::middle")),
                "disabled after its panic: {exits:?}"
            );
            assert_eq!(
                report_calls()
                    .iter()
                    .find(|(k, _)| k.ends_with("::middle"))
                    .map(|(_, v)| *v),
                Some(1),
                "still recorded"
            );
            eprintln!("program continues");
        }
        "async" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            assert_eq!(rt.block_on(gather()), 20);
            let enters = seen(0);
            let exits = seen(2);
            assert_eq!(short(&exits), short(&report_calls()));
            let fetch_polls = enters.iter().find(|(k, _)| k.ends_with("::fetch")).unwrap();
            assert_eq!(*fetch_polls.1, 10, "two polls per fetch");
            eprintln!("async ok");
        }
        "off" => {
            workload();
            assert!(tickprof::report().sites.is_empty());
            let exits = seen(2);
            let short = short(&exits);
            assert_eq!(short.get("middle<hooks"), Some(&4), "{short:?}");
            assert_eq!(short.get("loop<middle"), Some(&4), "{short:?}");
            assert_eq!(short.get("leaf<hooks"), Some(&14), "{short:?}");
            assert_eq!(short.get("recurse<hooks"), Some(&6), "{short:?}");
            assert_eq!(seen(4).len(), 2, "out of order seen with the profile off");
            eprintln!("off ok");
        }
        other => panic!("unknown scenario {other}"),
    }
}

fn run(mode: &str, env: &[(&str, &str)]) -> String {
    let (out, stderr) = child::run_quiet(CHILD, mode, env);
    assert!(out.status.success(), "{mode}: {:?}\n{stderr}", out.status);
    stderr
}

#[test]
fn a_hook_sees_as_many_calls_as_the_report_counts() {
    let err = run("counts", &[]);
    assert!(err.contains("hook counts ok"), "{err}");
}

#[test]
fn marked_calls_inside_a_hook_are_neither_hooked_nor_recorded() {
    let err = run("reentrant", &[]);
    assert!(err.contains("reentrant ok"), "{err}");
}

#[test]
fn a_panicking_hook_is_disabled_with_one_warning_and_the_program_goes_on() {
    for mode in ["panic", "panic-unwinding"] {
        let err = run(mode, &[]);
        assert!(err.contains("program continues"), "{err}");
        let warnings = err
            .lines()
            .filter(|l| l.starts_with("tickprof: warning: the hook installed with"))
            .count();
        assert_eq!(warnings, 1, "{err}");
    }
}

#[test]
fn async_polls_are_hooked_and_completed_exits_match_the_report() {
    let err = run("async", &[]);
    assert!(err.contains("async ok"), "{err}");
}

#[test]
fn hooks_run_with_the_profile_off() {
    let err = run("off", &[("TICKPROF", "off")]);
    assert!(err.contains("off ok"), "{err}");
}
