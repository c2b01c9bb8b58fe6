"""An unsandboxed fork server: the same server as every worker, started as a plain process.

It contains nothing (the job runs as the calling user, with the host's network and
files); it exists as the baseline that `benchmarks/sandbox.py` measures the sandboxes
against, so that their overhead is a ratio measured in the same run.
"""

from __future__ import annotations

import shutil
import tempfile

from generators.sandbox.server_script import interpreter, server_source
from generators.sandbox.worker import ProcessWorker


class BareWorker(ProcessWorker):
    backend = "bare"

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self._dir = tempfile.mkdtemp(prefix=f"podium-bare-{index}-")

    def command(self) -> list[str]:
        # The same base interpreter the local sandbox runs (not a venv shim), so that the
        # baseline differs from it only by the confinement.
        python = interpreter()[0]
        return [python, "-s", "-c", server_source(), "--tmp", self._dir]

    def close(self) -> None:
        super().close()
        shutil.rmtree(self._dir, ignore_errors=True)
