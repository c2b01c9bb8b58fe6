"""The rubric signal's settings and facets without a server: refusals and score tests."""

from __future__ import annotations

import pytest

from podium.errors import InvalidInput, PodiumError
from podium.signals.job import SignalsConfig, signals_of
from podium.signals.rubric import RubricSettings
from podium.signals.values import _score_test


def test_rubric_facets_read_thresholds_and_unparsed():
    scores = [None, 1, 4, 5, 9, 10]
    assert [s for s in scores if _score_test(">=5")(s)] == [5, 9, 10]
    assert [s for s in scores if _score_test("<5")(s)] == [None, 1, 4]  # unparsed: not good
    assert [s for s in scores if _score_test("9")(s)] == [9]
    assert [s for s in scores if _score_test("unparsed")(s)] == [None]
    for bad in (">=11", "<0", "good", ">=x"):
        with pytest.raises(InvalidInput, match="rubric has no facet"):
            _score_test(bad)


def test_a_rubric_without_a_judge_or_placeholders_is_refused(podium_home):
    with pytest.raises(InvalidInput, match=r"lacks \{answer\}"):
        RubricSettings(judge="base", prompt="Rate {question}")
    config = SignalsConfig(table={"name": "demo.chat"}, signals=["rubric"])
    with pytest.raises(InvalidInput, match="needs a judge"):
        signals_of(config)  # before anything is read or written
    unknown = config.model_copy(update={"rubric": RubricSettings(judge="nope")})
    with pytest.raises(PodiumError, match="No model named 'nope'"):
        signals_of(unknown)
