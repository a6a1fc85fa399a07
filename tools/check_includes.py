#!/usr/bin/env python3
"""Checks who may include what under src/ (Perfetto-style include rules).

The pipeline capture -> format -> store -> analysis -> front-ends only points
one way. Most important: the injected tracer (capture/, built into
libstepscope_inject.so) depends on nothing but capture/, format/ and common/:
no SQLite, no store, no analysis, import, export or front-end code, so it
stays small and safe to load into someone else's training job. What turns
CUPTI's records into store rows runs in the collector process (collector/).

Five checks, each a violation line and a non-zero exit:
  1. every `#include "stage/..."` of a file under src/STAGE/ names a stage in
     ALLOWED[STAGE] (tests too: a test may include more only where
     TEST_EXCEPTIONS names it, and never a capture/ test);
  2. the rules themselves point one way: a stage may include only itself and
     stages before it in ORDER, so no layer includes a later one and the
     stages form no cycle;
  5. inside analysis/, the same by part (ANALYSIS_PARTS, ANALYSIS_LEVELS):
     model/ (the trace read into the in-memory model) includes no other part;
     recipes/, rules/, whatif/ and memory/ may include model/; the files
     directly in analysis/ (the front-ends' glue: diff, output, mfu) may
     include every part, and no part includes them;
  3. no cycle of includes between files (a.h -> b.h -> a.h);
  4. the libraries injected into the traced program (INJECTED) reach, through
     every header they include directly or not, only the stages listed:
     roofline/inject/ may use roofline/'s plain headers (ceilings, the
     profile file format) but none that pulls in store/ or analysis/.
"""
import os
import re
import sys

# The stages in pipeline order: each may include only stages before it.
ORDER = [
    "common",
    "format",
    "plan",
    "capture",
    "store",
    "collector",
    "importers",
    "analysis",
    "ranks",
    "export",
    "report",
    "roofline",
    "cli",
]

ALLOWED = {
    "common": {"common"},
    "format": {"common", "format"},
    "plan": {"common", "plan"},
    # The injected tracer: only what it needs inside the traced program.
    "capture": {"common", "format", "capture"},
    "store": {"common", "format", "store"},
    "collector": {"common", "format", "store", "capture", "collector"},
    "importers": {"common", "format", "store", "importers"},
    "analysis": {"common", "format", "store", "analysis", "plan"},
    "ranks": {"common", "format", "store", "ranks"},
    "export": {"common", "format", "store", "analysis", "export"},
    "report": {"common", "format", "store", "analysis", "export", "report"},
    "roofline": {"common", "format", "store", "analysis", "roofline"},
    "cli": None,  # the front-end may include anything
}

# analysis/ by part (check 5): a file under analysis/PART/ may include the
# parts ANALYSIS_PARTS[PART] names ("" is a file directly in analysis/, the
# glue of the front-ends: diff, output, mfu; None: every part).
ANALYSIS_PARTS = {
    "model": {"model"},  # reads the trace into the in-memory model; includes no other part
    "recipes": {"model", "recipes"},
    # A rule's fix is a what-if transformation, and what-if prices the rules' findings.
    "rules": {"model", "rules", "whatif"},
    "whatif": {"model", "whatif", "rules"},
    "memory": {"model", "memory"},
    "": None,
}
# The parts in order: a part may include only parts of its own level or an
# earlier one (model first; the glue last, so no part includes it).
ANALYSIS_LEVELS = [{"model"}, {"recipes", "rules", "whatif", "memory"}, {""}]

# The sources of the libraries loaded into someone else's program (folder under
# src/ -> the stages their whole include closure may touch). Tests excepted.
INJECTED = {
    "capture": {"common", "format", "capture"},  # libstepscope_inject.so, libstepscope_hostmem.so
    "roofline/inject": {"common", "format", "roofline"},  # libstepscope_roofline_inject.so
}

# Tests that build their fixtures with a sibling stage (path under src/ ->
# the extra stages it may include). Never a capture/ file.
TEST_EXCEPTIONS = {
    "report/report_test.cc": {"roofline"},  # a stored roofline profile in the report
}

SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(([a-z_]+)/[^"]+)"')


def check_rules():
    """The rules point one way (check 2)."""
    bad = []
    if set(ORDER) != set(ALLOWED):
        bad.append("tools/check_includes.py: ORDER and ALLOWED name different stages")
    for stage, allowed in ALLOWED.items():
        if allowed is None or stage not in ORDER:
            continue
        for dep in sorted(allowed - {stage}):
            if dep not in ORDER or ORDER.index(dep) > ORDER.index(stage):
                bad.append(f"tools/check_includes.py: {stage}/ may include {dep}/, a later stage")
    for path, extra in TEST_EXCEPTIONS.items():
        if path.startswith("capture/"):
            bad.append(f"tools/check_includes.py: {path}: capture/ takes no exceptions")
    level = {part: n for n, parts in enumerate(ANALYSIS_LEVELS) for part in parts}
    if set(level) != set(ANALYSIS_PARTS):
        bad.append("tools/check_includes.py: ANALYSIS_LEVELS and ANALYSIS_PARTS name different parts")
    for part, allowed in ANALYSIS_PARTS.items():
        for dep in sorted((allowed or set(level)) - {part}):
            if dep not in level or part not in level or level[dep] > level[part]:
                bad.append(f"tools/check_includes.py: {part_name(part)} may include {part_name(dep)}, "
                           "a later part")
    return bad


def analysis_part(rel):
    """The part of analysis/ a path under src/ is in ("" directly in analysis/), or None."""
    bits = rel.split("/")
    if bits[0] != "analysis":
        return None
    return bits[1] if len(bits) > 2 else ""


def part_name(part):
    return "analysis/" + (part + "/" if part else " (a file directly in it)")


def check_analysis_part(rel, n, target):
    """A violation of check 5 by `rel` including `target` (both under src/), or None."""
    part, dep = analysis_part(rel), analysis_part(target)
    if part is None or dep is None or part not in ANALYSIS_PARTS:
        return None  # an unknown part is reported once, by main()
    allowed = ANALYSIS_PARTS[part]
    if allowed is None or dep in allowed:
        return None
    return f"{rel}:{n}: {part_name(part)} may not include {part_name(dep)}"


def scan(root):
    """(file, line, included path) for every project include under src/."""
    for stage in sorted(os.listdir(root)):
        d = os.path.join(root, stage)
        if not os.path.isdir(d):
            continue
        for dirpath, dirs, files in os.walk(d):
            dirs.sort()
            for fn in sorted(files):
                if not fn.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m:
                            yield stage, rel, n, m.group(1), m.group(2)


def find_cycle(edges):
    """One include cycle between files, as a list of paths, or None (check 3)."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {}
    for start in sorted(edges):
        if color.get(start, WHITE) != WHITE:
            continue
        stack = [(start, iter(sorted(edges.get(start, ()))))]
        path = [start]
        color[start] = GREY
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = BLACK
                stack.pop()
                path.pop()
                continue
            c = color.get(nxt, WHITE)
            if c == GREY:
                return path[path.index(nxt):] + [nxt]
            if c == WHITE:
                color[nxt] = GREY
                stack.append((nxt, iter(sorted(edges.get(nxt, ())))))
                path.append(nxt)
    return None


def check_injected(edges):
    """Each injected folder's include closure stays within its stages (check 4)."""
    bad = []
    for folder, stages in INJECTED.items():
        starts = sorted(f for f in edges if f.startswith(folder + "/") and not f.endswith("_test.cc"))
        via = {f: None for f in starts}  # file -> the file that included it
        queue = list(starts)
        while queue:
            f = queue.pop(0)
            for g in sorted(edges.get(f, ())):
                if g in via:
                    continue
                via[g] = f
                queue.append(g)
                if g.split("/", 1)[0] not in stages:
                    chain = [g]
                    while via[chain[-1]] is not None:
                        chain.append(via[chain[-1]])
                    bad.append(f"{folder}/ (injected) reaches {g}: " + " -> ".join(reversed(chain)))
    return bad


def main():
    root = sys.argv[1]
    bad = check_rules()
    edges = {}
    for stage in sorted(os.listdir(root)):
        if os.path.isdir(os.path.join(root, stage)) and stage not in ALLOWED:
            bad.append(f"{stage}/: unknown stage, add it to tools/check_includes.py")
    analysis = os.path.join(root, "analysis")
    for part in sorted(os.listdir(analysis)) if os.path.isdir(analysis) else []:
        if os.path.isdir(os.path.join(analysis, part)) and part not in ANALYSIS_PARTS:
            bad.append(f"analysis/{part}/: unknown part of analysis/, add it to tools/check_includes.py")
    for stage, rel, n, target, dep in scan(root):
        if stage not in ALLOWED:
            continue
        if os.path.exists(os.path.join(root, target)):
            edges.setdefault(rel, set()).add(target)
        part_violation = check_analysis_part(rel, n, target)
        if part_violation:
            bad.append(part_violation)
        allowed = ALLOWED[stage]
        if allowed is None or dep in allowed:
            continue
        if rel.endswith("_test.cc") and dep in TEST_EXCEPTIONS.get(rel, set()):
            continue
        bad.append(f"{rel}:{n}: {stage}/ may not include {dep}/")
    bad += check_injected(edges)
    cycle = find_cycle(edges)
    if cycle:
        bad.append("include cycle: " + " -> ".join(cycle))
    for b in bad:
        print(b)
    print(f"include rules: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
