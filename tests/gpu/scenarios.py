"""Problem/fix scenarios on training loops written the usual way (issue 32's external suite).

Each scenario is a model built from its config (nothing downloaded), a loop with no NVTX of ours,
one habit users have (the problem) and the change that removes it (the fix). `make(name)` returns
an object with `step(fix)`: one training step with the problem (fix=False) or with the fix
(fix=True), on the same weights where the fix allows it, so `external_suite.py` can alternate
problem and fix phases inside one process (the in-process A/B method of METHOD.md). Scenarios
whose fix cannot share a process (`in_process = False`) are realized by interleaved process
pairs instead.

`SCENARIOS` is the one list: name -> (family, expected rule, problem, fix, factory).
"""
import math
import time

import torch
import torch.nn.functional as F

from unmarked_loop import TokenisingDataset  # the same tokenising loader as the unmarked loop

DEV = torch.device("cuda")


def _autocast(enabled):
    return torch.autocast("cuda", dtype=torch.bfloat16, enabled=enabled)


def gpt2(layers=6):
    import transformers
    cfg = transformers.GPT2Config(n_layer=layers, n_embd=768, n_head=12, vocab_size=50257,
                                  n_positions=1024)
    return transformers.GPT2LMHeadModel(cfg).to(DEV)


def llama(layers=4):
    import transformers
    cfg = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=1024,
                                   intermediate_size=2816, num_attention_heads=16,
                                   num_key_value_heads=4, vocab_size=32000,
                                   max_position_embeddings=2048)
    return transformers.LlamaForCausalLM(cfg).to(DEV)


def qwen2(layers=4):
    import transformers
    cfg = transformers.Qwen2Config(num_hidden_layers=layers, hidden_size=896,
                                   intermediate_size=4864, num_attention_heads=14,
                                   num_key_value_heads=2, vocab_size=32000,
                                   max_position_embeddings=2048)
    return transformers.Qwen2ForCausalLM(cfg).to(DEV)


def mistral(layers=4):
    import transformers
    cfg = transformers.MistralConfig(num_hidden_layers=layers, hidden_size=1024,
                                     intermediate_size=3584, num_attention_heads=16,
                                     num_key_value_heads=8, vocab_size=32000,
                                     max_position_embeddings=2048)
    return transformers.MistralForCausalLM(cfg).to(DEV)


def vit():
    import transformers
    cfg = transformers.ViTConfig(num_labels=1000)  # ViT-B/16, 224x224
    return transformers.ViTForImageClassification(cfg).to(DEV)


class LMStep:
    """A causal-LM step: tokens -> loss -> backward -> optimizer; the hooks vary it."""

    def __init__(self, model, batch=8, seq=512, opt=None, fix_opt=None, autocast=True):
        self.model, self.batch, self.seq = model, batch, seq
        self.vocab = model.config.vocab_size
        self.opt = opt or torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        self.fix_opt = fix_opt or self.opt
        self.autocast = autocast

    def tokens(self):
        return torch.randint(0, self.vocab, (self.batch, self.seq), device=DEV)

    def loss(self, x, fix):
        return self.model(input_ids=x, labels=x).loss

    def after_backward(self, fix):
        pass

    def after_step(self, loss, fix):
        pass

    def step(self, fix):
        x = self.tokens()
        with _autocast(self.autocast_for(fix)):
            loss = self.loss(x, fix)
        loss.backward()
        self.after_backward(fix)
        opt = self.fix_opt if fix else self.opt
        opt.step()
        opt.zero_grad(set_to_none=True)
        self.after_step(loss, fix)

    def autocast_for(self, fix):
        return self.autocast


class Fp32(LMStep):
    """fp32 everywhere -> bf16 autocast."""

    def autocast_for(self, fix):
        return fix


def gpt2_fp32():
    return Fp32(gpt2())


def mistral_fp32():
    return Fp32(mistral(), batch=4)


def gpt2_forloop():
    m = gpt2()
    return LMStep(m, opt=torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=False),
                  fix_opt=torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True))


def llama_sgd_forloop():
    m = llama()
    return LMStep(m, opt=torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9, foreach=False),
                  fix_opt=torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9, fused=True))


class Clip(LMStep):
    """clip_grad_norm_ one tensor at a time -> the multi-tensor one."""

    def after_backward(self, fix):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0, foreach=fix)


def qwen2_clip_forloop():
    return Clip(qwen2(layers=12))  # 4 layers: 0.5 ms realized, under the A/B noise


class ItemSync(LMStep):
    """loss.item() and a synchronize every step (logging) -> none."""

    def after_step(self, loss, fix):
        if not fix:
            self.last = loss.item()
            torch.cuda.synchronize()


def qwen2_item_sync():
    return ItemSync(qwen2(), batch=4, seq=256)


class MaskIndex(LMStep):
    """Loss over non-padding tokens by boolean indexing (a nonzero round trip) -> ignore_index."""

    def loss(self, x, fix):
        labels = x.clone()
        labels[:, -x.shape[1] // 8:] = -100  # padding at the end of each row
        logits = self.model(input_ids=x).logits[:, :-1].reshape(-1, self.vocab)
        labels = labels[:, 1:].reshape(-1)
        if fix:
            return F.cross_entropy(logits.float(), labels, ignore_index=-100)
        keep = labels != -100
        return F.cross_entropy(logits[keep].float(), labels[keep])


def llama_mask_index():
    return MaskIndex(llama(), batch=4)


class VitStep:
    """ViT-B/16 classification, bf16 autocast, fused AdamW; the batch varies by scenario."""

    in_process = True

    def __init__(self, batch=64):
        self.model = vit()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, fused=True)
        self.batch = batch
        self.correct = torch.zeros((), device=DEV)

    def inputs(self, fix):
        return (torch.randn(self.batch, 3, 224, 224, device=DEV),
                torch.randint(0, 1000, (self.batch,), device=DEV))

    def step(self, fix):
        x, y = self.inputs(fix)
        with _autocast(True):
            logits = self.model(pixel_values=x).logits
            loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.after_step(logits, y, fix)

    def after_step(self, logits, y, fix):
        pass


class VitPageable(VitStep):
    """Batches copied from pageable host memory (.to('cuda')) -> pinned + non_blocking."""

    def __init__(self):
        super().__init__()
        self.host_x = torch.randn(self.batch, 3, 224, 224)  # 38.5 MB, pageable
        self.host_y = torch.randint(0, 1000, (self.batch,))
        self.pin_x, self.pin_y = self.host_x.pin_memory(), self.host_y.pin_memory()

    def inputs(self, fix):
        if fix:
            return self.pin_x.to(DEV, non_blocking=True), self.pin_y.to(DEV, non_blocking=True)
        return self.host_x.to(DEV), self.host_y.to(DEV)


class VitItem(VitStep):
    """Accuracy read with .item() every step -> accumulated on the GPU."""

    def after_step(self, logits, y, fix):
        hits = (logits.argmax(-1) == y).float().sum()
        if fix:
            self.correct += hits
        else:
            self.acc = hits.item() / self.batch


class MoE(torch.nn.Module):
    """A small decoder with top-1 mixture-of-experts FFNs; dispatch by nonzero or by capacity."""

    def __init__(self, layers=6, d=768, ff=2048, experts=8, vocab=32000, heads=12):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.heads, self.experts = heads, experts
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            b = torch.nn.Module()
            b.ln1, b.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            b.qkv, b.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            b.router = torch.nn.Linear(d, experts)
            b.w1 = torch.nn.Parameter(torch.randn(experts, d, ff) / math.sqrt(d))
            b.w2 = torch.nn.Parameter(torch.randn(experts, ff, d) / math.sqrt(ff))
            self.blocks.append(b)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.capacity_dispatch = False

    def attention(self, b, h):
        B, T, D = h.shape
        q, k, v = b.qkv(h).view(B, T, 3, self.heads, D // self.heads).unbind(2)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        return b.proj(o.transpose(1, 2).reshape(B, T, D))

    def moe_nonzero(self, b, x, top, gate):
        out = torch.zeros_like(x)
        for e in range(self.experts):
            idx = torch.nonzero(top == e, as_tuple=True)[0]
            y = F.gelu(x[idx] @ b.w1[e]) @ b.w2[e]
            out = out.index_add(0, idx, y * gate[idx, None])
        return out

    def moe_capacity(self, b, x, top, gate):
        T, D = x.shape
        E = self.experts
        cap = int(1.25 * T / E) + 1
        onehot = F.one_hot(top, E)
        pos = (torch.cumsum(onehot, 0) * onehot).sum(-1) - 1  # slot of each token in its expert
        keep = pos < cap
        slot = torch.where(keep, top * cap + pos, torch.full_like(pos, E * cap))
        buf = x.new_zeros(E * cap + 1, D).index_copy(0, slot, x)
        h = torch.bmm(buf[:-1].view(E, cap, D), b.w1)
        y = torch.bmm(F.gelu(h), b.w2).reshape(E * cap, D)
        y = torch.cat([y, y.new_zeros(1, D)])
        return y[slot] * (gate * keep)[:, None]

    def forward(self, x):
        h = self.emb(x)
        for b in self.blocks:
            h = h + self.attention(b, b.ln1(h))
            t = b.ln2(h).reshape(-1, h.shape[-1])
            probs = F.softmax(b.router(t).float(), -1)
            gate, top = probs.max(-1)
            gate = gate.to(t.dtype)
            moe = self.moe_capacity if self.capacity_dispatch else self.moe_nonzero
            h = h + moe(b, t, top, gate).view_as(h)
        return self.head(h)


class MoEStep(LMStep):
    """Tokens dispatched to experts with torch.nonzero (a round trip per expert) -> capacity."""

    def __init__(self):
        m = MoE().to(DEV)
        m.config = type("cfg", (), {"vocab_size": 32000})()
        super().__init__(m, batch=8, seq=256)

    def loss(self, x, fix):
        self.model.capacity_dispatch = fix
        logits = self.model(x)
        return F.cross_entropy(logits[:, :-1].reshape(-1, self.vocab).float(), x[:, 1:].reshape(-1))


class Loader(LMStep):
    """A tokenising DataLoader in the training process (num_workers=0) -> 4 workers, pinned."""

    def __init__(self):
        super().__init__(gpt2())
        ds = TokenisingDataset(self.vocab, self.seq, 2.5)  # 20 ms of Python per batch of 8
        self.slow = iter(torch.utils.data.DataLoader(ds, batch_size=self.batch, num_workers=0))
        self.fast = iter(torch.utils.data.DataLoader(ds, batch_size=self.batch, num_workers=4,
                                                     pin_memory=True, persistent_workers=True))
        self.fix = False

    def tokens(self):
        if self.fix:
            return next(self.fast).to(DEV, non_blocking=True)
        return next(self.slow).to(DEV)

    def step(self, fix):
        self.fix = fix
        super().step(fix)


class TrainerFp32:
    """A Hugging Face Trainer run in fp32 -> `bf16=True`: one Trainer per process (its
    accelerator state is per process), so the suite realizes it by interleaved process pairs."""

    in_process = False

    def run_arm(self, fix, warmup, steps):
        import transformers
        model = gpt2(layers=4)

        class Tokens(torch.utils.data.Dataset):
            def __len__(self):
                return 1 << 16

            def __getitem__(self, i):
                g = torch.Generator().manual_seed(i)
                x = torch.randint(0, 50257, (512,), generator=g)
                return {"input_ids": x, "labels": x}

        marks = {}

        class Clock(transformers.TrainerCallback):
            def on_step_begin(self, args, state, control, **kw):
                if state.global_step == warmup:
                    torch.cuda.synchronize()
                    marks["t0"] = time.perf_counter()

            def on_train_end(self, args, state, control, **kw):
                torch.cuda.synchronize()
                marks["t1"] = time.perf_counter()

        args = transformers.TrainingArguments(
            output_dir="/tmp/suite_trainer", per_device_train_batch_size=8,
            max_steps=warmup + steps, bf16=fix, report_to=[], save_strategy="no",
            logging_steps=10000, dataloader_num_workers=2, optim="adamw_torch_fused")
        transformers.Trainer(model=model, args=args, train_dataset=Tokens(),
                             callbacks=[Clock()]).train()
        return (marks["t1"] - marks["t0"]) * 1e3 / steps


# name -> (family, expected rule, problem, fix, factory)
SCENARIOS = {
    "gpt2_fp32": ("GPT-2", "fp32_gemm", "fp32 matmuls", "bf16 autocast", gpt2_fp32),
    "gpt2_forloop_adamw": ("GPT-2", "per_param_optimizer", "AdamW(foreach=False)",
                           "AdamW(fused=True)", gpt2_forloop),
    "gpt2_loader": ("GPT-2", "data_loading", "tokenising DataLoader, num_workers=0",
                    "num_workers=4, pin_memory", Loader),
    "llama_sgd_forloop": ("Llama", "per_param_optimizer", "SGD(momentum, foreach=False)",
                          "SGD(fused=True)", llama_sgd_forloop),
    "llama_mask_index": ("Llama", "data_dependent", "loss over logits[mask] (boolean index)",
                         "cross_entropy(ignore_index=-100)", llama_mask_index),
    "qwen2_clip_forloop": ("Qwen2", "per_param_optimizer", "clip_grad_norm_(foreach=False)",
                           "clip_grad_norm_(foreach=True)", qwen2_clip_forloop),
    "qwen2_item_sync": ("Qwen2", "host_sync", "loss.item() + synchronize() every step", "none",
                        qwen2_item_sync),
    "mistral_fp32": ("Mistral", "fp32_gemm", "fp32 matmuls", "bf16 autocast", mistral_fp32),
    "vit_pageable": ("ViT", "pageable_memcpy", "batch .to('cuda') from pageable memory",
                     "pinned + non_blocking", VitPageable),
    "vit_item": ("ViT", "host_sync", "accuracy .item() every step", "accumulated on the GPU",
                 VitItem),
    "moe_nonzero": ("MoE", "data_dependent", "per-expert torch.nonzero dispatch",
                    "fixed-capacity dispatch", MoEStep),
    "trainer_fp32": ("GPT-2 Trainer", "fp32_gemm", "Trainer in fp32", "TrainingArguments(bf16=True)",
                     TrainerFp32),
}


def make(name):
    torch.manual_seed(0)
    return SCENARIOS[name][4]()


def make_class(name):
    return SCENARIOS[name][4]
