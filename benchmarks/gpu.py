"""GPU benchmark: each Podium path against its plain baseline in the same run, plus GPU
memory. Written for a lent CUDA machine and NOT YET RUN on one (README "GPUs"); its sft
and grpo paths were rehearsed on CPU (the gpu preset's device forced to cpu) and ran.

    .venv/bin/python benchmarks/gpu.py sft  [--model tiny] [--steps 20]   # tokens/s
    .venv/bin/python benchmarks/gpu.py grpo [--model tiny] [--steps 5]    # s/step
    .venv/bin/python benchmarks/gpu.py generate                           # tokens/s
    .venv/bin/python benchmarks/gpu.py all --json

- sft: Podium's `sft` job (gpu preset) vs a plain TRL SFTTrainer script with the same
  settings (bf16, batch, length, LR, seed, assistant-only loss); loop tokens/s and peak
  GPU memory (`torch.cuda.max_memory_allocated`). Target Podium / plain >= 0.95.
- grpo: Podium's `grpo` job (gpu preset; vLLM colocated where it imports) vs a plain TRL
  GRPOTrainer script with the same config; seconds per step and peak memory.
- generate: benchmarks/generate.py (Podium's generation job vs a bare OpenAI-client load
  on the same vLLM server, which serves on the GPU when one is listed). Target >= 0.95.

Without a CUDA device it says so and exits 0 (so `make bench` stays green on CPU).
Plain scripts leave cuDNN attention as PyTorch sets it; `--plain-cudnn-off` gives them
Podium's setting too, to separate that fix from Podium's own overhead.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.train import Timing, podium_sft, tiny_model  # noqa: E402


def peak_gib() -> float:
    import torch

    return round(float(torch.cuda.max_memory_allocated()) / 2**30, 2)


def reset_peak() -> None:
    import gc

    import torch

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def plain_args(cfg: Any, out: Path) -> dict[str, Any]:
    """The TrainingArguments a person writes for one GPU."""
    return dict(
        output_dir=str(out),
        bf16=True,
        seed=cfg.seed,
        max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.learning_rate,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        gradient_checkpointing=False,
    )


def plain_sft(base: Path, rows: list[list[dict]], cfg: Any, out: Path) -> dict[str, float]:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from trainers.chat_template import training_template

    tok = AutoTokenizer.from_pretrained(str(base))
    tok.chat_template = training_template(AutoTokenizer.from_pretrained(str(base)))
    args = SFTConfig(**plain_args(cfg, out), max_length=cfg.max_length, assistant_only_loss=True)
    timing = Timing()
    trainer = SFTTrainer(
        model=AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32),
        args=args,
        train_dataset=Dataset.from_list([{"messages": m} for m in rows]),
        processing_class=tok,
        callbacks=[timing.callback],
    )
    trainer.train()
    return {"tokens": timing.tokens, "loop_s": timing.end - timing.begin}


def plain_grpo(base: Path, prompts: list[list[dict]], cfg: Any, out: Path) -> dict[str, float]:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from trainers.generation import plan_generation, vllm_importable

    def length_reward(completions: list[Any], **_: Any) -> list[float]:
        return [-abs(len(str(c)) - 200) / 200 for c in completions]

    args = GRPOConfig(
        **plain_args(cfg, out),
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length,
        **plan_generation(cfg, "cuda", vllm_importable()).args,
    )
    timing = Timing()
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32),
        reward_funcs=[length_reward],
        args=args,
        train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
        processing_class=AutoTokenizer.from_pretrained(str(base)),
        callbacks=[timing.callback],
    )
    trainer.train()
    return {"s_per_step": (timing.end - timing.begin) / cfg.max_steps}


def podium_grpo(cfg: Any) -> dict[str, float]:
    from podium.reporting import Reporter
    from trainers.grpo import run_grpo

    start = time.perf_counter()
    outputs = run_grpo(cfg, Reporter())
    return {"s_per_step": (time.perf_counter() - start) / outputs.summary["steps"]}


def base_model(kind: str, work: Path) -> str:
    """Registered name of the base: SmolLM2-135M (bootstrapped) or a tiny random Llama."""
    from podium.models.bootstrap import bootstrap
    from podium.models.registry import get_model_or_none, register_model

    if kind == "smollm2":
        return bootstrap().name
    if get_model_or_none("bench-tiny") is None:
        register_model("bench-tiny", kind="base", path=str(tiny_model(work / "tiny")))
    return "bench-tiny"


def bench_train(kind: str, ns: argparse.Namespace, work: Path) -> dict[str, Any]:
    import torch

    from podium.models.registry import get_model
    from podium.store.demo import load_demo
    from trainers.config import GrpoConfig, RewardSpec, SftConfig
    from trainers.data import load_training_data, prompt_and_answer

    load_demo()
    model = base_model(ns.model, work)
    base = Path(get_model(model).path)
    table = {"name": "demo.json_sft"}
    data = load_training_data(GrpoConfig(model=model, table=table, out="x").table)
    convs = [c.messages for c in data.train]
    fields = dict(model=model, table=table, preset="gpu", max_steps=ns.steps, save_every=0)
    if ns.plain_cudnn_off:
        torch.backends.cuda.enable_cudnn_sdp(False)
    results: dict[str, Any] = {}
    if kind == "sft":
        cfg = SftConfig(out=f"bench-sft-{time.time_ns()}", eval_fraction=0.0, **fields)
        reset_peak()
        plain = plain_sft(base, convs, cfg, work / "plain-sft")
        results["plain"] = {**plain, "tok_per_s": plain["tokens"] / plain["loop_s"]}
        results["plain"]["peak_gib"] = peak_gib()
        reset_peak()
        ours = podium_sft(cfg)
        results["podium"] = {**ours, "tok_per_s": ours["tokens"] / ours["loop_s"]}
        results["podium"]["peak_gib"] = peak_gib()
        results["ratio"] = results["podium"]["tok_per_s"] / results["plain"]["tok_per_s"]
    else:
        cfg = GrpoConfig(
            out=f"bench-grpo-{time.time_ns()}",
            eval_fraction=0.0,
            rewards=[RewardSpec(rule="length:200")],
            **fields,
        )
        prompts = [prompt_and_answer(m)[0] for m in convs]
        reset_peak()
        results["plain"] = {**plain_grpo(base, prompts, cfg, work / "plain-grpo")}
        results["plain"]["peak_gib"] = peak_gib()
        reset_peak()
        results["podium"] = {**podium_grpo(cfg), "peak_gib": peak_gib()}
        # Step time: lower is better, so plain / Podium reads like the other ratios.
        results["ratio"] = results["plain"]["s_per_step"] / results["podium"]["s_per_step"]
    return results


def bench_generate() -> dict[str, Any]:
    script = Path(__file__).with_name("generate.py")
    done = subprocess.run(
        [sys.executable, str(script), "--no-transformers"], capture_output=True, text=True
    )
    if done.returncode:
        return {"error": done.stderr[-2000:]}
    return {"report": done.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("what", nargs="?", default="all", choices=("sft", "grpo", "generate", "all"))
    ap.add_argument("--model", choices=("smollm2", "tiny"), default="smollm2")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--plain-cudnn-off", action="store_true")
    ap.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    ns = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("benchmarks/gpu.py: skipped, needs a CUDA device (torch.cuda.is_available() False)")
        return
    report: dict[str, Any] = {"device": torch.cuda.get_device_name(0)}
    kinds = ("sft", "grpo", "generate") if ns.what == "all" else (ns.what,)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            if kind == "generate":
                report[kind] = bench_generate()
            else:
                report[kind] = bench_train(kind, ns, Path(tmp))
    print(json.dumps(report, indent=None if ns.json else 2, default=str))


if __name__ == "__main__":
    main()
