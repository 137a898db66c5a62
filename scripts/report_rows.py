#!/usr/bin/env python3
"""Report rows on both sides, for scripts/after_inlining.py: perf's
samples of the unmarked build mapped to the rows of a tickprof report
(marked sites by source location, `(inlined)`/`(unmarked)` rows by name,
as the runtime makes them in runtime/src/inlined.rs), and a report's
self times per row, per symbol (rows in their holder), and with the rows
that are a marked function's own code folded. Standard library only."""

import gzip
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_compare import HASH, Sites, bare, last_segment, src_rel  # noqa: E402


STD_CRATES = ("addr2line", "adler2", "cfg_if", "compiler_builtins", "gimli", "hashbrown",
              "libc", "memchr", "miniz_oxide", "object", "panic_unwind", "rustc_demangle",
              "std_detect", "unwind")


def is_program(name, file):
    """Whether a frame may be a row: the runtime's `is_program` (a Rust
    path, not the standard library's, the crates it is built from, the
    allocator shim's or tickprof's)."""
    n = HASH.sub("", name).lstrip("<")
    return ("::" in name
            and not n.startswith(("core::", "std::", "alloc::", "__rustc::", "tickprof"))
            and "/rustc/" not in file
            and not file.startswith("/rust/deps/")
            and not (file in ("", "??") and n.split("::")[0] in STD_CRATES))


def shown(name):
    """A row's name, as the runtime makes it (`shown` in
    runtime/src/inlined.rs): generic arguments dropped, a qualified path
    kept (`<a::S<T> as X>::f` -> `<a::S as X>::f`), a closure's frames
    given to their function."""
    out, stack = [], []
    for ch in HASH.sub("", name):
        dropping = any(not k for k in stack)
        if ch == "<":
            cur = "".join(out)
            kept = not dropping and (cur == "" or cur.endswith(" "))
            stack.append(kept)
            if kept:
                out.append(ch)
        elif ch == ">":
            if stack and stack.pop():
                out.append(ch)
        elif not dropping:
            out.append(ch)
    s = "".join(out).replace("::{{closure}}", "")
    while s.endswith("::"):
        s = s[:-2]
    return s or name


ROW_SUFFIXES = (" (inlined)", " (unmarked)")


def row_name(site_name):
    for s in ROW_SUFFIXES:
        if site_name.endswith(s):
            return site_name[: -len(s)]
    return None


class Rows:
    """The report rows, from every report: marked sites and sampled rows."""

    def __init__(self, reports, srcdir):
        self.srcdir = os.path.realpath(srcdir)
        self.sites = Sites(reports[0])
        self.marked = {s["name"] for r in reports for s in r["sites"]
                       if s.get("kind", "function") in ("function", "asyncfunction")}
        self.main = {s["name"] for r in reports for s in r["sites"]
                     if "src/bin/" in s.get("file", "")}
        self.rows = set()
        for r in reports:
            for s in r["sites"]:
                n = row_name(s["name"])
                if n is not None and s.get("kind") == "inlined":
                    self.rows.add(n)
        self.cache = {}

    def crate_file(self, file):
        """Whether `file` is the crate's (under its copy's src/)."""
        if file.startswith("src/"):
            return True
        return os.path.realpath(file).startswith(self.srcdir + "/") if file.startswith("/") else False

    def lib_file(self, file):
        return self.crate_file(file) and "src/bin/" not in file

    def classify(self, fn, file, line):
        """(marked site or None, row name or None) of a frame."""
        k = (fn, file, line)
        v = self.cache.get(k)
        if v is None:
            site = self.sites.find(fn, file, line) if self.crate_file(file) else None
            b = shown(fn)
            row = b if b in self.rows and is_program(fn, file) else None
            v = self.cache[k] = (site, row)
        return v


def perf_profiles(stacks, chains, table, rows, leaf_only=False):
    """Per perf run: (rows-level counts, symbol-level counts, resolution
    tallies, samples, samples under no row). With `leaf_only`, a row is
    taken from the leaf address's inline chain only, as the PC sampler
    sees it (no call stack): a sample in the standard library's or the C
    library's out-of-line code goes to the innermost marked frame, not to
    a row that called it."""
    res = []
    for run in stacks:
        lvl_rows, lvl_sym = {}, {}
        tally = dict(crate=0, sym_marked=0, inner_row=0, inner_prog=0, missed={})
        unmapped = 0
        for stack in run:
            key_row = key_sym = None
            for depth, fr in enumerate(stack):
                if fr is None:
                    continue
                sym, off, first = fr
                base = table.get(sym)
                if base is None:
                    continue
                chain = chains.get(base + off - (0 if first else 1), [])
                if depth == 0 and chain:
                    crate_frames = [c for c in chain if rows.lib_file(c[1])]
                    if crate_frames:
                        tally["crate"] += 1
                        outer = chain[-1]
                        if rows.classify(*outer)[0] is not None:
                            tally["sym_marked"] += 1
                        site, row = rows.classify(*crate_frames[0])
                        if site is not None or row is not None:
                            tally["inner_row"] += 1
                        # The innermost function of the program (the
                        # crate's or a dependency's, not the standard
                        # library's): the runtime's rule for a row.
                        prog = [c for c in chain if is_program(c[0], c[1])]
                        site, row = rows.classify(*prog[0]) if prog else (None, None)
                        if site is not None or row is not None:
                            tally["inner_prog"] += 1
                        else:
                            b = bare(prog[0][0]) if prog else "(none)"
                            tally["missed"][b] = tally["missed"].get(b, 0) + 1
                for c in chain:
                    site, row = rows.classify(*c)
                    if leaf_only and depth > 0:
                        row = None
                    if key_row is None and (site is not None or row is not None):
                        key_row = site if site is not None else row + " (row)"
                    if key_sym is None and site is not None:
                        key_sym = site
                if key_row is not None and key_sym is not None:
                    break
            if key_row is None:
                unmapped += 1
            else:
                lvl_rows[key_row] = lvl_rows.get(key_row, 0) + 1
            if key_sym is not None:
                lvl_sym[key_sym] = lvl_sym.get(key_sym, 0) + 1
        res.append((lvl_rows, lvl_sym, tally, len(run), unmapped))
    return res


def tp_profiles(report):
    """Of one report, from its tree: (rows-level self times, symbol-level
    self times, rows level with the rows that are a marked function's own
    code folded into their holder, pc_samples per row).

    The third: a row named like a marked function of its file (same last
    name segment, `{{closure}}` dropped: `semver::parse::::from_str` for
    `<semver::Version as FromStr>::from_str`) is that function's code the
    runtime did not recognise (`is_holder` compares the frame's name
    without its `<…>` parts with the site's function path, which differ
    for a trait method): folded into its parent, as the runtime would
    have kept it."""
    kind = {s["name"]: s.get("kind") for s in report["sites"]}
    files = {s["name"]: s.get("file", "") for s in report["sites"]}
    own = {(src_rel(s.get("file", "")), last_segment(s.get("function") or s["name"]))
           for s in report["sites"] if s.get("kind") in ("function", "asyncfunction")}
    by_rows, by_sym, fixed, pcs = {}, {}, {}, {}
    tree = report["tree"]

    def add(d, k, v):
        d[k] = d.get(k, 0) + v

    def holder(i):
        while kind.get(i["name"]) == "inlined" and i.get("parent", 0) > 0:
            i = tree[i["parent"]]
        return None if kind.get(i["name"]) == "inlined" else i["name"]

    for node in tree[1:]:
        name, v = node["name"], node["self_ns"]
        n = row_name(name) if kind.get(name) == "inlined" else None
        if n is None:
            add(by_rows, name, v)
            add(by_sym, name, v)
            add(fixed, name, v)
            continue
        k = n + " (row)"
        add(by_rows, k, v)
        add(pcs, k, report_pc(report, name))
        h = holder(node)
        if h is not None:
            add(by_sym, h, v)
        if (src_rel(files.get(name, "")), last_segment(n)) in own and h is not None:
            add(fixed, h, v)
        else:
            add(fixed, k, v)
    return by_rows, by_sym, fixed, pcs


def report_pc(report, name):
    for s in report["sites"]:
        if s["name"] == name:
            return s.get("pc_samples", 0)
    return 0


def kernel_leaf(path):
    """Per sample of a perf.I.txt.gz (in read_samples' order): whether its
    innermost frame is the kernel's (a page fault, a system call)."""
    out, cur = [], None
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            if not line[0].isspace():
                if cur is not None:
                    out.append(cur)
                cur = False
                first = True
                continue
            if first:
                cur = line.rstrip().endswith("([kernel.kallsyms])")
                first = False
    if cur is not None:
        out.append(cur)
    return out
