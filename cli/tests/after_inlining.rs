//! Marks after inlining: `cargo tickprof run --release` on a small crate
//! (tests/fixtures/inlining) marks the functions its optimised unmarked
//! build keeps — a loop, a generic instantiated twice, one of two impls
//! of a trait method — and leaves the small ones inlined (one of them
//! inlined at one call and kept for another) and the unused one
//! unmarked; a kept function holding a large inlined one emits its body
//! once, and the marked build inlines it as the unmarked one did;
//! `--all` marks them all; the probe build's debug info
//! does not change the code it makes; a small function inlined into a
//! long loop shows as an inlined row under the loop's function, from
//! program-counter samples.
//!
//! The fixture is copied to `target/tmp/after-inlining/user` and built in
//! `target/tmp/after-inlining/target`, kept from run to run: a second run
//! of the test rebuilds nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::trees;
use trees::{copy_tree, snapshot};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-tickprof");

fn dirs() -> (PathBuf, PathBuf) {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("after-inlining");
    let user = base.join("user");
    let _ = std::fs::remove_dir_all(&user);
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inlining"),
        &user,
    );
    (user, base.join("target"))
}

/// `cargo tickprof ARGS` in the user's tree, TICKPROF_OUT set to `out`.
fn run(user: &Path, target: &Path, args: &[&str], out: &str) -> Output {
    Command::new(BIN)
        .arg("tickprof")
        .args(args)
        .current_dir(user)
        .env("CARGO_TARGET_DIR", target)
        // Everything tickprof needs is in the seeded lock and the cache.
        .env("CARGO_NET_OFFLINE", "true")
        .env("TICKPROF_STDERR", "off")
        .env("TICKPROF_OUT", out)
        .env_remove("TICKPROF")
        .output()
        .unwrap()
}

/// (name, calls) of each site of a JSON report.
fn sites(path: &Path) -> BTreeMap<String, u64> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["calls"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The `inl` function symbols of a program (names without their hash,
/// sizes) and the size of its `.text`.
fn code(program: &Path) -> (Vec<(String, u64)>, u64) {
    use object::{Object, ObjectSection, ObjectSymbol};
    let data = std::fs::read(program).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let mut symbols: Vec<(String, u64)> = file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.is_definition())
        .filter_map(|s| Some((s.name().ok()?.to_string(), s.size())))
        .filter(|(n, _)| n.contains("3inl"))
        .map(|(n, size)| (n.split("17h").next().unwrap_or(&n).to_string(), size))
        .collect();
    symbols.sort();
    let text = file.section_by_name(".text").map_or(0, |s| s.size());
    (symbols, text)
}

#[test]
fn marks_what_the_optimised_build_keeps() {
    let (user, target) = dirs();
    let before = snapshot(&user);
    let json = target.join("run.json");
    let txt = target.join("run.txt");
    let out = format!("{},{}", json.display(), txt.display());
    let result = run(&user, &target, &["run", "--release", "-v"], &out);
    let err = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&result.stdout),
        "16790658490965430842 31853229228 42 Some(999) Some(297) 13305790246015925304 9 6 7827484112836963801\n"
    );
    assert!(
        err.contains(
            "cargo tickprof: marked 6 functions in 2 files of inl \
             (after inlining: 5 left inlined, 1 not in the build; skipped 0)"
        ),
        "{err}"
    );
    assert!(
        err.contains("  skipped inl::add_one (src/main.rs:10): inlined"),
        "{err}"
    );
    assert!(
        err.contains("  skipped inl::unused (src/main.rs:38): not in the build"),
        "{err}"
    );
    // Kept for the call through a pointer, inlined into the direct one:
    // small, so left inlined.
    assert!(
        err.contains("  skipped inl::mix (src/main.rs:44): inlined"),
        "{err}"
    );
    assert!(
        err.contains("  skipped inl::spread (src/main.rs:51): inlined"),
        "{err}"
    );
    assert!(
        err.contains(
            "  skipped <inl::shapes::Square as inl::shapes::Shape>::area (src/shapes.rs:11): inlined"
        ),
        "{err}"
    );
    let expected: BTreeMap<String, u64> = [
        ("inl::main", 1),
        ("inl::tally", 1),
        ("inl::smooth", 1),
        ("inl::checksum", 1),
        ("inl::largest", 2),
        ("<inl::shapes::Polygon as inl::shapes::Shape>::area", 1),
    ]
    .into_iter()
    .map(|(n, c)| (n.to_string(), c))
    .collect();
    let mut found = sites(&json);
    // Not a call: a row of samples, under the function it was inlined into.
    assert_eq!(found.remove("inl::spread (inlined)"), Some(0));
    assert_eq!(found, expected);
    let row = |name: &str| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        v["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap()
    };
    let (spread, smooth) = (row("inl::spread (inlined)"), row("inl::smooth"));
    assert_eq!(spread["kind"], "inlined");
    assert_eq!(spread["callers"][0]["name"], "inl::smooth");
    // The loop is `spread`'s code: most of `smooth`'s samples are its.
    let samples = |s: &serde_json::Value| s["pc_samples"].as_u64().unwrap();
    assert!(
        samples(&spread) >= tickprof_runtime::FEW_PC_SAMPLES && samples(&spread) > samples(&smooth),
        "{spread} {smooth}"
    );
    assert!(
        spread["self_ns"].as_u64().unwrap() <= smooth["total_ns"].as_u64().unwrap(),
        "{spread} {smooth}"
    );
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(
        text.contains(
            "tickprof: cargo tickprof marked the 6 functions the unmarked build keeps \
             as functions of their own, 5 left inlined into them"
        ),
        "{text}"
    );
    assert_eq!(snapshot(&user), before);

    // The probe's debug info changed nothing of the code: the same
    // functions, of the same sizes, as the user's own release build.
    let plain = target.join("plain-build");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q"])
        .current_dir(&user)
        .env("CARGO_TARGET_DIR", &plain)
        .status()
        .unwrap();
    assert!(status.success());
    let probe = code(&target.join("tickprof/probe/release/inl"));
    assert_eq!(code(&plain.join("release/inl")), probe);
    assert!(
        probe.0.iter().any(|(n, _)| n.contains("checksum")),
        "{probe:?}"
    );

    // Unchanged sources: the probe and the marked copy rebuild nothing.
    let again = run(&user, &target, &["run", "--release"], &out);
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{err}");
    assert!(!err.contains("Compiling"), "{err}");
    assert!(err.contains("marked 6 functions"), "{err}");

    // A kept function holding a large inlined one (`tally`, `fold_into`
    // at its one call; `main`) emits its body once: `fold_into` stays
    // inlined in the marked build, as in the unmarked one. Emitted three
    // times (`--once-bytes` past any size), the body calls it from three
    // places, and the optimiser keeps it out of line.
    let ws = target.join("tickprof/ws/src/main.rs");
    let marked = std::fs::read_to_string(&ws).unwrap();
    assert!(
        marked.contains("#[::tickprof::profile(always, once)] fn tally("),
        "{marked}"
    );
    assert!(
        marked.contains("#[::tickprof::profile(always)] pub fn checksum("),
        "{marked}"
    );
    let program = target.join("tickprof/target/release/inl");
    let has_fold = |p: &Path| code(p).0.iter().any(|(n, _)| n.contains("fold_into"));
    assert!(!has_fold(&target.join("tickprof/probe/release/inl")));
    assert!(!has_fold(&program));
    let thrice = run(
        &user,
        &target,
        &["build", "--release", "--once-bytes", "1000000000"],
        &out,
    );
    assert_eq!(thrice.status.code(), Some(0), "{thrice:?}");
    assert!(!std::fs::read_to_string(&ws).unwrap().contains("once)]"));
    assert!(has_fold(&program));

    // --all: every function, no probe.
    let all = run(&user, &target, &["build", "--release", "--all"], &out);
    let err = String::from_utf8_lossy(&all.stderr);
    assert_eq!(all.status.code(), Some(0), "{err}");
    assert!(!err.contains("unmarked program"), "{err}");
    assert!(
        err.contains("cargo tickprof: marked 12 functions in 2 files of inl (skipped 0)"),
        "{err}"
    );
    assert_eq!(snapshot(&user), before);
}
