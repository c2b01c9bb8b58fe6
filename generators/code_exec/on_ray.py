"""A code-exec build whose sandbox runs are spread over a Ray cluster's nodes.

    podium build code-exec --table fx.all --out cx.all --replicas 4 --launcher ray

The job's driver proposes inputs (one batch of functions at a time, as in a local
build) and hands each batch's calls to the next free `SandboxNode`: a Ray actor
holding its own warm sandbox pool, spread one per node (`SPREAD`), so proposing batch
k+1 overlaps running batch k. The actor executes the calls, writes the batch's rows as
one staged Parquet file (`podium.store.write.staged`) and returns the file; the driver
commits every file in ONE snapshot at the end. Batches are fixed over the whole
function list, so a job that dies resumes with only the batches not staged yet.
Rows are the same as a local build's: same row ids, inputs and outputs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from generators.code_exec import tables
from generators.sandbox import Limits, Sandbox
from podium.ray_join import ray_module
from podium.reporting import Reporter
from podium.store.write.fan_out import SPREAD, fan_out
from podium.store.write.staged import (
    Staging,
    commit_staged,
    pending_files,
    stage,
    staging_key,
    write_staged,
)

if TYPE_CHECKING:
    from generators.code_exec.batches import BatchWork, Spent
    from generators.code_exec.config import CodeExecConfig

NODE_CPUS = 1.0


class SandboxNode:
    """One node's warm sandbox pool (made a Ray actor at run time)."""

    def __init__(self, backend: str, workers: int | None, limits: Limits) -> None:
        import os

        self.stack = ExitStack()
        self.box = self.stack.enter_context(
            Sandbox(backend, workers=workers or os.cpu_count(), limits=limits)
        )

    def run(self, staging: Staging, name: str, work: BatchWork) -> dict[str, Any]:
        began = time.perf_counter()
        done = work(self.box)
        seconds = time.perf_counter() - began
        path = write_staged(staging, name, tables.to_arrow(done.rows, done.schema))
        return {
            "name": name,
            "path": path,
            "statuses": done.counts,
            "spent": {"sandbox_s": seconds, "sandbox_runs": done.runs},
        }

    def close(self) -> None:
        self.stack.close()


def on_ray(
    cfg: CodeExecConfig,
    items: list[dict[str, Any]],
    done: set[str],
    plan: Callable[[list[dict[str, Any]]], BatchWork],
    schema: pa.Schema,
    out: str,
    input_ref: str,
    backend: str,
    properties: dict[str, str],
    reporter: Reporter,
    spent: Spent,
    unit: str,
) -> Counter[str]:
    """A build's functions (or a verify's rows) over `cfg.replicas` sandbox actors,
    skipping the items whose id is in `done`."""
    from generators.code_exec.batches import chunks

    # Batches are cut from the whole list so a resumed job sees the same batch names.
    batches = [
        (f"batch-{i:06d}", [item for item in chunk if item["id"] not in done])
        for i, chunk in enumerate(chunks(items, cfg.batch_size))
    ]
    key_config = cfg.model_dump(mode="json", exclude={"launcher", "replicas", "workers"})
    return build_on_ray(
        batches=[(name, todo) for name, todo in batches if todo],
        plan=plan,
        schema=schema,
        out=out,
        key=staging_key(out, input_ref, key_config),
        nodes=cfg.replicas,
        backend=backend,
        workers=cfg.workers,
        limits=cfg.limits(),
        properties=properties,
        reporter=reporter,
        total=len(items),
        done=sum(1 for item in items if item["id"] in done),
        spent=spent,
        unit=unit,
    )


def build_on_ray(
    *,
    batches: list[tuple[str, list[dict[str, Any]]]],
    plan: Callable[[list[dict[str, Any]]], BatchWork],  # proposes/parses; work for a node
    schema: pa.Schema,
    out: str,
    key: str,
    nodes: int,
    backend: str,
    workers: int | None,
    limits: Limits,
    properties: dict[str, str],
    reporter: Reporter,
    total: int,
    done: int,
    spent: Spent,
    unit: str = "functions",
) -> Counter[str]:
    """Run `batches` (name, functions or rows) over `nodes` sandbox actors; commit once.
    `spent` gains the actors' sandbox seconds and runs."""
    ray = ray_module()
    staging = stage(out, schema, key)
    finished = pending_files(staging)
    todo = [(name, fns) for name, fns in batches if name not in finished]
    done += sum(len(fns) for name, fns in batches if name in finished)
    reporter.log(
        f"{len(todo)} batches over {nodes} sandbox nodes; {len(finished)} batches already staged"
    )
    node_cls = ray.remote(num_cpus=NODE_CPUS, max_restarts=1, max_task_retries=1)(SandboxNode)
    actors = [
        node_cls.options(scheduling_strategy=SPREAD).remote(backend, workers, limits)
        for _ in range(nodes)
    ]
    sizes = {name: len(fns) for name, fns in todo}
    statuses: Counter[str] = Counter()
    paths = list(finished.values())

    def collect(result: dict[str, Any]) -> None:
        nonlocal done
        paths.append(result["path"])
        statuses.update(result["statuses"])
        spent.add(**result["spent"])
        done += sizes[result["name"]]
        reporter.progress(done, total, f"{unit} ({sum(statuses.values())} rows staged)")

    try:
        fan_out(
            ((name, plan(fns)) for name, fns in todo),  # planned while earlier batches run
            actors,
            lambda actor, piece: actor.run.remote(staging, *piece),
            collect,
            reporter,
        )
    finally:
        for actor in actors:
            try:
                ray.get(actor.close.remote(), timeout=30)
            except Exception as exc:  # a dead actor's pool died with it
                reporter.log(f"sandbox node close: {type(exc).__name__}")
            ray.kill(actor)
    if paths:
        commit_staged(staging, paths, properties=properties)
    reporter.log(f"committed {len(paths)} batch files to {out} in one snapshot")
    return statuses
