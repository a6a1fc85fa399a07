#!/usr/bin/env python3
"""A plain DDP loop with one straggling rank, for `stepscope ranks` (issue 34, docs/ranks.md).

The loop is written the usual way, with no step markers and no NVTX of ours: an HF GPT-2 built
from transformers.GPT2Config (6 layers, n_embd 768; nothing downloaded), DistributedDataParallel,
bf16 autocast, fused AdamW, random tokens. `--kind` picks what rank 1 does differently:

  balanced  nothing: both ranks alike
  loader    rank 1's batches come from a DataLoader with num_workers=0 whose __getitem__ burns
            Python time like a tokeniser (--loader-ms per batch); the other ranks read the same
            dataset through 4 workers (persistent, prefetching), so their loading is hidden
            (with --phase-steps, rank 1's A phases read through 4 workers too: the fix)
  hostcpu   rank 1 is pinned to one CPU that --hogs busy processes also run on (host CPU
            contention: its Python thread gets a share of the CPU)
  hostpy    rank 1's loop does --host-ms of extra Python work per step (log_metrics)
  batch     rank 1 trains on a batch of 12, rank 0 on 8 (uneven batches: more GPU work)
  extragpu  rank 1 runs --extra-matmuls bf16 matmuls of --extra-n per step (extra GPU work)

Worker (under torchrun): each rank prints one JSON line
  {"kind", "rank", "world", "batch", "steps", "warmup", "ms_per_step"}
timed inside the loop: one synchronize before step --warmup and one at the end.

  torchrun --nproc-per-node 2 tests/gpu/ddp_stragglers.py --kind loader

Driver (one device call on 2 GPUs, about 6 minutes): a warm-up run, then for each kind the bare
job and the traced job (`stepscope profile -q -f -o DIR/KIND_r%q{RANK} -- torchrun ...`; the
--nomarks kinds once more with `--iteration-ranges off`: no step ranges at all), then
`stepscope ranks` (text and --format json), `summarize`, `analyze` of every rank; each result is
written under --out as soon as it exists:
  results.jsonl  one line per bare/traced run (per-rank ms/step) and per ranks --format json
  log.txt        every command's text output
  summaries.tgz  rank summaries, ranks/analyze outputs
  traces_N.tar   the traces (gzipped), appended as each kind is done, up to 15 MiB a file (at
                 most 4 files; what does not fit is named in log.txt)

  export LD_LIBRARY_PATH=$PWD/build-gpu/lib
  python3 tests/gpu/ddp_stragglers.py --driver --stepscope $PWD/build-gpu/bin/stepscope --out $OUT

Check (here, no GPU): `ddp_stragglers.py --evaluate OUT/results.jsonl` prints per kind the bare and traced
step-time differences to the balanced run against the verdict (rank, cause, what the others wait
per step) and exits 1 unless each is right and within 15% of the traced difference (the run the
traces record; balanced: no straggler).
"""
import argparse
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import time

KINDS = ["balanced", "loader", "hostcpu", "hostpy", "batch", "extragpu"]
# The verdict each kind must get from `stepscope ranks` (docs/ranks.md, "The verdict").
EXPECTED_CAUSE = {"loader": "data loading", "hostcpu": "host CPU", "hostpy": "host CPU",
                  "batch": "GPU work", "extragpu": "GPU work"}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", default="balanced", choices=KINDS)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--big-batch", type=int, default=12, help="rank 1's batch for --kind batch")
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--loader-ms", type=float, default=30.0, help="Python time per batch (loader)")
    ap.add_argument("--host-ms", type=float, default=15.0, help="extra Python per step (hostpy)")
    ap.add_argument("--hogs", type=int, default=3, help="busy processes on rank 1's CPU (hostcpu)")
    ap.add_argument("--extra-matmuls", type=int, default=4)
    ap.add_argument("--extra-n", type=int, default=8192)
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--phase-steps", type=int, default=0,
                    help="in-process A/B phases of K steps after the warm-up: the slow rank "
                         "straggles only in the odd (B) phases; 0: in every step")
    ap.add_argument("--phases", type=int, default=8, help="phases (A, B, A, ...) with --phase-steps")
    # Driver.
    ap.add_argument("--driver", action="store_true")
    ap.add_argument("--stepscope", default="stepscope")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--nomarks", default="loader,batch",
                    help="driver: kinds traced once more with --iteration-ranges off")
    ap.add_argument("--budget-s", type=float, default=420, help="driver: start no run after this")
    ap.add_argument("--tag", default="", help="driver: prefix of every run's name (n4_: 4 ranks)")
    ap.add_argument("--arms", default="bare,traced",
                    help="driver: bare,traced (each kind bare then traced) or traced,bare (every "
                         "kind traced first, then the bare runs as the budget allows)")
    ap.add_argument("--warmup-run", type=int, default=1,
                    help="driver: 1: one bare balanced job first, not recorded (a fresh machine)")
    ap.add_argument("--pack-traces", default=None,
                    help="driver: kinds whose traces are packed (default: every kind)")
    ap.add_argument("--profile-args", default="",
                    help="driver: more `stepscope profile` options for every traced job, e.g. "
                         "'--trace cuda,nvtx,memory' (which part of the tracer a result depends on)")
    ap.add_argument("--evaluate", metavar="RESULTS_JSONL",
                    help="check a driver's results.jsonl: right rank, cause, cost within 15%%")
    ap.add_argument("--host-steps", metavar="RESULTS_JSONL",
                    help="per run of a driver's results.jsonl: each rank's main-thread CPU ms per "
                         "step against the other ranks' median, and its stretches over 1 ms")
    return ap.parse_args()


# ---------------------------------------------------------------- worker


def burn(seconds, x=1):
    """Pure-Python busy work (a tokeniser's loop, a metrics computation)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(200):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


def log_metrics(ms):
    """The hostpy rank's extra per-step Python work."""
    return burn(ms / 1e3)


class TokenisingDataset:
    """Samples that cost `work_ms` of Python each, as a tokeniser in __getitem__ does."""

    def __init__(self, vocab, seq, work_ms):
        self.vocab, self.seq, self.work_s = vocab, seq, work_ms / 1e3

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        import torch
        burn(self.work_s, i + 1)
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, self.vocab, (self.seq,), generator=g)


def phase_of(a, step):
    """The phase of loop index `step`: -1 in the warm-up, then 0, 1, ... (K steps each)."""
    if a.phase_steps <= 0:
        return -1
    return (step - a.warmup) // a.phase_steps if step >= a.warmup else -1


def straggles(a, slow, step):
    """Whether the slow rank does its extra work at loop index `step`: always without phases,
    else only in the odd (B) phases."""
    if not slow:
        return False
    return a.phase_steps <= 0 or (phase_of(a, step) >= 0 and phase_of(a, step) % 2 == 1)


def iterations(a, b):
    """The iteration numbers (`iteration N` ranges: loop index N-1) of the B phases (b) or A
    phases, without each phase's first step (it starts after a synchronize)."""
    out = []
    for ph in range(a.phases):
        if ph % 2 == (1 if b else 0):
            first = a.warmup + ph * a.phase_steps
            out += [i + 1 for i in range(first + 1, first + a.phase_steps)]
    return out


def start_hogs(n):
    """Pins this process (and the threads it starts later) to one CPU and starts `n` busy
    processes pinned to the same CPU. Returns the processes."""
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[len(cpus) // 2]
    os.sched_setaffinity(0, {cpu})
    code = ("import os\nos.sched_setaffinity(0, {%d})\nx = 1\nwhile True:\n"
            "    x = (x * 1103515245 + 12345) & 0x7FFFFFFF\n" % cpu)
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def worker(a):
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    slow = rank == a.slow_rank
    hogs = start_hogs(a.hogs) if a.kind == "hostcpu" and slow else []
    if a.phase_steps > 0:
        for h in hogs:  # they run in the B phases only
            os.kill(h.pid, signal.SIGSTOP)
    try:
        train(a, rank, local, slow, hogs)
    finally:
        for h in hogs:
            h.kill()


def batches(a, slow, vocab, dev):
    """An endless iterator of input batches on the device; send() it whether this step
    straggles (the slow rank's loader and batch kinds change only then)."""
    import torch
    fast = inline = None
    if a.kind == "loader":
        # Every rank reads through 4 workers (persistent, prefetching): their loading is hidden.
        # The slow rank's straggling steps read through num_workers=0 instead; with phases its
        # balanced (A) steps use the workers as every rank does (the fix, measured in-process).
        ds = TokenisingDataset(vocab, a.seq, a.loader_ms / a.batch)
        if not slow or a.phase_steps > 0:
            fast = iter(torch.utils.data.DataLoader(ds, batch_size=a.batch, num_workers=4,
                                                    persistent_workers=True, prefetch_factor=4))
        if slow:
            inline = iter(torch.utils.data.DataLoader(ds, batch_size=a.batch, num_workers=0))
    straggling = yield None
    while True:
        loader = inline if straggling else fast
        if loader is not None:
            x = next(loader).to(dev, non_blocking=True)
        else:
            batch = a.big_batch if a.kind == "batch" and straggling else a.batch
            x = torch.randint(0, vocab, (batch, a.seq), device=dev)
        straggling = yield x


def train(a, rank, local, slow, hogs=()):
    import torch
    import torch.distributed as dist
    import transformers
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=a.layers, n_embd=768, n_head=12, vocab_size=50257,
                                  n_positions=1024)
    model = transformers.GPT2LMHeadModel(cfg).to(dev)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    batch = a.big_batch if a.kind == "batch" and slow else a.batch
    data = batches(a, slow, cfg.vocab_size, dev)
    next(data)
    extra = None
    if a.kind == "extragpu" and slow:
        extra = torch.randn(a.extra_n, a.extra_n, device=dev, dtype=torch.bfloat16)
    steps = a.warmup + a.phases * a.phase_steps if a.phase_steps > 0 else a.steps
    phase_ms = {0: [], 1: []}  # A, B: ms/step of each phase
    # Per step: the main thread's CPU ms and the wall ms from the step's start to opt.step()'s
    # return (the host's issue time): a rank whose host runs the same code slower for a while
    # shows it here, traced or bare (issue 34, "the late stretch").
    cpu_ms, issue_ms = [], []
    t0 = tp = time.perf_counter()
    for step in range(steps):
        c0, w0 = time.thread_time(), time.perf_counter()
        ph = phase_of(a, step)
        if step == a.warmup or (ph >= 0 and (step - a.warmup) % a.phase_steps == 0):
            torch.cuda.synchronize()
            now = time.perf_counter()
            if step == a.warmup:
                t0 = now
            else:
                phase_ms[(ph - 1) % 2].append((now - tp) * 1e3 / a.phase_steps)
            tp = now
            for h in hogs:
                os.kill(h.pid, signal.SIGCONT if ph % 2 == 1 else signal.SIGSTOP)
        on = straggles(a, slow, step)
        x = data.send(on)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        if extra is not None and on:
            y = extra
            for _ in range(a.extra_matmuls):
                y = torch.matmul(extra, y) * 1e-4
        if a.kind == "hostpy" and on:
            log_metrics(a.host_ms)
        opt.step()
        opt.zero_grad(set_to_none=True)
        cpu_ms.append(round((time.thread_time() - c0) * 1e3, 2))
        issue_ms.append(round((time.perf_counter() - w0) * 1e3, 2))
    torch.cuda.synchronize()
    now = time.perf_counter()
    if a.phase_steps > 0:
        phase_ms[(a.phases - 1) % 2].append((now - tp) * 1e3 / a.phase_steps)
    ms = (now - t0) * 1e3 / (steps - a.warmup)
    rec = {"kind": a.kind, "rank": rank, "world": world, "batch": batch, "steps": steps,
           "warmup": a.warmup, "ms_per_step": round(ms, 3), "cpu_ms": cpu_ms, "issue_ms": issue_ms}
    if a.phase_steps > 0:
        rec.update({"phase_steps": a.phase_steps, "a_ms": [round(v, 3) for v in phase_ms[0]],
                    "b_ms": [round(v, 3) for v in phase_ms[1]]})
    print(json.dumps(rec), flush=True)
    dist.barrier()
    dist.destroy_process_group()


# ---------------------------------------------------------------- driver


def ranks_ms(out):
    """Per rank the ms/step of the workers' JSON lines in `out`."""
    return {r: x["ms_per_step"] for r, x in worker_lines(out).items()}


def phase_diff(lines):
    """The in-process A/B result of phased workers: (median A ms/step, median B ms/step) of the
    slowest rank by B (the ranks wait for each other: all report about the same), or None."""
    best = None
    for x in lines.values():
        if x.get("a_ms") and x.get("b_ms"):
            pair = (statistics.median(x["a_ms"]), statistics.median(x["b_ms"]))
            if best is None or pair[1] > best[1]:
                best = pair
    return best


def worker_lines(out):
    """Per rank the workers' JSON objects in `out`. The ranks print concurrently, so
    two objects can share a line (the traced batch run of 2026-11-27 lost both that way)."""
    per, dec = {}, json.JSONDecoder()
    for line in out.splitlines():
        i = line.find("{")
        while i >= 0:
            try:
                r, end = dec.raw_decode(line, i)
            except ValueError:
                i = line.find("{", i + 1)
                continue
            if isinstance(r, dict) and "ms_per_step" in r and "rank" in r:
                per[r["rank"]] = r
            i = line.find("{", end)
    return per


def runs_from_log(path):
    """(name, traced) -> max ms/step of each job in a driver's log.txt: its "$ " command line and
    the output after it (recovers runs whose JSON lines results.jsonl lost)."""
    runs, key, out = {}, None, []

    def flush():
        per = ranks_ms("\n".join(out))
        if key and per:
            runs.setdefault(key, max(per.values()))

    for line in open(path):
        if line.startswith("$ "):
            flush()
            key, out = None, []
            if "ddp_stragglers.py --kind " in line:
                kind = line.split("--kind ")[1].split()[0]
                nomarks = "--iteration-ranges off" in line
                key = (kind + "_nomarks" if nomarks else kind, "stepscope profile" in line)
        else:
            out.append(line)
    flush()
    return runs


class Driver:
    def __init__(self, a):
        self.a = a
        self.t0 = time.time()
        self.out = os.path.abspath(a.out)
        self.work = os.path.join("/tmp", "ddp_stragglers", a.tag or "run")
        shutil.rmtree(self.work, ignore_errors=True)  # no summary of an earlier run is kept
        os.makedirs(self.out, exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        self.log = open(os.path.join(self.out, "log.txt"), "a", buffering=1)
        self.jsonl = open(os.path.join(self.out, "results.jsonl"), "a", buffering=1)
        self.kept = []  # small result files for summaries.tgz
        self.tar_n, self.tar_size = 0, 0  # traces_N.tar being filled

    def say(self, text):
        self.log.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()

    def record(self, obj):
        obj["t_s"] = round(time.time() - self.t0, 1)
        self.jsonl.write(json.dumps(obj) + "\n")

    def sh(self, cmd, timeout=240, cwd=None):
        """Runs cmd in a process group of its own (killed whole on timeout); its output."""
        start = time.time()
        self.say("$ " + " ".join(cmd))
        try:
            p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
        except OSError as e:
            self.say("[cannot run: %s]" % e)
            return 127, ""
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            rc = 124
        self.say(out)
        if err.strip():
            self.say("[stderr] " + "\n".join(err.strip().splitlines()[-15:]))
        self.say("[rc=%d, %.1f s]" % (rc, time.time() - start))
        return rc, out

    def job(self, kind):
        here = os.path.abspath(__file__)
        a = self.a
        return ["torchrun", "--nproc-per-node", str(a.nproc), here, "--kind", kind,
                "--steps", str(a.steps), "--warmup", str(a.warmup), "--layers", str(a.layers),
                "--batch", str(a.batch), "--big-batch", str(a.big_batch), "--seq", str(a.seq),
                "--loader-ms", str(a.loader_ms), "--host-ms", str(a.host_ms),
                "--hogs", str(a.hogs), "--extra-matmuls", str(a.extra_matmuls),
                "--extra-n", str(a.extra_n), "--slow-rank", str(a.slow_rank),
                "--phase-steps", str(a.phase_steps), "--phases", str(a.phases)]

    def run_kind(self, kind, traced, name=None, extra=()):
        name = self.a.tag + (name or kind)
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        cmd = self.job(kind)
        if traced:
            cmd = [self.a.stepscope, "profile", "-q", "-f", *self.a.profile_args.split(), *extra, "-o",
                   os.path.join(d, name + "_r%q{RANK}"), "--"] + cmd
        rc, out = self.sh(cmd, timeout=200)
        lines = worker_lines(out)
        per = {r: x["ms_per_step"] for r, x in lines.items()}
        self.record({"what": "run", "kind": kind, "name": name, "traced": traced, "rc": rc,
                     "ms_per_step": {str(k): v for k, v in sorted(per.items())},
                     "max_ms": max(per.values()) if per else None,
                     "phases_ab_ms": phase_diff(lines),
                     "warmup": self.a.warmup,
                     "cpu_ms": {str(k): x.get("cpu_ms") for k, x in sorted(lines.items())},
                     "issue_ms": {str(k): x.get("issue_ms") for k, x in sorted(lines.items())}})
        return d, name

    def ranks(self, kind, traces, sel, what):
        """`ranks` (text and JSON) over `traces`, on the steps `sel` (None: all); recorded."""
        B = self.a.stepscope
        steps = ["--steps", ",".join(str(i) for i in sel)] if sel else []
        rc, text = self.sh([B, "ranks"] + steps + traces, timeout=120)
        self.keep(kind + "_" + what + ".txt", text)
        rc, js = self.sh([B, "ranks", "--format", "json"] + steps + traces, timeout=120)
        self.keep(kind + "_" + what + ".json", js)
        try:
            self.record({"what": what, "kind": kind, "json": json.loads(js)})
        except ValueError:
            self.record({"what": what, "kind": kind, "rc": rc, "json": None})

    def analyze_kind(self, kind, d):
        B = self.a.stepscope
        traces = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".sqlite"))
        if not traces:
            self.say("no traces for " + kind)
            return
        if self.a.phase_steps > 0:
            # The straggling (B) phases, and the balanced (A) phases: no straggler there.
            self.ranks(kind, traces, iterations(self.a, True), "ranks")
            self.ranks(kind, traces, iterations(self.a, False), "ranks_a")
        else:
            self.ranks(kind, traces, None, "ranks")
        self.sh([B, "summarize", "-f"] + traces, timeout=120)
        for t in traces:
            base = os.path.basename(t)[:-len(".sqlite")]
            s = os.path.join(d, base + ".summary.json")
            if os.path.exists(s):
                self.kept.append((s, "summaries/" + os.path.basename(s)))
            rc, an = self.sh([B, "analyze", t], timeout=120)
            self.keep(base + "_analyze.txt", an)
        self.pack_small()
        packed = self.a.pack_traces
        if packed is None or kind[len(self.a.tag):] in packed.split(","):
            self.pack_traces(kind)

    def keep(self, name, text):
        p = os.path.join(self.work, "results", name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        self.kept.append((p, "results/" + name))

    def pack_small(self):
        tmp = os.path.join(self.out, ".summaries%s.tgz" % self.a.tag.rstrip("_"))
        with tarfile.open(tmp, "w:gz") as tar:
            for path, arc in self.kept:
                if os.path.exists(path):
                    tar.add(path, arcname=arc)
        os.replace(tmp, os.path.join(self.out, os.path.basename(tmp)[1:]))

    def pack_traces(self, name):
        """Appends the traces of `name`, gzipped, to traces_N.tar (at most 15 MiB a file, 4
        files): each kind's traces are there as soon as they are analyzed."""
        limit = 15 << 20
        d = os.path.join(self.work, name)
        for f in sorted(os.listdir(d)):
            if not f.endswith(".sqlite"):
                continue
            p = os.path.join(d, f)
            subprocess.run(["gzip", "-kf6", p])
            n = os.path.getsize(p + ".gz")
            if self.tar_size + n > limit or self.tar_n == 0:
                if n > limit or self.tar_n == 4:
                    self.say("trace not packed (size %d): %s" % (n, f))
                    os.remove(p + ".gz")
                    continue
                self.tar_n, self.tar_size = self.tar_n + 1, 0
            with tarfile.open(os.path.join(self.out, "traces_%d.tar" % self.tar_n), "a") as tar:
                tar.add(p + ".gz", arcname=name + "/" + f + ".gz")
            self.tar_size += n
            os.remove(p + ".gz")

    def main(self):
        a = self.a
        kinds = [k for k in a.kinds.split(",") if k]
        self.sh(["nvidia-smi", "-L"], timeout=30)
        self.sh([a.stepscope, "--version"], timeout=30)
        if a.warmup_run:
            self.say("== warm-up (bare balanced, not recorded)")
            self.sh(self.job("balanced"), timeout=200)
        arms = a.arms.split(",")
        rounds = [arms] if arms == ["bare", "traced"] else [[arm] for arm in arms]
        for rnd in rounds:
            for kind in kinds:
                for arm in rnd:
                    if time.time() - self.t0 > a.budget_s:
                        self.say("== budget spent: skipping %s %s" % (arm, kind))
                        self.record({"what": "skipped", "kind": kind, "arm": arm})
                        continue
                    self.say("== %s%s: %s" % (a.tag, kind, arm))
                    d, name = self.run_kind(kind, traced=arm == "traced")
                    if arm == "traced":
                        self.analyze_kind(name, d)
        for kind in [k for k in a.nomarks.split(",") if k]:
            if time.time() - self.t0 > a.budget_s:
                self.say("== budget spent: skipping %s_nomarks" % kind)
                continue
            # The loop exactly as the issue saw it: no step ranges at all (no iteration ranges).
            name = kind + "_nomarks"
            self.say("== %s: traced, --iteration-ranges off" % kind)
            d, name = self.run_kind(kind, True, name, ("--iteration-ranges", "off"))
            self.analyze_kind(name, d)
        if "balanced" in kinds and a.phase_steps <= 0 and time.time() - self.t0 < a.budget_s + 60:
            self.say("== balanced again: bare (drift check)")
            self.run_kind("balanced", traced=False)
        self.say("== done in %.0f s" % (time.time() - self.t0))


def evaluate(path, slow_rank):
    """Per kind: the measured step-time difference to the balanced run against the verdict's
    rank, cause and per-step cost (what the others wait). With in-process phases (the driver's
    default) the difference is median B phase - median A phase of one job (interleaved, so
    drift between jobs cancels), and the verdict is `ranks --steps` over the B phases; the A
    phases must show no straggler. The verdict prices the traced job, whose traces it reads:
    the check is against the traced difference (the bare one where the traced job printed no
    time), and the bare difference is shown beside it (the tracer slows a host-bound straggler
    more than the balanced run: docs/ranks.md). Without phases, the difference is between jobs:
    the kind's and the balanced one."""
    runs, phased, verdicts, a_verdicts = {}, {}, {}, {}
    for line in open(path):
        r = json.loads(line)
        name = r.get("name", r.get("kind"))
        if r.get("what") == "run" and r.get("max_ms") is not None:
            runs.setdefault((name, r["traced"]), r["max_ms"])
            if r.get("phases_ab_ms"):
                phased.setdefault((name, r["traced"]), r["phases_ab_ms"])
        elif r.get("what") == "ranks" and r.get("json"):
            verdicts[r["kind"]] = r["json"].get("verdict", [])
        elif r.get("what") == "ranks_a" and r.get("json"):
            a_verdicts[r["kind"]] = r["json"].get("verdict", [])
    log = os.path.join(os.path.dirname(path), "log.txt")
    if os.path.exists(log):
        for key, ms in runs_from_log(log).items():
            runs.setdefault(key, ms)
    ok_all = True
    print("kind                 A ms   +bare  +traced  verdict (rank, cause, wait ms/step)       "
          "vs bare  vs traced  A phases      ok")
    for name, v in sorted(verdicts.items()):
        base = name.split("_nomarks")[0]
        # NAME is the driver's --tag (n4_, default1_, ...) and then the kind.
        kind = next((k for k in KINDS if base == k or base.endswith("_" + k)), base)
        tag = base[:len(base) - len(kind)]
        diff, a_ms = {}, None
        for traced in (False, True):
            if (name, traced) in phased:
                a, b = phased[(name, traced)]
                diff[traced] = b - a
                a_ms = a if traced or a_ms is None else a_ms
            else:
                ms, ref = runs.get((name, traced)), runs.get((tag + "balanced", traced))
                diff[traced] = ms - ref if ms is not None and ref is not None else None
        real = diff[True] if diff[True] is not None else diff[False]
        got = v[0] if v else None
        quiet_a = not a_verdicts.get(name)
        if kind == "balanced":
            ok = not v
        else:
            ok = (got is not None and got["rank"] == slow_rank and got["cause"] == EXPECTED_CAUSE[kind]
                  and real is not None and abs(got["others_wait_ms"] - real) <= 0.15 * abs(real))
        ok = ok and quiet_a
        ok_all &= ok
        desc = ("rank %d, %s, %.2f" % (got["rank"], got["cause"], got["others_wait_ms"]) if got
                else "no straggler")

        def fmt(x, f):
            return f % x if x is not None else "-"

        def dev(traced):
            d = diff[traced]
            return "%+.1f%%" % (100 * (got["others_wait_ms"] - d) / d) if got and d else "-"

        a_desc = "-" if name not in a_verdicts else ("none" if quiet_a else "STRAGGLER")
        print("%-18s %7s %7s %8s  %-40s %7s %9s  %-9s  %s" % (
            name, fmt(a_ms, "%.2f"), fmt(diff[False], "%+.2f"), fmt(diff[True], "%+.2f"), desc,
            dev(False), dev(True), a_desc, "ok" if ok else "NO"))
    return 0 if ok_all else 1


def host_stretches(path, over_ms=1.0):
    """Per run (bare or traced): per rank the median main-thread CPU ms per step after the
    warm-up (the run's --warmup, 12 where not recorded), and the stretches of steps where it ran over the other ranks' median by over_ms
    (the same code slower on one rank's host: the "late stretch" of docs/ranks.md)."""
    print("%-24s %-6s %-4s %-9s %s" % ("run", "arm", "rank", "cpu ms", "steps over the others' median + %.1f ms"
                                        % over_ms))
    for line in open(path):
        r = json.loads(line)
        cpu = r.get("cpu_ms") or {}
        if r.get("what") != "run" or not cpu or not all(cpu.values()):
            continue
        ranks = sorted(cpu, key=int)
        n = min(len(cpu[k]) for k in ranks)
        w = min(r.get("warmup", 12), n - 1)
        for k in ranks:
            mine = cpu[k][:n]
            others = [statistics.median(cpu[o][i] for o in ranks if o != k) for i in range(n)]
            over = [i for i in range(w, n) if mine[i] - others[i] > over_ms]
            # Consecutive steps as one stretch: i - position is constant along a run.
            runs = [[i for _, i in g] for _, g in itertools.groupby(enumerate(over), lambda p: p[1] - p[0])]
            text = ", ".join("%d-%d" % (g[0], g[-1]) if len(g) > 1 else str(g[0]) for g in runs)
            print("%-24s %-6s %-4s %-9.2f %s" % (r.get("name"), "traced" if r.get("traced") else "bare", k,
                                                 statistics.median(mine[w:]), text or "-"))
    return 0


def main():
    a = parse_args()
    if a.host_steps:
        sys.exit(host_stretches(a.host_steps))
    if a.evaluate:
        sys.exit(evaluate(a.evaluate, a.slow_rank))
    if a.driver:
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
        os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
        os.environ.setdefault("PYTHONUNBUFFERED", "1")
        Driver(a).main()
    else:
        worker(a)


if __name__ == "__main__":
    main()
