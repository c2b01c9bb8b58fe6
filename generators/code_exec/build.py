"""The `code-exec-build` job: a checkpoint proposes inputs, the sandbox runs the functions.

    podium build code-exec --table demo.functions --model base --out cx.demo \\
        --inputs-per-function 4 [--backend docker]

For each batch of functions: one constrained chat request per function proposes inputs
(`inputs.py`), each is parsed (literals here, other expressions evaluated in the sandbox)
or recorded as rejected (`harness.py`; the rows themselves in `rows.py`), every call runs
in a warm sandbox pool on all workers, and the batch's rows are appended to `out` in one
commit. A re-run of the same
card skips functions already in `out`. At the end the SFT table (`sft_out`, default
`OUT_sft`) is (re)written from every successful row: "What does f(...) return?"
answered with the output's repr.

`mode: verify` reads a rows table instead, re-executes each successful (code, input)
and writes a report table flagging every output that no longer matches, and every
input that no longer evaluates, apart (`verify.py`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from functools import partial
from typing import Any

import pyarrow as pa

from generators.client import Endpoint
from generators.code_exec import tables
from generators.code_exec.backend import backend_line, chosen_backend
from generators.code_exec.batches import BatchWork, Finished, Spent, chunks, write_batch
from generators.code_exec.config import PROP_ROWS_TABLE, CodeExecConfig
from generators.code_exec.harness import program
from generators.code_exec.inputs import propose_inputs
from generators.code_exec.rows import plan_calls, record_result, sort_rows
from generators.code_exec.source import done_ids, load_functions, output_properties
from generators.sandbox import Job, Limits, Sandbox
from podium.errors import InvalidInput
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name, load_table, table_exists
from podium.store.read.read import iter_batches
from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_batches


def propose_and_plan(
    cfg: CodeExecConfig,
    endpoint: Endpoint,
    batch: list[dict[str, Any]],
    model: str,
    backend: str,
    reporter: Reporter,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows for rejected proposals, calls to execute) for a batch of functions: one
    proposal request per function, all in flight together so the server batches them."""
    proposals = propose_inputs(
        endpoint,
        [(f["code"], f["entry_point"]) for f in batch],
        cfg.inputs_per_function,
        temperature=cfg.temperature,
        max_tokens=cfg.max_tokens,
        seed=cfg.seed,
        concurrency=cfg.concurrency,
        reporter=reporter,
    )
    rows: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for fn, proposal in zip(batch, proposals, strict=True):
        rejected, planned = plan_calls(fn, proposal, cfg.inputs_per_function, model, backend)
        rows += rejected
        calls += planned
    return rows, calls


def execute_calls(
    box: Sandbox, calls: list[dict[str, Any]], limits: Limits, model: str, reporter: Reporter
) -> list[dict[str, Any]]:
    jobs = [
        Job(
            program(c["fn"]["code"], c["fn"]["entry_point"], c["call"], c["arity"]),
            limits=limits,
            meta={"i": i},
        )
        for i, c in enumerate(calls)
    ]
    rows: list[dict[str, Any] | None] = [None] * len(calls)
    with closing(box.imap(jobs)) as stream:
        for job, result in stream:
            record_result(rows, calls, job, result, model, box.backend)
            reporter.check_cancelled()
    return [r for r in rows if r is not None]


def execute_batch(
    rows: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    limits: Limits,
    model: str,
    box: Sandbox,
) -> Finished:
    """A batch's work on a Ray sandbox node: its calls, run; all its rows, sorted."""
    rows = sort_rows(rows + execute_calls(box, calls, limits, model, Reporter()))
    counts = dict(Counter(r["status"] for r in rows))
    return Finished(rows, tables.ROWS_ARROW_SCHEMA, counts, len(calls))


def write_sft(cfg: CodeExecConfig, out: str, lineage: dict[str, str]) -> int:
    """(Re)write the SFT table from every successful row of `out`, streamed batch by
    batch into one commit (the rows table can be larger than memory)."""
    sft = cfg.sft_table()
    source = f"code-exec:{out}"
    properties = {**lineage, PROP_KIND: "sft", PROP_ROWS_TABLE: out}
    written = 0

    def samples() -> Iterator[pa.RecordBatch]:
        nonlocal written
        for batch in iter_batches(out):
            data = tables.sft_arrow(batch.to_pylist(), source=source)
            written += data.num_rows
            yield from data.to_batches()

    if table_exists(sft):
        if load_table(sft).properties.get(PROP_ROWS_TABLE) != out:
            raise InvalidInput(
                f"Table {sft} exists and was not written from {out}; choose another --sft-out."
            )
        write_batches(
            sft, samples(), mode="overwrite", schema=SFT_ARROW_SCHEMA, properties=properties
        )
    else:
        write_batches(sft, samples(), schema=SFT_SCHEMA, properties=properties)
    return written


def run_code_exec_build(cfg: CodeExecConfig, reporter: Reporter) -> JobOutputs:
    if cfg.mode == "verify":
        from generators.code_exec.verify import run_verify

        return run_verify(cfg, reporter)
    from generators.client import endpoint_for
    from podium.models import get_model

    out = full_name(cfg.out)
    model = get_model(cfg.model).name
    functions, input_ref = load_functions(cfg.table, cfg.limit)
    backend = chosen_backend(cfg.backend)
    reporter.log(backend_line(backend, named=bool(cfg.backend)))
    properties = output_properties(cfg, reporter, tables.ROWS_KIND, input_ref, model)
    done = done_ids(out, tables.ROWS_KIND, input_ref, "function_id")
    todo = [f for f in functions if f["id"] not in done]
    reporter.log(f"{len(functions)} functions, {len(functions) - len(todo)} already in {out}")
    reporter.progress(len(functions) - len(todo), len(functions), "functions")
    statuses: Counter[str] = Counter()
    spent = Spent()
    if todo and cfg.replicas:
        statuses = _build_on_ray(cfg, functions, done, input_ref, out, model, backend, properties,
                                 reporter, spent)  # fmt: skip
    elif todo:
        endpoint = endpoint_for(model, reporter)
        limits = cfg.limits()
        with Sandbox(backend, workers=cfg.workers or os.cpu_count(), limits=limits) as box:
            finished = len(functions) - len(todo)
            for batch in chunks(todo, cfg.batch_size):
                reporter.check_cancelled()
                began = time.perf_counter()
                rows, calls = propose_and_plan(cfg, endpoint, batch, model, backend, reporter)
                proposed = time.perf_counter()
                rows = sort_rows(rows + execute_calls(box, calls, limits, model, reporter))
                spent.add(
                    propose_s=proposed - began,
                    sandbox_s=time.perf_counter() - proposed,
                    sandbox_runs=len(calls),
                )
                write_batch(out, rows, tables.ROWS_ARROW_SCHEMA, properties)
                statuses.update(r["status"] for r in rows)
                finished += len(batch)
                reporter.progress(
                    finished, len(functions), f"functions ({sum(statuses.values())} rows)"
                )
                reporter.metric(
                    finished, {"ok_rate": statuses["ok"] / max(1, sum(statuses.values()))}
                )
                failing = next((r for r in rows if r["status"] not in ("ok",)), None)
                if failing is not None:
                    reporter.sample(
                        finished,
                        {k: failing[k] for k in ("function_id", "raw_input", "status", "error")},
                    )
    if not table_exists(out):
        raise InvalidInput(f"No rows were produced for {out}: the functions table is empty.")
    sft_rows = write_sft(cfg, out, properties)
    summary = {
        "functions": len(functions),
        "resumed_from": len(functions) - len(todo),
        "rows_this_run": sum(statuses.values()),
        "statuses": dict(statuses),
        "sandbox_runs": spent.sandbox_runs,
        "propose_s": round(spent.propose_s, 2),
        "sandbox_s": round(spent.sandbox_s, 2),  # summed over sandbox nodes on Ray
        "sft_rows": sft_rows,
        "backend": backend,
        "checkpoint": model,
    }
    return JobOutputs(tables=[out, cfg.sft_table()], checkpoints=[model], summary=summary)


def _build_on_ray(
    cfg: CodeExecConfig,
    functions: list[dict[str, Any]],
    done: set[str],
    input_ref: str,
    out: str,
    model: str,
    backend: str,
    properties: dict[str, str],
    reporter: Reporter,
    spent: Spent,
) -> Counter[str]:
    from generators.client import endpoint_for
    from generators.code_exec.on_ray import on_ray

    endpoint = endpoint_for(model, reporter)

    def plan(batch: list[dict[str, Any]]) -> BatchWork:
        began = time.perf_counter()
        rows, calls = propose_and_plan(cfg, endpoint, batch, model, backend, reporter)
        spent.add(propose_s=time.perf_counter() - began)
        return partial(execute_batch, rows, calls, cfg.limits(), model)

    return on_ray(cfg, functions, done, plan, tables.ROWS_ARROW_SCHEMA, out, input_ref,
                  backend, properties, reporter, spent, "functions")  # fmt: skip
