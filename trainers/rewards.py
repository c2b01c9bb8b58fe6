"""GRPO rewards built from Podium's own parts.

A reward is named by a rule string (`RewardSpec.rule`):

- `validate:SPEC`  1 when the completion passes a Podium validation rule (e.g.
  `validate:json`, a JSON Schema rule), else 0.
- `sandbox:output` 1 when the completion's code, run in the sandbox, prints the
  expected output: the row's metadata `expected_output`, else what the reference
  answer's code prints in the sandbox. A completion's code is its first fenced block,
  else the whole text: the policy of `podium.validate.code_answers`, graded by
  `generators.grading` exactly as Compare grades it.
- `sandbox:tests`  1 when the completion's code followed by the row's unit tests
  (metadata `tests`) exits cleanly in the sandbox.
- `exact_match`    1 when the completion equals the reference answer (trimmed).
- `length:N`       0 up to N characters, falling linearly to -1 at 2N.
- `judge:NAME`     a rubric judge's score of the completion (1-10, JSON by guided
  decoding) as (score - 1) / 9; an unparsed verdict scores 0. NAME is a rubric judge
  (`podium judge add --mode rubric`: its model, prompt and max_tokens) or a registered
  model with the built-in rubric-v1 prompt. The model's server is called for each
  batch (started on first use); the mean request latency and the share unparsed go
  to the run's metrics as `judge/latency_s` and `judge/unparsed` (TRL's `log_metric`).

Each becomes a TRL reward function `(prompts, completions, **columns) -> list[float]`
named after its rule, so TRL logs `rewards/<name>/mean` and `/std` per reward, and
`RewardSpec.weight` goes to GRPOConfig.reward_weights. Rules are resolved by
`check_rewards` before any model loads.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podium.errors import InvalidInput
from trainers.config import RewardSpec
from trainers.data import parse_metadata

RewardFn = Callable[..., list[float]]
RULES_HELP = "validate:RULE, sandbox:output, sandbox:tests, exact_match, length:N, judge:NAME"
# The rubric scoring lives with the judges (podium.compare, beside trainers in the
# layers): loaded by path when a judge reward is built, as job kinds are.
_JUDGE_SCORING = "podium.compare.judge_rubric"


def completion_text(completion: Any) -> str:
    """TRL passes conversational completions as [{"role": "assistant", "content": ...}]."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


@dataclass
class SampleTap:
    """The latest scored completions, for the callback to report as samples."""

    keep: int = 2
    _rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(
        self, name: str, prompts: Sequence[Any], completions: Sequence[Any], scores: list[float]
    ) -> None:
        with self._lock:
            for i in range(min(self.keep, len(completions))):
                row = self._rows.setdefault(i, {})
                if "completion" not in row:
                    prompt = prompts[i]
                    row["prompt"] = (
                        completion_text(prompt[-1:]) if isinstance(prompt, list) else str(prompt)
                    )
                    row["completion"] = completion_text(completions[i])
                row[f"reward/{name}"] = scores[i]

    def take(self) -> list[dict[str, Any]]:
        with self._lock:
            rows, self._rows = [self._rows[i] for i in sorted(self._rows)], {}
        return rows


def reward_name(rule: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", rule)


def _exact_match() -> RewardFn:
    def score(
        prompts: Any, completions: Sequence[Any], answer: Sequence[str], **_: Any
    ) -> list[float]:
        return [
            1.0 if completion_text(c).strip() == (a or "").strip() else 0.0
            for c, a in zip(completions, answer, strict=True)
        ]

    return score


def _length(limit: int) -> RewardFn:
    def score(prompts: Any, completions: Sequence[Any], **_: Any) -> list[float]:
        return [-min(1.0, max(0, len(completion_text(c)) - limit) / limit) for c in completions]

    return score


def _validation(spec: str, table_properties: dict[str, str] | None, table: str) -> RewardFn:
    from podium.validate.extract import extract
    from podium.validate.rules import parse_rule

    rule = parse_rule(spec, table_properties, table)

    def score(
        prompts: Any, completions: Sequence[Any], metadata: Sequence[str] | None = None, **_: Any
    ) -> list[float]:
        metas: Sequence[str | None] = metadata or [None] * len(completions)
        # A fenced block is checked when there is one: models often wrap JSON in ```json.
        return [
            1.0 if rule.check(extract(completion_text(c), "fenced")[0], m).ok else 0.0
            for c, m in zip(completions, metas, strict=True)
        ]

    return score


def _sandbox(mode: str) -> RewardFn:
    from trainers.sandbox_runs import SandboxScorer

    scorer = SandboxScorer()

    def score(
        prompts: Any,
        completions: Sequence[Any],
        answer: Sequence[str],
        metadata: Sequence[str],
        **_: Any,
    ) -> list[float]:
        texts = [completion_text(c) for c in completions]
        metas = [parse_metadata(m) for m in metadata]
        if mode == "tests":
            return scorer.tests_pass(texts, [str(m.get("tests") or "") for m in metas])
        return scorer.output_matches(texts, [m.get("expected_output") for m in metas], answer)

    return score


def _judge(model: str) -> RewardFn:
    import importlib
    import time

    from generators.client import Endpoint, endpoint_for

    scoring = importlib.import_module(_JUDGE_SCORING)
    judge = scoring.rubric_judge(model)  # an unknown or pairwise judge fails before training
    prompt = scoring.rubric_prompt(judge.prompt)
    served: list[Endpoint] = []

    def score(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        if not served:  # the server starts on the first batch, not when rules are checked
            served.append(endpoint_for(judge.model))
        questions = [completion_text(p[-1:]) if isinstance(p, list) else str(p) for p in prompts]
        started = time.perf_counter()
        scores = scoring.score_with(
            served[0],
            prompt,
            questions,
            [completion_text(c) for c in completions],
            max_tokens=judge.max_tokens,
        )
        if log_metric is not None and scores:
            log_metric("judge/latency_s", sum(s.latency_s for s in scores) / len(scores))
            log_metric("judge/batch_s", time.perf_counter() - started)
            log_metric("judge/unparsed", sum(s.value is None for s in scores) / len(scores))
        return [0.0 if s.value is None else (s.value - 1) / 9 for s in scores]

    return score


def make_reward(
    rule: str, table_properties: dict[str, str] | None = None, table: str = ""
) -> RewardFn:
    """The reward function for one rule string; InvalidInput if the rule is unknown.

    `table_properties` let `validate:json-schema` use the schema stored on the table.
    """
    kind, _, arg = rule.partition(":")
    if kind == "exact_match" and not arg:
        fn = _exact_match()
    elif kind == "length":
        try:
            limit = int(arg)
        except ValueError:
            raise InvalidInput(
                f"Reward {rule!r}: write length:N with N a number of characters."
            ) from None
        if limit < 1:
            raise InvalidInput(f"Reward {rule!r}: N must be at least 1.")
        fn = _length(limit)
    elif kind == "validate" and arg:
        fn = _validation(arg, table_properties, table)
    elif kind == "sandbox" and arg in ("output", "tests"):
        fn = _sandbox(arg)
    elif kind == "judge" and arg:
        fn = _judge(arg)
    else:
        raise InvalidInput(f"Unknown reward rule {rule!r}; use one of: {RULES_HELP}.")
    fn.__name__ = reward_name(rule)
    return fn


def build_rewards(
    specs: Sequence[RewardSpec],
    tap: SampleTap | None = None,
    table_properties: dict[str, str] | None = None,
    table: str = "",
) -> tuple[list[RewardFn], list[float]]:
    """TRL reward functions and their weights; each records its scores into `tap`."""
    funcs: list[RewardFn] = []
    for spec in specs:
        fn = make_reward(spec.rule, table_properties, table)
        funcs.append(_tapped(fn, tap) if tap else fn)
    names = [f.__name__ for f in funcs]
    if len(set(names)) != len(names):
        raise InvalidInput(
            f"The same reward appears twice ({', '.join(names)}); merge their weights."
        )
    return funcs, [spec.weight for spec in specs]


def check_rewards(
    specs: Sequence[RewardSpec], table_properties: dict[str, str] | None = None, table: str = ""
) -> None:
    """Resolve every rule now so a typo fails before any model loads."""
    build_rewards(specs, None, table_properties, table)


EXACT_MATCH_SAMPLE_ROWS = 64  # reference answers the reachability check measures


def check_exact_match_reachable(
    specs: Sequence[RewardSpec],
    table: str,
    snapshot_id: int | None,
    checkpoint: str | Path,
    max_completion_length: int,
) -> None:
    """Refuse `exact_match` where no reference answer fits the completion budget: every
    completion would be cut before it could equal its answer, score 0, and the run would
    not learn (24-token completions against the demo's 40-token answers). Measured on
    the first rows' last assistant turns with the checkpoint's own tokenizer."""
    if not any(spec.rule == "exact_match" for spec in specs):
        return
    tokenizer_file = Path(checkpoint) / "tokenizer.json"
    if not tokenizer_file.is_file():
        return  # nothing to count with; the run's no-signal warning still speaks
    from itertools import islice

    from tokenizers import Tokenizer

    from podium.store.read.read import iter_batches

    answers = []
    batches = iter_batches(table, snapshot_id, columns=["messages"])
    for row in islice((r for b in batches for r in b.to_pylist()), EXACT_MATCH_SAMPLE_ROWS):
        turns = [m for m in row["messages"] or [] if m["role"] == "assistant"]
        if turns and (turns[-1]["content"] or "").strip():
            answers.append(turns[-1]["content"].strip())
    if not answers:
        return
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    shortest = min(len(tokenizer.encode(a, add_special_tokens=False).ids) for a in answers)
    if shortest > max_completion_length:
        raise InvalidInput(
            f"Reward exact_match can never be earned on {table}: its shortest reference "
            f"answer (of the first {len(answers)} rows) is {shortest} tokens, longer than "
            f"max_completion_length ({max_completion_length}), so every completion would "
            "score 0 and the run would not learn. Raise max_completion_length to at least "
            f"{shortest}, or choose a reward that tells completions apart (length:N, "
            "validate:RULE)."
        )


def _tapped(fn: RewardFn, tap: SampleTap) -> RewardFn:
    def score(prompts: Any, completions: Sequence[Any], **kwargs: Any) -> list[float]:
        values = fn(prompts, completions, **kwargs)
        tap.record(fn.__name__, prompts, completions, values)
        return values

    score.__name__ = fn.__name__
    return score
