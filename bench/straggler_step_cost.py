#!/usr/bin/env python3
"""Per-step cost of stepscope.torch.StragglerMonitor's timing (docs/PERFORMANCE.md).

Times N iterations (default 200,000) of `with monitor.step():`, then of the
same with one `monitor.section()` inside, with no exchange (the first exchange
is never reached and no process group is joined; torch is not needed), and
prints microseconds per step, best of RUNS (default 3).

  bench/straggler_step_cost.py [N] [RUNS]
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "stepscope"))
import straggler  # noqa: E402


def per_step_us(n, with_section):
    m = straggler.StragglerMonitor(warmup_steps=n + 1, comm_timing=False, _gather=lambda obj: [obj], _rank=0)
    t0 = time.perf_counter()
    if with_section:
        for _ in range(n):
            with m.step():
                with m.section("forward"):
                    pass
    else:
        for _ in range(n):
            with m.step():
                pass
    return (time.perf_counter() - t0) / n * 1e6


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"python {sys.version.split()[0]}, {n} steps, best of {runs}")
    for label, sec in (("step", False), ("step + 1 section", True)):
        best = min(per_step_us(n, sec) for _ in range(runs))
        print(f"{label}: {best:.2f} us per step")


if __name__ == "__main__":
    main()
