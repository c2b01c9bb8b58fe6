"""What to say when a table's own files cannot be read: a damaged metadata file, manifest
list, manifest or data file (cut short, overwritten, not the format it names).

pyiceberg and pyarrow raise whatever their parsers meet (a pydantic `ValidationError`,
`UnicodeDecodeError` or `EOFError` deep in the Avro decoder, `ArrowInvalid: Parquet magic
bytes not found`), which named neither the problem nor the file's kind; the CLI printed a
traceback, or "aborted" for an `EOFError`. `damaged_file_message` tells them apart by the
error and the code that raised it, so the command ends in one line.
"""

from __future__ import annotations

import traceback

# (where in the traceback, what kind of file was being read)
_READERS = (
    ("pyiceberg/avro", "a manifest or manifest list (Avro)"),
    ("pyiceberg/manifest", "a manifest or manifest list (Avro)"),
    ("pyiceberg/serializers", "a metadata file (JSON)"),
    ("pyarrow/_parquet", "a data or delete file (Parquet)"),
)
_PARSE_ERRORS = (ValueError, EOFError, UnicodeDecodeError, KeyError, IndexError, TypeError)


def damaged_file_message(exc: BaseException) -> str | None:
    """One line (and what to do) when `exc`, or an error it came from, is a table file
    that cannot be parsed; None for any other error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kind = _kind(current)
        if kind is not None:
            first = (str(current).strip().splitlines() or [type(current).__name__])[0]
            return (
                f"{kind} of a table cannot be read: {type(current).__name__}: {first}\n"
                "The file is damaged or was changed outside Podium. `podium snapshots TABLE` "
                "lists the table's snapshots: an earlier one may still read (`--snapshot`); "
                "else restore the file from a backup."
            )
        current = current.__cause__ or current.__context__
    return None


def _kind(exc: BaseException) -> str | None:
    if type(exc).__name__ == "ValidationError" and "TableMetadata" in str(exc):
        return "a metadata file (JSON)"
    if type(exc).__name__ == "ArrowInvalid" and "parquet" in str(exc).lower():
        return "a data or delete file (Parquet)"
    if not isinstance(exc, _PARSE_ERRORS):
        return None
    frames = [frame.filename for frame in traceback.extract_tb(exc.__traceback__)[-6:]]
    for where, kind in _READERS:
        if any(where in filename for filename in frames):
            return kind
    return None
