"""Arrow values as the JSON text orjson writes for them (sorted keys, no spaces), a
column at a time: how a whole block of imported rows gets its `metadata` text without
a Python object per row.

`encode` answers the text of each value and whether that text is certain. A struct
field that is null is not: Arrow's JSON reader gives null both for `"k": null` and for
a row without `k`, and the two are different text. Floats are never certain either
(Arrow and orjson print some of them differently), nor are types JSON has no word for.
A caller sends the rows that are not certain through the row path.
"""

from __future__ import annotations

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

# orjson's escapes, in an order where no replacement is replaced again.
_ESCAPES = (
    ("\\", "\\\\"),
    ('"', '\\"'),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
    ("\b", "\\b"),
    ("\f", "\\f"),
)
_NEEDS_ESCAPE = r'[\x00-\x1f"\\]'
_OTHER_CONTROL = r"[\x00-\x07\x0b\x0e-\x1f]"  # written as \u00XX: left to orjson


def key_text(name: str) -> str:
    """`"name":` as orjson writes an object's key."""
    return orjson.dumps(name).decode() + ":"


def encode(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(text of each value, null where the value is null; True where that text is certain)."""
    kind = arr.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return _strings(arr)
    if pa.types.is_integer(kind):
        return pc.cast(arr, pa.string()), np.ones(len(arr), bool)
    if pa.types.is_boolean(kind):
        return pc.if_else(arr, "true", "false"), np.ones(len(arr), bool)
    if pa.types.is_null(kind):
        return pa.nulls(len(arr), pa.string()), np.ones(len(arr), bool)
    if pa.types.is_struct(kind):
        return _struct(arr)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _list(arr)
    return pa.nulls(len(arr), pa.string()), ~np.asarray(arr.is_valid())


def _strings(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    arr = pc.cast(arr, pa.string())
    escaped = arr
    if pc.any(pc.match_substring_regex(arr, _NEEDS_ESCAPE)).as_py():
        for plain, written in _ESCAPES:
            escaped = pc.replace_substring(escaped, plain, written)
        other = pc.fill_null(pc.match_substring_regex(arr, _OTHER_CONTROL), False)
        certain = ~np.asarray(other)
    else:
        certain = np.ones(len(arr), bool)
    return pc.binary_join_element_wise('"', escaped, '"', ""), certain


def object_text(pieces: list[tuple[str, pa.Array]], length: int) -> pa.Array:
    """`{"k":v,...}` from (key, value text) pairs in key order; a null value leaves its
    key out of that row; a row with no key left is null."""
    if not pieces:
        return pa.nulls(length, pa.string())
    # Each `"k":v,` or "" (arrays with nulls in a join misbehave: all-null ones come
    # back empty), then the last comma cut.
    parts = [
        pc.fill_null(pc.binary_join_element_wise(key_text(key), text, ",", ""), "")
        for key, text in pieces
    ]
    joined = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, "")
    empty = pc.equal(joined, "")
    body = pc.utf8_slice_codeunits(joined, 0, -1)
    return pc.if_else(empty, pa.scalar(None, pa.string()), _wrap("{", body, "}"))


def _struct(arr: pa.StructArray) -> tuple[pa.Array, np.ndarray]:
    valid = np.asarray(arr.is_valid())
    certain = np.ones(len(arr), bool)
    pieces: list[tuple[str, pa.Array]] = []
    children = arr.flatten()  # each child lined up with its parent rows
    for field, child in sorted(zip(arr.type, children, strict=True), key=lambda fc: fc[0].name):
        text, sure = encode(child)
        # A null field in a present object: `"k": null` or no `k`; the reader cannot say.
        certain &= sure & (np.asarray(child.is_valid()) | ~valid)
        pieces.append((field.name, text))
    if pieces:
        text = object_text(pieces, len(arr))
        text = pc.fill_null(text, "{}")  # every field null: only uncertain rows
    else:
        text = pa.array(["{}"] * len(arr), pa.string())
    return pc.if_else(pa.array(valid), text, pa.scalar(None, pa.string())), certain


def _list(arr: pa.ListArray) -> tuple[pa.Array, np.ndarray]:
    offsets = arr.offsets
    lo, hi = offsets[0].as_py(), offsets[-1].as_py()
    values = arr.values.slice(lo, hi - lo)
    local = pc.subtract(offsets, lo)
    text, sure = encode(values)
    text = pc.fill_null(text, "null")  # a list's null element is written: no doubt there
    lists = pa.ListArray.from_arrays(local, text, mask=arr.is_null())
    joined = _wrap("[", pc.binary_join(lists, ","), "]")
    certain = np.ones(len(arr), bool)
    if not sure.all():
        parents = np.asarray(pc.list_parent_indices(lists))
        certain[parents[~sure]] = False
    return joined, certain


def _wrap(left: str, middle: pa.Array, right: str) -> pa.Array:
    return pc.binary_join_element_wise(left, middle, right, "")
