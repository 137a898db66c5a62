#!/usr/bin/env python3
"""The figures of scripts/after_inlining.sh: a crate marked by `cargo
tickprof` with its default options (marks after inlining, rows from PC
samples) against its unmarked program, timed and sampled by perf.

Reads OUT/times.tsv (paired whole-process wall and CPU times), OUT/tp.I.json (the
marked default runs' reports), OUT/perf.I.txt.gz (`perf script --no-inline
--no-demangle -F comm,ip,sym,symoff,dso` of the unmarked build with debug
info) and OUT/build-*.log.times (`wall user sys`).

Report rows: the marked sites (by source location, as
scripts/perf_compare.py finds them: the frame's file under the crate's
copy, the last marked fn of its name at or above its line) and the
`NAME (inlined)` and `NAME (unmarked)` rows, by NAME: a frame's demangled
name as the runtime names rows (`shown` in runtime/src/inlined.rs:
generic arguments dropped, a qualified path kept, closures given to their
function). A function's inlined and unmarked rows are one
row here (NAME (row)), on both sides.

- Rows level: each perf sample to the innermost frame, inline frames
  included (addr2line -i), that is a report row; tickprof's share of a row
  is its self time over the sum of the rows' self times.
- Symbol level: the rows folded into their holder (tickprof: each row's
  node's self time added to its parent's; perf: each sample to its
  innermost marked frame, inline frames included).
  Both leave out the workload's own `main` (a marked site, the bin's) and
  perf's samples under no report row; the figures with `main` follow.
- Resolution: perf's samples whose innermost address (the leaf) has a
  function of the crate's library (a file under its src/, not src/bin/)
  in its inline chain; of those, the share whose symbol (the chain's
  outermost function, the code of its own the build kept) is a marked
  site, and the share whose innermost function of the program (the
  crate's or a dependency's, not the standard library's: the runtime's
  rule for a row) is a report row; and, beside it, the innermost
  function of the crate itself.
- Diagnostics: perf's samples in user mode only (the PC sampler counts no
  kernel time), rows taken from the leaf address only (the PC sampler
  has no call stack), each side's run-to-run agreement, and the samples
  the rows rest on.
The mapping of both sides to rows is in scripts/report_rows.py.
Standard library only."""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_compare import (load_perf, normalise, overlap, spearman, stability,  # noqa: E402
                          top10_delta)
from report_rows import Rows, kernel_leaf, perf_profiles, tp_profiles  # noqa: E402


def rng(v, f="%.2f"):
    v = sorted(v)
    if not v:
        return "-"
    return (f % statistics.median(v)) + " (" + (f % v[0]) + "-" + (f % v[-1]) + ")"


def median_of(profiles):
    keys = set().union(*profiles)
    return normalise({k: statistics.median([p.get(k, 0.0) for p in profiles]) for k in keys})


def compare(samp, tp):
    rho, n = spearman(samp, tp)
    return dict(overlap=overlap(samp, tp), rho=rho, n=n, top10=top10_delta(samp, tp))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--crate", required=True)
    ap.add_argument("--perf-runs", type=int, default=3)
    ap.add_argument("--freq", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    out, binary = a.out, os.path.realpath(a.binary)
    ok = []

    # --- 2. paired runs
    times, cpu = [], []
    with open(os.path.join(out, "times.tsv")) as f:
        next(f)
        for line in f:
            v = [float(x) for x in line.split()[1:]]
            times.append(tuple(v[:3]))
            if len(v) == 6:
                cpu.append(tuple(v[3:]))
    print("\n-- times: %d interleaved triples (marked, TICKPROF=off, unmarked), whole-process wall" % len(times))
    print("unmarked %s s; marked %s s; TICKPROF=off %s s" % (
        rng([t[2] for t in times], "%.3f"), rng([t[0] for t in times], "%.3f"),
        rng([t[1] for t in times], "%.3f")))
    r_m = [t[0] / t[2] for t in times]
    r_o = [t[1] / t[2] for t in times]
    print("marked / unmarked %s (target <= 1.3); TICKPROF=off / unmarked %s (target <= 1.05)"
          % (rng(r_m), rng(r_o)))
    print("(to the report, the marked runs' own wall_ns: marked / unmarked %s)" % rng(
        [json.load(open(os.path.join(out, "tp.%d.json" % i)))["run"]["wall_ns"] / 1e9 / t[2]
         for i, t in enumerate(times)]))
    if cpu:
        print("CPU time (user + system): unmarked %s s; marked / unmarked %s; TICKPROF=off / "
              "unmarked %s" % (rng([c[2] for c in cpu], "%.3f"), rng([c[0] / c[2] for c in cpu]),
                               rng([c[1] / c[2] for c in cpu])))
    ok += [("marked <= 1.3x", statistics.median(r_m) <= 1.3),
           ("off <= 1.05x", statistics.median(r_o) <= 1.05)]

    reports = []
    for i in range(len(times)):
        with open(os.path.join(out, "tp.%d.json" % i)) as f:
            reports.append(json.load(f))

    # --- 5. whole run
    tops, shares, meas, meas_p, walls = [], [], [], [], []
    for (m, _, u), r in zip(times, reports):
        run = r["run"]
        top = sum(n["total_ns"] for n in r["tree"] if n.get("parent") == 0 and n is not r["tree"][0])
        tops.append(top / 1e9 / u)
        shares.append(100 * run["overhead_share"])
        w = run["wall_ns"] / 1e9
        walls.append(w / m)
        meas.append(100 * (1 - u / w))
        meas_p.append(100 * (1 - u / m))
    print("\n-- whole run")
    print("top-level total / unmarked wall %s (target 0.90-1.10)" % rng(tops))
    print("instrumentation share: header %s, measured 1 - unmarked/marked %s (marked to the report; "
          "whole process %s); header - measured %s points (target within 5)" % (
              rng(shares, "%.1f%%"), rng(meas, "%.1f%%"), rng(meas_p, "%.1f%%"),
              rng([s - x for s, x in zip(shares, meas)], "%+.1f")))
    print("report's wall / whole process %s" % rng(walls))
    calls = {}
    for r in reports:
        for s in r["sites"]:
            if s.get("kind") != "inlined":
                calls.setdefault(s["name"], set()).add(s["calls"])
    varying = sorted(k for k, v in calls.items() if len(v) > 1)
    print("call counts: %d marked sites, %d ran; %d with a count that differs between runs%s" % (
        len(calls), sum(1 for v in calls.values() if max(v) > 0), len(varying),
        (": " + ", ".join(varying[:5])) if varying else ""))
    ok += [("totals within 10%", abs(statistics.median(tops) - 1) <= 0.10),
           ("header share within 5 points",
            abs(statistics.median([s - x for s, x in zip(shares, meas)])) <= 5)]

    # --- 3, 4. perf
    rows = Rows(reports, a.src)
    stacks, table, chains = load_perf(out, a.perf_runs, binary)
    pp = perf_profiles(stacks, chains, table, rows)
    tpp = [tp_profiles(r) for r in reports]
    nsamp = sum(x[3] for x in pp)
    print("\n-- perf: %d runs of %d workload processes, cpu-clock %d Hz, dwarf call graphs; "
          "%d samples, %.1f%% under no report row (left out)" % (
              a.perf_runs, a.repeat, a.freq, nsamp, 100 * sum(x[4] for x in pp) / max(1, nsamp)))
    nrows = len(rows.rows)
    print("report: %d marked sites (%d ran), %d inlined/unmarked rows (union of %d runs)" % (
        len(rows.marked), sum(1 for k, v in calls.items() if max(v) > 0), nrows, len(reports)))

    def pooled(idx, drop):
        c = {}
        for x in pp:
            for k, v in x[idx].items():
                if k not in drop:
                    c[k] = c.get(k, 0) + v
        return normalise(c)

    figs = {}
    for label, drop in (("without main", rows.main), ("with main", set())):
        samp_r, samp_s = pooled(0, drop), pooled(1, drop)
        tp_r = median_of([normalise({k: v for k, v in t[0].items() if k not in drop}) for t in tpp])
        tp_s = median_of([normalise({k: v for k, v in t[1].items() if k not in drop}) for t in tpp])
        tp_f = median_of([normalise({k: v for k, v in t[2].items() if k not in drop}) for t in tpp])
        figs[label] = (compare(samp_r, tp_r), compare(samp_s, tp_s), samp_r, tp_r,
                       compare(samp_r, tp_f))
        cr, cs, cf = figs[label][0], figs[label][1], figs[label][4]
        print("%s: rows level overlap %.1f%%, rho %.2f over %d, top-10 sum|d| %.1f points; "
              "symbol level overlap %.1f%%, rho %.2f, top-10 %.1f points; rows level with the "
              "rows that are a marked function's own code folded: overlap %.1f%%, rho %.2f, "
              "top-10 %.1f points" % (
                  label, cr["overlap"], cr["rho"], cr["n"], cr["top10"],
                  cs["overlap"], cs["rho"], cs["top10"], cf["overlap"], cf["rho"], cf["top10"]))
    drop = rows.main
    tp_runs = [normalise({k: v for k, v in t[0].items() if k not in drop}) for t in tpp]
    perf_runs = [normalise({k: v for k, v in x[0].items() if k not in drop}) for x in pp]
    print("run to run, rows level without main, each run against the median of the others: "
          "tickprof overlap %s%%, top-10 %s points; perf overlap %s%%, top-10 %s points" % (
              rng([100 - x[1] for x in stability(tp_runs)], "%.1f"),
              rng([x[0] for x in stability(tp_runs)], "%.1f"),
              rng([100 - x[1] for x in stability(perf_runs)], "%.1f"),
              rng([x[0] for x in stability(perf_runs)], "%.1f")))
    print("samples a report's rows rest on: PC samples in marked calls %s a run (sample_hz %s)" % (
        rng([sum(s.get("pc_samples", 0) for s in r["sites"]) for r in reports], "%d"),
        reports[0]["run"].get("sample_hz")))
    # The PC sampler counts user-mode time only (a task-clock event with
    # exclude_kernel, runtime/src/record/pcs/perf.rs): perf's samples in
    # the kernel (page faults, system calls) left out too.
    masks = [kernel_leaf(os.path.join(out, "perf.%d.txt.gz" % i)) for i in range(a.perf_runs)]
    user = [[st for st, k in zip(run, m) if not k] for run, m in zip(stacks, masks)]
    nk = sum(sum(m) for m in masks)
    pu = perf_profiles(user, chains, table, rows)
    samp_u = normalise({k: v for x in pu for k, v in x[0].items() if k not in rows.main})
    tp_r0 = figs["without main"][3]
    cu = compare(samp_u, tp_r0)
    print("perf's samples in user mode only (%.1f%% of its samples were the kernel's): rows level "
          "overlap %.1f%%, rho %.2f, top-10 %.1f points" % (
              100 * nk / max(1, nsamp), cu["overlap"], cu["rho"], cu["top10"]))
    pl = perf_profiles(stacks, chains, table, rows, leaf_only=True)
    samp_l = normalise({k: v for x in pl for k, v in x[0].items() if k not in rows.main})
    cl = compare(samp_l, tp_r0)
    print("perf's samples with rows from the leaf address only (as the PC sampler sees them): "
          "rows level overlap %.1f%%, rho %.2f, top-10 %.1f points" % (
              cl["overlap"], cl["rho"], cl["top10"]))
    pul = perf_profiles(user, chains, table, rows, leaf_only=True)
    samp_ul = normalise({k: v for x in pul for k, v in x[0].items() if k not in rows.main})
    cul = compare(samp_ul, tp_r0)
    print("both (user mode, leaf rows): overlap %.1f%%, rho %.2f, top-10 %.1f points" % (
        cul["overlap"], cul["rho"], cul["top10"]))
    cr, cs, samp_r, tp_r, _ = figs["without main"]
    ok += [("rows overlap >= 85%", cr["overlap"] >= 85), ("rho >= 0.85", cr["rho"] >= 0.85),
           ("top-10 <= 20 points", cr["top10"] <= 20),
           ("symbol overlap >= 90%", cs["overlap"] >= 90)]
    pcs = {}
    for t in tpp:
        for k, v in t[3].items():
            pcs.setdefault(k, []).append(v)
    first_calls = {s["name"]: "%d %s" % (s["calls"], s.get("timing", "timed")[0])
                   for s in reports[0]["sites"] if s.get("kind") != "inlined"}
    print("%-64s %7s %9s %9s %12s" % ("row (perf's top %d, then tickprof's)" % a.top,
                                      "perf%", "tickprof%", "pc_samp", "calls t/c"))
    keys = sorted(samp_r, key=lambda k: -samp_r[k])[:a.top]
    keys += [k for k in sorted(tp_r, key=lambda k: -tp_r[k])[:a.top // 2] if k not in keys]
    for k in keys:
        name = k if len(k) <= 64 else "..." + k[-61:]
        print("%-64s %7.1f %9.1f %9s %12s" % (
            name, 100 * samp_r.get(k, 0), 100 * tp_r.get(k, 0),
            ("%d" % statistics.median(pcs[k])) if k in pcs else "",
            first_calls.get(k, "")))

    timing = {s["name"]: s.get("timing", "timed") for s in reports[0]["sites"]
              if s.get("kind") != "inlined"}
    for kind_ in ("timed", "counted"):
        ks = [k for k in set(samp_r) | set(tp_r) if timing.get(k) == kind_]
        print("%s sites (%d): perf %.1f%%, tickprof %.1f%%" % (
            kind_, len(ks), 100 * sum(samp_r.get(k, 0) for k in ks),
            100 * sum(tp_r.get(k, 0) for k in ks)))
    ks = [k for k in set(samp_r) | set(tp_r) if k.endswith(" (row)")]
    print("inlined/unmarked rows (%d): perf %.1f%%, tickprof %.1f%%" % (
        len(ks), 100 * sum(samp_r.get(k, 0) for k in ks), 100 * sum(tp_r.get(k, 0) for k in ks)))

    t = {k: sum(x[2][k] for x in pp) for k in ("crate", "sym_marked", "inner_row", "inner_prog")}
    sym_share = 100 * t["sym_marked"] / max(1, t["crate"])
    row_share = 100 * t["inner_prog"] / max(1, t["crate"])
    print("\n-- resolution: %d samples (%.1f%%) with the crate's library code at the leaf; "
          "symbol a marked site %.1f%% (target >= 95); innermost function of the program (the "
          "crate's or a dependency's) a report row %.1f%% (target >= 85); innermost function "
          "of the crate itself a report row %.1f%%" % (
              t["crate"], 100 * t["crate"] / max(1, nsamp), sym_share, row_share,
              100 * t["inner_row"] / max(1, t["crate"])))
    missed = {}
    for x in pp:
        for k, v in x[2]["missed"].items():
            missed[k] = missed.get(k, 0) + v
    if missed:
        print("innermost program functions that are no report row (share of the crate's samples): "
              + ", ".join("%s %.1f%%" % (k, 100 * v / max(1, t["crate"]))
                          for k, v in sorted(missed.items(), key=lambda kv: -kv[1])[:6]))
    ok += [("symbol resolution >= 95%", sym_share >= 95), ("row resolution >= 85%", row_share >= 85)]

    # --- 6. build
    def btimes(name):
        p = os.path.join(out, "build-%s.log.times" % name)
        try:
            w, u, s = open(p).read().split()[-3:]
            return float(w), float(u) + float(s)
        except (OSError, ValueError):
            return None
    bu, bm, ba = btimes("unmarked"), btimes("marked"), btimes("marked-again")
    if bu and bm:
        print("\n-- build: unmarked %.1f s wall, %.1f s CPU; cargo tickprof build (probe + marked + "
              "tickprof) %.1f s wall, %.1f s CPU: %.2fx wall, %.2fx CPU (target <= 2)%s" % (
                  bu[0], bu[1], bm[0], bm[1], bm[0] / bu[0], bm[1] / bu[1],
                  "; again, nothing changed: %.1f s wall" % ba[0] if ba else ""))
    tu, tm = btimes("touch-unmarked"), btimes("touch-marked")
    if tu and tm:
        print("-- build after an edit of the library (tickprof compiled): unmarked %.1f s wall, "
              "%.1f s CPU; cargo tickprof build %.1f s wall, %.1f s CPU: %.2fx wall, %.2fx CPU "
              "(target <= 2)" % (tu[0], tu[1], tm[0], tm[1], tm[0] / tu[0], tm[1] / tu[1]))
        ok.append(("rebuild <= 2x (CPU)", tm[1] / tu[1] <= 2))
    elif bu and bm:
        ok.append(("build <= 2x (CPU)", bm[1] / bu[1] <= 2))
    print("\nsummary (%s): %s" % (a.crate, "; ".join("%s %s" % (n, "met" if m else "MISSED")
                                                   for n, m in ok)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
