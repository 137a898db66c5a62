#!/usr/bin/env bash
# `cargo tickprof test --release` on published crates, against the plain
# `cargo test --release`: the same tests pass (exact counts of passed,
# failed and ignored, doctests included), the crate's tree is unchanged
# (every file hashed before and after), the number of functions marked and
# skipped, and the wall time of the test run marked / unmarked.
#
# Usage: bash scripts/real_crates.sh [crate@version ...]
#   default: semver@1.0.28 hashbrown@0.17.1 indexmap@2.14.2
#
# Each crate's published source is taken from cargo's registry (a throwaway
# crate depending on it, then `cargo fetch`, as scripts/marked_crate_bench.sh
# does) and copied to $WORK/src/CRATE-VERSION: that copy is the "user's
# tree". Its lock file is generated once, so both runs use the same
# dependency versions. Builds (`--no-run`) come first and are not timed;
# then the two test runs alternate, unmarked first, $RUNS times each, and
# the table gives the median wall time with the min-max spread, and the
# ratio marked/unmarked per pair (median, min-max). Logs: $WORK/logs.
#
# Environment: WORK (default /tmp/tickprof-real-crates), RUNS (3). The
# tickprof checkout is the one this script is in; cargo-tickprof is built
# from it (release). Needs network access to crates.io (through cargo) the
# first time. Expect 20-40 min on 2 busy cores, most of it building.
# Not run by CI.
set -euo pipefail

tp=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-/tmp/tickprof-real-crates}
runs=${RUNS:-3}
crates=("$@")
[ ${#crates[@]} -gt 0 ] || crates=(semver@1.0.28 hashbrown@0.17.1 indexmap@2.14.2)
mkdir -p "$work/logs" "$work/src" "$work/target"
logs=$work/logs

echo "building cargo-tickprof (release) in $tp" >&2
(cd "$tp" && cargo build -q --release -p tickprof-cli --bin cargo-tickprof)
export PATH="$tp/target/release:$PATH"
export TICKPROF_PATH="$tp"

# Sum of passed, failed and ignored over the "test result:" lines of a log.
counts() {
  grep -o 'test result: [a-zA-Z]*\. [0-9]* passed; [0-9]* failed; [0-9]* ignored' "$1" |
    awk '{p += $4; f += $6; i += $8} END {printf "%d passed, %d failed, %d ignored", p, f, i}'
}
# Hash of every file of a tree (path and content).
tree_hash() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}
stats() { # min median max of the arguments
  printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {printf "%s %s %s", a[1], a[int((NR + 1) / 2)], a[NR]}'
}
now() { date +%s.%N; }

rows=()
status=0
for spec in "${crates[@]}"; do
  crate=${spec%@*}
  ver=${spec#*@}
  fetch=$work/fetch-$crate-$ver
  mkdir -p "$fetch/src"
  printf '[package]\nname = "tp-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
    "$crate" "$ver" >"$fetch/Cargo.toml"
  : >"$fetch/src/lib.rs"
  (cd "$fetch" && cargo fetch -q)
  reg=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "$crate-$ver" | head -1)
  [ -d "$reg" ] || { echo "could not find $crate-$ver in cargo's registry" >&2; exit 1; }
  src=$work/src/$crate-$ver
  if [ ! -f "$src/.tp-ready" ]; then
    rm -rf "$src"
    cp -r "$reg" "$src"
    chmod -R u+w "$src"
    (cd "$src" && cargo generate-lockfile -q)
    touch "$src/.tp-ready"
  fi
  export CARGO_TARGET_DIR=$work/target/$crate-$ver
  log=$logs/$crate-$ver
  before=$(tree_hash "$src")
  echo "building $crate $ver: unmarked, then marked" >&2
  (cd "$src" && cargo test -q --release --no-run) >"$log.build-unmarked.log" 2>&1 ||
    { echo "unmarked build failed: $log.build-unmarked.log" >&2; exit 1; }
  (cd "$src" && cargo tickprof test -v --release --no-run) >"$log.build-marked.log" 2>&1 ||
    { echo "marked build failed: $log.build-marked.log" >&2; exit 1; }
  summary=$(grep -m1 '^cargo tickprof: marked' "$log.build-marked.log" | sed 's/^cargo tickprof: //; s/; -v lists them//')
  un=() mk=() ratio=() same=yes codes=""
  for ((i = 0; i < runs; i++)); do
    t0=$(now)
    c=0; (cd "$src" && cargo test -q --release) >"$log.unmarked.$i.log" 2>&1 || c=$?
    t1=$(now)
    m=0; (cd "$src" && cargo tickprof test -q --release) >"$log.marked.$i.log" 2>&1 || m=$?
    t2=$(now)
    u=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    k=$(awk -v a="$t1" -v b="$t2" 'BEGIN {printf "%.2f", b - a}')
    un+=("$u") mk+=("$k") ratio+=("$(awk -v a="$k" -v b="$u" 'BEGIN {printf "%.2f", a / b}')")
    cu=$(counts "$log.unmarked.$i.log")
    cm=$(counts "$log.marked.$i.log")
    codes="$codes $c/$m"
    if [ "$cu" != "$cm" ] || [ "$c" != "$m" ]; then same=NO; status=1; fi
  done
  after=$(tree_hash "$src")
  [ "$before" = "$after" ] || { same="$same; TREE CHANGED"; status=1; }
  read -r umin umed umax <<<"$(stats "${un[@]}")"
  read -r mmin mmed mmax <<<"$(stats "${mk[@]}")"
  read -r rmin rmed rmax <<<"$(stats "${ratio[@]}")"
  rows+=("$crate $ver|$summary|unmarked: $cu (exit codes unmarked/marked:$codes); same results: $same; tree unchanged: $([ "$before" = "$after" ] && echo yes || echo NO)|unmarked ${umed} s (${umin}-${umax}), marked ${mmed} s (${mmin}-${mmax}), marked/unmarked ${rmed}x (${rmin}-${rmax})")
done

echo
echo "tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cargo test --release vs cargo tickprof test --release; $runs runs each, alternating; wall seconds of the test run (builds done before)"
for r in "${rows[@]}"; do
  IFS='|' read -r name summary tests time <<<"$r"
  echo
  echo "$name"
  echo "  $summary"
  echo "  tests: $tests"
  echo "  wall: $time"
done
exit $status
