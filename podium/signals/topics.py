"""Topics: two levels over the rows' embeddings. k-means (fitted on a sample, then
every row assigned) makes the clusters; Ward's agglomerative clustering of their
centroids groups them into categories. Each cluster's keywords (its most distinctive
words, c-TF-IDF over a sample of its rows) are stored with the signal as its provisional
title, until a model writes one."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.signals.map_settings import TopicsSettings
from podium.signals.signal import Source, TableSignal
from podium.signals.vectors import source_batches

PROP_TOPICS = "podium.signal.topics"  # JSON: one entry per cluster
PROP_TITLED = "podium.signal.topics.titled"  # JSON: the model and who ran it
SAMPLE_PER_CLUSTER = 50
WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass
class TwoLevels:
    """k-means fitted on a sample of the rows, and the category of each of its clusters."""

    kmeans: Any
    categories: npt.NDArray[np.int32]

    def assign(self, vectors: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """(cluster of each row, its distance to the cluster's centroid)."""
        clusters = np.empty(len(vectors), np.int32)
        distance = np.empty(len(vectors), np.float32)
        for start in range(0, len(vectors), 65536):
            d = self.kmeans.transform(vectors[start : start + 65536])
            clusters[start : start + 65536] = d.argmin(axis=1)
            distance[start : start + 65536] = d.min(axis=1)
        return clusters, distance


def fit_two_levels(sample: npt.NDArray[Any], rows: int, settings: TopicsSettings) -> TwoLevels:
    """Clusters (at most one per row of the `rows` there are) fitted on `sample`, and
    Ward's grouping of their centroids into categories."""
    from sklearn.cluster import AgglomerativeClustering, MiniBatchKMeans

    k = max(1, min(settings.clusters, rows, len(sample)))
    km = MiniBatchKMeans(n_clusters=k, random_state=settings.seed, n_init=3, batch_size=4096).fit(
        sample
    )
    c = max(1, min(settings.categories, k))
    if c == k:
        categories = np.arange(k, dtype=np.int32)
    elif c == 1:
        categories = np.zeros(k, np.int32)
    else:
        categories = AgglomerativeClustering(n_clusters=c, linkage="ward").fit_predict(
            km.cluster_centers_
        )
    return TwoLevels(km, categories.astype(np.int32))


def keywords(texts_by_cluster: dict[int, list[str]], top: int = 4) -> dict[int, list[str]]:
    """The words most frequent in a cluster relative to all clusters (c-TF-IDF)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    counts = {
        c: Counter(
            w.lower() for t in ts for w in WORD.findall(t) if w.lower() not in ENGLISH_STOP_WORDS
        )
        for c, ts in texts_by_cluster.items()
    }
    df = Counter(w for cnt in counts.values() for w in cnt)
    n = max(1, len(counts))
    out = {}
    for c, cnt in counts.items():
        total = sum(cnt.values()) or 1
        scored = sorted(cnt, key=lambda w: (-(cnt[w] / total) * np.log(1 + n / df[w]), w))
        out[c] = scored[:top]
    return out


class Topics(TableSignal[TopicsSettings]):
    name: ClassVar[str] = "topics"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "Categories and clusters over the rows' embeddings."
    schema: ClassVar[pa.Schema] = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("category", pa.int32()),
            pa.field("cluster", pa.int32()),
            pa.field("distance", pa.float32()),
        ]
    )

    def __init__(self, settings: TopicsSettings) -> None:
        super().__init__(settings)
        self.counts = {"rows": 0, "clusters": 0, "categories": 0}
        self.topics: list[dict[str, Any]] = []

    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        """k-means on a sample, then every row assigned a batch at a time: the vectors
        are read twice, never held all at once (the ids and cluster numbers are)."""
        found = source_batches(source)
        if not found.count:
            yield pa.RecordBatch.from_pylist([], schema=self.schema)
            return
        reporter.log(f"topics: fitting on a sample of {min(found.count, self.settings.fit_rows)}")
        levels = fit_two_levels(
            found.sample(self.settings.fit_rows, self.settings.seed), found.count, self.settings
        )
        reporter.log(f"topics: assigning {found.count} rows")
        ids: list[pa.Array] = []
        parts: list[npt.NDArray[Any]] = []
        for batch_ids, vectors in found.batches():
            clusters, distance = levels.assign(vectors)
            ids.append(batch_ids.cast(pa.string()))
            parts.append(clusters)
            yield pa.RecordBatch.from_arrays(
                [
                    ids[-1],
                    pa.array(levels.categories[clusters]),
                    pa.array(clusters),
                    pa.array(distance),
                ],
                schema=self.schema,
            )
        every = np.concatenate(parts)
        self.counts["rows"] = len(every)
        self.counts["clusters"] = int(len(np.unique(every)))
        self.counts["categories"] = int(len(np.unique(levels.categories[every])))
        self._describe(source, pa.concat_arrays(ids), every, levels.categories)

    def _describe(
        self,
        source: Source,
        ids: pa.Array,
        clusters: npt.NDArray[Any],
        categories: npt.NDArray[Any],
    ) -> None:
        rng = np.random.default_rng(self.settings.seed)
        sample: set[str] = set()
        for c in np.unique(clusters):
            rows = np.flatnonzero(clusters == c)
            take = (
                rows
                if len(rows) <= SAMPLE_PER_CLUSTER
                else rng.choice(rows, SAMPLE_PER_CLUSTER, False)
            )
            sample.update(ids.take(pa.array(take)).to_pylist())
        cluster_of = {
            i: int(c)
            for i, c in zip(ids.to_pylist(), clusters.tolist(), strict=True)
            if i in sample
        }
        texts: dict[int, list[str]] = {}
        for turns in source.turns():
            for row_id, text in zip(turns.ids, turns.row_texts(), strict=True):
                if row_id in sample:
                    texts.setdefault(cluster_of[row_id], []).append(text[:2000])
        words = keywords(texts)
        sizes = np.bincount(clusters, minlength=len(categories))
        self.topics = [
            {
                "cluster": int(c),
                "category": int(categories[c]),
                "rows": int(sizes[c]),
                "title": ", ".join(words.get(int(c), [])),
                "description": "",
                "keywords": words.get(int(c), []),
            }
            for c in range(len(categories))
            if sizes[c]
        ]

    def summary(self) -> dict[str, int]:
        return dict(self.counts)

    def after_write(self, written: Table) -> None:
        with written.transaction() as tx:
            tx.set_properties({PROP_TOPICS: json.dumps(self.topics, ensure_ascii=False)})


def _current_topics(table: str) -> Table:
    """`table`'s topics signal table, current for its snapshot, or the line that says
    how to make it."""
    from podium.signals.store import signal_status, signal_table_name
    from podium.store.catalog.catalog import full_name, load_or_none, load_table
    from podium.store.read.snapshots import resolve_snapshot

    loaded = load_table(full_name(table))
    stored = load_or_none(signal_table_name(full_name(table), "topics"))
    status = (
        signal_status(stored, loaded, resolve_snapshot(loaded, None), {"topics": Topics.version})
        if stored is not None
        else None
    )
    run = f"run `podium signals run {full_name(table)} --signal embedding,topics`"
    if stored is None or status is None:
        raise InvalidInput(f"{full_name(table)} has no topics; {run}.")
    if status.stale:
        raise InvalidInput(f"The topics of {full_name(table)} are stale ({status.stale}); {run}.")
    return stored


def stored_topics(table: str) -> list[dict[str, Any]]:
    """The topics of `table`'s current topics signal, biggest first."""
    stored = _current_topics(table)
    topics: list[dict[str, Any]] = json.loads(stored.properties.get(PROP_TOPICS) or "[]")
    return sorted(topics, key=lambda t: (-int(t["rows"]), int(t["cluster"])))


def set_topic_titles(table: str, titles: dict[int, dict[str, str]], model: str) -> None:
    """A model's titles and descriptions for clusters of `table`'s current topics (the
    keywords stay; a cluster without one keeps its title), in one properties commit."""
    stored = _current_topics(table)
    topics: list[dict[str, Any]] = json.loads(stored.properties.get(PROP_TOPICS) or "[]")
    from podium.store.state.users import acting_user

    for topic in topics:
        written = titles.get(int(topic["cluster"]))
        if written:
            topic.update(written, titled_by=model)
    author = {"model": model, "author": acting_user().name}
    with stored.transaction() as tx:
        tx.set_properties(
            {PROP_TOPICS: json.dumps(topics, ensure_ascii=False), PROP_TITLED: json.dumps(author)}
        )
