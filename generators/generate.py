"""The `generate` job: sample a registered checkpoint on every prompt of a table snapshot.

    podium generate --model base --table demo.chat --out gen.chat_smol --n 2 --max-tokens 64

Prompts (see `generators.prompts`) are sent through a vLLM server (started on demand)
or an endpoint; every batch of prompts is committed as one Iceberg append to the
samples table (`generators.samples`), whose properties carry the job's lineage and the
checkpoint. A re-run of the same card skips prompt ids already written, so a crash of
the server or the worker loses at most the batch in flight and never duplicates a row.
If the server dies mid-run, the job restarts it up to `server_restarts` times, then
fails with a message saying how much was saved.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from pydantic import AliasChoices, Field

from generators.client import (
    ChatRequest,
    Endpoint,
    SamplingParams,
    ServerUnavailable,
    agenerate_batch,
    endpoint_for,
)
from generators.prompts import Prompt, load_prompts
from generators.replicas import replicas
from generators.resume import done_values
from generators.retry import RetryPolicy
from generators.samples import sample_rows, to_arrow
from generators.sharded import generate_sharded
from podium.errors import InvalidInput, PodiumError
from podium.jobs.launchers import LaunchOptions
from podium.models import get_model
from podium.models.speeds import record_speed
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog import kinds
from podium.store.catalog.catalog import full_name, table_exists
from podium.store.catalog.table_name import TableName
from podium.store.read.refs import TableRef
from podium.store.schema import (
    PROP_KIND,
    PROP_LINEAGE_CHECKPOINT,
    PROP_LINEAGE_CHECKPOINT_LOCATION,
    PROP_LINEAGE_INPUT,
)
from podium.store.write.staged import staging_key
from podium.store.write.write import write_table

SAMPLES_KIND = kinds.SAMPLES
PROP_CONFIG = "podium.generate.config"


class GenerateConfig(SamplingParams, RetryPolicy, LaunchOptions):
    """Run-card front matter of `kind: generate`."""

    table: TableRef = Field(
        validation_alias=AliasChoices("table", "input"),
        description="Prompts: an SFT table or eval set, pinned to a snapshot.",
    )
    out: TableName = Field(
        description="Samples table to write (NAMESPACE.TABLE); re-runs resume it."
    )
    model: str = Field("base", description="Registered model name ('base' = default base).")
    prompt_column: str | None = Field(
        None, description="Plain-text prompt column (default: messages up to the last answer)."
    )
    json_schema: dict[str, Any] | None = Field(
        None, description="JSON Schema every completion must follow (structured output)."
    )
    regex: str | None = Field(None, description="Regular expression every completion must match.")
    limit: int | None = Field(None, ge=1, description="Use only the first N prompts.")
    concurrency: int = Field(16, ge=1, le=512, description="Requests in flight at once.")
    batch_size: int = Field(64, ge=1, description="Prompts per committed batch.")
    server_restarts: int = Field(1, ge=0, description="Restarts of a dead server before failing.")
    replicas: int = Field(
        1,
        ge=1,
        le=256,
        description="vLLM replicas to spread the prompts over (more than 1: Ray actors on "
        "the cluster, one snapshot at the end; see generators/sharded.py).",
    )
    replica_gpus: float | None = Field(
        None,
        ge=0,
        description="GPUs each replica reserves on the Ray cluster (vLLM starts on them); "
        "default: 1 where the cluster has GPUs, else 0.",
    )
    replica_urls: list[str] = Field(
        default_factory=list,
        description="Servers already serving this model to spread the prompts over "
        "(instead of starting replicas).",
    )


def _requests(cfg: GenerateConfig, prompt: Prompt) -> list[ChatRequest]:
    # One n=1 request per sample gives exact per-sample token counts; vLLM's prefix
    # cache makes the shared prompt nearly free.
    return [
        ChatRequest(
            messages=prompt.messages,
            n=1,
            temperature=cfg.temperature,
            top_p=cfg.top_p,
            max_tokens=cfg.max_tokens,
            stop=cfg.stop,
            json_schema=cfg.json_schema,
            regex=cfg.regex,
            seed=None if cfg.seed is None else cfg.seed + i,
        )
        for i in range(cfg.n)
    ]


def sampling_json(cfg: GenerateConfig) -> dict[str, Any]:
    keys = ("n", "temperature", "top_p", "max_tokens", "seed", "stop", "json_schema", "regex")
    return {k: getattr(cfg, k) for k in keys}


def _done_prompt_ids(out: str, input_ref: str, checkpoint: str) -> set[str]:
    """Prompt ids already in `out`; refuses a table written by a different run."""
    written_by = {
        PROP_KIND: SAMPLES_KIND,
        PROP_LINEAGE_INPUT: input_ref,
        PROP_LINEAGE_CHECKPOINT: checkpoint,
    }
    job = f"generation (input {input_ref}, model {checkpoint})"
    return done_values(out, "prompt_id", written_by, job)


async def _generate(
    cfg: GenerateConfig,
    endpoint: Endpoint,
    todo: list[Prompt],
    out: str,
    properties: dict[str, str],
    reporter: Reporter,
    total: int,
    already: int,
) -> dict[str, float]:
    sampling = sampling_json(cfg)
    restarts = cfg.server_restarts
    stats = {"rows": 0, "completion_tokens": 0, "gen_seconds": 0.0, "errors": 0}
    for start in range(0, len(todo), cfg.batch_size):
        reporter.check_cancelled()
        batch = todo[start : start + cfg.batch_size]
        reqs = [r for p in batch for r in _requests(cfg, p)]
        while True:
            began = time.perf_counter()
            try:
                # Progress is reported per committed batch, below.
                results = await agenerate_batch(
                    endpoint,
                    reqs,
                    concurrency=cfg.concurrency,
                    reporter=reporter,
                    retry=cfg,
                    report_progress=False,
                )
                break
            except ServerUnavailable as exc:
                saved = already + start
                if restarts <= 0 or get_model(cfg.model).kind == "endpoint":
                    raise PodiumError(
                        f"{exc} {saved} of {total} prompts are saved in {out}; run the same "
                        "card again to resume."
                    ) from exc
                restarts -= 1
                reporter.log(f"server gone ({exc}); restarting it and retrying the batch")
                endpoint = endpoint_for(cfg.model, reporter)
        elapsed = time.perf_counter() - began
        rows = []
        for i, prompt in enumerate(batch):
            rows += sample_rows(
                out, endpoint.checkpoint, sampling, prompt, results[i * cfg.n : (i + 1) * cfg.n]
            )
        first = not table_exists(out)
        write_table(
            out,
            to_arrow(rows),
            mode="create" if first else "append",
            properties=properties if first else None,
        )
        tokens = sum(r["completion_tokens"] for r in rows)
        stats["rows"] += len(rows)
        stats["completion_tokens"] += tokens
        stats["gen_seconds"] += elapsed
        stats["errors"] += sum(1 for r in rows if r["error"])
        done = already + start + len(batch)
        reporter.progress(done, total, f"prompts ({stats['rows']} samples written)")
        reporter.metric(
            done, {"tokens_per_s": tokens / max(elapsed, 1e-9), "completion_tokens": float(tokens)}
        )
        reporter.sample(
            done, {"prompt_id": rows[0]["prompt_id"], "completion": rows[0]["completion"]}
        )
    return stats


def _on_replicas(
    cfg: GenerateConfig,
    prompts: list[Prompt],
    done_ids: set[str],
    input_ref: str,
    out: str,
    properties: dict[str, str],
    reporter: Reporter,
) -> dict[str, float]:
    sampling = sampling_json(cfg)
    with replicas(
        cfg.model, cfg.replicas, urls=cfg.replica_urls, reporter=reporter, gpus=cfg.replica_gpus
    ) as endpoints:
        return generate_sharded(
            endpoints=endpoints,
            prompts=prompts,
            done_ids=done_ids,
            requests=lambda p: _requests(cfg, p),
            sampling=sampling,
            out=out,
            key=staging_key(out, input_ref, cfg.model, sampling, cfg.batch_size),
            batch_size=cfg.batch_size,
            concurrency=cfg.concurrency,
            retry=cfg,
            properties=properties,
            reporter=reporter,
        )


def run_generate(cfg: GenerateConfig, reporter: Reporter) -> JobOutputs:
    out = full_name(cfg.out)
    model = get_model(cfg.model)
    prompts, snapshot_id, skipped = load_prompts(cfg.table, cfg.prompt_column, cfg.limit)
    if not prompts:
        raise InvalidInput(f"Table {cfg.table} has no usable prompts (no user turns).")
    input_ref = str(TableRef(name=full_name(cfg.table.name), snapshot_id=snapshot_id))
    done_ids = _done_prompt_ids(out, input_ref, model.name)
    todo = [p for p in prompts if p.prompt_id not in done_ids]
    reporter.log(
        f"{len(prompts)} prompts ({skipped} rows skipped), {len(prompts) - len(todo)} "
        f"already in {out}, {len(todo)} to generate with {model.name}"
    )
    properties = {
        **reporter.lineage,
        PROP_KIND: SAMPLES_KIND,
        PROP_LINEAGE_INPUT: input_ref,
        PROP_LINEAGE_CHECKPOINT: model.name,
        PROP_LINEAGE_CHECKPOINT_LOCATION: model.location,
        PROP_CONFIG: json.dumps(cfg.model_dump(mode="json"), sort_keys=True),
    }
    reporter.progress(len(prompts) - len(todo), len(prompts), "prompts")
    stats: dict[str, float] = {"rows": 0, "completion_tokens": 0, "gen_seconds": 0.0, "errors": 0}
    if todo and (cfg.replicas > 1 or cfg.replica_urls):
        stats = _on_replicas(cfg, prompts, done_ids, input_ref, out, properties, reporter)
    elif todo:
        endpoint = endpoint_for(model.name, reporter)
        stats = asyncio.run(
            _generate(
                cfg,
                endpoint,
                todo,
                out,
                properties,
                reporter,
                len(prompts),
                len(prompts) - len(todo),
            )
        )
    summary = {
        "prompts": len(prompts),
        "resumed_from": len(prompts) - len(todo),
        "skipped_rows": skipped,
        "samples_written": int(stats["rows"]),
        "request_errors": int(stats["errors"]),
        "completion_tokens": int(stats["completion_tokens"]),
        "tokens_per_s": round(stats["completion_tokens"] / stats["gen_seconds"], 2)
        if stats["gen_seconds"]
        else 0.0,
        "checkpoint": model.name,
    }
    if todo and not (cfg.replicas > 1 or cfg.replica_urls):  # one server's speed
        tokens = int(stats["completion_tokens"])
        record_speed(model.name, tokens / max(stats["gen_seconds"], 1e-9), tokens)
    return JobOutputs(tables=[out], checkpoints=[model.name], summary=summary)
