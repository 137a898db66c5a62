#!/usr/bin/env python3
"""Compares tickprof's allocation report (JSON) with DHAT's (valgrind
--tool=dhat) for the same run; used by scripts/ci_alloc_dhat.sh.

  dhat_compare.py REPORT.json DHAT.out

Checks: the bytes over all rows (every site's self bytes plus the
<outside marked calls> row) equal DHAT's total bytes, less the blocks
allocated by tickprof itself (any frame in tickprof_runtime but
`__private::timed`, which runs a marked body; tickprof does not count its
own by design), within 1%; each site's total bytes
equal DHAT's inclusive bytes of the frames of the same function (or of
its body's closure, the recording copy) within 5%.
Exit status 1 on a failed check."""
import json
import re
import sys


def main(report_path, dhat_path):
    report = json.load(open(report_path))
    dhat = json.load(open(dhat_path))
    ftbl = dhat["ftbl"]
    # `__private::timed` runs a marked function's body (the recording copy
    # of a duplicated body): what it allocates is the program's.
    own = [
        i
        for i, f in enumerate(ftbl)
        if "tickprof_runtime::" in f and "tickprof_runtime::__private::timed" not in f
    ]
    own = set(own)
    pps = [pp for pp in dhat["pps"] if not own.intersection(pp["fs"])]
    dhat_all = sum(pp["tb"] for pp in dhat["pps"])
    dhat_total = sum(pp["tb"] for pp in pps)
    ours = sum(s["self_alloc"]["bytes"] for s in report["sites"])
    ours += report["run"]["outside"]["bytes"]
    ok = True

    def check(what, a, b, tol):
        nonlocal ok
        diff = abs(a - b) / max(b, 1)
        good = diff <= tol
        ok &= good
        print(f"{'ok ' if good else 'BAD'} {what:<34} tickprof {a:>12,}  dhat {b:>12,}  {100 * diff:6.3f}% (limit {100 * tol:.0f}%)")

    print(f"dhat: {dhat_all:,} bytes in all, {dhat_all - dhat_total:,} of them allocated by tickprof itself")
    check("all rows", ours, dhat_total, 0.01)
    for s in report["sites"]:
        name = s["function"] if s["kind"] == "function" else None
        if not name:
            continue
        # The function's own frame, or its body's closure: a duplicated
        # body records in `timed(move || body)`, which the marked
        # function may reach by a tail call, leaving no frame of its own.
        pat = re.compile(r": " + re.escape(name) + r"(::\{\{closure\}\})? \(")
        frames = {i for i, f in enumerate(ftbl) if pat.search(f)}
        if not frames:
            print(f"BAD {name}: no DHAT frame (inlined?)")
            ok = False
            continue
        incl = sum(pp["tb"] for pp in pps if frames.intersection(pp["fs"]))
        check(name, s["alloc"]["bytes"], incl, 0.05)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
