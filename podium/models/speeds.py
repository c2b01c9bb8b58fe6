"""The last measured generation speed of each model on this machine.

A finished generation records its completion tokens per second (`record_speed`); the
Generate page's estimate reads it back (`last_speed`) instead of an assumption that
was four times too fast on a 2-core CPU. Kept per host in one small JSON file in
Podium's home: a speed measured on a GPU host says nothing about a laptop.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from podium.config import get_settings
from podium.locks import file_lock

MIN_TOKENS = 32  # fewer tokens measure start-up noise, not a speed


def _path() -> Path:
    return get_settings().ensure_home() / "state" / "speeds.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_speed(model: str, tokens_per_s: float, tokens: int) -> bool:
    """Remember `model`'s speed here; False (nothing kept) for a run too short to tell."""
    if tokens < MIN_TOKENS or tokens_per_s <= 0:
        return False
    path = _path()
    with file_lock(path.with_suffix(".lock")):
        data = _read(path)
        host = data.setdefault(socket.gethostname(), {})
        host[model] = {
            "tokens_per_s": round(float(tokens_per_s), 2),
            "tokens": int(tokens),
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(path)  # readers see the old file or the new one, never half of one
    return True


def last_speed(model: str) -> float | None:
    """Tokens/s of `model`'s last recorded generation on this machine, if any."""
    entry = _read(_path()).get(socket.gethostname(), {}).get(model)
    if not isinstance(entry, dict):
        return None
    value = entry.get("tokens_per_s")
    return float(value) if isinstance(value, int | float) and value > 0 else None
