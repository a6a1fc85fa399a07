"""Live straggler detection for torch.distributed training (stepscope.torch.StragglerMonitor).

Each rank times its steps (and optional named sections) on the host; every
interval the ranks exchange small per-rank summaries over the job's own
torch.distributed group, and rank 0 scores them and logs the stragglers.
Nothing runs outside the job: no daemon, no extra process.

Scores are the NVIDIA Resiliency Extension's (the same formulas as
`stepscope ranks`, docs/ranks.md):
  relative   = best rank's median / this rank's median   (per section)
  individual = this rank's best median / its current median
A score below the threshold (0.75) flags the rank.

Why the formulas are written here again instead of taken from the binary, as
stepscope.open() takes steps and findings (issue 35): the monitor scores while
the job runs, every interval (each rank its individual scores, rank 0 the
relative ones), from host-timed section medians kept in memory; `stepscope
ranks` scores after the run, from traces or their summary files
(src/ranks/rank_summary.h: per-step kernel, section and collective records on
one clock), which the monitor does not have. Using the binary would mean
writing such files from interval medians and starting a process inside the
training loop every interval, and it would stop the monitor wherever only the
package is installed (the wheel is pure Python, and the monitor needs no binary
and no torch until the first interval ends). So the few functions below keep
the formulas; src/ranks/scores.h names this file: a change to the formulas
there is a change here (straggler_test.py pins the numbers).

In synchronous data-parallel training every rank's step lasts as long as the
slowest rank's, so step times cannot name the straggler. The time ranks spend
inside NCCL collectives can: the others wait there for the slow rank. When the
process group allows it (ProcessGroupNCCL's completion hook with collective
timing), each rank also measures its collective time per step; a rank whose
collective time is lower than the others' median by at least min_wait_s
(default: the larger of 0.5 ms and 10% of the step) is the one they wait for.

    import stepscope.torch as st
    monitor = st.StragglerMonitor(interval_s=60)
    for batch in loader:
        with monitor.step():
            with monitor.section("forward"):
                loss = model(batch)
            ...

Cost: two clock reads and a list append per step or section; one small
all_gather per interval (on a gloo group when one can be made, so it never
queues behind GPU work). The scoring functions below are plain Python and
need no torch; torch is imported only when the first interval ends.
"""

import logging
import os
import socket
import statistics
import threading
import time

__all__ = ["StragglerMonitor", "relative_scores", "individual_score", "wait_stragglers"]

DEFAULT_THRESHOLD = 0.75
MIN_WAIT_FLOOR_S = 0.0005
MIN_WAIT_STEP_FRACTION = 0.10  # healthy 2xH200 DDP: 8% systematic jitter measured

log = logging.getLogger("stepscope.straggler")


def relative_scores(medians):
    """{rank: median} -> {rank: best median / median}; None where a median is missing or not positive."""
    valid = [m for m in medians.values() if m is not None and m > 0]
    if len(valid) < len(medians) or not valid:
        return {r: None for r in medians}
    best = min(valid)
    return {r: best / m for r, m in medians.items()}


def individual_score(history, current):
    """Best (lowest) median of this rank's history and current / current; None when current is missing."""
    if current is None or current <= 0:
        return None
    best = min([h for h in history if h is not None and h > 0] + [current])
    return best / current


def section_scores(per_rank):
    """{rank: {section: median}} -> {section: {rank: relative score}} over sections every rank has."""
    if not per_rank:
        return {}
    common = set.intersection(*(set(s) for s in per_rank.values()))
    return {name: relative_scores({r: s[name] for r, s in per_rank.items()}) for name in sorted(common)}


def wait_stragglers(comm_per_step, step_s, min_wait_s=None):
    """Ranks the others wait for in collectives.

    comm_per_step: {rank: seconds per step inside NCCL collectives}. A rank is
    flagged when the median of the OTHER ranks' collective time exceeds its own
    by at least min_wait_s (default max(0.5 ms, 10% of step_s)): that excess is
    time the others spent waiting for it. Returns {rank: excess seconds}.
    """
    if len(comm_per_step) < 2 or any(v is None for v in comm_per_step.values()):
        return {}
    if min_wait_s is None:
        min_wait_s = max(MIN_WAIT_FLOOR_S, MIN_WAIT_STEP_FRACTION * (step_s or 0.0))
    out = {}
    for r, mine in comm_per_step.items():
        others = statistics.median(v for o, v in comm_per_step.items() if o != r)
        if others - mine >= min_wait_s:
            out[r] = others - mine
    return out


def find_stragglers(reports, threshold=DEFAULT_THRESHOLD, min_wait_s=None):
    """Scores a list of per-rank reports (what each rank sends) on rank 0.

    Returns {"stragglers": [...], "scores": {...}}; each straggler is a dict
    with rank, host and the reasons (wait excess and/or scores below threshold).
    """
    by_rank = {r["rank"]: r for r in reports}
    rel = section_scores({r: rep["sections"] for r, rep in by_rank.items()})
    step_medians = [rep["sections"].get("step") for rep in by_rank.values() if rep["sections"].get("step")]
    step_s = statistics.median(step_medians) if step_medians else 0.0
    waits = wait_stragglers({r: rep.get("comm_per_step_s") for r, rep in by_rank.items()}, step_s, min_wait_s)
    stragglers = {}
    for r, excess in waits.items():
        stragglers.setdefault(r, []).append(
            f"the other ranks wait for it {excess * 1e3:.2f} ms per step in NCCL collectives "
            f"(its collective time {by_rank[r]['comm_per_step_s'] * 1e3:.2f} ms/step vs the others' "
            f"{(by_rank[r]['comm_per_step_s'] + excess) * 1e3:.2f})")
    for name, scores in rel.items():
        for r, s in scores.items():
            if s is not None and s < threshold:
                stragglers.setdefault(r, []).append(f"section '{name}' relative score {s:.2f} < {threshold:.2f}")
    for r, rep in by_rank.items():
        for name, s in sorted(rep.get("individual", {}).items()):
            if s is not None and s < threshold:
                stragglers.setdefault(r, []).append(f"section '{name}' individual score {s:.2f} < {threshold:.2f}")
    return {
        "stragglers": [{"rank": r, "host": by_rank[r].get("host", ""), "reasons": why}
                       for r, why in sorted(stragglers.items())],
        "relative": rel,
        "individual": {r: rep.get("individual", {}) for r, rep in by_rank.items()},
        "comm_per_step_s": {r: rep.get("comm_per_step_s") for r, rep in by_rank.items()},
        "step_s": step_s,
    }


class _Timer:
    """Context manager timing one section; `end` is called with the elapsed seconds."""

    __slots__ = ("clock", "end", "t0")

    def __init__(self, clock, end):
        self.clock, self.end = clock, end

    def __enter__(self):
        self.t0 = self.clock()
        return self

    def __exit__(self, *exc):
        self.end(self.clock() - self.t0)
        return False


class StragglerMonitor:
    """Per-rank step timing with an interval exchange and straggler logs on rank 0.

    interval_s: seconds between exchanges (converted once to a step count that
      every rank uses, so all ranks call the collective at the same step).
    threshold: NVRx score threshold.
    group: the torch.distributed group to exchange over (default: the world).
    warmup_steps: steps before the first exchange.
    min_wait_s: collective-wait excess that flags a rank (default max(0.5 ms, 10% of the step)).
    on_report: callable(report) on rank 0 after each exchange (report: find_stragglers' dict
      plus "steps": (first, last)).
    comm_timing: also time NCCL collectives (needs TORCH_NCCL_ENABLE_TIMING=1 before the process
      group is created). Off by default: that PyTorch setting alone made the reference DDP step
      7.8% slower on two H200s (docs/PERFORMANCE.md), against a 1% budget.
    """

    def __init__(self, interval_s=60.0, threshold=DEFAULT_THRESHOLD, group=None, warmup_steps=10,
                 min_wait_s=None, on_report=None, logger=None, comm_timing=False,
                 _gather=None, _rank=None, _clock=time.perf_counter):
        self.interval_s = float(interval_s)
        self.threshold = float(threshold)
        self.group = group
        self.warmup_steps = int(warmup_steps)
        self.min_wait_s = min_wait_s
        self.on_report = on_report
        self.log = logger or log
        self.comm_timing = comm_timing
        self.last_report = None
        self._gather = _gather
        self._rank = _rank
        self._clock = clock = _clock
        self._host = socket.gethostname()
        self._steps = 0
        self._first_step_of_interval = 0
        self._every = None  # steps per interval, agreed at the first exchange
        self._next_exchange = self.warmup_steps
        self._times = {}  # section -> [seconds] this interval
        self._history = {}  # section -> [interval medians]
        self._comm_s = 0.0
        self._comm_ok = None  # None: not tried; False: unavailable
        self._lock = threading.Lock()
        self._step_t0 = None
        self._step_timer = _Timer(clock, self._end_step)

    # --- timing -----------------------------------------------------------
    def step(self):
        """Context manager around one training step."""
        return self._step_timer

    def section(self, name):
        """Context manager around a named part of the step (e.g. "forward")."""
        return _Timer(self._clock, lambda s: self._times.setdefault(name, []).append(s))

    def step_begin(self):
        self._step_t0 = self._clock()

    def step_end(self):
        if self._step_t0 is not None:
            self._end_step(self._clock() - self._step_t0)
            self._step_t0 = None

    def _end_step(self, seconds):
        self._times.setdefault("step", []).append(seconds)
        self._steps += 1
        if self._gather is None:  # first step: join the group (and hook NCCL timing) early
            self._gather = self._default_gather()
        if self._steps >= self._next_exchange:
            self._exchange()

    # --- collective timing (ProcessGroupNCCL completion hook) ---------------
    def _on_collective(self, work_info):
        try:
            d = work_info.active_duration.total_seconds()
        except Exception:  # never raise on the watchdog thread
            return
        with self._lock:
            self._comm_s += d

    def _setup_comm_timing(self, dist):
        if self._comm_ok is not None or not self.comm_timing:
            return
        self._comm_ok = False
        # PyTorch's hook loop reads every finished collective's duration before
        # calling the hook and aborts the communicator when a collective was
        # enqueued without timing (measured: PyTorch 2.11, DDP's first
        # broadcasts). So timing must be on from process-group creation:
        # TORCH_NCCL_ENABLE_TIMING=1 in the environment, never switched on late.
        if os.environ.get("TORCH_NCCL_ENABLE_TIMING", "").lower() not in ("1", "true"):
            self.log.info("stepscope straggler: set TORCH_NCCL_ENABLE_TIMING=1 before init_process_group "
                          "to time NCCL collectives; section scores only")
            return
        try:
            pg = self.group or dist.distributed_c10d._get_default_group()
            if dist.get_backend(pg) != "nccl":
                return
            pg._register_on_completion_hook(self._on_collective)
            self._comm_ok = True
        except Exception as e:  # older/newer torch without the hook: scores only
            self.log.info("stepscope straggler: no NCCL collective timing (%s); section scores only", e)

    # --- exchange -----------------------------------------------------------
    def _default_gather(self):
        try:
            import torch.distributed as dist  # lazily: the module works without torch

            ready = dist.is_available() and dist.is_initialized()
        except ImportError:
            ready = False
        if not ready:  # not a distributed job: score this process alone
            self.log.info("stepscope straggler: torch.distributed is not initialized; monitoring this process only")
            return lambda obj: [obj]
        self._setup_comm_timing(dist)
        if self._rank is None:
            self._rank = dist.get_rank()
        if getattr(self, "_gloo", None) is None:
            try:  # a CPU group: the exchange never waits behind queued GPU work
                ranks = None if self.group is None else dist.get_process_group_ranks(self.group)
                self._gloo = dist.new_group(ranks=ranks, backend="gloo")
            except Exception:
                self._gloo = self.group

        def gather(obj):
            out = [None] * dist.get_world_size(self._gloo)
            dist.all_gather_object(out, obj, group=self._gloo)
            return out

        return gather

    def _payload(self):
        with self._lock:
            comm, self._comm_s = self._comm_s, 0.0
        steps = self._steps - self._first_step_of_interval
        sections, individual = {}, {}
        for name, values in self._times.items():
            if not values:
                continue
            med = statistics.median(values)
            hist = self._history.setdefault(name, [])
            individual[name] = individual_score(hist, med)
            hist.append(med)
            sections[name] = med
        self._times = {}
        step = sections.get("step", 0.0)
        return {
            "rank": self._rank, "host": self._host, "pid": os.getpid(), "steps": steps,
            "sections": sections, "individual": individual,
            "comm_per_step_s": (comm / steps) if (self._comm_ok and steps) else None,
            "every": max(1, round(self.interval_s / step)) if step > 0 else max(1, self.warmup_steps),
        }

    def _exchange(self):
        if self._rank is None:
            self._rank = 0
        first = self._first_step_of_interval
        reports = self._gather(self._payload())
        self._first_step_of_interval = self._steps
        lead = min(reports, key=lambda r: r["rank"])
        if self._every is None:  # every rank adopts the lead rank's interval in steps
            self._every = lead["every"]
        self._next_exchange = self._steps + self._every
        if self._rank != lead["rank"]:
            return
        report = find_stragglers(reports, self.threshold, self.min_wait_s)
        report["steps"] = (first, self._steps - 1)
        self.last_report = report
        for s in report["stragglers"]:
            self.log.warning("stepscope straggler: rank %s%s, steps %d-%d: %s", s["rank"],
                             f" (host {s['host']})" if s["host"] else "", first, self._steps - 1,
                             "; ".join(s["reasons"]))
        if self.on_report:
            self.on_report(report)
