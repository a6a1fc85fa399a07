#!/usr/bin/env python3
"""Figure: what a worker-fed batch costs the training thread (docs/whatif.md, data_loading).

The data_loading fix (DataLoader num_workers > 0) moves the dataset's work off the
training thread, but the thread still takes each batch from the workers' queue: it
unpickles the batch, maps every tensor's shared-memory segment, and (pin_memory=True)
hands it through the pin-memory thread. That per-batch cost is what stays of a loading
wait after the fix; `stepscope analyze --worker-fetch-us N` sets it (docs/whatif.md).

This script measures it with PyTorch's own DataLoader, no GPU work: batches shaped like
the calibration workloads, fetched by the main thread with a pause between fetches (the
step, during which the workers have the next batch ready), workers 0 vs 4, pin_memory
on; it prints the median time of `next()` on the main thread per case, interleaved
rounds (A B A B ...), and writes them as JSON.

usage:  python3 bench/worker_fetch.py [--rounds 5] [--batches 60] [--step-ms 20] [--json OUT]
"""
import argparse
import json
import statistics
import time

import torch


class Tokens(torch.utils.data.Dataset):
    """Samples like tests/gpu/hf_lora_train.py (dict of 3 tensors) or train_gpt.py (tuple of 2)."""

    def __init__(self, n, seq, kind):
        self.n, self.seq, self.kind = n, seq, kind

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.full((self.seq,), i % 1000, dtype=torch.long)
        if self.kind == "dict3":
            return {"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones_like(ids)}
        return ids, ids.clone()


def fetch_times(kind, seq, batch, workers, batches, step_s):
    data = Tokens(batch * (batches + 8), seq, kind)
    loader = torch.utils.data.DataLoader(data, batch_size=batch, num_workers=workers, pin_memory=True,
                                         persistent_workers=workers > 0)
    it = iter(loader)
    for _ in range(4):  # workers started, queues full
        next(it)
        time.sleep(step_s)
    out = []
    for _ in range(batches):
        t0 = time.perf_counter()
        next(it)
        out.append(time.perf_counter() - t0)
        time.sleep(step_s)
    del it, loader
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--step-ms", type=float, default=20.0)
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    cases = [("hf_lora (dict of 3, 8x512)", "dict3", 512, 8), ("train_gpt small (2, 16x512)", "tuple2", 512, 16)]
    res = {}
    for name, kind, seq, batch in cases:
        per = {0: [], 4: []}
        for _ in range(a.rounds):
            for w in (0, 4):
                per[w].append(statistics.median(fetch_times(kind, seq, batch, w, a.batches, a.step_ms / 1e3)))
        res[name] = {f"workers{w}_us": [round(x * 1e6, 1) for x in v] for w, v in per.items()}
        res[name].update({f"workers{w}_median_us": round(statistics.median(v) * 1e6, 1) for w, v in per.items()})
        print(f"{name:30} main-thread next(): workers 0 {res[name]['workers0_median_us']:8.1f} us, "
              f"workers 4 {res[name]['workers4_median_us']:8.1f} us (medians of {a.rounds} rounds)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
