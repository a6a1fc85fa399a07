#!/usr/bin/env python3
"""Regenerate or check the trace-reading blocks of README.md's "A 5-minute tour".

    python3 scripts/readme_tour.py --check  [--stepscope build/bin/stepscope]   # exit 1 + unified diff on drift
    python3 scripts/readme_tour.py --update [--stepscope build/bin/stepscope]   # rewrite the blocks in place

A block the script owns is a fenced block right after a marker line naming its command:

    <!-- tour: stepscope analyze workers0_cpu4.sqlite -->
    ```
    $ stepscope analyze workers0_cpu4.sqlite
    ...what it prints (stdout, then stderr)...
    ```

The command runs in a fresh temporary folder laid out as the README's setup step makes `out/tour`:
the fixtures of tests/fixtures/gpu/*.sqlite.gz decompressed, tests/fixtures/sample/sample.sqlite and
the rank summaries (RANK_SUMMARIES) copied; so the paths printed are the ones the README shows. A
marker may add `| head -N` to keep the first N lines (the README then says so). Blocks recorded on a
GPU (`stepscope profile`) carry no marker and are left alone. The ctest `readme_tour` runs --check.

On a GPU machine, `--record-gpu DIR` runs the GPU blocks' commands on the bundled workload
(workloads/train_small.py) and writes them, README-ready, to DIR/tour_gpu.md (and stdout), to be
pasted into parts 1 and 4 by hand (a minute of GPU time):

    python3 scripts/readme_tour.py --record-gpu out/tour_gpu --stepscope build/bin/stepscope
"""
import argparse
import difflib
import glob
import gzip
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU_FIXTURES = os.path.join(ROOT, "tests", "fixtures", "gpu")
SAMPLE = os.path.join(ROOT, "tests", "fixtures", "sample", "sample.sqlite")
RANKS_DIR = os.path.join(ROOT, "tests", "diff", "fixtures", "ranks", "real")
# the 2xH200 DDP job with --slow-rank 1 --slow-ms 5 (tests/diff/suites/ranks.py)
RANK_SUMMARIES = ["rk9_slow_r0.summary.json", "rk9_slow_r1.summary.json"]

MARKER = re.compile(r"^<!-- tour: (.+?) -->\s*$")


def set_up(folder):
    """The README's setup step: what `out/tour` holds."""
    for name in sorted(os.listdir(GPU_FIXTURES)):
        if name.endswith(".sqlite.gz"):
            with gzip.open(os.path.join(GPU_FIXTURES, name), "rb") as src, \
                    open(os.path.join(folder, name[:-3]), "wb") as dst:
                shutil.copyfileobj(src, dst)
    shutil.copy(SAMPLE, folder)
    for name in RANK_SUMMARIES:
        shutil.copy(os.path.join(RANKS_DIR, name), folder)


def parse_marker(text):
    """'stepscope CMD ARGS [| head -N]' -> (argv after 'stepscope', N or None)."""
    head = None
    m = re.fullmatch(r"(.*?)\s*\|\s*head -(\d+)", text)
    if m:
        text, head = m.group(1), int(m.group(2))
    argv = shlex.split(text)
    if not argv or argv[0] != "stepscope":
        raise SystemExit(f"readme_tour: marker '{text}' must start with 'stepscope'")
    return argv[1:], head


def run(stepscope, folder, marker):
    argv, head = parse_marker(marker)
    expanded = []
    for a in argv:  # the shell's globbing, as a reader's shell does it
        if any(c in a for c in "*?["):
            hits = sorted(glob.glob(a, root_dir=folder))
            expanded.extend(hits or [a])
        else:
            expanded.append(a)
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1", TZ="UTC", LC_ALL="C")
    proc = subprocess.run([stepscope] + expanded, cwd=folder, capture_output=True, text=True, env=env,
                          timeout=300)
    out = proc.stdout + proc.stderr
    out = out.replace(folder + "/", "").replace(folder, ".")
    lines = out.rstrip("\n").split("\n")
    if head is not None:
        lines = lines[:head]
    if proc.returncode != 0 and "built without the charting library" in out:
        return None  # a build without node_modules/echarts: `report` refuses (as report_test skips)
    if proc.returncode != 0:
        lines.append(f"(exit code {proc.returncode})")
    return [f"$ {marker}"] + [l.rstrip() for l in lines]


def blocks(lines):
    """Yield (marker text, first content line index, closing fence index)."""
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            j = i + 1
            if j >= len(lines) or not lines[j].startswith("```"):
                raise SystemExit(f"readme_tour: README line {i + 1}: a tour marker must be followed by a ``` fence")
            k = j + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            if k == len(lines):
                raise SystemExit(f"readme_tour: README line {j + 1}: the fence is never closed")
            yield m.group(1), j + 1, k
            i = k
        i += 1


GPU_COMMANDS = [
    "stepscope profile -o run -- python3 workloads/train_small.py",
    "stepscope profile -o run_pm --pytorch-memory -- python3 workloads/train_small.py",
    "stepscope memory run_pm.sqlite --section pytorch",
    "stepscope memory run_pm.sqlite --section pytorch_live_at_peak --top 5",
]


def record_gpu(stepscope, out_dir):
    """Runs GPU_COMMANDS in a scratch folder holding workloads/train_small.py; each in its own try."""
    import datetime
    os.makedirs(out_dir, exist_ok=True)
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout.strip().split("\n")[0] or "unknown GPU"
    except Exception as e:  # noqa: BLE001 - the record says so
        gpu = f"unknown GPU ({e})"
    lines = [f"Recorded on {gpu}, {datetime.date.today().isoformat()}:", "", "```"]
    status = []
    with tempfile.TemporaryDirectory(prefix="readme_tour_gpu_") as folder:
        folder = os.path.realpath(folder)
        os.makedirs(os.path.join(folder, "workloads"))
        shutil.copy(os.path.join(ROOT, "workloads", "train_small.py"), os.path.join(folder, "workloads"))
        for cmd in GPU_COMMANDS:
            try:
                block = run(stepscope, folder, cmd) or [f"$ {cmd}", "(failed)"]
                ok = not block[-1].startswith(("(exit code", "(failed"))
            except Exception as e:  # noqa: BLE001 - keep going, say what failed
                block, ok = [f"$ {cmd}", f"(failed: {e})"], False
            lines += block
            status.append((cmd, "ok" if ok else "FAILED"))
    lines.append("```")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "tour_gpu.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print("summary:")
    for cmd, st in status:
        print(f"  {st:6}  {cmd}")
    return 0 if all(st == "ok" for _, st in status) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare; exit 1 with a unified diff on drift")
    mode.add_argument("--update", action="store_true", help="rewrite the blocks in README.md")
    mode.add_argument("--record-gpu", metavar="DIR", help="on a GPU: run the recorded blocks' commands, write DIR/tour_gpu.md")
    ap.add_argument("--stepscope", default=os.environ.get("STEPSCOPE_BIN", os.path.join(ROOT, "build", "bin", "stepscope")))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    a = ap.parse_args()
    if not os.access(a.stepscope, os.X_OK):
        print(f"readme_tour: {a.stepscope} is not an executable: build it (ninja -C build stepscope) or pass --stepscope",
              file=sys.stderr)
        return 2
    if a.record_gpu:
        return record_gpu(os.path.abspath(a.stepscope), a.record_gpu)
    with open(a.readme, encoding="utf-8") as f:
        old = f.read().split("\n")
    new = list(old)
    found = list(blocks(old))
    if not found:
        print(f"readme_tour: no '<!-- tour: ... -->' block in {a.readme}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="readme_tour_") as folder:
        folder = os.path.realpath(folder)
        set_up(folder)
        for marker, start, end in reversed(found):  # from the end: earlier indices stay valid
            block = run(os.path.abspath(a.stepscope), folder, marker)
            if block is None:
                print(f"readme_tour: skipped '{marker}': this stepscope was built without node_modules/echarts",
                      file=sys.stderr)
            else:
                new[start:end] = block
    if new == old:
        print(f"readme_tour: {len(found)} blocks match the tool's output")
        return 0
    if a.update:
        tmp = a.readme + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(new))
        os.replace(tmp, a.readme)
        print(f"readme_tour: {a.readme} updated ({len(found)} blocks)")
        return 0
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in old], [l + "\n" for l in new],
                                               "README.md", "README.md (regenerated)"))
    print("readme_tour: README.md's tour and the tool's output drifted apart: "
          "run `python3 scripts/readme_tour.py --update` and review the diff", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
