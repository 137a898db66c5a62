#!/usr/bin/env bash
# The tick frequency a report uses, quiet and with a CPU hog on every core.
#
# Runs the quickstart (release, ~0.15 s) RUNS times (default 40) while one
# busy loop per core runs, after QUIET (default 5) runs without them, and
# reads `run.frequency_hz` from each run's JSON report. Passes when every
# run under the hog is within 1% of the quiet runs' median; prints each
# run's deviation, the source the header named, and the CPU model.
#
#   bash scripts/frequency_under_hog.sh            # 5 quiet + 40 hogged runs
#   RUNS=100 bash scripts/frequency_under_hog.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-40}
QUIET=${QUIET:-5}
out=target/frequency-check
mkdir -p "$out"
cargo build --quiet --release --example quickstart
bin=target/release/examples/quickstart

hz() { # run once, print frequency_hz and frequency_source
  TICKPROF_STDERR=0 TICKPROF_OUT="$out/run.json" "$bin" >/dev/null
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["run"]; print(r["frequency_hz"], r.get("frequency_source", "?"))' "$out/run.json"
}

for _ in $(seq "$QUIET"); do hz; done >"$out/quiet.txt"

hogs=()
cleanup() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  hogs+=($!)
done
for _ in $(seq "$RUNS"); do hz; done >"$out/hogged.txt"
cleanup
hogs=()

python3 - "$out/quiet.txt" "$out/hogged.txt" "$(nproc)" <<'EOF'
import statistics, sys
def rows(p):
    return [(float(l.split(' ', 1)[0]), l.split(' ', 1)[1].strip()) for l in open(p) if l.strip()]
quiet, hogged, cores = rows(sys.argv[1]), rows(sys.argv[2]), sys.argv[3]
ref = statistics.median(h for h, _ in quiet)
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
print(f"quiet median {ref/1e9:.4f} GHz over {len(quiet)} runs; source: {quiet[0][1]}")
devs = [(h - ref) / ref * 100 for h, _ in hogged]
within = sum(abs(d) <= 1.0 for d in devs)
print(f"under a hog on each of {cores} cores: {within} of {len(devs)} runs within 1% "
      f"(deviation {min(devs)*1e4:+.1f} … {max(devs)*1e4:+.1f} ppm); {cpu}")
sys.exit(0 if within == len(devs) else 1)
EOF
