#!/usr/bin/env bash
# Instructions per call of the unmarked function, the floor (two rdtsc) and
# #[profile], counted by callgrind: repeatable, unlike cycle timings on a
# shared machine. (The sampler runs on a thread of its own: its work is not
# inside probe_marked.)
# Usage: bash scripts/callgrind_overhead.sh   (TICKPROF=off for the off mode)
# Prints unmarked, floor, marked (timed: TICKPROF_TIME=all) and counted
# (over 1,000,000 calls, and in steady state);
# guarded and counted-guarded: the same with one guarded body (#[track_caller]);
# once and always: `#[profile(once)]` and `#[profile(always)]` (as `cargo
# tickprof` marks); turns: a parent calling three marked children in turn
# (default timing: the children counted), against turns_unmarked.
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
calls=1000000
# inclusive REGEX: "name instructions" of each probe matching REGEX, over
# PROBE_CALLS calls of each.
inclusive() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
    target/release/examples/overhead_probe >/dev/null 2>"$out/log" || { cat "$out/log"; exit 1; }
  callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null \
    | grep -E "::probe_($1) " \
    | awk '{gsub(",","",$1); name=$0; sub(/.*::probe_/,"",name); sub(/ .*/,"",name); print name, $1}'
}
# probe REGEX NAME: instructions per call of each probe matching REGEX
# (named NAME when given) over 1,000,000 calls.
probe() {
  PROBE_CALLS=$calls inclusive "$1" \
    | awk -v as="$2" -v n=$calls '{name=$1; if (as != "") name=as; printf "%-10s %6.1f instructions per call\n", name, $2/n}'
}
# A counted site's first 256 calls are timed (learning) and its first
# call sets it up: over 1,000,000 calls they add a tenth of an
# instruction. The steady state, a counted call's own cost, is the
# difference between runs of 2,000,000 and 1,000,000 calls per probe.
steady() {
  paste <(PROBE_CALLS=$((2 * calls)) inclusive "$1") <(PROBE_CALLS=$calls inclusive "$1") \
    | awk -v as="$2" -v n=$calls '{printf "%-10s %6.1f instructions per call (steady state: the second %d calls)\n", as, ($2-$4)/n, n}'
}
TICKPROF_TIME=all probe 'unmarked|floor|marked|guarded|once|always' ''
# Three marked children called in turn by one unmarked parent, per call
# of the parent (three marked calls), and its unmarked twin.
probe 'turns|turns_unmarked' ''
if [ "${TICKPROF:-on}" != off ]; then
  TICKPROF_TIME=counted probe 'marked' counted
  TICKPROF_TIME=counted steady 'marked' counted
  TICKPROF_TIME=counted probe 'guarded' counted-guarded
  TICKPROF_TIME=counted probe 'once' counted-once
  TICKPROF_TIME=counted probe 'always' counted-always
fi
