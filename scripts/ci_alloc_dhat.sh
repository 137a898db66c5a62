#!/usr/bin/env bash
# Cross-checks tickprof's allocation counts (tickprof::Alloc) against DHAT
# (valgrind --tool=dhat) on a realistic program: testsuite/examples/alloc_json.rs
# generates, parses (serde_json), transforms and serializes a few MB of JSON
# in marked #[inline(never)] functions. scripts/dhat_compare.py checks that
# the bytes over all report rows equal DHAT's total (less tickprof's own
# blocks) within 1%, and each function's total bytes equal DHAT's inclusive
# bytes of its frame within 5%.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq valgrind >/dev/null) || {
    echo "valgrind not available: cannot run the DHAT cross-check" >&2
    exit 1
  }
fi

RECORDS="${RECORDS:-20000}"
# At the root (its default members hold the test suite): the features of
# the other release builds (the quickstart's), whose runtime is reused;
# `-p tickprof-testsuite` resolved others and rebuilt it (over a minute).
cargo build --release -q --example alloc_json
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# --num-callers: deep enough that every block's stack reaches `run`.
TICKPROF_OUT="$dir/report.json" TICKPROF_STDERR=0 \
  valgrind -q --tool=dhat --num-callers=64 --dhat-out-file="$dir/dhat.out" \
  target/release/examples/alloc_json "$RECORDS"
python3 scripts/dhat_compare.py "$dir/report.json" "$dir/dhat.out"
