#!/usr/bin/env bash
# Instructions per call of the unmarked function, the floor (two rdtsc) and
# #[profile], counted by callgrind: repeatable, unlike cycle timings on a
# shared machine. (The overhead calibration runs when the report is built,
# on a thread of its own, so it is not inside probe_marked.)
# Usage: bash scripts/callgrind_overhead.sh   (TICKPROF=off for the off mode)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example overhead_probe
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
  target/release/examples/overhead_probe >/dev/null 2>"$out/log" || { cat "$out/log"; exit 1; }
callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null \
  | grep -E "::probe_(unmarked|floor|marked) " \
  | awk '{gsub(",","",$1); name=$0; sub(/.*::probe_/,"",name); sub(/ .*/,"",name); printf "%-10s %6.1f instructions per call\n", name, $1/1000000}'
