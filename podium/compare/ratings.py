"""Ratings from votes: Bradley-Terry strengths with bootstrap intervals, win rates.

Bradley-Terry says P(i beats j) = p_i / (p_i + p_j). Strengths are fitted with
Hunter's MM algorithm (2004) on win counts where a tie counts half a win each way;
"both bad" says nothing about which is better and is left out (it is counted).
A small symmetric prior (`PRIOR` virtual half-wins per pair) keeps a checkpoint that
never won finite. Ratings are reported on the Elo scale (400 * log10 strength,
centred on 1000); the 95% interval comes from refitting on votes resampled with
replacement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from podium.compare.table import Comparison

PRIOR = 0.1
ELO_SCALE = 400.0 / np.log(10.0)


@dataclass(frozen=True)
class Rating:
    model: str
    rating: float
    low: float
    high: float
    votes: int
    wins: float


def _counts(votes: Sequence[tuple[int, int, float]] | np.ndarray, k: int) -> np.ndarray:
    """wins[i, j]: how often i beat j (ties as 0.5); votes are (a, b, score of a)."""
    arr = np.asarray(votes, dtype=float).reshape(-1, 3)
    a, b, score = arr[:, 0].astype(int), arr[:, 1].astype(int), arr[:, 2]
    wins = np.zeros((k, k))
    np.add.at(wins, (a, b), score)
    np.add.at(wins, (b, a), 1.0 - score)
    return wins


def fit_bradley_terry(wins: np.ndarray, iters: int = 500, tol: float = 1e-10) -> np.ndarray:
    """Log strengths (mean 0) from a win-count matrix, by MM iterations."""
    k = wins.shape[0]
    w = wins + PRIOR * (1 - np.eye(k))
    games = w + w.T
    total_wins = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(iters):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = total_wins / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - p)) < tol:
            p = new
            break
        p = new
    logp: np.ndarray = np.log(p)
    centred: np.ndarray = logp - logp.mean()
    return centred


def bradley_terry(
    models: Sequence[str],
    votes: Sequence[tuple[int, int, float]],
    bootstrap: int = 200,
    seed: int = 0,
) -> list[Rating]:
    """Ratings with 95% bootstrap intervals; `votes` are (index a, index b, score of a)."""
    k = len(models)
    wins = _counts(votes, k)
    point = fit_bradley_terry(wins)
    rng = np.random.default_rng(seed)
    arr = np.array(votes, dtype=float).reshape(-1, 3)
    samples = []
    for _ in range(bootstrap if len(arr) else 0):
        samples.append(fit_bradley_terry(_counts(arr[rng.integers(0, len(arr), len(arr))], k)))
    lows, highs = np.percentile(samples, [2.5, 97.5], axis=0) if samples else (point, point)
    games = wins + wins.T
    out = [
        Rating(
            m,
            1000 + ELO_SCALE * point[i],
            1000 + ELO_SCALE * lows[i],
            1000 + ELO_SCALE * highs[i],
            int(round(games[i].sum())),
            float(wins[i].sum()),
        )
        for i, m in enumerate(models)
    ]
    return sorted(out, key=lambda r: -r.rating)


def win_matrix(
    models: Sequence[str], votes: Sequence[tuple[int, int, float]]
) -> dict[str, dict[str, float | None]]:
    """Row model's win rate against the column model (ties half), None if never met."""
    wins = _counts(votes, len(models))
    games = wins + wins.T
    return {
        a: {
            b: (float(wins[i, j] / games[i, j]) if games[i, j] else None)
            for j, b in enumerate(models)
            if j != i
        }
        for i, a in enumerate(models)
    }


def vote_tuples(
    models: Sequence[str], votes: Sequence[dict[str, Any]]
) -> list[tuple[int, int, float]]:
    index = {m: i for i, m in enumerate(models)}
    score = {"A": 1.0, "B": 0.0, "tie": 0.5}
    return [
        (index[v["model_a"]], index[v["model_b"]], score[v["verdict"]])
        for v in votes
        if v["verdict"] in score and v["model_a"] in index and v["model_b"] in index
    ]


def better_counts(models: Sequence[str], votes: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How often each model was voted the better one (whichever side it was shown on),
    then ties and "both bad": {"base": 3, "sft": 5, "tie": 1, "both bad": 0}."""
    out = dict.fromkeys(models, 0)
    ties = bad = 0
    for v in votes:
        verdict = v["verdict"]
        if verdict in ("A", "B"):
            winner = v["model_a"] if verdict == "A" else v["model_b"]
            out[winner] = out.get(winner, 0) + 1
        ties += verdict == "tie"
        bad += verdict == "both_bad"
    return {**out, "tie": ties, "both bad": bad}


def better_text(report: dict[str, Any]) -> str:
    """'smollm2-base better: 1 · my-sft better: 1 · tie: 0 · both bad: 0'."""
    better = report["better"]
    models = [m for m in report["models"] if m in better]
    return " · ".join(
        [f"{m} better: {better[m]}" for m in models]
        + [f"{k}: {better[k]}" for k in ("tie", "both bad")]
    )


def pass_rates(comparison: Comparison) -> dict[str, dict[str, float | None]]:
    """Per model: share of answers passing all checks, and per check."""
    out: dict[str, dict[str, float | None]] = {}
    for model in comparison.models:
        answers = [
            it.answer_of(model)
            for it in comparison.items
            if any(a.model == model for a in it.answers)
        ]
        overall = [a.checks.passed for a in answers if a.checks.passed is not None]
        rates: dict[str, float | None] = {"all": sum(overall) / len(overall) if overall else None}
        names = sorted({n for a in answers for n in a.checks.results})
        for name in names:
            oks = [a.checks.results[name]["ok"] for a in answers if name in a.checks.results]
            rates[name] = sum(oks) / len(oks)
        out[model] = rates
    return out


def _met(model: str, votes: Sequence[dict[str, Any]]) -> int:
    return sum(model in (v["model_a"], v["model_b"]) for v in votes)


def ratings_report(
    comparison: Comparison,
    votes: Sequence[dict[str, Any]],
    bootstrap: int = 200,
    judge: tuple[str, Sequence[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Everything `podium compare ratings --json` prints and the page plots: people's
    votes alone, or with `judge` = (label, its verdicts as votes) mixed in, each count
    kept apart (`votes` is always people's)."""
    label, verdicts_as_votes = judge if judge is not None else (None, [])
    every = [*votes, *verdicts_as_votes]
    tuples = vote_tuples(comparison.models, every)
    verdicts = {
        v: sum(1 for x in every if x["verdict"] == v) for v in ("A", "B", "tie", "both_bad")
    }
    ratings = [
        {
            **asdict(r),
            "people_votes": _met(r.model, votes),
            "judge_votes": _met(r.model, verdicts_as_votes),
        }
        for r in bradley_terry(comparison.models, tuples, bootstrap)
    ]
    return {
        "comparison": comparison.name,
        "models": comparison.models,
        "votes": len(votes),  # people's
        "judge": label,  # "judge:NAME@VERSION" whose verdicts are mixed in, or None
        "judge_votes": len(verdicts_as_votes),
        "verdicts": verdicts,  # by side; A and B are shuffled per prompt
        "better": better_counts(comparison.models, every),
        "ratings": ratings,
        "win_rates": win_matrix(comparison.models, tuples),
        "pass_rates": pass_rates(comparison),
    }


def rated_by(report: dict[str, Any]) -> str:
    """'4 votes' (people's), or '4 votes by people + 6 verdicts by judge:x@pairwise-v1'."""
    if report.get("judge") is None:
        return f"{report['votes']} votes"
    return (
        f"{report['votes']} votes by people + {report['judge_votes']} verdicts by {report['judge']}"
    )
