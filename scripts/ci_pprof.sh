#!/usr/bin/env bash
# The pprof export read by the real tool, `go tool pprof` (Debian's
# golang-go; installed with apt-get when missing).
#
#   scripts/ci_pprof.sh
#
# 1. Runs the report_gallery example (two threads, a recursive merge sort,
#    awkward names) with TICKPROF_OUT=run.pb.gz,run.pb,run.json.
# 2. `go tool pprof -top` (time, then calls): every site whose name pprof
#    prints unchanged (plain `a::b::c` paths; pprof simplifies names with
#    `<…>`, quotes or spaces) is listed with flat = the JSON report's self
#    and cum = its total, in nanoseconds (±1 ns), and flat calls = its calls.
# 3. `go tool pprof -traces`: no stack names one function twice in a row
#    (recursion is collapsed, so cum does not double count it), and every
#    sample has the `thread` label.
# 4. The .pb and the .pb.gz decode to the same profile.
# 5. TICKPROF_HTTP: the `service` example serves its profile; `go tool pprof
#    -seconds 1 -top http://127.0.0.1:PORT/debug/pprof/profile` lists its
#    three sites, handle's cum covering parse and respond.
# 6. Allocation sample types: testsuite/examples/alloc_json.rs (tickprof::Alloc
#    installed) written as .pb.gz; `go tool pprof -sample_index=alloc_space
#    -top` and `alloc_objects`: flat = the JSON report's self bytes and self
#    allocations, cum = total bytes, for every plainly named site.
#
# Prints one summary line; exits non-zero when a check fails.
set -euo pipefail

source "$(dirname "$0")/pprof_common.sh"
out=target/pprof-check
fresh_dir "$out"
TICKPROF_STDERR=0 TICKPROF_OUT="$out/run.pb.gz,$out/run.pb,$out/run.json" \
    cargo run --quiet --release --example report_gallery -- --out "$out/gallery" --large 10 >/dev/null

pprof() { go tool pprof -nodefraction=0 -edgefraction=0 -nodecount=100000 "$@"; }
pprof -top -unit=ns "$out/run.pb.gz" >"$out/top-time.txt" 2>&1
pprof -top -sample_index=calls "$out/run.pb.gz" >"$out/top-calls.txt" 2>&1
pprof -traces "$out/run.pb.gz" >"$out/traces.txt" 2>&1
pprof -raw "$out/run.pb.gz" >"$out/raw-gz.txt" 2>&1
pprof -raw "$out/run.pb" >"$out/raw-pb.txt" 2>&1

. scripts/test_bin.sh
alloc_json=$(example_bin alloc_json)  # as ci_alloc_dhat.sh finds it
TICKPROF_STDERR=0 TICKPROF_OUT="$out/alloc.pb.gz,$out/alloc.json" \
    "$alloc_json" 2000 >/dev/null
pprof -top -sample_index=alloc_space -unit=B "$out/alloc.pb.gz" >"$out/top-bytes.txt" 2>&1
pprof -top -sample_index=alloc_objects "$out/alloc.pb.gz" >"$out/top-allocs.txt" 2>&1

start_service 6
(cd "$out" && HOME="$PWD" go tool pprof -seconds 1 -proto \
    "http://127.0.0.1:$port/debug/pprof/profile") >"$out/http.pb.gz" 2>"$out/http-fetch.txt" || true
stop_service
(cd "$out" && HOME="$PWD" pprof -top -unit=ns http.pb.gz) >"$out/http-top.txt" 2>&1 || true
(cd "$out" && HOME="$PWD" pprof -top -sample_index=calls http.pb.gz) >"$out/http-calls.txt" 2>&1 || true

python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
sites = json.load(open(f"{out}/run.json"))["sites"]
plain = [s for s in sites if re.fullmatch(r"[A-Za-z0-9_:]+", s["name"])]

def top(path, unit):
    rows = {}
    for line in open(path):
        # pprof prints a zero without its unit.
        m = re.match(r"\s*(\d+)(?:%s)?\s+\S+\s+\S+\s+(\d+)(?:%s)?\s+\S+\s+(.+)$" % (unit, unit), line)
        if m:
            rows[m.group(3).strip()] = (int(m.group(1)), int(m.group(2)))
    return rows

time, calls = top(f"{out}/top-time.txt", "ns"), top(f"{out}/top-calls.txt", "")
fail = []
for s in plain:
    n = s["name"]
    if s.get("timing") == "counted":
        # A counted site's own time is 0 (its calls' time is its
        # caller's self): pprof -top leaves it out of the time view.
        if calls.get(n, (None,))[0] != s["calls"]:
            fail.append(f"{n} (counted): flat calls {calls.get(n)}, report {s['calls']}")
        continue
    if n not in time:
        fail.append(f"{n}: not in pprof -top")
        continue
    flat, cum = time[n]
    if abs(flat - s["self_ns"]) > 1 or abs(cum - s["total_ns"]) > 1:
        fail.append(f"{n}: flat {flat} cum {cum}, report self {s['self_ns']} total {s['total_ns']}")
    if calls.get(n, (None,))[0] != s["calls"]:
        fail.append(f"{n}: flat calls {calls.get(n)}, report {s['calls']}")
stacks, stack, labelled, started = [], [], 0, False
for line in open(f"{out}/traces.txt"):
    if line.startswith("-----"):
        started = True
        if stack:
            stacks.append(stack)
        stack = []
    elif not started:
        continue  # the header: File, Type, Duration and the comments
    elif "thread:" in line:
        labelled += 1
    elif re.match(r"\s+[A-Za-z_]+:\s", line):
        continue  # another label (timing: counted)
    elif line.strip():
        stack.append(re.sub(r"^\s*\S+\s{3}", "", line.rstrip()).strip())
if stack:
    stacks.append(stack)
for st in stacks:
    for a, b in zip(st, st[1:]):
        if a == b:
            fail.append(f"recursion not collapsed: {st}")
if labelled != len(stacks) or not stacks:
    fail.append(f"{labelled} thread labels for {len(stacks)} samples")
raw = [open(f"{out}/raw-{k}.txt").read() for k in ("gz", "pb")]
if raw[0] != raw[1]:
    fail.append(".pb and .pb.gz differ")
rank = [s for s in plain if s["name"].endswith("::rank")]
if not rank:
    fail.append("the recursive site rank is missing")
http = top(f"{out}/http-top.txt", "ns")
http_calls = top(f"{out}/http-calls.txt", "")
names = ["service::handle", "service::parse", "service::respond"]
# A site decided counted (a host slow at its learning calls can make
# `respond`, ~0.5 us, one) has no time of its own in the time view: its
# calls' time is its caller's self. It is then in the calls view.
for n in names:
    if n not in http and http_calls.get(n, (0,))[0] > 0:
        http[n] = (0, 0)
if sorted(n for n in http) != names:
    fail.append(f"TICKPROF_HTTP: sites {sorted(http)} (calls {sorted(http_calls)}), want {names}")
elif http["service::handle"][1] != sum(http[n][0] for n in names):
    fail.append(f"TICKPROF_HTTP: handle cum {http['service::handle'][1]} is not the sum of the flats")
asites = json.load(open(f"{out}/alloc.json"))["sites"]
aplain = [s for s in asites if re.fullmatch(r"[A-Za-z0-9_:]+", s["name"])]
abytes, aobjs = top(f"{out}/top-bytes.txt", "B"), top(f"{out}/top-allocs.txt", "")
achecked = 0
for s in aplain:
    n, own, tot = s["name"], s["self_alloc"], s["alloc"]
    if tot["bytes"] == 0:
        continue
    achecked += 1
    if n not in abytes:
        fail.append(f"alloc {n}: not in pprof -top -sample_index=alloc_space")
        continue
    if abytes[n] != (own["bytes"], tot["bytes"]):
        fail.append(f"alloc {n}: pprof flat/cum bytes {abytes[n]}, report self {own['bytes']} total {tot['bytes']}")
    if aobjs.get(n, (None,))[0] != own["allocs"]:
        fail.append(f"alloc {n}: pprof flat allocations {aobjs.get(n)}, report self {own['allocs']}")
if achecked == 0:
    fail.append("alloc_json: no site allocated")
if fail:
    print("ci_pprof: FAIL:\n  " + "\n  ".join(fail))
    sys.exit(1)
print(f"ci_pprof: OK: {len(plain)} of {len(sites)} sites checked against go tool pprof "
      f"(flat = self, cum = total, flat calls = calls; recursive rank cum {time[rank[0]['name']][1]} ns "
      f"= total), {len(stacks)} samples, each with its thread label; TICKPROF_HTTP served "
      f"{len(http)} sites to go tool pprof; alloc_space/alloc_objects flat = self, cum = total "
      f"for {achecked} allocating sites of alloc_json")
PY
