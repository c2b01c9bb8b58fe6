"""Locating JSON values in text, fenced-block extraction and the caret rendering."""

from __future__ import annotations

import json

from podium.validate.caret import render_caret
from podium.validate.extract import extract, first_fenced
from podium.validate.locate import decoded_to_raw, key_offset, value_offset

DOC = '{\n  "a": [1, {"b": "x", "b": "last"}],\n  "c\\"q": {"d": null}\n}'


def test_value_offset_follows_paths() -> None:
    assert DOC[value_offset(DOC, []) :].startswith("{")
    assert DOC[value_offset(DOC, ["a", 1]) :].startswith('{"b"')
    assert DOC[value_offset(DOC, ["a", 1, "b"]) :].startswith('"last"')  # duplicate: last wins
    assert DOC[value_offset(DOC, ['c"q', "d"]) :].startswith("null")
    assert value_offset(DOC, ["a", 5]) is None
    assert value_offset(DOC, ["missing"]) is None
    assert DOC[key_offset(DOC, ["a", 1], "b") :].startswith('"b": "x"')


def test_decoded_to_raw_walks_escapes() -> None:
    text = json.dumps({"s": 'é"\n😀x'}, ensure_ascii=True)
    start = value_offset(text, ["s"])
    assert text[decoded_to_raw(text, start, 4) :].startswith('x"')
    assert text[decoded_to_raw(text, start, 1) :].startswith('\\"')


def test_first_fenced_block_and_its_offset() -> None:
    message = 'Here:\n\n```json\n{"a": 1}\n```\n\nand ```x\nother\n```'
    block, offset = first_fenced(message)
    assert block == '{"a": 1}'
    assert message[offset:].startswith('{"a": 1}')
    assert extract(message, "whole") == (message, 0)
    assert extract("no fence", "fenced") == ("no fence", 0)
    # A truncated answer: the block runs to the end of the message.
    assert first_fenced('```json\n{"a": ') == ('{"a": ', 8)


def test_caret_marks_line_and_column() -> None:
    text = '{\n  "name": "Ana",\n  "age": "30"\n}'
    shown = render_caret(text, text.index('"30"'), "type: not an integer")
    lines = shown.split("\n")
    assert lines[2] == '3 |   "age": "30"'
    assert lines[3] == "  |          ^ type: not an integer"
    assert lines[3].index("^") == lines[2].index('"30"')


def test_caret_keeps_tabs_and_cuts_long_lines() -> None:
    shown = render_caret("\tx = (", 5).split("\n")
    assert shown[1] == "  | \t    ^"
    long = "a" * 500 + "X" + "b" * 500
    line, caret = render_caret(long, 500).split("\n")
    assert caret.index("^") == line.index("X")
    assert len(line) < 200


def test_caret_without_position_shows_the_start() -> None:
    shown = render_caret("one\ntwo", None, "no-match: text does not match")
    assert shown.split("\n") == ["1 | one", "2 | two", "  = no-match: text does not match"]
