"""One warm sandbox worker: a fork server behind some transport, spoken to in frames.

Backends differ only in how the fork server is started (bwrap, a container, a plain
process) and how bytes reach it (pipes, a Docker attach socket). Everything else, the
framing, deadlines and the notion of a broken worker, lives here.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from typing import Any

from generators.sandbox.limits import Limits, Result, sandbox_error
from generators.sandbox.readable import readable
from podium import processes

# Time the server may take beyond the job's wall limit to kill, reap and answer.
GRACE_S = 10.0
START_TIMEOUT_S = 60.0
# The server's whole environment. The hash seed is fixed so that the repr of a set or
# dict of strings is the same on every run and worker (code-exec outputs must be
# reproducible); servers run with -s, not -I, which would ignore it.
SERVER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}


class WorkerBroken(Exception):
    """The worker stopped answering or died; the pool replaces it."""


class Worker(ABC):
    """A started fork server that runs one job at a time."""

    backend = "abstract"

    def __init__(self, index: int) -> None:
        self.index = index
        self.broken = False
        self.info: dict[str, Any] = {}
        self._buffer = bytearray()

    # -- transport, provided by each backend ---------------------------------------
    @abstractmethod
    def _start(self) -> None: ...

    @abstractmethod
    def _send(self, data: bytes) -> None: ...

    @abstractmethod
    def _receive_some(self, timeout: float) -> bytes:
        """Bytes the server wrote (b"" means it is gone); raises TimeoutError."""

    @abstractmethod
    def alive(self) -> bool: ...

    @abstractmethod
    def close(self) -> None: ...

    # -- limits the transport can enforce outside the server (cgroups) --------------
    def _before_job(self, limits: Limits) -> None:  # noqa: B027 - an optional hook
        """Hook: apply per-job limits outside the server."""

    def _after_job(self, result: Result) -> Result:
        """Hook: refine the server's verdict with what only the host can see."""
        return result

    # -- protocol -------------------------------------------------------------------
    def start(self) -> None:
        self._start()
        try:
            hello = self._receive(time.monotonic() + START_TIMEOUT_S)
        except (OSError, TimeoutError, WorkerBroken) as exc:
            detail = f"{exc} {self.diagnostics()}".strip()
            raise WorkerBroken(f"{self.backend} worker did not start: {detail}") from exc
        if not hello.get("ready"):
            raise WorkerBroken(f"{self.backend} worker did not start: {hello}")
        self.info = hello

    def diagnostics(self) -> str:
        """What the worker's own process said on stderr, if anything (for errors)."""
        return ""

    def _receive(self, deadline: float) -> dict[str, Any]:
        while True:
            if len(self._buffer) >= 4:
                (size,) = struct.unpack(">I", self._buffer[:4])
                if len(self._buffer) >= 4 + size:
                    body = bytes(self._buffer[4 : 4 + size])
                    del self._buffer[: 4 + size]
                    message = json.loads(body)
                    if not isinstance(message, dict):
                        raise WorkerBroken(f"the sandbox worker sent a non-object: {body[:200]!r}")
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the sandbox worker did not answer in time")
            chunk = self._receive_some(left)
            if not chunk:
                raise WorkerBroken(f"{self.backend} worker exited")
            self._buffer.extend(chunk)

    def run(
        self,
        code: str,
        stdin: str | None = None,
        args: tuple[str, ...] = (),
        limits: Limits | None = None,
    ) -> Result:
        limits = limits or Limits()
        request = {"code": code, "stdin": stdin, "args": list(args), "limits": limits.to_dict()}
        body = json.dumps(request).encode()
        started = time.monotonic()
        try:
            self._before_job(limits)
            self._send(struct.pack(">I", len(body)) + body)
            reply = self._receive(started + limits.wall_s + GRACE_S)
        except (OSError, TimeoutError, WorkerBroken, ValueError) as exc:
            self.broken = True
            return sandbox_error(f"{self.backend} worker failed: {exc}", time.monotonic() - started)
        if reply.get("status") == "sandbox_error":
            self.broken = True
        return self._after_job(Result.from_wire(reply))


class ProcessWorker(Worker):
    """A fork server that is a child process of ours, talked to over its stdin/stdout."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.proc: subprocess.Popen[bytes] | None = None
        # bwrap and the server's own failures land here, shown when a start fails.
        self._errors = tempfile.TemporaryFile()

    @abstractmethod
    def command(self) -> list[str]: ...

    def pass_fds(self) -> tuple[int, ...]:
        return ()

    def _start(self) -> None:
        self.proc = processes.spawn(
            self.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            pass_fds=self.pass_fds(),
            env=SERVER_ENV,
        )

    def diagnostics(self) -> str:
        self._errors.seek(0)
        return self._errors.read()[-2000:].decode("utf-8", "replace").strip()

    def _send(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _receive_some(self, timeout: float) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        if not readable(fd, timeout):
            raise TimeoutError("the sandbox worker did not answer in time")
        return os.read(fd, 1 << 20)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self.broken

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        processes.kill(proc)
        self._errors.close()
