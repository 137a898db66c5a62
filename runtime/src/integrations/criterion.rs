//! criterion's profiler hook: a tickprof profile of each benchmark, written
//! in criterion's directory for it.
//!
//! With `cargo bench -- --profile-time N`, criterion runs each benchmark
//! for `N` seconds without measuring it and calls its profiler around that
//! run. [`Profiler`] takes a snapshot when the run starts and writes the
//! difference when it stops — the profile of that benchmark's iterations
//! only — as `tickprof.txt`, `tickprof.folded`, `tickprof.svg` and
//! `tickprof.json` in the benchmark's directory
//! (`target/criterion/<group>/<benchmark>/profile/`), plus every other
//! format this build's [`export`] writes from the list in
//! [`FILES`] (text, folded stacks, SVG flame graph, JSON, pprof `.pb.gz`).
//!
//! One feature per criterion major version, so that a project is not tied
//! to one: `criterion05`, `criterion06`, `criterion07`, `criterion08`
//! (0.8 needs Rust 1.86). The trait is the same in all four.
//!
//! Enable the feature where criterion is, in `[dev-dependencies]`: the
//! profiler is only used by benchmarks, and criterion's own dependencies
//! then stay out of the program's normal build.
//!
//! # Examples
//!
//! ```toml
//! [dev-dependencies]
//! criterion = "0.5"
//! tickprof = { version = "0.1", features = ["criterion05"] }
//! ```
//!
//! ```ignore
//! criterion::criterion_group! {
//!     name = benches;
//!     config = criterion::Criterion::default()
//!         .with_profiler(tickprof::criterion::Profiler::new());
//!     targets = my_bench
//! }
//! ```
//!
//! then `cargo bench -- --profile-time 5`.

use crate::export;
use crate::report::TextOptions;
use crate::snapshot::{snapshot, Snapshot};
use std::path::Path;

/// The files written for each benchmark, by extension: the ones this
/// build's [`export::format_of`] knows are written, the others skipped.
pub const FILES: &[&str] = &[".txt", ".folded", ".svg", ".json", ".pb.gz"];

/// The stem of the files written in the benchmark's directory.
pub const STEM: &str = "tickprof";

/// criterion's profiler: one tickprof profile per benchmark, from snapshot
/// differences (see the [module docs](self)).
#[derive(Debug, Default)]
pub struct Profiler {
    start: Option<Snapshot>,
    quiet: bool,
}

impl Profiler {
    /// A profiler that writes every format in [`FILES`] and says where on
    /// stderr.
    pub fn new() -> Profiler {
        Profiler::default()
    }

    /// The same, without the line on stderr per benchmark.
    pub fn quiet(mut self) -> Profiler {
        self.quiet = true;
        self
    }

    /// Starts a benchmark's profile: takes the snapshot to diff against.
    pub fn start(&mut self, _benchmark_id: &str, _benchmark_dir: &Path) {
        self.start = Some(snapshot());
    }

    /// Ends a benchmark's profile: writes the difference since
    /// [`Profiler::start`] in `benchmark_dir`. A file that cannot be
    /// written gets one warning line on stderr; criterion goes on.
    pub fn stop(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
        let Some(start) = self.start.take() else {
            return;
        };
        let profile = &snapshot() - &start;
        if let Err(e) = std::fs::create_dir_all(benchmark_dir) {
            eprintln!(
                "tickprof: cannot create {}: {e}; no profile for {benchmark_id}",
                benchmark_dir.display()
            );
            return;
        }
        let opts = TextOptions {
            tree: true,
            ..TextOptions::default()
        };
        let mut written = Vec::new();
        for ext in FILES.iter().filter(|e| export::format_of(e).is_some()) {
            let path = benchmark_dir.join(format!("{STEM}{ext}"));
            let Some(p) = path.to_str() else {
                eprintln!("tickprof: {} is not UTF-8; skipped", path.display());
                continue;
            };
            match export::write_to_path(&profile, p, &opts) {
                Ok(()) => written.push(*ext),
                Err(e) => eprintln!("tickprof: cannot write {p}: {e}"),
            }
        }
        if !self.quiet && !written.is_empty() {
            eprintln!(
                "tickprof: profile of {benchmark_id}: {} site{}, {}/{STEM}{{{}}}",
                profile.sites.len(),
                if profile.sites.len() == 1 { "" } else { "s" },
                benchmark_dir.display(),
                written.join(",")
            );
        }
    }
}

macro_rules! implement {
    ($($feature:literal => $krate:ident),*) => {$(
        #[cfg(feature = $feature)]
        impl $krate::profiler::Profiler for Profiler {
            fn start_profiling(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
                self.start(benchmark_id, benchmark_dir);
            }

            fn stop_profiling(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
                self.stop(benchmark_id, benchmark_dir);
            }
        }
    )*};
}

implement!(
    "criterion05" => criterion05,
    "criterion06" => criterion06,
    "criterion07" => criterion07,
    "criterion08" => criterion08
);

#[cfg(all(test, feature = "enabled"))]
mod tests {
    use super::*;

    static SITE: crate::site::CallSite =
        crate::site::CallSite::function(work_path, None, file!(), line!());

    fn work_path() -> &'static str {
        "bench::work"
    }

    #[test]
    fn each_benchmark_gets_its_own_files_with_only_its_calls() {
        let dir = std::env::temp_dir().join(format!("tickprof-criterion-{}", std::process::id()));
        let mut p = Profiler::new().quiet();
        crate::__private::record_raw(&SITE, 10);
        p.start("b", &dir);
        for _ in 0..3 {
            crate::__private::record_raw(&SITE, 10);
        }
        p.stop("b", &dir);
        let json = std::fs::read_to_string(dir.join("tickprof.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let site = v["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "bench::work")
            .unwrap();
        assert_eq!(site["calls"], 3);
        for ext in [".txt", ".folded", ".svg"] {
            assert!(dir.join(format!("tickprof{ext}")).is_file(), "{ext}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
