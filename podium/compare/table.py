"""The comparison table and reading it back: prompts with every checkpoint's answer.

One row per prompt and checkpoint (`side` is the checkpoint's column in the
side-by-side view). The table's properties say what was compared; see
`podium.compare.job`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from podium.compare.checks import AnswerChecks, load_checks
from podium.errors import InvalidInput
from podium.store.catalog import kinds
from podium.store.catalog.catalog import full_name, load_table
from podium.store.catalog.kinds import tables_of_kind
from podium.store.read.read import read_small
from podium.store.schema import PROP_KIND, PROP_LINEAGE_INPUT

COMPARISON_KIND = kinds.COMPARISON
PROP_MODELS = "podium.compare.models"
PROP_SAMPLE_TABLES = "podium.compare.sample_tables"
PROP_SAMPLING = "podium.compare.sampling"
PROP_CHECKS = "podium.compare.checks"

_MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])
COMPARISON_SCHEMA = pa.schema(
    [
        pa.field("prompt_id", pa.string()),
        pa.field("prompt", pa.list_(pa.field("element", _MESSAGE))),
        pa.field("model", pa.string()),
        pa.field("side", pa.int32()),
        pa.field("sample_table", pa.string()),
        pa.field("sample_id", pa.string()),
        pa.field("completion", pa.string()),
        pa.field("finish_reason", pa.string()),
        pa.field("error", pa.string()),
        pa.field("completion_tokens", pa.int32()),
        pa.field("checks", pa.string()),  # JSON, see podium.compare.checks.AnswerChecks
        pa.field("passed", pa.bool_()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
    ]
)


@dataclass(frozen=True)
class Answer:
    model: str
    sample_id: str | None
    sample_table: str
    text: str
    finish_reason: str | None
    error: str | None
    checks: AnswerChecks

    @property
    def failed_checks(self) -> list[str]:
        return [name for name, r in self.checks.results.items() if not r["ok"]]


@dataclass(frozen=True)
class Item:
    """One prompt and the answers, in the comparison's model order."""

    prompt_id: str
    prompt: list[dict[str, str]]
    answers: list[Answer]

    def answer_of(self, model: str) -> Answer:
        return next(a for a in self.answers if a.model == model)

    @property
    def prompt_text(self) -> str:
        users = [m["content"] for m in self.prompt if m["role"] == "user"]
        return users[-1] if users else ""

    def differ(self) -> bool:
        return len({a.text.strip() for a in self.answers}) > 1


@dataclass(frozen=True)
class Comparison:
    name: str
    models: list[str]
    input_ref: str
    sample_tables: dict[str, str]
    sampling: dict[str, Any]
    checks: list[str]
    snapshot_id: int | None
    items: list[Item] = field(default_factory=list)

    def item(self, prompt_id: str) -> Item:
        for it in self.items:
            if it.prompt_id == prompt_id:
                return it
        raise InvalidInput(f"Comparison {self.name} has no prompt {prompt_id!r}.")


def is_comparison(properties: dict[str, str]) -> bool:
    return properties.get(PROP_KIND) == COMPARISON_KIND


def list_comparisons() -> list[str]:
    return tables_of_kind(COMPARISON_KIND)


def load_comparison(name: str) -> Comparison:
    table = load_table(name)
    props = dict(table.properties)
    if not is_comparison(props):
        raise InvalidInput(
            f"Table {full_name(name)} is not a comparison; make one with "
            "`podium compare --models A,B --table NS.PROMPTS --out NS.NAME`."
        )
    data, sid = read_small(name)
    models: list[str] = json.loads(props[PROP_MODELS])
    grouped: dict[str, dict[str, Answer]] = {}
    prompts: dict[str, list[dict[str, str]]] = {}
    for row in data.to_pylist():
        prompts.setdefault(row["prompt_id"], row["prompt"])
        grouped.setdefault(row["prompt_id"], {})[row["model"]] = Answer(
            row["model"],
            row["sample_id"],
            row["sample_table"],
            row["completion"] or "",
            row["finish_reason"],
            row["error"],
            load_checks(row["checks"]),
        )
    items = [
        Item(pid, prompts[pid], [answers[m] for m in models if m in answers])
        for pid, answers in grouped.items()
    ]
    return Comparison(
        name=full_name(name),
        models=models,
        input_ref=props.get(PROP_LINEAGE_INPUT, ""),
        sample_tables=json.loads(props.get(PROP_SAMPLE_TABLES, "{}")),
        sampling=json.loads(props.get(PROP_SAMPLING, "{}")),
        checks=json.loads(props.get(PROP_CHECKS, "[]")),
        snapshot_id=sid,
        items=items,
    )
