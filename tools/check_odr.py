#!/usr/bin/env python3
"""Finds types that two files define under the same name in the same namespace.

C++ lets two translation units define `struct X` differently without any
diagnostic; when both end up in one binary, the linker keeps one copy of their
inline members (constructors, vector<X> code) and memory is silently corrupted
(seen here: two `stepscope::StepSummary`, caught by ASan). This check looks at
types defined at namespace scope (column 0) outside anonymous namespaces, in
every header and source file under src/, and fails on a name defined in more
than one file within the same named namespace.
"""
import collections
import os
import re
import sys

TYPE = re.compile(r'^(?:struct|class|enum class|enum|union)\s+([A-Za-z_][\w:]*)\s*(?:final\s*)?(?::[^;{]*)?\{')
NS_OPEN = re.compile(r'^namespace\s*([\w:]*)\s*\{')
NS_CLOSE = re.compile(r'^\}\s*//\s*namespace')


def scan(path):
    out = []
    stack = []
    with open(path, errors="replace") as f:
        for line in f:
            m = NS_OPEN.match(line)
            if m:
                stack.append(m.group(1))
                continue
            if NS_CLOSE.match(line) and stack:
                stack.pop()
                continue
            m = TYPE.match(line)
            if m and stack and "" not in stack and "::" not in m.group(1):  # Outer::Inner defines no new name
                out.append(("::".join(stack), m.group(1)))
    return out


def main():
    root = sys.argv[1]
    seen = collections.defaultdict(set)
    for dirpath, _, files in os.walk(root):
        for fn in files:
            if fn.endswith((".h", ".cc")):
                p = os.path.join(dirpath, fn)
                for ns, name in scan(p):
                    seen[(ns, name)].add(os.path.relpath(p, root))
    bad = {k: v for k, v in seen.items() if len(v) > 1}
    for (ns, name), files in sorted(bad.items()):
        print(f"{ns}::{name} is defined in {len(files)} files: {', '.join(sorted(files))}")
    print(f"odr check: {len(seen)} namespace-scope types, {len(bad)} defined twice")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
