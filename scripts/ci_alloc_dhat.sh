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
# The build the README's `cargo test --workspace` made (it builds the test
# suite's examples; scripts/test_bin.sh): a release build of the example
# compiled the test suite's dev-dependencies again (110 s of CI), and
# `cargo build --workspace --example alloc_json` resolves the dependencies
# apart from the README's run (70 s more). The counts do not depend on
# optimisation.
. scripts/test_bin.sh
bin=$(example_bin alloc_json)
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# --num-callers: deep enough that every block's stack reaches `run`.
TICKPROF_OUT="$dir/report.json" TICKPROF_STDERR=0 \
  valgrind -q --tool=dhat --num-callers=64 --dhat-out-file="$dir/dhat.out" \
  "$bin" "$RECORDS"
python3 scripts/dhat_compare.py "$dir/report.json" "$dir/dhat.out"
