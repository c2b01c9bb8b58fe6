"""What the Compare page shows, computed without Streamlit.

Filters and paging over a comparison's prompts, the answer columns with word-level
highlighting and check badges, the blind pair a voter sees (and what is revealed
after the vote), the ratings tables and charts, the trend over a training run, and
queueing a new comparison job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

from podium.app.charts import STEP_AXIS, STEP_TOOLTIP, VALUE_TOOLTIP
from podium.app.safe_markdown import escape_markdown
from podium.app.table_choices import TableChoice, pick, table_choices
from podium.compare.diff import side_by_side_html
from podium.compare.job import CompareConfig
from podium.compare.judge_mix import judge_votes
from podium.compare.judge_mix import judges_of as mixable_judges
from podium.compare.ratings import better_text as better_text
from podium.compare.ratings import rated_by, ratings_report
from podium.compare.table import Answer, Item, list_comparisons, load_comparison
from podium.compare.table import Comparison as Comparison
from podium.compare.trends import trend_points, trend_rows
from podium.compare.votes import VERDICT_LABELS as VERDICT_LABELS
from podium.compare.votes import BlindPair, blind_pair, list_votes
from podium.compare.votes import cast_vote as cast_vote
from podium.compare.votes import send_to_vibes as send_to_vibes
from podium.compare.votes import voted_prompts as voted_prompts
from podium.models.registry import DEFAULT_ALIAS, ModelInfo, list_models
from podium.store.catalog import kinds

MAX_COLUMNS = 4
ANY_CHECK = "(none)"

__all__ = [
    "CompareConfig",
    "list_comparisons",
    "load_comparison",
    "MAX_COLUMNS",
    "ANY_CHECK",
    "mixable_judges",
]


def model_choices() -> dict[str, str]:
    """Every registered model's name -> what the picker shows: a checkpoint of a run that
    did not finish says so ("(partial: cancelled at step 3 of 10)")."""
    return {m.name: m.label for m in list_models()}


def default_out(models: Sequence[str], table: str) -> str:
    """`cmp.<prompts>__<a>_vs_<b>`, unique in the catalog."""
    import re

    from podium.store.catalog.catalog import table_exists

    parts = [table.split(".")[-1], "_vs_".join(models) or "new"]
    base = "cmp." + re.sub(r"[^a-z0-9_]+", "_", "__".join(parts).lower()).strip("_")[:80]
    name, n = base, 1
    while table_exists(name):
        n += 1
        name = f"{base}_{n}"
    return name


# ---- a new comparison's defaults: a first result within minutes on a 2-core CPU ----

# Prompts: the base model answers none of demo.json_sft's first 4 with valid JSON, 2 of
# its first 8 (7 of 16); vLLM decodes them together, so 8 cost little more than 4.
NEW_LIMIT = 8
# Room for a whole JSON record (the demo's take 60-120 tokens, more in a ```json fence):
# at 64 every answer was cut and failed its check. Two models x 8 prompts x 256 tokens is
# 1-3 minutes of decoding on a 2-core CPU; most answers end well before.
NEW_MAX_TOKENS = 256


def default_checks(table: str) -> list[str]:
    """The checks a new comparison on `table` starts with: `json` where the table stores
    a JSON schema (its answers are meant to be JSON records), else none."""
    from podium.store.catalog.catalog import load_table
    from podium.validate.rules import PROP_JSON_SCHEMA

    return ["json"] if PROP_JSON_SCHEMA in load_table(table).properties else []


def new_form_values(models: Sequence[str], table: str) -> dict[str, Any]:
    """The new-comparison form's starting values (the card's own defaults are the
    whole table at 256 tokens: right for a GPU, tens of minutes on a small CPU). Answers
    are checked in their first fenced block when they have one: models wrap JSON in
    ```json."""
    return {
        "out": default_out(models, table),
        "limit": NEW_LIMIT,
        "max_tokens": NEW_MAX_TOKENS,
        "checks": default_checks(table),
        "extract": "auto",
    }


def default_models(models: Sequence[ModelInfo] | None = None, last: str | None = None) -> list[str]:
    """What a new comparison preselects: the model the person last looked at (`last`)
    beside the one it was trained from (a base: beside the newest trained checkpoint);
    else the newest trained checkpoint and its parent; with no trained checkpoint, the
    two newest models; else none. A checkpoint of a run that did not finish (partial)
    is never preselected."""
    models = [m for m in (list_models() if models is None else models) if not m.partial]
    names = {m.name for m in models}
    default = next((m.name for m in models if m.is_default), None)
    trained = sorted(
        (m for m in models if m.kind == "trained"), key=lambda m: m.created_at, reverse=True
    )

    def parent_of(info: ModelInfo) -> str | None:
        parent = default if info.parent == DEFAULT_ALIAS else info.parent
        return parent if parent in names and parent != info.name else None

    chosen = next((m for m in models if m.name == last), None)
    if chosen is not None:
        partner = parent_of(chosen) or next(
            (m.name for m in trained if m.name != chosen.name), None
        )
        return [chosen.name] + ([partner] if partner else [])
    if trained:
        parent = parent_of(trained[0])
        return [trained[0].name] + ([parent] if parent else [])
    if len(models) >= 2:
        newest_two = sorted(models, key=lambda m: m.created_at, reverse=True)[:2]
        return [m.name for m in newest_two]
    return []


def default_prompt_table(
    choices: Sequence[TableChoice] | None = None, last: str | None = None
) -> str | None:
    """The prompt set a new comparison starts on: the dataset the person last looked
    at (`last`), else the newest chat dataset (an SFT table or eval set), not
    the newest table of any kind (a samples or code-exec table); None when there is
    none (the picker's own order then decides)."""
    offered = pick(table_choices() if choices is None else choices, groups=("datasets",))
    if last in {c.name for c in offered}:
        return last
    chats = [c for c in offered if c.kind in (kinds.SFT, kinds.EVAL_SET)]
    chosen = chats or offered
    return chosen[0].name if chosen else None


def filter_items(
    comparison: Comparison, only_differ: bool = False, fails: str | None = None
) -> list[Item]:
    """Prompts where the answers differ and/or where model `fails` fails a check."""
    items = comparison.items
    if only_differ:
        items = [it for it in items if it.differ()]
    if fails and fails != ANY_CHECK:
        items = [
            it
            for it in items
            if any(a.model == fails and a.checks.passed is False for a in it.answers)
        ]
    return items


def clamp(pos: int, count: int) -> int:
    return max(0, min(pos, count - 1)) if count else 0


def badges(answer: Answer) -> str:
    """One Markdown line: each check's outcome, then length (and truncation); a check's
    message and the answer's error quote the answer, so they read as text."""
    parts = []
    for name, result in answer.checks.results.items():
        mark = ":green[✓]" if result["ok"] else ":red[✗]"
        message = result["message"]
        detail = "" if result["ok"] or not message else f" ({escape_markdown(message[:80])})"
        parts.append(f"{mark} {escape_markdown(name)}{detail}")
    length = f"{answer.checks.words} words · {answer.checks.chars} chars"
    if answer.checks.truncated:
        length += " · cut at max tokens"
    if answer.error:
        length += f" · error: {escape_markdown(answer.error)}"
    return " · ".join([*parts, length])


def columns(item: Item, models: Sequence[str]) -> list[tuple[Answer, str]]:
    """(answer, highlighted HTML) for each chosen model, in the chosen order."""
    answers = [item.answer_of(m) for m in models if any(a.model == m for a in item.answers)]
    return list(zip(answers, side_by_side_html([a.text for a in answers]), strict=True))


@dataclass(frozen=True)
class BlindView:
    pair: BlindPair
    a: Answer
    b: Answer
    html_a: str
    html_b: str
    vote: dict[str, Any] | None  # this voter's vote on this prompt: names are revealed

    @property
    def revealed(self) -> bool:
        return self.vote is not None


def blind_view(
    comparison: Comparison, item: Item, voter: str, votes: dict[str, dict[str, Any]] | None = None
) -> BlindView:
    pair = blind_pair(comparison, item, voter)
    a, b = item.answer_of(pair.model_a), item.answer_of(pair.model_b)
    html_a, html_b = side_by_side_html([a.text, b.text])
    mine = votes if votes is not None else voted_prompts(comparison.name, voter)
    return BlindView(pair, a, b, html_a, html_b, mine.get(item.prompt_id))


def reveal_text(view: BlindView) -> str:
    vote = view.vote or {}
    return (
        f"A was **{escape_markdown(view.pair.model_a)}**, "
        f"B was **{escape_markdown(view.pair.model_b)}** · "
        f"your vote: {escape_markdown(vote.get('verdict', ''))}"
    )


def unvoted(items: Sequence[Item], votes: dict[str, dict[str, Any]]) -> list[Item]:
    return [it for it in items if it.prompt_id not in votes]


# Ratings -----------------------------------------------------------------------------


def ratings(
    comparison: Comparison, bootstrap: int = 200, with_judge: str | None = None
) -> dict[str, Any]:
    """People's ratings, or with `with_judge` ('NAME@VERSION') its verdicts mixed in."""
    judge = judge_votes(comparison, with_judge) if with_judge else None
    return ratings_report(comparison, list_votes(comparison.name), bootstrap, judge)


def rated_by_text(report: dict[str, Any]) -> str:
    return escape_markdown(rated_by(report))


def ratings_frame(report: dict[str, Any]) -> pd.DataFrame:
    rows = [
        {
            "model": r["model"],
            "rating": round(r["rating"]),
            "low": round(r["low"]),
            "high": round(r["high"]),
            "votes": r["votes"],
            "wins": r["wins"],
            "checks passed": report["pass_rates"][r["model"]]["all"],
        }
        for r in report["ratings"]
    ]
    return pd.DataFrame(rows)


def ratings_lines(report: dict[str, Any]) -> list[str]:
    """The ratings as Markdown lines (what tests and screen readers read)."""
    lines = []
    for r in report["ratings"]:
        model = escape_markdown(r["model"])
        rate = report["pass_rates"][r["model"]]["all"]
        checks = "" if rate is None else f" · checks passed {rate:.0%}"
        if not r["votes"]:  # a rating with no votes is the prior, not a measurement
            lines.append(f"**{model}**: no votes yet{checks}")
            continue
        votes = f"{r['votes']} votes"
        if report.get("judge") is not None:
            votes += f" ({r['people_votes']} people + {r['judge_votes']} judge)"
        lines.append(
            f"**{model}**: {r['rating']:.0f} "
            f"(95% {r['low']:.0f} to {r['high']:.0f}) · {votes}{checks}"
        )
    return lines


def ratings_chart(report: dict[str, Any]) -> alt.LayerChart:
    frame = ratings_frame(report)
    frame = frame[frame["votes"] > 0]  # no interval to draw without votes
    # labelLimit 0: whole names (two checkpoints of one base share a long prefix).
    base = alt.Chart(frame).encode(
        y=alt.Y("model:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0))
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="rating (95% interval)", scale=alt.Scale(zero=False)), x2="high:Q"
    )
    points = base.mark_point(filled=True, size=80).encode(x="rating:Q", tooltip=list(frame.columns))
    layered: alt.LayerChart = bars + points  # mark_* come back untyped (Any) from altair
    return layered


NO_VALUE = "—"  # a pair that never met, a model against itself, a check never run


def _percent(value: float | None) -> str:
    return NO_VALUE if value is None else f"{value:.0%}"


def win_frame(report: dict[str, Any]) -> pd.DataFrame:
    """Win rates as text ("67%", or "—" where there is nothing to show, never "None")."""
    models = report["models"]
    return pd.DataFrame(
        [
            [NO_VALUE if a == b else _percent(report["win_rates"][a][b]) for b in models]
            for a in models
        ],
        index=models,
        columns=models,
    )


def pass_frame(report: dict[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame(report["pass_rates"]).T
    return frame.map(lambda v: _percent(None if pd.isna(v) else v))


# Trends ------------------------------------------------------------------------------


def trend_frame(comparison: Comparison) -> pd.DataFrame:
    rows = trend_rows(trend_points(comparison, list_votes(comparison.name)))
    return pd.DataFrame(
        rows, columns=["model", "step", "pass_rate", "check_win_rate", "vote_win_rate"]
    )


def trend_chart(frame: pd.DataFrame) -> alt.Chart:
    long = frame.melt(id_vars=["model", "step"], var_name="metric", value_name="value").dropna()
    chart: alt.Chart = (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X("step:Q", axis=STEP_AXIS),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1])),
            color="metric:N",
            tooltip=["model", STEP_TOOLTIP, "metric", VALUE_TOOLTIP],
        )
    )
    return chart


# New comparison ----------------------------------------------------------------------


def sampling_text(sampling: Any) -> str:
    """'temperature 0.7 · max tokens 256 · n 1' for a comparison's sampling settings."""
    if not isinstance(sampling, dict):
        return str(sampling)
    parts = []
    for key, value in sampling.items():
        if value is None or value == [] or value == {}:
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, list | tuple) else value
        parts.append(f"{key.replace('_', ' ')} {shown}")
    return " · ".join(parts) or "defaults"
