"""Where Podium's vLLM servers are recorded, and how their processes are checked.

One row per model in the app-state database (`podium_servers`): pid, port, URL, log and
last use, so the app, the worker and the CLI share one server per checkpoint. A pid is
trusted only if its command line is still a vLLM server (pids get recycled; see
`podium.processes`).
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import (
    Column,
    ColumnElement,
    DateTime,
    Integer,
    Row,
    String,
    Table,
    Text,
    delete,
    select,
    update,
)

from podium import processes
from podium.store.state.state import METADATA, engine

LOG_TAIL_CHARS = 3000
VLLM_MARKER = "vllm.entrypoints"
WATCHER_MARKER = "podium.models.idle_watch"

servers_table = Table(
    "podium_servers",
    METADATA,
    # Servers listen on loopback, so a record is only meaningful on its own machine.
    Column("model", String(128), primary_key=True),
    Column("host", String(255), primary_key=True),
    Column("pid", Integer, nullable=False),
    Column("watcher_pid", Integer),
    Column("port", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("checkpoint", Text, nullable=False),
    Column("log_path", Text, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("last_used", DateTime(timezone=True), nullable=False),
)


@dataclass(frozen=True)
class ServerInfo:
    model: str
    host: str
    pid: int
    port: int
    url: str
    checkpoint: str
    log_path: str
    started_at: str
    last_used: str
    alive: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _now() -> datetime:
    return datetime.now(UTC)


def log_tail(path: str | Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return "(no log)"
    return data[-chars:].decode("utf-8", "replace")


def _healthy(url: str, timeout: float = 5.0) -> bool:
    try:
        return httpx.get(url.removesuffix("/v1") + "/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def _here() -> ColumnElement[bool]:
    return servers_table.c.host == socket.gethostname()


def _row(model: str) -> Row[Any] | None:
    """This machine's record of `model`'s server."""
    with engine().connect() as conn:
        return conn.execute(
            select(servers_table).where(servers_table.c.model == model, _here())
        ).first()


def _rows() -> list[Row[Any]]:
    with engine().connect() as conn:
        return list(
            conn.execute(select(servers_table).where(_here()).order_by(servers_table.c.model))
        )


def _alive(row: Row[Any]) -> bool:
    return processes.find(row.pid, VLLM_MARKER) is not None


def touch(model: str) -> None:
    """Mark a server as used now (postpones its idle stop)."""
    with engine().begin() as conn:
        conn.execute(
            update(servers_table)
            .where(servers_table.c.model == model, _here())
            .values(last_used=_now())
        )


def _forget(model: str) -> None:
    with engine().begin() as conn:
        conn.execute(delete(servers_table).where(servers_table.c.model == model, _here()))
