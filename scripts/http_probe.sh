#!/usr/bin/env bash
# A load probe of the TICKPROF_HTTP server: no client can stall it.
#
#   scripts/http_probe.sh            # release build of the service example
#   HTTP_PROBE_BUILD=debug scripts/http_probe.sh
#   SERVICE_BUILT=1 scripts/http_probe.sh   # the example already built
#
# 1. Starts the `service` example with TICKPROF_HTTP=127.0.0.1:PORT (traffic
#    to 127.0.0.1 only).
# 2. Baseline: normal requests (a delta scrape of /debug/pprof/profile,
#    read to its end), one after another, timed.
# 3. Attack, ~15 s: 300 idle connections and 60 clients sending a byte per
#    second (each reopened when the server cuts it off at the head
#    deadline), garbage senders (random bytes, binary and malformed
#    request lines), and 1 MB request heads; meanwhile normal requests
#    again, timed.
# 4. Prints the median and maximum time of a normal request without and
#    under attack, and the attackers' status codes.
# 5. In flight: while a `/debug/pprof/profile?seconds=10` request waits,
#    the other paths (`/metrics`, `/debug/pprof/allocs`, `goroutine`, a
#    delta profile) are requested every 0.25 s and timed: each must be
#    answered before the slow one (the target is under 100 ms).
#
# Fails (exit 1) when a normal request under attack is not answered with
# 200 within 2 s. Bounded: the service runs at most 60 s.
set -euo pipefail

cd "$(dirname "$0")/.."
build=${HTTP_PROBE_BUILD:-release}
# SERVICE_BUILT=1: the caller built it (CI runs this script in the
# background, where a build would wait on cargo's lock beside a step's).
if [ -n "${SERVICE_BUILT:-}" ]; then
    :
elif [ "$build" = release ]; then
    cargo build --quiet --release --example service
else
    cargo build --quiet --example service
fi
port=$((20000 + RANDOM % 20000))
TICKPROF_STDERR=0 TICKPROF_HTTP="127.0.0.1:$port" \
    "target/$build/examples/service" --seconds 60 >/dev/null &
service=$!
trap 'kill "$service" 2>/dev/null || true; wait "$service" 2>/dev/null || true' EXIT

python3 - "$port" <<'PY'
import os, random, socket, statistics, sys, threading, time

PORT = int(sys.argv[1])
ADDR = ("127.0.0.1", PORT)
PATH = "/debug/pprof/profile"
LIMIT = 2.0
stop = threading.Event()
codes = {}
lock = threading.Lock()

def count(kind, status):
    with lock:
        codes.setdefault(kind, {}).setdefault(status, 0)
        codes[kind][status] += 1

def status_of(data):
    try:
        return data.split(b" ", 2)[1].decode()
    except Exception:
        return "none" if not data else "?"

def read_all(s, timeout):
    s.settimeout(timeout)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk

def normal(timeout=10.0):
    """A delta scrape: (seconds, status)."""
    t = time.monotonic()
    try:
        with socket.create_connection(ADDR, timeout=timeout) as s:
            s.sendall(f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            data = read_all(s, timeout)
        status = status_of(data)
    except OSError as e:
        status = type(e).__name__
    return time.monotonic() - t, status

deadline = time.monotonic() + 15
while True:
    try:
        with socket.create_connection(ADDR, timeout=1) as s:
            s.sendall(f"HEAD {PATH} HTTP/1.1\r\n\r\n".encode())
            if status_of(read_all(s, 5)) == "200":
                break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("http_probe: FAIL: the service did not start serving")
    time.sleep(0.1)

def measure(n):
    out = []
    for _ in range(n):
        out.append(normal())
        time.sleep(0.2)
    return out

baseline = measure(15)

def get(path, timeout=20.0):
    """GET path: (seconds, status)."""
    t = time.monotonic()
    try:
        with socket.create_connection(ADDR, timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            status = status_of(read_all(s, timeout))
    except OSError as e:
        status = type(e).__name__
    return time.monotonic() - t, status

slow_result = []
slow = threading.Thread(target=lambda: slow_result.append(get(PATH + "?seconds=10")))
slow.start()
time.sleep(0.5)
in_flight = {}
others = ["/metrics", "/debug/pprof/allocs", "/debug/pprof/goroutine", PATH]
while slow.is_alive() and len(in_flight.get(PATH, [])) < 20:
    for p in others:
        in_flight.setdefault(p, []).append(get(p) + (slow.is_alive(),))
    time.sleep(0.25)
slow.join()

def idle_holder(n):
    socks = []
    while not stop.is_set():
        socks = [s for s in socks if s.fileno() != -1]
        alive = []
        for s in socks:
            try:
                s.setblocking(False)
                data = s.recv(4096)
                count("idle", status_of(data))
                s.close()
            except BlockingIOError:
                alive.append(s)
            except OSError:
                s.close()
        socks = alive
        while len(socks) < n and not stop.is_set():
            try:
                socks.append(socket.create_connection(ADDR, timeout=2))
            except OSError:
                count("idle", "connect-failed")
                break
        time.sleep(0.2)
    for s in socks:
        s.close()

def slow_sender(n):
    req = f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: {'s' * 40}\r\n\r\n".encode()
    conns = []
    while not stop.is_set():
        while len(conns) < n:
            try:
                conns.append([socket.create_connection(ADDR, timeout=2), 0])
            except OSError:
                count("slow", "connect-failed")
                break
        keep = []
        for c in conns:
            s, i = c
            try:
                s.setblocking(False)
                try:
                    data = s.recv(4096)
                    count("slow", status_of(data))
                    s.close()
                    continue
                except BlockingIOError:
                    pass
                s.send(req[i % len(req):i % len(req) + 1])
                c[1] += 1
                keep.append(c)
            except OSError:
                s.close()
        conns = keep
        time.sleep(1)
    for s, _ in conns:
        s.close()

def garbage():
    rnd = random.Random(25)
    samples = [
        lambda: bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 4096))),
        lambda: b"GET\r\n\r\n",
        lambda: b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64),
        lambda: f"GET {PATH}?seconds=-1 HTTP/1.1\r\n\r\n".encode(),
        lambda: f"GET {PATH}?seconds=1e1 HTTP/1.1\r\n\r\n".encode(),
        lambda: b"GET /../../etc/passwd HTTP/1.1\r\n\r\n",
        lambda: b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
    ]
    while not stop.is_set():
        try:
            with socket.create_connection(ADDR, timeout=5) as s:
                s.sendall(rnd.choice(samples)())
                count("garbage", status_of(read_all(s, 10)))
        except OSError as e:
            count("garbage", type(e).__name__)

def big_heads():
    head = f"GET {PATH} HTTP/1.1\r\nX-Big: ".encode() + b"a" * (1 << 20) + b"\r\n\r\n"
    while not stop.is_set():
        try:
            with socket.create_connection(ADDR, timeout=10) as s:
                s.sendall(head)
                count("1MB head", status_of(read_all(s, 10)))
        except OSError as e:
            count("1MB head", type(e).__name__)
        time.sleep(0.2)

attackers = [threading.Thread(target=idle_holder, args=(150,)) for _ in range(2)]
attackers += [threading.Thread(target=slow_sender, args=(30,)) for _ in range(2)]
attackers += [threading.Thread(target=garbage) for _ in range(3)]
attackers += [threading.Thread(target=big_heads)]
for t in attackers:
    t.daemon = True
    t.start()
time.sleep(2)
attacked = measure(40)
stop.set()
for t in attackers:
    t.join(timeout=15)

def summary(runs):
    times = [t for t, _ in runs]
    return f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms over {len(runs)}"

bad = [(t, s) for t, s in attacked if s != "200" or t > LIMIT]
late = []
for p, runs in in_flight.items():
    times = sorted(t for t, _, _ in runs)
    statuses = sorted({s for _, s, _ in runs})
    print(f"http_probe: {p} while a ?seconds=10 profile is in flight: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {times[-1] * 1000:.1f} ms over {len(runs)} (status {', '.join(statuses)}; target < 100 ms)")
    late += [(p, t, s) for t, s, alive in runs if t > LIMIT or not alive or s not in ("200", "404")]
print(f"http_probe: the ?seconds=10 profile itself: {slow_result[0][0]:.2f} s, status {slow_result[0][1]}")
if late:
    print(f"http_probe: FAIL: requests held by the ?seconds=10 profile: {late[:5]}")
    sys.exit(1)
print(f"http_probe: normal request without attack: {summary(baseline)}")
print(f"http_probe: normal request under attack:   {summary(attacked)}")
print("http_probe: attackers' answers: " + "; ".join(
    f"{k}: " + ", ".join(f"{s}×{n}" for s, n in sorted(v.items())) for k, v in sorted(codes.items())))
if bad or any(s != "200" for _, s in baseline):
    print(f"http_probe: FAIL: {len(bad)} normal requests under attack not answered 200 within {LIMIT} s: {bad[:5]}")
    sys.exit(1)
print(f"http_probe: OK: every normal request answered 200 within {LIMIT} s under attack")
PY
