#!/usr/bin/env bash
# Issue 52's acceptance figures for `cargo tickprof` with its default
# options (marks after inlining, inlined and unmarked rows from the PC
# sampler) on a published crate, against the unmarked program and perf.
#
# Usage: bash scripts/after_inlining.sh <crate> [version]
#   crate: semver, indexmap, hashbrown or pulldown-cmark (the source,
#   workloads and input of scripts/marked_crate_copies.sh).
#
# The program: a copy of the crate's published source, its workload as a
# bin target of the package (`src/bin/tp_workload.rs`, `[[bin]]
# tp_workload`), no tickprof dependency (cargo tickprof adds one). A bin,
# not an example: cargo tickprof marks the library under an example as
# well, but never an example's own code, so the program's `main` would not
# be marked and the report's top-level total would not be the program's.
# A bin's `main` is marked like the library's kept functions.
#
# 1. Builds: `cargo build --release --bin tp_workload` from a clean target
#    directory (the unmarked build), then `cargo-tickprof tickprof build
#    --release --bin tp_workload` with the unmarked build there (the probe
#    and the marked build, tickprof compiled too: cargo tickprof's own
#    directories removed first), each timed (wall and CPU); both again
#    after a comment is added to the library's root file (tickprof compiled); then the
#    unmarked build again with full debug info into target-perf/, for perf
#    (debug info does not change the code: cli/README.md, After inlining).
# 2. PAIRS (5) interleaved triples: the marked binary with the default
#    settings (its JSON report kept), the marked binary with TICKPROF=off,
#    the unmarked one; whole-process wall and CPU (user + system) times.
# 3. PERF_RUNS (3) runs of `perf record -e cpu-clock -F FREQ (4000)
#    --call-graph dwarf` on the debug-info unmarked build, REPEAT workload
#    processes each.
# 4. scripts/after_inlining.py: the figures and one table against the
#    targets (its header says how each is made).
#
# Environment: WORK (default /tmp/tickprof-after-inlining), PAIRS,
# PERF_RUNS, FREQ, REPEAT (default: 4 for semver, 2 otherwise),
# CARGO_TICKPROF (default: this checkout's target/release/cargo-tickprof;
# it marks against the checkout it was built from), REBUILD=1 to rebuild
# (default: reuse the builds of an earlier run), SKIP_RUNS=1 to print the
# figures of the runs already made. Needs perf, addr2line and nm.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tp=$(cd "$here/.." && pwd)
crate=${1:?usage: $0 <crate> [version]}
ver=${2:-}
work=${WORK:-/tmp/tickprof-after-inlining}
pairs=${PAIRS:-5}
nperf=${PERF_RUNS:-3}
freq=${FREQ:-4000}
cli=${CARGO_TICKPROF:-$tp/target/release/cargo-tickprof}
case "$crate" in semver) repeat=${REPEAT:-4} ;; *) repeat=${REPEAT:-2} ;; esac
[ -x "$cli" ] || { echo "no $cli: cargo build --release -p tickprof-cli" >&2; exit 1; }

# shellcheck source=scripts/marked_crate_copies.sh
TP_COPIES=unmarked . "$here/marked_crate_copies.sh"
user=$work/$key/user-$crate-$ver
out=$work/$key/after-$crate-$ver
mkdir -p "$out"

# --- the user crate: the published source with the workload as a bin -------
if [ ! -f "$user/.tp-ready" ] || [ "${REBUILD:-0}" = 1 ]; then
  rm -rf "$user"
  cp -r "$src" "$user"
  chmod -R u+w "$user"
  mkdir -p "$user/src/bin"
  workload >"$user/src/bin/tp_workload.rs"
  printf '\n[[bin]]\nname = "tp_workload"\npath = "src/bin/tp_workload.rs"\n\n[workspace]\n' >>"$user/Cargo.toml"
  rm -f "$user/Cargo.lock"
  touch "$user/.tp-ready"
fi
plain=$user/target/release/tp_workload
marked=$user/target/tickprof/target/release/tp_workload
debug=$user/target-perf/release/tp_workload

# timed LOG CMD...: runs CMD in $user, appends "wall user sys" to LOG.times.
timed() {
  local log=$1
  shift
  (cd "$user" && /usr/bin/time -o "$log.times" -a -f '%e %U %S' "$@") >>"$log" 2>&1 \
    || { echo "failed: $* (see $log)" >&2; tail -20 "$log" >&2; exit 1; }
}

if [ ! -x "$marked" ] || [ ! -x "$plain" ] || [ ! -x "$debug" ] || [ "${REBUILD:-0}" = 1 ]; then
  echo "building $crate $ver in $user (logs in $out)" >&2
  rm -rf "$user/target" "$user/target-perf" "$out"/build-*.log*
  (cd "$user" && cargo fetch -q) >/dev/null 2>&1 || true
  timed "$out/build-unmarked.log" cargo build --release --bin tp_workload
  # The user's build is there; cargo tickprof's own directories are not.
  timed "$out/build-marked.log" "$cli" tickprof build --release --bin tp_workload
  # Again, everything fresh: what a second `cargo tickprof build` costs.
  timed "$out/build-marked-again.log" "$cli" tickprof build --release --bin tp_workload
  timed "$out/build-debug.log" env CARGO_PROFILE_RELEASE_DEBUG=2 CARGO_PROFILE_RELEASE_STRIP=none \
    cargo build --release --bin tp_workload --target-dir target-perf
fi
if [ ! -f "$out/build-touch-marked.log.times" ]; then
  # An edit of the library (a comment added to its root file; cargo
  # tickprof compares contents, not times), tickprof compiled:
  # the unmarked rebuild, then cargo tickprof's (probe and marked copy).
  printf '\n// an edit %s\n' "$(date +%s%N)" >>"$user/src/lib.rs"
  timed "$out/build-touch-unmarked.log" cargo build --release --bin tp_workload
  timed "$out/build-touch-marked.log" "$cli" tickprof build --release --bin tp_workload
fi
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

load() { cut -d' ' -f1-3 /proc/loadavg; }
if [ "${SKIP_RUNS:-0}" != 1 ]; then
  rm -f "$out"/tp.*.json "$out"/perf.* "$out/times.tsv"
  load >"$out/load.before"
  date -u '+%Y-%m-%d %H:%M UTC' >"$out/date"
  # --- paired runs -------------------------------------------------------------
  python3 - "$plain" "$marked" "$out" "$pairs" <<'EOF'
import os, subprocess, sys, time
plain, marked, out, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def run(cmd, env):
    """Whole-process wall and CPU (user + system) seconds."""
    e = dict(os.environ)
    e.update(env)
    t = time.perf_counter()
    p = subprocess.Popen([cmd], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    w = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("%s exited with %d" % (cmd, p.returncode))
    return w, ru.ru_utime + ru.ru_stime
with open(os.path.join(out, "times.tsv"), "w") as f:
    f.write("pair\tmarked\toff\tunmarked\tmarked_cpu\toff_cpu\tunmarked_cpu\n")
    for i in range(pairs):
        print("pair %d/%d" % (i + 1, pairs), file=sys.stderr)
        m = run(marked, {"TICKPROF_OUT": os.path.join(out, "tp.%d.json" % i)})
        o = run(marked, {"TICKPROF": "off"})
        u = run(plain, {})
        f.write("%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n" % (i, m[0], o[0], u[0], m[1], o[1], u[1]))
        f.flush()
EOF
  # --- perf on the unmarked build -------------------------------------------------
  perf_runs "$out" "$nperf" "$freq" "$repeat" "$debug"
  load >"$out/load.after"
fi

# --- the figures ----------------------------------------------------------------------
echo
echo "== $crate $ver: cargo tickprof (default options) at $(git -C "$tp" rev-parse --short HEAD)"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; $(cat "$out/date"); load before $(cat "$out/load.before"), after $(cat "$out/load.after")"
grep -h '^cargo tickprof: marked' "$out/build-marked.log" | tail -1 || true
python3 "$here/after_inlining.py" --out "$out" --binary "$debug" --src "$user/src" \
  --crate "$crate" --perf-runs "$nperf" --freq "$freq" --repeat "$repeat"
