#!/usr/bin/env bash
# tickprof's self-time shares against an independent sampling profiler, on a
# real crate with every function marked.
#
# Usage: bash scripts/perf_compare.sh <tickprof-checkout> [crate] [version]
#   crate: semver (default), hashbrown or indexmap, with the workloads and
#   copies of scripts/marked_crate_bench.sh (scripts/marked_crate_copies.sh;
#   a copy made by either script is reused by the other).
#
# The sampler: `perf record -e cpu-clock -F $FREQ --call-graph dwarf` on the
# UNMARKED release build of the workload (built again with debug info into
# the copy's target-perf/, so that inline frames resolve; the code is the
# same), $RUNS runs of $REPEAT back-to-back workload processes each. Every
# frame of the workload's binary is expanded into its inline frames
# (`addr2line -i`, one process per run for all distinct addresses), and each
# frame is mapped to a marked function of the crate by source location: the
# last marked fn starting at or above the frame's line in the same file
# whose name is the frame's function name (closures belong to their
# function, as with tickprof, which does not mark them). Each sample goes to
# the innermost frame that maps to a marked function (time in std, libc,
# the kernel and unmarked code is charged to the nearest marked caller, as
# tickprof's self time is), and, for a site that tickprof counted rather
# than timed (`"timing": "counted"` in its JSON), on to the nearest timed
# caller. Samples with no marked frame (the workload's own loop) are left
# out, as tickprof has no site for them.
#
# tickprof: the MARKED release build of the same workload, $RUNS runs with
# the default settings and $RUNS with TICKPROF_TIME=all, each writing a JSON
# report; a site's share is its compensated self time over the sum of the
# timed sites' (a counted site's time is in its caller's self).
#
# Printed per mode, tickprof's median profile against the sampler's runs
# pooled (and each tickprof run against them): Spearman's rho over the
# functions both know (a sample in perf's, a timed site that ran in
# tickprof's, self 0 included), the top-10 difference (sum of |share
# difference| over the sampler's 10 largest, in points), the overlap (sum
# of min(share) over functions, Arnold and Ryder's measure); and run-to-run
# stability: each run's top-10 difference and 100 - overlap against the
# median of the other runs, for tickprof and for the sampler. Then a table of the top
# functions and a summary line against the targets (rho >= 0.8, top-10 <= 20
# points, overlap >= 85%, each run within 5 points of the median of the
# others). The two measure different things: tickprof wall time per call
# (a preempted call keeps its wait), perf CPU time; and inlining: the
# unmarked build inlines what marks keep apart.
#
# Environment: WORK (default /tmp/tickprof-marked-bench), RUNS (5), REPEAT
# (workload processes per perf run; default 20 for semver, 2 for indexmap,
# 2 for hashbrown), FREQ (perf's sampling frequency, 20000), TOP (rows of
# the table, 20), KEEP=1 to keep perf.data files. Needs perf (linux-perf)
# and addr2line (binutils); prints SKIP without perf. Not run by CI.
set -euo pipefail

tp=$(cd "${1:?usage: $0 <tickprof-checkout> [crate] [version]}" && pwd)
crate=${2:-semver}
ver=${3:-}
work=${WORK:-/tmp/tickprof-marked-bench}
runs=${RUNS:-5}
freq=${FREQ:-20000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "$crate" in
  semver) repeat=${REPEAT:-20} ;;
  indexmap) repeat=${REPEAT:-2} ;;
  *) repeat=${REPEAT:-2} ;;
esac
if ! perf record -e cpu-clock -o /dev/null -q -- true >/dev/null 2>&1; then
  echo "SKIP: perf record does not work here (install linux-perf; kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?'))"
  exit 0
fi
command -v addr2line >/dev/null || { echo "SKIP: addr2line (binutils) missing"; exit 0; }

# shellcheck source=scripts/marked_crate_copies.sh
. "$here/marked_crate_copies.sh"
out=$work/$key/perf-$crate-$ver
rm -rf "$out"
mkdir -p "$out"

# --- builds: the unmarked workload with debug info, the marked one as benched --
echo "building (logs: $logs/perf-build.log)" >&2
(cd "$unmarked" && CARGO_PROFILE_RELEASE_DEBUG=2 CARGO_PROFILE_RELEASE_STRIP=none \
  cargo build -q --release --example tp_workload --target-dir target-perf) \
  >>"$logs/perf-build.log" 2>&1 || { echo "build failed: see $logs/perf-build.log" >&2; exit 1; }
(cd "$marked" && cargo build -q --release --example tp_workload) \
  >>"$logs/perf-build.log" 2>&1 || { echo "build failed: see $logs/perf-build.log" >&2; exit 1; }
plain_ex=$unmarked/target-perf/release/examples/tp_workload
marked_ex=$marked/target/release/examples/tp_workload
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

load() { cut -d' ' -f1-3 /proc/loadavg; }
load0=$(load)

# --- the sampler -----------------------------------------------------------------
perf_runs "$out" "$runs" "$freq" "$repeat" "$plain_ex"

# --- tickprof --------------------------------------------------------------------
for mode in adaptive all; do
  for ((i = 0; i < runs; i++)); do
    echo "tickprof run $((i + 1))/$runs, TICKPROF_TIME=$mode" >&2
    (cd "$marked" && env TICKPROF=on TICKPROF_TIME=$mode TICKPROF_OUT="$out/tp.$mode.$i.json" \
      "$marked_ex") >"$out/tp.$mode.$i.log" 2>&1 || echo "tickprof run failed: $out/tp.$mode.$i.log" >&2
  done
done

# --- the comparison ------------------------------------------------------------------
echo
echo "crate: $crate $ver   tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load before: $load0, after: $(load)"
lost=$(cat "$out"/perf.*.log | { grep -o 'lost [0-9]* chunks' || true; } | awk '{n++; s += $2} END {print n + 0, s + 0}')
echo "sampler: perf cpu-clock at $freq Hz, dwarf call graphs, $runs runs of $repeat workload processes (unmarked release + debug info); runs that lost chunks, chunks lost: $lost"
echo "tickprof: $runs runs per mode of the marked release workload; $(cat "$marked/.tp-marked")"
python3 "$here/perf_compare.py" --binary "$plain_ex" --out "$out" \
  --runs "$runs" --top "${TOP:-20}" --counted "${COUNTED:-own}"
