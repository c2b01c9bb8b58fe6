"""The near-duplicate stages on their own: buckets, candidate pairs, clusters."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest

from podium.signals.clusters import UnionFind, clusters_from_groups
from podium.signals.minhash import (
    SMALL_BUCKET,
    band_keys,
    candidate_pairs,
    jaccard,
    shingle_sets,
    signatures,
)


def test_equal_texts_share_every_band_and_different_ones_none() -> None:
    a = "the cat sat on the mat and looked out of the window at the birds " * 4
    hashes, offsets = shingle_sets([a, a.upper(), "something else entirely, about boats " * 4], 5)
    keys = band_keys(signatures(hashes, offsets, 112, 1), 16)
    assert (keys[0] == keys[1]).all()
    assert not (keys[0] == keys[2]).any()


def test_a_big_bucket_links_every_member_without_all_pairs() -> None:
    size = SMALL_BUCKET * 4
    keys = np.zeros((size + 2, 1), np.uint64)
    keys[-2:, 0] = [7, 7]  # one more bucket of two
    valid = np.ones(size + 2, bool)
    valid[3] = False  # a row without shingles is never a candidate
    pairs = candidate_pairs(keys, valid)
    assert len(pairs) < (size - 1) * (size - 2) // 2
    links = UnionFind(size + 2)
    for a, b in pairs.tolist():
        links.union(a, b)
    roots = {links.find(i) for i in range(size) if i != 3}
    assert len(roots) == 1 and links.find(3) == 3
    assert [size, size + 1] in pairs.tolist()


def test_the_canonical_row_is_the_smallest_id_whatever_the_order() -> None:
    ids = pa.array(["b", "a", "d", "c", "e"])
    rows = np.array([0, 1, 2, 3], np.int64)
    groups = np.array([5, 5, 9, 9], np.int64)
    ((found, canonical, size, first),) = list(clusters_from_groups(rows, groups, ids))
    got = {
        ids[int(r)].as_py(): (c, int(s), bool(f))
        for r, c, s, f in zip(found, canonical.to_pylist(), size, first, strict=True)
    }
    assert got == {
        "a": ("a", 2, True),
        "b": ("a", 2, False),
        "c": ("c", 2, True),
        "d": ("c", 2, False),
    }


def test_exact_jaccard() -> None:
    a = np.array([1, 2, 3, 4], np.uint64)
    b = np.array([3, 4, 5], np.uint64)
    assert jaccard(a, b) == 2 / 5


def test_pair_groups_bound_the_rows_each_verification_scan_holds() -> None:
    from podium.signals.near_dup import pair_groups

    pairs = np.array([[0, 1], [0, 2], [3, 4], [5, 6], [5, 7]], np.int64)
    groups = pair_groups(pairs, 3)
    assert [g.tolist() for g in groups] == [[0, 1], [2], [3, 4]]
    assert all(len(np.unique(pairs[g])) <= 3 for g in groups)
    assert pair_groups(np.zeros((0, 2), np.int64), 3) == []


def test_a_chain_of_near_copies_is_split_so_every_member_is_near_its_canonical(
    podium_home: object,
) -> None:
    """A~B and B~C but not A~C: union-find put all three in one cluster, so keeping one
    removed C, a row that shares little with the one kept. Each member is now checked
    against its canonical: A keeps B, and C is in no cluster of A's."""
    import random

    from podium.signals.job import SignalsConfig, compute_signals
    from podium.store.read.read import read_small
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    rng = random.Random(3)
    words = [f"w{rng.randrange(10**6)}" for _ in range(400)]
    a = " ".join(words)
    x = [f"x{rng.randrange(10**6)}" for _ in range(35)]
    b = " ".join(words[35:] + x)
    c = " ".join(words[70:] + x + [f"y{rng.randrange(10**6)}" for _ in range(35)])
    texts = {"r1": a, "r2": b, "r3": c}
    hashes, offsets = shingle_sets(list(texts.values()), 5)
    sets = [np.unique(hashes[offsets[i] : offsets[i + 1]]) for i in range(3)]
    assert jaccard(sets[0], sets[1]) >= 0.8 and jaccard(sets[1], sets[2]) >= 0.8
    assert jaccard(sets[0], sets[2]) < 0.8
    rows = [{"id": k, "messages": [{"role": "user", "content": v}]} for k, v in texts.items()]
    batch = pa.RecordBatch.from_pylist(rows, schema=SFT_ARROW_SCHEMA)
    write_batches("team.chain", iter([batch]), schema=SFT_SCHEMA)
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "team.chain"}, "signals": ["near-dup"], "near_dup": {"bands": 56}}
        )
    )
    got = read_small("team.chain__sig_near_dup")[0].to_pylist()
    assert {r["id"]: (r["cluster"], r["is_canonical"], r["size"]) for r in got} == {
        "r1": ("r1", True, 2),
        "r2": ("r1", False, 2),
    }
    member = next(r for r in got if r["id"] == "r2")
    assert member["jaccard"] == pytest.approx(jaccard(sets[0], sets[1]), abs=0.01)


def test_split_at_canonical_starts_again_from_the_rows_left() -> None:
    from podium.signals.clusters import split_at_canonical

    close = {(0, 1), (1, 2), (2, 3)}  # a chain: 0~1, 1~2, 2~3

    def similarity(a: int, b: int) -> float:
        return 0.9 if (min(a, b), max(a, b)) in close else 0.1

    got = list(split_at_canonical([0, 1, 2, 3], similarity, 0.8))
    assert got == [(0, [(1, 0.9)]), (2, [(3, 0.9)])]


def test_sketches_estimate_jaccard_and_drop_only_far_candidates() -> None:
    from podium.signals.minhash import estimated_jaccard, likely_pairs, row_sets, sketch

    base = " ".join(f"word{i} is followed by another{i * 7 % 13}" for i in range(60))
    near = base.replace("word1 ", "w0rd1 ").replace("word2 ", "w0rd2 ")
    far = " ".join(f"other{i} comes before thing{i * 5 % 11}" for i in range(60))
    texts = [base, near, far]
    hashes, offsets = shingle_sets(texts, 5)
    sketches = sketch(signatures(hashes, offsets, 112, 1))
    sets = row_sets(texts, 5)
    pairs = np.array([[0, 1], [0, 2]], np.int64)
    exact = [jaccard(sets[a], sets[b]) for a, b in pairs.tolist()]
    estimate = estimated_jaccard(sketches, pairs)
    assert exact[0] >= 0.8 and exact[1] < 0.3
    assert abs(estimate - exact).max() < 0.15
    assert likely_pairs(sketches, pairs, 0.8).tolist() == [[0, 1]]


def test_row_sets_are_each_texts_sorted_unique_top_bits() -> None:
    from podium.signals.minhash import row_sets

    texts = ["abcdefgh abcdefgh", "", "xyz", "the same text twice, the same text twice"]
    hashes, offsets = shingle_sets(texts, 5)
    expected = [
        np.unique((hashes[offsets[i] : offsets[i + 1]] >> np.uint64(32)).astype(np.uint32))
        for i in range(len(texts))
    ]
    found = row_sets(texts, 5)
    assert [f.tolist() for f in found] == [e.tolist() for e in expected]
    assert found[1].dtype == np.uint32 and len(found[1]) == 0


def test_a_map_in_threads_keeps_order_and_reads_ahead_only_a_little() -> None:
    from podium.signals.in_threads import mapped_in_threads

    taken: list[int] = []

    def stream() -> Iterator[int]:
        for i in range(100):
            taken.append(i)
            yield i

    out = mapped_in_threads(lambda i: i * i, stream(), workers=2)
    assert next(out) == 0 and len(taken) <= 2
    assert list(out) == [i * i for i in range(1, 100)]


def test_joined_keys_hold_the_run_once_not_twice() -> None:
    """Given the snapshot's row count, the batches are copied into arrays made at that
    size as they come: joining them by concatenation held every key twice at its end
    (near-dup's peak grew ~570 bytes a row: past 2 GB before 10M rows)."""
    import tracemalloc

    from podium.signals.minhash import joined_keys
    from podium.signals.settings import NearDupSettings

    settings = NearDupSettings()
    batch, batches = 2000, 20
    rng = np.random.default_rng(0)

    def parts() -> Iterator[tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]]:
        for b in range(batches):
            ids = pa.array([f"row-{b * batch + i}" for i in range(batch)], pa.string())
            keys = rng.integers(0, 2**63, (batch, settings.bands), dtype=np.uint64)
            sketches = rng.integers(0, 256, (batch, settings.num_perm), dtype=np.uint8)
            yield ids, keys, np.ones(batch, bool), sketches

    rows = batch * batches
    held = rows * (settings.bands * 8 + settings.num_perm + 1)
    tracemalloc.start()
    try:
        ids, keys, valid, sketches = joined_keys(parts(), settings, rows)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(ids) == len(keys) == len(valid) == len(sketches) == rows
    assert ids[rows - 1].as_py() == f"row-{rows - 1}"
    # the joined arrays, one batch in flight and Python's own: well under twice the run
    assert peak < 1.3 * held, (peak, held)

    with pytest.raises(RuntimeError, match="more rows than the snapshot's"):
        joined_keys(parts(), settings, rows - 1)
