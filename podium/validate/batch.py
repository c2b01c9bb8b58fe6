"""Checking many texts at once: the loop every whole-table run spends its time in.

JSON is parsed once per text and the parsed value is shared by every JSON-based rule
(`json-schema`, `tool-call`). A text that does not parse is reported once, under the
`json` rule when it was asked for, so a syntax error is not counted again as a schema
error. A turn whose content is not text is reported once, under the first rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from podium.validate.extract import Extract, extract
from podium.validate.json_rules import json_syntax_error, not_text
from podium.validate.result import Result
from podium.validate.rules import Rule


@dataclass(frozen=True)
class Plan:
    """Rules split the way the loop uses them."""

    rules: tuple[Rule, ...]
    parse_rule: str | None  # the rule that reports a JSON syntax error
    value_rules: tuple[Rule, ...]  # check an already parsed value
    text_rules: tuple[Rule, ...]  # parse for themselves (xml, python, regex)

    @classmethod
    def of(cls, rules: Sequence[Rule]) -> Plan:
        json_based = [r for r in rules if r.parses_json]
        parse_rule = None
        if json_based:
            parse_rule = next((r.name for r in json_based if r.name == "json"), json_based[0].name)
        return cls(
            tuple(rules),
            parse_rule,
            tuple(r for r in json_based if r.name != "json"),
            tuple(r for r in rules if not r.parses_json),
        )


def check_texts(
    rules: Sequence[Rule] | Plan,
    texts: Sequence[object],
    metadata: Sequence[str | None] | None = None,
    mode: Extract = "whole",
) -> list[tuple[int, Result]]:
    """(index, failure) for every failing text and rule, in text order."""
    plan = rules if isinstance(rules, Plan) else Plan.of(rules)
    out: list[tuple[int, Result]] = []
    first_rule = plan.rules[0].name
    parse_rule, value_rules, text_rules = plan.parse_rule, plan.value_rules, plan.text_rules
    fenced = mode != "whole"  # auto and fenced: the first fenced block, if any
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    for i, text in enumerate(texts):
        if text.__class__ is not str:
            out.append((i, not_text(first_rule, text)))
            continue
        block_offset = 0
        if fenced:
            text, block_offset = extract(text, "fenced")
        meta = metadata[i] if metadata is not None else None
        if parse_rule is not None:
            try:
                value = loads(text)
            except decode_error as exc:
                failure = json_syntax_error(parse_rule, text, exc)
                out.append((i, failure.in_block(block_offset)))
            else:
                for rule in value_rules:
                    result = rule.check_value(value, text, meta)  # type: ignore[attr-defined]
                    if not result.ok:
                        out.append((i, result.in_block(block_offset)))
        for rule in text_rules:
            result = rule.check(text, meta)
            if not result.ok:
                out.append((i, result.in_block(block_offset)))
    return out
