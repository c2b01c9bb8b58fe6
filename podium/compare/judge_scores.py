"""Rubric judging of a comparison: a rubric judge scores every model's answer (1-10).

    podium judge add grader --model base --mode rubric
    podium judge run --comparison cmp.json_sft --judge grader

The `judge` job with a rubric judge: each answer of the comparison is scored alone
(the judge's rubric prompt, JSON by guided decoding); a reply that does not parse is
stored with a null score and its problem, never guessed. Scores go to
`compare.judge_scores`, one row per prompt and model, in one append after every request
has answered; answers this judge and prompt version already scored are skipped. The
mean score per model (with the count each rests on) stands beside the pairwise figures
in `podium judge agreement` and on the Compare page.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from generators.client import endpoint_for
from podium.compare.judge_columns import judge_schema
from podium.compare.judge_registry import Judge
from podium.compare.judge_rubric import rubric_prompt, score_with
from podium.compare.table import Comparison, Item
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog import kinds
from podium.store.catalog.catalog import full_name, table_exists
from podium.store.read.read import read_small

SCORES_TABLE = "compare.judge_scores"
SCORES_SCHEMA = judge_schema(
    [
        pa.field("model", pa.string()),
        pa.field("sample_id", pa.string()),
        pa.field("score", pa.int32()),  # 1-10; null: unparsed
        pa.field("reason", pa.string()),
    ]
)


def list_scores(comparison: str) -> list[dict[str, Any]]:
    """Every rubric score of `comparison`, oldest first."""
    if not table_exists(SCORES_TABLE):
        return []
    rows = read_small(SCORES_TABLE)[0].to_pylist()
    name = full_name(comparison)
    return sorted((r for r in rows if r["comparison"] == name), key=lambda r: r["created_at"])


def store_scores(rows: Sequence[dict[str, Any]]) -> None:
    from generators.row_tables import ensure_row_table
    from podium.store.write.write import write_table

    ensure_row_table(SCORES_TABLE, SCORES_SCHEMA, kinds.COMPARE_VOTES)
    write_table(SCORES_TABLE, pa.Table.from_pylist(list(rows), schema=SCORES_SCHEMA), mode="append")


def score_comparison(
    comparison: Comparison,
    judge: Judge,
    reporter: Reporter,
    items: Sequence[Item],
    concurrency: int = 16,
    max_tokens: int | None = None,
) -> JobOutputs:
    """Score every answer of `items` by rubric `judge`; one append of the new rows."""
    prompt = rubric_prompt(judge.prompt)
    done = {
        (r["prompt_id"], r["model"])
        for r in list_scores(comparison.name)
        if (r["judge"], r["prompt_version"]) == (judge.name, prompt.version)
    }
    todo = [(i, a) for i in items for a in i.answers if (i.prompt_id, a.model) not in done]
    answers = sum(len(i.answers) for i in items)
    reporter.log(
        f"{answers} answers, {answers - len(todo)} already scored by {judge.name} "
        f"({prompt.version}); {len(todo)} requests"
    )
    rows: list[dict[str, Any]] = []
    if todo:
        reporter.phase(f"scoring with {judge.name}")
        scores = score_with(
            endpoint_for(judge.model, reporter=reporter),
            prompt,
            [i.prompt_text for i, _ in todo],
            [a.text for _, a in todo],
            max_tokens=max_tokens or judge.max_tokens,
            concurrency=concurrency,
            reporter=reporter,
        )
        now = datetime.now(UTC)
        rows = [
            {
                "id": str(uuid.uuid4()),
                "comparison": comparison.name,
                "prompt_id": item.prompt_id,
                "voter": f"judge:{judge.name}",
                "judge": judge.name,
                "prompt_version": prompt.version,
                "model": answer.model,
                "sample_id": answer.sample_id,
                "score": s.value,
                "reason": s.reason,
                "problem": s.problem or None,
                "latency_s": s.latency_s,
                "created_at": now,
            }
            for (item, answer), s in zip(todo, scores, strict=True)
        ]
        store_scores(rows)
    summary = {
        "comparison": comparison.name,
        "judge": judge.name,
        "mode": "rubric",
        "prompt_version": prompt.version,
        "answers": answers,
        "scored": sum(r["score"] is not None for r in rows),
        "unparsed": sum(r["score"] is None for r in rows),
        "skipped": answers - len(todo),
        "mean_scores": mean_scores(comparison, rows).get(f"judge:{judge.name}@{prompt.version}"),
    }
    return JobOutputs(tables=[full_name(SCORES_TABLE)], checkpoints=[judge.model], summary=summary)


def mean_scores(
    comparison: Comparison, rows: Sequence[dict[str, Any]]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{judge:NAME@VERSION: {model: {mean, scored, unparsed}}}, models in comparison order;
    a model's latest score per prompt counts."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in rows:
        latest[(f"{r['voter']}@{r['prompt_version']}", r["model"], r["prompt_id"])] = r
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for judge in sorted({k[0] for k in latest}):
        out[judge] = {}
        for model in comparison.models:
            mine = [r for (j, m, _), r in latest.items() if j == judge and m == model]
            scored = [r["score"] for r in mine if r["score"] is not None]
            out[judge][model] = {
                "mean": sum(scored) / len(scored) if scored else None,
                "scored": len(scored),
                "unparsed": len(mine) - len(scored),
            }
    return out


def score_lines(scores: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """'judge:grader@rubric-v1 rubric: alpha 6.50 (4 scored) · omega 3.25 (3 scored, 1
    unparsed)' per rubric judge."""

    def one(model: str, s: dict[str, Any]) -> str:
        mean = "–" if s["mean"] is None else f"{s['mean']:.2f}"
        unparsed = f", {s['unparsed']} unparsed" if s["unparsed"] else ""
        return f"{model} {mean} ({s['scored']} scored{unparsed})"

    return [
        f"{judge} rubric: " + " · ".join(one(m, s) for m, s in by_model.items())
        for judge, by_model in scores.items()
    ]
