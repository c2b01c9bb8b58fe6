"""Hashes of words, word n-grams and character shingles for a whole batch of texts at once.

Near-duplicates and contamination look at every word of every row: a Python loop per
word costs seconds per 100k rows, so a batch is turned into one array of code points
(UTF-32) and hashed with numpy. A segment's hash is a polynomial over its code points
taken from prefix sums, exact in uint64 arithmetic (wrapping mod 2^64; the base is odd,
so it has an inverse): equal segments get equal hashes whatever their position.

Hashes are the same in every process and on every machine (no Python `hash()`), so
stages run apart (on Ray, or a re-run) agree.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

_BASE = np.uint64(0x100000001B3)  # odd: invertible mod 2^64
_BASE_INV = np.uint64(pow(int(_BASE), -1, 1 << 64))
_MIX = np.uint64(0x9E3779B97F4A7C15)
SEPARATOR = 0  # code point between two texts of a batch: never a word character
_BMP = 0x10000


@functools.cache
def _tables() -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Lower-case mapping, word characters and white space of the Basic Multilingual
    Plane, once per process (characters outside it are kept as they are, not words)."""
    lower = np.arange(_BMP, dtype=np.uint32)
    word = np.zeros(_BMP, dtype=np.bool_)
    space = np.zeros(_BMP, dtype=np.bool_)
    for cp in range(_BMP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        low = ch.lower()
        if len(low) == 1:
            lower[cp] = ord(low)
        word[cp] = ch.isalnum() or ch == "_"
        space[cp] = ch.isspace()
    word[SEPARATOR] = space[SEPARATOR] = False
    return lower, word, space


@dataclass(frozen=True)
class CodePoints:
    """The texts of a batch as one array of lower-cased code points, each text followed
    by SEPARATOR; `starts[i]` is where text i begins."""

    points: npt.NDArray[np.uint32]
    starts: I64

    @property
    def count(self) -> int:
        return len(self.starts)


def code_points(texts: Sequence[str]) -> CodePoints:
    joined = "\x00".join(texts) + "\x00"
    raw = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    lower, _, _ = _tables()
    points = raw.copy()
    in_bmp = points < _BMP
    points[in_bmp] = lower[points[in_bmp]]
    return CodePoints(points, starts)


_POWERS: list[tuple[U64, U64]] = []


def _powers(n: int) -> tuple[U64, U64]:
    """BASE^i and BASE^-i for i in [0, n), kept for the next batch (at least 1M long)."""
    if _POWERS and len(_POWERS[0][0]) >= n:
        up, down = _POWERS[0]
        return up[:n], down[:n]
    size = max(n, 1 << 20)
    with np.errstate(over="ignore"):
        up = np.cumprod(np.full(size, _BASE, dtype=np.uint64), dtype=np.uint64)
        down = np.cumprod(np.full(size, _BASE_INV, dtype=np.uint64), dtype=np.uint64)
    one = np.ones(1, dtype=np.uint64)
    _POWERS[:] = [(np.concatenate((one, up[:-1])), np.concatenate((one, down[:-1])))]
    return _POWERS[0][0][:n], _POWERS[0][1][:n]


def segment_hashes(values: U64, starts: I64, ends: I64) -> U64:
    """Hash of values[s:e] for each (s, e): the same for equal segments anywhere."""
    n = len(values)
    up, down = _powers(n + 1)
    with np.errstate(over="ignore"):
        prefix = np.concatenate(
            (np.zeros(1, np.uint64), np.cumsum((values + np.uint64(1)) * up[:n], dtype=np.uint64))
        )
        raw = (prefix[ends] - prefix[starts]) * down[starts]
        lengths = (ends - starts).astype(np.uint64)
        return _finish(raw ^ (lengths * _MIX))


def _finish(h: U64) -> U64:
    """A 64-bit finaliser (splitmix64), so nearby inputs give unrelated hashes."""
    with np.errstate(over="ignore"):
        h = h ^ (h >> np.uint64(30))
        h = h * np.uint64(0xBF58476D1CE4E5B9)
        h = h ^ (h >> np.uint64(27))
        h = h * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


@dataclass(frozen=True)
class Words:
    """Every word of a batch: its hash, the text it belongs to, and its character span
    in that text."""

    hashes: U64
    text: I64
    start: I64
    end: I64


def words(cps: CodePoints) -> Words:
    _, word_table, _ = _tables()
    pts = cps.points
    is_word = np.zeros(len(pts), dtype=np.bool_)
    in_bmp = pts < _BMP
    is_word[in_bmp] = word_table[pts[in_bmp]]
    edges = np.diff(np.concatenate(([False], is_word, [False])).astype(np.int8))
    starts = np.flatnonzero(edges == 1).astype(np.int64)
    ends = np.flatnonzero(edges == -1).astype(np.int64)
    hashes = segment_hashes(pts.astype(np.uint64), starts, ends)
    text = np.searchsorted(cps.starts, starts, side="right").astype(np.int64) - 1
    return Words(hashes, text, starts - cps.starts[text], ends - cps.starts[text])


def word_ngrams(found: Words, n: int) -> tuple[U64, I64]:
    """Hashes of every run of `n` consecutive words inside one text, and the index of
    each run's first word."""
    count = len(found.hashes) - n + 1
    if count <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    first = np.arange(count, dtype=np.int64)
    same_text = found.text[first] == found.text[first + n - 1]
    first = first[same_text]
    return segment_hashes(found.hashes, first, first + n), first


def shingles(cps: CodePoints, k: int) -> tuple[U64, I64]:
    """Character k-gram hashes of each text after white space is collapsed to one space
    and trimmed (so re-wrapped text shingles the same), grouped by text: hashes and
    the offsets where each text's run starts and ends (len = texts + 1). A text shorter
    than k characters has none."""
    _, _, space_table = _tables()
    pts = cps.points
    is_space = np.zeros(len(pts), dtype=np.bool_)
    in_bmp = pts < _BMP
    is_space[in_bmp] = space_table[pts[in_bmp]]
    is_sep = pts == SEPARATOR
    prev_space = np.concatenate(([True], is_space[:-1] | is_sep[:-1]))
    # drop a space that follows a space or a text's start; what is left of a run of
    # white space is one character, dropped too when a separator (a text's end) follows
    keep = ~(is_space & prev_space)
    kept = pts[keep].astype(np.uint64)
    space_left = is_space[keep]
    kept[space_left] = 32
    before_end = space_left & np.concatenate((kept[1:] == SEPARATOR, [False]))
    kept = kept[~before_end]
    sep_at = np.flatnonzero(kept == SEPARATOR).astype(np.int64)
    text_starts = np.concatenate(([0], sep_at[:-1] + 1)).astype(np.int64)
    lengths = sep_at - text_starts
    per_text = np.maximum(lengths - k + 1, 0)
    offsets = np.concatenate(([0], np.cumsum(per_text))).astype(np.int64)
    firsts = np.repeat(text_starts - offsets[:-1], per_text) + np.arange(offsets[-1])
    hashes = segment_hashes(kept, firsts, firsts + k)
    return hashes, offsets
