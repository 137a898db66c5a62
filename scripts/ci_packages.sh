#!/usr/bin/env bash
# Every Debian package CI's steps use, installed in one go: .ci/run starts
# this in the background at its start, beside the README's build (which
# needs none of them), and waits for it before the first step that does.
# Each script still installs what it misses by itself (run alone, or if
# this failed): on a machine that has everything, this does nothing.
#
# The packages (and how each script installs it):
#   scripts/ci_platforms.sh setup   its cross toolchains and emulators
#                                   (the arm64 architecture added first)
#   prometheus                      scripts/prometheus_check.sh (no recommends)
#   golang-go                       scripts/pprof_common.sh (go tool pprof)
#   chromium                        scripts/check_html.sh
#   valgrind                        scripts/ci_alloc_dhat.sh (DHAT)
#   uftrace                         scripts/ci_uftrace.sh
#   lcov                            scripts/ci_coverage.sh (lcov, genhtml)
#
# Usage: bash scripts/ci_packages.sh   (as root; prints its wall time;
# exit 1, with apt-get's last lines, when an install failed)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
[ "$(id -u)" = 0 ] || { echo "ci_packages: not root: nothing installed"; exit 0; }

# Installs packages $@ (apt-get's own arguments first, up to `--`) unless
# every one is installed.
install() {
  local args=()
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  dpkg -s "$@" >/dev/null 2>&1 && return
  local log
  log=$(mktemp)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${args[@]}" "$@" >"$log" 2>&1 ||
    { tail -20 "$log"; rm -f "$log"; echo "ci_packages: FAIL: apt-get install $*"; return 1; }
  rm -f "$log"
}

# The platforms' packages first (their setup updates the package lists,
# with the arm64 architecture, when it installs anything), then the lists
# updated again if anything else is missing. With PLATFORMS_READY set (a
# path), that file is made once the platforms' setup is over, whatever
# its outcome: .ci/run starts the platforms' builds then.
platforms=0
bash scripts/ci_platforms.sh setup || platforms=$?
[ -z "${PLATFORMS_READY:-}" ] || echo "$platforms" >"$PLATFORMS_READY"
[ "$platforms" = 0 ] || { echo "ci_packages: FAIL: the platforms' setup"; exit 1; }
others=(prometheus golang-go valgrind uftrace lcov chromium)
dpkg -s "${others[@]}" >/dev/null 2>&1 || apt-get update -qq
install --no-install-recommends -- prometheus
install -- golang-go valgrind uftrace lcov
install -- chromium
echo "ci_packages: every package installed in $(( $(date +%s) - start )) s"
