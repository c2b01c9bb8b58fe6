"""A throwaway PostgreSQL server for tests: initdb in a temp dir, loopback port."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def _bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))), None
    )
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (apt-get install postgresql).")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _as_postgres(cmd: list[str]) -> list[str]:
    # initdb refuses to run as root; PostgreSQL's own user runs the server.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass(frozen=True)
class Postgres:
    url: str  # SQLAlchemy URL of the empty database
    data: Path
    log: Path
    options: str

    def stop(self) -> None:
        """Stop the server now (`-m fast`: open connections are cut, as in a failover)."""
        subprocess.run(
            _as_postgres([_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]),
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        subprocess.run(
            _as_postgres(
                [_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w"]
                + ["-o", self.options, "start"]
            ),
            check=True,
            capture_output=True,
        )


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start PostgreSQL in a temp dir; yields a SQLAlchemy URL of an empty database."""
    with postgres_handle() as server:
        yield server.url


@contextmanager
def postgres_handle() -> Iterator[Postgres]:
    """Start PostgreSQL in a temp dir; yields a handle that can stop and start it."""
    # Not under pytest's tmp_path: its parents are private to root, and the server
    # runs as the postgres user.
    root = Path(tempfile.mkdtemp(prefix="podium-pg-"))
    root.chmod(0o755)
    data = root / "pgdata"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(data, "postgres")
    subprocess.run(
        _as_postgres(
            [_bin("initdb"), "-D", str(data), "-U", "podium", "--auth=trust", "-E", "UTF8"]
        ),
        check=True,
        capture_output=True,
    )
    port = free_port()
    server = Postgres(
        f"postgresql+psycopg2://podium@127.0.0.1:{port}/postgres",
        data,
        root / "pg.log",
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1",
    )
    server.start()
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        yield server
    finally:
        subprocess.run(
            _as_postgres([_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)
