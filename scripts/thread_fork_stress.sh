#!/usr/bin/env bash
# Full-size runs of tests/thread_churn.rs and tests/fork.rs (issue 13):
#  - 200,000 short threads, one marked call each: peak RSS with profiling on
#    and with TICKPROF=off (/usr/bin/time -v), and report() time;
#  - 400 forks of a child that starts a thread while the parent churns
#    threads: hangs out of 400 (a hung child's stacks are printed with gdb
#    when it is installed, and a hang in tickprof fails the run).
# Uses the test build of the README's `cargo test --workspace` (debug;
# PROFILE=release for an optimised one; scripts/test_bin.sh).
# Usage: scripts/thread_fork_stress.sh [threads] [forks]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-200000}
forks=${2:-400}
. scripts/test_bin.sh
bin=$(test_bin all)
peak() { grep "Maximum resident set size" "$1" | awk '{print $NF}'; }
run_churn() {
    env -u TICKPROF_OUT TPTEST_ALLOCATOR=system TICKPROF_STDERR=0 TPTEST_CHURN_CHILD="churn:$threads" "$@" \
        /usr/bin/time -v "$bin" --exact thread_churn::child_workload --nocapture 2>"$tmp/time" >/dev/null
    grep "^churn:" "$tmp/time" || true
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run_churn env TICKPROF=on
on=$(peak "$tmp/time")
run_churn env TICKPROF=off
off=$(peak "$tmp/time")
echo "threads: $threads; peak RSS on: ${on} KB; off: ${off} KB; on - off: $((on - off)) KB"
limit_kb=$((24 * 1024))
if ((on - off > limit_kb)); then
    echo "FAIL: more than 24 MB above TICKPROF=off" >&2
    exit 1
fi
TPTEST_ALLOCATOR=system TICKPROF_STDERR=0 TPTEST_FORK_CHILD="forks:$forks" "$bin" --exact fork::child_workload --nocapture 2>"$tmp/fork" >/dev/null || {
    cat "$tmp/fork" >&2
    exit 1
}
grep "^forks:" "$tmp/fork"
