#!/usr/bin/env bash
# The long-running check of TICKPROF_HTTP and TICKPROF_PUSH (not in CI):
#
#   bash scripts/soak.sh                 # 10 minutes
#   SOAK_SECONDS=60 bash scripts/soak.sh # shorter
#
# 1. Starts a receiver on a loopback port that answers Pyroscope's
#    `POST /ingest` (200), checks each push's query and multipart body, and
#    decodes its pprof (gzip + protobuf, in Python) to sum the calls of
#    `service::handle`.
# 2. Runs the `service` example (release) for SOAK_SECONDS with
#    TICKPROF_HTTP, TICKPROF_PUSH to the receiver every 5 s and
#    TICKPROF_OUT=final.json, while scraping `/metrics` every second (a
#    404 is counted and reported: the path comes with the latency
#    histograms) and `/debug/pprof/profile?seconds=10` back to back.
# 3. Samples the service's resident memory (VmRSS) every 10 s.
# 4. Checks: every scrape answered, no push refused or failed, the pushed
#    calls of `service::handle` sum to the final report's (nothing lost,
#    nothing twice), and RSS flat after warm-up (the first 20% of the run):
#    growth over the rest at most 2 MiB. Prints the figures and the host.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${SOAK_SECONDS:-600}
out=target/soak
rm -rf "$out"
mkdir -p "$out"
cargo build --quiet --release --example service
http_port=$((20000 + RANDOM % 20000))
push_port=$((http_port + 1))

python3 - "$push_port" "$out" >"$out/receiver.log" 2>&1 <<'PY' &
import gzip, http.server, json, sys, urllib.parse

port, out = int(sys.argv[1]), sys.argv[2]

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]; i += n
        else:
            raise ValueError(f"wire type {w}")
        yield f, w, v

def packed(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out

def calls_of(pb, name):
    strings, types, samples, locs, funcs = [], [], [], {}, {}
    for f, w, v in fields(pb):
        if f == 6:
            strings.append(v.decode())
        elif f == 1:
            types.append(dict((g, x) for g, _, x in fields(v)))
        elif f == 2:
            s = {1: [], 2: []}
            for g, gw, x in fields(v):
                if g in (1, 2):
                    s[g] += packed(x) if gw == 2 else [x]
            samples.append(s)
        elif f == 4:
            d = dict((g, x) for g, _, x in fields(v))
            line = dict((g, x) for g, _, x in fields(d[4]))
            locs[d[1]] = line[1]
        elif f == 5:
            d = dict((g, x) for g, _, x in fields(v))
            funcs[d[1]] = d[2]
    ci = [strings[t[1]] for t in types].index("calls")
    return sum(s[2][ci] for s in samples
               if strings[funcs[locs[s[1][0]]]] == name)

totals = {"pushes": 0, "calls": 0, "bad": 0}

class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        u = urllib.parse.urlparse(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        body = self.rfile.read(int(self.headers["Content-Length"]))
        ok = (u.path == "/ingest" and q.get("format") == "pprof"
              and q.get("name", "").startswith("service{service_name=soak}")
              and int(q["from"]) <= int(q["until"]))
        boundary = self.headers["Content-Type"].split("boundary=")[1].encode()
        parts = {}
        for part in body.split(b"--" + boundary)[1:-1]:
            head, _, data = part.partition(b"\r\n\r\n")
            name = head.split(b'name="')[1].split(b'"')[0].decode()
            parts[name] = data[:-2]
        ok = ok and "profile" in parts and "sample_type_config" in parts
        if ok:
            json.loads(parts["sample_type_config"])
            totals["calls"] += calls_of(gzip.decompress(parts["profile"]), "service::handle")
            totals["pushes"] += 1
        else:
            totals["bad"] += 1
        with open(f"{out}/pushed.json", "w") as f:
            json.dump(totals, f)
        self.send_response(200 if ok else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()

http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
receiver=$!

TICKPROF_HTTP="127.0.0.1:$http_port" TICKPROF_PUSH="http://127.0.0.1:$push_port" \
TICKPROF_PUSH_INTERVAL=5s TICKPROF_PUSH_LABELS=service_name=soak \
TICKPROF_OUT="$out/final.json" \
    target/release/examples/service --seconds "$seconds" >"$out/service.out" 2>"$out/service.err" &
service=$!
trap 'kill "$service" "$receiver" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

python3 - "$http_port" "$service" "$seconds" "$out" <<'PY'
import json, socket, statistics, sys, threading, time

port, pid, seconds, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
stop = threading.Event()
stats = {}
lock = threading.Lock()

def get(path, timeout):
    t = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        status = data.split(b" ", 2)[1].decode() if data else "none"
    except OSError as e:
        status = type(e).__name__
    with lock:
        st = stats.setdefault(path.split("?")[0], {"times": [], "codes": {}})
        st["times"].append(time.monotonic() - t)
        st["codes"][status] = st["codes"].get(status, 0) + 1

def metrics():
    while not stop.is_set() and time.monotonic() - start < seconds - 3:
        get("/metrics", 10)
        stop.wait(1)

def profiles():
    # A new 10 s profile only while it can end before the service does.
    while not stop.is_set() and time.monotonic() - start < seconds - 13:
        get("/debug/pprof/profile?seconds=10", 30)

def rss_kib():
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None

for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)
start = time.monotonic()
threads = [threading.Thread(target=metrics), threading.Thread(target=profiles)]
for t in threads:
    t.daemon = True
    t.start()
samples = []
while time.monotonic() - start < seconds - 3:
    r = rss_kib()
    if r is None:
        break
    samples.append((round(time.monotonic() - start), r))
    time.sleep(max(0, min(10, seconds - 3 - (time.monotonic() - start))))
stop.set()
for t in threads:
    t.join(timeout=30)
json.dump({"rss": samples, "scrapes": stats}, open(f"{out}/scrapes.json", "w"))
PY

wait "$service" || true
sleep 1
kill "$receiver" 2>/dev/null || true
python3 - "$out" "$seconds" <<'PY'
import json, re, statistics, sys
out, seconds = sys.argv[1], int(sys.argv[2])
s = json.load(open(f"{out}/scrapes.json"))
pushed = json.load(open(f"{out}/pushed.json"))
final = json.load(open(f"{out}/final.json"))
handle = next(x for x in final["sites"] if x["name"] == "service::handle")["calls"]
requests = int(re.search(r"(\d+) requests", open(f"{out}/service.out").read()).group(1))
err = open(f"{out}/service.err").read()
host = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
fail = []
print(f"soak: {seconds} s, host {host}, {open('/proc/cpuinfo').read().count('processor')} CPUs")
for path, st in sorted(s["scrapes"].items()):
    t = st["times"]
    print(f"soak: {path}: {len(t)} requests, answers {st['codes']}, median {statistics.median(t) * 1000:.1f} ms, max {max(t) * 1000:.1f} ms")
    if path == "/metrics" and set(st["codes"]) == {"404"}:
        print("soak: /metrics: 404 (not served by this build: the latency histograms add it); counted, not a failure")
    elif set(st["codes"]) - {"200"}:
        fail.append(f"{path} answered {st['codes']}")
print(f"soak: pushes: {pushed['pushes']} accepted, {pushed['bad']} refused by the receiver's checks; "
      f"pushed calls of service::handle {pushed['calls']}, final report {handle}, the program's count {requests}")
line = [l for l in err.splitlines() if "TICKPROF_PUSH=" in l]
print("soak: " + (line[-1] if line else "no TICKPROF_PUSH line on stderr"))
if pushed["bad"] or not line or not re.search(r": \d+ pushed, 0 failed, 0 dropped", line[-1]):
    fail.append("pushes refused or failed")
if not (pushed["calls"] == handle == requests):
    fail.append(f"lost counts: pushed {pushed['calls']}, report {handle}, program {requests}")
rss = s["rss"]
warm = [r for t, r in rss if t >= seconds * 0.2]
print("soak: VmRSS (KiB) every 10 s: " + " ".join(str(r) for _, r in rss))
if len(warm) >= 2:
    growth = max(warm) - warm[0]
    print(f"soak: VmRSS after warm-up ({seconds * 0.2:.0f} s): first {warm[0]} KiB, min {min(warm)}, max {max(warm)}, last {warm[-1]}; growth {growth} KiB")
    if growth > 2048:
        fail.append(f"RSS grew {growth} KiB after warm-up")
if fail:
    print("soak: FAIL: " + "; ".join(fail))
    sys.exit(1)
print("soak: OK")
PY
