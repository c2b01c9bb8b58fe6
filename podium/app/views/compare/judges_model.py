"""What the Compare page's Judges section shows, computed without Streamlit: people's
and each judge's ratings side by side, the agreement table with the count each figure
rests on, the win rates against the baseline, and the judge job's form values."""

from __future__ import annotations

from typing import Any

import pandas as pd

from podium.app.safe_markdown import escape_markdown
from podium.compare.judge import JudgeConfig
from podium.compare.judge_agreement import comparison_agreement, judge_line, win_rate_lines
from podium.compare.judge_registry import get_judge_or_none, list_judges
from podium.compare.judge_scores import score_lines
from podium.compare.table import Comparison

__all__ = ["JudgeConfig", "agreement", "JUDGE_BASIC"]

JUDGE_BASIC = ("sample",)  # the form's visible fields (the judge is picked above it)


def agreement(comparison: Comparison, bootstrap: int = 200) -> dict[str, Any]:
    return comparison_agreement(comparison, bootstrap)


def _figure(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def agreement_frame(report: dict[str, Any]) -> pd.DataFrame:
    """One row per judge: each figure beside the number of pairs it rests on."""
    return pd.DataFrame(
        [
            {
                "judge": name,
                "shared pairs": r["shared_pairs"],
                "accuracy": _figure(r["accuracy"]),
                "kappa": _figure(r["kappa"]),
                "position consistency": _figure(r["position_consistency"]),
                "position pairs": r["position_pairs"],
                "flips (ties)": r["flips"],
                "unparsed": r["unparsed"],
                "preferred chars": _figure(r["preferred_chars"]),
                "other chars": _figure(r["other_chars"]),
            }
            for name, r in report["judges"].items()
        ]
    )


def ratings_side_by_side(report: dict[str, Any]) -> pd.DataFrame:
    """Bradley-Terry ratings (95% interval) per model: by people, then by each judge."""
    who = {"people": report["people"], **report["judges"]}
    rows: dict[str, dict[str, Any]] = {m: {"model": m} for m in report["models"]}
    for name, r in who.items():
        for rating in r["ratings"]:
            rows[rating["model"]][name] = (
                f"{rating['rating']:.0f} ({rating['low']:.0f}-{rating['high']:.0f}, "
                f"{rating['votes']} votes)"
            )
    return pd.DataFrame(list(rows.values()))


def agreement_lines(report: dict[str, Any]) -> list[str]:
    """The figures as Markdown lines (what tests and screen readers read)."""
    people = report["people"]
    head = f"people: {people['votes']} votes on {people['pairs']} pairs"
    lines = [head, *(judge_line(n, r) for n, r in report["judges"].items())]
    lines += win_rate_lines(report) + score_lines(report.get("rubric", {}))
    return [escape_markdown(line) for line in lines]


def rubric_frame(report: dict[str, Any]) -> pd.DataFrame:
    """Mean rubric score per model (rows) by each rubric judge, with its counts."""
    rows: dict[str, dict[str, Any]] = {m: {"model": m} for m in report["models"]}
    for judge, by_model in report.get("rubric", {}).items():
        for model, s in by_model.items():
            mean = "–" if s["mean"] is None else f"{s['mean']:.2f}"
            rows[model][judge] = f"{mean} ({s['scored']} scored, {s['unparsed']} unparsed)"
    return pd.DataFrame(list(rows.values()))


def judge_choices(models: list[str]) -> list[str]:
    """Who may judge a comparison: the named judges (pairwise judge pairs, rubric judges
    score each answer), then every model (pairwise, with the built-in prompt)."""
    named = [j.name for j in list_judges()]
    return named + [m for m in models if m not in named]


def judge_label(name: str) -> str:
    judge = get_judge_or_none(name)
    if judge is None:
        return f"{name} (model, pairwise-v1)"
    return f"{name} ({judge.mode} judge: {judge.model}, {judge.prompt_version})"


def judge_form_values(comparison: Comparison) -> dict[str, Any]:
    return {"comparison": comparison.name}
