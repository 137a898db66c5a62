#!/usr/bin/env bash
# Coverage of marks: the LCOV file a run writes (TICKPROF_OUT=x.lcov) is
# read by lcov (`lcov --summary`) and genhtml, with the exact function
# counts of tests/coverage.rs's workload (7 marks ran, of every mark of its
# test binary, tests/all.rs: as many as the file's FN lines).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v lcov >/dev/null || ! command -v genhtml >/dev/null; then
  (sudo -n apt-get install -y -qq lcov || apt-get install -y -qq lcov) >/dev/null
fi
out=target/ci-coverage
rm -rf "$out"
mkdir -p "$out"
# The README test run's binary (scripts/test_bin.sh).
. scripts/test_bin.sh
bin=$(test_bin all)
TPTEST_ALLOCATOR=system TPTEST_COVERAGE_CHILD=1 TICKPROF_OUT="$PWD/$out/marks.lcov" \
  "$bin" --exact coverage::child_workload >/dev/null
marks=$(grep -c '^FN:' "$out/marks.lcov")
summary=$(lcov --summary "$out/marks.lcov" 2>&1)
echo "$summary"
grep -q "functions..: .* (7 of $marks functions)" <<<"$summary"
genhtml -q --output-directory "$out/html" "$out/marks.lcov" >/dev/null 2>"$out/genhtml.err" || {
  # genhtml wants the sources for its pages; the function table is what we check.
  cat "$out/genhtml.err"
  exit 1
}
test -s "$out/html/index.html"
echo "ci_coverage: lcov and genhtml read the LCOV file (7 of $marks functions)"
