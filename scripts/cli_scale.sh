#!/usr/bin/env bash
# The `tickprof` command at scale (issue 25, points 9-11): prints
#   - the time of `tickprof diff` on two 100,000-site reports (and their size),
#   - the peak RSS and output size of `tickprof replay` on a 20,000-deep trace,
#   - the time `tickprof show /dev/zero` takes to refuse.
# Figures, not assertions: the tests (cli/tests/hostile.rs) check the
# behaviour. Usage: scripts/cli_scale.sh [SITES] [DEPTH]
# TICKPROF_BIN: the command to measure (default: a release build of cli/).
set -euo pipefail
cd "$(dirname "$0")/.."

sites=${1:-100000}
depth=${2:-20000}
if [[ -z "${TICKPROF_BIN:-}" ]]; then
    cargo build --release -q -p tickprof-cli
    TICKPROF_BIN=target/release/tickprof
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$sites" "$depth" <<'PY'
import json, sys
work, sites, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
doc = json.load(open("cli/tests/data/before.json"))
template = doc["sites"][0]
for name, step in (("before", 0), ("after", 3)):
    out = dict(doc)
    out["sites"] = [
        dict(template, name=f"app::module{i % 97}::site{i}", calls=i + 1,
             total_ns=1_000_000 + i * step)
        for i in range(sites)
    ]
    out["tree"] = [doc["tree"][0]]
    out["threads"] = []
    json.dump(out, open(f"{work}/{name}.json", "w"))
with open(f"{work}/deep.trace.json", "w") as f:
    f.write('{"traceEvents":[')
    f.write(",".join(
        f'{{"ph":"X","name":"rec","pid":1,"tid":1,"ts":{i},"dur":{2 * (depth - i)}}}'
        for i in range(depth)))
    f.write("]}")
PY

# Runs the command; prints wall seconds and peak RSS (KiB) of the child.
measure() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
with open(sys.argv[1], "wb") as out:
    code = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL).returncode
wall = time.monotonic() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{wall:.2f} {rss} {code}")
PY
}

size() { du -h "$1" | cut -f1; }

read -r t rss code < <(measure "$work/diff.out" "$TICKPROF_BIN" diff "$work/before.json" "$work/after.json")
echo "diff, $sites sites per report ($(size "$work/before.json") each): ${t} s, peak RSS $((rss / 1024)) MiB, exit $code, $(wc -l < "$work/diff.out") lines"
read -r t rss code < <(measure "$work/raw.out" "$TICKPROF_BIN" diff --raw "$work/before.json" "$work/after.json")
echo "diff --raw, $sites sites: ${t} s, exit $code"
read -r t rss code < <(measure "$work/replay.out" "$TICKPROF_BIN" replay "$work/deep.trace.json")
echo "replay, $depth-deep trace ($(size "$work/deep.trace.json")): ${t} s, peak RSS $((rss / 1024)) MiB, output $(size "$work/replay.out"), exit $code"
if [[ -e /dev/zero ]]; then
    read -r t rss code < <(measure /dev/null "$TICKPROF_BIN" show /dev/zero)
    echo "show /dev/zero: refused in ${t} s, peak RSS $((rss / 1024)) MiB, exit $code"
fi
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
