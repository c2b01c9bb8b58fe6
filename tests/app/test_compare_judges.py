"""The Compare page's Judges section (AppTest): people beside a judge, the agreement
figures with their counts, and the form that starts a judge job."""

from __future__ import annotations

from html import unescape

import compare_data
from test_compare_page import _open, _texts, reviewer

from generators.client import ChatResult, Completion
from podium.app.views.compare import judges_model as jm
from podium.compare.judge import PairTask, store_verdicts, verdict_row
from podium.compare.votes import BlindPair, cast_vote

compare_config = compare_data.compare_config  # fixtures
comparison = compare_data.comparison


def _reply(verdict: str) -> ChatResult:
    return ChatResult([Completion(f'{{"verdict": "{verdict}", "reason": "r"}}', "stop")], 1, 1, 0.1)


def _judged(comparison) -> None:
    raw = {"p0": ("A", "B"), "p1": ("A", "A"), "p2": ("B", "A")}
    store_verdicts(
        [
            verdict_row(
                comparison.name,
                "alpha",
                "pairwise-v1",
                PairTask(comparison.item(pid), "alpha", "omega"),
                _reply(ab),
                _reply(ba),
            )
            for pid, (ab, ba) in raw.items()
        ]
    )
    for pid, verdict in [("p0", "A"), ("p1", "B"), ("p2", "B")]:
        cast_vote(comparison, BlindPair(pid, "alpha", "omega"), verdict, reviewer("ann"))


def test_judges_section_shows_people_beside_the_judge_with_counts(comparison):
    _judged(comparison)
    # people: alpha, omega, omega; judge: alpha, tie (flip), omega -> 2 of 3 agree.
    report = jm.agreement(comparison, bootstrap=10)
    frame = jm.agreement_frame(report)
    assert frame.loc[0, "judge"] == "judge:alpha@pairwise-v1"
    assert (frame.loc[0, "shared pairs"], frame.loc[0, "accuracy"]) == (3, 0.667)
    assert (frame.loc[0, "position pairs"], frame.loc[0, "flips (ties)"]) == (3, 1)
    ratings = jm.ratings_side_by_side(report)
    assert list(ratings.columns) == ["model", "people", "judge:alpha@pairwise-v1"]
    from podium.compare.judge_scores import store_scores

    rubric = [
        compare_data.rubric_score(comparison, "p0", m, v) for m, v in [("alpha", 8), ("omega", 4)]
    ]
    store_scores(rubric)
    at = _open("Judges", name="cmp.colours")
    page = unescape(_texts(at))  # escaped Markdown: ':' is '&#58;'
    assert "Rubric scores" in page  # beside the pairwise figures
    assert "judge:grader@rubric-v1 rubric: alpha 8.00 (1 scored) · omega 4.00 (1 scored)" in page
    assert "people: 3 votes on 3 pairs" in page
    assert "judge:alpha@pairwise-v1: accuracy 0.67" in page and "(3 shared pairs)" in page
    assert "position consistency 0.67 (3 pairs, 1 flips)" in page
    assert "length-controlled" in page
    assert "Queue job" in page  # the judge form


def test_judges_section_without_votes_says_so_and_offers_the_form(comparison):
    from podium.compare.judge_registry import add_judge

    add_judge("strict", "alpha", "pairwise", "Q {question} 1 {answer_a} 2 {answer_b}")
    add_judge("grader", "alpha", "rubric")  # scores each answer of the comparison
    at = _open("Judges", name="cmp.colours")
    page = _texts(at)
    assert "No votes or judge verdicts yet." in page
    assert "Queue job" in page
    picker = at.selectbox(key="compare.judge.name")
    assert picker.options[0] == "grader (rubric judge: alpha, rubric-v1)"
    assert picker.options[1].startswith("strict (pairwise judge: alpha, custom-")
    assert "alpha (model, pairwise-v1)" in picker.options


def test_ratings_mix_in_a_judge_only_when_toggled_with_counts_apart(comparison):
    _judged(comparison)  # people: 3 votes; judge alpha: 3 parsed verdicts (one a tie)
    at = _open("Ratings", name="cmp.colours")
    assert "**3 votes** ·" in _texts(at)  # people alone by default
    at.toggle(key="compare.ratings.mix").set_value(True).run()
    page = unescape(_texts(at))
    assert "**3 votes by people + 3 verdicts by judge:alpha@pairwise-v1** ·" in page
    # alpha: people 1 of 3 and the judge 1 of 3 (+ a tie): 6 votes behind each rating.
    assert "alpha better: 2 · omega better: 3 · tie: 1" in page
    assert "6 votes (3 people + 3 judge)" in page
