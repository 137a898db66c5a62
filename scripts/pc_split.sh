#!/usr/bin/env bash
# Where a fully marked crate's run spends its CPU time, by program counter
# (issue 32's whole-run figures: what the sampler's windows hold, and what
# of the marked build's slowdown lies outside them).
#
# Usage: bash scripts/pc_split.sh <tickprof-checkout> [crate] [version]
#   crate: semver (default), indexmap, hashbrown or pulldown-cmark — the
#   copies and workloads of scripts/marked_crate_copies.sh.
# Environment: WORK (default /tmp/tickprof-marked-bench), RUNS (3), FREQ
# (perf's rate, 20000).
#
# Builds the unmarked and the marked workload again with line tables (into
# target dirs of their own: the code is the release build's), then records
# `perf record -e cpu-clock -F $FREQ` of three modes, $RUNS runs each, one
# of each mode after the other: the unmarked build; the marked build with
# TICKPROF=off; the marked build recording (its JSON report kept). Each
# sample goes to tickprof's code (its innermost frame outside std and the
# cargo registry lies in the checkout, inline frames expanded with
# `addr2line -i`), the program's, the kernel's, the shared libraries' or
# tickprof's sampler thread (scripts/pc_split.py); medians in ms. Then
# the recording runs' header: the instrumentation share the sampler found
# against tickprof's share of the samples, and the report's estimate of
# the program (its wall time less that share) against the unmarked run.
set -euo pipefail

tp=$(cd "${1:?usage: $0 <tickprof-checkout> [crate] [version]}" && pwd)
crate=${2:-semver}
ver=${3:-}
work=${WORK:-/tmp/tickprof-marked-bench}
runs=${RUNS:-3}
freq=${FREQ:-20000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# shellcheck source=scripts/marked_crate_copies.sh
. "$here/marked_crate_copies.sh"
out=$work/$key/pcsplit-$crate-$ver
rm -rf "$out"
mkdir -p "$out"
echo "building with line tables (logs: $logs/pcsplit-build.log)" >&2
for copy in unmarked marked; do
  dir=${!copy}
  (cd "$dir" && CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
    CARGO_TARGET_DIR=$work/$key/pcsplit-target-$copy-$crate-$ver \
    cargo build -q --release --example tp_workload) >>"$logs/pcsplit-build.log" 2>&1 ||
    { echo "build failed: see $logs/pcsplit-build.log" >&2; exit 1; }
done
ubin=$work/$key/pcsplit-target-unmarked-$crate-$ver/release/examples/tp_workload
mbin=$work/$key/pcsplit-target-marked-$crate-$ver/release/examples/tp_workload

rec() { perf record -q -e cpu-clock -F "$freq" -o "$1" -- "${@:2}" >/dev/null 2>&1; }
u=() off=() on=()
for i in $(seq "$runs"); do
  rec "$out/u$i.data" "$ubin"
  TICKPROF=off rec "$out/off$i.data" "$mbin"
  TICKPROF_STDERR=0 TICKPROF_OUT=$out/r$i.json rec "$out/on$i.data" "$mbin"
  u+=("$out/u$i.data") off+=("$out/off$i.data") on+=("$out/on$i.data")
done
join() { local IFS=,; echo "$*"; }

echo "crate: $crate $ver   tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "perf cpu-clock at $freq Hz, median of $runs runs per mode (one of each mode after the other)"
python3 "$here/pc_split.py" "$freq" "$tp" \
  "unmarked=$ubin:$(join "${u[@]}")" \
  "off=$mbin:$(join "${off[@]}")" \
  "recording=$mbin:$(join "${on[@]}")"
python3 - "$out" "$runs" <<'EOF'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rs = [json.load(open("%s/r%d.json" % (out, i)))["run"] for i in range(1, runs + 1)]
share = statistics.median(r["overhead_share"] for r in rs)
est = statistics.median(r["wall_ns"] * (1 - r["overhead_share"]) for r in rs) / 1e6
print("recording runs' headers: instrumentation share %.1f%% (%s); the program estimated at %.1f ms"
      % (100 * share, ", ".join("%.1f" % (100 * r["overhead_share"]) for r in rs), est))
EOF
