#!/usr/bin/env bash
# criterion's profiler hook (tickprof::criterion::Profiler, feature
# criterion05): `cargo bench --bench companion -- --profile-time 1` writes
# a profile per benchmark in criterion's directory; check that each file is
# there and parses, and that the JSON holds the benchmark's sites. Then
# check that the other criterion versions' features compile.
#
# `cargo bench --bench companion --features tickprof-testsuite/criterion --
# --profile-time 1` is the user's command (the feature stays off in workspace
# builds: criterion's graph holds serde_json, whose impls would break
# compat/inference); here the same binary and criterion flags run under the test profile
# (`--bench` is what `cargo bench` passes), which reuses the build of
# `cargo test --workspace` (the testsuite is optimised in that profile too)
# instead of compiling every dependency again for the bench profile; and
# `--workspace --features tickprof-testsuite/criterion`, not `-p`: the
# workspace's feature unification, so that only the runtime and what uses it
# are built again (`-p tickprof-testsuite` resolved clap, linkme and
# criterion apart and rebuilt them too).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/criterion
for b in pipeline tokenize; do rm -rf "$out/$b/profile"; done
# Unoptimised: the files' presence and contents are checked, not their
# figures, and the test profile's opt-level 3 (for the timing tests) made
# this build most of the step.
. scripts/test_bin.sh
cargo test --workspace --features tickprof-testsuite/criterion --bench companion \
  "${unoptimised[@]}" -- --bench --profile-time 1
for b in pipeline tokenize; do
  dir=$out/$b/profile
  for f in tickprof.txt tickprof.folded tickprof.svg tickprof.json; do
    test -s "$dir/$f" || { echo "missing or empty: $dir/$f"; exit 1; }
  done
  python3 - "$dir" "$b" <<'PY'
import json, sys, xml.dom.minidom
d, bench = sys.argv[1], sys.argv[2]
doc = json.load(open(f"{d}/tickprof.json"))
assert doc["version"] == 1, doc["version"]
names = {s["name"] for s in doc["sites"]}
want = "companion::tokenize"
assert want in names, (want, names)
if bench == "pipeline":
    assert "companion::pipeline" in names, names
else:
    assert "companion::pipeline" not in names, ("tokenize's profile has only its own calls", names)
xml.dom.minidom.parse(f"{d}/tickprof.svg")
for line in open(f"{d}/tickprof.folded"):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    assert stack and int(n) >= 0, line
assert "companion::tokenize" in open(f"{d}/tickprof.txt").read()
print(f"{bench}: {len(names)} sites, files parse")
PY
done

# The same trait in criterion 0.6, 0.7 and 0.8: the features compile.
# (The profiler's unit test, `cargo test -p tickprof-runtime --lib
# --features criterion05 integrations::criterion`, rebuilds the runtime's
# tests with the feature: CI_CRITERION_UNIT=1 runs it too; the checks of
# the files above cover what it asserts, a profile holding only its own
# benchmark's calls.)
if [ "${CI_CRITERION_UNIT:-0}" = 1 ]; then
  cargo test -p tickprof-runtime --lib --features criterion05 integrations::criterion
fi
cargo check -p tickprof-runtime --features criterion06,criterion07,criterion08
