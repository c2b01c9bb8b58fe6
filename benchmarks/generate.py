"""Generation throughput: a Podium `generate` job vs a bare asyncio OpenAI client, and
vLLM vs plain transformers `generate()`, on the same prompts in the same run.

    python benchmarks/generate.py [--prompts 32] [--max-tokens 64] [--concurrency 16]
                                  [--rounds 2] [--no-transformers]

Starts ONE vLLM server for the base model (SmolLM2-135M-Instruct, converted once into
`.cache/models/`) in a temporary Podium home and stops it at the end. Every method
decodes the same prompts greedily with the same token budget; figures are aggregate
completion tokens per second of wall time (the job's time includes reading the prompts
table and committing the samples table). Rounds alternate the methods so a busy machine
hurts both alike; the best round of each is reported. Target (issue 5): job >= 0.95x bare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

TOPICS = [
    "the moon",
    "bread",
    "rivers",
    "chess",
    "volcanoes",
    "bees",
    "trains",
    "glaciers",
    "pianos",
    "deserts",
    "octopuses",
    "bridges",
    "comets",
    "tea",
    "maps",
    "clocks",
]


def prompts(n: int) -> list[str]:
    kinds = ["Write two sentences about {}.", "Explain {} to a child.", "List facts about {}."]
    return [kinds[i % len(kinds)].format(TOPICS[i % len(TOPICS)]) for i in range(n)]


async def bare_client(
    base_url: str, model: str, texts: list[str], max_tokens: int, concurrency: int
) -> tuple[int, float]:
    import openai

    sem = asyncio.Semaphore(concurrency)
    async with openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0) as client:

        async def one(text: str) -> int:
            async with sem:
                resp = await client.chat.completions.create(
                    model=model,
                    messages=[{"role": "user", "content": text}],
                    max_tokens=max_tokens,
                    temperature=0.0,
                )
                return resp.usage.completion_tokens

        start = time.perf_counter()
        tokens = await asyncio.gather(*(one(t) for t in texts))
        return sum(tokens), time.perf_counter() - start


def podium_job(table: str, out: str, max_tokens: int, concurrency: int) -> tuple[int, float]:
    from generators.generate import GenerateConfig, run_generate
    from podium.reporting import Reporter
    from podium.store.read.refs import TableRef

    cfg = GenerateConfig(
        table=TableRef(name=table),
        out=out,
        max_tokens=max_tokens,
        temperature=0.0,
        concurrency=concurrency,
        batch_size=10_000,
    )
    start = time.perf_counter()
    result = run_generate(cfg, Reporter())
    return result.summary["completion_tokens"], time.perf_counter() - start


def transformers_generate(
    checkpoint: str, texts: list[str], max_tokens: int, batch: int
) -> tuple[int, float]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(checkpoint, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    chats = [
        tok.apply_chat_template(
            [{"role": "user", "content": t}], tokenize=False, add_generation_prompt=True
        )
        for t in texts
    ]
    total, start = 0, time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(chats), batch):
            enc = tok(
                chats[i : i + batch], return_tensors="pt", padding=True, add_special_tokens=False
            )
            out = model.generate(
                **enc,
                max_new_tokens=max_tokens,
                do_sample=False,
                pad_token_id=tok.pad_token_id or tok.eos_token_id,
            )
            new = out[:, enc["input_ids"].shape[1] :]
            # Count tokens up to and including the first end-of-sequence, as vLLM does.
            for row in new.tolist():
                n = next((j + 1 for j, t in enumerate(row) if t == tok.eos_token_id), len(row))
                total += n
    return total, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-transformers", action="store_true")
    args = ap.parse_args()

    os.environ["PODIUM_HOME"] = tempfile.mkdtemp(prefix="podium-bench-gen-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import pyarrow as pa

    from podium.config import reset_settings
    from podium.models.bootstrap import bootstrap
    from podium.models.serving import ensure_server, stop_server
    from podium.store.schema import SFT_ARROW_SCHEMA
    from podium.store.write.write import write_table

    reset_settings()
    texts = prompts(args.prompts)
    rows = [
        {"id": f"p{i}", "messages": [{"role": "user", "content": t}]} for i, t in enumerate(texts)
    ]
    write_table("bench.prompts", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    base = bootstrap()
    t0 = time.perf_counter()
    url, served = ensure_server(base.name)
    print(f"vLLM ready in {time.perf_counter() - t0:.0f} s at {url}")
    try:
        asyncio.run(bare_client(url, served, texts[:4], 8, 4))  # warm the prefix cache path
        bare, job = [], []
        for r in range(args.rounds):
            # Alternate which goes first so neither always gets the warmer or quieter slot.
            for method in ("bare", "job") if r % 2 == 0 else ("job", "bare"):
                if method == "bare":
                    tokens, secs = asyncio.run(
                        bare_client(url, served, texts, args.max_tokens, args.concurrency)
                    )
                    bare.append(tokens / secs)
                else:
                    tokens, secs = podium_job(
                        "bench.prompts", f"bench.out{r}", args.max_tokens, args.concurrency
                    )
                    job.append(tokens / secs)
                print(
                    f"round {r}: {method:4}  {tokens} tokens in {secs:.1f} s = "
                    f"{tokens / secs:.1f} tok/s"
                )
    finally:
        stop_server(base.name)
    print(
        f"\nPodium job vs bare asyncio client (concurrency {args.concurrency}): "
        f"{max(job):.1f} / {max(bare):.1f} tok/s = {max(job) / max(bare):.3f}x (target >= 0.95x)"
    )
    if not args.no_transformers:
        tokens, secs = transformers_generate(
            base.path or "", texts, args.max_tokens, args.concurrency
        )
        hf = tokens / secs
        print(
            f"transformers generate() batch {args.concurrency}: {tokens} tokens in "
            f"{secs:.1f} s = {hf:.1f} tok/s"
        )
        print(f"vLLM (bare client) vs transformers generate(): {max(bare) / hf:.2f}x")


if __name__ == "__main__":
    main()
