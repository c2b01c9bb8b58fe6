"""An import's JSONL parse in a thread of its own, ahead of the ids and the writer,
begun early by a one-shot `podium import` (`parse_ahead`) and taken over by its import
(`parsing`): the parts are the ones `import_sources.jsonl_parts` gives, in order."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from podium.errors import InvalidInput
from podium.paths import resolve_under_roots
from podium.store.read.prefetch import Prefetcher
from podium.store.write.chat_rows import ChatOptions
from podium.store.write.import_sources import (
    Part,
    Position,
    RowPath,
    file_format,
    import_batch_bytes,
    jsonl_parts,
)

# Parsed parts that may wait for the ids, the duplicate check and the writer: about six
# 16 MB blocks (Arrow parses a block in 4 MiB chunks, a part each). Two parts let the
# parser run only half a block ahead, and each side then waited ~3 s of a 1M-row import
# for the other; this much also holds what `parse_ahead` parses during start-up.
PARSE_AHEAD_PARTS = 24


@dataclass(frozen=True)
class Parsing:
    """A JSONL input being typed in its own thread: its parts in order, how far it is."""

    key: tuple[object, ...]
    parts: Prefetcher[Part]
    pos: Position


_ahead: list[Parsing] = []  # at most one: what `parse_ahead` began
_ahead_lock = threading.Lock()


def parse_ahead(cfg: ChatOptions) -> None:
    """Begin parsing `cfg`'s JSONL input now, in a thread, for this process's
    `run_import` of the same input to take over. A one-shot `podium import` calls this
    as soon as its options are known: the job machinery, pyiceberg and the catalog
    still take ~0.5 s to load (Python imports, one core), and the parse runs on the
    other meanwhile. Anything but a JSONL file under the roots is left to `run_import`,
    which says what is wrong with it."""
    try:
        path = resolve_under_roots(cfg.path, "import")
        if file_format(path) != "jsonl":
            return
    except InvalidInput:
        return
    parsing = _start_parsing(cfg, path, import_batch_bytes(), None)
    with _ahead_lock:
        stale, _ahead[:] = list(_ahead), [parsing]
    for old in stale:
        old.parts.close()


def stop_parse_ahead() -> None:
    """Stop a parse `parse_ahead` began that no import took over (the command failed
    first: a missing table, a refused role), rather than leave its thread to exit."""
    with _ahead_lock:
        stale, _ahead[:] = list(_ahead), []
    for old in stale:
        old.parts.close()


def parsing(cfg: ChatOptions, path: Path, batch_bytes: int, now: datetime | None) -> Parsing:
    """The parse `parse_ahead` began for this same input, or one begun now."""
    with _ahead_lock:
        ahead = _ahead.pop() if _ahead else None
    if ahead is not None:
        if now is None and ahead.key == _parse_key(cfg, path, batch_bytes):
            return ahead
        ahead.parts.close()
    return _start_parsing(cfg, path, batch_bytes, now)


def _parse_key(cfg: ChatOptions, path: Path, batch_bytes: int) -> tuple[object, ...]:
    """Everything the typed parts depend on (`ChatOptions`, the block size)."""
    options = (cfg.format, cfg.prompt_column, cfg.response_column, cfg.source)
    return (str(path), Path(cfg.path).name, *options, batch_bytes)


def _start_parsing(cfg: ChatOptions, path: Path, batch_bytes: int, now: datetime | None) -> Parsing:
    pos = Position(path.stat().st_size, "bytes")
    row_path = RowPath(cfg, batch_bytes, now or datetime.now(UTC))
    parts = Prefetcher(jsonl_parts(path, pos, row_path), depth=PARSE_AHEAD_PARTS)
    return Parsing(_parse_key(cfg, path, batch_bytes), parts, pos)
