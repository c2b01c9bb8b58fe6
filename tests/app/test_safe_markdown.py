"""Data and URL parameters become Markdown only through podium.app.safe_markdown
(issue 38, finding 7); long conversations are drawn in pages of turns (finding 11);
a failing page shows an error id, the log the traceback (finding 12)."""

from __future__ import annotations

import logging
from html import unescape

import pytest
from markdown_it import MarkdownIt

from podium.app.chat_markdown import render_turn, render_value, review_turn
from podium.app.rows.turns import TURNS_PER_PAGE, failure_lines, turn_page, turn_page_of
from podium.app.safe_markdown import WORD_JOINER, code_span, escape_markdown, neutralize_images
from podium.app.script_errors import log_script_error, user_message
from podium.app.views.build.model import describe
from podium.app.views.compare.model import badges
from podium.compare.checks import AnswerChecks
from podium.compare.table import Answer
from podium.errors import NotFound

PIXEL = "http://127.0.0.1:9/pixel.png"
HOSTILE = [
    f"![x]({PIXEL})",
    f"[![x]({PIXEL})](http://x.example)",
    f"<img src='{PIXEL}'>",
    f"![x][r]\n\n[r]: {PIXEL}",
    f"a` ![x]({PIXEL}) `b",
]
# CommonMark with raw HTML on: stricter than Streamlit, which draws HTML only when asked.
md = MarkdownIt("commonmark", {"html": True})


def html_of(markdown: str) -> str:
    return md.render(markdown)


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_draws_no_image_link_or_html(text: str) -> None:
    out = html_of(f"No sample {escape_markdown(text)} here")
    assert "<img" not in out and "<a " not in out
    assert out.count("<p>") == 1 or "\n\n" in text


@pytest.mark.parametrize("text", HOSTILE)
def test_code_span_cannot_be_closed_by_the_data(text: str) -> None:
    out = html_of(f"Job {code_span(text)}")
    assert "<img" not in out and "<a " not in out


def test_images_in_turns_become_text_and_a_link() -> None:
    turn = f"See ![chart]({PIXEL}) and [docs](http://docs.example).\n\n```\n![x](y)\n```"
    out = html_of(render_turn(turn).markdown)
    assert "<img" not in out
    assert '<a href="http://127.0.0.1:9/pixel.png">chart</a>' in out  # needs a click
    assert "![x](y)" in out  # code stays verbatim
    segments = review_turn(turn).segments
    assert all("<img" not in html_of(s.text) for s in segments if s.kind == "markdown")
    assert "<img" not in html_of(render_value(f"![x]({PIXEL})"))
    assert "<img" not in html_of(render_value(7))


def test_escaped_images_stay_escaped() -> None:
    assert neutralize_images("\\![x](u)") == "\\![x](u)"
    assert "<img" not in html_of(neutralize_images("\\\\![x](u)"))
    assert "<img" not in html_of(neutralize_images("~~~\n![x](u)\n~~~\n\n![y](v)"))


def test_build_failures_are_text() -> None:
    row = {"status": "error", "input": None, "raw_input": "`` ![a](b)", "error": f"![x]({PIXEL})"}
    assert "<img" not in html_of(describe({**row, "function_id": "![f](g)"}))


def test_turns_are_drawn_a_page_at_a_time() -> None:
    first = turn_page(100_000, None)
    assert (first.start, first.stop, first.page) == (0, TURNS_PER_PAGE, 1)
    assert first.pages == -(-100_000 // TURNS_PER_PAGE)
    last = turn_page(100_000, 10**9)  # clamped
    assert last.stop == 100_000 and last.stop - last.start <= TURNS_PER_PAGE
    assert turn_page(3, 5) == turn_page(3, 1)
    assert (turn_page(0, 1).start, turn_page(0, 1).stop, turn_page(0, 1).pages) == (0, 0, 1)
    assert turn_page_of(TURNS_PER_PAGE) == 2


def test_an_error_shows_an_id_and_the_log_has_the_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        raise RuntimeError("secret path /srv/podium/home")
    except RuntimeError as exc:
        error_id = log_script_error(exc)
        shown = user_message(exc, error_id)
    logged = capsys.readouterr().err
    assert error_id in shown and "\n" not in shown
    assert "secret path" not in shown and "Traceback" not in shown
    assert f"error id {error_id}" in logged and "Traceback" in logged
    assert "secret path" in logged
    assert logging.getLogger("podium.app").handlers
    assert user_message(NotFound("No table x.\n\nmore"), "ab12").startswith("No table x.")


IMAGE = "![x](http://127.0.0.1:9/p.png)"


def test_a_validation_failure_and_a_compared_answer_quote_data_as_text() -> None:
    """Before: Browse's failure lines and Compare's check badges put a failure message
    or a model's error (quoting the answer) into Markdown as it was."""
    failure = {"turn": 1, "role": "assistant", "rule": "json", "kind": "syntax", "message": IMAGE}
    [line] = failure_lines([failure], [{"role": "user"}, {"role": "assistant", "content": "x"}])
    assert "![" not in line and line.startswith("- turn 1 (assistant) · `json` · syntax: ")
    checks = AnswerChecks(
        {"json": {"ok": False, "message": IMAGE}}, chars=3, words=1, truncated=False
    )
    answer = Answer("m", None, "t", "x", "stop", IMAGE, checks)
    said = badges(answer)
    assert said.startswith(":red[✗] json (") and "![" not in said and "](" not in said
    assert unescape(said).count(IMAGE.replace("://", WORD_JOINER + "://")) == 2


@pytest.mark.parametrize(
    "turn",
    [
        "\\`![x](/auth/logout)\\`",  # an escaped backtick opens no code span
        "`a\n\n![x](/auth/logout)\n\nb`",  # a code span ends at a blank line
        "``` `x`\n![x](/auth/logout)\n```",  # a backtick in the info string: no fence
        "| a |\n|---|\n| \\`![x](/auth/logout)\\` |",  # in a table cell
    ],
)
def test_images_where_the_code_guess_misreads_the_text_are_not_drawn(turn: str) -> None:
    """Issue 44, point 18: each of these drew a same-origin image (a GET of
    /auth/logout for whoever read the row)."""
    for markdown in [render_turn(turn).markdown, *(s.text for s in review_turn(turn).segments)]:
        assert "<img" not in md.enable("table").render(markdown)
        assert "/auth/logout" in markdown  # still there, as text and a link
