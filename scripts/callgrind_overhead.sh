#!/usr/bin/env bash
# Instructions per call of the unmarked function, the floor (two rdtsc) and
# #[profile], counted by callgrind: repeatable, unlike cycle timings on a
# shared machine. (The sampler runs on a thread of its own: its work is not
# inside probe_marked.)
# Usage: bash scripts/callgrind_overhead.sh   (TICKPROF=off for the off mode)
# Prints unmarked, floor, marked (timed: TICKPROF_TIME=all) and counted;
# guarded and counted-guarded: the same with one guarded body (#[track_caller]).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example overhead_probe
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One run with every call timed (TICKPROF_TIME=all: `marked` is the timed
# path), one with the default adaptive timing, where probe_marked's tiny
# body makes its site counted after 256 learning calls (`counted`: 1 in 64
# of its calls is the timed sample, as in a real counted site). With
# TICKPROF=off both runs give the off path.
probe() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
    target/release/examples/overhead_probe >/dev/null 2>"$out/log" || { cat "$out/log"; exit 1; }
  callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null \
    | grep -E "::probe_($1) " \
    | awk -v as="$2" '{gsub(",","",$1); name=$0; sub(/.*::probe_/,"",name); sub(/ .*/,"",name); if (as != "") name=as; printf "%-10s %6.1f instructions per call\n", name, $1/1000000}'
}
TICKPROF_TIME=all probe 'unmarked|floor|marked|guarded|once' ''
if [ "${TICKPROF:-on}" != off ]; then
  TICKPROF_TIME=counted probe 'marked' counted
  TICKPROF_TIME=counted probe 'guarded' counted-guarded
  TICKPROF_TIME=counted probe 'once' counted-once
fi
