#!/usr/bin/env bash
# Exports of a deeply recursive run (issue 13): a child recursing DEPTH deep
# (default 200,000; direct recursion `down`, and mutual recursion `ping`/
# `pong`) on a 1 GiB-stack thread writes every format at exit. For each
# format alone (PER_FORMAT=1), and all of them in one run, prints the exit code, the peak
# resident memory (/usr/bin/time -v) and wall time of the whole process,
# and the file's size. Fails if a run does not exit 0, a file is missing or
# empty, or a peak is above LIMIT_MIB (default 2048). By default one run per
# kind writes every format (each writer still runs 200,000 deep, and the
# peak bounds them all at once: CI's 18 processes were 2); PER_FORMAT=1
# adds a run with no output and one per format, for the table.
# The child is `deep_exports::child_workload` of tests/all.rs (debug build, as
# `cargo test` builds it). CI runs this script (about 30 s on 2 cores).
# Usage: bash scripts/stress_exports.sh [DEPTH]
set -euo pipefail
cd "$(dirname "$0")/.."
depth=${1:-200000}
limit_mib=${LIMIT_MIB:-2048}
if [ ! -x /usr/bin/time ]; then
  echo "stress_exports: /usr/bin/time missing (apt-get install time)" >&2
  exit 1
fi
# The binary of the README's `cargo test --workspace` (scripts/test_bin.sh).
. scripts/test_bin.sh
bin=$(test_bin all)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
formats="folded svg json html txt csv trace.json"
fail=0
printf '%-7s %-11s %5s %10s %8s %14s\n' kind output exit "peak MiB" seconds "file bytes"
run() { # kind label outputs...
  local kind=$1 label=$2; shift 2
  local paths="" f
  for f in "$@"; do paths="$paths,$out/$kind.$f"; done
  rm -f "$out/$kind".*
  set +e
  env -u TICKPROF TPTEST_ALLOCATOR=system TPTEST_DEEP_CHILD="$kind:$depth" TICKPROF_OUT="${paths#,}" \
    TICKPROF_REPORT=tree TICKPROF_STDERR=0 \
    /usr/bin/time -v -o "$out/time" "$bin" --exact deep_exports::child_workload >"$out/log" 2>&1
  local code=$?
  set -e
  local kib secs
  kib=$(awk -F': ' '/Maximum resident/ {print $2}' "$out/time")
  secs=$(awk -F': ' '/Elapsed \(wall/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$out/time")
  local size=0
  for f in "$@"; do
    if [ -s "$out/$kind.$f" ]; then
      size=$((size + $(stat -c %s "$out/$kind.$f")))
    else
      echo "stress_exports: $kind: no $f file" >&2; fail=1
    fi
  done
  [ $# -gt 0 ] || size=-
  printf '%-7s %-11s %5s %10.1f %8s %14s\n' "$kind" "$label" "$code" "$(awk -v k="$kib" 'BEGIN {print k / 1024}')" "$secs" "$size"
  if [ "$code" != 0 ]; then cat "$out/log" >&2; fail=1; fi
  if [ "$kib" -gt $((limit_mib * 1024)) ]; then
    echo "stress_exports: $kind $label: peak above $limit_mib MiB" >&2; fail=1
  fi
}
for kind in direct mutual; do
  if [ "${PER_FORMAT:-0}" = 1 ]; then
    run "$kind" "(none)"
    for f in $formats; do run "$kind" "$f" "$f"; done
  fi
  # shellcheck disable=SC2086
  run "$kind" "all" $formats
done
echo "depth $depth, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exit $fail
