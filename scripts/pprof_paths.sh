#!/usr/bin/env bash
# The five paths continuous-profiling agents scrape, read by the real tool,
# `go tool pprof` (Debian's golang-go; installed with apt-get when missing):
#
# 1. Starts the `service` example with TICKPROF_HTTP on a loopback port.
# 2. Fetches /debug/pprof/profile?seconds=2, /debug/pprof/profile (delta),
#    /debug/pprof/allocs, /debug/pprof/block, /debug/pprof/mutex and
#    /debug/pprof/goroutine.
# 3. `go tool pprof -raw` reads each: the profile names the program
#    (`File: service`), has its period type and duration, and its samples
#    hold `service::handle`; the others decode with their sample types and
#    no samples (`allocs`: the service does not install tickprof::Alloc).
#
# Prints one line per path; exits non-zero when a check fails.
set -euo pipefail

source "$(dirname "$0")/pprof_common.sh"
out=target/pprof-paths
fresh_dir "$out"
start_service 30

fetch() { # name path
    python3 - "$port" "$2" "$out/$1.pb.gz" <<'PY'
import socket, sys
port, path, dest = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
head, _, body = data.partition(b"\r\n\r\n")
status = head.split(b" ", 2)[1].decode()
if status != "200":
    sys.exit(f"pprof_paths: FAIL: {path}: HTTP {status}: {body[:200]!r}")
open(dest, "wb").write(body)
PY
}

fetch seconds "/debug/pprof/profile?seconds=2"
fetch delta /debug/pprof/profile
for p in allocs block mutex goroutine; do
    fetch "$p" "/debug/pprof/$p"
done

fail=0
check() { # name, then patterns the -raw output must hold
    local name=$1
    shift
    if ! (cd "$out" && HOME="$PWD" go tool pprof -raw "$name.pb.gz") >"$out/$name.raw" 2>&1; then
        echo "pprof_paths: FAIL: $name: go tool pprof cannot read it:"
        head -5 "$out/$name.raw"
        fail=1
        return
    fi
    for want in "$@"; do
        if ! grep -qF -- "$want" "$out/$name.raw"; then
            echo "pprof_paths: FAIL: $name: no \"$want\" in go tool pprof -raw:"
            head -12 "$out/$name.raw"
            fail=1
            return
        fi
    done
    local samples
    samples=$(awk '/^Samples:/{on=1; next} /^Locations/{on=0} on && /^ *[0-9]/ {n++} END {print n+0}' "$out/$name.raw")
    echo "pprof_paths: $name: read by go tool pprof ($(go version | awk '{print $3}')): $(grep -m1 '^PeriodType' "$out/$name.raw"), $samples samples"
}

# A profile names the program, and holds the service's sites.
check seconds "PeriodType: calls count" "Period: 1" "Duration: 2" "calls/count time/nanoseconds" "service::handle" "service::respond"
check delta "PeriodType: calls count" "calls/count time/nanoseconds" "service::handle"
(cd "$out" && HOME="$PWD" go tool pprof -top -sample_index=calls seconds.pb.gz) >"$out/seconds.top" 2>&1
grep -q "^File: service$" "$out/seconds.top" ||
    { echo "pprof_paths: FAIL: the profile does not name the program:"; head -3 "$out/seconds.top"; fail=1; }
check allocs "alloc_objects/count alloc_space/bytes" "PeriodType: alloc_space bytes"
check block "contentions/count delay/nanoseconds"
check mutex "contentions/count delay/nanoseconds"
check goroutine "goroutine/count"
exit "$fail"
