"""The stages of near-duplicate detection, after datatrove's: signatures (a map over
rows), buckets (rows whose band of the signature is equal), candidate pairs, and their
exact Jaccard. Each stage is a function of its input arrays only, so it can run apart
(on another process or node, partitioned by band) and give the same result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.signals.settings import NearDupSettings
from podium.signals.text_hashing import code_points, shingles
from podium.signals.turns import Turns

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
SMALL_BUCKET = 8  # buckets up to this size give every pair; bigger ones a star and a chain

_LANE = np.array(
    [0x9E3779B97F4A7C15 ^ (i * 0xBF58476D1CE4E5B9 % (1 << 64)) | 1 for i in range(1, 65)],
    dtype=np.uint64,
)


def shingle_sets(texts: Sequence[str], k: int) -> tuple[U64, I64]:
    """Every text's character k-gram hashes (flat) and the offsets of each text's run."""
    return shingles(code_points(texts), k)


def row_sets(texts: Sequence[str], k: int) -> list[npt.NDArray[np.uint32]]:
    """Each text's set of shingles, sorted: the top 32 bits of each hash (half the
    memory; two of a row's ~1,000 shingles share 32 bits by chance once in ~4,000 pairs,
    a Jaccard off by 0.001). One sort for the whole batch, keyed by row, instead of one
    per text."""
    hashes, offsets = shingle_sets(texts, k)
    rows = np.repeat(np.arange(len(texts), dtype=np.uint64), np.diff(offsets))
    keyed = np.unique((rows << np.uint64(32)) | (hashes >> np.uint64(32)))
    cuts = np.searchsorted(keyed >> np.uint64(32), np.arange(1, len(texts), dtype=np.uint64))
    low = (keyed & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return np.split(low, cuts)


def signatures(hashes: U64, offsets: I64, num_perm: int, seed: int) -> npt.NDArray[np.uint32]:
    """MinHash signatures (rows x num_perm) by rensa; a row without shingles gets zeros."""
    from rensa import RMinHash

    rows = len(offsets) - 1
    if rows == 0:
        return np.zeros((0, num_perm), np.uint32)
    matrix = RMinHash.digest_matrix_from_flat_token_hashes(
        hashes, offsets.astype(np.uint64), num_perm, seed
    )
    return np.asarray(matrix.to_rows(), dtype=np.uint32).reshape(rows, num_perm)


def band_keys(sigs: npt.NDArray[np.uint32], bands: int) -> U64:
    """One 64-bit key per row and band: equal bands give equal keys."""
    rows, perm = sigs.shape
    per_band = perm // bands
    values = sigs.reshape(rows, bands, per_band).astype(np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        mixed: U64 = (values * _LANE[:per_band]).sum(axis=2, dtype=np.uint64)
        mixed ^= mixed >> np.uint64(29)
        mixed *= np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(32)
    return mixed


def candidate_pairs(keys: U64, valid: npt.NDArray[np.bool_]) -> I64:
    """Pairs (i < j) of valid rows that share a bucket in any band, as an (m, 2) array
    without repeats, sorted. A bucket of more than SMALL_BUCKET rows links each row to
    the first and to the next (enough to connect a cluster, without n^2 pairs for a
    boilerplate text repeated thousands of times). Each band's pairs are merged into the
    unique pairs so far as it is done: holding every band's pairs until the end was
    ~bands times the unique pairs (7.4 GB of near-dup's 8.1 GB peak at 10M rows)."""
    rows = np.flatnonzero(valid).astype(np.int64)
    found = PairUnion(len(keys))
    for band in range(keys.shape[1]):
        found.add(_band_pairs(keys[rows, band], rows))
    return found.pairs()


def _band_pairs(column: U64, rows: I64) -> list[I64]:
    """The pairs of `rows` that share a key in one band's `column`."""
    order = np.argsort(column, kind="stable")
    sorted_keys = column[order]
    sorted_rows = rows[order]
    same = sorted_keys[1:] == sorted_keys[:-1]
    if not same.any():
        return []
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    sizes = np.diff(np.concatenate((starts, [len(sorted_keys)])))
    twos = starts[sizes == 2]  # the usual bucket: one pair, found without a loop
    found = [np.stack((sorted_rows[twos], sorted_rows[twos + 1]), axis=1)]
    more = sizes > 2
    for start, size in zip(starts[more].tolist(), sizes[more].tolist(), strict=True):
        members = sorted_rows[start : start + size]
        if size <= SMALL_BUCKET:
            a, b = np.triu_indices(size, 1)
            found.append(np.stack((members[a], members[b]), axis=1))
        else:
            star = np.stack((np.full(size - 1, members[0]), members[1:]), axis=1)
            chain = np.stack((members[1:-1], members[2:]), axis=1)
            found.append(np.concatenate((star, chain)))
    return found


class PairUnion:
    """The unique pairs of rows in [0, rows) seen so far, each held once as the int64
    i * rows + j (i < j) in one sorted array: a part's pairs are merged in as they come,
    so the peak is ~3 times the unique pairs (the union, the part and their merge), not
    the sum of the parts."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.codes = np.zeros(0, np.int64)

    def add(self, parts: Iterable[I64]) -> None:
        """Merge (m, 2) arrays of pairs in, in either order within a pair."""
        chunks = [p for p in parts if len(p)]
        if not chunks:
            return
        pairs = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
        low, high = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
        del pairs, chunks
        codes = low * np.int64(self.rows) + high
        del low, high
        codes.sort()
        # two sorted runs: timsort ("stable" for int64) merges them in one linear pass
        merged = np.concatenate((self.codes, codes))
        del codes
        self.codes = np.empty(0, np.int64)
        merged.sort(kind="stable")
        self.codes = merged[np.concatenate(([True], merged[1:] != merged[:-1]))]

    def pairs(self) -> I64:
        """The union as an (m, 2) array, sorted by first then second row."""
        return np.stack(np.divmod(self.codes, np.int64(self.rows)), axis=1)


def jaccard(a: npt.NDArray[np.unsignedinteger], b: npt.NDArray[np.unsignedinteger]) -> float:
    """Exact Jaccard of two sorted, unique hash sets."""
    if len(a) == 0 and len(b) == 0:
        return 1.0
    both = len(np.intersect1d(a, b, assume_unique=True))
    return both / (len(a) + len(b) - both)


# A candidate pair whose signatures' estimate is this far below the threshold is dropped
# before its exact Jaccard is computed: with 112 one-byte minima the estimate's standard
# deviation is ~0.04 at Jaccard 0.8, so 0.15 is ~4 of them (a true pair is lost about
# once in 30,000), and most LSH candidates (band collisions of pairs at Jaccard 0.3-0.6)
# never cost a read of their rows.
SKETCH_MARGIN = 0.15


def sketch(sigs: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint8]:
    """The low byte of each MinHash value (b-bit MinHash): 1 byte a permutation, enough
    to estimate a pair's Jaccard (`estimated_jaccard`)."""
    return (sigs & np.uint32(0xFF)).astype(np.uint8)


def estimated_jaccard(sketches: npt.NDArray[np.uint8], pairs: I64) -> npt.NDArray[np.float64]:
    """Each pair's Jaccard from its rows' sketches: one-byte minima agree with probability
    J + (1 - J) / 256, so J = (agree - 1/256) / (1 - 1/256)."""
    if len(pairs) == 0:
        return np.zeros(0, np.float64)
    agree = np.empty(len(pairs), np.float64)
    for at in range(0, len(pairs), 65536):  # a bounded temporary per chunk of pairs
        part = pairs[at : at + 65536]
        same = sketches[part[:, 0]] == sketches[part[:, 1]]
        agree[at : at + 65536] = same.mean(axis=1)
    chance = 1 / 256
    return (agree - chance) / (1 - chance)


def likely_pairs(sketches: npt.NDArray[np.uint8], pairs: I64, threshold: float) -> I64:
    """The candidate pairs whose estimated Jaccard is within SKETCH_MARGIN of the threshold."""
    return pairs[estimated_jaccard(sketches, pairs) >= threshold - SKETCH_MARGIN]


Keys = tuple[pa.Array, npt.NDArray[np.uint64], npt.NDArray[np.bool_], npt.NDArray[np.uint8]]


def row_keys(turns: Turns, settings: NearDupSettings) -> Keys:
    """One batch's ids, band keys, whether each row has any shingle, and its sketch."""
    hashes, offsets = shingle_sets(turns.row_texts(), settings.shingle)
    sigs = signatures(hashes, offsets, settings.num_perm, settings.seed)
    ids = pa.array(turns.ids, pa.string())
    return ids, band_keys(sigs, settings.bands), np.diff(offsets) > 0, sketch(sigs)


def joined_keys(parts: Iterable[Keys], settings: NearDupSettings, total: int | None = None) -> Keys:
    """The batches' keys as one run, in row order. Given the snapshot's row count, each
    batch is copied into arrays made once at that size: concatenating the batches held
    every key twice at the end (~265 bytes a row: 2.6 GB more at 10M rows)."""
    if total is None:
        return _concatenated(list(parts), settings)
    ids: list[pa.Array] = []
    keys = np.empty((total, settings.bands), np.uint64)
    valid = np.empty(total, bool)
    sketches = np.empty((total, settings.num_perm), np.uint8)
    at = 0
    for i, k, v, s in parts:
        end = at + len(v)
        if end > total:
            raise RuntimeError(
                f"near-dup read more rows than the snapshot's {total}; run the signal again."
            )
        ids.append(i)
        keys[at:end], valid[at:end], sketches[at:end] = k, v, s
        at = end
    joined = pa.concat_arrays(ids) if ids else pa.array([], pa.string())
    return joined, keys[:at], valid[:at], sketches[:at]


def _concatenated(parts: list[Keys], settings: NearDupSettings) -> Keys:
    if not parts:
        empty = np.zeros((0, settings.bands), np.uint64)
        none = np.zeros((0, settings.num_perm), np.uint8)
        return pa.array([], pa.string()), empty, np.zeros(0, bool), none
    ids, keys, valid, sketches = zip(*parts, strict=True)
    return (
        pa.concat_arrays(list(ids)),
        np.concatenate(keys),
        np.concatenate(valid),
        np.concatenate(sketches),
    )
