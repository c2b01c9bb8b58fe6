"""Running untrusted Python code, contained (see DESIGN.md "Sandboxed code execution").

    from generators.sandbox import Limits, Sandbox, run
    run("print(sum(range(10)))").stdout                  # one call, default backend
    with Sandbox("docker", workers=2) as box:            # a warm pool for throughput
        results = box.run_many([Job(code) for code in codes])

Backends: `local` (bubblewrap fork servers, `generators.sandbox.local`) and `docker`
(warm containers through the Docker Engine API, `generators.sandbox.docker_backend`).
Both give the same `Result` and pass the same hostile-code tests.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterable

from generators.sandbox.limits import STATUSES, Limits, Result, Status
from generators.sandbox.pool import Job, Sandbox

__all__ = ["Job", "Limits", "Result", "STATUSES", "Sandbox", "Status", "run", "shared_sandbox"]

_shared: dict[str, Sandbox] = {}
_shared_lock = threading.Lock()


def shared_sandbox(backend: str | None = None) -> Sandbox:
    """A process-wide warm pool per backend, started on first use, closed at exit."""
    if backend is None:
        from podium.config import get_settings

        backend = get_settings().sandbox_backend
    with _shared_lock:
        box = _shared.get(backend)
        if box is None:
            box = _shared[backend] = Sandbox(backend).start()
            atexit.register(box.close)
        return box


def run(
    code: str,
    stdin: str | None = None,
    args: Iterable[str] = (),
    limits: Limits | None = None,
    backend: str | None = None,
) -> Result:
    """Run `code` as a Python script in a sandbox and return what happened."""
    return shared_sandbox(backend).run(code, stdin, args, limits)
