#!/usr/bin/env bash
# What a marked call costs with the trace log on, side by side with plain
# recording and with an empty hook: instructions per call (callgrind,
# repeatable) and wall-clock ns per call (median of 5 runs of 1,000,000
# calls; the log written to a file, so the disk's page cache, not a
# terminal, takes it).
# Usage: bash scripts/log_cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release --example overhead_probe
bin=target/release/examples/overhead_probe
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() {
  for _ in 1 2 3 4 5; do
    env "$@" PROBE_TIME=1 TICKPROF_STDERR=0 "$bin" 2>&1 >/dev/null | awk '/ns per call/ {print $2}'
  done | sort -n | sed -n 3p
}
for mode in plain hook log; do
  case $mode in
    plain) vars=(X=1) ;;
    hook) vars=(PROBE_HOOK=1) ;;
    log) vars=(TICKPROF_LOG="$out/log.txt") ;;
  esac
  ins=$(env "${vars[@]}" bash scripts/callgrind_overhead.sh 2>/dev/null | awk '/^marked/ {print $2}')
  printf '%-6s %8s instructions  %8s ns per marked call\n' "$mode" "$ins" "$(median "${vars[@]}")"
done
echo "log file for 1,000,000 calls: $(wc -c <"$out/log.txt") bytes"
