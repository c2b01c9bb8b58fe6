"""A judge's rubric scores (1-10 with a reason) for question/answer pairs: what the
`rubric` signal (`podium.signals.rubric`) and the GRPO judge reward call.

Every request asks for JSON of the rubric schema (vLLM's guided decoding makes it
parse); a reply that does not parse is a score of None with the problem, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generators.client import ChatRequest, ChatResult, Endpoint, endpoint_for, generate_batch
from generators.retry import RetryPolicy
from podium.compare.judge_prompts import (
    DEFAULT_MAX_TOKENS,
    JudgePrompt,
    Parsed,
    check_max_tokens,
    judge_prompt,
    parse_verdict,
)
from podium.compare.judge_registry import Judge, resolve_judge
from podium.reporting import Reporter


@dataclass(frozen=True)
class Score:
    value: int | None  # 1-10; None: unparsed
    reason: str
    problem: str
    latency_s: float


def rubric_prompt(text: str | None) -> JudgePrompt:
    """The rubric prompt (built-in rubric-v1 or `text`, refused without its placeholders)."""
    return judge_prompt("rubric", text)


__all__ = ["check_max_tokens", "rubric_judge", "rubric_prompt", "score_texts", "score_with"]


def rubric_judge(name: str, prompt_text: str | None = None) -> Judge:
    """A rubric judge (`podium judge add --mode rubric`), or a registered model with
    `prompt_text` (else rubric-v1); refused: unknown, pairwise, or two prompts."""
    return resolve_judge(name, "rubric", prompt_text)


def _score(result: ChatResult) -> Score:
    if result.error or not result.completions:
        parsed = parse_verdict("rubric", "", result.error or "no completion")
    else:
        completion = result.completions[0]
        parsed = parse_verdict("rubric", completion.text)
        if not parsed.ok and completion.finish_reason == "length":
            parsed = Parsed(None, parsed.reason, f"cut at max_tokens ({parsed.problem})")
    value = parsed.value if isinstance(parsed.value, int) else None
    return Score(value, parsed.reason, parsed.problem, result.latency_s)


def score_with(
    endpoint: Endpoint,
    prompt: JudgePrompt,
    questions: Sequence[str],
    answers: Sequence[str],
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    concurrency: int = 16,
    retry: RetryPolicy | None = None,
    reporter: Reporter | None = None,
) -> list[Score]:
    """One rubric score per (question, answer), in order."""
    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": prompt.render(question=q, answer=a)}],
            json_schema=prompt.schema,
            temperature=0.0,
            max_tokens=max_tokens,
            seed=0,
        )
        for q, a in zip(questions, answers, strict=True)
    ]
    results = generate_batch(
        endpoint,
        requests,
        concurrency=concurrency,
        reporter=reporter,
        retry=retry,
        report_progress=False,
    )
    return [_score(r) for r in results]


def score_texts(
    judge: str,
    prompt_text: str | None,
    questions: Sequence[str],
    answers: Sequence[str],
    max_tokens: int | None = None,
    concurrency: int = 16,
) -> list[Score]:
    """Rubric scores by `judge` (a rubric judge or a registered model; its vLLM server
    started if needed); `max_tokens` None: the judge's own."""
    named = rubric_judge(judge, prompt_text)
    return score_with(
        endpoint_for(named.model),
        rubric_prompt(named.prompt),
        questions,
        answers,
        max_tokens=max_tokens or named.max_tokens,
        concurrency=concurrency,
    )
