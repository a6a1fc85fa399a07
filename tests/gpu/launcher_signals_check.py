#!/usr/bin/env python3
"""Signals through `stepscope profile` with a real CUDA/PyTorch job (the CPU
tests in tests/capture/launcher_signals_test.py check the same without a GPU).

How to run (GPU machine, from the repository root, stepscope built in build/):
    python3 tests/gpu/launcher_signals_check.py --stepscope build/bin/stepscope --out /tmp/sig
Takes about 80 s. Each part runs the same PyTorch job bare and under the
launcher and compares; a summary table is printed last and written to
OUT/summary.json.

Parts:
  timeout     `timeout -s TERM 15 [stepscope profile --] job`: the job's SIGTERM
              handler must run exactly once (graceful stop: exit 0), trace finalized
  killpg      SIGTERM to the launcher's process group: once, exit 0, finalized
  nohup       `nohup [stepscope profile --] job` + SIGHUP to the group: the job
              survives (exit 0) like bare, trace finalized
"""
import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

JOB = r'''
import os, signal, sys, time
count = 0
def on_term(sig, frame):
    global count
    count += 1
    if count > 1:           # the "second signal is forceful" convention
        print(f"count {count} forceful", flush=True)
        os._exit(3)
signal.signal(signal.SIGTERM, on_term)  # before the slow torch import
import torch
x = torch.randn(2048, 2048, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
stop_at = None
while time.time() < end:
    for _ in range(10):
        x = (x @ x).tanh()
    torch.cuda.synchronize()
    if count and stop_at is None:
        stop_at = time.time() + 2.0   # graceful: finish within 2 s
    if stop_at and time.time() > stop_at:
        break
print(f"count {count} graceful", flush=True)
'''


CPU_ONLY = False


def finalized(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        kernels = db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
        db.close()
        return meta.get("finalized") == "1", kernels
    except Exception as e:  # noqa: BLE001 (report, do not stop)
        return False, f"unreadable: {e}"


def start(argv, out_dir):
    return subprocess.Popen(argv, cwd=out_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def wait_ready(p, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        line = p.stdout.readline()
        if not line or line == b"ready\n":
            return line == b"ready\n"
    return False


def part(name, bare_argv, traced_argv, send, out_dir, expect):
    rows = []
    for label, argv in (("bare", bare_argv), ("profile", traced_argv)):
        row = {"part": name, "run": label}
        try:
            p = start(argv, out_dir)
            if send is None:
                out, err = p.communicate(timeout=120)
            else:
                if not wait_ready(p):
                    raise RuntimeError("job never printed ready")
                time.sleep(1.0)
                send(p.pid)
                out, err = p.communicate(timeout=120)
            text = out.decode(errors="replace").split()
            row.update(rc=p.returncode, said=" ".join(text[-3:]), ok=expect(p.returncode, text))
            with open(os.path.join(out_dir, f"{name}_{label}.err"), "wb") as f:
                f.write(err)
            if label == "profile":
                row["finalized"], row["kernels"] = finalized(os.path.join(out_dir, f"{name}.sqlite"))
                row["ok"] = row["ok"] and (CPU_ONLY or row["finalized"] is True)
        except Exception as e:  # noqa: BLE001
            row.update(ok=False, error=str(e))
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", default="build/bin/stepscope")
    ap.add_argument("--out", default="/tmp/stepscope-signals")
    ap.add_argument("--cpu", action="store_true",
                    help="check this script without a GPU: the job does no CUDA work, no trace is expected")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    stepscope = os.path.abspath(a.stepscope)
    job = os.path.join(a.out, "job.py")
    with open(job, "w") as f:
        f.write(JOB if not a.cpu else JOB.replace("import torch\n", "").replace(
            'x = torch.randn(2048, 2048, device="cuda")\ntorch.cuda.synchronize()\n', "").replace(
            "    for _ in range(10):\n        x = (x @ x).tanh()\n    torch.cuda.synchronize()\n",
            "    time.sleep(0.01)\n"))
    global CPU_ONLY
    CPU_ONLY = a.cpu
    py = sys.executable

    def profiled(name, seconds):
        return [stepscope, "profile", "-q", "-f", "-o", name, "--", py, job, str(seconds)]

    def once(rc, words):
        return rc == 0 and words[-2:] == ["1", "graceful"]

    rows = []
    try:
        rows += part("timeout", ["timeout", "--preserve-status", "-s", "TERM", "15", py, job, "60"],
                     ["timeout", "--preserve-status", "-s", "TERM", "15"] + profiled("timeout", 60),
                     None, a.out, once)
    except Exception as e:  # noqa: BLE001
        rows.append({"part": "timeout", "ok": False, "error": str(e)})
    try:
        rows += part("killpg", [py, job, "60"], profiled("killpg", 60),
                     lambda pid: os.killpg(pid, signal.SIGTERM), a.out, once)
    except Exception as e:  # noqa: BLE001
        rows.append({"part": "killpg", "ok": False, "error": str(e)})
    try:
        rows += part("nohup", ["nohup", py, job, "4"], ["nohup"] + profiled("nohup", 4),
                     lambda pid: os.killpg(pid, signal.SIGHUP), a.out,
                     lambda rc, words: rc == 0 and words[-2:] == ["0", "graceful"])
    except Exception as e:  # noqa: BLE001
        rows.append({"part": "nohup", "ok": False, "error": str(e)})

    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(f"{'part':8} {'run':8} {'rc':>4} {'finalized':>9} {'kernels':>8}  {'output':24} ok")
    for r in rows:
        print(f"{r.get('part', ''):8} {r.get('run', ''):8} {str(r.get('rc', '')):>4} "
              f"{str(r.get('finalized', '')):>9} {str(r.get('kernels', '')):>8}  "
              f"{r.get('said', r.get('error', ''))[:24]:24} {'ok' if r.get('ok') else 'FAIL'}")
    return 0 if rows and all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
