#!/usr/bin/env python3
"""Measured peaks that `stepscope plan` is calibrated against (docs/PERFORMANCE.md, docs/plan.md).

Each configuration runs in its own Python process (so peaks are independent and one OOM or crash does
not take the others down), trains 3 steps and records torch.cuda.max_memory_allocated and
max_memory_reserved over them, plus per-phase numbers (forward / backward / optimizer peaks, what is
alive between phases, exact parameter, gradient and optimizer-state bytes) that explain the peak.

  python3 tests/gpu/plan_calibration.py --out DIR [--workload ../shared/workloads/train_gpt.py]
                                        [--only NAME,NAME] [--list]
  -> DIR/plan_peaks.json  {"device": ..., "torch": ..., "configs": [{"name", "kind", ..., "max_allocated", ...}]}
  -> DIR/logs/NAME.log    each child's output

Configurations are listed in CONFIGS below (train_gpt.py presets x --checkpoint x --dtype, and Hugging Face
models built from a config dict, no download, with and without peft LoRA). The whole run takes about
3-5 minutes on an H100. Needs torch; the HF configurations need transformers (and peft for LoRA).
"""
import argparse
import json
import os
import subprocess
import sys
import time

from gpukit import find_workload


LLAMA = {"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 16,
         "num_key_value_heads": 16, "intermediate_size": 2816, "vocab_size": 32000,
         "max_position_embeddings": 4096, "tie_word_embeddings": False}
MISTRAL = {"model_type": "mistral", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 16,
           "num_key_value_heads": 8, "intermediate_size": 3584, "vocab_size": 32000,
           "max_position_embeddings": 4096, "sliding_window": None, "tie_word_embeddings": False}
QWEN2 = {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 8, "num_attention_heads": 14,
         "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
         "max_position_embeddings": 4096, "tie_word_embeddings": True}
GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
        "vocab_size": 50257}
LORA16 = {"r": 16, "lora_alpha": 32, "target_modules": ["q_proj", "v_proj"], "lora_dropout": 0.0}
LORA8 = {"r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"], "lora_dropout": 0.0}


def _train_gpt_configs():
    out = []
    for preset in ("tiny", "small", "medium"):
        for dtype in ("bf16", "fp32"):
            for ckpt in (False, True):
                out.append({"name": f"gpt_{preset}_{dtype}{'_ckpt' if ckpt else ''}", "kind": "train_gpt",
                             "preset": preset, "dtype": dtype, "checkpoint": ckpt})
    return out


# kind "hf": dtype "bf16" = model.to(bfloat16), no autocast; "amp-bf16" = fp32 model under
# torch.autocast(bfloat16); "fp32" = fp32 model, no autocast. optimizer "adamw-fused" =
# torch.optim.AdamW(fused=True), "adamw" = torch.optim.AdamW() (foreach), "sgd" = SGD(momentum=0.9).
CONFIGS = _train_gpt_configs() + [
    {"name": "llama_bf16", "kind": "hf", "config": LLAMA, "batch": 4, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": None, "checkpoint": False},
    {"name": "llama_bf16_ckpt", "kind": "hf", "config": LLAMA, "batch": 4, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": None, "checkpoint": True},
    {"name": "llama_amp", "kind": "hf", "config": LLAMA, "batch": 4, "seq": 1024, "dtype": "amp-bf16",
     "optimizer": "adamw-fused", "lora": None, "checkpoint": False},
    {"name": "llama_bf16_foreach", "kind": "hf", "config": LLAMA, "batch": 4, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw", "lora": None, "checkpoint": False},
    {"name": "llama_bf16_lora16", "kind": "hf", "config": LLAMA, "batch": 4, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": LORA16, "checkpoint": False},
    {"name": "llama_bf16_lora8_ckpt", "kind": "hf", "config": LLAMA, "batch": 4, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": LORA8, "checkpoint": True},
    {"name": "mistral_bf16", "kind": "hf", "config": MISTRAL, "batch": 2, "seq": 2048, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": None, "checkpoint": False},
    {"name": "qwen2_bf16", "kind": "hf", "config": QWEN2, "batch": 2, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": None, "checkpoint": False},
    {"name": "qwen2_bf16_lora8", "kind": "hf", "config": QWEN2, "batch": 2, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": LORA8, "checkpoint": False},
    {"name": "gpt2_bf16", "kind": "hf", "config": GPT2, "batch": 4, "seq": 1024, "dtype": "bf16",
     "optimizer": "adamw-fused", "lora": None, "checkpoint": False},
    {"name": "gpt2_fp32_sgd", "kind": "hf", "config": GPT2, "batch": 4, "seq": 512, "dtype": "fp32",
     "optimizer": "sgd", "lora": None, "checkpoint": False},
]


# ---------------------------------------------------------------- child side


class PhaseMeter:
    """Per-phase peaks: the peak counter is reset at each phase boundary and the running maximum
    kept here, so the overall maximum equals what max_memory_allocated would report for the run."""

    def __init__(self, torch):
        self.torch = torch
        self.max_alloc = 0
        self.max_reserved = 0
        self.steps = []
        self.cur = {}

    def mark(self, name):
        cuda = self.torch.cuda
        peak, res = cuda.max_memory_allocated(), cuda.max_memory_reserved()
        self.max_alloc = max(self.max_alloc, peak)
        self.max_reserved = max(self.max_reserved, res)
        self.cur[name + "_peak"] = peak
        self.cur[name + "_end"] = cuda.memory_allocated()
        cuda.reset_peak_memory_stats()

    def end_step(self):
        self.steps.append(self.cur)
        self.cur = {}


def tensor_bytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def opt_state_bytes(torch, opt):
    return sum(tensor_bytes([v for v in st.values() if torch.is_tensor(v) and v.is_cuda])
               for st in opt.state.values())


def child_train_gpt(cfg, workload, torch):
    """Runs train_gpt.py itself (runpy) with the phase meter hooked onto backward and optimizer.step."""
    import runpy
    meter = PhaseMeter(torch)
    info = {}
    orig_backward = torch.Tensor.backward

    def backward(self, *a, **k):
        meter.mark("forward")
        r = orig_backward(self, *a, **k)
        meter.mark("backward")
        return r

    def pre(opt, args, kwargs):
        info["grad_bytes"] = tensor_bytes([p.grad for g in opt.param_groups for p in g["params"]
                                           if p.grad is not None])
        meter.mark("between")

    def post(opt, args, kwargs):
        meter.mark("optimizer")
        info["opt_state_bytes"] = opt_state_bytes(torch, opt)
        info["param_bytes"] = tensor_bytes([p for g in opt.param_groups for p in g["params"]])
        meter.end_step()

    torch.Tensor.backward = backward
    # Per-optimizer hooks (public API), attached when train_gpt.py creates its AdamW.
    orig_init = torch.optim.AdamW.__init__

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        self.register_step_pre_hook(pre)
        self.register_step_post_hook(post)

    torch.optim.AdamW.__init__ = init
    sys.argv = [workload, "--preset", cfg["preset"], "--dtype", cfg["dtype"], "--steps", "2", "--warmup", "1",
                "--workers", "0", "--no-nvtx", "--json"] + (["--checkpoint"] if cfg["checkpoint"] else [])
    torch.cuda.reset_peak_memory_stats()
    try:
        runpy.run_path(workload, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
    meter.mark("tail")
    return meter, info


def child_hf(cfg, torch):
    import transformers
    d = dict(cfg["config"])
    mc = transformers.AutoConfig.for_model(d.pop("model_type"), **d)
    mc.use_cache = False
    dev = torch.device("cuda")
    torch.manual_seed(0)
    with dev:
        model = transformers.AutoModelForCausalLM.from_config(mc, attn_implementation="sdpa")
    if cfg["dtype"] == "bf16":
        model.to(torch.bfloat16)
    if cfg["checkpoint"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if cfg["lora"]:
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(task_type="CAUSAL_LM", **cfg["lora"]))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg["optimizer"] == "sgd":
        opt = torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    else:
        opt = torch.optim.AdamW(params, lr=1e-4, fused=cfg["optimizer"] == "adamw-fused")
    info = {"param_bytes": tensor_bytes(list(model.parameters())), "trainable_param_bytes": tensor_bytes(params),
            "params": sum(p.numel() for p in model.parameters()),
            "trainable_params": sum(p.numel() for p in params), "transformers": transformers.__version__}
    b, s, vocab = cfg["batch"], cfg["seq"], mc.vocab_size
    g = torch.Generator(device="cpu").manual_seed(0)
    batches = [torch.randint(0, vocab, (b, s), generator=g).to(dev) for _ in range(3)]
    amp = cfg["dtype"] == "amp-bf16"
    torch.cuda.synchronize()
    info["setup_allocated"] = torch.cuda.memory_allocated()
    meter = PhaseMeter(torch)
    torch.cuda.reset_peak_memory_stats()
    for x in batches:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = model(input_ids=x, labels=x).loss
        meter.mark("forward")
        loss.backward()
        meter.mark("backward")
        info["grad_bytes"] = tensor_bytes([p.grad for p in params if p.grad is not None])
        opt.step()
        meter.mark("optimizer")
        opt.zero_grad(set_to_none=True)
        del loss
        meter.mark("between")
        meter.end_step()
    info["opt_state_bytes"] = opt_state_bytes(torch, opt)
    return meter, info


def child(cfg, workload):
    import torch
    t0 = time.time()
    if cfg["kind"] == "train_gpt":
        meter, info = child_train_gpt(cfg, workload, torch)
    else:
        meter, info = child_hf(cfg, torch)
    torch.cuda.synchronize()
    res = dict(cfg)
    res.update(info)
    res.update({"ok": True, "max_allocated": meter.max_alloc, "max_reserved": meter.max_reserved,
                "steps": meter.steps, "seconds": round(time.time() - t0, 2), "torch": torch.__version__,
                "device": torch.cuda.get_device_name()})
    print("PLAN_RESULT " + json.dumps(res), flush=True)


# ---------------------------------------------------------------- parent side


def parent(a):
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    names = set(a.only.split(",")) if a.only else None
    results = []
    t_start = time.time()
    for cfg in CONFIGS:
        if names and cfg["name"] not in names:
            continue
        log = os.path.join(a.out, "logs", cfg["name"] + ".log")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(cfg), "--workload", a.workload]
        res = dict(cfg, ok=False)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=a.timeout)
            text = p.stdout.decode(errors="replace")
            with open(log, "w") as f:
                f.write(text)
            lines = [ln for ln in text.splitlines() if ln.startswith("PLAN_RESULT ")]
            if lines:
                res = json.loads(lines[-1][len("PLAN_RESULT "):])
            else:
                res["error"] = (text.strip().splitlines() or ["no output"])[-1][:300]
                res["rc"] = p.returncode
        except Exception as e:  # one bad configuration must not stop the others
            res["error"] = f"{type(e).__name__}: {e}"[:300]
        results.append(res)
        with open(os.path.join(a.out, "plan_peaks.json.tmp"), "w") as f:
            json.dump({"configs": results}, f, indent=1)
        os.replace(os.path.join(a.out, "plan_peaks.json.tmp"), os.path.join(a.out, "plan_peaks.json"))
        gib = res.get("max_allocated", 0) / 2**30
        print(f"{cfg['name']:<24} {'ok ' if res.get('ok') else 'ERR'} {gib:8.3f} GiB "
              f"{res.get('seconds', 0):6.1f} s {res.get('error', '')}", flush=True)
    dev = next((r.get("device") for r in results if r.get("device")), None)
    tv = next((r.get("torch") for r in results if r.get("torch")), None)
    with open(os.path.join(a.out, "plan_peaks.json"), "w") as f:
        json.dump({"device": dev, "torch": tv, "seconds": round(time.time() - t_start, 1), "configs": results},
                  f, indent=1)
    print(f"\n{'config':<24} {'max_allocated GiB':>18} {'max_reserved GiB':>17}")
    for r in results:
        print(f"{r['name']:<24} {r.get('max_allocated', 0) / 2**30:18.3f} {r.get('max_reserved', 0) / 2**30:17.3f}"
              f"{'' if r.get('ok') else '  FAILED'}")
    print(f"{sum(1 for r in results if r.get('ok'))}/{len(results)} ok in {time.time() - t_start:.0f} s on {dev}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="plan_calibration_out")
    p.add_argument("--workload", default="", help="train_gpt.py (default: gpukit.find_workload)")
    p.add_argument("--only", help="comma-separated configuration names")
    p.add_argument("--list", action="store_true", help="print the configurations as JSON and exit")
    p.add_argument("--timeout", type=int, default=120, help="seconds per configuration")
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.list:
        print(json.dumps(CONFIGS, indent=1))
        return 0
    a.workload = find_workload(a.workload)
    if a.child:
        child(json.loads(a.child), a.workload)
        return 0
    parent(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
