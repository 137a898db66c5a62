#!/usr/bin/env bash
# Thread churn at its cost (issue 54, item 4): 2,000 short threads of 5
# marked calls each, one after the other (testsuite/examples/behaviour.rs,
# case `churn`), timed with tickprof on and with TICKPROF=off, alternating,
# RUNS times each (default 11). Prints each side's median wall time and
# their ratio; exit 1 when the ratio is above LIMIT (default 1.5).
# Usage: bash scripts/thread_churn_bench.sh [RUNS]   (release build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
limit=${LIMIT:-1.5}
cargo build --release -q -p tickprof-testsuite --example behaviour
bin=target/release/examples/behaviour
python3 - "$bin" "$runs" "$limit" <<'PY'
import os, statistics, subprocess, sys, time
bin, runs, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
env = {k: v for k, v in os.environ.items() if not k.startswith("TICKPROF")}
env["TICKPROF_STDERR"] = "0"
def once(extra):
    t = time.perf_counter()
    subprocess.run([bin, "churn"], env={**env, **extra}, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t
on, off = [], []
for _ in range(runs):
    off.append(once({"TICKPROF": "off"}))
    on.append(once({}))
m_on, m_off = statistics.median(on), statistics.median(off)
print(f"2,000 threads x 5 marked calls, {runs} runs each: on {m_on:.3f} s "
      f"(range {min(on):.3f}-{max(on):.3f}), off {m_off:.3f} s "
      f"(range {min(off):.3f}-{max(off):.3f}), ratio {m_on / m_off:.2f}x")
sys.exit(0 if m_on / m_off <= limit else 1)
PY
