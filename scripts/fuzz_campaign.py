#!/usr/bin/env python3
"""A fuzz campaign over every command that reads traces, and the Python API (issue 36).

Mutates small valid traces (the bundled fixtures) and runs stepscope's trace readers
on each mutant, recording what must never happen on a trace under 50 MB:

  crash      killed by a signal (SIGSEGV, SIGABRT, ...)
  timeout    still running after --timeout seconds (default 10)
  rss        peak RSS over --rss-mb (default 2048), or "out of memory" said
  exit       an exit code other than 0 or 2 (1 only where the command documents it)
  message    exit 2 without exactly one "error:" line on stderr, or stderr lines that
             are not stepscope's (a library's raw message, "terminate called", ...)
  python     the Python API raised anything but StepscopeError

Mutations (1-3 per mutant, SQL ones first, then byte-level ones): a dropped table or
column, random hostile values in random rows (NULL, INT64_MIN/MAX, NaN-ish floats,
100 kB strings, blobs, bidi controls), rows deleted or duplicated, meta and strings
rewritten; then byte flips, a page overwritten with random bytes or zeros, two pages
swapped, truncation (at a page boundary or not), garbage appended. The foreign
importers' inputs (an nsys SQLite export and torch.profiler JSON) get the same
byte-level mutations and, for the export, the SQL ones.

  scripts/fuzz_campaign.py --stepscope build/bin/stepscope --runs 10000 -j 2 --out /tmp/fc

Each run is a line of OUT/runs.jsonl; OUT/summary.json groups the defects by command,
kind and the first line of stderr; a defect's mutant is kept in OUT/defects/. Exit 1
when a defect was found. Deterministic for a given --seed (up to timing).
"""
import argparse
import collections
import gzip
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Small valid stepscope traces (captured on a GPU, by the NVTX tracer, imported).
TRACE_FIXTURES = [
    "tests/fixtures/sample/sample.sqlite",
    "tests/fixtures/schema/v1.5_host.sqlite.gz",
    "tests/fixtures/schema/v1.2_nvtx_app.sqlite.gz",
    "tests/fixtures/gpu/h100/tiny_sync.sqlite.gz",
    "tests/fixtures/gpu/h200_ddp_loader_r0_steps12_20.sqlite.gz",
    "tests/fixtures/gpu/h200_pm_small_fp32_s2_7.sqlite.gz",  # gpu_metrics rows (issue 38)
]
NSYS_FIXTURES = ["tests/fixtures/public/nsys/fuser_h100_report1.sqlite"]
KINETO_FIXTURES = [
    "tests/fixtures/public/hta/critical_path_cuda_event_sync_event_sync_trace.json.gz",
    "tests/fixtures/public/hta/with_gpu_user_annotation_step_based_trace_2543932.json.gz",
    "tests/fixtures/public/hta/triton_example_triton_example.json.gz",
]

# Every command that reads a trace, with the option sets worth reaching. {t}: the
# mutant, {orig}: its unmutated fixture, {o}: an output path, {s}: a mutated summary.
COMMANDS = {
    "stats": ["stats {t}", "stats -r all --format json {t}", "stats -r nvtx_pace {t}",
              "stats -r cuda_gpu_kern_pace --format csv {t}", "stats --step 1 -r nvtx_sum {t}",
              "stats -r python_hotspots -r thread_states -r osrt_sum {t}",
              "stats -r um_sum -r um_total_sum -r um_step_share {t}",
              "stats --time-range 0:1s -r gpu_time_util {t}"],
    "analyze": ["analyze {t}", "analyze --all --format json {t}"],
    "whatif": ["whatif {t}", "whatif --remove-sync all --prefetch --pin {t}",
               "whatif --graph steps --batch 2 --format json {t}"],
    "steps": ["steps {t}", "steps --kernels --format csv {t}"],
    "ranks": ["ranks {t} {orig}", "ranks {s} {so}"],
    "summarize": ["summarize -o {o}.json {t}"],
    "export": ["export {t} -o {o}.pftrace", "export --timeline-format chrome {t} -o {o}.json"],
    "report": ["report {t} -o {o}.html", "report {orig} {t} -o {o}.html"],
    "memory": ["memory {t}", "memory --timeline --max-points 100 {t}",
               "memory --format json {t}"],
    "roofline": ["roofline --from {t}"],
    "mfu": ["mfu {t}", "mfu --format json {t}"],
    "diff": ["diff {orig} {t}", "diff --format json {t} {orig}"],
    "import": ["import {n} -o {o}.sqlite", "import {k} -o {o}.sqlite"],
    "python": ["python"],
}

NASTY_VALUES = [None, 0, -1, 1, 2**63 - 1, -2**63, 2**31, -2**31 - 1, 2**53 + 1, 1e308, -1e308,
                3.5, -0.0, "", "abc", "x" * 100000, "step 1", "step -5", "\u202eevil\u202c",
                "%s%n%x", "\x00\x01", b"\x00\xff\xfe", "1e999", "-9223372036854775808", "NaN",
                "{\"a\": [", "\\u0000", "9" * 40]

PY_WORKER = r"""
import json, os, sys, time, traceback
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
import stepscope
from stepscope import StepscopeError
for path in sys.argv[2:]:
    t0 = time.time()
    bad = []
    try:
        tr = stepscope.open(path)
    except StepscopeError:
        tr = None
    except BaseException as e:
        tr = None
        bad.append("open: " + type(e).__name__ + ": " + str(e)[:300] + " | " +
                   traceback.format_exc().strip().splitlines()[-3][:200])
    if tr is not None:
        calls = [("origin_ns", lambda: tr.origin_ns), ("kernels", tr.kernels), ("memcpy", tr.memcpy),
                 ("api", tr.api), ("nvtx", tr.nvtx), ("gpu_ops", tr.gpu_ops),
                 ("steps_sql", tr.steps_sql), ("memory", tr.memory), ("steps", tr.steps),
                 ("gpu_metrics", tr.gpu_metrics), ("mfu", tr.mfu),
                 ("stats", lambda: tr.stats("cuda_gpu_kern_sum")), ("findings", tr.findings),
                 ("sql", lambda: tr.sql("SELECT * FROM meta"))]
        for name, fn in calls:
            try:
                r = fn()
                if hasattr(r, "to_string"):
                    # Shown as a notebook shows a frame (repr: 60 rows, truncated cells):
                    # an unbounded to_string() of 100 kB names on every row is rows x 100 kB
                    # of text in any pandas program, not a reader's cost.
                    r.to_string(max_rows=60, max_colwidth=200)
            except StepscopeError:
                pass
            except BaseException as e:
                bad.append(name + ": " + type(e).__name__ + ": " + str(e)[:300].replace("\n", " "))
        try:
            tr.close()
        except BaseException as e:
            bad.append("close: " + type(e).__name__ + ": " + str(e)[:200])
    print(json.dumps({"path": path, "secs": time.time() - t0, "bad": bad}), flush=True)
"""


BIG = 50 << 20  # the campaign's bounds are for traces under 50 MB


def unpack(src, dst_dir):
    path = os.path.join(ROOT, src)
    name = os.path.basename(src)
    if name.endswith(".gz") and not name.endswith(".json.gz"):
        out = os.path.join(dst_dir, name[:-3])
        with gzip.open(path, "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
    else:
        out = os.path.join(dst_dir, name)
        shutil.copyfile(path, out)
    return out


# -- mutations ---------------------------------------------------------------------------


def sql_mutation(rng, path, log):
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA legacy_alter_table=ON")
        tables = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        if not tables:
            return
        t = rng.choice(tables)
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]
        op = rng.choice(["drop_table", "drop_column", "values", "values", "values", "values",
                         "delete", "duplicate", "meta", "strings", "strings"])
        if op == "drop_table":
            db.execute(f'DROP TABLE "{t}"')
        elif op == "drop_column" and cols:
            c = rng.choice(cols)
            try:
                db.execute(f'ALTER TABLE "{t}" DROP COLUMN "{c}"')
            except sqlite3.Error:
                db.execute(f'ALTER TABLE "{t}" RENAME COLUMN "{c}" TO "{c}_gone"')
            log.append(f"{op} {t}.{c}")
            db.commit()
            return
        elif op == "values" and cols:
            c = rng.choice(cols)
            v = rng.choice(NASTY_VALUES)
            n = db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
            k = n if rng.random() < 0.2 else rng.randint(1, max(1, min(n, 50)))
            db.execute(f'UPDATE OR IGNORE "{t}" SET "{c}" = ? WHERE rowid IN '
                       f'(SELECT rowid FROM "{t}" ORDER BY random() LIMIT ?)', (v, k))
            log.append(f"{op} {t}.{c}={v!r:.40} x{k}")
            db.commit()
            return
        elif op == "delete":
            db.execute(f'DELETE FROM "{t}" WHERE rowid IN (SELECT rowid FROM "{t}" '
                       f'ORDER BY random() LIMIT ?)', (rng.choice([1, 5, 100, 10**9]),))
        elif op == "duplicate":
            db.execute(f'INSERT OR IGNORE INTO "{t}" SELECT * FROM "{t}" LIMIT 50')
        elif op == "meta" and "meta" in tables:
            keys = [r[0] for r in db.execute("SELECT key FROM meta")]
            if keys:
                k = rng.choice(keys)
                v = rng.choice(NASTY_VALUES)
                db.execute("UPDATE meta SET value = ? WHERE key = ?", (v, k))
                log.append(f"meta {k}={v!r:.40}")
                db.commit()
                return
        elif op == "strings" and "strings" in tables:
            v = rng.choice(["", "x" * 200000, "\u202e", "step 1", "ProfilerStep#1", "(", "[",
                            "nccl" * 1000, None, 7, b"\xff\xfe"])
            db.execute("UPDATE OR IGNORE strings SET value = ? WHERE id IN "
                       "(SELECT id FROM strings ORDER BY random() LIMIT ?)",
                       (v, rng.choice([1, 3, 20, 10**9])))
            log.append(f"strings={v!r:.40}")
            db.commit()
            return
        log.append(f"{op} {t}")
        db.commit()
    except sqlite3.Error as e:
        log.append(f"sql-failed {e}")
    finally:
        db.close()


def byte_mutation(rng, path, log):
    size = os.path.getsize(path)
    if size == 0:
        return
    page = 4096
    with open(path, "r+b") as f:
        op = rng.choice(["flip", "flip", "page_random", "page_zero", "swap", "truncate", "append"])
        if op == "flip":
            n = rng.choice([1, 2, 8, 50])
            for _ in range(n):
                off = rng.randrange(size) if rng.random() < 0.7 else rng.randrange(min(size, 100))
                f.seek(off)
                b = f.read(1)
                f.seek(off)
                f.write(bytes([(b[0] if b else 0) ^ (1 << rng.randrange(8))]))
            log.append(f"flip x{n}")
        elif op in ("page_random", "page_zero"):
            p = rng.randrange(max(1, size // page))
            f.seek(p * page)
            f.write(os.urandom(page) if op == "page_random" else bytes(page))
            log.append(f"{op} {p}")
        elif op == "swap" and size >= 2 * page:
            a, b = rng.sample(range(size // page), 2)
            f.seek(a * page)
            pa = f.read(page)
            f.seek(b * page)
            pb = f.read(page)
            f.seek(a * page)
            f.write(pb)
            f.seek(b * page)
            f.write(pa)
            log.append(f"swap {a} {b}")
        elif op == "truncate":
            cut = rng.randrange(size) if rng.random() < 0.5 else page * rng.randrange(max(1, size // page))
            f.truncate(cut)
            log.append(f"truncate {cut}")
        else:
            f.seek(0, 2)
            f.write(os.urandom(rng.randrange(1, 3 * page)))
            log.append("append")


def mutate_sqlite(rng, src, dst, log, sql_ok=True):
    shutil.copyfile(src, dst)
    kinds = rng.choice(["sql", "sql", "bytes", "both"]) if sql_ok else "bytes"
    if kinds in ("sql", "both"):
        for _ in range(rng.randint(1, 3)):
            sql_mutation(rng, dst, log)
    if kinds in ("bytes", "both"):
        for _ in range(rng.randint(1, 2)):
            byte_mutation(rng, dst, log)


def mutate_json(rng, src, dst, log):
    with gzip.open(src, "rb") as f:
        data = bytearray(f.read())
    op = rng.choice(["flip", "truncate", "splice", "value"])
    if op == "flip":
        for _ in range(rng.choice([1, 5, 50])):
            i = rng.randrange(len(data))
            data[i] = rng.choice(b'{}[]",:0123456789-eE.\\ntf\x00\xff')
    elif op == "truncate":
        data = data[:rng.randrange(len(data))]
    elif op == "splice":
        a, b = sorted(rng.sample(range(len(data)), 2))
        data = data[:a] + data[b:]
    else:
        for key in (b'"ts": ', b'"dur": ', b'"pid": ', b'"tid": ', b'"id": '):
            i = data.find(key, rng.randrange(len(data)))
            if i >= 0:
                j = i + len(key)
                data[j:j] = rng.choice([b"-9223372036854775808", b"1e308", b"-1", b"\"x\"", b"null",
                                        b"18446744073709551616", b"[", b"NaN"])
    log.append("json " + op)
    with gzip.open(dst, "wb") as f:
        f.write(bytes(data))


# -- running -----------------------------------------------------------------------------


def limit_memory():
    # A hard cap that keeps the machine alive; the finding is RSS over --rss-mb (or an
    # "out of memory" said below this cap).
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    os.setsid()


def run_proc(argv, timeout, env=None, cwd=None):
    t0 = time.time()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=limit_memory, env=env, cwd=cwd)
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    timer = threading.Timer(timeout, kill)
    timer.start()
    out_chunks, err_chunks = [], []
    t_out = threading.Thread(target=lambda: out_chunks.append(p.stdout.read()))
    t_out.start()
    err = p.stderr.read()
    t_out.join()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stdout.close()
    p.stderr.close()
    return (p.returncode, time.time() - t0, ru.ru_maxrss // 1024, out_chunks[0] if out_chunks else b"",
            err, bool(timed_out))


def classify(cmd, rc, secs, rss_mb, err, timed_out, args, big=False):
    problems = []
    text = err.decode("utf-8", "replace")
    lines = [l for l in text.splitlines() if l.strip()]
    # The bounds hold for traces under 50 MB (a mutant can grow: 100 kB strings in every row).
    if timed_out and not big:
        problems.append("timeout")
    elif rc < 0 and not timed_out:
        problems.append("crash")
    if not big and (rss_mb > args.rss_mb or "out of memory" in text):
        problems.append("rss")
    if not timed_out and rc >= 0:
        allowed = {0, 2}
        if rc not in allowed:
            problems.append("exit")
        errors = [l for l in lines if "error:" in l]
        if rc == 2 and len(errors) != 1:
            problems.append("message")
        # import's timing line ("import: N bytes parsed in ...") is documented output.
        foreign = [l for l in lines if not l.startswith("stepscope")
                   and not (cmd == "import" and l.startswith("import: "))]
        if foreign:
            problems.append("message")
    return sorted(set(problems))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stepscope", default=os.path.join(ROOT, "build/bin/stepscope"))
    ap.add_argument("--runs", type=int, default=10000, help="command runs in all (default 10000)")
    ap.add_argument("--per-mutant", type=int, default=4, help="commands run on each mutant")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--rss-mb", type=int, default=2048)
    ap.add_argument("--minutes", type=float, default=0, help="stop starting runs after this long")
    ap.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated subset")
    ap.add_argument("--out", default=None)
    ap.add_argument("--python", default=None,
                    help="the Python that runs the API (default: the first of /usr/bin/python3 and "
                         "this one that imports pandas)")
    args = ap.parse_args()
    stepscope = os.path.abspath(args.stepscope)
    out = args.out or tempfile.mkdtemp(prefix="stepscope-fuzz-campaign-")
    os.makedirs(os.path.join(out, "defects"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="stepscope-fc-work-")
    fixtures = os.path.join(work, "fixtures")
    os.makedirs(fixtures)
    traces = [unpack(f, fixtures) for f in TRACE_FIXTURES]
    nsys = [unpack(f, fixtures) for f in NSYS_FIXTURES]
    kineto = [os.path.join(ROOT, f) for f in KINETO_FIXTURES]
    # The summaries of the unmutated fixtures, for `ranks` on a mutated summary.
    summaries = {}
    for t in traces:
        s = t + ".summary.json"
        subprocess.run([stepscope, "summarize", "-q", "-f", "-o", s, t], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if os.path.exists(s):
            summaries[t] = s
    commands = [c for c in args.commands.split(",") if c]
    env = dict(os.environ, STEPSCOPE_BIN=stepscope)
    env.pop("STEPSCOPE_OUTPUT", None)
    python = args.python
    for cand in ([python] if python else ["/usr/bin/python3", sys.executable]):
        if subprocess.run([cand, "-c", "import pandas"], stderr=subprocess.DEVNULL).returncode == 0:
            python = cand
            break
    else:
        sys.exit("fuzz_campaign: no Python with pandas for the API runs (--python)")
    py_worker = os.path.join(work, "py_worker.py")
    with open(py_worker, "w") as f:
        f.write(PY_WORKER)

    lock = threading.Lock()
    runs_log = open(os.path.join(out, "runs.jsonl"), "w")
    counts = collections.Counter()
    defects = collections.OrderedDict()
    started = time.time()
    n_mutants = (args.runs + args.per_mutant - 1) // args.per_mutant

    def record(entry, mutant):
        with lock:
            runs_log.write(json.dumps(entry) + "\n")
            counts[entry["cmd"]] += 1
            counts["total"] += 1
            for p in entry["problems"]:
                first = entry.get("first", "")
                key = f"{entry['cmd']}|{p}|{first[:120]}"
                if key not in defects:
                    keep = os.path.join(out, "defects", f"{len(defects):03d}_" + os.path.basename(mutant))
                    shutil.copyfile(mutant, keep) if os.path.exists(mutant) else None
                    defects[key] = {"n": 0, "example": entry, "kept": keep}
                defects[key]["n"] += 1
                counts["defect_runs"] += 1

    def one_mutant(i):
        if args.minutes and time.time() - started > args.minutes * 60:
            return
        rng = random.Random(args.seed * 1_000_003 + i)
        d = tempfile.mkdtemp(dir=work)
        try:
            chosen = [commands[(i * args.per_mutant + k) % len(commands)] for k in range(args.per_mutant)]
            orig = rng.choice(traces)
            log = []
            mutant = os.path.join(d, "m.sqlite")
            mutate_sqlite(rng, orig, mutant, log)
            kin = os.path.join(d, "k.json.gz")
            nsy = os.path.join(d, "n.sqlite")
            summ = os.path.join(d, "s.summary.json")
            if "import" in chosen:
                klog = []
                mutate_json(rng, rng.choice(kineto), kin, klog)
                mutate_sqlite(rng, rng.choice(nsys), nsy, klog)
            so = summaries.get(orig, "")
            if so and "ranks" in chosen:
                with open(so, "rb") as f:
                    data = bytearray(f.read())
                for _ in range(rng.choice([1, 3, 20])):
                    j = rng.randrange(len(data))
                    data[j] = rng.choice(b'{}[]",:0123456789-eE.\x00\xff')
                if rng.random() < 0.3:
                    data = data[:rng.randrange(len(data))]
                with open(summ, "wb") as f:
                    f.write(data)
            py_paths = []
            for k, cmd in enumerate(chosen):
                if cmd == "python":
                    py_paths.append(mutant)
                    continue
                tmpl = rng.choice(COMMANDS[cmd])
                if "{s}" in tmpl and not so:
                    tmpl = COMMANDS[cmd][0]
                argv = [stepscope] + [w.format(t=mutant, orig=orig, o=os.path.join(d, f"out{k}"),
                                               s=summ, so=so, n=nsy, k=kin)
                                      for w in tmpl.split()]
                if cmd != "import" and rng.random() < 0.3:
                    argv.insert(2, "-f")
                rc, secs, rss, _, err, to = run_proc(argv, args.timeout, env=env, cwd=d)
                inputs = [p for p in (mutant, summ, nsy, kin) if p in argv]
                big = any(os.path.getsize(p) > BIG for p in inputs if os.path.exists(p))
                problems = classify(cmd, rc, secs, rss, err, to, args, big)
                first = err.decode("utf-8", "replace").strip().splitlines()
                first = [l for l in first if "error" in l or not l.startswith("stepscope")] or first
                target = mutant if "{t}" in tmpl else (summ if "{s}" in tmpl else
                                                       (nsy if "{n}" in tmpl else kin))
                record({"mutant": i, "cmd": cmd, "argv": tmpl, "rc": rc, "secs": round(secs, 3), "big": big,
                        "rss_mb": rss, "mutations": log, "problems": problems,
                        "first": first[0][:300] if first else ""}, target)
            if py_paths:
                rc, secs, rss, so_out, err, to = run_proc(
                    [python, py_worker, ROOT] + py_paths, args.timeout * 3, env=env, cwd=d)
                results = [json.loads(l) for l in so_out.decode("utf-8", "replace").splitlines()
                           if l.startswith("{")]
                for p in py_paths:
                    res = next((r for r in results if r["path"] == p), None)
                    problems, first = [], ""
                    if res is None:
                        problems = ["timeout"] if to else ["crash"]
                        first = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                        first = first[0][:300]
                    else:
                        if res["bad"]:
                            problems.append("python")
                            first = res["bad"][0][:300]
                        if res["secs"] > args.timeout:
                            problems.append("timeout")
                    big = os.path.exists(p) and os.path.getsize(p) > BIG
                    if big:
                        problems = [x for x in problems if x not in ("timeout", "rss")]
                    elif rss > args.rss_mb:
                        problems.append("rss")
                    record({"mutant": i, "cmd": "python", "argv": "python api", "rc": rc,
                            "secs": round(res["secs"] if res else secs, 3), "rss_mb": rss,
                            "mutations": log, "problems": problems, "first": first}, p)
        except Exception:
            with lock:
                print(f"fuzz_campaign: harness error on mutant {i}:\n{traceback.format_exc()}",
                      file=sys.stderr)
        finally:
            shutil.rmtree(d, ignore_errors=True)
            with lock:
                done = counts["total"]
                if done and done % 500 < args.per_mutant:
                    print(f"fuzz_campaign: {done} runs, {len(defects)} distinct defects, "
                          f"{time.time() - started:.0f} s", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        list(ex.map(one_mutant, range(n_mutants)))
    runs_log.close()
    wall = time.time() - started
    summary = {"runs": counts["total"], "per_command": {c: counts[c] for c in COMMANDS},
               "defect_runs": counts["defect_runs"], "distinct_defects": len(defects),
               "wall_s": round(wall, 1), "seed": args.seed, "jobs": args.jobs,
               "defects": [dict(key=k, **v) for k, v in defects.items()]}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    print(f"fuzz_campaign: {counts['total']} runs in {wall:.0f} s ({args.jobs} jobs, seed {args.seed}); "
          f"{counts['defect_runs']} runs with a defect, {len(defects)} distinct; results in {out}")
    for k, v in defects.items():
        print(f"  {v['n']:5d}  {k}  [{v['kept']}]")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
