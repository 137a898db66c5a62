#!/usr/bin/env python3
"""The layout rules of DESIGN.md, checked: no import cycle between the
modules of runtime/src and macros/src (file level, and between top-level
modules), and no source file over 450 lines (unit tests excepted: files
named `tests.rs`, files under a `tests/` folder, and an inline
`#[cfg(test)] mod tests {` at the end of a file).

Reads `crate::…` and `super::…` paths (in `use` lines and in code) outside
`#[cfg(test)] mod tests`. Prints each cycle and each long file; exit 1 if
there is any. Usage: python3 scripts/layout_check.py   (CI runs it)
"""
import os
import re
import sys
from collections import defaultdict

MAX_LINES = 450
ROOTS = ["runtime/src", "macros/src"]
LONG_CHECK = ["runtime/src", "macros/src", "cli/src", "src"]


def modules(root):
    mods = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            parts = os.path.relpath(path, root)[:-3].split("/")
            if parts[-1] in ("lib", "mod"):
                parts = parts[:-1]
            if parts and parts[-1] == "tests" or "tests" in parts[:-1]:
                continue
            mods["::".join(parts)] = path
    return mods


def graph(root):
    mods = modules(root)

    def resolve(path):
        parts = path.split("::")
        while parts:
            key = "::".join(parts)
            if key in mods:
                return key
            parts = parts[:-1]
        return ""

    g = defaultdict(set)
    for m, path in mods.items():
        src = open(path, encoding="utf-8").read()
        cut = src.find("#[cfg(test)]\nmod tests")
        if cut >= 0:
            src = src[:cut]
        src = re.sub(r"//.*", "", src)
        here = m.split("::") if m else []
        is_dir = os.path.basename(path) in ("mod.rs", "lib.rs")
        base_super = here if is_dir else here[:-1]
        refs = []
        for kind, rest in re.findall(r"\b(crate|super)((?:::\w+)+)", src):
            base = [] if kind == "crate" else base_super
            refs.append("::".join(base + rest[2:].split("::")))
        for group in re.findall(r"use crate::\{([^;]*)\};", src, re.S):
            for item in group.split(","):
                item = item.strip().split("{")[0].strip(":").strip()
                if item:
                    refs.append(item)
        for r in refs:
            t = resolve(r)
            if t and t != m and not m.startswith(t + "::"):
                g[m].add(t)
    return mods, g


def cycles(nodes, g):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    os.chdir(os.path.join(os.path.dirname(__file__), ".."))
    bad = 0
    for root in ROOTS:
        mods, g = graph(root)
        for scc in cycles(list(mods), g):
            bad += 1
            print(f"{root}: import cycle between files: {' -> '.join(scc)}")
        top = defaultdict(set)
        for a, targets in g.items():
            ta = a.split("::")[0]
            for b in targets:
                tb = b.split("::")[0]
                if ta and tb and ta != tb:
                    top[ta].add(tb)
        names = sorted({k.split("::")[0] for k in mods if k})
        for scc in cycles(names, top):
            bad += 1
            print(f"{root}: import cycle between modules: {' -> '.join(scc)}")
    for root in LONG_CHECK:
        for dirpath, _, files in os.walk(root):
            for f in files:
                path = os.path.join(dirpath, f)
                if not f.endswith(".rs") or f == "tests.rs" or "/tests/" in path:
                    continue
                text = open(path, encoding="utf-8").read()
                cut = text.find("#[cfg(test)]\nmod tests {")
                n = (text if cut < 0 else text[:cut]).count("\n")
                if n > MAX_LINES:
                    bad += 1
                    print(f"{path}: {n} lines (at most {MAX_LINES}, unit tests aside)")
    if bad:
        sys.exit(1)
    print(f"layout: no import cycle in {', '.join(ROOTS)}; no source file over {MAX_LINES} lines")


main()
