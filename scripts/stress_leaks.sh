#!/usr/bin/env bash
# Issue 13, leaked guards: 1,000,000 `mem::forget(prof_guard!(..))` then
# 11,000 marked calls (each calling two more), with the default node cap.
# Prints the time of the 11,000 calls; they must take well under a second.
# (The README test run's binary: scripts/test_bin.sh.)
# Usage: bash scripts/stress_leaks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/test_bin.sh
bin=$(test_bin all)
LEAKS=1000000 TICKPROF_MAX_NODES=1000000 "$bin" --nocapture leaked_guards:: 2>&1 \
  | grep -E "marked calls after|test result"
