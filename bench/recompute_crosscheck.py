#!/usr/bin/env python3
"""Cross-check of the recompute rule's evidence (docs/rules.md, `recompute`), stdlib only.

Recomputes from a stepscope trace, with sqlite3 and independently of the C++ code, what
`stepscope analyze` prints in the recompute finding's detail: per step the recompute runs
(autograd-thread kernel runs >= 4 kernels, >= 3 names, repeating the main thread's forward
sequence of the same step, keyed by name/grid/block), their kernels and GPU time, the
autograd thread's time across them, the forward's checkpoint entry/exit gaps above the
median launch gap inside the paired forward stretches, and each run's exit gap on the
autograd thread above the same median. Steps: NVTX ranges "step N", the
first one left out (warm-up), as `steps` does for this workload.

usage: python3 bench/recompute_crosscheck.py TRACE.sqlite
"""
import bisect
import collections
import sqlite3
import statistics
import sys


def main(path):
    db = sqlite3.connect(path)
    steps = db.execute("SELECT n.start_ns, n.end_ns FROM nvtx n JOIN strings s ON s.id = n.name_id "
                       "WHERE s.value LIKE 'step %' ORDER BY 1").fetchall()
    calls = db.execute("SELECT start_ns, end_ns, tid, correlation FROM api ORDER BY start_ns").fetchall()
    kern = {r[0]: r[1:] for r in db.execute(
        "SELECT correlation, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, start_ns, end_ns "
        "FROM kernels")}
    by_tid = collections.defaultdict(list)
    for c in calls:
        by_tid[c[2]].append(c)
    pos = {}
    for tid, cs in by_tid.items():
        for k, c in enumerate(cs):
            pos[c[3]] = k
    tot = collections.Counter()
    inner, bounds, exits, run_starts = [], {}, {}, set()
    nsteps = 0
    for st, en in steps[1:]:
        launches = [c for c in calls if st <= c[0] < en and c[3] in kern]
        if not launches:
            continue
        main_tid = launches[0][2]
        fwd = [c for c in launches if c[2] == main_tid]
        other_t = sorted(c[0] for c in launches if c[2] != main_tid)
        key = lambda c: kern[c[3]][:7]
        fkeys = [key(c) for c in fwd]
        at = collections.defaultdict(list)
        for j, k in enumerate(fkeys):
            at[k].append(j)
        paired = [False] * len(fwd)
        any_run = False
        for tid in sorted({c[2] for c in launches if c[2] != main_tid}):
            seq = [c for c in launches if c[2] == tid]
            skeys = [key(c) for c in seq]
            i = 0
            while i < len(seq):
                best = 0
                for j in at.get(skeys[i], [])[:256]:
                    n = 0
                    while i + n < len(seq) and j + n < len(fwd) and skeys[i + n] == fkeys[j + n]:
                        n += 1
                    best = max(best, n)
                if best < 4 or len({k[0] for k in skeys[i:i + best]}) < 3:
                    i += 1
                    continue
                any_run = True
                tot["runs"] += 1
                tot["kernels"] += best
                tot["gpu"] += sum(kern[c[3]][8] - kern[c[3]][7] for c in seq[i:i + best])
                cs = by_tid[tid]
                p0, p1 = pos[seq[i][3]], pos[seq[i + best - 1][3]]
                prev_in = p0 > 0 and cs[p0 - 1][0] >= launches[0][0]
                run_starts.add((tid, cs[p0 - 1][1] if prev_in else cs[p0][0]))
                tot["host"] += cs[p1][1] - (cs[p0 - 1][1] if prev_in else cs[p0][0])
                # The re-run's exit: the gap to the thread's next call, if in the step.
                if p1 + 1 < len(cs) and cs[p1][1] < cs[p1 + 1][0] <= launches[-1][0]:
                    exits[(tid, cs[p1][1])] = cs[p1 + 1][0] - cs[p1][1]
                for j in reversed(at[skeys[i]]):
                    if j + best <= len(fwd) and not any(paired[j:j + best]) and fkeys[j:j + best] == skeys[i:i + best]:
                        for q in range(j, j + best):
                            paired[q] = True
                        ms = by_tid[main_tid]
                        q0, q1 = pos[fwd[j][3]], pos[fwd[j + best - 1][3]]
                        inner.extend(ms[q][0] - ms[q - 1][1] for q in range(q0 + 1, q1 + 1))
                        for q in (q0, q1 + 1):
                            if q == 0 or q >= len(ms):
                                continue
                            a, b = ms[q - 1][1], ms[q][0]
                            o = bisect.bisect_right(other_t, a)
                            if o < len(other_t) and other_t[o] < b:
                                continue
                            bounds[a] = b - a
                        break
                i += best
        nsteps += any_run
    med = statistics.median_low(inner) if inner else 0
    excess = sum(g - med for g in bounds.values() if g > med)
    # An exit that runs into the next recompute run is that run's time.
    excess_bwd = sum(g - med for k, g in exits.items() if g > med and k not in run_starts)
    n = max(nsteps, 1)
    print(f"steps with recompute: {nsteps}; per step: runs {tot['runs'] / n:.0f}, kernels {tot['kernels'] / n:.0f}, "
          f"GPU {tot['gpu'] / n / 1e6:.2f} ms, autograd thread {tot['host'] / n / 1e6:.2f} ms, "
          f"checkpoint entry/exit above the median gap ({med / 1e3:.2f} us) {excess / n / 1e6:.2f} ms, "
          f"recomputes' exits in the backward {excess_bwd / n / 1e6:.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1])
