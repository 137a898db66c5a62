#!/usr/bin/env python3
"""The comparison of scripts/perf_compare.sh: perf's samples of the unmarked
build against tickprof's JSON reports of the marked build, as self-time
shares per marked function (the method is in the script's header and in
docs/accuracy.md, "Against an independent profiler").

Reads OUT/perf.I.txt.gz (`perf script --no-inline --no-demangle -F
comm,ip,sym,symoff,dso`) and OUT/tp.MODE.I.json for I < RUNS, MODE in
adaptive and all. Standard library only."""

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys

FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)$")
SYMOFF = re.compile(r"^(.*)\+0x([0-9a-f]+)$")
HASH = re.compile(r"::h[0-9a-f]{16}$")


def read_samples(path, binary):
    """Each sample's stack, innermost first: frames of `binary` as
    (mangled symbol, offset, is-first-frame), other frames as None."""
    samples, stack, real = [], None, {}
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            if not line[0].isspace():
                if stack is not None:
                    samples.append(stack)
                stack = []
                continue
            m = FRAME.match(line.rstrip("\n"))
            if stack is None or not m:
                continue
            sym, dso = m.group(2), m.group(3)
            if dso not in real:
                real[dso] = os.path.realpath(dso) == binary
            so = SYMOFF.match(sym) if real[dso] else None
            if so:
                stack.append((so.group(1), int(so.group(2), 16), not stack))
            else:
                stack.append(None)
    if stack is not None:
        samples.append(stack)
    return samples


def symbol_table(binary):
    """Mangled name -> address, from nm."""
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                         check=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3:
            table.setdefault(parts[2], int(parts[0], 16))
    return table


def resolve(binary, addrs):
    """Address -> inline chain [(function, file, line)], innermost first,
    with one addr2line process for all addresses."""
    addrs = sorted(addrs)
    if not addrs:
        return {}
    out = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", binary],
                         input="".join("0x%x\n" % a for a in addrs), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    chains, cur, i = {}, None, 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            cur = int(out[i], 16)
            chains[cur] = []
            i += 1
            continue
        if cur is not None and i + 1 < len(out):
            file, _, ln = out[i + 1].rpartition(":")
            ln = re.match(r"\d+", ln)
            chains[cur].append((out[i], file, int(ln.group()) if ln else 0))
        i += 2
    return chains


def bare(path):
    """`path` without its hash, generic arguments and impl headers, nested
    or not (`a::B<T>::f` -> `a::B::f`), as the runtime names inlined rows
    (`bare` in runtime/src/inlined.rs)."""
    out, depth = [], 0
    for ch in HASH.sub("", path):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def load_perf(out, runs, binary):
    """The samples of OUT/perf.I.txt.gz for I < RUNS (per run), the
    binary's symbol table, and every sampled address's inline chain."""
    stacks = [read_samples(os.path.join(out, "perf.%d.txt.gz" % i), binary) for i in range(runs)]
    table = symbol_table(binary)
    addrs = set()
    for run in stacks:
        for st in run:
            for fr in st:
                if fr is not None and fr[0] in table:
                    addrs.add(table[fr[0]] + fr[1] - (0 if fr[2] else 1))
    return stacks, table, resolve(binary, addrs)


def last_segment(path):
    """The function's own name: `a::B<T>::f::{{closure}}` -> `f`."""
    segs = [s for s in bare(path).split("::") if s and not s.startswith("{{")]
    return segs[-1] if segs else ""


def src_rel(file):
    """A source path from `src/` on (`/x/crate/src/a.rs` -> `src/a.rs`)."""
    i = file.rfind("/src/")
    if file.startswith("src/"):
        return file
    return file[i + 1:] if i >= 0 else None


class Sites:
    """tickprof's sites (from a JSON report), found by source location."""

    def __init__(self, report):
        self.by_file, self.by_name = {}, {}
        for s in report["sites"]:
            rel = src_rel(s.get("file", ""))
            if rel is None or s.get("kind", "function") not in ("function", "asyncfunction"):
                continue
            fn = last_segment(s.get("function") or s["name"])
            self.by_file.setdefault(rel, []).append((s["line"], fn, s["name"]))
            self.by_name.setdefault(fn, []).append(s["name"])
        for v in self.by_file.values():
            v.sort()

    def find(self, fn, file, line):
        """The site a frame of `fn` at file:line belongs to, or None: the
        last site at or above the line in that file with the same name
        (the only one of that name there when the line is unknown)."""
        rel = src_rel(file)
        name = last_segment(fn)
        same = [c for c in self.by_file.get(rel, []) if c[1] == name] if rel else []
        if line > 0:
            above = [c for c in same if c[0] <= line]
            if above:
                return above[-1][2]
        if len(same) == 1:
            return same[0][2]
        # No line, or code inlined from another file (line 0 there): the
        # only marked fn of that name, if the frame's path names its
        # module and type.
        plain = HASH.sub("", fn)
        cands = [n for n in self.by_name.get(name, [])
                 if all(seg in plain for seg in n.split("::")[:-1] if seg and "<" not in seg)]
        return cands[0] if len(cands) == 1 else None


def sampler_profile(stacks, chains, table, sites, counted):
    """Samples per site: each to its innermost marked frame, and past
    counted sites to the nearest timed one. Returns (counts, all, mapped,
    samples with no frame of the binary)."""
    counts, mapped, outside = {}, 0, 0
    frame_cache = {}
    for stack in stacks:
        site = None
        for fr in stack:
            if fr is None:
                continue
            key = fr
            names = frame_cache.get(key)
            if names is None:
                sym, off, first = fr
                base = table.get(sym)
                names = []
                if base is not None:
                    addr = base + off - (0 if first else 1)
                    for fn, file, line in chains.get(addr, []):
                        s = sites.find(fn, file, line)
                        if s is not None:
                            names.append(s)
                frame_cache[key] = names
            for s in names:
                if s not in counted:
                    site = s
                    break
            if site is not None:
                break
        if site is not None:
            counts[site] = counts.get(site, 0) + 1
            mapped += 1
        elif all(fr is None for fr in stack):
            outside += 1
    return counts, len(stacks), mapped, outside


def normalise(d):
    total = sum(d.values())
    return {k: v / total for k, v in d.items()} if total > 0 else {}


def median_profile(profiles):
    keys = set().union(*profiles) if profiles else set()
    return normalise({k: statistics.median([p.get(k, 0.0) for p in profiles]) for k in keys})


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    """Spearman's rho over the functions both profiles know: a sample in
    `a`, a timed site that ran in `b` (a self time of 0 counts: a parent
    compensated to 0 self is a disagreement, not a missing function)."""
    shared = [k for k in a if a[k] > 0 and k in b]
    if len(shared) < 3:
        return float("nan"), len(shared)
    x, y = ranks([a[k] for k in shared]), ranks([b[k] for k in shared])
    mx, my = statistics.mean(x), statistics.mean(y)
    sxy = sum((p - mx) * (q - my) for p, q in zip(x, y))
    sx = sum((p - mx) ** 2 for p in x) ** 0.5
    sy = sum((q - my) ** 2 for q in y) ** 0.5
    return (sxy / (sx * sy) if sx > 0 and sy > 0 else float("nan")), len(shared)


def top10_delta(ref, other):
    top = sorted(ref, key=lambda k: -ref[k])[:10]
    return 100 * sum(abs(ref[k] - other.get(k, 0.0)) for k in top)


def overlap(a, b):
    return 100 * sum(min(a[k], b.get(k, 0.0)) for k in a)


def stability(profiles):
    """Each profile against the median of the others: (top-10 delta,
    100 - overlap), in points."""
    out = []
    for i, p in enumerate(profiles):
        rest = median_profile(profiles[:i] + profiles[i + 1:])
        out.append((top10_delta(rest, p), 100 - overlap(rest, p)))
    return out


def fmt_range(v, f="%.1f"):
    v = sorted(v)
    return (f % statistics.median(v)) + " (" + (f % v[0]) + "-" + (f % v[-1]) + ")"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--perf-runs", type=int, default=None,
                    help="perf.N.txt.gz files to read (default: --runs)")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--counted", choices=("own", "caller"), default="own",
                    help="own: every function keeps its samples, counted or not (the "
                         "comparison of record); caller: a counted site's samples go to its "
                         "nearest timed caller (what tickprof reported before its sampler)")
    a = ap.parse_args()
    binary = os.path.realpath(a.binary)

    reports = {}
    for mode in ("adaptive", "all"):
        reports[mode] = []
        for i in range(a.runs):
            p = os.path.join(a.out, "tp.%s.%d.json" % (mode, i))
            try:
                with open(p) as f:
                    reports[mode].append(json.load(f))
            except (OSError, ValueError) as e:
                print("skipped %s: %s" % (p, e), file=sys.stderr)
    first = (reports["adaptive"] or reports["all"] or [None])[0]
    if first is None:
        print("no tickprof report to compare with", file=sys.stderr)
        return 1
    sites = Sites(first)

    stacks, table, chains = load_perf(a.out, a.perf_runs or a.runs, binary)

    results = {}
    for mode, reps in reports.items():
        if not reps:
            continue
        # A site counted in most runs of the mode is counted (the decision
        # is stable; a missing field means timed).
        votes = {}
        for r in reps:
            for s in r["sites"]:
                if s.get("timing", "timed") == "counted":
                    votes[s["name"]] = votes.get(s["name"], 0) + 1
        counted = {k for k, v in votes.items() if 2 * v > len(reps)}
        # Sites whose samples go to their nearest timed caller (on both
        # sides): none when every function keeps its own.
        moved = counted if a.counted == "caller" else set()
        sampled = [sampler_profile(run, chains, table, sites, moved) for run in stacks]
        samp_runs = [normalise(x[0]) for x in sampled]
        pooled = {}
        for c, *_ in sampled:
            for k, v in c.items():
                pooled[k] = pooled.get(k, 0) + v
        samp = normalise(pooled)
        # The workload's own main (marked so that whole_run.sh has the
        # program's total) is left out: the sampler's side leaves out the
        # workload's own code too.
        tp_runs = [normalise({s["name"]: s["self_ns"] for s in r["sites"]
                              if s["name"] not in moved and s["calls"] > 0
                              and "examples/" not in s.get("file", "")})
                   for r in reps]
        tp_med = median_profile(tp_runs)
        per_run = [(spearman(samp, t)[0], top10_delta(samp, t), overlap(samp, t)) for t in tp_runs]
        results[mode] = dict(
            counted=counted, samp=samp, tp=tp_med, per_run=per_run,
            rho=spearman(samp, tp_med), top10=top10_delta(samp, tp_med),
            overlap=overlap(samp, tp_med), tp_stab=stability(tp_runs),
            samp_stab=stability(samp_runs),
            samples=sum(x[1] for x in sampled), mapped=sum(x[2] for x in sampled),
            outside=sum(x[3] for x in sampled),
            calls={s["name"]: s["calls"] for s in reps[0]["sites"]},
            timed={s["name"]: s.get("timed_calls", s["calls"]) for s in reps[0]["sites"]},
            nsites=len(reps[0]["sites"]))

    if not any("timing" in s for reps in reports.values() for r in reps for s in r["sites"]):
        print("\n(no site of these reports has a `timing` field: this build times every call, "
              "so both modes measure the same thing)")
    for mode, r in results.items():
        rho, n = r["rho"]
        print()
        print("== TICKPROF_TIME=%s: %d of %d sites counted (%s)"
              % (mode, len(r["counted"]), r["nsites"],
                 "each keeps its samples" if a.counted == "own"
                 else "their samples charged to the nearest timed caller"))
        n_all = max(1, r["samples"])
        print("sampler: %d samples: %.1f%% in a marked call, %.1f%% in the workload's own code "
              "outside any, %.1f%% with no frame of the binary (exec, exit, page tables)"
              % (r["samples"], 100 * r["mapped"] / n_all,
                 100 * (r["samples"] - r["mapped"] - r["outside"]) / n_all,
                 100 * r["outside"] / n_all))
        print("against the sampler (pooled runs), tickprof's median profile: Spearman rho %.2f "
              "over %d shared functions; top-10 difference %.1f points; overlap %.1f%%"
              % (rho, n, r["top10"], r["overlap"]))
        print("each tickprof run against the sampler: rho %s; top-10 %s points; overlap %s%%"
              % (fmt_range([x[0] for x in r["per_run"]], "%.2f"),
                 fmt_range([x[1] for x in r["per_run"]]), fmt_range([x[2] for x in r["per_run"]])))
        for who, st in (("tickprof", r["tp_stab"]), ("sampler", r["samp_stab"])):
            print("%s, each run against the median of the others: top-10 %s points; "
                  "100 - overlap %s points" % (who, fmt_range([x[0] for x in st]),
                                               fmt_range([x[1] for x in st])))
        print("%-58s %9s %9s %12s %12s" % ("function (sampler's top %d)" % a.top, "sampler%",
                                           "tickprof%", "calls", "timed calls"))
        for k in sorted(r["samp"], key=lambda k: -r["samp"][k])[:a.top]:
            name = k if len(k) <= 58 else "..." + k[-55:]
            print("%-58s %9.1f %9.1f %12d %12d" % (name, 100 * r["samp"][k],
                                                  100 * r["tp"].get(k, 0.0), r["calls"].get(k, 0),
                                                  r["timed"].get(k, 0)))
        missing = sorted((k for k in r["tp"] if k not in r["samp"]), key=lambda k: -r["tp"][k])
        if missing:
            print("tickprof's largest shares the sampler did not see: "
                  + ", ".join("%s %.1f%%" % (k.split("::", 1)[-1], 100 * r["tp"][k])
                              for k in missing[:5]))
        worst_stab = max(x[0] for x in r["tp_stab"])
        ok = [("rho >= 0.8", rho >= 0.8), ("top-10 <= 20 points", r["top10"] <= 20),
              ("overlap >= 85%", r["overlap"] >= 85),
              ("every run within 5 points of the median of the others", worst_stab <= 5)]
        print("targets (%s): %s" % (mode, "; ".join("%s %s" % (t, "met" if m else "MISSED")
                                                   for t, m in ok)))
    print("\nThe two differ by design where tickprof times wall time per call (a preempted or "
          "page-faulting call keeps its wait) and perf samples CPU time; and by inlining: the "
          "unmarked build inlines what marks keep apart, and its inline frames come from debug "
          "info (a frame with no line is matched by name only).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
