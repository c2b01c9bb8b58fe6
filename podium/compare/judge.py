"""The `judge` job: a model judges every pair of a comparison, in both orders.

    podium judge run --comparison cmp.json_sft --judge base [--sample 50]

For each prompt and each pair of checkpoints the judge sees the two answers twice, once
in each order (MT-Bench: judges favour a position). Both replies are asked for as JSON
of a schema (vLLM's guided decoding makes them parse); a reply that does not parse, or
a request the server refuses, makes the pair "unparsed" (counted, never guessed). The
two orders agree (position-consistent) or the pair counts as a tie.

Verdicts go to `compare.judge_verdicts`, beside the human votes in `compare.votes` and
in their shape (model_a, model_b, verdict A/B/tie, winner) with the voter
"judge:NAME": the human ratings never read them. All of a run's verdicts are one
append, after every request has answered: a server that stops answering leaves nothing
half-written. Pairs this judge and prompt version already judged are skipped.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, Field, field_validator

from generators.client import ChatRequest, ChatResult, Endpoint, endpoint_for, generate_batch
from generators.retry import RetryPolicy
from podium.compare.judge_columns import judge_schema
from podium.compare.judge_prompts import (
    DEFAULT_MAX_TOKENS,
    MAX_TOKENS,
    VERDICT_TOKENS,
    JudgePrompt,
    Parsed,
    judge_prompt,
    parse_verdict,
)
from podium.compare.judge_registry import get_judge_or_none, resolve_judge
from podium.compare.table import Comparison, Item, load_comparison
from podium.errors import InvalidInput
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog import kinds
from podium.store.catalog.catalog import full_name, table_exists
from podium.store.read.read import read_small

VERDICTS_TABLE = "compare.judge_verdicts"
JUDGE_PREFIX = "judge:"
UNPARSED = "unparsed"
VERDICTS_SCHEMA = judge_schema(
    [
        pa.field("verdict", pa.string()),  # A | B | tie (flipped with the order) | unparsed
        pa.field("model_a", pa.string()),  # shown first in the first order
        pa.field("model_b", pa.string()),
        pa.field("sample_a", pa.string()),
        pa.field("sample_b", pa.string()),
        pa.field("winner", pa.string()),
        pa.field("verdict_ab", pa.string()),  # raw, model_a shown as A
        pa.field("verdict_ba", pa.string()),  # raw, model_b shown as A
        pa.field("consistent", pa.bool_()),  # None when an order is unparsed
        pa.field("reason_ab", pa.string()),
        pa.field("reason_ba", pa.string()),
    ]
)


class JudgeConfig(BaseModel):
    """Run-card front matter of `kind: judge`."""

    comparison: str = Field(description="The comparison to judge (NAMESPACE.TABLE).")
    judge: str = Field(
        description="A named judge (`podium judge add`: pairwise judges pairs, rubric scores "
        "each answer), or a registered checkpoint or endpoint that judges pairs with the "
        "prompt below."
    )
    prompt: str | None = Field(
        None,
        description="Pairwise judge prompt with {question}, {answer_a} and {answer_b} "
        "(blank: the judge's own, else the built-in pairwise-v1).",
    )
    sample: int | None = Field(None, ge=1, description="Judge only N prompts, drawn by seed.")
    seed: int = Field(0, description="Seed of the prompt sample.")
    max_tokens: int | None = Field(
        None,
        ge=VERDICT_TOKENS,
        le=MAX_TOKENS,
        description=f"Most tokens per verdict (blank: the judge's own, {DEFAULT_MAX_TOKENS}; "
        f"at least {VERDICT_TOKENS}, the longest verdict).",
    )
    concurrency: int = Field(16, ge=1, le=256, description="Requests in flight at once.")
    retry: RetryPolicy = Field(default_factory=RetryPolicy, description="Retries per request.")

    @field_validator("prompt")
    @classmethod
    def _has_placeholders(cls, prompt: str | None) -> str | None:
        judge_prompt("pairwise", prompt)  # refused when the card is made, not at the server
        return prompt


@dataclass(frozen=True)
class PairTask:
    item: Item
    model_a: str
    model_b: str


def voter_of(judge: str) -> str:
    return f"{JUDGE_PREFIX}{judge}"


def sampled_items(comparison: Comparison, sample: int | None, seed: int) -> list[Item]:
    """The comparison's prompts, or a sample of `sample` of them drawn by `seed`."""
    items = list(comparison.items)
    if sample is not None and sample < len(items):
        items = sorted(random.Random(seed).sample(items, sample), key=lambda i: i.prompt_id)
    return items


def pair_tasks(comparison: Comparison, sample: int | None, seed: int) -> list[PairTask]:
    """Every pair of checkpoints of every prompt (of a seeded sample of prompts), in the
    comparison's model order."""
    return [
        PairTask(item, a.model, b.model)
        for item in sampled_items(comparison, sample, seed)
        for a, b in itertools.combinations(item.answers, 2)
    ]


def _request(prompt: JudgePrompt, item: Item, first: str, second: str, max_tokens: int) -> Any:
    text = prompt.render(
        question=item.prompt_text,
        answer_a=item.answer_of(first).text,
        answer_b=item.answer_of(second).text,
    )
    return ChatRequest(
        messages=[{"role": "user", "content": text}],
        json_schema=prompt.schema,
        temperature=0.0,
        max_tokens=max_tokens,
        seed=0,
    )


def _parsed(result: ChatResult) -> Parsed:
    if result.error:
        return parse_verdict("pairwise", "", result.error)
    completion = result.completions[0] if result.completions else None
    if completion is None:
        return parse_verdict("pairwise", "", "no completion")
    parsed = parse_verdict("pairwise", completion.text)
    if not parsed.ok and completion.finish_reason == "length":
        return Parsed(None, parsed.reason, f"cut at max_tokens ({parsed.problem})")
    return parsed


def combine(ab: str | int | None, ba: str | int | None) -> tuple[str, bool | None]:
    """The pair's verdict (in model_a/model_b terms) from the two orders' raw verdicts:
    the same preference both ways stands; one that flips with the order is a tie."""
    if ab is None or ba is None:
        return UNPARSED, None
    swapped = {"A": "B", "B": "A", "tie": "tie"}[str(ba)]
    if ab == swapped:
        return str(ab), True
    return "tie", False


def verdict_row(
    comparison: str, judge: str, version: str, task: PairTask, ab: ChatResult, ba: ChatResult
) -> dict[str, Any]:
    first, second = _parsed(ab), _parsed(ba)
    verdict, consistent = combine(first.value, second.value)
    return {
        "id": str(uuid.uuid4()),
        "comparison": comparison,
        "prompt_id": task.item.prompt_id,
        "voter": voter_of(judge),
        "judge": judge,
        "prompt_version": version,
        "verdict": verdict,
        "model_a": task.model_a,
        "model_b": task.model_b,
        "sample_a": task.item.answer_of(task.model_a).sample_id,
        "sample_b": task.item.answer_of(task.model_b).sample_id,
        "winner": {"A": task.model_a, "B": task.model_b}.get(verdict),
        "verdict_ab": None if first.value is None else str(first.value),
        "verdict_ba": None if second.value is None else str(second.value),
        "consistent": consistent,
        "reason_ab": first.reason,
        "reason_ba": second.reason,
        "problem": "; ".join(p for p in (first.problem, second.problem) if p) or None,
        "latency_s": ab.latency_s + ba.latency_s,
        "created_at": datetime.now(UTC),
    }


def store_verdicts(rows: Sequence[dict[str, Any]]) -> None:
    """All `rows` as one append to the verdicts table (made on first use)."""
    from generators.row_tables import ensure_row_table
    from podium.store.write.write import write_table

    ensure_row_table(VERDICTS_TABLE, VERDICTS_SCHEMA, kinds.COMPARE_VOTES)
    data = pa.Table.from_pylist(list(rows), schema=VERDICTS_SCHEMA)
    write_table(VERDICTS_TABLE, data, mode="append")


def list_verdicts(comparison: str | None = None, judge: str | None = None) -> list[dict[str, Any]]:
    """Judge verdicts (of one comparison, of one judge), oldest first."""
    if not table_exists(VERDICTS_TABLE):
        return []
    rows = read_small(VERDICTS_TABLE)[0].to_pylist()
    if comparison is not None:
        rows = [r for r in rows if r["comparison"] == full_name(comparison)]
    if judge is not None:
        rows = [r for r in rows if r["judge"] == judge]
    return sorted(rows, key=lambda r: r["created_at"])


def _pair_key(row: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (row["judge"], row["prompt_version"], row["prompt_id"], row["model_a"], row["model_b"])


def judge_pairs(
    endpoint: Endpoint,
    prompt: JudgePrompt,
    tasks: Sequence[PairTask],
    cfg: JudgeConfig,
    reporter: Reporter,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> list[tuple[ChatResult, ChatResult]]:
    """Both orders of every pair, one batch; results in task order."""
    requests = [
        r
        for t in tasks
        for r in (
            _request(prompt, t.item, t.model_a, t.model_b, max_tokens),
            _request(prompt, t.item, t.model_b, t.model_a, max_tokens),
        )
    ]
    results = generate_batch(
        endpoint, requests, concurrency=cfg.concurrency, reporter=reporter, retry=cfg.retry
    )
    return [(results[2 * i], results[2 * i + 1]) for i in range(len(tasks))]


def run_judge(cfg: JudgeConfig, reporter: Reporter) -> JobOutputs:
    registered = get_judge_or_none(cfg.judge)
    if registered is not None and registered.mode == "rubric":  # each answer scored alone
        from podium.compare.judge_scores import score_comparison

        rubric = resolve_judge(cfg.judge, "rubric", cfg.prompt)  # its own prompt only
        comparison = load_comparison(cfg.comparison)
        items = sampled_items(comparison, cfg.sample, cfg.seed)
        return score_comparison(
            comparison, rubric, reporter, items, cfg.concurrency, cfg.max_tokens
        )
    named = resolve_judge(cfg.judge, "pairwise", cfg.prompt)  # an unknown judge: refused
    prompt = judge_prompt("pairwise", named.prompt)  # a prompt without placeholders: refused
    comparison = load_comparison(cfg.comparison)
    judge = named.name
    tasks = pair_tasks(comparison, cfg.sample, cfg.seed)
    if not tasks:
        raise InvalidInput(f"Comparison {comparison.name} has no pair of answers to judge.")
    done = {_pair_key(r) for r in list_verdicts(comparison.name, judge)}
    todo = [
        t
        for t in tasks
        if (judge, prompt.version, t.item.prompt_id, t.model_a, t.model_b) not in done
    ]
    reporter.log(
        f"{len(tasks)} pairs, {len(tasks) - len(todo)} already judged by {judge} "
        f"({prompt.version}); {2 * len(todo)} requests"
    )
    rows: list[dict[str, Any]] = []
    if todo:
        reporter.phase(f"judging with {judge}")
        endpoint = endpoint_for(named.model, reporter=reporter)
        max_tokens = cfg.max_tokens or named.max_tokens
        results = judge_pairs(endpoint, prompt, todo, cfg, reporter, max_tokens)
        rows = [
            verdict_row(comparison.name, judge, prompt.version, t, ab, ba)
            for t, (ab, ba) in zip(todo, results, strict=True)
        ]
        store_verdicts(rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("A", "B", "tie", UNPARSED)}
    parsed = [r for r in rows if r["consistent"] is not None]
    summary = {
        "comparison": comparison.name,
        "judge": judge,
        "prompt_version": prompt.version,
        "pairs": len(tasks),
        "judged": len(rows),
        "skipped": len(tasks) - len(todo),
        "verdicts": counts,
        "position_consistent": sum(bool(r["consistent"]) for r in parsed),
        "latency_s": round(sum(r["latency_s"] for r in rows), 3),
    }
    return JobOutputs(
        tables=[full_name(VERDICTS_TABLE)], checkpoints=[named.model], summary=summary
    )
