#!/usr/bin/env bash
# What tickprof costs a real crate when every one of its functions is marked.
#
# Usage: bash scripts/marked_crate_bench.sh <tickprof-checkout> [crate] [version]
#   crate: hashbrown (default, 0.17.1), indexmap (2.14.2) or semver (1.0.28)
#
# Takes the crate's published source from cargo's registry (a throwaway crate
# depending on it, then `cargo fetch`), and makes three copies under $WORK
# (scripts/marked_crate_copies.sh, shared with scripts/perf_compare.sh):
#   unmarked  the source as published (shared by every checkout measured)
#   disabled  every fn marked, tickprof with `default-features = false`
#             (marks compiled out: should equal unmarked)
#   marked    every fn marked, tickprof with its default `enabled` feature,
#             run with TICKPROF=off, with TICKPROF=on (the default
#             settings: adaptive timing where the build has it) and with
#             TICKPROF=on TICKPROF_TIME=all (every call timed; the same as
#             the default in builds without adaptive timing)
# "Every fn": each fn, method and default trait method with a body under
# src/ gets `#[::tickprof::profile]`, except `const fn` and C-variadic fns,
# which #[profile] rejects (a small syn-based rewriter, in the copies script, inserts
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
# After the timed runs, one more untimed run of the workload per mode (on,
# all) writes a JSON report, from which the "sites" lines count the sites
# timed and counted and the calls in each (a site's `timing`, "timed" when
# the field is missing; `timed_calls`, the calls that read the clock). The
# summary block at the end gives the ratios issue 22 asks for (workload,
# default vs unmarked, off vs unmarked, all vs unmarked) against its targets:
# default <= 2x semver, <= 1.6x indexmap, <= 8x hashbrown; off <= 1.1x
# semver and indexmap, <= 2x hashbrown.
#
# Environment: WORK (default /tmp/tickprof-marked-bench), RUNS (3), ON_RUNS
# (runs for TICKPROF=on and TICKPROF_TIME=all, default $RUNS: on-mode test
# suites are slow), ALL=0 to skip the TICKPROF_TIME=all rows, TESTS=0 for
# the workload rows only (no test suites; with DEBUG=0, the quickest run),
# DEBUG=0 to skip the debug rows, BUILD_ONLY=1 to stop after building,
# DEBUG_ON=1 to add the debug test suite with TICKPROF=on (left out by
# default: hashbrown's took over 4 min, the runtime being unoptimised there). Expect 10-15 min on 2 busy
# cores, most of it building; a second checkout reuses the unmarked copy.
# Not run by CI.
set -euo pipefail

tp=$(cd "${1:?usage: $0 <tickprof-checkout> [crate] [version]}" && pwd)
crate=${2:-hashbrown}
ver=${3:-}
work=${WORK:-/tmp/tickprof-marked-bench}
runs=${RUNS:-3}
on_runs=${ON_RUNS:-$runs}
debug=${DEBUG:-1}
debug_on=${DEBUG_ON:-0}
all_rows=${ALL:-1}
tests=${TESTS:-1}
# The source, the rewriter, the workloads and the three copies.
# shellcheck source=scripts/marked_crate_copies.sh
. "$(dirname "${BASH_SOURCE[0]}")/marked_crate_copies.sh"

build() {
  local dir=$1 profile=$2
  local flag=""
  [ "$profile" = release ] && flag=--release
  echo "building $profile: $dir" >&2
  (cd "$dir" && cargo build -q $flag --example tp_workload && { [ "$tests" = 0 ] || cargo test -q $flag --no-run; }) \
    >>"$logs/build.log" 2>&1 || { echo "build failed: see $logs/build.log" >&2; exit 1; }
}
for d in "$unmarked" "$disabled" "$marked"; do build "$d" release; done
if [ "$debug" = 1 ]; then for d in "$unmarked" "$marked"; do build "$d" debug; done; fi
# Doctests are compiled by the timed command itself; the dependencies of the
# doctest build are the debug lib, built above.

[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

# --- 4. timing ----------------------------------------------------------------
# tm LABEL N DIR MODE CMD...  -> medians of N runs: wall seconds, and
# CPU seconds (user + system of the command and the children it waited for,
# from /usr/bin/time): less disturbed than wall time by other load. MODE is
# on (TICKPROF=on, TICKPROF_TIME unset: the default), off (TICKPROF=off) or
# all (TICKPROF=on TICKPROF_TIME=all).
# mode_env MODE -> the env arguments for it.
mode_env() {
  case "$1" in
    all) echo "TICKPROF=on TICKPROF_TIME=all" ;;
    *) echo "TICKPROF=$1" ;;
  esac
}
declare -A wall cpu
tm() {
  local label=$1 n=$2 dir=$3 mode=$4
  shift 4
  local walls=() cpus=() i status=ok
  for ((i = 0; i < n; i++)); do
    if ! (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$logs/$label.$i.time" \
      env -u TICKPROF_TIME -u TICKPROF_OUT $(mode_env "$mode") "$@") >"$logs/$label.$i.log" 2>&1; then
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
[ "$all_rows" = 1 ] && tm workload.all "$on_runs" "$marked" all $ex

if [ "$tests" = 1 ]; then
tm tests-release.unmarked "$runs" "$unmarked" on cargo test -q --release --lib --tests
tm tests-release.disabled "$runs" "$disabled" on cargo test -q --release --lib --tests
tm tests-release.off "$runs" "$marked" off cargo test -q --release --lib --tests
tm tests-release.on "$on_runs" "$marked" on cargo test -q --release --lib --tests
[ "$all_rows" = 1 ] && tm tests-release.all "$on_runs" "$marked" all cargo test -q --release --lib --tests
fi

if [ "$debug" = 1 ] && [ "$tests" = 1 ]; then
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

# --- 5. timed and counted sites -------------------------------------------------
# One untimed run of the workload per mode, writing a JSON report: how many
# sites were timed and counted, and their calls.
sites_line() {
  python3 - "$1" <<'PY'
import json, sys
try:
    sites = json.load(open(sys.argv[1]))["sites"]
except (OSError, ValueError, KeyError) as e:
    print("no report (%s)" % e)
    sys.exit(0)
ran = [s for s in sites if s["calls"] > 0]
timed = [s for s in ran if s.get("timing", "timed") != "counted"]
counted = [s for s in ran if s.get("timing", "timed") == "counted"]
calls = lambda v: sum(s["calls"] for s in v)
clock = sum(s.get("timed_calls", s["calls"]) for s in counted)
print("%d sites ran: %d timed (%d calls), %d counted (%d calls, %d of them timed as the sample)"
      % (len(ran), len(timed), calls(timed), len(counted), calls(counted), clock))
PY
}
declare -A sites
for m in on all; do
  [ "$m" = all ] && [ "$all_rows" != 1 ] && continue
  # shellcheck disable=SC2046 # mode_env gives separate words
  (cd "$marked" && env -u TICKPROF_TIME $(mode_env "$m") TICKPROF_OUT="$logs/sites.$m.json" \
    "$ex") >"$logs/sites.$m.log" 2>&1 || echo "the $m run for the sites summary failed: $logs/sites.$m.log" >&2
  sites[$m]=$(sites_line "$logs/sites.$m.json")
done

# --- 6. table -------------------------------------------------------------------
echo
echo "crate: $crate $ver   tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "marked: $(cat "$marked/.tp-marked")"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "seconds, median of $runs (on, all: $on_runs); ratio to unmarked; cpu = user + system"
echo "on = TICKPROF=on (default settings); all = TICKPROF=on TICKPROF_TIME=all; off = TICKPROF=off"
printf '%-21s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n' row unmarked disabled off on all disab/un off/un on/un all/un
ratio() { if [ -n "$1" ]; then awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "-"}'; else echo -; fi; }
for row in workload tests-release tests-debug doctests-debug doctests-run; do
  for kind in wall cpu; do
    declare -n t=$kind
    u=${t[$row.unmarked]:-}
    [ -n "$u" ] || continue
    d=${t[$row.disabled]:-}
    o=${t[$row.off]:-}
    n=${t[$row.on]:-}
    a=${t[$row.all]:-}
    printf '%-21s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n' "$row $kind" "$u" "${d:--}" "${o:--}" "${n:--}" \
      "${a:--}" "$(ratio "$d" "$u")" "$(ratio "$o" "$u")" "$(ratio "$n" "$u")" "$(ratio "$a" "$u")"
    unset -n t
  done
done
echo
echo "sites (workload, one more run each):"
echo "  on:  ${sites[on]:-}"
[ "$all_rows" = 1 ] && echo "  all: ${sites[all]:-}"

# --- 7. summary: issue 22's ratios and targets -------------------------------------
case "$crate" in
  semver) t_on=2 t_off=1.1 ;;
  indexmap) t_on=1.6 t_off=1.1 ;;
  hashbrown) t_on=8 t_off=2 ;;
esac
verdict() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {if (a == "" || b <= 0) {printf "-"; exit} r = a / b; printf "%.2fx (target <= %sx: %s)", r, t, (r <= t ? "met" : "MISSED")}'; }
echo
for kind in wall cpu; do
  declare -n t=$kind
  u=${t[workload.unmarked]}
  echo "summary ($crate workload, $kind, medians): default $(verdict "${t[workload.on]}" "$u" "$t_on");" \
    "off $(verdict "${t[workload.off]}" "$u" "$t_off");" \
    "all $(ratio "${t[workload.all]:-}" "$u") (no target)"
  unset -n t
done
