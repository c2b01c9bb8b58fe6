"""Judge verdicts against known human votes: every figure computed by hand here."""

from __future__ import annotations

import json
import math
import sys

import cli_fork
import pytest
from compare_data import BAD, GOOD

from generators.client import ChatResult, Completion
from podium.compare.judge import (
    JudgeConfig,
    PairTask,
    list_verdicts,
    run_judge,
    store_verdicts,
    verdict_row,
)
from podium.compare.judge_agreement import agreement_report, lc_win_rate
from podium.compare.judge_prompts import judge_prompt, parse_verdict
from podium.compare.votes import BlindPair, cast_vote, list_votes
from podium.errors import InvalidInput
from podium.identity import User
from podium.reporting import Reporter
from podium.store.catalog.catalog import table_exists


def reply(verdict: str) -> ChatResult:
    text = json.dumps({"verdict": verdict, "reason": "because"}) if verdict else "I cannot judge."
    return ChatResult([Completion(text, "stop")], 10, 5, 0.25)


def verdicts(comparison, judge: str, raw: dict[str, tuple[str, str]]) -> list[dict]:
    """Rows of a judge that replied `raw[prompt] = (first order, second order)`."""
    return [
        verdict_row(
            comparison.name,
            judge,
            "pairwise-v1",
            PairTask(comparison.item(pid), "alpha", "omega"),
            reply(ab),
            reply(ba),
        )
        for pid, (ab, ba) in raw.items()
    ]


def vote(comparison, pid: str, voter: str, verdict: str) -> None:
    user = User(name=voter, role="reviewer", source="oidc")
    cast_vote(comparison, BlindPair(pid, "alpha", "omega"), verdict, user)


def test_agreement_figures_equal_the_hand_computed_ones(comparison):
    # People (alpha shown as A): p0 alpha 2-1, p1 a draw (tie vs alpha: a tie),
    # p2 omega 2-0, p3 alpha (a "both bad" vote says nothing).
    for pid, voter, verdict in [
        ("p0", "ann", "A"), ("p0", "bob", "A"), ("p0", "cy", "B"),
        ("p1", "ann", "tie"), ("p1", "bob", "A"),
        ("p2", "ann", "B"), ("p2", "bob", "B"),
        ("p3", "ann", "A"), ("p3", "cy", "both_bad"),
    ]:  # fmt: skip
        vote(comparison, pid, voter, verdict)
    # The judge: p0 alpha both ways, p1 flips (a tie), p2 alpha both ways, p3 prose.
    rows = verdicts(
        comparison, "x", {"p0": ("A", "B"), "p1": ("A", "A"), "p2": ("A", "B"), "p3": ("", "")}
    )
    assert [r["verdict"] for r in rows] == ["A", "tie", "A", "unparsed"]
    assert [r["consistent"] for r in rows] == [True, False, True, None]
    report = agreement_report(comparison, list_votes(comparison.name), rows, bootstrap=20)
    judge = report["judges"]["judge:x@pairwise-v1"]
    # Shared pairs p0, p1, p2: people [alpha, tie, omega], judge [alpha, tie, alpha].
    assert judge["shared_pairs"] == 3 and judge["accuracy"] == pytest.approx(2 / 3)
    # Observed 2/3; chance: people 1/3 each, judge alpha 2/3, tie 1/3 -> 2/9 + 1/9 = 1/3.
    assert judge["kappa"] == pytest.approx((2 / 3 - 1 / 3) / (1 - 1 / 3))
    assert judge["unparsed"] == 1 and judge["verdicts"] == 4
    assert judge["position_consistency"] == pytest.approx(2 / 3)
    assert (judge["position_pairs"], judge["flips"]) == (3, 1)
    # Preferred: alpha's answers to p0 and p2; the others: omega's.
    assert judge["preferred_chars"] == pytest.approx((len(GOOD["p0"]) + len(GOOD["p2"])) / 2)
    assert judge["other_chars"] == pytest.approx((len(BAD["p0"]) + len(BAD["p2"])) / 2)
    assert judge["length_pairs"] == 2
    # omega against the baseline alpha: the judge 0 + 0.5 + 0 of 3; people 0+0.5+1+0 of 4.
    assert judge["win_rates"]["omega"]["win_rate"] == pytest.approx(1 / 6)
    assert judge["win_rates"]["omega"]["pairs"] == 3
    people = report["people"]
    assert people["pairs"] == 4 and people["votes"] == 9
    assert people["win_rates"]["omega"]["win_rate"] == pytest.approx(1.5 / 4)
    # Ratings: people from their votes only, the judge from its parsed verdicts only.
    assert sum(r["votes"] for r in people["ratings"]) == 2 * 8  # both_bad left out
    assert sum(r["votes"] for r in judge["ratings"]) == 2 * 3


def test_a_judge_that_always_picks_the_first_position_is_all_ties(comparison):
    rows = verdicts(comparison, "first", {pid: ("A", "A") for pid in ("p0", "p1", "p2", "p3")})
    assert {r["verdict"] for r in rows} == {"tie"}
    report = agreement_report(comparison, [], rows, bootstrap=10)["judges"]
    judge = report["judge:first@pairwise-v1"]
    assert judge["position_consistency"] == 0.0 and judge["flips"] == 4
    assert judge["win_rates"]["omega"]["win_rate"] == 0.5
    assert judge["shared_pairs"] == 0 and judge["accuracy"] is None  # no votes: nothing shared
    assert judge["preferred_chars"] is None  # it preferred nothing


def test_length_controlled_win_rate_reads_the_fit_at_zero_length_difference():
    # Equal lengths: the plain win rate.
    assert lc_win_rate([0, 0, 0, 0], [1, 1, 1, 0]) == pytest.approx(0.75, abs=1e-3)
    # Longer (+100 chars) wins 6 of 8, shorter (-100) wins 1 of 4: logit 0.75 = ln 3,
    # logit 0.25 = -ln 3, so the intercept is 0 and the controlled rate 0.5, not 7/12.
    diffs = [100] * 8 + [-100] * 4
    scores = [1] * 6 + [0] * 2 + [1] + [0] * 3
    assert sum(scores) / len(scores) == pytest.approx(7 / 12)
    assert lc_win_rate(diffs, scores) == pytest.approx(0.5, abs=1e-3)
    assert lc_win_rate([10, 20], [1, 1]) is None  # never lost: nothing to fit


def test_verdicts_parse_strictly_or_are_unparsed():
    assert parse_verdict("pairwise", '{"verdict": "B", "reason": "r"}').value == "B"
    for text in ["B is better.", '{"verdict": "C", "reason": ""}', "[1]", '{"verdict": "A"']:
        assert not parse_verdict("pairwise", text).ok, text
    refused = parse_verdict("pairwise", "", "400: context too long")
    assert not refused.ok and "refused" in refused.problem
    assert parse_verdict("rubric", '{"score": 7, "reason": "ok"}').value == 7
    assert not parse_verdict("rubric", '{"score": 11, "reason": "ok"}').ok
    assert not parse_verdict("rubric", '{"score": true, "reason": "ok"}').ok


def test_a_prompt_without_its_placeholders_is_refused_at_once(comparison):
    with pytest.raises(InvalidInput, match=r"lacks \{answer_b\}"):
        judge_prompt("pairwise", "Which is better? {question} {answer_a}")
    with pytest.raises(InvalidInput, match=r"lacks \{answer\}"):
        judge_prompt("rubric", "Rate: {question}")
    with pytest.raises(InvalidInput, match="lacks"):
        JudgeConfig(comparison=comparison.name, judge="alpha", prompt="Judge {question}")
    with pytest.raises(ValueError, match="greater than or equal to 464"):  # cuts verdicts
        JudgeConfig(comparison=comparison.name, judge="alpha", max_tokens=256)
    custom = judge_prompt("pairwise", "Q {question} A {answer_a} B {answer_b}")
    assert custom.version.startswith("custom-")
    # An answer holding a placeholder stays text (one pass over the template).
    rendered = custom.render(question="q", answer_a="{answer_b}", answer_b="b")
    assert rendered == "Q q A {answer_b} B b"


def test_an_endpoint_that_does_not_answer_writes_nothing(comparison):
    # alpha is registered on a closed port (compare_data): every try fails.
    cfg = JudgeConfig(
        comparison=comparison.name,
        judge="alpha",
        retry={"retry_attempts": 1, "retry_max_wait_s": 1},
    )
    with pytest.raises(Exception, match="did not answer"):
        run_judge(cfg, Reporter())
    assert not table_exists("compare.judge_verdicts")


def test_agreement_cli_prints_the_figures_and_refuses_an_empty_comparison(comparison):
    cmd = [sys.executable, "-m", "podium.cli", "judge", "agreement", comparison.name, "--json"]
    empty = cli_fork.run(cmd, capture_output=True, text=True, timeout=120)
    assert empty.returncode != 0 and "no votes and no judge verdicts" in empty.stderr
    store_verdicts(verdicts(comparison, "x", {"p0": ("A", "B"), "p1": ("B", "A")}))
    vote(comparison, "p0", "ann", "A")
    assert [r["voter"] for r in list_verdicts(comparison.name)] == ["judge:x", "judge:x"]
    out = cli_fork.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    judge = report["judges"]["judge:x@pairwise-v1"]
    figures = (judge["shared_pairs"], judge["accuracy"], judge["position_consistency"])
    assert figures == (1, 1.0, 1.0)
    assert report["people"]["votes"] == 1  # the judge's verdicts are not human votes
    assert not math.isnan(report["people"]["ratings"][0]["rating"])
    text = cli_fork.run(cmd[:-1], capture_output=True, text=True, timeout=120)
    assert "judge:x@pairwise-v1: accuracy 1.00, kappa – (1 shared pairs)" in text.stdout


def test_a_sample_of_prompts_is_drawn_by_seed_and_a_cut_reply_is_unparsed(comparison):
    from podium.compare.judge import pair_tasks

    every = pair_tasks(comparison, None, 0)
    assert [(t.item.prompt_id, t.model_a, t.model_b) for t in every] == [
        (p, "alpha", "omega") for p in ("p0", "p1", "p2", "p3")
    ]
    two = [t.item.prompt_id for t in pair_tasks(comparison, 2, seed=3)]
    assert len(two) == 2 and two == [t.item.prompt_id for t in pair_tasks(comparison, 2, 3)]
    cut = ChatResult([Completion('{"verdict": "A", "rea', "length")], 10, 5, 0.1)
    row = verdict_row(comparison.name, "x", "pairwise-v1", every[0], cut, reply("B"))
    assert row["verdict"] == "unparsed" and "cut at max_tokens" in row["problem"]
