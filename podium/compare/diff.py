"""Word-level differences between answers, as HTML spans.

Each answer is shown against a reference answer: words it has that the reference
lacks are highlighted. Whitespace is kept as it was, so code and lists keep their
shape; everything is escaped before it becomes HTML.

The work is bounded, whatever the answers: the common start and end are cut off, words
that occur once in each answer and in the same order anchor the rest (the patience
diff), and only the gaps between anchors go to difflib, whose cost is the product of
the two gaps' lengths; once `CELL_BUDGET` of such products is spent, a gap left over is
marked changed as a whole. Two 6,000-word answers cost difflib 36M word pairs (a minute
of one core) and every rerun of the Compare page paid it again; the result is also
cached, since a page draws the same pair on every rerun.
"""

from __future__ import annotations

import bisect
import difflib
import html
import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(r"\s+|[^\s]+")
CHANGED_STYLE = "background-color:rgba(255,196,0,0.35);border-radius:2px"
CELL_BUDGET = 2_000_000  # word pairs difflib may compare for one answer
SMALL_GAP = 20_000  # gaps this small (in word pairs) go straight to difflib
ANCHOR_DEPTH = 3  # rounds of anchoring inside gaps (each round is linear)


@dataclass
class DiffWork:
    """What one diff cost: word pairs handed to difflib, and gaps too big for the rest
    of the budget (marked changed whole)."""

    cells: int = 0
    given_up: int = 0


def words(text: str) -> list[str]:
    """Words and the whitespace between them (joining them gives `text` back)."""
    return _TOKEN.findall(text)


def changed_words(
    text: str, reference: str, work: DiffWork | None = None
) -> list[tuple[str, bool]]:
    """(piece, changed) pieces of `text`; changed = not in `reference` at that place."""
    ours, theirs = words(text), words(reference)
    changed = _changed(theirs, ours, work if work is not None else DiffWork())
    pairs = zip(ours, changed, strict=True)
    return [(piece, flag and not piece.isspace()) for piece, flag in pairs]


def _changed(a: list[str], b: list[str], work: DiffWork) -> list[bool]:
    """For each word of `b`: whether it is outside the matched words of `a`."""
    changed = [False] * len(b)
    gaps = [(0, len(a), 0, len(b), 0)]
    while gaps:
        lo_a, hi_a, lo_b, hi_b, depth = gaps.pop()
        while lo_a < hi_a and lo_b < hi_b and a[lo_a] == b[lo_b]:
            lo_a, lo_b = lo_a + 1, lo_b + 1
        while lo_a < hi_a and lo_b < hi_b and a[hi_a - 1] == b[hi_b - 1]:
            hi_a, hi_b = hi_a - 1, hi_b - 1
        cells = (hi_a - lo_a) * (hi_b - lo_b)
        if lo_b == hi_b:
            continue
        if cells > SMALL_GAP and depth < ANCHOR_DEPTH:
            anchors = _anchors(a, lo_a, hi_a, b, lo_b, hi_b)
            if anchors:
                edges = [(lo_a - 1, lo_b - 1), *anchors, (hi_a, hi_b)]
                for (i0, j0), (i1, j1) in itertools.pairwise(edges):
                    gaps.append((i0 + 1, i1, j0 + 1, j1, depth + 1))
                continue
        if cells == 0 or work.cells + cells > CELL_BUDGET:
            changed[lo_b:hi_b] = [True] * (hi_b - lo_b)
            work.given_up += cells > 0
            continue
        work.cells += cells
        matcher = difflib.SequenceMatcher(a=a[lo_a:hi_a], b=b[lo_b:hi_b], autojunk=False)
        for tag, _, _, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                changed[lo_b + j1 : lo_b + j2] = [True] * (j2 - j1)
    return changed


def _anchors(
    a: list[str], lo_a: int, hi_a: int, b: list[str], lo_b: int, hi_b: int
) -> list[tuple[int, int]]:
    """Positions (i, j) of words that occur once in a[lo_a:hi_a] and once in
    b[lo_b:hi_b], the longest run of them in the same order in both."""
    count_a, count_b = Counter(a[lo_a:hi_a]), Counter(b[lo_b:hi_b])
    where_b = {b[j]: j for j in range(lo_b, hi_b) if count_b[b[j]] == 1}
    pairs = [
        (i, where_b[a[i]])
        for i in range(lo_a, hi_a)
        if count_a[a[i]] == 1 and a[i] in where_b and not a[i].isspace()
    ]
    # Longest increasing run of j (pairs are in order of i): patience sorting.
    tails: list[int] = []  # tails[k]: index into pairs of the smallest end of a run of k+1
    tail_js: list[int] = []  # that end's j, for bisect
    before = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tail_js, j)
        if k:
            before[n] = tails[k - 1]
        if k == len(tails):
            tails.append(n)
            tail_js.append(j)
        else:
            tails[k], tail_js[k] = n, j
    run, n = [], tails[-1] if tails else -1
    while n >= 0:
        run.append(pairs[n])
        n = before[n]
    return run[::-1]


@lru_cache(maxsize=64)
def diff_html(text: str, reference: str | None) -> str:
    """`text` as HTML with words that differ from `reference` highlighted."""
    if reference is None:
        return _block(html.escape(text))
    out = []
    for piece, changed in changed_words(text, reference):
        escaped = html.escape(piece)
        out.append(
            f'<span class="podium-diff" style="{CHANGED_STYLE}">{escaped}</span>'
            if changed
            else escaped
        )
    return _block("".join(out))


def side_by_side_html(texts: Sequence[str]) -> list[str]:
    """HTML for each answer: the first against the second, the others against the first."""
    if len(texts) < 2:
        return [diff_html(t, None) for t in texts]
    return [diff_html(t, texts[1] if i == 0 else texts[0]) for i, t in enumerate(texts)]


def _block(inner: str) -> str:
    return (
        '<div class="podium-answer" style="white-space:pre-wrap;font-family:monospace;'
        f'font-size:0.9em">{inner}</div>'
    )
