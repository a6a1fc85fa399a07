#!/usr/bin/env python3
"""MFU by hand against `stepscope mfu` on four real GPU fixtures, and the FLOPs roofline counters
measured against the model's on two more (docs/flops.md).

For each fixture this script reads the model's config.json, applies Narayanan et al. 2021's
FLOP count itself (eq. 3 written out: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) for train_gpt.py's
plain GPT; the same three parts, per token, for the Llama of tests/gpu/hf_lora_train.py, with
LoRA's frozen weights getting no weight gradient), reads the median step time from
`stepscope steps --format json`, divides by NVIDIA's published bf16 dense peak (989.4 TFLOP/s,
H100 SXM5 = H200 SXM: the H100 whitepaper's 1,978.9 sparse / 2) and asserts that `stepscope
mfu` prints the same MFU within 2%: train_gpt.py small and the HF Llama, each on an H100 and an
H200. The counters' FLOPs per step (`roofline --top 0`, no --model) must be within 5% of eq. 3's.

  mfu_hand_check.py BUILD_DIR     (ctest: mfu_hand_check)
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU = os.path.join(SRC, "tests", "fixtures", "gpu")
CONFIGS = os.path.join(SRC, "tests", "plan", "configs")
PEAK_BF16 = 989.4e12  # NVIDIA H100 Tensor Core GPU Architecture whitepaper: BF16 dense, SXM5


def gpt_flops(cfg, batch, seq):
    """train_gpt.py --preset small: eq. 3 without recomputation (forward + backward = 3 x forward)."""
    B, s, l, h, V = batch, seq, cfg["n_layer"], cfg["n_embd"], cfg["vocab_size"]
    assert cfg.get("n_inner", 4 * h) == 4 * h, "eq. 3 assumes a 4h MLP"
    return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))


def llama_lora_flops(cfg, batch, seq, rank, targets):
    """A Llama layer (q, k, v, o; gated MLP of 3 matrices) under LoRA: the frozen weights do their
    forward and input gradient (2 + 2 FLOPs per weight per token), the attention core its forward
    and backward (3 x 4 s h), the frozen head 2 + 2 per weight, the adapters 6 per weight."""
    h, L, V, f = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"], cfg["intermediate_size"]
    d = h // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * d
    T = batch * seq
    layer = h * h + 2 * h * kv + h * h + 3 * h * f
    shapes = {"q_proj": (h, h), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (h, h)}
    adapters = sum(rank * (shapes[t][0] + shapes[t][1]) for t in targets)
    return T * (4 * L * layer + 3 * 4 * seq * h * L + 4 * h * V + 6 * L * adapters)


def stepscope(build, args):
    p = subprocess.run([os.path.join(build, "bin", "stepscope")] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True, env=dict(os.environ, HOME="/nonexistent-home"))
    return json.loads(p.stdout)


CASES = [
    # fixture, config, hand-computed FLOPs, stepscope's model flags
    ("default.sqlite.gz", "train_gpt_small.json", lambda c: gpt_flops(c, 8, 512),
     ["--micro-batch", "8", "--seq-len", "512", "--dtype", "amp-bf16"]),
    ("h100/hf_lora_batch.sqlite.gz", "llama_small.json",
     lambda c: llama_lora_flops(c, 8, 512, 16, ["q_proj", "v_proj"]),
     ["--micro-batch", "8", "--seq-len", "512", "--dtype", "amp-bf16", "--lora-rank", "16",
      "--lora-targets", "q_proj,v_proj"]),
    # The same two workloads on the other kind (tests/fixtures/gpu/README.md, "MFU on both kinds").
    ("h100/train_gpt_small.sqlite.gz", "train_gpt_small.json", lambda c: gpt_flops(c, 8, 512),
     ["--micro-batch", "8", "--seq-len", "512", "--dtype", "amp-bf16"]),
    ("h200_hf_lora_batch.sqlite.gz", "llama_small.json",
     lambda c: llama_lora_flops(c, 8, 512, 16, ["q_proj", "v_proj"]),
     ["--micro-batch", "8", "--seq-len", "512", "--dtype", "amp-bf16", "--lora-rank", "16",
      "--lora-targets", "q_proj,v_proj"]),
]

# "MFU from shapes": `stepscope roofline --top 0` counted every kernel of a train_gpt.py small step
# (FLOPs by precision from hardware counters); `mfu` without --model sums them. Within 5% of the
# FLOPs eq. 3 gives by hand (the counters also see the FLOPs of elementwise work and the optimizer,
# which the model's count leaves out, and miss none of the GEMMs').
COUNTER_CASES = [
    ("h200_roofline_counters_small.sqlite.gz", "train_gpt_small.json", lambda c: gpt_flops(c, 8, 512)),
    ("h100/roofline_counters_small.sqlite.gz", "train_gpt_small.json", lambda c: gpt_flops(c, 8, 512)),
]


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    tmp = tempfile.mkdtemp(prefix="stepscope-mfu-")
    failed = 0
    try:
        for fixture, config, flops_of, flags in CASES:
            trace = unpack(fixture, tmp)
            cfg_path = os.path.join(CONFIGS, config)
            with open(cfg_path) as f:
                cfg = json.load(f)
            flops = flops_of(cfg)
            median_ns = stepscope(build, ["steps", "--format", "json", trace])["step_summary"][0]["median_ns"]
            by_hand = 100 * flops / (median_ns * 1e-9 * PEAK_BF16)
            row = stepscope(build, ["mfu", "--format", "json", "--model", cfg_path] + flags + [trace])["mfu"][0]
            diff = 100 * (row["mfu_pct"] - by_hand) / by_hand
            ok = abs(diff) < 2.0
            failed += not ok
            print(f"{fixture}: {flops / 1e12:.4f} TFLOP/step by hand, {row['tflop_per_step']:.4f} "
                  f"stepscope; median step {median_ns / 1e6:.3f} ms; MFU by hand {by_hand:.2f}% "
                  f"(peak {PEAK_BF16 / 1e12:.1f}), stepscope {row['mfu_pct']:.2f}% (peak "
                  f"{row['peak_tflops']:.1f} {row['peak_source']}): {diff:+.3f}% "
                  f"{'ok' if ok else 'FAIL (over 2%)'}")
        failed += check_counters(build, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


def check_counters(build, tmp):
    """The FLOPs the roofline counters measured per step against the model's, by hand: within 5%."""
    failed = 0
    for fixture, config, flops_of in COUNTER_CASES:
        trace = unpack(fixture, tmp)
        with open(os.path.join(CONFIGS, config)) as f:
            flops = flops_of(json.load(f))
        row = stepscope(build, ["mfu", "--format", "json", trace])["mfu"][0]
        measured = row["tflop_per_step"] * 1e12
        diff = 100 * (measured - flops) / flops
        ok = abs(diff) < 5.0
        failed += not ok
        print(f"{fixture}: counters {measured / 1e12:.4f} TFLOP/step ({row['flop_source']}), model by hand "
              f"{flops / 1e12:.4f}: {diff:+.2f}% {'ok' if ok else 'FAIL (over 5%)'}")
    return failed


def unpack(fixture, tmp):
    trace = os.path.join(tmp, os.path.basename(fixture)[:-3])
    with gzip.open(os.path.join(GPU, fixture)) as fin, open(trace, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    return trace


if __name__ == "__main__":
    sys.exit(main())
