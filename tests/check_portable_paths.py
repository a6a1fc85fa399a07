#!/usr/bin/env python3
"""Fails when a build or setup file names an x86_64-only path (targets/x86_64-linux,
lib/x86_64-linux-gnu, ...): the build must also work on aarch64 (Grace Hopper:
targets/sbsa-linux), finding CUDA through CMake's FindCUDAToolkit.
Usage: check_portable_paths.py SOURCE_DIR"""
import os
import re
import sys

PATTERN = re.compile(r"x86_64-linux|x86_64/|/x86_64\b")
root = sys.argv[1] if len(sys.argv) > 1 else "."
bad = []
for top in ("CMakeLists.txt", "cmake", "src", "tests", "scripts", "bench", "Makefile"):
    path = os.path.join(root, top)
    files = [path] if os.path.isfile(path) else [
        os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
    for f in files:
        base = os.path.basename(f)
        if not (base == "CMakeLists.txt" or base == "Makefile" or f.endswith((".cmake", ".sh"))):
            continue
        with open(f, errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if PATTERN.search(line):
                    bad.append(f"{os.path.relpath(f, root)}:{n}: {line.strip()}")
if bad:
    print("x86_64-only paths (use FindCUDAToolkit / CUDA:: targets instead):")
    print("\n".join(bad))
    sys.exit(1)
print("no x86_64-only paths")
