"""Near-duplicates at scale: candidate pairs merged band by band, shingle sets made in
one scan and read back from a scratch file, with the clusters of a brute force."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from podium.signals.clusters import UnionFind, split_at_canonical
from podium.signals.minhash import SMALL_BUCKET, candidate_pairs, jaccard, row_sets


def pairs_by_hand(keys: np.ndarray, valid: np.ndarray) -> list[tuple[int, int]]:
    """`candidate_pairs`' rule, bucket by bucket in Python: every pair of a small
    bucket; a star on the first row and a chain for a big one."""
    found: set[tuple[int, int]] = set()
    for band in range(keys.shape[1]):
        buckets: dict[int, list[int]] = {}
        for row in np.flatnonzero(valid).tolist():
            buckets.setdefault(int(keys[row, band]), []).append(row)
        for members in buckets.values():
            if len(members) <= SMALL_BUCKET:
                found |= {(a, b) for i, a in enumerate(members) for b in members[i + 1 :]}
            else:
                found |= {(members[0], b) for b in members[1:]}
                found |= set(zip(members[1:-1], members[2:], strict=True))
    return sorted(found)


def test_candidate_pairs_are_every_bands_pairs_once_in_order() -> None:
    rng = np.random.default_rng(4)
    rows, bands = 3000, 6
    keys = rng.integers(0, 900, (rows, bands)).astype(np.uint64)  # buckets of 1 to ~12
    keys[100:140, 2] = 5  # one big bucket
    keys[:, 4] = keys[:, 1]  # a band whose pairs all repeat another's
    valid = rng.random(rows) > 0.05
    got = candidate_pairs(keys, valid)
    assert got.dtype == np.int64 and got.shape[1] == 2
    assert [tuple(p) for p in got.tolist()] == pairs_by_hand(keys, valid)
    assert candidate_pairs(keys[:, :0], valid).shape == (0, 2)


def test_candidate_pairs_hold_the_unique_pairs_not_every_bands() -> None:
    """Every band with the same 10k buckets of eight (280k pairs): the pairs of all 16
    bands held together before they were made unique peaked at 258 MB, 57 times the
    4.5 MB result (near-dup's 7.4 GB of its 8.1 GB peak at 10M rows); merged band by
    band, 18 MB."""
    rows, bands = 80_000, 16
    keys = np.repeat((np.arange(rows, dtype=np.uint64) // 8)[:, None], bands, axis=1)
    valid = np.ones(rows, bool)
    tracemalloc.start()
    try:
        pairs = candidate_pairs(keys, valid)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(pairs) == rows // 8 * 28 and pairs[-1].tolist() == [rows - 2, rows - 1]
    assert peak < 8 * pairs.nbytes, (peak, pairs.nbytes)


def test_a_shingle_store_gives_back_each_rows_set_in_memory_or_spilled(
    podium_home: Path,
) -> None:
    from podium.signals.shingle_store import ShingleStore

    texts = [f"text number {i} " * (i % 7 + 1) for i in range(40)]
    sets = row_sets(texts, 5)
    rows = np.arange(0, 80, 2, dtype=np.int64)  # row indices with gaps
    for spill in (False, True):
        store = ShingleStore(rows, spill)
        store.add(rows[:15].tolist(), sets[:15])
        store.add(rows[15:].tolist(), sets[15:])
        wanted = np.array([0, 6, 40, 78], np.int64)
        got = store.sets(wanted)
        assert {r: s.tolist() for r, s in got.items()} == {
            r: sets[r // 2].tolist() for r in wanted.tolist()
        }
        with pytest.raises(KeyError, match="no shingle set of row 3"):
            store.sets(np.array([2, 3], np.int64))
        store.close()
    store = ShingleStore(rows, spill=True)
    with pytest.raises(RuntimeError, match="out of order"):
        store.add([2], sets[:1])
    store.close()
    assert list((podium_home / "tmp" / "near-dup").iterdir()) == []  # an unnamed file


def near_copies(rng: random.Random) -> list[str]:
    """Clusters of near-copies (a few words replaced), a chain (A~B, B~C, not A~C),
    and rows near nothing."""
    texts: list[str] = []
    for _ in range(8):
        words = [f"w{rng.randrange(10**6)}" for _ in range(150)]
        texts.append(" ".join(words))
        for _ in range(rng.randrange(1, 4)):
            copy = list(words)
            for at in rng.sample(range(150), 4):
                copy[at] = f"e{rng.randrange(10**6)}"
            texts.append(" ".join(copy))
    words = [f"c{rng.randrange(10**6)}" for _ in range(400)]
    x = [f"x{rng.randrange(10**6)}" for _ in range(35)]
    texts += [" ".join(words), " ".join(words[35:] + x)]
    texts.append(" ".join(words[70:] + x + [f"y{rng.randrange(10**6)}" for _ in range(35)]))
    texts += [" ".join(f"s{rng.randrange(10**6)}" for _ in range(120)) for _ in range(10)]
    rng.shuffle(texts)
    return texts


def brute_force(ids: list[str], texts: list[str]) -> dict[str, tuple[str, bool, int, float]]:
    """Every pair's exact Jaccard, components, each split at its smallest id."""
    sets = row_sets(texts, 5)
    links = UnionFind(len(texts))
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            if jaccard(sets[a], sets[b]) >= 0.8:
                links.union(a, b)
    parts: dict[int, list[int]] = {}
    for row in sorted(range(len(texts)), key=lambda r: ids[r]):
        parts.setdefault(links.find(row), []).append(row)
    out: dict[str, tuple[str, bool, int, float]] = {}
    for part in parts.values():
        for canonical, joined in split_at_canonical(
            part, lambda a, b: jaccard(sets[a], sets[b]), 0.8
        ):
            size = len(joined) + 1
            out[ids[canonical]] = (ids[canonical], True, size, max(s for _, s in joined))
            for row, score in joined:
                out[ids[row]] = (ids[canonical], False, size, score)
    return out


def test_sets_spilled_once_give_the_brute_force_clusters_in_two_scans(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidate rows over many groups of `VERIFY_ROWS` (3 here): the snapshot's text is
    read twice (signatures, then every candidate's set into a scratch file), not once
    more per group, and the clusters, canonical rows and scores are a brute force's."""
    from podium.signals import job, near_dup, shingle_store
    from podium.signals.job import SignalsConfig, compute_signals
    from podium.store.read.read import read_small
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    texts = near_copies(random.Random(7))
    ids = [f"r{i:03d}" for i in range(len(texts))]
    rows = [
        {"id": i, "messages": [{"role": "user", "content": t}]}
        for i, t in zip(ids, texts, strict=True)
    ]
    batch = pa.RecordBatch.from_pylist(rows, schema=SFT_ARROW_SCHEMA)
    write_batches("team.near", iter([batch]), schema=SFT_SCHEMA)
    expected = brute_force(ids, texts)
    assert len(expected) > 20  # many candidate rows: many groups of 3

    scans: list[int] = []
    original_turns = job.SnapshotSource.turns

    def counted(self: job.SnapshotSource) -> Iterator[object]:
        scans.append(1)
        return original_turns(self)

    spilled: list[bool] = []
    original_init = shingle_store.ShingleStore.__init__

    def noted(self: shingle_store.ShingleStore, rows: np.ndarray, spill: bool) -> None:
        spilled.append(spill)
        original_init(self, rows, spill)

    monkeypatch.setattr(job.SnapshotSource, "turns", counted)
    monkeypatch.setattr(shingle_store.ShingleStore, "__init__", noted)
    monkeypatch.setattr(near_dup, "VERIFY_ROWS", 3)
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "team.near"}, "signals": ["near-dup"], "near_dup": {"bands": 56}}
        )
    )
    assert spilled == [True] and len(scans) == 2
    got = read_small("team.near__sig_near_dup")[0].to_pylist()
    assert {r["id"]: r["cluster"] for r in got} == {k: v[0] for k, v in expected.items()}
    for r in got:
        cluster, canonical, size, score = expected[r["id"]]
        assert (r["is_canonical"], r["size"]) == (canonical, size), r
        assert r["jaccard"] == pytest.approx(score, abs=1e-6), r
