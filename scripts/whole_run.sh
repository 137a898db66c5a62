#!/usr/bin/env bash
# Whole runs of a fully marked crate against the unmarked program (issue
# 32's acceptance): the report's top-level total (the workload's marked
# main, the whole program) against the unmarked run's wall time, the
# header's instrumentation share against the measured one (1 - unmarked /
# marked wall), the percentiles' invariants on every timed site with at
# least 1,000 calls, and the counted sites of each run.
#
# Usage: bash scripts/whole_run.sh <tickprof-checkout> [crate] [version]
#   crate: semver (default), indexmap, hashbrown or pulldown-cmark — the
#   copies and workloads of scripts/marked_crate_copies.sh.
# Environment: WORK (default /tmp/tickprof-marked-bench), PAIRS (5): the
# marked and unmarked runs alternate, one pair after the other, so that a
# machine's drift falls on both; medians and ranges are printed.
set -euo pipefail

tp=$(cd "${1:?usage: $0 <tickprof-checkout> [crate] [version]}" && pwd)
crate=${2:-semver}
ver=${3:-}
work=${WORK:-/tmp/tickprof-marked-bench}
pairs=${PAIRS:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# shellcheck source=scripts/marked_crate_copies.sh
. "$here/marked_crate_copies.sh"
out=$work/$key/whole-$crate-$ver
rm -rf "$out"
mkdir -p "$out"
echo "building (logs: $logs/whole-build.log)" >&2
(cd "$unmarked" && cargo build -q --release --example tp_workload) \
  >>"$logs/whole-build.log" 2>&1 || { echo "build failed: see $logs/whole-build.log" >&2; exit 1; }
(cd "$marked" && cargo build -q --release --example tp_workload) \
  >>"$logs/whole-build.log" 2>&1 || { echo "build failed: see $logs/whole-build.log" >&2; exit 1; }

echo "crate: $crate $ver   tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$unmarked/target/release/examples/tp_workload" \
  "$marked/target/release/examples/tp_workload" "$out" "$pairs" <<'EOF'
import json, os, statistics, subprocess, sys, time

plain, marked, out, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def run(cmd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    t = time.perf_counter()
    subprocess.run([cmd], env=e, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t

rows = []
for i in range(pairs):
    u = run(plain)
    path = os.path.join(out, "r%d.json" % i)
    run(marked, {"TICKPROF_OUT": path})
    r = json.load(open(path))
    # The marked run's wall time up to its report (building and writing
    # the report is not the program's).
    m = r["run"]["wall_ns"] / 1e9
    top = sum(n["total_ns"] for n in r["tree"] if n.get("parent") == 0) / 1e9
    counted = sorted(s["name"] for s in r["sites"] if s.get("timing") == "counted")
    bad = []
    # Any timed site whose calls took time (raw) but whose total or mean
    # reads 0: a figure no call supports.
    zero = [s["name"] for s in r["sites"] if s.get("timing", "timed") == "timed"
            and s["calls"] > 0 and s["raw_total_ns"] > 0
            and (s["total_ns"] == 0 or s["mean_ns"] == 0)]
    for s in r["sites"]:
        if s.get("timing", "timed") != "timed" or s["calls"] < 1000 or not s.get("hist"):
            continue
        p = [s["min_ns"], s["p50_ns"], s["p90_ns"], s["p99_ns"], s["max_ns"]]
        if p != sorted(p) or not (s["min_ns"] <= s["mean_ns"] <= s["max_ns"]):
            bad.append((s["name"], p, s["mean_ns"]))
        elif s["p50_ns"] == 0 and s["mean_ns"] > 0:
            bad.append((s["name"], "p50 0", s["mean_ns"]))
        elif s["mean_ns"] < 0.5 * s["p50_ns"]:
            # Half the calls at least took p50: the mean is at least half of it.
            bad.append((s["name"], "mean below half the p50", s["mean_ns"], s["p50_ns"]))
    timed = sum(1 for s in r["sites"] if s.get("timing", "timed") == "timed"
                and s["calls"] >= 1000 and s.get("hist"))
    rows.append(dict(u=u, m=m, top=top, share=r["run"]["overhead_share"],
                     counted=counted, bad=bad, timed=timed, zero=zero))

def rng(v, f="%.2f"):
    v = sorted(v)
    return (f % statistics.median(v)) + " (" + (f % v[0]) + "-" + (f % v[-1]) + ")"

print("%d pairs: unmarked wall %s s, marked wall (to the report) %s s" % (
    pairs, rng([x["u"] for x in rows], "%.3f"), rng([x["m"] for x in rows], "%.3f")))
print("top-level total / unmarked wall: %s (target 0.85-1.15)" % rng([x["top"] / x["u"] for x in rows]))
meas = [1 - x["u"] / x["m"] for x in rows]
print("instrumentation share: header %s, measured (1 - unmarked/marked) %s; header - measured %s points (target within 5)" % (
    rng([100 * x["share"] for x in rows], "%.1f%%"), rng([100 * v for v in meas], "%.1f%%"),
    rng([100 * (x["share"] - v) for x, v in zip(rows, meas)], "%+.1f")))
nbad = sum(len(x["bad"]) for x in rows)
print("percentile invariants: %d violations over %d timed sites with >= 1,000 calls (%d runs)" % (
    nbad, sum(x["timed"] for x in rows), pairs))
for x in rows:
    for b in x["bad"][:3]:
        print("  violation:", b)
nzero = sum(len(x["zero"]) for x in rows)
print("zero figures: %d timed site-runs whose total or mean reads 0 while their calls took time (%d runs)" % (
    nzero, pairs))
for x in rows:
    for z in x["zero"][:3]:
        print("  zero:", z)
sets = {tuple(x["counted"]) for x in rows}
print("counted sites: %d distinct set%s over %d runs (%s sites counted)" % (
    len(sets), "" if len(sets) == 1 else "s", pairs, "/".join(str(len(s)) for s in sets)))
if len(sets) > 1:
    allc = set().union(*map(set, sets))
    common = set.intersection(*map(set, sets))
    print("  differing:", sorted(allc - common))
EOF
