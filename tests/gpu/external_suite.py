#!/usr/bin/env python3
"""The external scenario suite (issue 32): problem/fix pairs on loops nobody here wrote, each
predicted by `stepscope analyze` on a traced run of the problem alone (as a user gets it) and
realized by doing the fix for real.

  external_suite.py run NAME --arm ab|problem|fix [--steps N] [--rounds R]
      one process: `ab` alternates problem and fix phases of N steps, R rounds (order swapped
      every round), after a warm-up of both arms, and prints one JSON line with the ms/step of
      every phase; `problem`/`fix` run that arm only (warm-up, then N timed steps).
  external_suite.py driver --stepscope BIN --out DIR [--only a,b] [--budget-s S] [--no-realize]
      on the GPU machine: per scenario, the bare A/B process (realized saving = median problem
      phase - median fix phase), then the problem under `stepscope profile` (defaults) and
      `stepscope analyze --format json` on that trace. One JSON line per scenario in
      DIR/suite.jsonl as soon as it exists; analyze's text in DIR/analyze.txt; the traces in
      DIR/traces/. --no-realize: predictions only (reuse realized savings of an earlier run).
  external_suite.py smoke [--only a,b]
      every scenario, one step of each arm, in one process (seconds): run it first.
  external_suite.py reanalyze --stepscope BIN --results suite.jsonl --traces DIR --out NEW.jsonl
      BIN's predictions on the traces of an earlier run, with that run's realized savings (no GPU).
  external_suite.py table FILE.jsonl [FILE.jsonl ...]
      the table: realized vs predicted per scenario, the top finding, pass/fail against the
      acceptance (top finding = the expected cause; |error| <= 15%, or <= 1 ms where the realized
      saving is under 5 ms). Rows of a later file replace the predictions of an earlier one.

Timing: ms/step inside the loop, one synchronize at the start and end of each phase, none in
between (as a user's loop has none). Models are built from their configs (tests/gpu/scenarios.py).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # scenarios.py and gpukit.py, also when run by bench/overhead_phases.py (runpy)
from gpukit import JsonLines  # noqa: E402

# Accepted rule names for the cause each scenario has (a cause may be named by more than one rule
# while rules are renamed; the first is the one the docs use).
CAUSES = {
    "fp32_gemm": ("fp32_gemm",),
    "per_param_optimizer": ("per_param_optimizer",),
    "data_loading": ("data_loading",),
    "data_dependent": ("data_dependent_sync", "host_round_trip", "data_dependent", "host_sync"),
    "host_sync": ("host_sync", "sync_memcpy"),
    "pageable_memcpy": ("pageable_memcpy",),
    "trainer_fp32": ("fp32_gemm",),
}


def timed_phase(sc, fix, steps):
    import torch
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        sc.step(fix)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / steps


def cmd_run(a):
    import scenarios
    sc = scenarios.make(a.name)
    arms = {"ab": (False, True), "problem": (False,), "fix": (True,)}[a.arm]
    if not getattr(sc, "in_process", True):
        fix = arms[0]
        ms = sc.run_arm(fix, a.warmup, a.steps)
        out = {"scenario": a.name, "arm": a.arm, "problem_ms": [], "fix_ms": []}
        out["fix_ms" if fix else "problem_ms"].append(round(ms, 3))
        print("SUITE " + json.dumps(out), flush=True)
        return
    for fix in arms:
        timed_phase(sc, fix, a.warmup)
    out = {"scenario": a.name, "arm": a.arm, "problem_ms": [], "fix_ms": []}
    if a.arm == "ab":
        for r in range(a.rounds):
            for fix in ((False, True) if r % 2 == 0 else (True, False)):
                out["fix_ms" if fix else "problem_ms"].append(round(timed_phase(sc, fix, a.steps), 3))
    else:
        out["fix_ms" if arms[0] else "problem_ms"].append(round(timed_phase(sc, arms[0], a.steps), 3))
    print("SUITE " + json.dumps(out), flush=True)


def cmd_smoke(a):
    """Every scenario, one step of each arm, in one process: a broken scenario is found in
    seconds, not after the suite's first traced run."""
    import torch
    import scenarios
    for name in (a.only.split(",") if a.only else scenarios.SCENARIOS):
        t = time.perf_counter()
        try:
            sc = scenarios.make(name)
            if getattr(sc, "in_process", True):
                for fix in (False, True, False, True):
                    sc.step(fix)
            else:
                sc.run_arm(False, 1, 1)
            torch.cuda.synchronize()
            print("SMOKE ok %s %.1fs" % (name, time.perf_counter() - t), flush=True)
        except Exception as e:  # report and go on: the other scenarios still run
            print("SMOKE FAIL %s %s: %s" % (name, type(e).__name__, str(e)[:300]), flush=True)
        sc = None
        torch.cuda.empty_cache()


def suite_line(text):
    for line in text.splitlines():
        if line.startswith("SUITE "):
            return json.loads(line[6:])
    return None


def run_logged(cmd, timeout, env=None):
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or "", e.stderr or "", time.monotonic() - t


def analyze(binary, trace, extra=()):
    rc, out, err, _ = run_logged([binary, "analyze", "--format", "json", *extra, trace], 300)
    try:
        return json.loads(out), None
    except ValueError:
        return None, (err or out)[-400:]


def findings_row(doc):
    s = (doc.get("summary") or [{}])[0]
    fs = [{"rule": f["rule"], "ms": round(f.get("cost_per_step_ns", 0) / 1e6, 3),
           "reported": f.get("reported"), "title": f.get("title", "")[:160]}
          for f in doc.get("findings", [])]
    return {"steps": s.get("steps"), "median_step_ms": round(s.get("median_step_ns", 0) / 1e6, 3),
            "untraced_step_ms": round(s.get("untraced_step_ns", 0) / 1e6, 3),
            "tracer_ms_per_step": round((s.get("tracer_ns_per_step") or 0) / 1e6, 3),
            "estimated_untraced_step_ms": round((s.get("estimated_untraced_step_ns") or 0) / 1e6, 3),
            "findings": fs}


def realize(me, cls, a):
    """The bare A/B process, or for a scenario that cannot share a process, interleaved process
    pairs (problem, fix; then fix, problem; ...) merged into one A/B record."""
    if getattr(cls, "in_process", True):
        return run_logged(me + ["--arm", "ab", "--steps", str(a.steps), "--rounds", str(a.rounds)], 400)
    merged = {"problem_ms": [], "fix_ms": []}
    wall, err = 0.0, ""
    for r in range(a.pairs):
        for arm in (("problem", "fix") if r % 2 == 0 else ("fix", "problem")):
            rc, out, e, w = run_logged(me + ["--arm", arm, "--steps", str(3 * a.steps)], 400)
            wall += w
            got = suite_line(out)
            if got:
                merged["problem_ms"] += got["problem_ms"]
                merged["fix_ms"] += got["fix_ms"]
            else:
                err = e or out
    ok = merged["problem_ms"] and merged["fix_ms"]
    return 0, ("SUITE " + json.dumps(merged)) if ok else "", err, wall


def driver_one(a, name, log, text):
    import scenarios
    family, cause, problem, fix, _ = scenarios.SCENARIOS[name]
    row = {"scenario": name, "family": family, "cause": cause, "problem": problem, "fix": fix}
    me = [sys.executable, os.path.abspath(__file__), "run", name]
    if not a.no_realize:
        rc, out, err, wall = realize(me, scenarios.make_class(name), a)
        ab = suite_line(out)
        row["ab_wall_s"] = round(wall, 1)
        if ab:
            row["problem_ms"], row["fix_ms"] = ab["problem_ms"], ab["fix_ms"]
            row["realized_ms"] = round(statistics.median(ab["problem_ms"]) -
                                       statistics.median(ab["fix_ms"]), 3)
        else:
            row["ab_error"] = (err or out)[-400:]
    trace = os.path.join(a.traces or os.path.join(a.out, "traces"), name)
    rc, out, err, wall = run_logged([a.stepscope, "profile", "-q", "-f", "-o", trace] + a.profile_args.split() +
                                    ["--"] + me + ["--arm", "problem", "--steps", str(a.traced_steps)], 400)
    traced = suite_line(out)
    row["traced_ms"] = traced["problem_ms"][0] if traced else None
    row["traced_wall_s"] = round(wall, 1)
    if not traced:
        row["traced_error"] = (err or out)[-400:]
    if name in a.trace_fix.split(","):
        # The fix traced too: where the prediction misses, a diff of the two traces says why
        # (bench/fix_trace_diff.py).
        rc, out, err, wall = run_logged([a.stepscope, "profile", "-q", "-f", "-o", trace + ".fix", "--"] +
                                        me + ["--arm", "fix", "--steps", str(a.traced_steps)], 400)
        fixed = suite_line(out)
        row["traced_fix_ms"] = fixed["fix_ms"][0] if fixed else None
    doc, aerr = analyze(a.stepscope, trace + ".sqlite")
    if doc:
        row.update(findings_row(doc))
        rc, txt, terr, _ = run_logged([a.stepscope, "analyze", trace + ".sqlite"], 300)
        text.write("==== %s (%s: %s -> %s)\n%s%s\n" % (name, family, problem, fix, txt, terr))
        text.flush()
    else:
        row["analyze_error"] = aerr
    if a.window:
        row.update(traced_window(a, me, trace + ".window"))
    log.write(row)
    return row


def traced_window(a, me, trace):
    """The problem traced again with a `--steps` window (a.window "N:W": N recorded iterations
    after W untraced ones, CUPTI detached before it), then `analyze` on it twice: as the trace
    alone ("window") and priced at the untraced iterations' host speed the trace measured
    ("window_measured", `--untraced-step-ms measured`). Both predictions from one VM's run."""
    n, w = (int(x) for x in a.window.split(":"))
    rc, out, err, wall = run_logged([a.stepscope, "profile", "-q", "-f", "-o", trace, "--steps", str(n),
                                     "--warmup-steps", str(w), "--"] + me +
                                    ["--arm", "problem", "--steps", str(n + w + 4)], 400)
    got = suite_line(out)
    res = {"window_args": a.window, "window_traced_ms": got["problem_ms"][0] if got else None,
           "window_wall_s": round(wall, 1)}
    for key, extra in (("window", ()), ("window_measured", ("--untraced-step-ms", "measured"))):
        doc, aerr = analyze(a.stepscope, trace + ".sqlite", extra)
        res[key] = findings_row(doc) if doc else {"analyze_error": aerr}
    return res


def cmd_driver(a):
    import scenarios
    os.makedirs(a.traces or os.path.join(a.out, "traces"), exist_ok=True)
    names = a.only.split(",") if a.only else list(scenarios.SCENARIOS)
    log = JsonLines(os.path.join(a.out, "suite.jsonl"))
    text = open(os.path.join(a.out, "analyze.txt"), "a")
    t0 = time.monotonic()
    # A warm-up process: the first CUDA/transformers start on a fresh machine is slow.
    run_logged([sys.executable, os.path.abspath(__file__), "run", names[0], "--arm", "problem",
                "--steps", "3", "--warmup", "1"], 300)
    for name in names:
        if time.monotonic() - t0 > a.budget_s:
            log.write({"scenario": name, "skipped": "budget"})
            continue
        row = driver_one(a, name, log, text)
        print(json.dumps({k: row.get(k) for k in ("scenario", "realized_ms", "traced_ms",
                                                   "median_step_ms")}), flush=True)


def cmd_reanalyze(a):
    """Predictions of the build given by --stepscope on traces an earlier driver run recorded,
    with that run's realized savings: a pricing change measured without the GPU (the capture
    stays the old one)."""
    out = open(a.out, "w")
    for line in open(a.results):
        row = json.loads(line)
        trace = os.path.join(a.traces, row.get("scenario", "") + ".sqlite")
        if "skipped" in row or not os.path.exists(trace):
            continue
        doc, err = analyze(a.stepscope, trace, a.analyze_args.split())
        row = {k: v for k, v in row.items() if k not in ("findings", "analyze_error")}
        if doc:
            row.update(findings_row(doc))
        else:
            row["analyze_error"] = err
        row["reanalyzed"] = trace
        if a.analyze_args:
            row["analyze_args"] = a.analyze_args
        out.write(json.dumps(row) + "\n")
    out.close()


def realized_ci(row, level=0.95, draws=2000):
    """The realized saving's confidence interval: a bootstrap (fixed seed: the same table every
    time) of the median of the paired per-round differences problem - fix (the A/B process
    alternates the arms round by round, so a slow round slows both); None without pairs."""
    import random
    p, x = row.get("problem_ms") or [], row.get("fix_ms") or []
    d = [a - b for a, b in zip(p, x)]
    if len(d) < 3:
        return None
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(d, k=len(d))) for _ in range(draws))
    k = int(draws * (1 - level) / 2)
    return meds[k], meds[draws - 1 - k]


def verdict(row):
    """(top finding, predicted ms, cause right, price verdict): the price is "ok" within the
    tolerance (15%, or 1 ms where the realized saving is under 5 ms), "unresolved" where the
    realized saving's 95% interval is wider than the tolerance and holds the prediction (the
    measurement cannot tell), else "OFF"."""
    cause = CAUSES.get(row.get("cause"), (row.get("cause"),))
    fs = [f for f in row.get("findings", []) if f.get("reported") != "no"]
    top = fs[0]["rule"] if fs else "-"
    pred = next((f["ms"] for f in fs if f["rule"] in cause), None)
    real = row.get("realized_ms")
    ok_cause = top in cause
    price = None
    if pred is not None and real is not None:
        tol = 1.0 if real < 5 else 0.15 * real
        ci = realized_ci(row)
        if abs(pred - real) <= tol:
            price = "ok"
        elif ci and ci[1] - ci[0] > 2 * tol and ci[0] <= pred <= ci[1]:
            price = "unresolved"
        else:
            price = "OFF"
    return top, pred, ok_cause, price


def cmd_table(a):
    rows = {}
    for path in a.files:
        for line in open(path):
            r = json.loads(line)
            if "skipped" in r:
                continue
            if a.arm != "default":  # the prediction of the driver's --window run instead
                if not isinstance(r.get(a.arm), dict):
                    continue
                r = dict(r, **r[a.arm])
            old = rows.get(r["scenario"], {})
            if "realized_ms" not in r and "realized_ms" in old:
                for k in ("realized_ms", "problem_ms", "fix_ms"):
                    r[k] = old.get(k)
            rows[r["scenario"]] = r
    print("| scenario | problem -> fix | realized ms/step (95% CI) | predicted | top finding | cause | price |")
    print("|---|---|---|---|---|---|---|")
    n_cause = n_price = n_unres = 0
    for name, r in rows.items():
        top, pred, ok_cause, price = verdict(r)
        n_cause += ok_cause
        n_price += price == "ok"
        n_unres += price == "unresolved"
        ci = realized_ci(r)
        real = "%s%s" % (r.get("realized_ms"), " (%.2f, %.2f)" % ci if ci else "")
        print("| %s (%s) | %s -> %s | %s | %s | %s | %s | %s |" % (
            name, r.get("family"), r.get("problem"), r.get("fix"), real,
            "-" if pred is None else pred, top, "ok" if ok_cause else "WRONG", price or "-"))
    print("\ncause right: %d/%d; price within limits: %d/%d; unresolved (the realized saving's 95%% "
          "interval is wider than the tolerance and holds the prediction): %d" %
          (n_cause, len(rows), n_price, len(rows), n_unres))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("name")
    r.add_argument("--arm", choices=["ab", "problem", "fix"], default="ab")
    r.add_argument("--steps", type=int, default=8)
    r.add_argument("--rounds", type=int, default=4)
    r.add_argument("--warmup", type=int, default=3)
    d = sub.add_parser("driver")
    d.add_argument("--stepscope", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--only", default="")
    d.add_argument("--traces", default="", help="folder for the traces (default: OUT/traces)")
    d.add_argument("--trace-fix", default="", help="scenarios whose fix arm is traced too (NAME.fix.sqlite)")
    d.add_argument("--steps", type=int, default=10)
    d.add_argument("--rounds", type=int, default=10)
    d.add_argument("--traced-steps", type=int, default=15)
    d.add_argument("--profile-args", default="",
                   help="more `profile` options for the traced problem run, e.g. '--steps 8 --warmup-steps 6' "
                        "(the trace then measures the untraced iterations before its window)")
    d.add_argument("--window", default="",
                   help="N:W: also trace the problem with `profile --steps N --warmup-steps W` and "
                        "price it as traced and with `--untraced-step-ms measured` (table --arm)")
    d.add_argument("--pairs", type=int, default=2, help="process pairs where A/B cannot share a process")
    d.add_argument("--budget-s", type=float, default=520)
    d.add_argument("--no-realize", action="store_true")
    ra = sub.add_parser("reanalyze")
    ra.add_argument("--stepscope", required=True)
    ra.add_argument("--results", required=True, help="suite.jsonl of a driver run")
    ra.add_argument("--traces", required=True, help="folder of that run's traces (NAME.sqlite)")
    ra.add_argument("--out", required=True, help="the new jsonl (then: table OUT)")
    ra.add_argument("--analyze-args", default="",
                    help="more `analyze` options, e.g. '--untraced-step-ms measured' on traces of "
                         "'profile --steps N' (priced at the host speed of the untraced iterations)")
    s = sub.add_parser("smoke")
    s.add_argument("--only", default="")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    t.add_argument("--arm", choices=["default", "window", "window_measured"], default="default",
                   help="whose prediction: the default traced run's, or the --window run's as "
                        "traced or at its measured untraced step")
    a = ap.parse_args()
    {"run": cmd_run, "driver": cmd_driver, "table": cmd_table, "smoke": cmd_smoke,
     "reanalyze": cmd_reanalyze}[a.cmd](a)


if __name__ == "__main__":
    main()
