"""A job's stdin, stdout and stderr: anonymous in-memory files, read back capped."""

import os
from typing import Any

STDERR_TAIL = 65536


def read_capped(fd: int, limit: int, tail: bool = False) -> tuple[str, int]:
    size = os.fstat(fd).st_size
    start = max(0, size - limit) if tail else 0
    os.lseek(fd, start, os.SEEK_SET)
    chunks: list[bytes] = []
    left = min(limit, size - start)
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks).decode("utf-8", "replace"), size


def prepare_files(req: dict[str, Any]) -> dict[str, int]:
    """Anonymous in-memory files for the job's stdio: nothing on any path to tamper with."""
    files: dict[str, int] = {}
    for name in ("stdin", "stdout", "stderr"):
        files[name] = os.memfd_create("podium-" + name, 0)
    os.write(files["stdin"], (req.get("stdin") or "").encode())
    os.lseek(files["stdin"], 0, os.SEEK_SET)
    return files
