"""Which texts of a batch a private-data pattern may match, asked once per batch: the
texts joined and searched with `str.find` at C speed, and runs of digits, capitals or
colons found with numpy over the code points, so a costly pattern runs only on the
texts that pass its trigger (`podium.signals.private_patterns`)."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

SEPARATOR = "\x00"  # between the texts of a batch, joined to be searched at once


@dataclass(frozen=True)
class Batch:
    """A batch's texts joined by SEPARATOR, where each starts, and (made when asked) the
    same in lower case: a substring or pattern is searched once over the batch, at C
    speed, instead of once per text in Python (those calls were 60% of the signal's
    time)."""

    texts: list[str]
    joined: str
    starts: list[int]

    @classmethod
    def of(cls, texts: Sequence[str | None]) -> Batch:
        strings = [t or "" for t in texts]
        starts, at = [], 0
        for text in strings:
            starts.append(at)
            at += len(text) + 1
        # a SEPARATOR inside a text becomes a space (same length, so offsets hold) in the
        # joined copy only: the patterns run on the texts themselves
        joined = SEPARATOR.join(t.replace(SEPARATOR, " ") for t in strings)
        return cls(strings, joined, starts)

    @functools.cached_property
    def lower(self) -> str:
        return self.joined.lower()  # same length: str.lower keeps SEPARATOR and offsets

    @functools.cached_property
    def codes(self) -> np.ndarray:
        """The joined texts' code points."""
        return np.frombuffer(self.joined.encode("utf-32-le"), "<u4")

    @functools.cached_property
    def digits(self) -> np.ndarray:
        """Where a `\\d` may match: ASCII digits, and any non-ASCII character (a
        trigger may pass a text the pattern then does not match, never the reverse)."""
        c = self.codes
        return ((c >= 48) & (c <= 57)) | (c > 127)

    def texts_at(self, positions: np.ndarray) -> set[int]:
        """The texts the characters at `positions` of the joined batch belong to."""
        where = np.searchsorted(np.asarray(self.starts), positions, side="right") - 1
        return set(np.unique(where).tolist())

    def holding(self, found: Callable[[int], int]) -> set[int]:
        """The texts in which `found(pos)` (the next hit at or after pos, -1: none) hits."""
        out: set[int] = set()
        pos = 0
        while (hit := found(pos)) >= 0:
            i = bisect.bisect_right(self.starts, hit) - 1
            out.add(i)
            if i + 1 == len(self.starts):
                break
            pos = self.starts[i + 1]
        return out


@dataclass(frozen=True)
class Trigger:
    """What a text must hold before a detector's pattern runs on it (some patterns cost
    50-100 us per KiB of text): any of `any_of` (or of `any_case`, in any case), a run of
    characters of `shape` (see SHAPES) or `colons` and more ':', and all of `all_of`;
    nothing named: every text."""

    any_of: tuple[str, ...] = ()
    any_case: tuple[str, ...] = ()
    shape: str | None = None
    colons: int | None = None
    all_of: tuple[str, ...] = ()

    def passing(self, batch: Batch) -> list[int]:
        """The indexes of the texts of `batch` that pass, in order."""
        if not (self.any_of or self.any_case or self.shape or self.colons):
            passed = set(range(len(batch.texts)))
        else:
            passed = set()
            for needle in self.any_of:
                passed |= batch.holding(functools.partial(batch.joined.find, needle))
            for needle in self.any_case:
                passed |= batch.holding(functools.partial(batch.lower.find, needle))
            if self.shape is not None:
                passed |= batch.texts_at(np.flatnonzero(SHAPES[self.shape](batch)))
            if self.colons is not None:
                where = np.searchsorted(
                    np.asarray(batch.starts), np.flatnonzero(batch.codes == 58), side="right"
                )
                counts = np.bincount(where - 1, minlength=len(batch.texts))
                passed |= set(np.flatnonzero(counts >= self.colons).tolist())
        for needle in self.all_of:
            passed &= batch.holding(functools.partial(batch.joined.find, needle))
        return sorted(passed)


def _digit_dot_digit(batch: Batch) -> np.ndarray:
    d = batch.digits
    found: np.ndarray = d[:-2] & (batch.codes[1:-1] == 46) & d[2:]
    return found


def _four_digits(batch: Batch) -> np.ndarray:
    d = batch.digits
    found: np.ndarray = d[:-3] & d[1:-2] & d[2:-1] & d[3:]
    return found


def _two_capitals_two_digits(batch: Batch) -> np.ndarray:
    c, d = batch.codes, batch.digits
    upper = (c >= 65) & (c <= 90)
    found: np.ndarray = upper[:-3] & upper[1:-2] & d[2:-1] & d[3:]
    return found


# Runs of characters a pattern's every match holds, found over the whole batch with
# numpy (Python's re steps through every character of a text for `\d\.\d`).
SHAPES: dict[str, Callable[[Batch], np.ndarray]] = {
    "digit": lambda batch: batch.digits,
    "digit.digit": _digit_dot_digit,
    "4 digits": _four_digits,
    "AAdd": _two_capitals_two_digits,
}
