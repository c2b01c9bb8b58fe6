"""Benchmark: tokens/s of a Podium `sft` job vs a plain TRL script, same config and data.

    .venv/bin/python benchmarks/train.py                 # SmolLM2-135M, 6 steps x 2 rounds
    .venv/bin/python benchmarks/train.py --model tiny    # tiny random Llama (seconds)
    .venv/bin/python benchmarks/train.py --steps 10 --rounds 3 --json

Both sides train the same base on the same conversations (the demo JSON table) with the
same TRL settings (batch, length, LR, seed, assistant-only loss, CPU flags), in this one
process, alternating which side goes first so drift on a shared machine hits both. Figures
(medians over rounds), each per wall second and per CPU second of this process:

- loop: trained tokens (TRL's `num_tokens`) over the training loop; Podium's overhead
  here is its callback (metrics into the reporter, progress, cancel checks).
- end to end: the same tokens over the whole run, model load to saved checkpoint;
  Podium also reads the Iceberg snapshot and registers the checkpoint.

On a machine shared with other work, wall time mostly measures the neighbours; CPU
time is the work this process did. Target: Podium / plain >= 0.95. Nothing asserts on
time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from trainers.runtime import prepare_env  # noqa: E402 - needs the checkout on sys.path

# Both sides train in this process: the training environment is set before torch loads.
prepare_env()


# Random-weight Llamas with SmolLM2's tokenizer: the same code paths as the real model,
# no weights to ship. "smollm2-arch" is SmolLM2-135M's own shape (its GGUF's config;
# tests/models/test_tokenizer_asset.py checks it against the GGUF), so GPU figures
# reflect a real model's size where its weights cannot travel.
ARCHS: dict[str, dict[str, object]] = {
    "tiny": dict(
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
    ),
    "smollm2-arch": dict(
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        head_dim=64,
        max_position_embeddings=8192,
        rms_norm_eps=1e-5,
        rope_parameters={"rope_theta": 100000.0, "rope_type": "default"},
    ),
}


def random_model(path: Path, arch: str = "tiny") -> Path:
    """A randomly initialised Llama of shape `arch` with SmolLM2's tokenizer, saved at `path`."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from podium.models.bootstrap import tokenizer_dir

    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir()))
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        **ARCHS[arch],  # type: ignore[arg-type]
    )
    LlamaForCausalLM(cfg).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


def tiny_model(path: Path) -> Path:
    return random_model(path, "tiny")


class Timing:
    """Wall time of the training loop, for both sides (a plain TrainerCallback)."""

    def __init__(self) -> None:
        from transformers import TrainerCallback

        timing = self

        class _Cb(TrainerCallback):
            def on_train_begin(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
                timing.begin, timing.cpu_begin = time.perf_counter(), time.process_time()

            def on_train_end(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
                timing.end, timing.cpu_end = time.perf_counter(), time.process_time()
                timing.tokens = max((h.get("num_tokens", 0) for h in state.log_history), default=0)

        self.callback = _Cb()
        self.begin = self.end = self.cpu_begin = self.cpu_end = 0.0
        self.tokens = 0.0


def plain_trl(base: Path, rows: list[list[dict]], cfg, out: Path) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """What a person would write with TRL alone (same settings Podium derives)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from trainers.chat_template import training_template
    from trainers.runtime import trainer_args

    start, cpu_start = time.perf_counter(), time.process_time()
    tok = AutoTokenizer.from_pretrained(str(base))
    train_tok = AutoTokenizer.from_pretrained(str(base))
    train_tok.chat_template = training_template(tok)
    # Podium's own TrainingArguments for a CPU run without evaluation: the comparison
    # measures what Podium adds around TRL, not a different choice of settings.
    args = SFTConfig(
        **trainer_args(cfg, "cpu", out / "work", has_eval=False),
        max_length=cfg.max_length,
        assistant_only_loss=True,
    )
    timing = Timing()
    trainer = SFTTrainer(
        model=AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32),
        args=args,
        train_dataset=Dataset.from_list([{"messages": m} for m in rows]),
        processing_class=train_tok,
        callbacks=[timing.callback],
    )
    trainer.train()
    trainer.model.save_pretrained(str(out / "final"))
    tok.save_pretrained(str(out / "final"))
    return {
        "tokens": timing.tokens,
        "loop_s": timing.end - timing.begin,
        "total_s": time.perf_counter() - start,
        "loop_cpu_s": timing.cpu_end - timing.cpu_begin,
        "total_cpu_s": time.process_time() - cpu_start,
    }


def podium_sft(cfg) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from podium.reporting import Reporter
    from trainers.sft import run_sft

    class Clock(Reporter):
        def __init__(self) -> None:
            super().__init__()
            self.begin = self.end = self.cpu_begin = self.cpu_end = 0.0
            self.tokens = 0.0

        def progress(self, done, total=None, message=""):  # type: ignore[no-untyped-def]
            if done == 0:
                self.begin, self.cpu_begin = time.perf_counter(), time.process_time()
            elif done == total:
                self.end, self.cpu_end = time.perf_counter(), time.process_time()

        def metric(self, step, values):  # type: ignore[no-untyped-def]
            self.tokens = max(self.tokens, values.get("num_tokens", 0.0))

    clock = Clock()
    start, cpu_start = time.perf_counter(), time.process_time()
    run_sft(cfg, clock)
    return {
        "tokens": clock.tokens,
        "loop_s": clock.end - clock.begin,
        "total_s": time.perf_counter() - start,
        "loop_cpu_s": clock.cpu_end - clock.cpu_begin,
        "total_cpu_s": time.process_time() - cpu_start,
    }


# Wall time is what a person waits; CPU time is the work done, which stays comparable
# when other processes share the cores (wall time then mostly measures them).
KEYS = {
    "loop_s": "loop tok/s (wall)",
    "loop_cpu_s": "loop tok/CPU-s",
    "total_s": "end-to-end tok/s (wall)",
    "total_cpu_s": "end-to-end tok/CPU-s",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("smollm2", "tiny"), default="smollm2")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    opts = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="podium-bench-train-"))
    os.environ["PODIUM_HOME"] = str(home)
    from podium.config import reset_settings

    reset_settings()
    from podium.models.registry import register_model
    from podium.store.write.demo import load_demo
    from trainers.config import SftConfig
    from trainers.data import load_training_data

    if opts.model == "tiny":
        base = tiny_model(home / "tiny")
    else:
        from podium.models.bootstrap import ensure_converted

        base = ensure_converted()
    register_model("bench-base", kind="base", path=str(base))
    load_demo()

    def config(out: str) -> SftConfig:
        return SftConfig(
            model="bench-base",
            table={"name": "demo.json_sft"},
            out=out,
            preset="cpu-smoke",
            max_steps=opts.steps,
            batch_size=opts.batch,
            max_rows=opts.rows,
            max_length=256,
            learning_rate=1e-4,
            save_every=0,
        )

    data = load_training_data(config("x").table, max_rows=opts.rows)
    rows = [c.messages for c in data.train]
    runs: dict[str, list[dict[str, float]]] = {"plain": [], "podium": []}
    for i in range(opts.rounds):
        # Who goes first alternates, so warm-up and allocator state favour neither side.
        order = ("plain", "podium") if i % 2 == 0 else ("podium", "plain")
        for side in order:
            if side == "plain":
                runs["plain"].append(plain_trl(base, rows, config(f"p{i}"), home / f"plain{i}"))
            else:
                runs["podium"].append(podium_sft(config(f"bench{i}")))
        gc.collect()

    def rate(side: str, key: str) -> float:
        return statistics.median(r["tokens"] / r[key] for r in runs[side])

    figures: dict[str, object] = {
        "model": opts.model,
        "steps": opts.steps,
        "batch": opts.batch,
        "rounds": opts.rounds,
        "tokens_per_run": runs["podium"][0]["tokens"],
        "runs": runs,
    }
    for key, label in KEYS.items():
        plain, podium = rate("plain", key), rate("podium", key)
        figures[label] = {"plain": plain, "podium": podium, "ratio": podium / plain}
    assert all(r["tokens"] for side in runs.values() for r in side), "no tokens were counted"
    if opts.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"train benchmark ({opts.model}, {opts.steps} steps x batch {opts.batch}, "
        f"{opts.rounds} rounds, {figures['tokens_per_run']:.0f} tokens/run; medians)"
    )
    for label in KEYS.values():
        f = figures[label]
        assert isinstance(f, dict)
        print(
            f"  {label:<24} plain TRL {f['plain']:8.1f}  Podium {f['podium']:8.1f}  "
            f"ratio {f['ratio']:.3f}"
        )
    print("  target: ratio >= 0.95")


if __name__ == "__main__":
    main()
