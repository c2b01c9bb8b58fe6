"""JSON Schema patterns with Unicode property classes (`\\p{L}`), evaluated, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.errors import InvalidInput
from podium.validate.json_rules import JsonSchemaRule, compile_schema
from podium.validate.rules import parse_rule

LETTERS = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^\\p{L}+$"}},
    "required": ["name"],
}
UPPER_KEYS = {
    "type": "object",
    "patternProperties": {"^\\p{Lu}": {"type": "integer"}},
    "additionalProperties": False,
}


def _rule(schema: dict[str, object]) -> JsonSchemaRule:
    return JsonSchemaRule(compile_schema(schema, "test schema"))


def test_letter_class_pattern_passes_letters_in_any_script() -> None:
    rule = _rule(LETTERS)
    assert rule.check('{"name": "Zoë"}').ok
    assert rule.check('{"name": "Дмитрий"}').ok


def test_letter_class_pattern_fails_digits_with_the_pattern_named() -> None:
    result = _rule(LETTERS).check('{"name": "R2D2"}')
    assert not result.ok
    assert result.kind == "pattern"
    assert "R2D2" in result.message and "\\p{L}" in result.message
    assert result.message.endswith("at $.name")


def test_pattern_properties_with_a_property_class() -> None:
    rule = _rule(UPPER_KEYS)
    assert rule.check('{"Été": 1, "Ωmega": 2}').ok
    typed = rule.check('{"Été": "one"}')
    assert not typed.ok and typed.kind == "type" and "$.Été" in typed.message
    extra = rule.check('{"Été": 1, "été": 2}')
    assert not extra.ok and extra.kind == "additional-properties"
    assert "'été'" in extra.message
    assert extra.column == len('{"Été": 1, ') + 1  # points at the key no pattern matched


def test_unevaluated_properties_with_a_property_class_do_not_crash() -> None:
    schema = {"patternProperties": {"^\\p{Lu}": True}, "unevaluatedProperties": False}
    rule = _rule(schema)
    assert rule.check('{"Été": 1}').ok
    assert not rule.check('{"été": 1}').ok


@pytest.mark.parametrize(
    ("schema", "pattern"),
    [
        ({"type": "string", "pattern": "[\\p{L}-"}, "[\\p{L}-"),
        ({"patternProperties": {"(\\p{Lu}": {}}}, "(\\p{Lu}"),
    ],
)
def test_invalid_pattern_is_a_rule_error_naming_it(
    tmp_path: Path, schema: dict[str, object], pattern: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        parse_rule(f"json-schema:{path}")
    message = str(caught.value)
    assert f"invalid pattern {pattern!r}" in message and str(path) in message


def test_stored_schema_with_property_class_is_accepted() -> None:
    rule = parse_rule("json-schema", {"podium.json_schema": json.dumps(LETTERS)}, "t.people")
    assert rule.check('{"name": "Łukasz"}').ok
    assert not rule.check('{"name": "Łukasz 2"}').ok
