#!/usr/bin/env bash
# tickprof on the platforms this x86_64 Linux machine can build for and
# emulate (docs/platforms.md): aarch64 Linux under qemu-user, x86_64
# Windows (windows-gnu) under wine, wasm32-wasip1 under Node.js's WASI,
# and macOS (aarch64, x86_64) type-checked only. Emulators give behaviour,
# never timings: nothing here looks at a figure but the call counts.
#
# Usage: bash scripts/ci_platforms.sh STEP...   with STEP one of
#   setup    installs Debian's cross toolchains (apt-get; skipped when present)
#   aarch64  runtime unit tests and the quickstart under qemu-aarch64
#   windows  runtime unit tests and the quickstart under wine
#   wasm     the single-thread example under node (the quickstart starts threads)
#   macos    cargo clippy for aarch64-apple-darwin (x86_64-apple-darwin: MACOS_X86=1)
#   native   the native reports' call counts, into $PLATFORMS_NATIVE (see
#            native_calls)
#   all      the five, in that order, the packages the aarch64 step does
#            not need installed while it builds (what .ci/run runs)
# Each step prints its wall time. A run on a machine that already has the
# packages skips the installs. The steps share the target directory
# target/platforms (the host's proc-macro crates are built once); `all`
# removes it at the end.
#
# The toolchain is Debian's rustc-web/cargo-web (1.96, bookworm-security),
# first in PATH for these steps only: rustup's toolchain has no other
# target here and none can be downloaded. Its std comes prebuilt for
# aarch64 (libstd-rust-web-dev:arm64, a multiarch package); for the other
# targets std is built from rust-web-src (`-Zbuild-std`, RUSTC_BOOTSTRAP=1
# on this stable compiler). Lints: clippy-driver is the workspace's
# compiler wrapper (what `cargo clippy` sets), so every workspace crate
# built for a target is linted as it is built, warnings denied, with no
# second pass over std. What is built is built for behaviour: std without
# its backtrace symbolizer, no debug info, the runtime unoptimised (its
# profile asks opt-level 3; at 0 its unit tests build in a fifth of the
# time: 17 s of CPU against 92 on x86_64, and take twice as long to run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# The whole header: check_report reads its clock line.
export TICKPROF_REPORT=verbose
export PATH="/usr/bin:$PATH"
export RUSTC=/usr/bin/rustc
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$root/target/platforms"
export CARGO_TERM_COLOR=never
export CARGO_INCREMENTAL=0
# No debug info: the builds are for behaviour, and std is built here.
export CARGO_PROFILE_DEV_DEBUG=false
# And none at build time either (CI sets it to line tables for its own
# builds: see .ci/run).
export CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG=false
export RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

# The arguments of every cargo command here: the runtime unoptimised.
unoptimised=(--config 'profile.dev.package.tickprof-runtime.opt-level=0'
  --config 'profile.test.package.tickprof-runtime.opt-level=0')
# -Zbuild-std's arguments: std (and panic_unwind or panic_abort) without
# the `backtrace` feature (object, gimli, addr2line: a third of std's build).
build_std() { echo "-Zbuild-std=std,$1" "-Zbuild-std-features=${2:-}"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints what the seconds since the step's start or the last lap did.
lap_at=$(date +%s)
lap() {
  local now
  now=$(date +%s)
  echo "platforms:   $1: $((now - lap_at)) s"
  lap_at=$now
}

# What the aarch64 step needs, then the rest (wine's libraries are most of
# the bytes to unpack).
packages_first=(rustc-web cargo-web rust-web-clippy
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libstd-rust-web-dev:arm64)
packages_then=(rust-web-src gcc-mingw-w64-x86-64-win32 wine64 lld-16 wasi-libc wabt)

# Installs packages $@ unless they are installed.
install() {
  dpkg -s "$@" >/dev/null 2>&1 && return
  local log
  log=$(mktemp)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
    >"$log" 2>&1 || { tail -30 "$log"; rm -f "$log"; return 1; }
  rm -f "$log"
}

setup() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64 ||
    ! dpkg -s "${packages_first[@]}" "${packages_then[@]}" >/dev/null 2>&1; then
    dpkg --add-architecture arm64
    apt-get update -qq
  fi
  install "${packages_first[@]}"
  if [ "${1:-}" = background ]; then
    install "${packages_then[@]}" &
    installing=$!
  else
    install "${packages_then[@]}"
  fi
  /usr/bin/cargo --version
}

# `all`: waits for the packages setup installs while aarch64 builds.
installing=
installed() {
  [ -z "$installing" ] && return
  wait "$installing" || { echo "FAIL: apt-get install ${packages_then[*]}"; return 1; }
  installing=
}

# The `name calls` pairs of a text report on stdin, sorted by name.
calls() {
  awk '/^name +calls/ { on = 1; next } /^tickprof:/ { on = 0 } on { print $1, $2 }' | sort
}

# The report of the same example built natively (rustup's toolchain, the
# release build CI made), to compare call counts with. With
# PLATFORMS_NATIVE set (a directory), the `native` step's copy there,
# which .ci/run's foreground takes while this runs in the background (so
# that the background never waits on target/'s lock, held by the steps
# beside it).
native_calls() {
  if [ -n "${PLATFORMS_NATIVE:-}" ]; then
    # Taken by .ci/run's foreground after the README's tests, perhaps
    # after this background run needs it: waited for (20 minutes at most).
    local waited=0
    while [ ! -s "$PLATFORMS_NATIVE/$1" ] && [ $waited -lt 1200 ]; do
      sleep 2
      waited=$((waited + 2))
    done
    [ -s "$PLATFORMS_NATIVE/$1" ] || { echo "FAIL: no native report $PLATFORMS_NATIVE/$1" >&2; return 1; }
    [ $waited = 0 ] || echo "platforms:   waited $waited s for the native report of $1" >&2
    cat "$PLATFORMS_NATIVE/$1"
    return
  fi
  run_native "$1"
}

# The calls of example $1 built and run natively.
run_native() {
  env -u RUSTC -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS -u RUSTC_BOOTSTRAP \
    PATH="${PATH#/usr/bin:}" CARGO_TARGET_DIR="$root/target" \
    cargo run --quiet --release --example "$1" 2>&1 >/dev/null | calls
}

# The native reports' calls of the examples the other steps run, into
# $PLATFORMS_NATIVE (see native_calls).
native() {
  [ -n "${PLATFORMS_NATIVE:-}" ] || { echo "native: PLATFORMS_NATIVE is not set"; return 1; }
  mkdir -p "$PLATFORMS_NATIVE"
  local e
  for e in quickstart single_thread; do
    rm -f "$PLATFORMS_NATIVE/$e"
    run_native "$e" >"$PLATFORMS_NATIVE/$e.tmp"
    [ -s "$PLATFORMS_NATIVE/$e.tmp" ] || { echo "native: $e printed no report"; return 1; }
    mv "$PLATFORMS_NATIVE/$e.tmp" "$PLATFORMS_NATIVE/$e"
  done
}

# Checks a report (stderr of an example, in file $2) made on target $1:
# the clock line, no invariant-TSC claim off x86_64, the coverage line,
# and the same call counts as the native build of example $3.
check_report() {
  local target=$1 err=$2 example=$3
  cat "$err"
  case $target in
    x86_64-*) grep -q '^tickprof: clock rdtsc at .* GHz' "$err" ;;
    aarch64-*) grep -q '^tickprof: clock cntvct_el0 at .* MHz (CNTFRQ_EL0' "$err" ;;
    *) grep -q '^tickprof: clock monotonic clock at ' "$err" ;;
  esac || { echo "FAIL: $target: the clock line does not name its counter"; return 1; }
  if [[ $target != x86_64-* ]] && grep -q 'invariant TSC' "$err"; then
    echo "FAIL: $target: an invariant TSC is claimed off x86_64"
    return 1
  fi
  grep -q '^tickprof: coverage: ' "$err" || { echo "FAIL: $target: no coverage line"; return 1; }
  grep -q 'warning' "$err" && { echo "FAIL: $target: a warning"; return 1; }
  calls <"$err" >"$work/calls.$target"
  native_calls "$example" >"$work/calls.native"
  if ! diff "$work/calls.native" "$work/calls.$target"; then
    echo "FAIL: $target: the calls column differs from x86_64 Linux's (< native, > $target)"
    return 1
  fi
  echo "$target: $example's calls equal x86_64 Linux's ($(wc -l <"$work/calls.native") sites)"
}

# TICKPROF_FAIL arming mark $1 to print once: set for the run whose
# report check_report reads (one emulated run of the example, not two:
# armed, the calls, the coverage line and the warnings are the same).
fail_once() { echo "$1=1*print(failpoint at $1)"; }

# Failpoint names resolve on target $1 (the marks were listed before
# tickprof's start-up read TICKPROF_FAIL): mark $2, armed by fail_once,
# printed once in the run's stderr, file $3.
check_failpoint() {
  local target=$1 mark=$2 err=$3
  grep -qx "failpoint at $mark" "$err" ||
    { cat "$err"; echo "FAIL: $target: TICKPROF_FAIL did not reach $mark"; return 1; }
  echo "$target: TICKPROF_FAIL reached $mark"
}

# The runtime's property tests under an emulator: 32 cases each, not 256
# (the cases are the same code as natively, where CI runs them in full;
# under qemu and wine they were most of the platforms' run, CI's critical
# path).
emulated_cases=(env PROPTEST_CASES=32)
# The runtime's unit tests of modules with no platform-dependent code (no
# cfg of a target, no system call): the exports' writers and readers and
# the trace log's replay, pure computation on generated trees, are the same
# code on every target and ran natively. Under qemu they were 34 of the
# unit tests' 42 s of CPU.
portable_tests=(--skip export::json:: --skip export::svg:: --skip export::stacks:: --skip log::replay::)
# qemu-user refuses a `clone` without CLONE_VM and with no exit signal
# (EINVAL: it emulates only fork-like and thread-like clones), so the exit
# copy is made in-process there, as where `fork` fails: the tests of the
# copy itself (exit::copy::tests::a_copy_*) run natively only; the
# quickstart's report below checks the in-process fallback under qemu.
qemu_skips=(--skip exit::copy::tests::a_copy_)

aarch64() {
  local t=aarch64-unknown-linux-gnu
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  # No `-L` to the cross sysroot: qemu would then mix the cross loader
  # with the multiarch libc, and the first pthread_create spins forever.
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64
  "${emulated_cases[@]}" cargo test -q -p tickprof-runtime --lib --target $t "${unoptimised[@]}" \
    -- "${portable_tests[@]}" "${qemu_skips[@]}"
  lap "runtime unit tests built and run"
  # The example optimised (an unoptimised quickstart takes half a minute
  # under qemu).
  TICKPROF_FAIL=$(fail_once parse_line) cargo run -q --example quickstart --target $t \
    "${unoptimised[@]}" --config 'profile.dev.package.tickprof.opt-level=3' >/dev/null 2>"$work/err"
  check_report $t "$work/err" quickstart
  check_failpoint $t parse_line "$work/err"
  lap "quickstart built and run"
}

windows() {
  local t=x86_64-pc-windows-gnu
  installed
  # Clippy 1.96's missing_const_for_thread_local fires on thread-locals
  # whose initializer is already `const { .. }` on targets without native
  # TLS, windows-gnu among them (rust-lang/rust-clippy#17566).
  local -x CLIPPY_ARGS="${CLIPPY_ARGS}-A__CLIPPY_HACKERY__clippy::missing_const_for_thread_local__CLIPPY_HACKERY__"
  export WINEPREFIX="$work/wine" WINEDEBUG=-all
  # The prefix is made while std builds. Wine 8.0 has no
  # bcryptprimitives.dll, whose ProcessPrng Rust's std imports.
  { /usr/lib/wine/wine64 wineboot -i >/dev/null 2>&1 &&
    x86_64-w64-mingw32-gcc -O2 -s -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
      scripts/platforms/bcryptprimitives.c -ladvapi32; } &
  local boot=$!
  local build=(--target $t "${unoptimised[@]}" $(build_std panic_unwind panic-unwind))
  cargo test -q -p tickprof-runtime --lib "${build[@]}" --no-run
  lap "std and the runtime unit tests built"
  cargo build -q --example quickstart "${build[@]}"
  wait $boot
  lap "quickstart built, wine's prefix made"
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=/usr/lib/wine/wine64
  "${emulated_cases[@]}" cargo test -q -p tickprof-runtime --lib "${build[@]}" -- "${portable_tests[@]}"
  lap "runtime unit tests run"
  TICKPROF_FAIL=$(fail_once parse_line) cargo run -q --example quickstart "${build[@]}" \
    >/dev/null 2>"$work/err"
  check_report $t "$work/err" quickstart
  grep -qEx 'tickprof: coverage: all [0-9]+ marked functions ran' "$work/err" ||
    { echo "FAIL: $t: not every mark ran, or they are not listed"; return 1; }
  check_failpoint $t parse_line "$work/err"
  /usr/lib/wine/wineserver -k || true
}

wasm() {
  local t=wasm32-wasip1
  installed
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || { echo "FAIL: node $major: WASI preview 1 needs node 20 or later"; return 1; }
  # wasm-ld with the program's start file (crt1-command.o) and the
  # pthread stubs Debian's wasi-libc (2022) lacks and Rust's std imports.
  # (In the target directory: the linker's path is part of every build's
  # fingerprint.)
  local tools="$CARGO_TARGET_DIR/wasi-tools"
  mkdir -p "$tools"
  wat2wasm --relocatable scripts/platforms/wasi_pthread_stubs.wat -o "$tools/pthread_stubs.o"
  printf '#!/bin/sh\nexec wasm-ld-16 "$@" /usr/lib/wasm32-wasi/crt1-command.o %s\n' \
    "$tools/pthread_stubs.o" >"$tools/wasm-ld"
  chmod +x "$tools/wasm-ld"
  export CARGO_TARGET_WASM32_WASIP1_LINKER="$tools/wasm-ld"
  export CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C link-self-contained=no -L /usr/lib/wasm32-wasi"
  export CARGO_TARGET_WASM32_WASIP1_RUNNER="node --no-warnings $root/scripts/platforms/wasi_run.mjs"
  TICKPROF_FAIL=$(fail_once largest) cargo run -q --example single_thread --target $t \
    "${unoptimised[@]}" $(build_std panic_abort) >/dev/null 2>"$work/err"
  check_report $t "$work/err" single_thread
  check_failpoint $t largest "$work/err"
}

macos() {
  installed
  # Check only: no macOS linker or SDK here. The libraries and the
  # facade's examples (the runtime's unit tests would add 115 s of CPU,
  # for two more std checks' worth of dependencies).
  # aarch64 only unless MACOS_X86=1: x86_64-apple-darwin's code is the
  # same cfg paths (no code here names macOS; its clock is x86_64 Linux's
  # rdtsc, checked natively), and its std build was about half of this
  # step's 89 s, on CI's critical path (this background job ends after
  # every other step).
  local names=(aarch64-apple-darwin) targets=() n
  [ "${MACOS_X86:-0}" = 1 ] && names+=(x86_64-apple-darwin)
  for n in "${names[@]}"; do targets+=(--target "$n"); done
  cargo clippy -q -p tickprof-runtime -p tickprof --lib --examples "${unoptimised[@]}" \
    "${targets[@]}" $(build_std panic_unwind panic-unwind) \
    -- -D warnings
  echo "macOS: type-checked (${names[*]})"
}

[ $# -gt 0 ] || { sed -n '2,20p' "$0"; exit 2; }
all=0
[ "$1" = all ] && { all=1; set -- setup aarch64 windows wasm macos; }
for s in "$@"; do
  printf '\n== platforms: %s\n' "$s"
  start=$(date +%s)
  lap_at=$start
  if [ $all = 1 ] && [ "$s" = setup ]; then setup background; else "$s"; fi
  echo "platforms: $s: $(( $(date +%s) - start )) s"
done
[ $all = 0 ] || rm -rf "$CARGO_TARGET_DIR"
