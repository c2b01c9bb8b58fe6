"""Trends over a training run: every registered checkpoint of the run against its base.

    podium compare trend --run sft-json --table evals.json --out cmp.sft_json_trend --check json

A run's checkpoints are the registry rows with its job id and a step (periodic
`<out>-step-N` and the final `<out>`); a final checkpoint at the same step as the last
periodic one is the same weights and replaces it. The trend is a comparison of the
base and all of them (same job, same sample reuse), summarised per step as the check
pass rate, the win rate against the base by checks (per prompt: passes where the base
fails = win, the reverse = loss, otherwise half) and, where people voted, the win rate
against the base by votes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from podium.compare.ratings import pass_rates, vote_tuples, win_matrix
from podium.compare.table import Comparison
from podium.errors import NotFound
from podium.models.registry import ModelInfo, get_model_or_none, list_models


@dataclass(frozen=True)
class TrendPoint:
    model: str
    step: int
    pass_rate: float | None
    check_win_rate: float | None  # against the base, by automatic checks
    vote_win_rate: float | None  # against the base, by votes (None: no votes yet)


def run_checkpoints(run: str) -> tuple[str, list[ModelInfo]]:
    """(base model, checkpoints by step) of the training run named by a checkpoint or job id."""
    models = list_models()
    named = get_model_or_none(run)
    job_id = named.job_id if named is not None else run
    found = [
        m
        for m in models
        if m.kind == "trained" and m.job_id and m.job_id == job_id and m.step is not None
    ]
    if not found:
        raise NotFound(
            f"No registered checkpoints of a training run {run!r}: give a checkpoint name "
            "or job id from `podium models list`."
        )
    by_step: dict[int, ModelInfo] = {}
    for m in sorted(found, key=lambda m: (m.step, bool(m.lineage.get("final")))):
        by_step[m.step] = m  # type: ignore[index]  # the final one wins a shared step
    base = found[0].parent or "base"
    return base, [by_step[s] for s in sorted(by_step)]


def _check_win_rate(comparison: Comparison, model: str, base: str) -> float | None:
    scores = []
    for item in comparison.items:
        models = {a.model for a in item.answers}
        if model not in models or base not in models:
            continue
        mine, theirs = item.answer_of(model).checks.passed, item.answer_of(base).checks.passed
        if mine is None or theirs is None:
            continue
        scores.append(0.5 if mine == theirs else float(mine))
    return sum(scores) / len(scores) if scores else None


def trend_points(
    comparison: Comparison, votes: Sequence[dict[str, Any]], base: str | None = None
) -> list[TrendPoint]:
    """One point per checkpoint with a step; the base is step 0."""
    infos = {m: get_model_or_none(m) for m in comparison.models}
    base = base or next(
        (m for m, i in infos.items() if i is not None and i.kind == "base"), comparison.models[0]
    )
    rates = pass_rates(comparison)
    wins = win_matrix(comparison.models, vote_tuples(comparison.models, votes))
    points = []
    for model, info in infos.items():
        step = 0 if model == base else (info.step if info is not None else None)
        if step is None:
            continue
        points.append(
            TrendPoint(
                model,
                step,
                rates[model]["all"],
                0.5 if model == base else _check_win_rate(comparison, model, base),
                None if model == base else wins[model].get(base),
            )
        )
    return sorted(points, key=lambda p: p.step)


def trend_rows(points: Sequence[TrendPoint]) -> list[dict[str, Any]]:
    return [asdict(p) for p in points]
