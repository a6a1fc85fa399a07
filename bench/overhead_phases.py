#!/usr/bin/env python3
"""Figure: capture overhead measured inside ONE process (docs/PERFORMANCE.md, "Capture overhead").

Why: on the lent VMs a bare `train_gpt.py --preset small` run moves by +-20% from one process to
the next (CPU placement, host load), so process-level A/B pairs cannot resolve 2-3%. Here one
process alternates phases with stepscope recording ON and OFF, 20 steps each, by calling
cudaProfilerStart/Stop (torch.cuda.profiler.start/stop) under
`stepscope profile --capture-range cudaProfilerApi`: every phase runs on the same CPUs, GPU and
memory layout, interleaved (A B A B ...). OFF is "injected, subscribed, recording off": activity
kinds and API callbacks disabled (what recording windows do), so ON/OFF is the cost of recording;
a bare run of the same wrapper (no stepscope) gives the residual cost of the tracer when it does
not record (OFF vs bare, process-level, so noisy).

Runs the workload itself (this file wraps it):
  python3 bench/overhead_phases.py --run --workload train_gpt.py [--phase 20] [--phases 12] -- [workload args]
The driver (what a GPU machine runs):
  python3 bench/overhead_phases.py --stepscope BIN --workload train_gpt.py --out DIR \
      [--presets small,tiny] [--profile-args="--sample-hz 0"]
prints per preset: median ms/step of the ON phases and of the OFF phases, their ratio, the median
of the ratios of each ON phase to the mean of its two OFF neighbours, and writes DIR/phases.json.

Against no CUPTI at all, in the same process: --detach runs with the tracer's default
`--detach-outside-window on` (issue 33; before it, the diagnostics switch STEPSCOPE_DIAG_DETACH=1):
the wrapper announces its windows (the tracer's exported stepscope_attach(), called once before
CUDA starts and again before every cudaProfilerStart), synchronizes right after every
cudaProfilerStop (the tracer finalizes CUPTI at that call's exit callback, CUPTI's documented
dynamic detach, after flushing the window's records): the OFF phases then run without CUPTI, and
ON/OFF is the tracer's whole cost, CUPTI's floor included. Without --detach the profile runs with
`--detach-outside-window off` (OFF = attached, kinds and callbacks off, as before issue 33).
--pre N adds N OFF phases before the first ON phase: with --detach CUPTI was never attached in them
(the in-process stand-in for bare), so OFF/pre says whether the steps outside a window run as
before any window (tests/gpu/window_outside_check.sh).

Where the cost goes, in the same process: --cycle "none;api;stacks;...;FLOOR" sets
STEPSCOPE_DIAG_CYCLE, so ON phase j records with the parts of set j mod n switched off (names as in
STEPSCOPE_DIAG_OFF: api, stacks, sampling, memory, overhead, um, nvtx, kernels, flush; `none` for
the full tracer). Per set: the median of its ON/OFF phase ratios, and its ratio to the last set
(the floor, e.g. "api,overhead,memory,um,nvtx,sampling": kernel + memcpy records only) within the
same round. Use --phases as a multiple of n.
"""
import argparse
import json
import os
import runpy
import statistics
import subprocess
import sys
import time

# The phase arithmetic is shared with tests/gpu/train_gpt_ab.py and hf_lora_train.py: it lives in
# tests/gpu/gpukit.py (bench/ imports from tests/gpu, never the other way).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from gpukit import split_phases  # noqa: E402


def run_wrapped(a, rest):
    import torch  # noqa: the workload imports it anyway

    total = a.warmup + a.phase * (2 * a.phases + a.pre)
    ends = []
    state = {"on": False, "steps": 0, "attach_failed": 0}
    # --detach (STEPSCOPE_DETACH=on, the tracer's default with a window): the tracer detaches CUPTI
    # after each ON phase and is attached again here before the next, so OFF phases run without
    # CUPTI: bare, in-process. The first call, before CUDA starts, announces the windows (the tracer
    # then never watches for a cudaProfilerStart of its own: CUPTI not attached before phase 1).
    tracer = None  # the injected tracer's library, for stepscope_attach
    if os.environ.get("STEPSCOPE_DETACH") == "on" and os.environ.get("CUDA_INJECTION64_PATH"):
        import ctypes
        tracer = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
        tracer.stepscope_attach()

    def hook(opt, args, kwargs):  # after every optimizer step: one training step ended
        ends.append(time.perf_counter())
        state["steps"] += 1
        n = state["steps"]
        if n >= a.warmup and (n - a.warmup) % a.phase == 0:
            k = (n - a.warmup) // a.phase - a.pre  # phase index about to start (< 0: pre)
            want = k >= 0 and k % 2 == 0 and k < 2 * a.phases  # even phases ON, odd OFF
            if want != state["on"]:
                torch.cuda.synchronize()
                if a.torch_stack:  # the comparison arm: torch.profiler with_stack, no stepscope
                    if want:
                        from torch.profiler import ProfilerActivity, profile
                        state["prof"] = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                                with_stack=True)
                        state["prof"].__enter__()
                    else:
                        state["prof"].__exit__(None, None, None)  # its processing lands in dropped steps
                        state["prof"] = None
                else:
                    if want and tracer is not None:
                        state["attach_failed"] += tracer.stepscope_attach() != 1
                    (torch.cuda.profiler.start if want else torch.cuda.profiler.stop)()
                    if not want and tracer is not None:
                        torch.cuda.synchronize()  # the tracer detaches at this call's exit
                state["on"] = want
            ends.append(None)  # phase boundary marker

    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(hook)
    sys.argv = [a.workload] + rest + ["--steps", str(total)]
    try:
        runpy.run_path(a.workload, run_name="__main__")
    except SystemExit:
        pass
    if state["on"] and not a.torch_stack:
        torch.cuda.profiler.stop()
    # Per phase the mean step time over its steps after the first `skip` (the toggle and the
    # queue refilling).
    phases = split_phases(ends)
    out, pre = [], []
    for i, ts in enumerate(phases[: 2 * a.phases + a.pre]):
        ts = ts[a.skip:]
        if len(ts) >= 3:
            ms = (ts[-1] - ts[0]) * 1e3 / (len(ts) - 1)
            if i < a.pre:
                pre.append(ms)
            else:
                out.append({"phase": i - a.pre, "on": (i - a.pre) % 2 == 0, "ms_per_step": ms})
    print(json.dumps({"phases": out, "pre": pre, "attach_failed": state["attach_failed"]}), flush=True)


def summarize(phases):
    on = [p["ms_per_step"] for p in phases if p["on"]]
    off = [p["ms_per_step"] for p in phases if not p["on"]]
    pair = []
    for i, p in enumerate(phases):
        if not p["on"]:
            continue
        nb = [q["ms_per_step"] for q in phases[max(0, i - 1): i + 2] if not q["on"]]
        if nb:
            pair.append(p["ms_per_step"] / statistics.mean(nb))
    return {"on_median_ms": statistics.median(on), "off_median_ms": statistics.median(off),
            "ratio_of_medians": statistics.median(on) / statistics.median(off),
            "median_of_phase_ratios": statistics.median(pair), "phase_ratios": pair,
            "on": on, "off": off}


def summarize_cycle(phases, sets):
    """Per diagnostics set: ON/OFF phase ratios, and ratios to the last set (the floor) per round."""
    n = len(sets)
    ratio = {}  # ON phase index j -> ON / mean of OFF neighbours
    for i, p in enumerate(phases):
        if not p["on"]:
            continue
        nb = [q["ms_per_step"] for q in phases[max(0, i - 1): i + 2] if not q["on"]]
        if nb:
            ratio[i // 2] = p["ms_per_step"] / statistics.mean(nb)
    out = {}
    for v, name in enumerate(sets):
        rs = [r for j, r in ratio.items() if j % n == v]
        vs_floor = [r / ratio[j - v + n - 1] for j, r in ratio.items()
                    if j % n == v and (j - v + n - 1) in ratio]
        ms = [p["ms_per_step"] for i, p in enumerate(phases) if p["on"] and (i // 2) % n == v]
        if rs:
            out[name] = {"on_off": statistics.median(rs), "vs_floor": statistics.median(vs_floor) if vs_floor else None,
                         "on_median_ms": statistics.median(ms), "rounds": len(rs), "ratios": rs}
    return out


def drive(a):
    os.makedirs(a.out, exist_ok=True)
    res = {}
    for preset in a.presets.split(","):
        wrap = [sys.executable, os.path.abspath(__file__), "--run", "--workload", a.workload,
                "--phase", str(a.phase), "--phases", str(a.phases), "--warmup", str(a.warmup),
                "--pre", str(a.pre), "--"]
        wrap += a.workload_args.split() if a.workload_args else ["--preset", preset]
        cmd = [a.stepscope, "profile", "-q", "-f", "-o", os.path.join(a.out, f"phases_{preset}{a.tag}"),
               "--capture-range", "cudaProfilerApi",
               "--detach-outside-window", "on" if a.detach else "off"] + a.profile_args.split() + ["--"] + wrap
        row = {}
        env = dict(os.environ)
        sets = a.cycle.split(";") if a.cycle else []
        if sets:
            env["STEPSCOPE_DIAG_CYCLE"] = a.cycle
        arms = () if a.no_traced else (("traced", cmd),)
        if not a.no_bare:
            arms += (("bare", wrap),)
        if a.torch_arm:
            k = wrap.index("--")
            arms += (("torch_stack", wrap[:k] + ["--torch-stack"] + wrap[k:]),)
        for name, c in arms:
            p = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, env=env)
            with open(os.path.join(a.out, f"{preset}{a.tag}_{name}.log"), "wb") as f:
                f.write(p.stdout + b"\n--- stderr\n" + p.stderr)
            lines = [l for l in p.stdout.decode().splitlines() if l.startswith('{"phases"')]
            if p.returncode != 0 or not lines:
                row[name] = {"error": f"rc {p.returncode}: {p.stderr.decode()[-400:]}"}
                continue
            doc = json.loads(lines[-1])
            ph = doc["phases"]
            row[name] = summarize(ph)
            row[name]["attach_failed"] = doc.get("attach_failed", 0)
            if doc.get("pre"):
                row[name]["pre"] = doc["pre"]
                row[name]["pre_median_ms"] = statistics.median(doc["pre"])
                row[name]["off_vs_pre"] = row[name]["off_median_ms"] / row[name]["pre_median_ms"]
            row[name]["detached"] = bool(a.detach) and name == "traced"
            if sets and name == "traced":
                row["cycle"] = summarize_cycle(ph, sets)
        res[preset] = row
        for sname, v in row.get("cycle", {}).items():
            vf = f"{v['vs_floor']:.3f}" if v["vs_floor"] is not None else "-"
            print(f"{preset}: set [{sname}] ON/OFF {v['on_off']:.3f}, vs floor {vf}, "
                  f"ON {v['on_median_ms']:.3f} ms ({v['rounds']} rounds)", flush=True)
        t, b = row.get("traced", {}), row.get("bare", {})
        if "ratio_of_medians" in t:
            print(f"{preset}: ON {t['on_median_ms']:.3f} ms, OFF {t['off_median_ms']:.3f} ms -> ON/OFF "
                  f"{t['ratio_of_medians']:.3f} (median of phase ratios {t['median_of_phase_ratios']:.3f}, "
                  f"{len(t['phase_ratios'])} ON phases)", flush=True)
        if "off_vs_pre" in t:
            print(f"{preset}: OFF {t['off_median_ms']:.3f} ms vs the {len(t['pre'])} phases before the first "
                  f"window {t['pre_median_ms']:.3f} ms -> OFF/pre {t['off_vs_pre']:.3f} "
                  f"({'CUPTI detached outside windows' if a.detach else 'CUPTI attached outside windows'}; "
                  f"attach failures {t['attach_failed']})", flush=True)
        ts = row.get("torch_stack", {})
        if "ratio_of_medians" in ts:
            print(f"{preset}: torch.profiler with_stack ON/OFF {ts['ratio_of_medians']:.3f} (median of phase "
                  f"ratios {ts['median_of_phase_ratios']:.3f})", flush=True)
        if "ratio_of_medians" in b and "off_median_ms" in t:
            print(f"{preset}: bare run (same phases, no tracer) {statistics.median(b['on'] + b['off']):.3f} ms; "
                  f"OFF/bare {t['off_median_ms'] / statistics.median(b['on'] + b['off']):.3f} (two processes)",
                  flush=True)
    with open(os.path.join(a.out, f"phases{a.tag}.json"), "w") as f:
        json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="store_true", help="(internal) run the workload with phases")
    ap.add_argument("--workload", required=True)
    ap.add_argument("--stepscope")
    ap.add_argument("--out", default="phases_out")
    ap.add_argument("--presets", default="small,tiny")
    ap.add_argument("--workload-args", default="",
                    help="arguments of a workload other than train_gpt.py (instead of --preset; one run, "
                         "named by --presets), e.g. \"run moe_nonzero --arm problem\" for tests/gpu/external_suite.py")
    ap.add_argument("--profile-args", default="--sample-hz 0")
    ap.add_argument("--cycle", default="", help="diagnostics sets, one per ON phase in turn (see above)")
    ap.add_argument("--torch-arm", action="store_true",
                    help="also run the phases with torch.profiler(with_stack=True) as ON (no stepscope)")
    ap.add_argument("--torch-stack", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-bare", action="store_true", help="skip the bare run")
    ap.add_argument("--detach", action="store_true",
                    help="OFF phases without CUPTI (--detach-outside-window on, the default: detached at each ON "
                         "phase's end, attached again before the next): ON/OFF is then the cost over a bare "
                         "process; without it, --detach-outside-window off")
    ap.add_argument("--pre", type=int, default=0,
                    help="OFF phases before the first ON phase (with --detach: CUPTI never attached in them)")
    ap.add_argument("--no-traced", action="store_true", help="skip the stepscope run (e.g. only --torch-arm)")
    ap.add_argument("--tag", default="", help="suffix of the result names (several runs into one DIR)")
    ap.add_argument("--phase", type=int, default=20, help="steps per phase")
    ap.add_argument("--phases", type=int, default=12, help="ON phases (as many OFF)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--skip", type=int, default=3, help="steps dropped at the start of each phase")
    a, rest = ap.parse_known_args()
    if rest and rest[0] == "--":
        rest = rest[1:]
    a.workload = os.path.abspath(a.workload)
    if a.run:
        run_wrapped(a, rest)
    else:
        drive(a)


if __name__ == "__main__":
    main()
