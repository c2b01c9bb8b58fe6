"""Finding where a value sits in a JSON text, for pointing at schema errors.

Parsers hand back plain Python objects, so a schema error knows its JSON path
(`["items", 3, "price"]`) but not its place in the text. This walks the (already
valid) text along the path with the stdlib's own scanners, skipping sibling values
with `raw_decode`, so it never re-implements JSON parsing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

# typeshed leaves out scanstring, though json.decoder defines it (and JSONDecoder uses it).
from json.decoder import scanstring  # type: ignore[attr-defined]

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


def _ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _members(text: str, pos: int) -> Iterable[tuple[str, int, int]]:
    """(key, key offset, value offset) of each member of the object starting at pos."""
    pos = _ws(text, pos + 1)
    if text[pos] == "}":
        return
    while True:
        key_at = pos
        key, pos = scanstring(text, pos + 1)
        pos = _ws(text, _ws(text, pos) + 1)  # past ':'
        yield key, key_at, pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _ws(text, pos)
        if text[pos] != ",":
            return
        pos = _ws(text, pos + 1)


def _elements(text: str, pos: int) -> Iterable[int]:
    pos = _ws(text, pos + 1)
    if text[pos] == "]":
        return
    while True:
        yield pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _ws(text, pos)
        if text[pos] != ",":
            return
        pos = _ws(text, pos + 1)


def _step(text: str, pos: int, part: str | int) -> int | None:
    if text[pos] == "{" and isinstance(part, str):
        found = None
        for key, _, value_at in _members(text, pos):
            if key == part:
                found = value_at  # a duplicate key: the last one wins, as in parsers
        return found
    if text[pos] == "[" and isinstance(part, int):
        for index, value_at in enumerate(_elements(text, pos)):
            if index == part:
                return value_at
    return None


def value_offset(text: str, path: Iterable[str | int]) -> int | None:
    """Character offset of the value at `path` in JSON `text`, or None if not found."""
    try:
        pos: int | None = _ws(text, 0)
        for part in path:
            if pos is None:
                return None
            pos = _step(text, pos, part)
        return pos
    except (ValueError, IndexError, RecursionError):
        return None


def key_offset(text: str, path: Iterable[str | int], key: str) -> int | None:
    """Offset of the quoted `key` inside the object at `path` (for unexpected keys)."""
    start = value_offset(text, path)
    if start is None or text[start] != "{":
        return None
    try:
        for name, key_at, _ in _members(text, start):
            if name == key:
                return key_at
    except (ValueError, IndexError, RecursionError):
        return None
    return None


def decoded_to_raw(text: str, string_at: int, index: int) -> int:
    """Offset in `text` of character `index` of the JSON string literal at `string_at`.

    Lets an error inside a JSON-encoded string (tool-call `arguments`) point into the
    outer text: escapes like `\\"` or `\\u00e9` take several raw characters per
    decoded one.
    """
    pos = string_at + 1
    decoded = 0
    while decoded < index and pos < len(text) and text[pos] != '"':
        if text[pos] == "\\":
            if text[pos + 1] == "u":
                code = int(text[pos + 2 : pos + 6], 16)
                is_pair = 0xD800 <= code < 0xDC00 and text[pos + 6 : pos + 8] == "\\u"
                pos += 12 if is_pair else 6
            else:
                pos += 2
        else:
            pos += 1
        decoded += 1
    return pos
