#!/usr/bin/env bash
# Cross-check of the trace log (TICKPROF_LOG) against uftrace: the same
# program (examples/uftrace_tree.rs, #[inline(never)] marked functions) run
# under `uftrace record` and with TICKPROF_LOG must give the same call tree
# and the same call counts for the marked functions.
#
# uftrace needs the functions compiled with mcount calls (or patchable
# entry nops for its dynamic tracing). Stable Rust has neither: Debian's
# uftrace 0.13 has no capstone (dynamic patching of plain code: "dynamic
# patch type: none"), `#[patchable_function_entry]` is unstable (E0658),
# and `-Z instrument-mcount` / `-Z patchable-function-entry` are
# nightly-only. So the example crate alone (not tickprof, not the user's
# code) is compiled by the stable compiler with RUSTC_BOOTSTRAP=1 and
# `-Z instrument-mcount`, in a target directory of its own (cargo builds
# every crate again under RUSTC_BOOTSTRAP). An unoptimised build, the
# runtime's included: the check is of calls, not of speed, and the
# example's functions are #[inline(never)] (a release build took 32 of
# this step's 43 to 59 s in CI; this one 19 s, from nothing).
#
# Usage: bash scripts/ci_uftrace.sh   (installs uftrace with apt-get if
# missing; prints SKIP and exits 0 if it cannot)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v uftrace >/dev/null; then
  if ! { apt-get install -y -qq uftrace >/dev/null 2>&1 || \
         { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq uftrace >/dev/null 2>&1; }; }; then
    echo "SKIP: uftrace is not installed and apt-get could not install it"
    exit 0
  fi
fi

RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=target/uftrace cargo rustc --quiet \
  --config 'profile.dev.package.tickprof-runtime.opt-level=0' \
  --example uftrace_tree -- -Z instrument-mcount -C force-frame-pointers=yes
bin=target/uftrace/debug/examples/uftrace_tree
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Entry/exit events of the tree_* functions, one per line: "+name" or
# "-name" (a one-line call gives both), from either tool's output.
events() {
  sed -E 's/^\[[0-9]+\] //' | awk '
    /^#/ { next }
    {
      line = $0
      if (line ~ /^ *\}.*\/\* ([A-Za-z0-9_]+::)*tree_(root|middle|leaf) \*\//) {
        match(line, /tree_(root|middle|leaf)/); print "-" substr(line, RSTART, RLENGTH); next
      }
      # A call line starts with the name, maybe with its path (not, e.g.,
      # a type_name::<..>() call that mentions it).
      if (match(line, /^ *([A-Za-z0-9_]+::)*tree_(root|middle|leaf)\(\)/) == 0) next
      match(line, /tree_(root|middle|leaf)/)
      name = substr(line, RSTART, RLENGTH)
      if (line ~ /\(\) \{ *$/) print "+" name
      else if (line ~ /\(\);/) { print "+" name; print "-" name }
    }'
}

# Indented tree and per-function counts from the events.
tree() {
  awk '/^\+/ { printf "%*s%s\n", 2 * d, "", substr($0, 2); d++; n[substr($0, 2)]++ }
       /^-/  { d-- }
       END   { for (k in n) print "count " k " " n[k] | "sort" }'
}

(cd "$work" && uftrace record --no-pager "$OLDPWD/$bin" >/dev/null 2>&1 \
  && uftrace replay --no-pager -f none) | sed -E 's/_R[A-Za-z0-9_]*12uftrace_tree[0-9]+(tree_[a-z]+)/\1/g' \
  | events | tree >"$work/uftrace.txt"
TICKPROF_STDERR=0 TICKPROF_LOG="$work/tickprof.log" "$bin" >/dev/null
events <"$work/tickprof.log" | tree >"$work/tickprof.txt"

if [ ! -s "$work/uftrace.txt" ]; then
  echo "FAIL: uftrace recorded no tree_* call"; exit 1
fi
if ! diff -u "$work/uftrace.txt" "$work/tickprof.txt"; then
  echo "FAIL: uftrace and TICKPROF_LOG disagree (diff above: uftrace first)"; exit 1
fi
echo "ok: uftrace and TICKPROF_LOG agree on $(grep -c -v '^count' "$work/uftrace.txt") calls:"
grep '^count' "$work/uftrace.txt"
