"""Bradley-Terry on synthetic votes from known strengths; win-rate matrix."""

from __future__ import annotations

import numpy as np

from podium.compare.ratings import ELO_SCALE, bradley_terry, win_matrix

TRUE_LOG_STRENGTH = np.array([-1.2, -0.3, 0.4, 1.1])
MODELS = ["w", "x", "y", "z"]


def _synthetic_votes(n: int, seed: int) -> list[tuple[int, int, float]]:
    rng = np.random.default_rng(seed)
    votes = []
    for _ in range(n):
        a, b = rng.choice(4, size=2, replace=False)
        p_a = 1 / (1 + np.exp(TRUE_LOG_STRENGTH[b] - TRUE_LOG_STRENGTH[a]))
        votes.append((int(a), int(b), 1.0 if rng.random() < p_a else 0.0))
    return votes


def test_recovers_known_order_and_intervals_cover_truth():
    ratings = bradley_terry(MODELS, _synthetic_votes(1500, seed=1), bootstrap=200, seed=2)
    assert [r.model for r in ratings] == ["z", "y", "x", "w"]
    truth = 1000 + ELO_SCALE * (TRUE_LOG_STRENGTH - TRUE_LOG_STRENGTH.mean())
    for r in ratings:
        t = truth[MODELS.index(r.model)]
        assert r.low <= t <= r.high, (r, t)
        assert r.high - r.low < 200  # informative, not vacuous
        assert r.low <= r.rating <= r.high
    assert sum(r.votes for r in ratings) == 2 * 1500


def test_fewer_votes_give_wider_intervals_and_finite_ratings():
    few = bradley_terry(MODELS[:2], [(0, 1, 1.0)] * 3 + [(0, 1, 0.0)], bootstrap=100)
    many = bradley_terry(MODELS[:2], ([(0, 1, 1.0)] * 3 + [(0, 1, 0.0)]) * 100, bootstrap=100)
    assert few[0].model == many[0].model == "w"
    assert all(np.isfinite([r.low, r.rating, r.high]).all() for r in few)
    assert many[0].high - many[0].low < few[0].high - few[0].low
    never_won = bradley_terry(MODELS[:2], [(0, 1, 1.0)] * 5, bootstrap=10)
    assert np.isfinite(never_won[1].rating)


def test_win_matrix_counts_ties_as_half():
    wins = win_matrix(["a", "b", "c"], [(0, 1, 1.0), (1, 0, 0.5), (0, 1, 0.0)])
    assert wins["a"]["b"] == 0.5 and wins["b"]["a"] == 0.5
    assert wins["a"]["c"] is None
