"""Judge prompts: versioned templates, the JSON schema of a verdict, and strict parsing.

A pairwise prompt needs `{question}`, `{answer_a}` and `{answer_b}`; a rubric prompt
needs `{question}` and `{answer}`. A prompt without them is refused before any request.
The answers are put in with one pass over the template, so an answer that contains
`{answer_b}` stays text. A verdict is a JSON object (`verdict`/`score` and `reason`),
asked for with a JSON schema (vLLM's guided decoding makes it always parse); what does
not parse is recorded as unparsed, never guessed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from podium.errors import InvalidInput

Mode = Literal["pairwise", "rubric"]
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "pairwise": ("question", "answer_a", "answer_b"),
    "rubric": ("question", "answer"),
}
REASON_CHARS = 100  # a reason is a sentence; bounded so that every verdict fits max_tokens
# The most tokens a verdict the schema allows can take: each character of the reason is
# at most 4 tokens (its UTF-8 bytes, for a byte-level tokenizer), plus the JSON around
# it. A smaller max_tokens could cut a legal verdict (the base model once repeated
# "1.1.1..." until 256 tokens cut it, short of the old 400 characters), so none is allowed.
VERDICT_TOKENS = 4 * REASON_CHARS + 64
DEFAULT_MAX_TOKENS = 512
MAX_TOKENS = 4096

PAIRWISE_V1 = """You are an impartial judge. Compare two answers to the user's question \
and decide which one is better: more helpful, correct and relevant. Do not let the \
order of the answers or their length decide. Reply with A, B or tie and a short reason.

[Question]
{question}

[Answer A]
{answer_a}

[Answer B]
{answer_b}"""

RUBRIC_V1 = """You are an impartial judge. Rate the quality of the answer to the user's \
question from 1 (useless or wrong) to 10 (correct, complete and clear), with a short \
reason.

[Question]
{question}

[Answer]
{answer}"""

BUILT_IN = {"pairwise": ("pairwise-v1", PAIRWISE_V1), "rubric": ("rubric-v1", RUBRIC_V1)}

PAIRWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["A", "B", "tie"]},
        "reason": {"type": "string", "maxLength": REASON_CHARS},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 10},
        "reason": {"type": "string", "maxLength": REASON_CHARS},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}
_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class JudgePrompt:
    mode: Mode
    version: str  # "pairwise-v1", or "custom-<sha256 prefix>" for a prompt given as text
    text: str

    @property
    def schema(self) -> dict[str, Any]:
        return PAIRWISE_SCHEMA if self.mode == "pairwise" else RUBRIC_SCHEMA

    def render(self, **values: str) -> str:
        """The template with each placeholder replaced, in one pass (answers stay text)."""
        return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), self.text)


def judge_prompt(mode: Mode, text: str | None = None) -> JudgePrompt:
    """The built-in prompt of `mode`, or `text` checked for the placeholders it needs."""
    if text is None or not text.strip():
        version, built_in = BUILT_IN[mode]
        return JudgePrompt(mode, version, built_in)
    found = set(_FIELD.findall(text))
    missing = [p for p in PLACEHOLDERS[mode] if p not in found]
    if missing:
        needed = ", ".join("{" + p + "}" for p in PLACEHOLDERS[mode])
        raise InvalidInput(
            f"The {mode} judge prompt lacks {', '.join('{' + m + '}' for m in missing)}; "
            f"a {mode} prompt needs {needed}."
        )
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return JudgePrompt(mode, f"custom-{digest}", text)


def check_max_tokens(max_tokens: int) -> int:
    """`max_tokens` unless a verdict the schema allows could be cut by it."""
    if not VERDICT_TOKENS <= max_tokens <= MAX_TOKENS:
        raise InvalidInput(
            f"max_tokens {max_tokens} is outside {VERDICT_TOKENS}-{MAX_TOKENS}: a verdict "
            f"(a reason of up to {REASON_CHARS} characters, at most 4 tokens each, and its "
            f"JSON) takes up to {VERDICT_TOKENS} tokens, and a cut one does not parse."
        )
    return max_tokens


@dataclass(frozen=True)
class Parsed:
    value: str | int | None  # "A" | "B" | "tie" (pairwise), 1-10 (rubric), None: unparsed
    reason: str
    problem: str = ""  # why it is unparsed

    @property
    def ok(self) -> bool:
        return self.value is not None


def parse_verdict(mode: Mode, text: str, error: str | None = None) -> Parsed:
    """The verdict in a judge's reply; unparsed (with the problem) unless it is exactly a
    JSON object of the schema."""
    if error:
        return Parsed(None, "", f"request refused: {error}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return Parsed(None, "", f"not JSON: {text[:80]!r}")
    if not isinstance(data, dict):
        return Parsed(None, "", "not a JSON object")
    reason = data.get("reason")
    reason = reason if isinstance(reason, str) else ""
    if mode == "pairwise":
        verdict = data.get("verdict")
        if verdict in ("A", "B", "tie"):
            return Parsed(verdict, reason)
        return Parsed(None, reason, f"verdict {verdict!r} is not A, B or tie")
    score = data.get("score")
    if isinstance(score, int) and not isinstance(score, bool) and 1 <= score <= 10:
        return Parsed(score, reason)
    return Parsed(None, reason, f"score {score!r} is not an integer from 1 to 10")
