#!/usr/bin/env bash
# Regenerates README.md's sample report (the block between
# <!-- quickstart-report:begin --> and <!-- quickstart-report:end -->) from
# a release run of the quickstart, the README's first command:
#
#   bash scripts/readme_sample.sh
#
# 1. `cargo run --release --example quickstart`, its stderr (the exit
#    report) kept in target/quickstart-report.txt;
# 2. tests/quickstart.rs (a module of tests/all.rs) with TPTEST_BLESS set to that file: the test runs
#    the quickstart again (its own build), checks that the release report
#    has the same shape (header lines, columns, rows, lines under the
#    table) and writes it into the README.
#
# Then say the host in the sentence above the block (printed below) and
# read `git diff README.md`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
cargo run --quiet --release --example quickstart 2>target/quickstart-report.txt >/dev/null
TPTEST_BLESS="$PWD/target/quickstart-report.txt" \
    cargo test --quiet -p tickprof-testsuite --test all quickstart::the_readmes_sample_has_the_shape
echo "readme_sample: README.md's sample written from a release run on$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
