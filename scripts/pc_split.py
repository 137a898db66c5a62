#!/usr/bin/env python3
"""Where a run's CPU time went, by program counter: tickprof's own code,
the program's, the kernel's and the shared libraries', from `perf record`
samples (see scripts/pc_split.sh, which makes them).

Usage: pc_split.py FREQ TICKPROF_ROOT LABEL=BINARY:DATA[,DATA...] ...

Each sample of BINARY is expanded into its inline frames (`addr2line -i`)
and goes to the innermost frame outside std and the cargo registry: to
tickprof when that frame's file is under TICKPROF_ROOT, else to the
program. Samples of tickprof's sampler thread are counted apart. Printed
per label: the median over its data files of each part, in ms (samples
over FREQ).
"""
import collections
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_compare import resolve  # noqa: E402  (inline chains, addr2line -i)

SAMPLER_COMM = "tickprof sample"  # the thread's name, cut to 15 bytes


def exec_segment(binary):
    """The executable LOAD segment's file offset and address."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[-2]:
            return int(f[1], 16), int(f[2], 16)
    raise SystemExit(f"{binary}: no executable segment")


def load_base(binary, data):
    """What to subtract from a sample's address to get the binary's."""
    out = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events"],
                         capture_output=True, text=True).stdout
    fo, va = exec_segment(binary)
    for line in out.splitlines():
        if "MMAP" in line and "r-xp " + binary in line:
            m = re.search(r"\[0x([0-9a-f]+)\(0x[0-9a-f]+\) @ 0x([0-9a-f]+)", line)
            if m:
                return int(m.group(1), 16) - int(m.group(2), 16) - (va - fo)
    raise SystemExit(f"{data}: {binary} was not mapped")


def split(binary, data, root):
    base = load_base(binary, data)
    raw = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,dso"],
                         capture_output=True, text=True).stdout
    parts = collections.Counter()
    here = collections.Counter()
    for line in raw.splitlines():
        m = re.match(r"\s*(.*?)\s+([0-9a-f]+)\s+\((.*)\)\s*$", line)
        if not m:
            continue
        comm, ip, dso = m.groups()
        if comm.startswith(SAMPLER_COMM):
            parts["sampler thread"] += 1
        elif dso == binary:
            here[int(ip, 16) - base] += 1
        elif "kernel" in dso:
            parts["kernel"] += 1
        else:
            parts["libraries"] += 1
    chains = resolve(binary, here)
    for addr, n in here.items():
        chain = chains.get(addr, [])
        inner = next((file for _, file, _ in chain
                      if "/rustc/" not in file and "/registry/src/" not in file), "")
        parts["tickprof" if inner.startswith(root) else "program"] += n
    return parts


def main():
    freq = float(sys.argv[1])
    root = sys.argv[2].rstrip("/") + "/"
    order = ["program", "tickprof", "kernel", "libraries", "sampler thread"]
    print("%-10s %9s" % ("ms", "all") + "".join(" %14s" % k for k in order))
    for arg in sys.argv[3:]:
        label, rest = arg.split("=", 1)
        binary, datas = rest.split(":", 1)
        runs = [split(binary, d, root) for d in datas.split(",")]
        med = {k: statistics.median(r[k] for r in runs) / freq * 1e3 for k in order}
        total = statistics.median(sum(r.values()) for r in runs) / freq * 1e3
        print("%-10s %9.1f" % (label, total) + "".join(" %14.1f" % med[k] for k in order))


if __name__ == "__main__":
    main()
