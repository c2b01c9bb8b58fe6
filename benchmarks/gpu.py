"""GPU benchmark: Podium's training jobs against plain TRL doing the same work, in one
process, plus GPU memory. Written for a lent CUDA machine; `--device cpu` runs the very
same comparison on CPU (CI and the GPU bundle's rehearsal do). No GPU figure exists yet
(README "GPUs").

    .venv/bin/python benchmarks/gpu.py sft   [--model tiny|smollm2-arch|smollm2]  # tokens/s
    .venv/bin/python benchmarks/gpu.py grpo  [--model ...]                        # s/step
    .venv/bin/python benchmarks/gpu.py cudnn [--model ...]   # cuDNN SDPA on vs off (CUDA)
    .venv/bin/python benchmarks/gpu.py generate                                   # tokens/s
    .venv/bin/python benchmarks/gpu.py sft --model tiny --device cpu --json

How the comparison is kept fair:
- Same work: both sides train the same base on the same rows with the same
  TrainingArguments values (Podium's `trainer_args` for the device), seed, batch and
  length; GRPO scores with the same reward function object (`length:N`, N set so random
  and trained models alike get rewards that vary within a group: the JSON reports the
  mean reward std of each side, which must be > 0).
- Warm-up outside the timed loop: each run's first optimizer step (CUDA context, cuBLAS
  and kernel selection, allocator growth) is not timed; the clock runs from the end of
  step 1 to the end of the last step, on both sides alike.
- cuDNN SDPA set the same on both sides (`--cudnn-sdpa`, default off, Podium's own
  default on CUDA); `cudnn` measures its effect on its own.
- Order alternated (plain, Podium, plain, Podium, ...) over `--repeats` (default 3)
  runs per side; medians reported.
- A fresh PODIUM_HOME (so a fresh model registry) for each invocation.

Models: `tiny` (2 layers, seconds), `smollm2-arch` (SmolLM2-135M's shape with random
weights: a real model's size where its weights cannot travel), `smollm2` (the real
weights; needs `podium models bootstrap`). Ratios read "higher is better for Podium":
SFT Podium tok/s / plain tok/s; GRPO plain s/step / Podium s/step. Without CUDA and
without `--device cpu` it says so and exits 0 (so `make bench` stays green on CPU).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from trainers.runtime import prepare_env  # noqa: E402

prepare_env()  # both sides train in this process: set before torch loads

MODELS = ("tiny", "smollm2-arch", "smollm2")
# Sizes per device: the gpu preset's shape on CUDA, cut so a CPU run takes a minute.
SIZES: dict[str, dict[str, dict[str, int]]] = {
    "cuda": {
        "sft": dict(steps=20, batch_size=16, grad_accum=2, max_length=1024, max_rows=1024),
        "grpo": dict(
            steps=6, batch_size=16, num_generations=8, max_completion_length=128, max_rows=256
        ),
    },
    "cpu": {
        "sft": dict(steps=6, batch_size=4, grad_accum=1, max_length=256, max_rows=64),
        "grpo": dict(
            steps=4, batch_size=8, num_generations=4, max_completion_length=16, max_rows=64
        ),
    },
}


class StepClock:
    """Per-step end times and logged values, fed by either side: plain TRL through a
    TrainerCallback, Podium through its Reporter (its callback reports progress at each
    step's end and forwards every log), so both read the clock at the same point."""

    def __init__(self) -> None:
        self.step_end: dict[int, float] = {}
        self.step_cpu: dict[int, float] = {}  # this process's CPU time: steadier when shared
        self.logs: dict[int, dict[str, float]] = {}
        self.cudnn_sdpa: bool | None = None

    def started(self) -> None:
        import torch

        if torch.cuda.is_available():  # the flag reads True on CPU too, where it means nothing
            self.cudnn_sdpa = bool(torch.backends.cuda.cudnn_sdp_enabled())

    def stepped(self, step: int) -> None:
        self.step_end[step] = time.perf_counter()
        self.step_cpu[step] = time.process_time()

    def logged(self, step: int, values: dict[str, Any]) -> None:
        numbers = {k: float(v) for k, v in values.items() if isinstance(v, int | float)}
        self.logs.setdefault(step, {}).update(numbers)

    def figures(self) -> dict[str, Any]:
        """The timed loop: from the end of step 1 (the warm-up step) to the last step."""
        last = max(self.step_end)
        if last < 2:
            raise SystemExit("a benchmark run needs at least 2 steps (step 1 is warm-up)")
        seconds = self.step_end[last] - self.step_end[1]
        cpu_seconds = self.step_cpu[last] - self.step_cpu[1]
        tokens = self.logs.get(last, {}).get("num_tokens", 0.0) - self.logs.get(1, {}).get(
            "num_tokens", 0.0
        )
        stds = [v["reward_std"] for v in self.logs.values() if "reward_std" in v]
        return {
            "timed_steps": last - 1,
            "loop_s": seconds,
            "s_per_step": seconds / (last - 1),
            "cpu_s_per_step": cpu_seconds / (last - 1),
            "tok_per_s": tokens / seconds if tokens else None,
            "tok_per_cpu_s": tokens / cpu_seconds if tokens else None,
            "reward_std": statistics.mean(stds) if stds else None,
            "cudnn_sdpa": self.cudnn_sdpa,
        }

    def callback(self) -> Any:
        from transformers import TrainerCallback

        clock = self

        class _Clock(TrainerCallback):
            def on_train_begin(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
                clock.started()

            def on_step_end(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
                clock.stepped(state.global_step)

            def on_log(self, args, state, control, logs=None, **kw):  # type: ignore[no-untyped-def]
                clock.logged(state.global_step, logs or {})

        return _Clock()

    def reporter(self) -> Any:
        from podium.reporting import Reporter

        clock = self

        class _Clock(Reporter):
            def progress(self, done, total=None, message=""):  # type: ignore[no-untyped-def]
                clock.started() if done == 0 else clock.stepped(done)

            def metric(self, step, values):  # type: ignore[no-untyped-def]
                clock.logged(step, values)

        return _Clock()


def plain_sft(cfg: Any, base: Path, data: Any, out: Path, clock: StepClock) -> None:
    """What a person writes with TRL alone, given the same settings and rows."""
    from trl import SFTConfig, SFTTrainer

    from trainers.chat_template import training_template
    from trainers.data import sft_dataset
    from trainers.runtime import load_model, load_tokenizer, trainer_args

    tok = load_tokenizer(base)
    tok.chat_template = training_template(load_tokenizer(base))
    args = SFTConfig(
        **trainer_args(cfg, cfg.device, out, has_eval=False),
        max_length=cfg.max_length,
        packing=cfg.packing,
        assistant_only_loss=True,
    )
    SFTTrainer(
        model=load_model(base, cfg.device),
        args=args,
        train_dataset=sft_dataset(data.train),
        processing_class=tok,
        callbacks=[clock.callback()],
    ).train()


def plain_grpo(cfg: Any, base: Path, data: Any, out: Path, clock: StepClock) -> None:
    from trl import GRPOConfig, GRPOTrainer

    from trainers.data import fit_prompts, grpo_dataset
    from trainers.generation import plan_generation, vllm_importable
    from trainers.rewards import make_reward
    from trainers.runtime import load_model, load_tokenizer, trainer_args
    from trainers.vllm_sync import sync_by_reload

    tok = load_tokenizer(base)
    prompts, _ = fit_prompts(
        grpo_dataset(data.train), tok, cfg.max_length - cfg.max_completion_length
    )
    generation = plan_generation(cfg, cfg.device, vllm_importable()).args
    args = GRPOConfig(
        **trainer_args(cfg, cfg.device, out, has_eval=False),
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length,
        temperature=cfg.temperature,
        beta=cfg.beta,
        log_completions=False,
        **generation,
    )
    trainer = GRPOTrainer(
        model=load_model(base, cfg.device),
        reward_funcs=[make_reward(cfg.rewards[0].rule)],
        args=args,
        train_dataset=prompts,
        processing_class=tok,
        callbacks=[clock.callback()],
    )
    if generation.get("vllm_mode") == "colocate":
        sync_by_reload(trainer.vllm_generation)  # TRL 1.16's own sync fails on vLLM 0.32
    trainer.train()


def podium_run(kind: str, cfg: Any, clock: StepClock) -> None:
    from trainers.grpo import run_grpo
    from trainers.sft import run_sft

    (run_sft if kind == "sft" else run_grpo)(cfg, clock.reporter())


def base_model(kind: str, work: Path) -> str:
    """Registered name of the base in this run's fresh home."""
    from benchmarks.train import random_model
    from podium.models.bootstrap import bootstrap
    from podium.models.registry import get_model_or_none, register_model

    if kind == "smollm2":
        return bootstrap().name
    name = f"bench-{kind}"
    if get_model_or_none(name) is None:
        register_model(name, kind="base", path=str(random_model(work / name, kind)))
    return name


def card(kind: str, ns: argparse.Namespace, model: str, out: str) -> Any:
    from trainers.config import GrpoConfig, RewardSpec, SftConfig

    size = {**SIZES[ns.device][kind], **({"steps": ns.steps} if ns.steps else {})}
    steps = size.pop("steps")
    fields: dict[str, Any] = dict(
        model=model,
        table={"name": "demo.json_sft"},
        out=out,
        preset="gpu",
        device=ns.device,
        max_steps=steps,
        save_every=0,
        logging_steps=1,  # the clock reads every step's log
        eval_fraction=0.0,
        **size,
    )
    if kind == "sft":
        return SftConfig(**fields)
    # Within (N, 2N) characters `length:N` falls linearly, so completions of differing
    # length score differently; ~4 characters a token puts a full-length one there.
    reward = f"length:{size['max_completion_length'] * 4}"
    return GrpoConfig(rewards=[RewardSpec(rule=reward)], **fields)


def set_cudnn_sdpa(on: bool) -> None:
    """The same cuDNN SDPA setting for both sides: Podium's trainer applies
    PODIUM_CUDNN_SDPA itself; the plain side gets it set directly."""
    import torch

    os.environ["PODIUM_CUDNN_SDPA"] = "1" if on else "0"
    if torch.cuda.is_available():
        torch.backends.cuda.enable_cudnn_sdp(on)


def reset_peak() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def peak_gib() -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    return round(float(torch.cuda.max_memory_allocated()) / 2**30, 2)


def one_run(kind: str, side: str, cfg: Any, base: Path, data: Any, out: Path) -> dict[str, Any]:
    clock = StepClock()
    reset_peak()
    if side == "plain":
        (plain_sft if kind == "sft" else plain_grpo)(cfg, base, data, out, clock)
    else:
        podium_run(kind, cfg, clock)
    return {**clock.figures(), "peak_gib": peak_gib()}


def median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def compare(
    kind: str, ns: argparse.Namespace, work: Path, sides: tuple[str, str], label: str
) -> dict[str, Any]:
    """`sides` alternate over ns.repeats rounds; each is ("plain"|"podium", ...) or, for
    the cuDNN measure, Podium's run with cuDNN SDPA "off" then "on"."""
    from trainers.lifecycle import check_card

    model = base_model(ns.model, work.parent)
    # The rows Podium's own run reads (max_rows, seed, no held-out part): same data.
    base_ref, data = check_card(card(kind, ns, model, "x"))
    base = base_ref.path
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for i in range(ns.repeats * len(sides)):
        side = sides[i % len(sides)]
        if label == "cudnn":
            set_cudnn_sdpa(side == "on")
            runs[side].append(
                one_run(kind, "podium", card(kind, ns, model, f"b{i}"), base, data, work / f"r{i}")
            )
        else:
            set_cudnn_sdpa(ns.cudnn_sdpa == "on")
            cfg = card(kind, ns, model, f"bench-{kind}-{i}")
            runs[side].append(one_run(kind, side, cfg, base, data, work / f"r{i}"))
    key, cpu_key = (
        ("tok_per_s", "tok_per_cpu_s") if kind == "sft" else ("s_per_step", "cpu_s_per_step")
    )
    medians = {side: median_of(runs[side], key) for side in sides}
    cpu_medians = {side: median_of(runs[side], cpu_key) for side in sides}
    return {
        "model": ns.model,
        "device": ns.device,
        "repeats": ns.repeats,
        "measure": key,
        "median": medians,
        "ratio": ratio(kind, *(medians[s] for s in sides)),
        # This process's CPU time, not wall time: on a shared CPU, wall time mostly
        # measures the neighbours (on a GPU the CPU mostly waits: read `ratio` there).
        "median_cpu": cpu_medians,
        "ratio_cpu": ratio(kind, *(cpu_medians[s] for s in sides)),
        "ratio_means": f"{sides[1]} vs {sides[0]}, higher is better for {sides[1]}",
        "peak_gib": {side: median_of(runs[side], "peak_gib") for side in sides},
        "reward_std": {side: median_of(runs[side], "reward_std") for side in sides},
        "cudnn_sdpa": ns.cudnn_sdpa if label != "cudnn" else "off vs on",
        "runs": runs,
    }


def ratio(kind: str, first: float | None, second: float | None) -> float | None:
    """Higher is better for the second side: tokens/s second / first, s/step first / second."""
    if not first or not second:
        return None
    return second / first if kind == "sft" else first / second


def bench_generate() -> dict[str, Any]:
    script = Path(__file__).with_name("generate.py")
    done = subprocess.run(
        [sys.executable, str(script), "--no-transformers"], capture_output=True, text=True
    )
    if done.returncode:
        return {"error": done.stderr[-2000:]}
    return {"report": done.stdout}


def fresh_home(work: Path) -> None:
    """This invocation's own PODIUM_HOME: its registry starts empty, so nothing left by an
    earlier run (a base registered into a deleted temp dir) can get in the way."""
    from podium.config import reset_settings
    from podium.store.write.demo import load_demo

    os.environ["PODIUM_HOME"] = str(work / "home")
    reset_settings()
    load_demo()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "what", nargs="?", default="all", choices=("sft", "grpo", "cudnn", "generate", "all")
    )
    ap.add_argument("--model", choices=MODELS, default="smollm2-arch")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--steps", type=int, default=0, help="steps a run (default: per device)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per side (median reported)")
    ap.add_argument("--cudnn-sdpa", choices=("off", "on"), default="off")
    ap.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    ns = ap.parse_args()

    import torch

    if ns.device == "cuda" and not torch.cuda.is_available():
        print("benchmarks/gpu.py: skipped, needs a CUDA device (torch.cuda.is_available() False)")
        return
    on_cuda = ns.device == "cuda"
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if on_cuda else "cpu",
        "date": time.strftime("%Y-%m-%d"),
        "torch": torch.__version__,
    }
    kinds = ("sft", "grpo", "generate") if ns.what == "all" else (ns.what,)
    # TRL prints each log line to stdout; stdout is kept for the report alone.
    with (
        tempfile.TemporaryDirectory(prefix="podium-bench-gpu-") as tmp,
        redirect_stdout(sys.stderr),
    ):
        fresh_home(Path(tmp))
        for kind in kinds:
            work = Path(tmp) / kind
            if kind == "generate":
                report[kind] = bench_generate()
            elif kind == "cudnn":
                report[kind] = (
                    compare("sft", ns, work, ("off", "on"), "cudnn")
                    if on_cuda
                    else {"skipped": "cuDNN SDPA is CUDA only"}
                )
            else:
                report[kind] = compare(kind, ns, work, ("plain", "podium"), kind)
    print(json.dumps(report, indent=None if ns.json else 2, default=str))


if __name__ == "__main__":
    main()
