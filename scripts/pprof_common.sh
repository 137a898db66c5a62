# Sourced by scripts/ci_pprof.sh and scripts/pprof_paths.sh, the two checks
# read by `go tool pprof`: the repository root as the working directory,
# `go` installed (Debian's golang-go, with apt-get when missing), a fresh
# output directory, and the `service` example serving TICKPROF_HTTP.

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v go >/dev/null; then
    apt-get install -y -qq golang-go >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && apt-get install -y -qq golang-go >/dev/null; }
fi

# fresh_dir DIR: DIR, emptied.
fresh_dir() {
    rm -rf "$1"
    mkdir -p "$1"
}

# start_service SECONDS: builds the `service` example (not with
# SERVICE_BUILT=1: the caller built it) and runs it for
# SECONDS with TICKPROF_HTTP on a random loopback port ($port; its process
# id in $service, stopped at exit or by stop_service), then waits (10 s at
# most) until the port takes connections.
start_service() {
    [ -n "${SERVICE_BUILT:-}" ] || cargo build --quiet --release --example service
    port=$((20000 + RANDOM % 20000))
    TICKPROF_STDERR=0 TICKPROF_HTTP="127.0.0.1:$port" target/release/examples/service --seconds "$1" >/dev/null &
    service=$!
    trap stop_service EXIT
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
}

# stop_service: ends the service started by start_service.
stop_service() {
    kill "$service" 2>/dev/null || true
    wait "$service" 2>/dev/null || true
}
