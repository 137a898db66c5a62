#!/usr/bin/env bash
# `cargo tickprof` on published programs as they ship (their own
# Cargo.lock), then on published libraries' test suites.
#
# Programs: each one's .crate is downloaded as published and unpacked to
# $WORK/src/NAME-VERSION (the "user's tree", hashed before and after).
# Both builds start from an empty target directory with the registry warm
# (`cargo fetch --locked` first) and are timed: `cargo build --release
# --locked` and `cargo tickprof build --release` (CARGO_TARGET_DIR outside
# the tree, so nothing is written in it). The workload (generated here,
# deterministic) is fed to both binaries: exit codes and stdout must be
# identical. Then RUNS pairs alternate unmarked / marked (default
# settings) and RUNS more with TICKPROF=off; the table gives each pair's
# wall-time ratio, median (min-max).
#
# Libraries: `cargo tickprof test --release` against `cargo test
# --release` (same test counts, tree unchanged), as before.
#
# Usage: bash scripts/real_crates.sh [NAME ...]   (default: every program,
#   then the libraries; a NAME is a program or a library of the lists below)
# Environment: WORK (default /tmp/tickprof-real-crates), RUNS (5), LIBS=0
# to skip the libraries. Needs crates.io (static.crates.io for the .crate
# files, else cargo's registry). Expect an hour or more on 2 busy cores.
# Not run by CI.
set -euo pipefail

tp=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-/tmp/tickprof-real-crates}
runs=${RUNS:-5}
mkdir -p "$work/logs" "$work/src" "$work/target" "$work/in" "$work/dl"
logs=$work/logs

# name version bin workload
programs=(
  "pulldown-cmark 0.12.2 pulldown-cmark md"
  "hexyl 0.17.0 hexyl hex"
  "jsonxf 1.1.1 jsonxf json"
  "sd 1.0.0 sd sd"
  "grass 0.13.4 grass scss"
  "svgbob_cli 0.7.6 svgbob_cli bob"
  "szip 1.0.0 szip snappy"
  "b3sum 1.8.7 b3sum blake3"
  "rustfilt 0.2.2 rustfilt demangle"
  "toml2json 1.4.0 toml2json toml"
)
libraries=(semver@1.0.28 hashbrown@0.17.1 indexmap@2.14.2)

echo "building cargo-tickprof (release) in $tp" >&2
(cd "$tp" && cargo build -q --release -p tickprof-cli --bin cargo-tickprof)
export PATH="$tp/target/release:$PATH"
export TICKPROF_PATH="$tp"

tree_hash() { # every file of a tree, path and content
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}
stats() { # min median max of the arguments
  printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {printf "%s %s %s", a[1], a[int((NR + 1) / 2)], a[NR]}'
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b - a}'; }

# The published source, as shipped: the .crate file, else cargo's registry.
fetch_crate() { # name version -> prints the unpacked tree's path
  local name=$1 ver=$2 dir=$work/src/$1-$2
  if [ ! -f "$dir/.tp-ready" ]; then
    rm -rf "$dir"
    if curl -sSfL -o "$work/dl/$name-$ver.crate" "https://static.crates.io/crates/$name/$name-$ver.crate"; then
      tar xzf "$work/dl/$name-$ver.crate" -C "$work/src"
    else
      local f=$work/fetch-$name-$ver
      mkdir -p "$f/src"
      printf '[package]\nname = "tp-fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' "$name" "$ver" >"$f/Cargo.toml"
      : >"$f/src/lib.rs"
      (cd "$f" && cargo fetch -q)
      cp -r "$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "$name-$ver" | head -1)" "$dir"
    fi
    chmod -R u+w "$dir"
    touch "$dir/.tp-ready"
  fi
  echo "$dir"
}

# Deterministic inputs, made once (python3's seeded generator).
make_inputs() {
  local md=$work/in/input.md
  [ -f "$md" ] || python3 - "$work/src/pulldown-cmark-0.12.2" "$md" <<'EOF'
import glob, re, sys
src, out = sys.argv[1], sys.argv[2]
texts = []
for f in sorted(glob.glob(src + "/tests/suite/*.rs")):
    texts += re.findall(r'let original = r#*"(.*?)"#*;', open(f).read(), re.S)
doc = "\n\n".join(texts) + "\n\n" + open(src + "/README.md").read()
open(out, "w").write(doc * 160)
EOF
  [ -f "$work/in/input.bin" ] || python3 - "$work/in" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(35)
text = open(d + "/input.md", "rb").read()
# hexyl: 1.5 MB of mixed text and noise
open(d + "/input.bin", "wb").write(text[:1 << 20] + r.randbytes(1 << 19))
# szip, b3sum: text, compressible
open(d + "/big.txt", "wb").write(text * 8)
# jsonxf: nested records, minified
import json
recs = [{"id": i, "name": "item%d" % i, "tags": ["a%d" % (i % 7), "b%d" % (i % 11)],
         "pos": {"x": r.random(), "y": r.random()}, "ok": i % 3 == 0, "none": None}
        for i in range(150000)]
open(d + "/input.json", "w").write(json.dumps(recs, separators=(",", ":")))
# toml2json: many tables
with open(d + "/input.toml", "w") as f:
    for i in range(40000):
        f.write('[t%d]\nname = "n%d"\nvalue = %d\nratio = %.3f\nlist = [1, 2, %d]\n\n' % (i, i, i * 7, r.random(), i))
# grass: loops, mixins, nesting, functions
with open(d + "/input.scss", "w") as f:
    f.write("@use 'sass:math';\n$base: 4px;\n@mixin box($n) { padding: $base * $n; margin: math.div($n, 2) * 1px; }\n")
    f.write("@function tone($i) { @return mix(#336699, #ffcc00, $i * 1%); }\n")
    for b in range(300):
        f.write(".block-%d {\n  @include box(%d);\n  @for $i from 1 through 30 {\n    .e-#{$i} { color: tone($i); width: $i * %dpx; &:hover { opacity: math.div($i, 30); } }\n  }\n}\n" % (b, b % 9, b % 5 + 1))
# svgbob: boxes and arrows
row = "+------+   +------+   .------.  \n|  a   |-->|  b   |-->| c    |  \n+------+   +------+   '------'  \n    |          ^                 \n    v          |                 \n"
open(d + "/input.bob", "w").write("\n".join(row * 12 for _ in range(60)))
EOF
}

# The workload of a program: args and stdin.
workload() { # kind bin -> runs the binary with the workload, stdout to $3
  local kind=$1 bin=$2 out=$3 in=$work/in
  case "$kind" in
    md) "$bin" -TFSLPHMG <"$in/input.md" >"$out" ;;
    hex) "$bin" --color=always --border=unicode "$in/input.bin" >"$out" ;;
    json) "$bin" <"$in/input.json" >"$out" ;;
    sd) "$bin" '(\w+)([0-9])' '$2-$1' <"$in/input.md" >"$out" ;;
    scss) "$bin" "$in/input.scss" >"$out" ;;
    bob) "$bin" <"$in/input.bob" >"$out" ;;
    snappy) "$bin" <"$in/big.txt" >"$out" ;;
    blake3) "$bin" --num-threads 1 "$in/big.txt" "$in/input.bin" "$in/input.md" | sed "s| .*/| |" >"$out" ;;
    demangle) "$bin" <"$in/symbols.txt" >"$out" ;;
    toml) "$bin" "$in/input.toml" >"$out" ;;
  esac
}

rows=()
status=0
want=("$@")
selected() { [ ${#want[@]} -eq 0 ] || printf '%s\n' "${want[@]}" | grep -qxF "$1"; }

for p in "${programs[@]}"; do
  read -r name ver bin kind <<<"$p"
  selected "$name" || continue
  src=$(fetch_crate "$name" "$ver")
  [ -f "$work/in/input.md" ] || { fetch_crate pulldown-cmark 0.12.2 >/dev/null; make_inputs; }
  log=$logs/$name-$ver
  before=$(tree_hash "$src")
  (cd "$src" && cargo fetch -q --locked) >"$log.fetch.log" 2>&1 || { echo "$name: cargo fetch --locked failed: $log.fetch.log" >&2; status=1; continue; }
  plain=$work/target/$name/plain marked=$work/target/$name/marked
  rm -rf "$plain" "$marked"
  echo "$name $ver: building unmarked, then marked" >&2
  t0=$(now)
  c=0; (cd "$src" && CARGO_TARGET_DIR=$plain cargo build --release --locked) >"$log.build-unmarked.log" 2>&1 || c=$?
  t1=$(now)
  m=0; (cd "$src" && CARGO_TARGET_DIR=$marked cargo tickprof build -v --release) >"$log.build-marked.log" 2>&1 || m=$?
  t2=$(now)
  if [ "$c" != 0 ] || [ "$m" != 0 ]; then
    echo "$name: build failed (unmarked $c, marked $m): $log.build-*.log" >&2
    rows+=("| $name $ver | build failed (unmarked $c, marked $m) | | | | | |")
    status=1
    continue
  fi
  bu=$(secs "$t0" "$t1") bm=$(secs "$t1" "$t2")
  ub=$plain/release/$bin mb=$marked/tickprof/target/release/$bin
  if [ "$kind" = demangle ] && [ ! -f "$work/in/symbols.txt" ]; then
    nm --defined-only "$ub" | awk '{print $3}' >"$work/in/sym1.txt"
    for _ in $(seq 20); do cat "$work/in/sym1.txt"; done >"$work/in/symbols.txt"
  fi
  summary=$(grep -m1 '^cargo tickprof: marked' "$log.build-marked.log" | sed 's/^cargo tickprof: //')
  cu=0; workload "$kind" "$ub" "$log.out-unmarked" 2>"$log.err-unmarked" || cu=$?
  cm=0; workload "$kind" "$mb" "$log.out-marked" 2>"$log.err-marked" || cm=$?
  same=yes
  if [ "$cu" != 0 ] || [ "$cm" != 0 ] || ! cmp -s "$log.out-unmarked" "$log.out-marked"; then
    same="NO (exit $cu/$cm)"; status=1
  fi
  rd=() ro=()
  for ((i = 0; i < runs; i++)); do
    a=$(now); workload "$kind" "$ub" /dev/null 2>/dev/null || true
    b=$(now); workload "$kind" "$mb" /dev/null 2>/dev/null || true
    c2=$(now); workload "$kind" "$ub" /dev/null 2>/dev/null || true
    d=$(now); TICKPROF=off workload "$kind" "$mb" /dev/null 2>/dev/null || true
    e=$(now)
    rd+=("$(awk -v a="$a" -v b="$b" -v c="$c2" 'BEGIN {printf "%.2f", (c - b) / (b - a)}')")
    ro+=("$(awk -v c="$c2" -v d="$d" -v e="$e" 'BEGIN {printf "%.2f", (e - d) / (d - c)}')")
    unm=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b - a}')
  done
  after=$(tree_hash "$src")
  tree=yes; [ "$before" = "$after" ] || { tree=NO; status=1; }
  read -r dmin dmed dmax <<<"$(stats "${rd[@]}")"
  read -r omin omed omax <<<"$(stats "${ro[@]}")"
  rows+=("| $name $ver | $bu s / $bm s ($(awk -v a="$bm" -v b="$bu" 'BEGIN {printf "%.1f", a / b}')×) | ${unm} s | ${dmed}× (${dmin}–${dmax}) | ${omed}× (${omin}–${omax}) | $same | $tree |")
  echo "$name: $summary" >>"$logs/summaries.txt"
done

echo
echo "tickprof: $tp ($(git -C "$tp" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "builds from an empty target dir, registry warm; $runs alternating pairs per ratio (wall time, marked / unmarked)"
echo
echo "| program | build unmarked / marked | unmarked run | default | \`TICKPROF=off\` | output identical | tree unchanged |"
echo "|---|---|---|---|---|---|---|"
for r in "${rows[@]}"; do echo "$r"; done
[ -f "$logs/summaries.txt" ] && { echo; cat "$logs/summaries.txt"; }

[ "${LIBS:-1}" = 0 ] && exit $status

# --- libraries: cargo tickprof test against cargo test ----------------------
counts() { # passed, failed and ignored summed over a log's "test result:" lines
  grep -o 'test result: [a-zA-Z]*\. [0-9]* passed; [0-9]* failed; [0-9]* ignored' "$1" |
    awk '{p += $4; f += $6; i += $8} END {printf "%d passed, %d failed, %d ignored", p, f, i}'
}
echo
for spec in "${libraries[@]}"; do
  crate=${spec%@*} ver=${spec#*@}
  selected "$crate" || continue
  src=$(fetch_crate "$crate" "$ver")
  [ -f "$src/Cargo.lock" ] || (cd "$src" && cargo generate-lockfile -q)
  export CARGO_TARGET_DIR=$work/target/$crate-$ver
  log=$logs/$crate-$ver
  before=$(tree_hash "$src")
  (cd "$src" && cargo test -q --release --no-run) >"$log.build-unmarked.log" 2>&1 ||
    { echo "unmarked build failed: $log.build-unmarked.log" >&2; exit 1; }
  (cd "$src" && cargo tickprof test -v --release --no-run) >"$log.build-marked.log" 2>&1 ||
    { echo "marked build failed: $log.build-marked.log" >&2; exit 1; }
  summary=$(grep -m1 '^cargo tickprof: marked' "$log.build-marked.log" | sed 's/^cargo tickprof: //')
  c=0; (cd "$src" && cargo test -q --release) >"$log.unmarked.log" 2>&1 || c=$?
  m=0; (cd "$src" && cargo tickprof test -q --release) >"$log.marked.log" 2>&1 || m=$?
  cu=$(counts "$log.unmarked.log") cm=$(counts "$log.marked.log")
  same=yes; { [ "$cu" = "$cm" ] && [ "$c" = "$m" ]; } || { same=NO; status=1; }
  after=$(tree_hash "$src")
  [ "$before" = "$after" ] || { same="$same; TREE CHANGED"; status=1; }
  echo "$crate $ver: $summary"
  echo "  tests: $cu (exit $c/$m); same results: $same; tree unchanged: $([ "$before" = "$after" ] && echo yes || echo NO)"
  unset CARGO_TARGET_DIR
done
exit $status
