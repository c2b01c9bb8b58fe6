"""Rubric: a judge model's quality score (1-10, with a reason) of every row's answer
(a row signal).

A row's answer is its last assistant turn among the chosen turns and its question the
last user turn before it; a row without an assistant turn gets no value. The judge is a
registered checkpoint or endpoint asked for JSON of a schema (guided decoding on
vLLM): a reply that does not parse is stored with a null `score` and its `problem`,
never guessed. The scoring lives with the judges (`podium.compare.judge_rubric`, a
layer above the signals); it is loaded by path when the signal runs, as job kinds are.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import pyarrow as pa
from pydantic import Field, field_validator

from podium.errors import InvalidInput
from podium.signals.settings import SignalSettings
from podium.signals.signal import RowSignal
from podium.signals.turns import Turns

_SCORING = "podium.compare.judge_rubric"


def _scoring(attr: str) -> Any:
    return getattr(importlib.import_module(_SCORING), attr)


class RubricSettings(SignalSettings):
    judge: str = Field(
        "",
        description="A rubric judge (`podium judge add --mode rubric`), or a registered "
        "checkpoint or endpoint that scores with the prompt below.",
    )
    prompt: str | None = Field(
        None,
        description="Rubric prompt with {question} and {answer} (blank: the judge's own, "
        "else the built-in rubric-v1).",
    )
    max_tokens: int | None = Field(
        None, description="Most tokens per verdict (blank: the judge's own, 512; at least 464)."
    )
    concurrency: int = Field(16, ge=1, le=256, description="Requests in flight at once.")

    @field_validator("prompt")
    @classmethod
    def _has_placeholders(cls, prompt: str | None) -> str | None:
        if prompt is not None and prompt.strip():
            _scoring("rubric_prompt")(prompt)  # refused when the card is made
        return prompt


class Rubric(RowSignal[RubricSettings]):
    name: ClassVar[str] = "rubric"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "A judge model's quality score 1-10 of each row's answer."
    schema: ClassVar[pa.Schema] = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("score", pa.int32()),  # null: the reply did not parse
            pa.field("reason", pa.string()),
            pa.field("problem", pa.string()),
        ]
    )

    def __init__(self, settings: RubricSettings) -> None:
        super().__init__(settings)
        self._scored = 0
        self._unparsed = 0

    def check(self) -> None:
        if not self.settings.judge.strip():
            raise InvalidInput(
                "The rubric signal needs a judge: --set rubric.judge=NAME (a rubric judge, "
                "see `podium judge list`, or a model, see `podium models list`)."
            )
        # an unknown judge or model, or a pairwise judge, is named before anything runs
        _scoring("rubric_judge")(self.settings.judge, self.settings.prompt)
        if self.settings.max_tokens is not None:  # one that could cut a verdict: refused
            _scoring("check_max_tokens")(self.settings.max_tokens)

    def pinned(self) -> dict[str, Any]:
        judge = _scoring("rubric_judge")(self.settings.judge, self.settings.prompt)
        return {"prompt_version": judge.prompt_version, "model": judge.model}

    def compute(self, turns: Turns) -> pa.RecordBatch:
        questions: dict[int, str] = {}
        pairs: dict[int, tuple[str, str]] = {}
        for row, role, text in zip(turns.row_of.tolist(), turns.roles, turns.texts, strict=True):
            if role == "user":
                questions[row] = text
            elif role == "assistant":
                pairs[row] = (questions.get(row, ""), text)
        rows = sorted(pairs)
        if not rows:
            return self.empty()
        scores = _scoring("score_texts")(
            self.settings.judge,
            self.settings.prompt,
            [pairs[r][0] for r in rows],
            [pairs[r][1] for r in rows],
            self.settings.max_tokens,
            self.settings.concurrency,
        )
        self._scored += sum(s.value is not None for s in scores)
        self._unparsed += sum(s.value is None for s in scores)
        return pa.RecordBatch.from_pylist(
            [
                {
                    "id": turns.ids[r],
                    "score": s.value,
                    "reason": s.reason,
                    "problem": s.problem or None,
                }
                for r, s in zip(rows, scores, strict=True)
            ],
            schema=self.schema,
        )

    def summary(self) -> dict[str, int]:
        return {"scored": self._scored, "unparsed": self._unparsed}
