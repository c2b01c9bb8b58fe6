"""One JSONL line as a record, or a one-line refusal that names the line and the fix.

orjson parses (it is what fixes each value: a number past 64 bits is a float, as in
Arrow's reader); what it refuses is explained in words, and what it silently accepts
but would lose is refused too: an object that names a key twice (one value would be
dropped without a word).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from podium.errors import InvalidInput


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_repeats(pairs: list[tuple[str, Any]]) -> None:
    # Only the check runs here: the values come from orjson, so nothing is built.
    if len(pairs) > 1 and len({k for k, _ in pairs}) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)


_KEY_CHECK = json.JSONDecoder(object_pairs_hook=_no_repeats)


def parse_line(line: bytes, where: str) -> dict[str, Any]:
    """The JSON object on `line` (a JSONL line), or InvalidInput naming `where`."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise json_problem(line, where, exc) from None
    if not isinstance(record, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(record).__name__}.")
    repeated_key(line, where)
    return record


def repeated_key(line: bytes | str, where: str) -> None:
    """Refuse JSON text (already known to parse) in which an object names a key twice."""
    try:
        _KEY_CHECK.decode(line.decode("utf-8") if isinstance(line, bytes) else line)
    except RecursionError:
        raise InvalidInput(
            f"{where}: the JSON is nested too deeply to check for repeated keys (past "
            "about 900 levels); fix or remove that line."
        ) from None
    except _RepeatedKey as exc:
        raise InvalidInput(
            f"{where}: the key {exc.key!r} appears twice in one object, so one of its "
            "values would be lost; remove one of them and import again."
        ) from None


def json_problem(line: bytes, where: str, refused: orjson.JSONDecodeError) -> InvalidInput:
    """Why orjson refused a line, in words, naming the line (and byte or column)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InvalidInput(
            f"{where}: not UTF-8 text (byte {exc.start + 1} of the line is "
            f"0x{line[exc.start]:02x}); convert the file to UTF-8 (e.g. `iconv -f latin1 "
            "-t utf-8`) and import again."
        )
    try:
        json.loads(text, parse_constant=_not_json)
    except _NotJson:
        pass  # NaN or Infinity: orjson's words below say where
    except json.JSONDecodeError as exc:
        return InvalidInput(
            f"{where}: invalid JSON ({exc.msg} at column {exc.colno}); "
            "fix or remove that line and import again."
        )
    except RecursionError:
        return InvalidInput(
            f"{where}: the JSON is nested too deeply to read (orjson stops at 1024 levels); "
            "fix or remove that line."
        )
    # The json module reads what orjson refuses on purpose: lone surrogates, numbers past
    # a double's range. orjson's own words say which, and where.
    hint = _HINTS.get(refused.msg, "fix or remove that line and import again.")
    return InvalidInput(f"{where}: invalid JSON ({refused.msg} at column {refused.colno}); {hint}")


_SURROGATE = (
    "each \\ud800-\\udbff escape must be followed by a \\udc00-\\udfff one (a lone "
    "surrogate is not text); fix or remove that escape and import again."
)
_HINTS = {
    "number is infinity when parsed as double": (
        "a number must fit a 64-bit float (about 1.8e308); write it as a string or fix "
        "that line and import again."
    ),
    "no low surrogate in string": _SURROGATE,
    "invalid low surrogate in string": _SURROGATE,
    "invalid high surrogate in string": _SURROGATE,
}


class _NotJson(Exception):
    pass


def _not_json(name: str) -> Any:
    raise _NotJson(name)
