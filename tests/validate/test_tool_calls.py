"""The tool-call rule: call shape, known tools, and arguments against the tool schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.errors import InvalidInput
from podium.validate.tool_calls import ToolCallRule, load_tools

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
META = json.dumps({"tools": TOOLS})


def _call(arguments: object, name: str = "get_weather") -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def test_valid_calls_in_both_shapes() -> None:
    rule = ToolCallRule()
    args = json.dumps({"city": "Paris", "days": 2})
    assert rule.check(json.dumps({"tool_calls": [_call(args)]}), META).ok
    assert rule.check(json.dumps([_call(args), _call({"city": "Oslo"})]), META).ok


def test_wrong_argument_type_points_inside_the_encoded_arguments() -> None:
    args = '{"city": "Pé\\"x", "days": "3"}'
    text = json.dumps({"tool_calls": [_call(args)]})
    result = ToolCallRule().check(text, META)
    assert (result.kind, result.rule) == ("type", "tool-call")
    assert result.message.startswith("get_weather: '3' is not of type 'integer'")
    # The offset is in the outer text, past the escaped quotes of the arguments string.
    assert text[result.offset :].startswith('\\"3\\"}')


def test_arguments_that_are_not_json() -> None:
    text = json.dumps([_call('{"city": "Oslo",}')])
    result = ToolCallRule().check(text, META)
    assert result.kind == "arguments-trailing-comma"
    assert text[result.offset :].startswith(",}")


def test_missing_required_argument_in_an_object() -> None:
    text = json.dumps([_call({"days": 1})])
    result = ToolCallRule().check(text, META)
    assert result.kind == "required"
    assert text[result.offset :].startswith('{"days"')


def test_unknown_tool_and_bad_shapes() -> None:
    text = json.dumps([_call("{}", name="launch_rocket")])
    result = ToolCallRule().check(text, META)
    assert result.kind == "unknown-tool"
    assert text[result.offset :].startswith('"launch_rocket"')
    assert ToolCallRule().check('{"answer": 42}', META).kind == "not-tool-call"
    assert ToolCallRule().check('[{"type": "function"}]', META).kind == "not-tool-call"


def test_rows_without_tools_are_reported() -> None:
    text = json.dumps([_call("{}")])
    assert ToolCallRule().check(text, None).kind == "no-tools"
    assert ToolCallRule().check(text, '{"other": 1}').kind == "no-tools"


def test_tools_file(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": TOOLS}))
    rule = ToolCallRule(load_tools(str(path)), str(path))
    assert rule.check(json.dumps([_call('{"city": "Lima"}')]), None).ok
    assert rule.check(json.dumps([_call("{}")]), None).kind == "required"


def test_bad_tools_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        load_tools(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"function": {"name": "f", "parameters": {"type": 5}}}]))
    with pytest.raises(InvalidInput, match="tool f"):
        load_tools(str(bad))
