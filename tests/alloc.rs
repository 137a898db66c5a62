//! Allocation profiling with `tickprof::Alloc` installed: exact counts and
//! bytes per marked call (self and total), threads, frees on another
//! thread, and the exit report of a process with the wrapper installed.
#![cfg(feature = "enabled")]

use crate::support::child;
use crate::support::pprof_proto;

use std::hint::black_box;
use tickprof::{profile, AllocStats, Report};

// tickprof's counting allocator is this binary's (`tests/all.rs`).

/// The full name of this module's function `name`.
fn named(name: &str) -> String {
    format!("{}::{name}", module_path!())
}

fn alloc_of(r: &Report, name: &str) -> (AllocStats, AllocStats) {
    let s = r.site(&named(name)).unwrap_or_else(|| panic!("{name} ran"));
    (s.alloc, s.self_alloc)
}

fn stats(allocs: u64, bytes: u64, frees: u64, freed_bytes: u64) -> AllocStats {
    AllocStats::new(allocs, bytes, frees, freed_bytes)
}

/// `n` boxed `u64`s, each freed at once: n allocations of 8 bytes.
#[profile]
#[inline(never)]
fn boxes(n: u64) -> u64 {
    let mut s = 0;
    for i in 0..n {
        s += *black_box(Box::new(i));
    }
    s
}

/// One allocation of 400 bytes.
#[profile]
#[inline(never)]
fn with_capacity() -> usize {
    let v: Vec<u32> = black_box(Vec::with_capacity(100));
    v.capacity()
}

/// 33 pushes on an empty `String`: capacity 8, then reallocated to 16, 32
/// and 64 bytes: 4 allocations (120 bytes) and 4 frees (120 bytes).
#[profile]
#[inline(never)]
fn string_growth() -> usize {
    let mut s = String::new();
    for _ in 0..33 {
        s.push('x');
        black_box(&s);
    }
    s.len()
}

#[profile]
#[inline(never)]
fn caller() -> usize {
    let own = black_box(vec![0u8; 1000]);
    boxes(10) as usize + with_capacity() + string_growth() + own.len()
}

#[test]
fn exact_counts_and_bytes_self_and_total() {
    assert_eq!(caller(), 45 + 100 + 33 + 1000);
    let r = tickprof::report();
    assert!(r.run.alloc_installed);
    assert_eq!(alloc_of(&r, "boxes").0, stats(10, 80, 10, 80));
    assert_eq!(alloc_of(&r, "with_capacity").0, stats(1, 400, 1, 400));
    let (growth, growth_self) = alloc_of(&r, "string_growth");
    assert_eq!(growth, stats(4, 120, 4, 120));
    assert_eq!(growth_self, growth, "a leaf's self is its total");
    let (total, self_) = alloc_of(&r, "caller");
    assert_eq!(self_, stats(1, 1000, 1, 1000), "self excludes the callees");
    assert_eq!(total, stats(16, 1600, 16, 1600), "total includes them");
    // The tree has the same figures on the path caller → boxes.
    let i = r
        .tree
        .iter()
        .position(|n| n.name == named("boxes"))
        .expect("the path");
    assert_eq!(r.tree[i].alloc, stats(10, 80, 10, 80));
    let parent = r.tree[i].parent.expect("a parent");
    assert_eq!(r.tree[parent].name, named("caller"));
    assert_eq!(r.tree[parent].alloc, total);
    assert_eq!(r.tree[parent].self_alloc, self_);
}

#[profile]
#[inline(never)]
fn recursive(depth: u32) -> u64 {
    let b = black_box(Box::new(u64::from(depth)));
    if depth == 0 {
        *b
    } else {
        *b + recursive(depth - 1)
    }
}

#[test]
fn recursion_is_counted_once_in_the_total() {
    assert_eq!(recursive(4), 10);
    let r = tickprof::report();
    let (total, self_) = alloc_of(&r, "recursive");
    assert_eq!(total, stats(5, 40, 5, 40));
    assert_eq!(self_, total);
}

#[profile]
#[inline(never)]
fn threaded(n: u64) -> u64 {
    boxes_on_thread(n)
}

/// Not marked: its allocations are its marked caller's.
#[inline(never)]
fn boxes_on_thread(n: u64) -> u64 {
    (0..n).map(|i| black_box(Box::new([i; 4]))[0]).sum()
}

#[test]
fn eight_threads_totals_are_exact() {
    let threads: Vec<_> = (0..8)
        .map(|_| std::thread::spawn(|| threaded(1000)))
        .collect();
    for t in threads {
        t.join().expect("no panic");
    }
    let r = tickprof::report();
    let (total, self_) = alloc_of(&r, "threaded");
    assert_eq!(total, stats(8000, 8000 * 32, 8000, 8000 * 32));
    assert_eq!(self_, total);
    // The per-thread breakdown adds up to the same.
    let per_thread: u64 = r
        .threads
        .iter()
        .flat_map(|t| &t.sites)
        .filter(|x| x.name == named("threaded"))
        .map(|x| x.alloc.bytes)
        .sum();
    assert_eq!(per_thread, 8000 * 32);
}

/// Allocates a block of 100 bytes and hands it on.
#[profile]
#[inline(never)]
fn produce() -> Vec<u8> {
    black_box(Vec::with_capacity(100))
}

/// Frees the block it is given.
#[profile]
#[inline(never)]
fn consume(v: Vec<u8>) -> usize {
    let n = v.capacity();
    drop(black_box(v));
    n
}

#[test]
fn a_block_freed_on_another_thread_is_a_free_where_it_is_freed() {
    let v = std::thread::spawn(produce).join().expect("no panic");
    assert_eq!(consume(v), 100);
    let r = tickprof::report();
    assert_eq!(alloc_of(&r, "produce").0, stats(1, 100, 0, 0));
    assert_eq!(alloc_of(&r, "consume").0, stats(0, 0, 1, 100));
}

#[profile]
#[inline(never)]
fn between_snapshots(n: u64) -> u64 {
    boxes_on_thread(n)
}

#[test]
fn snapshot_differences_include_allocations() {
    between_snapshots(3);
    let before = tickprof::snapshot();
    between_snapshots(5);
    let after = tickprof::snapshot();
    let d = &after - &before;
    let s = d.site(&named("between_snapshots")).expect("ran between");
    assert_eq!(s.alloc, stats(5, 5 * 32, 5, 5 * 32));
}

#[profile]
#[inline(never)]
fn probe() -> usize {
    let v = black_box(vec![1u8; 64]);
    v.len()
}

#[test]
fn building_reports_is_not_counted() {
    probe();
    let a = tickprof::report();
    for _ in 0..3 {
        let _ = tickprof::report().to_text();
    }
    let b = tickprof::report();
    assert_eq!(alloc_of(&a, "probe"), alloc_of(&b, "probe"));
    assert_eq!(alloc_of(&b, "probe").0, stats(1, 64, 1, 64));
}

const CHILD: &str = "TPTEST_ALLOC_CHILD";

/// The child process: marked allocations, then the exit report to a JSON
/// file and stderr with the wrapper installed.
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let kept: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    black_box(&kept);
    caller();
    // A thread that never makes a marked call, and one that allocates after
    // its last marked call, during its thread-local teardown.
    std::thread::spawn(|| black_box(vec![1u8; 10]).len())
        .join()
        .expect("no panic");
    std::thread::spawn(|| {
        /// Allocates, frees and makes a marked call from its destructor,
        /// which may run after tickprof's state of the thread is torn down.
        struct Late;
        impl Drop for Late {
            fn drop(&mut self) {
                black_box(vec![0u8; 32]);
                boxes(1);
            }
        }
        thread_local! {
            static LATE: Late = const { Late };
        }
        LATE.with(|_| {});
        boxes(2)
    })
    .join()
    .expect("no panic");
}

#[test]
fn with_tickprof_off_the_wrapper_passes_through() {
    let dir = std::env::temp_dir().join(format!("tickprof-alloc-off-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let json = dir.join("r.json");
    let out = child::child_command(CHILD, "1")
        .env(child::ALLOCATOR, "counting")
        .env("TICKPROF", "off")
        .env("TICKPROF_OUT", &json)
        .output()
        .expect("child ran");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("<outside marked calls>"), "{stderr}");
    assert!(!json.exists(), "no report with TICKPROF=off");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exit_report_with_the_wrapper_shows_allocations_and_the_outside_row() {
    let dir = std::env::temp_dir().join(format!("tickprof-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let json = dir.join("r.json");
    let folded = dir.join("r.alloc.folded");
    let csv = dir.join("r.csv");
    let out = child::child_command(CHILD, "1")
        .env(child::ALLOCATOR, "counting")
        .env(
            "TICKPROF_OUT",
            format!("{},{},{}", json.display(), folded.display(), csv.display()),
        )
        .env("TICKPROF_SORT", "bytes")
        .output()
        .expect("child ran");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("allocs") && stderr.contains("bytes"),
        "{stderr}"
    );
    assert!(stderr.contains("<outside marked calls>"), "{stderr}");
    // Sorted by bytes: `caller` (1,600 bytes) comes first.
    let first_row = stderr
        .lines()
        .skip_while(|l| !l.starts_with("name "))
        .nth(1)
        .unwrap_or_default();
    assert!(first_row.starts_with(&named("caller ")), "{stderr}");
    let csv = std::fs::read_to_string(&csv).expect("csv written");
    let header: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
    let row: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with(&named("caller,")))
        .expect("caller row")
        .split(',')
        .collect();
    let field = |name: &str| row[header.iter().position(|h| *h == name).expect(name)];
    assert_eq!(
        [
            "allocs",
            "alloc_bytes",
            "frees",
            "freed_bytes",
            "self_allocs",
            "self_alloc_bytes"
        ]
        .map(field),
        ["16", "1600", "16", "1600", "1", "1000"]
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json written")).expect("json");
    assert_eq!(v["run"]["alloc_installed"], true);
    assert!(
        v["run"]["outside"]["allocs"].as_u64() > Some(10),
        "{}",
        v["run"]
    );
    let caller = v["sites"]
        .as_array()
        .and_then(|s| s.iter().find(|x| x["name"] == named("caller").as_str()))
        .expect("caller");
    assert_eq!(caller["alloc"]["bytes"], 1600);
    assert_eq!(caller["self_alloc"]["bytes"], 1000);
    let folded = std::fs::read_to_string(&folded).expect("folded written");
    let line = |suffix: &str| {
        folded
            .lines()
            .find_map(|l| {
                let (stack, n) = l.rsplit_once(' ')?;
                stack.ends_with(suffix).then(|| n.parse::<u64>().ok())?
            })
            .unwrap_or_else(|| panic!("{suffix} in {folded}"))
    };
    assert_eq!(line("caller"), 1000);
    assert_eq!(
        line(&format!("{};{}", named("caller"), named("string_growth"))),
        120
    );
    assert!(line("<outside marked calls>") > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `Alloc` installed the pprof profile has Go's heap sample types,
/// `alloc_objects` and `alloc_space`, before `calls` and `time`: each a
/// self value, so flat allocations per function are its self allocations
/// and cum its totals.
#[test]
fn pprof_has_allocation_sample_types() {
    let before = tickprof::snapshot();
    for _ in 0..2 {
        caller();
    }
    let r = tickprof::snapshot().since(&before);
    let p = pprof_proto::Profile::of(&r);
    let s = |i: i64| p.s(i);
    let types = p.types();
    assert_eq!(
        types,
        [
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("calls", "count"),
            ("time", "nanoseconds")
        ]
    );
    assert_eq!(s(p.default_sample_type), "time");
    let name_of = |loc: u64| {
        let l = p.location.iter().find(|l| l.id == loc).unwrap();
        let f = p
            .function
            .iter()
            .find(|f| f.id == l.line[0].function_id)
            .unwrap();
        s(f.name)
    };
    let mut flat: std::collections::HashMap<&str, [i64; 2]> = Default::default();
    let mut cum: std::collections::HashMap<&str, [i64; 2]> = Default::default();
    for sample in &p.sample {
        let leaf = flat.entry(name_of(sample.location_id[0])).or_default();
        leaf[0] += sample.value[0];
        leaf[1] += sample.value[1];
        let names: std::collections::HashSet<&str> =
            sample.location_id.iter().map(|&l| name_of(l)).collect();
        for n in names {
            let c = cum.entry(n).or_default();
            c[0] += sample.value[0];
            c[1] += sample.value[1];
        }
    }
    for name in ["caller", "boxes", "with_capacity", "string_growth"] {
        let site = r.site(&named(name)).unwrap();
        let n = site.name.as_str();
        assert_eq!(
            flat[n],
            [site.self_alloc.allocs as i64, site.self_alloc.bytes as i64],
            "{n} flat = self"
        );
        assert_eq!(
            cum[n],
            [site.alloc.allocs as i64, site.alloc.bytes as i64],
            "{n} cum = total"
        );
    }
    assert_eq!(
        flat[r.site(&named("boxes")).unwrap().name.as_str()],
        [20, 160]
    );
}
