"""Generation over several vLLM replicas: a shared queue of shards, one commit.

    podium generate --table demo.chat --out gen.x --replicas 2 --launcher ray

The prompts are cut into shards of `batch_size` (fixed over the whole prompt list, so
a shard means the same prompts in every attempt). One puller per replica takes the
next shard from a shared queue, so a fast or idle replica takes more (balanced by
load, not split up front). A finished shard becomes one staged Parquet file
(`podium.store.write.staged`); when every shard is done the driver commits all files as ONE
snapshot. A replica that stops answering hands its shard back to the queue and leaves;
the others finish the work. If none is left, the job fails saying how many shards are
saved, and running the same card again generates only the missing ones.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from generators.client import ChatRequest, Endpoint, ServerUnavailable, agenerate_batch
from generators.prompts import Prompt
from generators.retry import RetryPolicy
from generators.samples import SAMPLES_SCHEMA, sample_rows, to_arrow
from podium.errors import PodiumError
from podium.reporting import Reporter
from podium.store.write.staged import Staging, commit_staged, pending_files, stage, write_staged

_WAIT_S = 0.5


@dataclass
class Shard:
    name: str
    prompts: list[Prompt]


@dataclass(frozen=True)
class _Work:
    """What every puller does with a shard: the same for all replicas."""

    staging: Staging
    requests: Any  # (Prompt) -> list[ChatRequest]
    sampling: dict[str, Any]
    concurrency: int
    retry: RetryPolicy
    reporter: Reporter
    total: int


@dataclass
class _Board:
    """What the pullers share: the queue, what is left, what was written."""

    queue: asyncio.Queue[Shard]
    left: int
    prompts_done: int
    paths: list[str] = field(default_factory=list)
    stats: dict[str, float] = field(
        default_factory=lambda: {
            "rows": 0,
            "completion_tokens": 0,
            "gen_seconds": 0.0,
            "errors": 0,
        }
    )


def plan_shards(
    prompts: list[Prompt], size: int, done_ids: set[str], finished: set[str]
) -> list[Shard]:
    """Shards still to generate: not staged yet, without prompts already in the table."""
    shards = []
    for start in range(0, len(prompts), size):
        name = f"shard-{start // size:06d}"
        todo = [p for p in prompts[start : start + size] if p.prompt_id not in done_ids]
        if todo and name not in finished:
            shards.append(Shard(name, todo))
    return shards


def generate_sharded(
    *,
    endpoints: list[Endpoint],
    prompts: list[Prompt],
    done_ids: set[str],
    requests: Any,  # (Prompt) -> list[ChatRequest]
    sampling: dict[str, Any],
    out: str,
    key: str,
    batch_size: int,
    concurrency: int,
    retry: RetryPolicy,
    properties: dict[str, str],
    reporter: Reporter,
) -> dict[str, float]:
    staging = stage(out, SAMPLES_SCHEMA, key)
    finished = pending_files(staging)
    shards = plan_shards(prompts, batch_size, done_ids, set(finished))
    reporter.log(
        f"{len(shards)} shards of up to {batch_size} prompts over {len(endpoints)} replicas; "
        f"{len(finished)} shards already staged"
    )
    began = time.perf_counter()
    work = _Work(staging, requests, sampling, concurrency, retry, reporter, total=len(prompts))
    done = len(prompts) - sum(len(s.prompts) for s in shards)
    board = asyncio.run(_pull_all(endpoints, shards, work, done))
    board.stats["gen_seconds"] = time.perf_counter() - began  # wall time over all replicas
    if board.left:
        raise PodiumError(
            f"Every model replica stopped answering; {len(finished) + len(board.paths)} "
            f"shards are saved ({board.left} left). Run the same card again to resume."
        )
    paths = list(finished.values()) + board.paths
    if paths:
        commit_staged(staging, paths, properties=properties)
    reporter.log(f"committed {len(paths)} shard files to {out} in one snapshot")
    return board.stats


async def _pull_all(
    endpoints: list[Endpoint], shards: list[Shard], work: _Work, done: int
) -> _Board:
    board = _Board(asyncio.Queue(), left=len(shards), prompts_done=done)
    for shard in shards:
        board.queue.put_nowait(shard)
    pullers = [asyncio.create_task(_pull(i, e, board, work)) for i, e in enumerate(endpoints)]
    try:
        await asyncio.gather(*pullers)
    except BaseException:
        for task in pullers:
            task.cancel()
        await asyncio.gather(*pullers, return_exceptions=True)
        raise
    return board


async def _pull(index: int, endpoint: Endpoint, board: _Board, work: _Work) -> None:
    staging, requests, sampling = work.staging, work.requests, work.sampling
    reporter, total = work.reporter, work.total
    loop = asyncio.get_running_loop()
    while board.left > 0:
        reporter.check_cancelled()
        try:
            shard = await asyncio.wait_for(board.queue.get(), _WAIT_S)
        except TimeoutError:
            continue  # another replica holds the last shards; it may hand one back
        reqs: list[ChatRequest] = [r for p in shard.prompts for r in requests(p)]
        began = loop.time()
        try:
            results = await agenerate_batch(
                endpoint,
                reqs,
                concurrency=work.concurrency,
                reporter=reporter,
                retry=work.retry,
                report_progress=False,
            )
        except ServerUnavailable as exc:
            board.queue.put_nowait(shard)
            reporter.log(f"replica {index} gone ({exc}); {shard.name} goes back to the queue")
            return
        elapsed = loop.time() - began
        per = len(reqs) // len(shard.prompts)
        rows = []
        for i, prompt in enumerate(shard.prompts):
            rows += sample_rows(
                staging.table,
                endpoint.checkpoint,
                sampling,
                prompt,
                results[i * per : (i + 1) * per],
            )
        path = await asyncio.to_thread(write_staged, staging, shard.name, to_arrow(rows))
        board.paths.append(path)
        board.left -= 1
        board.prompts_done += len(shard.prompts)
        tokens = sum(r["completion_tokens"] for r in rows)
        board.stats["rows"] += len(rows)
        board.stats["completion_tokens"] += tokens
        board.stats["errors"] += sum(1 for r in rows if r["error"])
        reporter.progress(
            board.prompts_done, total, f"prompts ({board.stats['rows']:.0f} samples staged)"
        )
        reporter.metric(
            board.prompts_done,
            {"tokens_per_s": tokens / max(elapsed, 1e-9), f"replica_{index}_shards": 1.0},
        )
