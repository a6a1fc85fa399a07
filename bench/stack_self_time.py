#!/usr/bin/env python3
"""Figure: what one Python stack at a blocking CUDA call costs the traced program (issue 33,
docs/PERFORMANCE.md "Where stepscope's own part goes").

The tracer times its own handlers on the program's thread and hands that time to the thread's
next API record (`api.tracer_ns`, capture/self_time.h). Until 2026-11-28 the stack of a blocking
call was read after that call's record was written, so its cost landed in the record that follows
it on the thread; since then it is read at the call's entry, before its start time, and lands in
the stacked call's own record. Per trace: the median and sum of `tracer_ns` of the records with a
stack (`api_callsite`), of the records that follow one, and of the others; and per API name, the
records, their mean self time and its total.

  python3 bench/stack_self_time.py TRACE.sqlite [TRACE.sqlite ...]
"""
import sqlite3
import statistics
import sys


def after_stacks(db):
    stacked = {r[0] for r in db.execute("select correlation from api_callsite")}
    own, after, other = [], [], []
    for (tid,) in db.execute("select distinct tid from api"):
        prev = None
        for corr, t in db.execute("select correlation, tracer_ns from api where tid = ? order by start_ns", (tid,)):
            (own if corr in stacked else after if prev in stacked else other).append(t or 0)
            prev = corr
    return own, after, other


def line(label, v):
    if not v:
        return f"0 {label}"
    return f"{len(v)} {label}: median {statistics.median(v) / 1e3:.2f} us, sum {sum(v) / 1e6:.2f} ms"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        own, after, other = after_stacks(db)
        print(f"{path}: {line('records with a stack', own)}; {line('records after one', after)}; "
              f"{line('others', other)}")
        for name, n, mean_ns, total_ns in db.execute(
                "select s.value, count(*), avg(a.tracer_ns), sum(a.tracer_ns) from api a join strings s "
                "on s.id = a.name_id group by 1 order by 4 desc limit 6"):
            print(f"  {name}: {n} records, mean {mean_ns / 1e3:.2f} us, total {total_ns / 1e6:.2f} ms")


if __name__ == "__main__":
    main()
