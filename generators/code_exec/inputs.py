"""Asking a checkpoint for inputs to a function, under a JSON-Schema constraint.

One chat request per function; the server may only answer `{"inputs": [str, ...]}`
(structured output), each string being the argument list of one call. What the model
writes is never trusted: `generators.code_exec.harness.parse_input` decides.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generators.client import ChatRequest, ChatResult, Endpoint, generate_batch
from generators.code_exec.harness import entry_arity
from podium.reporting import Reporter

SYSTEM = (
    "You write test inputs for Python functions. An input is the argument list of one "
    "call, written as Python literals (numbers, strings, lists, tuples, dicts, sets, "
    "True/False/None)."
)


@dataclass(frozen=True)
class Proposal:
    """What the model proposed for one function: input texts, or why there are none."""

    inputs: list[str]
    error: str | None = None


def input_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "inputs": {
                "type": "array",
                "items": {"type": "string", "maxLength": 300},
                "minItems": 1,
                "maxItems": n,
            }
        },
        "required": ["inputs"],
        "additionalProperties": False,
    }


# Example arguments, as many as the entry point takes: a small model copies the
# example's shape, so a two-argument example for a one-argument function taught it to
# propose calls with the wrong number of arguments.
EXAMPLE_ARGS = ("[3, 1, 2]", "2", "'abc'", "True")


def example_call(code: str, entry_point: str) -> str:
    try:
        arity = entry_arity(code, entry_point)
        count = arity.required or (0 if arity.maximum == 0 else 1)
    except ValueError:
        count = 1
    args = [EXAMPLE_ARGS[i % len(EXAMPLE_ARGS)] for i in range(count)]
    return ", ".join(args)


def input_prompt(code: str, entry_point: str, n: int) -> list[dict[str, str]]:
    example = example_call(code, entry_point)
    user = (
        f"Here is a Python function:\n\n```python\n{code.rstrip()}\n```\n\n"
        f"Propose {n} different inputs for `{entry_point}`. Write each input as the "
        f"arguments of one call, for example `{example}` for `{entry_point}({example})`. "
        'Answer with JSON: {"inputs": ["...", "..."]}.'
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_proposal(result: ChatResult) -> Proposal:
    if result.error:
        return Proposal([], f"the server refused the request: {result.error}")
    if not result.completions:
        return Proposal([], "the server returned no completion")
    text = result.completions[0].text
    try:
        data = json.loads(text)
        inputs = data["inputs"]
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
            raise TypeError
    except (json.JSONDecodeError, KeyError, TypeError):
        return Proposal([], f"the model's answer is not the requested JSON: {text[:200]!r}")
    return Proposal(inputs)


def propose_inputs(
    endpoint: Endpoint,
    functions: Sequence[tuple[str, str]],
    n: int,
    *,
    temperature: float = 0.8,
    max_tokens: int = 384,
    seed: int | None = None,
    concurrency: int = 16,
    reporter: Reporter | None = None,
) -> list[Proposal]:
    """For each (code, entry_point), up to `n` proposed input texts."""
    requests = [
        ChatRequest(
            messages=input_prompt(code, entry, n),
            json_schema=input_schema(n),
            temperature=temperature,
            max_tokens=max_tokens,
            seed=None if seed is None else seed + i,
        )
        for i, (code, entry) in enumerate(functions)
    ]
    # Per-request progress would replace the job's per-function progress.
    results = generate_batch(
        endpoint, requests, concurrency=concurrency, reporter=reporter, report_progress=False
    )
    return [parse_proposal(r) for r in results]
