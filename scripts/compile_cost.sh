#!/usr/bin/env bash
# Compile time and binary size of marks: generates a throwaway crate with N
# marked functions (outside the repository, under ${TMPDIR:-/tmp}), builds
# it once per variant in release and in debug, and prints the build time
# (CPU seconds, user + system) of the crate itself (its dependencies are built once beforehand, in a target
# dir shared by the variants), the size of the binary and of its code, and
# the cost of one more marked function.
#
# Usage: bash scripts/compile_cost.sh [N] [variant...]
#   N        functions per crate (default 5000)
#   variant  any of: unmarked tickprof container tracing fastrace
#            part-fn part-site part-guard (the parts of tickprof's expansion)
#            (default: all)
# REPEAT=r builds each variant r times and prints the shortest (default 1).
# PROFILES="release" (or "debug") builds only that profile (default: both).
# COMPILE_COST_DIR=dir keeps the generated crate and its built dependencies
# there between runs (default: a fresh temporary directory, removed after).
#
# Variants:
#   unmarked    fn f_i(x: u64) -> u64 { .. }, no mark
#   tickprof    #[tickprof::profile]
#   container   the same functions in one `#[tickprof::profile] mod`, each
#               marked by the container (not in the default list)
#   tracing     #[tracing::instrument(skip_all)] (no argument recorded: the
#               lightest form, closest to a tickprof mark)
#   fastrace    #[fastrace::trace] (with fastrace's `enable` feature, as
#               an application that collects spans builds it; without it the
#               attribute expands to nothing)
#   part-fn     only the nested `fn __tickprof_here() {}`
#   part-site   the nested fn and the `static` call site (kept alive with
#               black_box), no guard
#   part-guard  only the guard, on one call site shared by all functions
#   alt-site    part-site with a unit struct as the marker and
#               `type_name::<marker>` taken directly (no nested fn, no
#               `path_of` instance): an alternative measured, not used
# Every function is #[inline(never)] and called from main, so none is
# dropped or merged; each has a different constant so none is folded.
# Times are CPU seconds (user + system) of `cargo build`, steadier than wall
# time on a shared machine; still, use REPEAT=3 for figures you quote, or a
# smaller N to iterate.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-5000}"
shift || true
variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
  variants=(unmarked tickprof tracing fastrace part-fn part-site part-guard)
fi

if [ -n "${COMPILE_COST_DIR:-}" ]; then
  # Reuse (and keep) this directory and its built dependencies.
  work="$COMPILE_COST_DIR"
  mkdir -p "$work"
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/tickprof-compile-cost.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/src"
cat >"$work/Cargo.toml" <<EOF
[package]
name = "marks"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
tickprof = { path = "$repo" }
tracing = "0.1"
fastrace = { version = "0.7", features = ["enable"] }

[workspace]
EOF

# Writes src/main.rs for variant $1.
generate() {
  local variant="$1" out="$work/src/main.rs"
  {
    echo '#![allow(dead_code, unused_imports, clippy::all)]'
    echo 'use std::hint::black_box;'
    if [ "$variant" = part-guard ]; then
      echo 'fn __tickprof_shared() {}'
      echo 'static SHARED: tickprof::__private::CallSite = tickprof::__private::CallSite::function('
      echo '    tickprof::__private::path_of(__tickprof_shared), None, file!(), line!());'
    fi
    if [ "$variant" = container ]; then
      echo '#[tickprof::profile]'
      echo 'mod marked {'
      echo 'use std::hint::black_box;'
    fi
    for ((i = 0; i < n; i++)); do
      local attr="" pre="" vis=""
      case "$variant" in
        unmarked) ;;
        container) vis='pub(crate) ' ;;
        tickprof) attr='#[tickprof::profile]' ;;
        tracing) attr='#[tracing::instrument(skip_all)]' ;;
        fastrace) attr='#[fastrace::trace]' ;;
        part-fn) pre='fn __tickprof_here() {}' ;;
        part-site)
          pre='fn __tickprof_here() {} static __TICKPROF_SITE: tickprof::__private::CallSite = tickprof::__private::CallSite::function(tickprof::__private::path_of(__tickprof_here), None, file!(), line!()); black_box(&__TICKPROF_SITE);'
          ;;
        part-guard) pre='let _g = tickprof::__private::Guard::enter(&SHARED);' ;;
        alt-site)
          pre='#[allow(non_camel_case_types)] struct __tickprof_here; static __TICKPROF_SITE: tickprof::__private::CallSite = tickprof::__private::CallSite::function(std::any::type_name::<__tickprof_here>, None, file!(), line!()); black_box(&__TICKPROF_SITE);'
          ;;
        *) echo "unknown variant $variant" >&2; exit 2 ;;
      esac
      echo "$attr"
      echo "#[inline(never)]"
      echo "${vis}fn f_$i(x: u64) -> u64 { $pre x.wrapping_mul($((i * 2 + 3))) ^ (x >> $((i % 61 + 1))) }"
    done
    if [ "$variant" = container ]; then
      echo '}'
      echo 'use marked::*;'
    fi
    echo 'fn main() {'
    echo '    let mut s = 0u64;'
    for ((i = 0; i < n; i++)); do
      echo "    s = s.wrapping_add(f_$i(black_box($i)));"
    done
    echo '    println!("{s}");'
    echo '}'
  } >"$out"
}

# Builds the current src/main.rs REPEAT times; sets $best (the smallest CPU
# time, user + system, of the build: on a shared machine it varies much
# less than wall time), $bytes, $stripped (without the symbol table) and
# $text.
build() {
  best=""
  for ((r = 0; r < ${REPEAT:-1}; r++)); do
    touch "$work/src/main.rs"
    (cd "$work" && /usr/bin/time -f "%U %S" -o "$work/time" cargo build -q "${flag[@]}" 2>"$work/err") || {
      echo "$variant ($profile) failed:" >&2
      head -40 "$work/err" >&2
      exit 1
    }
    took=$(awk '{ print $1 + $2 }' "$work/time")
    if [ -z "$best" ] || [ "$(echo "$took < $best" | bc)" = 1 ]; then
      best=$took
    fi
  done
  local bin="$work/target/$dir/marks"
  bytes=$(stat -c %s "$bin")
  text=$(size -A "$bin" | awk '$1 == ".text" { print $2 }')
  strip -o "$work/stripped" "$bin"
  stripped=$(stat -c %s "$work/stripped")
}

# Each variant is built with N functions and with N/10: the difference,
# divided by the difference in functions, is the cost of one more marked
# function, free of the fixed costs (the runtime linked in, start-up code).
export CARGO_INCREMENTAL=0
n_full=$n
n_small=$((n / 10))
[ "$n_small" -ge 1 ] || n_small=1
printf '%-11s %-7s %7s %10s %10s %9s | %-9s %6s %5s %8s %6s\n' variant profile "CPU s" "binary B" "stripped" ".text B" \
  "per mark:" "CPU ms" "B" "stripped" ".text"
for profile in ${PROFILES:-release debug}; do
  flag=()
  dir=debug
  if [ "$profile" = release ]; then
    flag=(--release)
    dir=release
  fi
  # Dependencies once per profile (a tiny crate using all of them).
  n=1
  generate tickprof
  (cd "$work" && cargo build -q "${flag[@]}" >/dev/null 2>&1) || {
    echo "dependency build failed:" >&2
    (cd "$work" && cargo build "${flag[@]}") >&2
    exit 1
  }
  for variant in "${variants[@]}"; do
    n=$n_small
    generate "$variant"
    build
    small_s=$best small_bytes=$bytes small_text=$text small_stripped=$stripped
    n=$n_full
    generate "$variant"
    build
    d=$((n_full - n_small))
    printf '%-11s %-7s %7.2f %10d %10d %9d | %-9s %6.2f %5d %8d %6d\n' "$variant" "$profile" \
      "$best" "$bytes" "$stripped" "$text" "" \
      "$(echo "($best - $small_s) * 1000 / $d" | bc -l)" \
      $(((bytes - small_bytes) / d)) $(((stripped - small_stripped) / d)) $(((text - small_text) / d))
  done
done
echo "N = $n_full functions (per mark: against N = $n_small); $(rustc --version); host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
