#!/usr/bin/env bash
# What tickprof costs a real crate when every one of its functions is marked.
#
# Usage: bash scripts/marked_crate_bench.sh <tickprof-checkout> [crate] [version]
#   crate: hashbrown (default, 0.17.1), indexmap (2.14.2) or semver (1.0.28)
#
# Takes the crate's published source from cargo's registry (a throwaway crate
# depending on it, then `cargo fetch`), and makes three copies under $WORK:
#   unmarked  the source as published (shared by every checkout measured)
#   disabled  every fn marked, tickprof with `default-features = false`
#             (marks compiled out: should equal unmarked)
#   marked    every fn marked, tickprof with its default `enabled` feature,
#             run with TICKPROF=off and with TICKPROF=on
# "Every fn": each fn, method and default trait method with a body under
# src/ gets `#[::tickprof::profile]`, except `const fn` and C-variadic fns,
# which #[profile] rejects (a small syn-based rewriter, written below, inserts
# the attribute and leaves all other text untouched). tests/, doctests and the
# workload are not marked: they are the crate's callers.
#
# Then it times, as wall-clock medians of $RUNS runs (builds done beforehand):
#   workload  a release example hammering the crate's API (below)
#   tests     the lib + integration test binaries (`cargo test --lib --tests`),
#             release and debug
#   doctests  `cargo test --doc` (debug). This includes rustdoc compiling
#             them, which is the same work for every copy bar the expansion;
#             an edition-2024 crate (hashbrown) runs each doctest in its own
#             process, so this row shows the per-process start-up cost;
#             the doctests-run row is libtest's own "finished in" for them.
# and prints each with its ratio to unmarked. stdout and stderr of the timed
# commands go to $WORK/.../logs; a failing command is reported as FAILED.
#
# Environment: WORK (default /tmp/tickprof-marked-bench), RUNS (3), ON_RUNS
# (runs for TICKPROF=on, default $RUNS: on-mode test suites are slow),
# DEBUG=0 to skip the debug rows, BUILD_ONLY=1 to stop after building,
# DEBUG_ON=1 to add the debug test suite with TICKPROF=on (left out by
# default: hashbrown's took over 4 min, the runtime being unoptimised there). Expect 10-15 min on 2 busy
# cores, most of it building; a second checkout reuses the unmarked copy.
# Not run by CI.
set -euo pipefail

tp=$(cd "${1:?usage: $0 <tickprof-checkout> [crate] [version]}" && pwd)
crate=${2:-hashbrown}
case "$crate" in
  hashbrown) def_ver=0.17.1 ;;
  indexmap) def_ver=2.14.2 ;;
  semver) def_ver=1.0.28 ;;
  *) echo "no workload for crate $crate (hashbrown, indexmap, semver)" >&2; exit 2 ;;
esac
ver=${3:-$def_ver}
work=${WORK:-/tmp/tickprof-marked-bench}
runs=${RUNS:-3}
on_runs=${ON_RUNS:-$runs}
debug=${DEBUG:-1}
debug_on=${DEBUG_ON:-0}
key=$(printf '%s' "$tp" | tr -c 'A-Za-z0-9' '_')
mkdir -p "$work/$key/logs"
logs=$work/$key/logs

# --- 1. the crate's source, via cargo itself --------------------------------
fetch=$work/fetch-$crate-$ver
mkdir -p "$fetch/src"
cat >"$fetch/Cargo.toml" <<EOF
[package]
name = "tp-fetch"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
$crate = "=$ver"
EOF
: >"$fetch/src/lib.rs"
(cd "$fetch" && cargo fetch -q)
src=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "$crate-$ver" | head -1)
[ -d "$src" ] || { echo "could not find $crate-$ver in cargo's registry" >&2; exit 1; }

# --- 2. the rewriter ----------------------------------------------------------
rw=$work/rewriter
mkdir -p "$rw/src"
cat >"$rw/Cargo.toml" <<'EOF'
[package]
name = "tp-rewriter"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
syn = { version = "2", features = ["full", "visit"] }
proc-macro2 = { version = "1", features = ["span-locations"] }
EOF
cat >"$rw/src/main.rs" <<'EOF'
//! Adds `#[::tickprof::profile]` before every fn with a body in every .rs
//! file under a directory, in place, leaving all other text untouched.
//! Skips `const fn` and C-variadic fns, which #[profile] rejects.
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::Visit;

#[derive(Default)]
struct Finder {
    /// (line, column) of each marked fn's first token after its outer attributes.
    at: Vec<(usize, usize)>,
    skipped: usize,
}

impl Finder {
    fn mark(&mut self, vis: Option<&syn::Visibility>, default: Option<Span>, sig: &syn::Signature) {
        if sig.constness.is_some() || sig.variadic.is_some() {
            self.skipped += 1;
            return;
        }
        let first = match vis {
            Some(syn::Visibility::Public(p)) => p.span,
            Some(syn::Visibility::Restricted(r)) => r.pub_token.span,
            _ => default.unwrap_or_else(|| {
                sig.asyncness
                    .map(|t| t.span)
                    .or(sig.unsafety.map(|t| t.span))
                    .or(sig.abi.as_ref().map(|a| a.extern_token.span))
                    .unwrap_or(sig.fn_token.span)
            }),
        };
        let lc = first.start();
        self.at.push((lc.line, lc.column));
    }
}

impl<'a> Visit<'a> for Finder {
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.mark(Some(&f.vis), None, &f.sig);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        self.mark(Some(&f.vis), f.defaultness.map(|d| d.span()), &f.sig);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if f.default.is_some() {
            self.mark(None, None, &f.sig);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

fn rewrite(path: &std::path::Path, total: &mut (usize, usize)) {
    let src = std::fs::read_to_string(path).expect("read");
    let file = match syn::parse_file(&src) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("left unmarked (syn: {e}): {}", path.display());
            return;
        }
    };
    let mut finder = Finder::default();
    finder.visit_file(&file);
    let mut line_starts = vec![0usize];
    line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
    // proc-macro2 columns count chars: convert to byte offsets.
    let mut offsets: Vec<usize> = finder
        .at
        .iter()
        .map(|&(line, col)| {
            let ls = line_starts[line - 1];
            ls + src[ls..].char_indices().nth(col).map_or(0, |(i, _)| i)
        })
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut out = String::with_capacity(src.len() + offsets.len() * 24);
    let mut last = 0;
    for &o in &offsets {
        out.push_str(&src[last..o]);
        out.push_str("#[::tickprof::profile] ");
        last = o;
    }
    out.push_str(&src[last..]);
    std::fs::write(path, out).expect("write");
    total.0 += offsets.len();
    total.1 += finder.skipped;
}

fn walk(dir: &std::path::Path, total: &mut (usize, usize)) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, total);
        } else if p.extension().is_some_and(|x| x == "rs") {
            rewrite(&p, total);
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: tp-rewriter <dir>");
    let mut total = (0, 0);
    walk(std::path::Path::new(&dir), &mut total);
    println!("marked {} fns; left {} const/variadic fns unmarked", total.0, total.1);
}
EOF
(cd "$rw" && cargo build -q --release)

# --- 3. the copies ------------------------------------------------------------
workload() {
  case "$crate" in
    hashbrown) cat <<'EOF'
//! Release workload: insert, look up, iterate and remove 1M keys, 3 rounds.
use std::hint::black_box;
fn main() {
    let n: u64 = 1 << 20;
    let mut sum = 0u64;
    for round in 0..3u64 {
        let mut m = hashbrown::HashMap::new();
        for i in 0..n {
            m.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round, i);
        }
        for i in 0..2 * n {
            if let Some(v) = m.get(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round)) {
                sum = sum.wrapping_add(*v);
            }
        }
        sum = sum.wrapping_add(m.values().copied().sum::<u64>());
        for i in (0..n).step_by(2) {
            m.remove(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round));
        }
        sum = sum.wrapping_add(m.len() as u64);
    }
    black_box(sum);
}
EOF
    ;;
    indexmap) cat <<'EOF'
//! Release workload: insert, look up and remove 1M keys, 2 rounds.
use std::hint::black_box;
fn main() {
    let n: u64 = 1 << 20;
    let mut sum = 0u64;
    for round in 0..2u64 {
        let mut m = indexmap::IndexMap::new();
        for i in 0..n {
            m.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round, i);
        }
        for i in 0..2 * n {
            if let Some(v) = m.get(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round)) {
                sum = sum.wrapping_add(*v);
            }
        }
        for i in (0..n).step_by(2) {
            m.swap_remove(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ round));
        }
        sum = sum.wrapping_add(m.len() as u64);
    }
    black_box(sum);
}
EOF
    ;;
    semver) cat <<'EOF'
//! Release workload: parse and compare 200k versions and requirements.
use std::hint::black_box;
fn main() {
    let mut hits = 0u64;
    for i in 0..200_000u64 {
        let v = semver::Version::parse(&format!("{}.{}.{}-alpha.{}", i % 7, i % 13, i % 101, i % 5)).unwrap();
        let r = semver::VersionReq::parse(&format!(">={}.{}, <{}", i % 7, i % 11, i % 7 + 1)).unwrap();
        hits += u64::from(r.matches(&v));
    }
    black_box(hits);
}
EOF
    ;;
  esac
}

# make_copy DIR MODE   (MODE: unmarked | disabled | marked)
make_copy() {
  local dir=$1 mode=$2
  if [ -f "$dir/.tp-ready" ]; then return; fi
  rm -rf "$dir"
  cp -r "$src" "$dir"
  chmod -R u+w "$dir"
  mkdir -p "$dir/examples"
  workload >"$dir/examples/tp_workload.rs"
  {
    printf '\n[[example]]\nname = "tp_workload"\npath = "examples/tp_workload.rs"\n'
    case "$mode" in
      disabled) printf '\n[dependencies.tickprof]\npath = "%s"\ndefault-features = false\n' "$tp" ;;
      marked) printf '\n[dependencies.tickprof]\npath = "%s"\n' "$tp" ;;
    esac
    printf '\n[workspace]\n'
  } >>"$dir/Cargo.toml"
  if [ "$mode" != unmarked ]; then
    "$rw/target/release/tp-rewriter" "$dir/src" | tee "$dir/.tp-marked"
  fi
  # The published lockfile does not list tickprof's dependencies.
  rm -f "$dir/Cargo.lock"
  touch "$dir/.tp-ready"
}

unmarked=$work/unmarked-$crate-$ver
disabled=$work/$key/disabled-$crate-$ver
marked=$work/$key/marked-$crate-$ver
make_copy "$unmarked" unmarked
make_copy "$disabled" disabled
make_copy "$marked" marked

build() {
  local dir=$1 profile=$2
  local flag=""
  [ "$profile" = release ] && flag=--release
  echo "building $profile: $dir" >&2
  (cd "$dir" && cargo build -q $flag --example tp_workload && cargo test -q $flag --no-run) \
    >>"$logs/build.log" 2>&1 || { echo "build failed: see $logs/build.log" >&2; exit 1; }
}
for d in "$unmarked" "$disabled" "$marked"; do build "$d" release; done
if [ "$debug" = 1 ]; then for d in "$unmarked" "$marked"; do build "$d" debug; done; fi
# Doctests are compiled by the timed command itself; the dependencies of the
# doctest build are the debug lib, built above.

[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

# --- 4. timing ----------------------------------------------------------------
# tm LABEL N DIR TICKPROF-VALUE CMD...  -> medians of N runs: wall seconds, and
# CPU seconds (user + system of the command and the children it waited for,
# from /usr/bin/time): less disturbed than wall time by other load.
declare -A wall cpu
tm() {
  local label=$1 n=$2 dir=$3 mode=$4
  shift 4
  local walls=() cpus=() i status=ok
  for ((i = 0; i < n; i++)); do
    if ! (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$logs/$label.$i.time" \
      env TICKPROF="$mode" "$@") >"$logs/$label.$i.log" 2>&1; then
      status=FAILED
    fi
    walls+=("$(tail -1 "$logs/$label.$i.time" | awk '{print $1}')")
    cpus+=("$(tail -1 "$logs/$label.$i.time" | awk '{printf "%.2f", $2 + $3}')")
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  wall[$label]=$(med "${walls[@]}")
  cpu[$label]=$(med "${cpus[@]}")
  printf '%-26s wall %8s s (runs: %s)  cpu %8s s (runs: %s) %s\n' "$label" "${wall[$label]}" \
    "${walls[*]}" "${cpu[$label]}" "${cpus[*]}" "$([ $status = ok ] || echo FAILED)" >&2
}

# TICKPROF for copies without tickprof is irrelevant; set it to on so that
# nothing differs between the rows but the copy.
ex=target/release/examples/tp_workload
tm workload.unmarked "$runs" "$unmarked" on $ex
tm workload.disabled "$runs" "$disabled" on $ex
tm workload.off "$runs" "$marked" off $ex
tm workload.on "$on_runs" "$marked" on $ex

tm tests-release.unmarked "$runs" "$unmarked" on cargo test -q --release --lib --tests
tm tests-release.disabled "$runs" "$disabled" on cargo test -q --release --lib --tests
tm tests-release.off "$runs" "$marked" off cargo test -q --release --lib --tests
tm tests-release.on "$on_runs" "$marked" on cargo test -q --release --lib --tests

if [ "$debug" = 1 ]; then
  tm tests-debug.unmarked "$runs" "$unmarked" on cargo test -q --lib --tests
  tm tests-debug.off "$runs" "$marked" off cargo test -q --lib --tests
  if [ "$debug_on" = 1 ]; then
    tm tests-debug.on "$on_runs" "$marked" on cargo test -q --lib --tests
  fi
  tm doctests-debug.unmarked "$runs" "$unmarked" on cargo test -q --doc
  tm doctests-debug.off "$runs" "$marked" off cargo test -q --doc
  tm doctests-debug.on "$on_runs" "$marked" on cargo test -q --doc
  # The doctests' own run time (libtest's "finished in", without rustdoc's
  # compilation): wall only.
  for m in unmarked off on; do
    t=$(for f in "$logs"/doctests-debug.$m.*.log; do
      grep -o 'finished in [0-9.]*s' "$f" | tail -1 | tr -dc '0-9.'
      echo
    done | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}')
    wall[doctests-run.$m]=$t
  done
fi

# --- 5. table -------------------------------------------------------------------
echo
echo "crate: $crate $ver   tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "marked: $(cat "$marked/.tp-marked")"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "seconds, median of $runs (on: $on_runs); ratio to unmarked; cpu = user + system"
printf '%-21s %9s %9s %9s %9s %9s %9s %9s\n' row unmarked disabled off on disab/un off/un on/un
ratio() { if [ -n "$1" ]; then awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "-"}'; else echo -; fi; }
for row in workload tests-release tests-debug doctests-debug doctests-run; do
  for kind in wall cpu; do
    declare -n t=$kind
    u=${t[$row.unmarked]:-}
    [ -n "$u" ] || continue
    d=${t[$row.disabled]:-}
    o=${t[$row.off]:-}
    n=${t[$row.on]:-}
    printf '%-21s %9s %9s %9s %9s %9s %9s %9s\n' "$row $kind" "$u" "${d:--}" "${o:--}" "${n:--}" \
      "$(ratio "$d" "$u")" "$(ratio "$o" "$u")" "$(ratio "$n" "$u")"
    unset -n t
  done
done
