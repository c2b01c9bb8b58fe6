"""Signals on a Ray cluster, partitioned so their values are the same as on one machine:
near-duplicate stages 1 and 2, exact duplicates' hashes and contamination's scan.

    podium signals run big.sft --signal near-dup,exact-dup,contamination --nodes 4

Stage 1 (signatures, a map): the snapshot's data files in contiguous groups, one Ray task
each, every task reading only its files and returning its rows' ids and band keys; the
groups are joined in file order, so row indices are those of a local scan. Stage 2
(buckets): the band keys are shuffled by band, one task per group of bands; a candidate
pair is found within one band, so the union of the tasks' pairs is the local set.
Verification, the split at each canonical and the write stay with the driver (they
read only the rows in candidate pairs). Exact duplicates hash each group's rows in its
task and group the hashes in the driver (8 bytes a row); contamination sends the eval
tables' n-gram index to every task, which returns its files' hits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from pyiceberg.table import Table

from podium.ray_join import ray_module
from podium.reporting import Reporter
from podium.signals.minhash import Keys, PairUnion, candidate_pairs, joined_keys, row_keys
from podium.signals.settings import NearDupSettings
from podium.signals.signal import Source
from podium.signals.turns import Turns, turns_of
from podium.store.read import batch_stream
from podium.store.read.file_plan import FilePlan
from podium.store.read.plan import plan_snapshot
from podium.store.write.fan_out import SPREAD, fan_out
from podium.validate.turns import Columns

TASKS_PER_NODE = 2  # more tasks than nodes, so one slow group does not hold up the run


@runtime_checkable
class PlannedSource(Protocol):
    """A snapshot source whose data files can be planned (`signals.job.SnapshotSource`)."""

    loaded: Table
    snapshot_id: int
    columns: Columns
    roles: tuple[str, ...]
    batch_rows: int
    reporter: Reporter


def file_groups(plan: FilePlan, groups: int) -> list[FilePlan]:
    """The plan's files in at most `groups` contiguous runs (file order kept)."""
    files = plan.files
    cuts = np.array_split(np.arange(len(files)), max(1, min(groups, len(files))))
    return [replace(plan, files=tuple(files[i] for i in cut)) for cut in cuts if len(cut)]


def group_turns(
    plan: FilePlan, columns: Columns, roles: tuple[str, ...], batch_rows: int
) -> Iterator[Turns]:
    """In a Ray task: the chosen turns of every row of `plan`'s files, a batch at a time."""
    from podium.store.catalog.catalog import load_table

    table = None if plan.direct else load_table(plan.table)  # object stores need its FileIO
    for batch in batch_stream.iter_batches(table, plan, [columns.id, columns.messages], batch_rows):
        yield turns_of(batch, columns, roles)


def group_keys(
    plan: FilePlan, columns: Columns, roles: tuple[str, ...], batch_rows: int, s: NearDupSettings
) -> Keys:
    """The Ray task of stage 1: ids and band keys of every row of `plan`'s files."""
    return joined_keys((row_keys(t, s) for t in group_turns(plan, columns, roles, batch_rows)), s)


def _run(pieces: list[Any], task: Any, reporter: Reporter) -> list[Any]:
    """Every piece in a Ray task, results in the pieces' order."""
    ray = ray_module()
    remote = ray.remote(num_cpus=1, max_retries=1)(task).options(scheduling_strategy=SPREAD)
    results: dict[int, Any] = {}
    fan_out(
        enumerate(pieces),
        range(len(pieces)),  # every piece at once: Ray places them as CPUs free up
        lambda _, piece: remote.remote(piece[0], *piece[1]),
        lambda result: results.__setitem__(result[0], result[1]),
        reporter,
    )
    return [results[i] for i in range(len(pieces))]


def _indexed(task: Any) -> Any:
    def run(index: int, *args: Any) -> tuple[int, Any]:
        return index, task(*args)

    run.__name__ = task.__name__
    return run


def by_file_groups(
    source: Source, task: Any, extra: tuple[Any, ...], nodes: int, what: str
) -> list[Any]:
    """`task(plan, columns, roles, batch_rows, *extra)` over Ray tasks, one per group of
    the snapshot's data files; the results in file order, so rows come in the order of
    a scan on one machine."""
    if not isinstance(source, PlannedSource):  # pragma: no cover - jobs pass one
        raise TypeError(f"a signal on Ray reads a table snapshot, not {type(source).__name__}")
    groups = file_groups(plan_snapshot(source.loaded, source.snapshot_id), nodes * TASKS_PER_NODE)
    source.reporter.log(f"{what} {len(groups)} groups of data files in Ray tasks")
    pieces = [(g, source.columns, source.roles, source.batch_rows, *extra) for g in groups]
    return _run(pieces, _indexed(task), source.reporter)


def keys_on_ray(source: Source, s: NearDupSettings, nodes: int) -> Keys:
    """Stage 1 over Ray tasks, one per group of data files."""
    return joined_keys(
        by_file_groups(source, group_keys, (s,), nodes, "near-dup: signatures of"), s, source.total
    )


def pairs_on_ray(
    keys: npt.NDArray[np.uint64], valid: npt.NDArray[np.bool_], nodes: int, reporter: Reporter
) -> npt.NDArray[np.int64]:
    """Stage 2 over Ray tasks: the band keys shuffled by band, one task per group."""
    bands = keys.shape[1]
    parts = [
        list(range(b, bands, nodes * TASKS_PER_NODE))
        for b in range(min(bands, nodes * TASKS_PER_NODE))
    ]
    reporter.log(f"near-dup: buckets of {bands} bands in {len(parts)} Ray tasks, by band")
    pieces = [(np.ascontiguousarray(keys[:, part]), valid) for part in parts]
    found = PairUnion(len(keys))
    for part in _run(pieces, _indexed(candidate_pairs), reporter):
        found.add([part])
    return found.pairs()
