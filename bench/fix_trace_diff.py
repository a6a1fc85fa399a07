#!/usr/bin/env python3
"""Figure: where a fix's saving sits, op by op (docs/PERFORMANCE.md, "What-if calibration").

Compares a traced run of a problem config with a traced run of its fix
(bench/calibration.py --trace-fix writes both: <scenario>.sqlite and <scenario>_fix.sqlite,
<scenario>.2.sqlite and <scenario>_fix.2.sqlite, ...). For each of the two busiest host
threads (in a PyTorch step: the main thread, which launches the forward, and the autograd
thread, which launches the backward) it aligns the step's CUDA calls of the problem run
with those of the fix run (key: kernel name, grid and block; the API's name for other
calls; difflib's longest matching blocks), then sums per step, separately:
  * calls only in the problem run (e.g. a recompute's launches),
  * the CPU gap before the first matched call after such a stretch ("after"),
  * the CPU gap before every other matched call ("inner": the same op in both runs).
Gaps are capped at 2 ms so that a thread's wait for the other thread (the main thread
during the backward) does not count. What the replay does not price shows up as
"inner" or "after" time the fix removes. The two runs are separate processes, so part of
any one pair's difference is the processes' own speed (on the lent VMs two traced runs
of one config differ by up to 50%); compare several pairs.

usage: python3 bench/fix_trace_diff.py PROBLEM.sqlite FIX.sqlite [PROBLEM2 FIX2 ...] [--json OUT]
"""
import argparse
import bisect
import collections
import difflib
import json
import sqlite3
import statistics
import sys

GAP_CAP_NS = 2_000_000
SKIP_FIRST_STEPS = 3  # warm-up steps of the traced run


def load(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    steps = c.execute("SELECT start_ns, end_ns FROM steps_v ORDER BY start_ns").fetchall()
    steps = steps[SKIP_FIRST_STEPS:-1]
    rows = c.execute(
        """SELECT a.start_ns, a.end_ns, a.tid,
                  COALESCE((SELECT value FROM strings WHERE id = k.name_id),
                           (SELECT value FROM strings WHERE id = a.name_id)),
                  COALESCE(k.grid_x, 0), COALESCE(k.grid_y, 0), COALESCE(k.block_x, 0)
           FROM api a LEFT JOIN kernels k ON k.correlation = a.correlation
           ORDER BY a.start_ns""").fetchall()
    if not steps or not rows:
        raise SystemExit(f"{path}: no steps or no CUDA calls to compare")
    return steps, rows


def threads(steps, rows):
    """The two busiest threads, as (main, backward): the main one calls first in a step."""
    cnt = collections.Counter(r[2] for r in rows)
    busy = [t for t, _ in cnt.most_common(2)]
    s, e = steps[len(steps) // 2]
    first = {t: min((r[0] for r in rows if r[2] == t and s <= r[0] < e), default=e) for t in busy}
    busy.sort(key=lambda t: first[t])
    return {"main": busy[0], "backward": busy[1] if len(busy) > 1 else None}


def per_step(steps, rows, tid):
    starts = [r[0] for r in rows]
    out = []
    for s, e in steps:
        i, j = bisect.bisect_left(starts, s), bisect.bisect_left(starts, e)
        out.append([r for r in rows[i:j] if r[2] == tid])
    return out


def gap(seq, i):
    return min(seq[i][0] - seq[i - 1][1], GAP_CAP_NS) if i > 0 else 0


def compare(problem, fix):
    sp, rp = load(problem)
    sf, rf = load(fix)
    tp, tf = threads(sp, rp), threads(sf, rf)
    res = {}
    for role in ("main", "backward"):
        if tp[role] is None or tf[role] is None:
            continue
        tot = collections.Counter()
        n = 0
        for a, b in zip(per_step(sp, rp, tp[role]), per_step(sf, rf, tf[role])):
            if not a or not b:
                continue
            ka, kb = [r[3:] for r in a], [r[3:] for r in b]
            blocks = difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_matching_blocks()
            matched = 0
            for blk in blocks:
                for k in range(blk.size):
                    cls = "after" if k == 0 and blk.a > 0 else "inner"
                    tot[cls + "_problem"] += gap(a, blk.a + k)
                    tot[cls + "_fix"] += gap(b, blk.b + k)
                    tot[cls + "_n"] += 1
                matched += blk.size
            tot["only_problem"] += len(ka) - matched
            tot["only_fix"] += len(kb) - matched
            n += 1
        if n:
            res[role] = {k: v / n for k, v in tot.items()}
            res[role]["steps"] = n
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+", help="PROBLEM FIX [PROBLEM FIX ...]")
    ap.add_argument("--json", help="write the per-pair numbers here")
    a = ap.parse_args()
    if len(a.traces) % 2:
        ap.error("traces come in pairs: PROBLEM FIX")
    out = []
    print(f"{'problem trace':34} {'thread':8} {'steps':>5} {'only in problem':>15} "
          f"{'after: n, ms problem/fix, diff':>32} {'inner: n, ms problem/fix, diff':>34}")
    for p, f in zip(a.traces[::2], a.traces[1::2]):
        r = compare(p, f)
        out.append({"problem": p, "fix": f, "threads": r})
        for role, t in r.items():
            print(f"{p.split('/')[-1][:34]:34} {role:8} {t['steps']:5d} {t.get('only_problem', 0):9.0f} calls "
                  f"{t.get('after_n', 0):5.0f} {t.get('after_problem', 0) / 1e6:6.2f}/{t.get('after_fix', 0) / 1e6:5.2f} "
                  f"{(t.get('after_problem', 0) - t.get('after_fix', 0)) / 1e6:+6.2f}   "
                  f"{t.get('inner_n', 0):5.0f} {t.get('inner_problem', 0) / 1e6:6.2f}/{t.get('inner_fix', 0) / 1e6:5.2f} "
                  f"{(t.get('inner_problem', 0) - t.get('inner_fix', 0)) / 1e6:+6.2f}")
    for role in ("main", "backward"):
        d = [(x["threads"][role]["inner_problem"] - x["threads"][role]["inner_fix"]) / 1e6
             for x in out if role in x["threads"]]
        if d:
            print(f"median over {len(d)} pairs, {role} thread, inner matched calls: {statistics.median(d):+.2f} ms/step")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
