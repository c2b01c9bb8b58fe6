"""The json and json-schema rules on hand-written samples, down to the error position."""

from __future__ import annotations

import pytest

from podium.errors import InvalidInput
from podium.validate.json_rules import JsonRule, JsonSchemaRule, compile_schema

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "text",
    ['{"a": 1}', "[1, 2.5, null, true]", '"é😀"', '{\n  "nested": {"x": [1, {"y": "z"}]}\n}'],
)
def test_json_accepts_valid(text: str) -> None:
    assert JsonRule().check(text).ok


@pytest.mark.parametrize(
    ("text", "kind", "line", "column", "at"),
    [
        ('{"a": 1,}', "trailing-comma", 1, 8, ","),
        ('{\n  "a": "😀😀",\n  "b": [1,\n 2,]\n}', "trailing-comma", 4, 3, ",]"),
        ('{"a": "hé', "unexpected-eof", 1, 10, ""),
        ('{"a": [1, 2', "unexpected-eof", 1, 12, ""),
        ("", "empty", 1, 1, ""),
        ('{"a": 1} x', "extra-data", 1, 10, "x"),
        ("{'a': 1}", "invalid-key", 1, 2, "'a'"),
        ('{"é": tru}', "invalid-literal", 1, 7, "tru"),
        ('{"a": NaN}', "invalid-value", 1, 7, "NaN"),
        ('{"a" 1}', "missing-colon", 1, 6, "1}"),
        ("[1 2]", "missing-comma", 1, 4, "2]"),
        ('{"a": "x\ty"}', "control-character", 1, 9, "\ty"),
        ('{"a": 01}', "invalid-number", 1, 7, "01"),
        ('{"a": "\ud800"}', "invalid-unicode", 1, 8, "\ud800"),
    ],
)
def test_json_rejects_with_position(text: str, kind: str, line: int, column: int, at: str) -> None:
    result = JsonRule().check(text)
    assert not result.ok
    assert (result.rule, result.kind) == ("json", kind)
    assert (result.line, result.column) == (line, column)
    assert text[result.offset :].startswith(at)


def test_json_reports_content_that_is_not_text() -> None:
    result = JsonRule().check(None)
    assert (result.ok, result.kind, result.offset) == (False, "not-text", None)


def _rule(schema: object = PERSON) -> JsonSchemaRule:
    return JsonSchemaRule(compile_schema(schema, "test schema"))


def test_schema_accepts_valid() -> None:
    assert _rule().check('{"name": "Ana", "age": 30, "tags": ["x"]}').ok


def test_schema_points_at_the_wrongly_typed_value() -> None:
    text = '{\n  "name": "Ana",\n  "age": "30"\n}'
    result = _rule().check(text)
    assert (result.kind, result.line, result.column) == ("type", 3, 10)
    assert text[result.offset :].startswith('"30"')
    assert "$.age" in result.message


def test_schema_points_into_arrays() -> None:
    text = '{"name": "Ana", "age": 3, "tags": ["a", 7]}'
    result = _rule().check(text)
    assert result.kind == "type"
    assert text[result.offset :].startswith("7]")
    assert "$.tags[1]" in result.message


def test_schema_missing_field_points_at_the_object() -> None:
    text = '[0, {"name": "Ana"}]'
    result = _rule({"type": "array", "prefixItems": [{}, PERSON]}).check(text)
    assert result.kind == "required"
    assert "'age' is a required property" in result.message
    assert text[result.offset :].startswith('{"name"')


def test_schema_extra_field_points_at_its_key() -> None:
    text = '{"name": "Ana", "age": 3, "phone": "555"}'
    result = _rule().check(text)
    assert result.kind == "additional-properties"
    assert text[result.offset :].startswith('"phone"')


def test_schema_rule_reports_syntax_errors_itself() -> None:
    result = _rule().check('{"name": "Ana",}')
    assert (result.rule, result.kind) == ("json-schema", "trailing-comma")


def test_schema_minimum_and_big_integers() -> None:
    assert _rule().check('{"name": "A", "age": -1}').kind == "minimum"
    # Integers past 64 bits are valid JSON; the reference validator decides.
    assert _rule().check('{"name": "A", "age": 123456789012345678901234567890}').ok


def test_invalid_schema_is_refused_naming_the_source() -> None:
    with pytest.raises(InvalidInput, match=r"my\.json is invalid at type"):
        compile_schema({"type": "objekt"}, "my.json")
    with pytest.raises(InvalidInput, match="must be an object"):
        compile_schema([1, 2], "my.json")


def test_remote_refs_are_never_fetched() -> None:
    with pytest.raises(InvalidInput, match="remote \\$ref"):
        compile_schema({"$ref": "https://example.com/schema.json"}, "remote.json")


def test_schema_draft_is_2020_12_unless_declared() -> None:
    # prefixItems exists only in 2020-12: under draft 7 it is ignored.
    schema = {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert not _rule(schema).check('["x"]').ok
    draft7 = {**schema, "$schema": "http://json-schema.org/draft-07/schema#"}
    assert _rule(draft7).check('["x"]').ok


def test_very_deep_documents_are_reported_not_crashed_on() -> None:
    deep_list = "[" * 5000 + "]" * 5000
    assert JsonRule().check(deep_list).kind == "too-deep"
    recursive = {"type": "object", "properties": {"a": {"$ref": "#"}}}
    text = '{"a":' * 900 + "1" + "}" * 900
    result = _rule(recursive).check(text)
    # The reference validator recurses too deep here; the Rust validator's error is used.
    assert result.kind == "type"
    assert text[result.offset :].startswith("1}")
    assert len(result.message) < 250
