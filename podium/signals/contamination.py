"""Contamination: rows that contain an eval table's text, found by word n-gram overlap
(as open-instruct and Cosmopedia decontaminate: 8-13 words, case folded).

Two stages: an index of every n-gram of the eval tables (hash -> eval table and row),
then a map over the table: each turn's n-grams are looked up, and runs of overlapping
hits become one span. Each hit names the eval table, the eval row and the span (turn,
start and end character) in the row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.errors import InvalidInput, NotFound
from podium.reporting import Reporter
from podium.signals.settings import ContaminationSettings
from podium.signals.signal import Source, TableSignal
from podium.signals.text_hashing import code_points, word_ngrams, words
from podium.signals.turns import Turns, columns_of, turns_of
from podium.store.catalog.catalog import full_name, load_table, name_of
from podium.store.read.read import iter_table_batches
from podium.store.read.snapshots import resolve_snapshot
from podium.validate.turns import Columns


@dataclass(frozen=True)
class EvalIndex:
    """Sorted n-gram hashes of the eval rows, with the eval row of each."""

    hashes: npt.NDArray[np.uint64]
    row: npt.NDArray[np.int64]  # index into tables/ids
    tables: list[str]
    ids: list[str]
    table_of: npt.NDArray[np.int64]


def _eval_name(spec: str) -> tuple[str, str | None]:
    name, _, snapshot = spec.partition("@")
    return name.strip(), snapshot.strip() or None


class Contamination(TableSignal[ContaminationSettings]):
    name: ClassVar[str] = "contamination"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "Word n-gram overlap with eval tables."
    schema: ClassVar[pa.Schema] = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("turn", pa.int32()),
            pa.field("start", pa.int32()),
            pa.field("end", pa.int32()),
            pa.field("eval_table", pa.string()),
            pa.field("eval_id", pa.string()),
            pa.field("ngrams", pa.int32()),
        ]
    )

    def __init__(self, settings: ContaminationSettings) -> None:
        super().__init__(settings)
        self.evals: list[tuple[Any, int]] = []
        self.nodes = 0  # > 0: the scan in Ray tasks over up to this many nodes
        self.counts = {"rows": 0, "hits": 0, "contaminated_rows": 0, "eval_ngrams": 0}

    def check(self) -> None:
        if not self.settings.evals:
            raise InvalidInput(
                "The contamination signal needs eval tables: --eval NS.TABLE (repeatable)."
            )
        self.evals = []
        for spec in self.settings.evals:
            name, snapshot = _eval_name(spec)
            try:
                table = load_table(full_name(name))
            except NotFound:
                raise InvalidInput(
                    f"Eval table {name!r} does not exist; name a table Podium holds "
                    "(`podium tables` lists them)."
                ) from None
            sid = resolve_snapshot(table, snapshot)
            if sid is None:
                raise InvalidInput(f"Eval table {name_of(table)} has no rows.")
            columns = columns_of(table)
            stored = [f.name for f in table.schema().fields]
            if columns.id not in stored or columns.messages not in stored:
                raise InvalidInput(
                    f"Eval table {name_of(table)} has no {columns.id!r} and "
                    f"{columns.messages!r} columns (columns: {', '.join(stored)}); "
                    "contamination compares chat messages. Map or import it as SFT."
                )
            self.evals.append((table, sid))

    def pinned(self) -> dict[str, Any]:
        return {"eval_snapshots": {name_of(t): sid for t, sid in self.evals}}

    def index(self) -> EvalIndex:
        n = self.settings.ngram
        hashes: list[npt.NDArray[np.uint64]] = []
        rows: list[npt.NDArray[np.int64]] = []
        tables: list[str] = []
        table_of: list[int] = []
        ids: list[str] = []
        for number, (table, sid) in enumerate(self.evals):
            tables.append(name_of(table))
            columns: Columns = columns_of(table)
            for batch in iter_table_batches(table, sid, columns=[columns.id, columns.messages]):
                turns = turns_of(batch, columns, self.settings.eval_roles or None)
                found = words(code_points(turns.row_texts()))
                grams, first = word_ngrams(found, n)
                hashes.append(grams)
                rows.append(found.text[first] + len(ids))
                ids.extend(turns.ids)
                table_of.extend([number] * turns.rows)
        every = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)
        row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        order = np.argsort(every, kind="stable")
        self.counts["eval_ngrams"] = len(every)
        return EvalIndex(every[order], row[order], tables, ids, np.asarray(table_of, np.int64))

    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        if not self.evals:
            self.check()
        reporter.log("contamination: indexing the eval tables")
        index = self.index()
        n = self.settings.ngram
        reporter.log(f"contamination: {len(index.hashes)} eval n-grams; scanning {source.table}")
        found: Iterable[tuple[int, list[pa.RecordBatch]]]
        if self.nodes:  # a task per group of data files, each sent the index
            from podium.signals.on_ray import by_file_groups  # Ray: only here

            found = by_file_groups(
                source, group_hits, (index, n), self.nodes, "contamination: hits in"
            )
        else:
            found = ((turns.rows, hits_in(turns, index, n)) for turns in source.turns())
        contaminated: set[str] = set()
        for rows, batches in found:
            self.counts["rows"] += rows
            for batch in batches:
                self.counts["hits"] += batch.num_rows
                contaminated.update(batch.column("id").to_pylist())
                yield batch
        self.counts["contaminated_rows"] = len(contaminated)

    def summary(self) -> dict[str, int]:
        return dict(self.counts)


def hits_in(turns: Turns, index: EvalIndex, n: int) -> list[pa.RecordBatch]:
    """The hits in one batch of turns (none or one batch): each run of overlapping or
    touching n-grams of one turn found in the index is one span."""
    found = words(code_points(turns.texts))
    grams, first = word_ngrams(found, n)
    if not len(grams) or not len(index.hashes):
        return []
    at = np.searchsorted(index.hashes, grams)
    at = np.minimum(at, len(index.hashes) - 1)
    hit = index.hashes[at] == grams
    if not hit.any():
        return []
    firsts, where = first[hit], at[hit]
    out: dict[str, list[Any]] = {f: [] for f in Contamination.schema.names}
    run_start = 0
    for k in range(1, len(firsts) + 1):
        # a run: hits in one turn whose n-grams overlap or touch
        if k < len(firsts) and (
            found.text[firsts[k]] == found.text[firsts[k - 1]] and firsts[k] <= firsts[k - 1] + n
        ):
            continue
        a, b = int(firsts[run_start]), int(firsts[k - 1]) + n - 1
        turn = int(found.text[a])
        eval_row = int(index.row[where[run_start]])
        out["id"].append(turns.ids[int(turns.row_of[turn])])
        out["turn"].append(int(turns.turn_of[turn]))
        out["start"].append(int(found.start[a]))
        out["end"].append(int(found.end[b]))
        out["eval_table"].append(index.tables[int(index.table_of[eval_row])])
        out["eval_id"].append(index.ids[eval_row])
        out["ngrams"].append(k - run_start)
        run_start = k
    return [pa.RecordBatch.from_pydict(out, schema=Contamination.schema)]


def group_hits(*scan_index_n: Any) -> tuple[int, list[pa.RecordBatch]]:
    """The Ray task: the rows of one group of data files and their hits (`scan_index_n`:
    `on_ray.group_turns`'s arguments, then the index and n)."""
    from podium.signals.on_ray import group_turns

    *scan, index, n = scan_index_n
    rows, batches = 0, []
    for turns in group_turns(*scan):
        rows += turns.rows
        batches += hits_in(turns, index, n)
    return rows, batches
