"""Near-duplicates: MinHash signatures of character shingles, LSH buckets by band,
candidate pairs verified by their exact Jaccard, connected components by union-find,
split so that every member of a cluster is within the threshold of its canonical row
(the smallest id): "keep one per cluster" then removes only rows that are near-copies
of the row it keeps. A table signal in the stages of
`podium.signals.minhash`; only rows in a cluster are stored.

Memory grows with the rows only by their band keys (8 bytes per band) and ids: the
shingle sets needed for the exact Jaccard are rebuilt in a second scan, for the rows
of candidate pairs only, and held in a scratch file when they are many
(`podium.signals.shingle_store`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.reporting import Reporter
from podium.signals.clusters import ScoredClusters, UnionFind
from podium.signals.exact_dup import CLUSTER_FIELDS
from podium.signals.in_threads import mapped_in_threads
from podium.signals.minhash import (
    Keys,
    candidate_pairs,
    jaccard,
    joined_keys,
    likely_pairs,
    row_keys,
    row_sets,
)
from podium.signals.settings import NearDupSettings
from podium.signals.shingle_store import Sets, ShingleStore
from podium.signals.signal import Source, TableSignal

# Rows whose shingle sets are held in memory at once: ~4 KB each for ~1 KiB of text,
# so ~600 MB; more candidate rows than this have their sets in a scratch file, read
# back a group of this many rows at a time.
VERIFY_ROWS = 150_000


def components(
    rows: npt.NDArray[np.int64], roots: npt.NDArray[np.int64], ids: pa.Array
) -> list[list[int]]:
    """The rows of each connected component (labelled by its root), smallest id first."""
    if len(rows) == 0:
        return []
    table = pa.table({"root": pa.array(roots), "id": ids.take(pa.array(rows)), "row": rows})
    table = table.sort_by([("root", "ascending"), ("id", "ascending")])
    root = table.column("root").to_numpy()
    ordered = table.column("row").to_numpy()
    cuts = np.flatnonzero(root[1:] != root[:-1]) + 1
    return [part.tolist() for part in np.split(ordered, cuts)]


def component_groups(parts: list[list[int]], most_rows: int) -> Iterator[list[list[int]]]:
    """Components in consecutive groups of at most `most_rows` rows (a component is never
    split, so one bigger than that is a group of its own)."""
    group: list[list[int]] = []
    held = 0
    for part in parts:
        if group and held + len(part) > most_rows:
            yield group
            group, held = [], 0
        group.append(part)
        held += len(part)
    if group:
        yield group


def pair_groups(pairs: npt.NDArray[np.int64], most_rows: int) -> list[npt.NDArray[np.int64]]:
    """Indices of `pairs` in consecutive groups whose pairs touch at most `most_rows`
    distinct rows each (a pair is never split)."""
    groups: list[npt.NDArray[np.int64]] = []
    seen: set[int] = set()
    start = 0
    for i, (a, b) in enumerate(pairs.tolist()):
        new = {a, b} - seen
        if seen and len(seen) + len(new) > most_rows:
            groups.append(np.arange(start, i, dtype=np.int64))
            seen, start = set(), i
            new = {a, b}
        seen |= new
    if len(pairs):
        groups.append(np.arange(start, len(pairs), dtype=np.int64))
    return groups


class NearDup(TableSignal[NearDupSettings]):
    name: ClassVar[str] = "near-dup"
    version: ClassVar[int] = 2  # 2: every member within the threshold of its canonical
    description: ClassVar[str] = "Near-duplicate clusters (MinHash + LSH, exact Jaccard)."
    schema: ClassVar[pa.Schema] = pa.schema([*CLUSTER_FIELDS, pa.field("jaccard", pa.float32())])

    def __init__(self, settings: NearDupSettings) -> None:
        super().__init__(settings)
        self.counts = {
            "rows": 0,
            "candidates": 0,
            "likely": 0,  # candidates whose sketches' estimate is near the threshold
            "verified": 0,
            "clusters": 0,
            "duplicates": 0,
        }
        self._ids: pa.Array | None = None
        self.nodes = 0  # > 0: stages 1 and 2 in Ray tasks over up to this many nodes

    def keys(self, source: Source) -> Keys:
        """Stage 1: every row's id, band keys, whether it has any shingle, and its
        sketch (on Ray: one task per group of data files, `podium.signals.on_ray`)."""
        if self.nodes:
            from podium.signals.on_ray import keys_on_ray  # Ray: only here

            return keys_on_ray(source, self.settings, self.nodes)
        settings = self.settings
        return joined_keys(
            mapped_in_threads(lambda turns: row_keys(turns, settings), source.turns()),
            settings,
            source.total,
        )

    def pairs(
        self, keys: npt.NDArray[np.uint64], valid: npt.NDArray[np.bool_], reporter: Reporter
    ) -> npt.NDArray[np.int64]:
        """Stage 2: candidate pairs, band by band (on Ray: the band keys shuffled by band,
        one task per group of bands; pairs are found within a band, so the same)."""
        if self.nodes:
            from podium.signals.on_ray import pairs_on_ray

            return pairs_on_ray(keys, valid, self.nodes, reporter)
        return candidate_pairs(keys, valid)

    def verified(
        self, store: ShingleStore, pairs: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Stage 3: the candidate pairs whose exact Jaccard reaches the threshold. The
        pairs go in groups touching at most `VERIFY_ROWS` rows, so the shingle sets held
        at once stay bounded however many rows have a candidate."""
        scores = np.zeros(len(pairs), np.float64)
        for group in pair_groups(pairs, VERIFY_ROWS):
            sets = store.sets(np.unique(pairs[group]))
            scores[group] = [jaccard(sets[int(a)], sets[int(b)]) for a, b in pairs[group]]
        keep = scores >= self.settings.threshold
        return pairs[keep], scores[keep].astype(np.float32)

    def shingle_store(self, source: Source, wanted: npt.NDArray[np.int64]) -> ShingleStore:
        """One scan: the shingle sets of the rows at `wanted` (sorted row indices), each
        batch's in a worker thread; held in memory if one group of `VERIFY_ROWS`, else
        written to a scratch file. Every later stage reads them there: the snapshot's
        text is read twice in all (signatures, these sets) whatever the groups."""
        k = self.settings.shingle

        def wanted_texts() -> Iterator[tuple[list[int], list[str]]]:
            base = 0
            for turns in source.turns():
                here = wanted[(wanted >= base) & (wanted < base + turns.rows)]
                if len(here):
                    if self._ids is not None and self._ids.take(pa.array(here)).to_pylist() != [
                        turns.ids[i - base] for i in here.tolist()
                    ]:  # stage 1 ran elsewhere (Ray): its row order must be this scan's
                        raise RuntimeError(
                            f"{source.table}@{source.snapshot_id} was read in another row "
                            "order than its signatures; run near-dup again without --nodes."
                        )
                    texts = turns.row_texts()
                    yield here.tolist(), [texts[i - base] for i in here]
                base += turns.rows

        store = ShingleStore(wanted, spill=len(wanted) > VERIFY_ROWS)
        if not len(wanted):  # no candidate: nothing to read
            return store
        try:
            for rows, found in mapped_in_threads(
                lambda item: (item[0], row_sets(item[1], k)), wanted_texts()
            ):
                store.add(rows, found)
        except BaseException:
            store.close()
            raise
        return store

    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        reporter.log("near-dup: signatures")
        ids, keys, valid, sketches = self.keys(source)
        self._ids = ids
        n = len(ids)
        self.counts["rows"] = n
        reporter.log("near-dup: buckets")
        pairs = self.pairs(keys, valid, reporter)
        del keys
        self.counts["candidates"] = len(pairs)
        pairs = likely_pairs(sketches, pairs, self.settings.threshold)
        del sketches
        self.counts["likely"] = len(pairs)
        reporter.log(f"near-dup: verifying {len(pairs)} candidate pairs")
        store = self.shingle_store(source, np.unique(pairs))
        try:
            pairs, _ = self.verified(store, pairs)
            self.counts["verified"] = len(pairs)
            links = UnionFind(n)
            for a, b in pairs.tolist():
                links.union(a, b)
            rows = np.unique(pairs).astype(np.int64)
            del pairs
            reporter.log("near-dup: clusters (each member checked against its canonical)")
            found = self.split(store, components(rows, links.roots(rows), ids))
        finally:
            store.close()
        self._ids = None
        yield from found.batches(ids, self.schema, self.counts)

    def split(self, store: ShingleStore, parts: list[list[int]]) -> ScoredClusters:
        """Stage 4: each connected component split so that every member is within the
        threshold of its cluster's canonical (`split_at_canonical`), each row with its
        Jaccard to its canonical. Components go in groups of at most `VERIFY_ROWS` rows,
        so the sets held at once stay bounded."""
        found = ScoredClusters()
        for group in component_groups(parts, VERIFY_ROWS):
            sets = store.sets(np.unique(np.concatenate([np.array(p, np.int64) for p in group])))

            def similarity(a: int, b: int, sets: Sets = sets) -> float:
                return jaccard(sets[a], sets[b])

            for part in group:
                found.split(part, similarity, self.settings.threshold)
        return found

    def summary(self) -> dict[str, int]:
        return dict(self.counts)
