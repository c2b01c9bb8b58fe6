"""Word-level highlighting between answers."""

from __future__ import annotations

from podium.compare.diff import changed_words, diff_html, side_by_side_html


def test_only_changed_words_are_marked_and_text_is_kept():
    pieces = changed_words("the sky is blue today", "the sky is grey")
    assert "".join(p for p, _ in pieces) == "the sky is blue today"
    assert [p for p, changed in pieces if changed] == ["blue", "today"]


def test_html_is_escaped_and_spans_mark_differences():
    out = diff_html("<b>x</b> & y", "<b>x</b> & z")
    assert "&lt;b&gt;x&lt;/b&gt;" in out and "<b>" not in out
    assert out.count('class="podium-diff"') == 1 and ">y</span>" in out
    cols = side_by_side_html(["a b", "a c", "a b"])
    assert ">b</span>" in cols[0] and ">c</span>" in cols[1] and "podium-diff" not in cols[2]
