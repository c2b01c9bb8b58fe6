"""How a turn's text becomes Markdown: JSON pretty-printed, broken JSON verbatim, code
fences kept with their language."""

from __future__ import annotations

import json

from podium.app.chat_markdown import fence, render_turn, render_value


def test_json_object_is_pretty_printed_in_a_json_block() -> None:
    out = render_turn('{"name":"Ada","skills":["SQL","Go"]}')
    assert out.note is None
    assert out.markdown.startswith('```json\n{\n  "name": "Ada",')
    assert out.markdown.endswith("\n```")
    body = out.markdown.removeprefix("```json\n").removesuffix("\n```")
    assert json.loads(body) == {"name": "Ada", "skills": ["SQL", "Go"]}


def test_json_array_and_surrounding_whitespace() -> None:
    out = render_turn('  \n[1, {"a": 2}]\n')
    assert out.markdown == "```json\n" + json.dumps([1, {"a": 2}], indent=2) + "\n```"


def test_malformed_json_is_shown_verbatim_with_a_note() -> None:
    broken = '{"name": "Ada", "age": 36,'
    out = render_turn(broken)
    assert out.markdown == f"```text\n{broken}\n```"
    assert out.note is not None and "does not parse" in out.note


def test_single_quoted_pseudo_json_is_flagged_too() -> None:
    out = render_turn("{'name': 'Ada'}")
    assert out.markdown.startswith("```text\n{'name': 'Ada'}")
    assert out.note


def test_fenced_code_keeps_its_language() -> None:
    text = "Use this:\n\n```python\nprint('hi')\n```\n\nDone."
    out = render_turn(text)
    assert out.markdown == text
    assert out.note is None


def test_json_fence_inside_prose_is_reindented() -> None:
    text = 'Here you go:\n```json\n{"a":1,"b":[1,2]}\n```\nAnything else?'
    out = render_turn(text)
    assert out.markdown.startswith('Here you go:\n```json\n{\n  "a": 1,')
    assert out.markdown.endswith("```\nAnything else?")


def test_broken_json_fence_inside_prose_is_left_alone() -> None:
    text = 'Here:\n```json\n{"a":1,\n```'
    assert render_turn(text).markdown == text


def test_plain_markdown_and_scalars_pass_through() -> None:
    assert render_turn("**bold** and a list:\n- one").markdown == "**bold** and a list:\n- one"
    # A bare JSON scalar is prose, not a document worth a code block.
    assert render_turn("42").markdown == "42"


def test_empty_content() -> None:
    assert render_turn(None).markdown == "_(empty)_"
    assert render_turn("   ").markdown == "_(empty)_"


def test_fence_survives_backticks_in_the_text() -> None:
    text = 'x = "```"'
    block = fence(text, "python")
    assert block == '````python\nx = "```"\n````'
    # A JSON answer holding a code fence in a string still renders as one block.
    out = render_turn(json.dumps({"code": "```py\nprint(1)\n```"}))
    assert out.markdown.startswith("````json\n{")
    assert out.markdown.endswith("}\n````")


def test_render_value_for_row_fields() -> None:
    assert render_value(None) == "_(null)_"
    assert render_value(3.5) == "`3.5`"
    assert render_value({"wins": 3}) == '```json\n{\n  "wins": 3\n}\n```'
    assert render_value('{"wins": 3}') == '```json\n{\n  "wins": 3\n}\n```'
    assert render_value("model-3") == "model-3"


def test_browse_names_the_same_error_position_as_validate() -> None:
    """Before: Browse parsed the stripped text with `json` ("line 2 column 7") while
    Validate and the CLI report the position in the whole message (line 4, column 7)."""
    from podium.validate.failure_text import marked_failure
    from podium.validate.json_rules import JsonRule

    content = '\n\n{"a": 1,\n "b": }'
    result = JsonRule().check(content)
    failure = {**result.to_dict(), "turn": 0}
    where, _ = marked_failure(failure, [{"role": "assistant", "content": content}])
    assert where == "line 4, column 7"
    note = render_turn(content).note
    assert note is not None and f"({where})" in note and result.message in note
