#!/usr/bin/env bash
# Start-up cost of a process that links tickprof: wall time per process of a
# tiny binary, release and debug, for an unmarked copy (no tickprof
# dependency) and for each tickprof checkout given.
#
# Usage: bash scripts/startup_cost.sh <tickprof-checkout>...
#   e.g. bash scripts/startup_cost.sh /path/to/old-checkout .
#
# Binaries (one crate per checkout, `tickprof` as a path dependency):
#   never  one #[tickprof::profile] fn that is never called; main returns
#   once   the same fn called once (a doctest calls into the marked crate)
# each run with TICKPROF unset (on) and TICKPROF=off. The unmarked crate has
# the same two programs without the attribute and without the dependency.
# Each figure is the mean wall time of RUNS (default 100) sequential
# processes after 5 warm-up runs, like a doctest runner starting one process
# per doctest; hyperfine if installed (apt-get install hyperfine), else a
# timed shell loop. Output (any exit report) goes to /dev/null, as a test
# harness captures it. Not run by CI.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 <tickprof-checkout>..." >&2; exit 2; }
work=${WORK:-/tmp/tickprof-startup}
runs=${RUNS:-100}
mkdir -p "$work"

program() { # program MARK -> main.rs; MARK is the attribute or empty
  cat <<EOF
$1
#[inline(never)]
fn work(x: u64) -> u64 {
    x.wrapping_mul(3) ^ 1
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("once") {
        std::hint::black_box(work(std::hint::black_box(7)));
    }
}
EOF
}

# make_crate NAME [CHECKOUT]
make_crate() {
  local dir=$work/$1 tp=${2:-}
  mkdir -p "$dir/src"
  {
    printf '[package]\nname = "tp-startup"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n[workspace]\n'
    if [ -n "$tp" ]; then printf '[dependencies]\ntickprof = { path = "%s" }\n' "$tp"; fi
  } >"$dir/Cargo.toml"
  if [ -n "$tp" ]; then program '#[tickprof::profile]'; else program ''; fi >"$dir/src/main.rs"
  (cd "$dir" && cargo build -q --release && cargo build -q) >&2
}

names=(unmarked)
make_crate unmarked
i=0
for tp in "$@"; do
  tp=$(cd "$tp" && pwd)
  name=t$i-$(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo x)
  make_crate "$name" "$tp"
  names+=("$name")
  echo "$name = $tp" >&2
  i=$((i + 1))
done

# mean_ms BIN ARG TICKPROF-VALUE
mean_ms() {
  local bin=$1 arg=$2 mode=$3
  local out=$work/out
  mkdir -p "$out"
  if command -v hyperfine >/dev/null; then
    env ${mode:+TICKPROF=$mode} \
      hyperfine -N -w 5 -r "$runs" --export-json "$out/h.json" "$bin $arg" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.2f ± %.2f  (user+sys %.2f)" % (r["mean"]*1e3, r["stddev"]*1e3, (r["user"]+r["system"])*1e3))' "$out/h.json"
  else
    local s e k
    for ((k = 0; k < 5; k++)); do env ${mode:+TICKPROF=$mode} "$bin" $arg >/dev/null 2>&1; done
    s=$(date +%s.%N)
    for ((k = 0; k < runs; k++)); do env ${mode:+TICKPROF=$mode} "$bin" $arg >/dev/null 2>&1; done
    e=$(date +%s.%N)
    awk -v a="$s" -v b="$e" -v n="$runs" 'BEGIN {printf "%.2f", (b - a) * 1e3 / n}'
    echo " (loop)"
  fi
}

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ms per process, wall mean ± sd of $runs sequential runs (and CPU user+sys mean)"
printf '%-18s %-8s %-6s %-5s %s\n' build profile call mode ms
for name in "${names[@]}"; do
  for profile in release debug; do
    bin=$work/$name/target/$profile/tp-startup
    for call in never once; do
      arg=""
      [ $call = once ] && arg=once
      for mode in "" off; do
        [ "$name" = unmarked ] && [ -n "$mode" ] && continue
        printf '%-18s %-8s %-6s %-5s %s\n' "$name" "$profile" "$call" "${mode:-on}" "$(mean_ms "$bin" "$arg" "$mode")"
      done
    done
  done
done
