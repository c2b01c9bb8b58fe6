"""Rule specs fail before any work; the batch loop parses once and reports once."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from podium.errors import InvalidInput
from podium.validate.batch import check_texts
from podium.validate.rules import PROP_JSON_SCHEMA, parse_rules

SCHEMA = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}


@pytest.fixture
def schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    return path


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("jsn", "Unknown rule 'jsn'"),
        ("xsd", "needs an argument"),
        ("regex:", "needs an argument"),
        ("json:x", "takes no argument"),
        ("regex:([a-z]", "not a valid regular expression"),
        ("json-schema:/no/such/file.json", "does not exist"),
        ("xsd:/no/such/file.xsd", "does not exist"),
        ("tool-call:/no/such/tools.json", "does not exist"),
        ("json-schema", "has no schema"),
    ],
)
def test_bad_specs_are_refused(spec: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_rules([spec])


def test_bad_schema_files_are_refused(tmp_path: Path) -> None:
    not_json = tmp_path / "a.json"
    not_json.write_text("{nope")
    with pytest.raises(InvalidInput, match="a.json is not valid JSON"):
        parse_rules([f"json-schema:{not_json}"])
    invalid = tmp_path / "b.json"
    invalid.write_text('{"type": "integer", "minimum": "zero"}')
    with pytest.raises(InvalidInput, match="b.json is invalid at minimum"):
        parse_rules([f"json-schema:{invalid}"])
    with pytest.raises(InvalidInput, match="Give at least one rule"):
        parse_rules([])


def test_schema_from_table_properties(schema_file: Path) -> None:
    (rule,) = parse_rules(["json-schema"], {PROP_JSON_SCHEMA: json.dumps(SCHEMA)}, "ns.t")
    assert rule.check('{"n": "x"}').kind == "type"
    with pytest.raises(InvalidInput, match="ns.t property podium.json_schema is not valid JSON"):
        parse_rules(["json-schema"], {PROP_JSON_SCHEMA: "{bad"}, "ns.t")


def test_syntax_errors_are_reported_once_under_json(schema_file: Path) -> None:
    rules = parse_rules(["json", f"json-schema:{schema_file}"])
    failures = check_texts(rules, ['{"n": 1}', '{"n": 1,}', '{"n": "x"}', None])
    assert [(i, r.rule, r.kind) for i, r in failures] == [
        (1, "json", "trailing-comma"),
        (2, "json-schema", "type"),
        (3, "json", "not-text"),
    ]
    # Without the json rule, the schema rule owns the syntax error.
    only_schema = parse_rules([f"json-schema:{schema_file}"])
    assert [(r.rule, r.kind) for _, r in check_texts(only_schema, ["[1,]"])] == [
        ("json-schema", "trailing-comma")
    ]


def test_fenced_failures_point_into_the_whole_message(schema_file: Path) -> None:
    rules = parse_rules(["json", f"json-schema:{schema_file}", "regex:\\{.*\\}"])
    message = 'Sure!\n```json\n{"n": "seven"}\n```'
    ((index, result),) = check_texts(rules, [message], mode="fenced")
    assert (index, result.rule, result.line, result.column) == (0, "json-schema", 1, 7)
    assert message[result.message_offset :].startswith('"seven"')
    # The whole message is not JSON at all.
    whole = check_texts(rules, [message], mode="whole")
    assert [(r.rule, r.kind) for _, r in whole] == [
        ("json", "invalid-value"),
        ("regex", "no-match"),
    ]


def test_rules_survive_pickling_for_worker_processes(schema_file: Path, tmp_path: Path) -> None:
    xsd = tmp_path / "a.xsd"
    xsd.write_text(
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">'
        '<xs:element name="a" type="xs:integer"/></xs:schema>'
    )
    rules = parse_rules(
        ["json", f"json-schema:{schema_file}", f"xsd:{xsd}", "regex:a+", "python", "tool-call"]
    )
    copies = pickle.loads(pickle.dumps(rules))
    assert [r.spec for r in copies] == [r.spec for r in rules]
    assert copies[1].check('{"n": []}').kind == "type"
    assert copies[2].check("<a>x</a>").kind == "datatype-valid"
    assert copies[3].check("aab").kind == "no-match"


def test_page_inputs_become_specs_with_stored_files(podium_home: Path) -> None:
    from podium.app.views.validate.model import build_specs

    specs = build_specs(
        ["json", "json-schema", "regex", "xsd"],
        schema_text=json.dumps(SCHEMA),
        pattern="a+",
        xsd_text='<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"/>',
    )
    assert specs[0] == "json" and specs[2] == "regex:a+"
    schema_path = Path(specs[1].removeprefix("json-schema:"))
    assert schema_path.parent == podium_home / "schemas"
    assert json.loads(schema_path.read_text()) == SCHEMA
    assert parse_rules(specs)[1].check('{"n": "x"}').kind == "type"
    # Without a pasted schema, json-schema means the table's stored one.
    assert build_specs(["json-schema"]) == ["json-schema"]
    with pytest.raises(InvalidInput, match="needs an XML Schema"):
        build_specs(["xsd"])
    with pytest.raises(InvalidInput, match="Choose at least one rule"):
        build_specs([])
