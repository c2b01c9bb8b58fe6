"""Word-level highlighting between answers."""

from __future__ import annotations

import random

from podium.compare.diff import (
    CELL_BUDGET,
    DiffWork,
    changed_words,
    diff_html,
    side_by_side_html,
)


def test_only_changed_words_are_marked_and_text_is_kept() -> None:
    pieces = changed_words("the sky is blue today", "the sky is grey")
    assert "".join(p for p, _ in pieces) == "the sky is blue today"
    assert [p for p, changed in pieces if changed] == ["blue", "today"]


def test_html_is_escaped_and_spans_mark_differences() -> None:
    out = diff_html("<b>x</b> & y", "<b>x</b> & z")
    assert "&lt;b&gt;x&lt;/b&gt;" in out and "<b>" not in out
    assert out.count('class="podium-diff"') == 1 and ">y</span>" in out
    cols = side_by_side_html(["a b", "a c", "a b"])
    assert ">b</span>" in cols[0] and ">c</span>" in cols[1] and "podium-diff" not in cols[2]


def _answer(seed: int, n: int = 6_000) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3_000)] + ["the", "a", "of", "and"] * 200
    return [rng.choice(vocabulary) for _ in range(n)]


def test_two_long_answers_cost_a_bounded_diff() -> None:
    """Issue 44, point 15: two 6,000-word answers cost difflib 36M word pairs (69 s a
    view of the Compare page)."""
    reference = _answer(1)
    edited = list(reference)
    for k in range(0, len(edited), 50):
        edited[k] = f"NEW{k}"
    work = DiffWork()
    pieces = changed_words(" ".join(edited), " ".join(reference), work)
    assert "".join(p for p, _ in pieces) == " ".join(edited)
    assert [p for p, changed in pieces if changed] == [w for w in edited if w.startswith("NEW")]
    assert work.cells <= 10_000 and work.given_up == 0  # anchors left small gaps

    unrelated = DiffWork()
    pieces = changed_words(" ".join(_answer(2)), " ".join(reference), unrelated)
    assert "".join(p for p, _ in pieces) == " ".join(_answer(2))
    assert 0 < unrelated.cells <= CELL_BUDGET


def test_answers_without_anchors_stop_at_the_budget() -> None:
    ours, theirs = "a b " * 3_000, "b a " * 3_000  # no word occurs once: nothing anchors
    work = DiffWork()
    pieces = changed_words(ours, theirs, work)
    assert "".join(p for p, _ in pieces) == ours
    assert work.cells <= CELL_BUDGET and work.given_up == 1
    assert all(changed for p, changed in pieces if not p.isspace())


def test_a_pair_drawn_again_is_not_diffed_again() -> None:
    texts = [" ".join(_answer(3, 500)), " ".join(_answer(4, 500))]
    first = side_by_side_html(texts)
    hits = diff_html.cache_info().hits
    assert side_by_side_html(texts) == first
    assert diff_html.cache_info().hits == hits + 2
