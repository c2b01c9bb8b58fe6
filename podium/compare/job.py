"""The `compare` job: several checkpoints answer one prompt set with one sampling setup.

    podium compare --models base,sft-json --table demo.json_sft --out cmp.json_sft \
        --max-tokens 64 --check json --limit 50

For each checkpoint the job finds samples with the same key (`podium.compare.sample_sets`)
or runs the `generate` job's own function to write them (resumable, one commit per
batch). A model whose vLLM server is running (Generate's, say) is served by it, and it
is left running; the servers the job starts are started at once when their engines fit
in memory side by side (`podium.compare.serving_plan`), else one at a time, each stopped
before the next starts. With `stop_servers` (default) the job stops the servers it
started when it is done. Then every answer is
checked (`podium.compare.checks`) and the comparison is written as one Iceberg table,
`out`: one row per prompt and checkpoint, holding the exact sample id it shows. Its
properties name the models, the prompt snapshot, the sampling and the samples tables,
so the UI, the votes and the ratings find everything from the comparison's name.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pydantic import AliasChoices, BaseModel, Field, field_validator

from generators.generate import GenerateConfig, run_generate
from generators.prompts import load_prompts
from podium.compare.checks import check_answers, code_task, compile_rules
from podium.compare.sample_sets import SampleKey, find_samples
from podium.compare.serving_plan import ServingPlan, plan_serving
from podium.compare.table import (
    COMPARISON_KIND,
    COMPARISON_SCHEMA,
    PROP_CHECKS,
    PROP_MODELS,
    PROP_SAMPLE_TABLES,
    PROP_SAMPLING,
)
from podium.errors import InvalidInput
from podium.models import get_model, list_servers, stop_server
from podium.models.memory import engine_bytes, usable_bytes
from podium.models.registry import ModelInfo
from podium.models.serving import Served, serve
from podium.models.vllm_launch import has_gpu
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name, load_table, table_exists
from podium.store.catalog.table_name import TableName
from podium.store.read.read import iter_batches, open_snapshot
from podium.store.read.refs import TableRef
from podium.store.schema import PROP_KIND, PROP_LINEAGE_INPUT
from podium.store.write.write import write_batches
from podium.validate.extract import Extract
from podium.validate.rules import check_spec

MAX_MODELS = 16  # a training run's checkpoints plus its base, for trends
CHUNK_PROMPTS = 512  # comparison rows checked and written at a time


class CompareConfig(BaseModel):
    """Run-card front matter of `kind: compare`."""

    models: list[str] = Field(
        description="Registered models, 2 to 16 ('base' = default base); "
        "the page shows up to four side by side."
    )
    table: TableRef = Field(
        validation_alias=AliasChoices("table", "input"),
        description="Prompt set: an SFT table or eval set, pinned to a snapshot.",
    )
    out: TableName = Field(description="Comparison table to write (NAMESPACE.TABLE).")
    max_tokens: int = Field(256, ge=1, le=8192, description="Most tokens per answer.")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="0 = greedy (fair and repeatable).")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    seed: int | None = Field(0, description="Sampling seed.")
    stop: list[str] = Field(default_factory=list, description="Stop strings.")
    checks: list[str] = Field(
        default_factory=list, description="Validation rules run on every answer (json, regex:...)."
    )
    extract: Extract = Field(
        "whole",
        description="Check the whole answer or its first fenced block (whole when it has none).",
    )
    prompt_column: str | None = Field(None, description="Plain-text prompt column.")
    limit: int | None = Field(None, ge=1, description="Use only the first N prompts.")
    concurrency: int = Field(16, ge=1, le=512, description="Requests in flight at once.")
    stop_servers: bool = Field(True, description="Stop each vLLM server this job started.")

    @field_validator("models")
    @classmethod
    def _enough_models(cls, models: list[str]) -> list[str]:
        models = [m.strip() for m in models if m.strip()]
        if not 2 <= len(models) <= MAX_MODELS:
            raise ValueError(f"compare needs 2 to {MAX_MODELS} models, got {len(models)}")
        if len(set(models)) != len(models):
            raise ValueError(f"a model is named twice in {models}")
        return models

    @field_validator("checks")
    @classmethod
    def _known_rules(cls, checks: list[str]) -> list[str]:
        return [check_spec(c) for c in checks]

    def generate_config(self, model: str, out: str) -> GenerateConfig:
        """One model's generate card: this comparison's prompts and sampling, one answer."""
        shared = self.model_dump(include=_SHARED_WITH_GENERATE)
        return GenerateConfig(**shared, out=out, model=model, n=1)


# The settings a comparison hands to each model's generate job as they are.
_SHARED_WITH_GENERATE = {
    "table",
    "max_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "prompt_column",
    "limit",
    "concurrency",
}


def _check_out(out: str, models: list[str], input_ref: str) -> None:
    if not table_exists(out):
        return
    props = load_table(out).properties
    same = (
        props.get(PROP_KIND) == COMPARISON_KIND
        and json.loads(props.get(PROP_MODELS, "[]")) == models
        and props.get(PROP_LINEAGE_INPUT) == input_ref
    )
    if not same:
        raise InvalidInput(
            f"Table {out} already exists and is not this comparison ({', '.join(models)} on "
            f"{input_ref}); choose another --out name."
        )


def _existing_samples(
    cfg: CompareConfig, info: ModelInfo, input_ref: str, prompt_ids: list[str]
) -> tuple[GenerateConfig, SampleKey, str | None]:
    # The output name is not part of the key; a valid placeholder until the table is known
    # (a blank one is refused by the table-name rule).
    gen = cfg.generate_config(info.name, cfg.out)
    key = SampleKey.of(info, input_ref, gen)
    return gen, key, find_samples(key, prompt_ids)


def _serving_plan(pending: list[ModelInfo]) -> ServingPlan:
    gpu = has_gpu()
    sizes = {m.name: engine_bytes(m.path, gpu=gpu) if m.path else None for m in pending}
    return plan_serving(pending, list_servers(), sizes, usable_bytes())


def _start_together(names: list[str], reporter: Reporter) -> tuple[list[str], BaseException | None]:
    """Start the servers of `names` at once; (those this call started, the first error)."""
    served: dict[str, Served] = {}
    errors: list[BaseException] = []

    def one(name: str) -> None:
        try:
            served[name] = serve(name, reporter=reporter)
        except BaseException as exc:  # noqa: BLE001 - handed to the job's thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,), daemon=True) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [n for n, s in served.items() if s.started], (errors[0] if errors else None)


def _generate_all(
    cfg: CompareConfig,
    models: list[str],
    input_ref: str,
    prompt_ids: list[str],
    reporter: Reporter,
) -> dict[str, str]:
    """Each model's samples table: found, or generated with a server that is reused
    (never stopped), or started by this job (stopped at the end with `stop_servers`)."""
    infos = {m: get_model(m) for m in models}
    found = {m: _existing_samples(cfg, infos[m], input_ref, prompt_ids) for m in models}
    plan = _serving_plan([infos[m] for m in models if found[m][2] is None])
    if plan.reuse:
        reporter.log(f"reusing the running server of {', '.join(plan.reuse)}")
    if plan.start:
        reporter.log(f"servers to start: {', '.join(plan.start)} ({plan.reason})")
    started: list[str] = []
    tables: dict[str, str] = {}
    try:
        if plan.together:
            reporter.phase(f"starting vLLM for {', '.join(plan.start)} at once")
            ours, error = _start_together(plan.start, reporter)
            started += ours
            if error is not None:
                raise error
        for i, model in enumerate(models):
            reporter.check_cancelled()
            reporter.progress(i, len(models) + 1, f"checkpoints ({model})")
            gen, key, table = found[model]
            if table is not None:
                reporter.log(f"{model}: reusing samples in {table}")
                tables[model] = table
                continue
            one_at_a_time = model in plan.start and not plan.together
            if one_at_a_time and serve(model, reporter=reporter).started:
                started.append(model)
            tables[model] = key.own_table()
            reporter.log(f"{model}: generating into {tables[model]}")
            run_generate(gen.model_copy(update={"out": tables[model]}), reporter)
            if cfg.stop_servers and not plan.together and model in started:
                stop_server(model)  # one at a time: the next one needs the memory
                started.remove(model)
    finally:
        if cfg.stop_servers:
            for model in started:
                stop_server(model)
    return tables


def _rows(
    cfg: CompareConfig,
    models: list[str],
    tables: dict[str, str],
    prompts: list[Any],
    metadata: dict[str, str | None],
) -> Iterator[list[dict[str, Any]]]:
    """Comparison rows, side by side, `CHUNK_PROMPTS` prompts at a time."""
    rules = compile_rules(cfg.checks)
    now = datetime.now(UTC)
    wanted = {p.prompt_id for p in prompts}
    for side, model in enumerate(models):
        by_prompt = {
            r["prompt_id"]: r
            for batch in iter_batches(tables[model])
            for r in batch.to_pylist()
            if r["sample_index"] == 0 and r["prompt_id"] in wanted
        }
        for start in range(0, len(prompts), CHUNK_PROMPTS):
            chunk = prompts[start : start + CHUNK_PROMPTS]
            picked = [by_prompt.get(p.prompt_id) for p in chunk]
            answers = [(s or {}).get("completion") or "" for s in picked]
            checks = check_answers(
                answers,
                [(s or {}).get("finish_reason") for s in picked],
                rules,
                [code_task(metadata.get(p.prompt_id)) for p in chunk],
                cfg.extract,
            )
            yield [
                {
                    "prompt_id": prompt.prompt_id,
                    "prompt": prompt.messages,
                    "model": model,
                    "side": side,
                    "sample_table": tables[model],
                    "sample_id": sample["id"] if sample else None,
                    "completion": answer,
                    "finish_reason": sample["finish_reason"] if sample else "missing",
                    "error": sample["error"] if sample else "no sample",
                    "completion_tokens": sample["completion_tokens"] if sample else 0,
                    "checks": check.to_json(),
                    "passed": check.passed,
                    "created_at": now,
                }
                for prompt, sample, answer, check in zip(
                    chunk, picked, answers, checks, strict=True
                )
            ]


def _prompt_metadata(ref: TableRef) -> dict[str, str | None]:
    columns = open_snapshot(ref.name, ref.snapshot_id)[1].column_names
    if "metadata" not in columns or "id" not in columns:
        return {}
    out: dict[str, str | None] = {}
    for batch in iter_batches(ref.name, ref.snapshot_id, columns=["id", "metadata"]):
        ids, metadata = batch.column("id").to_pylist(), batch.column("metadata").to_pylist()
        out.update(zip(ids, metadata, strict=True))
    return out


def run_compare(cfg: CompareConfig, reporter: Reporter) -> JobOutputs:
    out = full_name(cfg.out)
    models = [get_model(m).name for m in cfg.models]
    compile_rules(cfg.checks)  # a bad rule file fails before any generation
    prompts, snapshot_id, skipped = load_prompts(cfg.table, cfg.prompt_column, cfg.limit)
    if not prompts:
        raise InvalidInput(f"Table {cfg.table} has no usable prompts (no user turns).")
    ref = TableRef(name=full_name(cfg.table.name), snapshot_id=snapshot_id)
    input_ref = str(ref)
    _check_out(out, models, input_ref)
    pinned = cfg.model_copy(update={"table": ref})
    tables = _generate_all(pinned, models, input_ref, [p.prompt_id for p in prompts], reporter)
    reporter.progress(len(models), len(models) + 1, "checking answers")
    properties = {
        **reporter.lineage,
        PROP_KIND: COMPARISON_KIND,
        PROP_LINEAGE_INPUT: input_ref,
        PROP_MODELS: json.dumps(models),
        PROP_SAMPLE_TABLES: json.dumps(tables),
        PROP_SAMPLING: json.dumps(
            {k: getattr(cfg, k) for k in ("max_tokens", "temperature", "top_p", "seed", "stop")}
        ),
        PROP_CHECKS: json.dumps(cfg.checks),
    }
    passed: dict[str, list[bool]] = {m: [] for m in models}

    def batches() -> Iterator[pa.RecordBatch]:
        for rows in _rows(cfg, models, tables, prompts, _prompt_metadata(ref)):
            for r in rows:
                if r["passed"] is not None:
                    passed[r["model"]].append(r["passed"])
            yield pa.RecordBatch.from_pylist(rows, schema=COMPARISON_SCHEMA)

    write_batches(
        out,
        batches(),
        mode="overwrite" if table_exists(out) else "create",
        schema=COMPARISON_SCHEMA,
        properties=properties,
    )
    reporter.progress(len(models) + 1, len(models) + 1, "done")
    summary = {
        "comparison": out,
        "prompts": len(prompts),
        "skipped_rows": skipped,
        "sample_tables": tables,
        "pass_rate": {m: round(sum(v) / len(v), 4) if v else None for m, v in passed.items()},
    }
    return JobOutputs(
        tables=[out, *dict.fromkeys(tables.values())], checkpoints=models, summary=summary
    )
