#!/usr/bin/env python3
"""Independent reference values for a public trace, from the raw file alone.

Standard library only; shares no code with stepscope. For a torch.profiler
(Kineto) JSON (.json/.json.gz) or an Nsight Systems SQLite export it prints
one JSON object:

  kernels, memcpy, memset, api      GPU activities and CUDA API calls in the file
  kernel_ns                         sum of kernel durations, ns (exact: from the decimal text)
  busy_ns                           union of kernel/memcpy/memset intervals, all devices, ns
  copies_async / copies_sync / copies_unknown
                                    memcpy+memset by the call that issued them (correlation id):
                                    a name with "Async" -> async; cudaMemcpy*/cudaMemset*/cuMemcpy*/
                                    cuMemset* without it -> sync; no call -> unknown
  offload_bytes                     bytes of async H2D/D2H copies to/from pinned memory
  steps                             step ranges by the step definition of docs/steps.md, written
                                    again here: "step N" (any case; separators " _#:-"), else
                                    "ProfilerStep#N"; host side only (never gpu_user_annotation);
                                    positive length; the thread with the most; nested/overlapping
                                    ranges keep the earliest
  event_query_syncs                 sync events issued by cudaEventQuery/cudaStreamQuery
  sched_rows, sched_running_ns      nsys: SCHED_EVENTS as per-thread intervals between consecutive events
                                    that alternate in/out (in->out = running); count, and running ns
  host_thread_names                 nsys: {tid: name} of the threads with SCHED_EVENTS rows (ThreadNames)
  may_fire / must_not_fire          rules the evidence allows / forbids (see docs/rules.md)

usage: reference.py TRACE
"""
import decimal
import gzip
import json
import re
import sqlite3
import sys

STEP_RE = re.compile(r"^\s*step[ _#:\-]*(\d{1,18})\s*$", re.IGNORECASE)
PROFILER_RE = re.compile(r"^ProfilerStep#(\d{1,18})$")
OLD_CATS = {"Kernel": "kernel", "Runtime": "cuda_runtime", "Driver": "cuda_driver", "Memcpy": "gpu_memcpy",
            "Memset": "gpu_memset", "Operator": "cpu_op", "Python": "python_function"}


def call_class(name):
    if name is None:
        return "unknown"
    if "async" in name.lower() or name.startswith(("cudaGraphLaunch", "cuGraphLaunch")):
        return "async"
    if name.lower().startswith(("cudamemcpy", "cudamemset", "cumemcpy", "cumemset")):
        return "sync"
    return "unknown"


def union_len(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def pick_steps(ranges):
    """ranges: (name, start, end, tid). Returns the step list [(number, start, end)]."""
    by_kind = {1: [], 2: []}
    for name, s, e, tid in ranges:
        m = STEP_RE.match(name)
        kind = 1 if m else 0
        if not m:
            m = PROFILER_RE.match(name)
            kind = 2 if m else 0
        if kind and e > s:
            by_kind[kind].append((s, -e, tid, int(m.group(1))))
    v = sorted(by_kind[1] or by_kind[2])
    if not v:
        return []
    count = {}
    for r in v:
        count[r[2]] = count.get(r[2], 0) + 1
    tid = v[0][2]
    for r in v:
        if count[r[2]] > count[tid]:
            tid = r[2]
    out = []
    for s, neg_e, t, n in v:
        if t != tid or (out and s < out[-1][2]):
            continue
        out.append((n, s, -neg_e))
    return out


def ns(x):  # us with ns digits -> ns, rounded half away from zero as stepscope documents
    return int((decimal.Decimal(x) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def kineto(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=decimal.Decimal)
    events = doc.get("traceEvents", [])
    r = dict(kernels=0, memcpy=0, memset=0, api=0, kernel_ns=0)
    runtime = {}
    gpu, copies, steps_in, syncs = [], [], [], []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = OLD_CATS.get(e.get("cat"), e.get("cat"))
        args = e.get("args") or {}
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = ns(e["ts"])
            d = ns(e["dur"])
            gpu.append((s, s + d))
            if cat == "kernel":
                r["kernels"] += 1
                r["kernel_ns"] += d
            else:
                r["memcpy" if cat == "gpu_memcpy" else "memset"] += 1
                copies.append((args.get("correlation"), e.get("name", ""), int(args.get("bytes", 0) or 0)))
        elif cat in ("cuda_runtime", "cuda_driver"):
            r["api"] += 1
            runtime[args.get("correlation")] = e.get("name", "")
        elif cat == "cuda_sync":
            syncs.append(args.get("correlation"))
        elif cat in ("user_annotation", "cpu_op", "python_function"):
            s = ns(e["ts"])
            steps_in.append((e.get("name", ""), s, s + ns(e["dur"]), str(e.get("tid"))))
    finish(r, gpu, steps_in)
    cls = [call_class(runtime.get(c)) if c else "unknown" for c, _, _ in copies]
    r["copies_async"], r["copies_sync"], r["copies_unknown"] = (cls.count(k) for k in ("async", "sync", "unknown"))
    r["offload_bytes"] = sum(b for (c, name, b), k in zip(copies, cls) if k == "async" and
                             re.match(r"Memcpy (HtoD|DtoH) \((Pinned -> Device|Device -> Pinned)\)", name))
    r["event_query_syncs"] = sum(1 for c in syncs if runtime.get(c) in ("cudaEventQuery", "cudaStreamQuery"))
    return rules(r)


def nsys(path):
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    q = lambda sql: db.execute(sql).fetchall()
    r = dict(kernels=0, memcpy=0, memset=0, api=0, kernel_ns=0)
    gpu = []
    for t, key in (("CUPTI_ACTIVITY_KIND_KERNEL", "kernels"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
                   ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if t in tables:
            rows = q(f"SELECT start, end FROM {t}")
            r[key] = len(rows)
            gpu += rows
            if key == "kernels":
                r["kernel_ns"] = sum(e - s for s, e in rows)
    names = {}
    for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
        if t in tables:
            rows = q(f"SELECT r.correlationId, s.value FROM {t} r LEFT JOIN StringIds s ON s.id = r.nameId")
            r["api"] += len(rows)
            names.update(rows)
    cls = []
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            cls += [call_class(names.get(c)) for (c,) in q(f"SELECT correlationId FROM {t}")]
    r["copies_async"], r["copies_sync"], r["copies_unknown"] = (cls.count(k) for k in ("async", "sync", "unknown"))
    r["offload_bytes"] = 0  # copy/memory kinds are enums: not needed for this corpus (no large copies)
    ranges = []
    if "NVTX_EVENTS" in tables:
        ranges = q("SELECT coalesce(n.text, s.value, ''), n.start, n.end, n.globalTid FROM NVTX_EVENTS n "
                   "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60, 70) AND n.end IS NOT NULL")
    finish(r, gpu, [(a, b, c, str(d)) for a, b, c, d in ranges])
    if "SCHED_EVENTS" in tables:
        rows = q("SELECT globalTid, start, isSchedIn FROM SCHED_EVENTS "
                 "WHERE globalTid IS NOT NULL AND start IS NOT NULL")
        by_tid = {}
        for g, t, i in rows:
            by_tid.setdefault(g, []).append((t, 1 if i else 0))
        n = running = 0
        for g, events in by_tid.items():
            events.sort(key=lambda e: e[0])  # stable: file order among equal times
            for (t0, in0), (t1, in1) in zip(events, events[1:]):
                if in0 != in1:
                    n += 1
                    running += (t1 - t0) if in0 else 0
        r["sched_rows"], r["sched_running_ns"] = n, running
        tids = {g & 0xFFFFFF for g in by_tid}
        names = {}
        if "ThreadNames" in tables:
            for g, v in q("SELECT t.globalTid, s.value FROM ThreadNames t LEFT JOIN StringIds s ON s.id = t.nameId"):
                if g is not None and (g & 0xFFFFFF) in tids:
                    names[str(g & 0xFFFFFF)] = v or ""
        r["host_thread_names"] = names
    r["event_query_syncs"] = 0
    if "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" in tables:
        r["event_query_syncs"] = sum(1 for (c,) in q("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
                                     if (names.get(c) or "").startswith(("cudaEventQuery", "cudaStreamQuery")))
    return rules(r)


def finish(r, gpu, ranges):
    r["busy_ns"] = union_len(gpu)
    steps = pick_steps(ranges)
    r["steps"] = len(steps)
    r["step_numbers"] = [n for n, _, _ in steps][:8]


def rules(r):
    # What the evidence allows. sync_memcpy needs a copy issued by a synchronous call;
    # offload_copies needs async pinned host<->device copies; host_sync never on a query.
    r["must_not_fire"] = []
    if r["copies_sync"] == 0:
        r["must_not_fire"].append("sync_memcpy")
    r["may_fire"] = ["data_loading", "host_sync", "launch_bound", "host_wait", "pageable_memcpy", "fp32_gemm",
                     "memory_capacity"] + (["sync_memcpy"] if r["copies_sync"] else []) + \
                    (["offload_copies"] if r.get("offload_bytes") or r["copies_unknown"] else [])
    return r


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    head = open(path, "rb").read(16)
    r = nsys(path) if head.startswith(b"SQLite format 3") else kineto(path)
    print(json.dumps(r, sort_keys=True))


if __name__ == "__main__":
    main()
