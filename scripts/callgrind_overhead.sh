#!/usr/bin/env bash
# Instructions per call of the unmarked function, the floor (two rdtsc) and
# #[profile], counted by callgrind: repeatable, unlike cycle timings on a
# shared machine. The run's one-time work on its first marked call (the
# overhead calibration, inside the first probe_marked call) is subtracted.
# Usage: bash scripts/callgrind_overhead.sh   (TICKPROF=off for the off mode)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example overhead_probe
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
  target/release/examples/overhead_probe >/dev/null 2>"$out/log" || { cat "$out/log"; exit 1; }
callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null \
  | awk '
    { gsub(",", "", $1) }
    /::probe_(unmarked|floor|marked) / { name=$0; sub(/.*::probe_/, "", name); sub(/ .*/, "", name); n[name]=$1 }
    /tickprof_runtime::exit::first_call / { once=$1 }
    END {
      n["marked"] -= once
      for (k in n) printf "%-10s %6.1f instructions per call\n", k, n[k]/1000000
      printf "(one-time first-call work subtracted from marked: %d instructions)\n", once
    }' | sort
