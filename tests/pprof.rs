//! The pprof export decoded as `profile.proto` (prost): string table,
//! sample types, one function and location per site with its file and
//! line, and sums: pprof's flat is each site's self figure and its cum
//! (each sample counted once per function) the site's total, recursion
//! included.
//!
//! In a child process of its own: the difference of two snapshots is
//! checked against its sites one for one, which holds when no other site
//! ran in the process (beside other tests, even after a reset, the
//! difference's profile had functions and samples of other sites: 7 for
//! 3).
#![cfg(feature = "enabled")]

use crate::support::child;
use crate::support::pprof_proto::{unstore, Function, Profile};
use std::collections::{HashMap, HashSet};
use tickprof::profile;

#[profile]
fn outer() {
    for _ in 0..4 {
        inner();
    }
    rec(5);
}

#[profile]
fn inner() {
    std::hint::black_box((0..100).sum::<u64>());
}

#[profile]
fn rec(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        rec(n - 1) + 1
    }
}

const CHILD: &str = "TPTEST_PPROF_CHILD";

#[test]
fn pprof_decodes_with_one_function_per_site_and_flat_self_cum_total() {
    child::run_checks(CHILD, &[]);
}

/// The child: the calls between two snapshots and the checks.
#[test]
fn child_workload() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let before = tickprof::snapshot();
    for _ in 0..3 {
        outer();
    }
    let report = tickprof::snapshot().since(&before);
    let opts = tickprof::TextOptions::default();
    let pb = tickprof::export::render(&report, "x.pb", &opts).unwrap();
    let gz = tickprof::export::render(&report, "x.pb.gz", &opts).unwrap();
    assert_eq!(unstore(&gz), pb);
    let p: Profile = prost::Message::decode(pb.as_slice()).unwrap();
    let s = |i: i64| p.s(i);
    let types = p.types();
    assert_eq!(types, [("calls", "count"), ("time", "nanoseconds")]);
    assert_eq!(s(p.default_sample_type), "time");
    assert_eq!(p.duration_nanos as u64, report.run.wall_ns);
    assert_eq!(p.mapping.len(), 1);
    assert!(p.mapping[0].has_functions);

    // One function and one location per site, with its file and line.
    assert_eq!(p.function.len(), report.sites.len());
    assert_eq!(p.location.len(), report.sites.len());
    let funcs: HashMap<u64, &Function> = p.function.iter().map(|f| (f.id, f)).collect();
    let name_of_loc: HashMap<u64, &str> = p
        .location
        .iter()
        .map(|l| {
            assert_eq!(l.line.len(), 1);
            (l.id, s(funcs[&l.line[0].function_id].name))
        })
        .collect();
    for site in &report.sites {
        let f = p
            .function
            .iter()
            .find(|f| s(f.name) == site.name)
            .expect("site");
        assert_eq!(s(f.filename), site.file);
        assert_eq!(f.start_line, i64::from(site.line));
    }

    // Flat (leaf) and cum (once per sample) per function.
    let mut flat: HashMap<&str, [i64; 2]> = HashMap::new();
    let mut cum: HashMap<&str, [i64; 2]> = HashMap::new();
    for sample in &p.sample {
        assert_eq!(sample.value.len(), 2);
        assert_eq!(sample.label.len(), 1);
        assert_eq!(s(sample.label[0].key), "thread");
        let names: Vec<&str> = sample.location_id.iter().map(|l| name_of_loc[l]).collect();
        let leaf = flat.entry(names[0]).or_default();
        leaf[0] += sample.value[0];
        leaf[1] += sample.value[1];
        for n in names.iter().copied().collect::<HashSet<_>>() {
            let c = cum.entry(n).or_default();
            c[1] += sample.value[1];
        }
    }
    assert_eq!(p.sample.len(), 3, "outer, outer;inner, outer;rec [×6]");
    for site in &report.sites {
        let n = site.name.as_str();
        assert_eq!(flat[n][0] as u64, site.calls, "{n} calls");
        assert_eq!(flat[n][1] as u64, site.self_ns, "{n} flat = self");
        assert_eq!(cum[n][1] as u64, site.total_ns, "{n} cum = total");
    }
    let rec = report
        .sites
        .iter()
        .find(|s| s.name.ends_with("::rec"))
        .unwrap();
    assert_eq!(rec.calls, 18);
}
