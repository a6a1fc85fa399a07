#!/usr/bin/env python3
"""Checks who may include what under src/ (Perfetto-style include rules).

The pipeline capture -> format -> store -> analysis -> front-ends only points
one way. Most important: the injected tracer (capture/) must never depend on
analysis, import, export or front-end code, so it stays small and safe to load
into someone else's training job.
"""
import os
import re
import sys

ALLOWED = {
    "common": {"common"},
    "format": {"common", "format"},
    "store": {"common", "format", "store"},
    "capture": {"common", "format", "store", "capture"},
    "collector": {"common", "format", "store", "capture", "collector"},
    "plan": {"common", "plan"},
    "analysis": {"common", "format", "store", "analysis", "plan"},
    "importers": {"common", "format", "store", "importers"},
    "export": {"common", "format", "store", "analysis", "export"},
    "report": {"common", "format", "store", "analysis", "export", "report"},
    "roofline": {"common", "format", "store", "analysis", "roofline"},
    "ranks": {"common", "format", "store", "ranks"},
    "cli": None,  # the front-end may include anything
}


def main():
    root = sys.argv[1]
    bad = []
    inc = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
    for stage in sorted(os.listdir(root)):
        d = os.path.join(root, stage)
        if not os.path.isdir(d):
            continue
        if stage not in ALLOWED:
            bad.append(f"{stage}/: unknown stage, add it to tools/check_includes.py")
            continue
        allowed = ALLOWED[stage]
        for dirpath, _, files in os.walk(d):
            for fn in files:
                if not fn.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, fn)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = inc.match(line)
                        if m and allowed is not None and m.group(1) not in allowed and not fn.endswith("_test.cc"):
                            bad.append(f"{os.path.relpath(path, root)}:{n}: {stage}/ may not include {m.group(1)}/")
    for b in bad:
        print(b)
    print(f"include rules: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
