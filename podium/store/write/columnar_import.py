"""JSONL blocks typed and normalised by Arrow, whole blocks at a time: the fast path of
an import.

A block (about `BATCH_BYTES` of whole lines) is parsed by `pyarrow.json` and turned
into SFT rows with Arrow compute: no Python object per row. The row path
(`ingest`/`chat_rows`) stays the definition of what a row becomes; this module only
takes the blocks where doing the same with columns is certain, and answers `Unfit` for
any other block, which then goes through the row path and gets its errors (line
numbers, the field, what to do) from there. So a block is unfit when it has a line
that is blank or not an object, a line past the size limit, anything Arrow's reader
refuses or reads differently from orjson (two objects on one line, bytes that are not
UTF-8, nesting near orjson's limit, a float or NaN outside what becomes metadata), a
value of another type than the row path takes, a NUL in an id, or anything the row
path refuses. Metadata Arrow cannot write surely (a float; a key some rows lack, which
Arrow reads as null just like `null`; JSON text) is written for those rows alone from
their own line, by the row path's `row_metadata`.
`tests/store/test_columnar_import.py` imports the same files both ways and compares.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from podium.errors import InvalidInput
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.arrow_json import encode, object_text
from podium.store.write.chat_rows import (
    PROMPT_KEYS,
    RESPONSE_KEYS,
    SHAREGPT_ROLES,
    ChatOptions,
    row_metadata,
    used_keys,
)
from podium.store.write.modes import ChatFormat

PARSE_CHUNK_BYTES = 4 * 2**20
MAX_DEPTH = 200  # deeper lines go to the row path (orjson writes up to 254 levels)


class Unfit(Exception):
    """This block goes through the row path (which says what is wrong, if anything)."""


@dataclass(frozen=True)
class Block:
    """Whole lines of a JSONL file; `first` is the line number of the first, `ends` where
    each newline is."""

    first: int
    data: bytes
    ends: np.ndarray


def blocks(fh: IO[bytes], size: int, limit: int) -> Iterator[Block]:
    """The file as blocks of about `size` bytes, each ending at the end of a line. A line
    past `limit` ends the blocks with it (the row path refuses it, as it would have)."""
    line = 1
    while True:
        data, overlong = _read_block(fh, size, limit)
        if not data:
            return
        # Found once here: the next block's first line number and the typed path's spans.
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 0x0A)
        yield Block(line, data, ends)
        if overlong:
            return
        line += len(ends)


def _read_block(fh: IO[bytes], size: int, limit: int) -> tuple[bytes, bool]:
    """The next `size` bytes and the rest of the line they end in, and whether that line
    runs past `limit` unfinished (the block then ends inside it). A regular file's block
    is read in one piece once its end is found: appending the rest of the last line to
    a 16 MB block copied it (0.6 CPU-s an import of 1 GB)."""
    if not fh.seekable():
        data = fh.read(size)
        rest = b"" if data.endswith(b"\n") else fh.readline(limit + 2)
        return data + rest, not rest.endswith(b"\n") and len(rest) > limit
    start = fh.tell()
    fh.seek(start + size - 1)
    rest = fh.readline(limit + 3)[1:]  # after the block's last byte: empty if that is "\n"
    fh.seek(start)
    data = fh.read(size + len(rest))
    return data, bool(rest) and not rest.endswith(b"\n") and len(rest) > limit


_TEXT = pa.string()
_TURN = pa.struct([("role", _TEXT), ("content", _TEXT)])
_MESSAGES = pa.list_(pa.field("element", _TURN))
_CREATED = SFT_ARROW_SCHEMA.field("created_at").type


def _schema(fmt: ChatFormat) -> pa.Schema:
    """What the reader is told (so text that looks like a time stays text); the rest is
    inferred, and the row path's own checks of it happen below."""
    turns = {
        "openai": ("messages", [("role", _TEXT), ("content", _TEXT)]),
        "sharegpt": ("conversations", [("from", _TEXT), ("value", _TEXT)]),
    }
    fields = [(k, _TEXT) for k in ("system", "source", "split", "created_at")]
    fields.append(("tags", pa.list_(_TEXT)))
    if fmt in turns:
        name, parts = turns[fmt]
        fields.append((name, pa.list_(pa.struct(parts))))
    return pa.schema(fields)


@dataclass(frozen=True)
class Typed:
    """One block as SFT rows, with each row's line number."""

    batch: pa.RecordBatch
    lines: np.ndarray


def typed_block(
    block: Block, cfg: ChatOptions, fmt: ChatFormat, default_source: str, now: datetime, limit: int
) -> list[Typed]:
    """The block as SFT rows (ids not yet generated), a batch per chunk Arrow parsed, or
    Unfit."""
    starts, ends = _line_spans(block, limit)
    if not block.data.isascii():
        try:  # Arrow's reader takes bytes that are not UTF-8 into its strings
            block.data.decode("utf-8")
        except UnicodeDecodeError:
            raise Unfit from None
    try:
        table = pj.read_json(
            pa.py_buffer(block.data),
            read_options=pj.ReadOptions(block_size=_chunk_bytes(starts, block), use_threads=True),
            parse_options=pj.ParseOptions(
                explicit_schema=_schema(fmt), unexpected_field_behavior="infer"
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        raise Unfit from None
    used = used_keys(fmt, cfg)
    if table.num_rows != len(starts) or not _readable(table.schema, used):
        raise Unfit  # two objects on one line, a float outside metadata, deep nesting
    typed, first = [], 0
    for chunk in table.to_batches():  # each as parsed: no copy into one
        lines = _Lines(block.data, starts[first:], ends[first:])
        try:
            rows = _sft_rows(chunk, cfg, fmt, used, default_source, now, lines)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            # A shape these kernels do not take: the row path is the reference anyway.
            raise Unfit from None
        typed.append(Typed(rows, block.first + first + np.arange(chunk.num_rows)))
        first += chunk.num_rows
    return typed


@dataclass(frozen=True)
class _Lines:
    """Where a chunk's lines are in its block: rows Arrow cannot write surely are
    read again from their own line."""

    data: bytes
    starts: np.ndarray
    ends: np.ndarray

    def line(self, row: int) -> bytes:
        return self.data[self.starts[row] : self.ends[row]]


def _sft_rows(
    chunk: pa.RecordBatch,
    cfg: ChatOptions,
    fmt: ChatFormat,
    used: set[str],
    default_source: str,
    now: datetime,
    lines: _Lines,
) -> pa.RecordBatch:
    cols = {name: chunk.column(name) for name in chunk.schema.names}
    if fmt == "openai":
        messages = _openai(cols["messages"])
    elif fmt == "sharegpt":
        messages = _sharegpt(cols["conversations"])
    else:
        messages = _prompt_response(cols, cfg)
    return pa.RecordBatch.from_arrays(
        [
            _ids(cols.get("id"), chunk.num_rows),
            messages,
            cols["system"],
            pc.fill_null(_blank_as_null(cols["source"]), default_source),
            cols["split"],
            _tags(cols["tags"]),
            _metadata(cols, used, chunk.num_rows, lines),
            _created_at(cols["created_at"], now),
        ],
        names=SFT_ARROW_SCHEMA.names,
    ).cast(SFT_ARROW_SCHEMA)


def _chunk_bytes(starts: np.ndarray, block: Block) -> int:
    """Arrow parses a block in chunks on several threads; a chunk holds whole lines."""
    longest = int(np.diff(starts, append=len(block.data)).max())
    return max(PARSE_CHUNK_BYTES, longest + 1)


def _line_spans(block: Block, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of each line of the block, its newline left out."""
    data, ends = block.data, block.ends
    if not data.endswith(b"\n"):
        ends = np.append(ends, len(data))
    starts = np.concatenate(([0], ends[:-1] + 1))
    # Blank lines (skipped by the row path, silently by Arrow too, losing line numbers),
    # a line that is not an object, and a line past the limit are the row path's.
    buf = np.frombuffer(data, np.uint8)
    if len(starts) == 0 or (ends - starts).max() > limit or (buf[starts] != ord("{")).any():
        raise Unfit
    return starts, ends


def _readable(schema: pa.Schema, used: set[str]) -> bool:
    """Nested well under orjson's 1024 levels, and no float but in what becomes
    metadata: those rows are written by orjson from the line itself (so NaN, which
    Arrow reads and orjson refuses, sends the block to the row path there)."""
    stack = [(f.type, 2, f.name in _META or f.name not in used) for f in schema]
    while stack:
        kind, depth, meta = stack.pop()
        floating = pa.types.is_floating(kind) or pa.types.is_decimal(kind)
        if (floating and not meta) or depth > MAX_DEPTH:
            return False
        stack.extend((kind.field(i).type, depth + 1, meta) for i in range(kind.num_fields))
    return True


_META = ("metadata", "tools")


def _turns(turns: pa.Array) -> tuple[pa.Array, pa.StructArray]:
    """(offsets, turn structs) of a list column that has a non-empty list of non-null
    turns in every row, as the row path requires."""
    if turns.null_count or pc.min(pc.list_value_length(turns)).as_py() == 0:
        raise Unfit
    offsets = turns.offsets
    lo = offsets[0].as_py()
    values = turns.values.slice(lo, offsets[-1].as_py() - lo)
    if values.null_count:
        raise Unfit
    return pc.subtract(offsets, lo), values


def _chat(offsets: pa.Array, roles: pa.Array, contents: pa.Array) -> pa.Array:
    turns = pa.StructArray.from_arrays([roles, contents], fields=list(_TURN))
    return pa.ListArray.from_arrays(offsets, turns, type=_MESSAGES)


def _openai(column: pa.Array) -> pa.Array:
    offsets, turns = _turns(column)
    if "tool_calls" in [f.name for f in turns.type]:
        calls = turns.field("tool_calls")
        if calls.null_count != len(calls):  # kept as JSON text by the row path
            raise Unfit
    roles = turns.field("role")
    if roles.null_count:
        raise Unfit
    return _chat(offsets, roles, turns.field("content"))


def _sharegpt(column: pa.Array) -> pa.Array:
    offsets, turns = _turns(column)
    speakers = turns.field("from")
    known = pa.array(list(SHAREGPT_ROLES))
    index = pc.index_in(speakers, value_set=known)
    if index.null_count:
        raise Unfit  # an unknown (or missing) speaker: the row path names it
    roles = pa.array(list(SHAREGPT_ROLES.values())).take(index)
    return _chat(offsets, roles, turns.field("value"))


def _prompt_response(cols: dict[str, pa.Array], cfg: ChatOptions) -> pa.Array:
    # The row path picks the first prompt (response) key each record has; here the first
    # column present, which must then be present in every row of the block.
    pkey = cfg.prompt_column or next((k for k in PROMPT_KEYS if k in cols), None)
    rkey = cfg.response_column or next((k for k in RESPONSE_KEYS if k in cols), None)
    if pkey not in cols or rkey not in cols:
        raise Unfit
    prompt, response = cols[pkey], cols[rkey]
    if not (_is_text(prompt) and _is_text(response)) or prompt.null_count or response.null_count:
        raise Unfit
    prompt = pc.cast(prompt, _TEXT)
    extra = cols.get("input") if pkey == "instruction" else None
    if extra is not None and extra.null_count != len(extra):
        if not _is_text(extra):
            raise Unfit
        # Alpaca's optional input, joined as the row path does (str.strip's idea of blank).
        joined = [
            f"{p}\n\n{x}" if isinstance(x, str) and x.strip() else p
            for p, x in zip(prompt.to_pylist(), extra.to_pylist(), strict=True)
        ]
        prompt = pa.array(joined, _TEXT)
    n = len(prompt)
    offsets = pa.array(np.arange(0, 2 * n + 1, 2, dtype=np.int32))
    roles = pa.array(np.tile(np.array(["user", "assistant"], dtype=object), n), _TEXT)
    contents = pc.take(
        pa.concat_arrays([prompt, pc.cast(response, _TEXT)]),
        pa.array(np.stack([np.arange(n), np.arange(n) + n], axis=1).ravel()),
    )
    return _chat(offsets, roles, contents)


def _is_text(arr: pa.Array) -> bool:
    return bool(pa.types.is_string(arr.type) or pa.types.is_null(arr.type))


def _ids(column: pa.Array | None, n: int) -> pa.Array:
    if column is None or pa.types.is_null(column.type):
        return pa.nulls(n, _TEXT)
    if pa.types.is_integer(column.type):
        return pc.cast(column, _TEXT)
    if not pa.types.is_string(column.type):
        raise Unfit
    if pc.any(pc.match_substring(column, "\x00")).as_py():
        raise Unfit  # the row path refuses it, naming the line
    return column


def _blank_as_null(column: pa.Array) -> pa.Array:
    # `source or cfg.source or file name`: an empty source takes the default too.
    return pc.if_else(pc.equal(column, ""), pa.scalar(None, _TEXT), column)


def _tags(column: pa.Array) -> pa.Array:
    if pc.list_flatten(column).null_count:
        raise Unfit  # a tag that is not a string: refused by the row path
    return column


def _created_at(column: pa.Array, now: datetime) -> pa.Array:
    if column.null_count == len(column):
        return pc.fill_null(pa.nulls(len(column), _CREATED), pa.scalar(now, _CREATED))
    try:
        stamps = pc.cast(column, _CREATED)
    except pa.ArrowInvalid:
        try:  # no offset: the row path reads it as UTC
            stamps = pc.cast(pc.cast(column, pa.timestamp("us")), _CREATED)
        except pa.ArrowInvalid:
            raise Unfit from None
    return pc.fill_null(stamps, pa.scalar(now, _CREATED))


def _metadata(cols: dict[str, pa.Array], used: set[str], n: int, lines: _Lines) -> pa.Array:
    """The row path's metadata text (`chat_rows.row_metadata`), written by Arrow where
    that is certain (`arrow_json`) and from the row's own line elsewhere."""
    values: dict[str, pa.Array] = {}
    certain = np.ones(n, bool)
    meta = cols.get("metadata")
    if meta is not None and not pa.types.is_null(meta.type):
        if pa.types.is_string(meta.type):
            certain &= ~np.asarray(meta.is_valid())  # JSON text: read per row
        elif pa.types.is_struct(meta.type):
            present = np.asarray(meta.is_valid())
            for field, child in zip(meta.type, meta.flatten(), strict=True):
                text, sure = encode(child)
                # In a present `metadata`, a null field is `"k": null` or no `k` at all.
                certain &= sure & (np.asarray(child.is_valid()) | ~present)
                values[field.name] = text
        else:
            raise Unfit  # not an object: refused by the row path
    for name in sorted(set(cols) - used):
        text, sure = encode(cols[name])
        certain &= sure & np.asarray(cols[name].is_valid())  # a null key may be a missing one
        values[name] = text
    tools = cols.get("tools")
    if tools is not None and tools.null_count != len(tools):
        text, sure = encode(tools)
        certain &= sure | ~np.asarray(tools.is_valid())
        values["tools"] = text if "tools" not in values else pc.coalesce(text, values["tools"])
    texts = object_text(sorted(values.items()), n)
    if certain.all():
        return texts
    doubtful = np.flatnonzero(~certain)
    written = [_row_metadata(lines.line(int(i)), used) for i in doubtful]
    return pc.replace_with_mask(texts, pa.array(~certain), pa.array(written, texts.type))


def _row_metadata(line: bytes, used: set[str]) -> str | None:
    """One row's metadata from its line, as the row path writes it; any doubt (a line
    orjson refuses, metadata the row path refuses) sends the block to the row path,
    which names the first bad line."""
    try:
        return row_metadata(orjson.loads(line), used, "")
    except (orjson.JSONDecodeError, InvalidInput):
        raise Unfit from None
