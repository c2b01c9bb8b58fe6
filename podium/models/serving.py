"""vLLM servers on demand: one per checkpoint, reused by the app, the worker and the CLI.

`ensure_server(name)` returns `(base_url, served_model_name)` for any registered model:
an endpoint is returned as is; a checkpoint gets a running vLLM server on a free
loopback port, started if none is alive. Servers are recorded in the state database
(model, pid, port, url, log) so every process finds them; a file lock per model keeps
two processes from starting the same one. Start-up waits for `/health` and then one
real completion (health can be green before the engine generates). A crash or a failed
start raises a `PodiumError` carrying the log tail. A small watcher process beside each
server stops it after `server_idle_seconds` without requests. A server one process
starts for itself (`launch_server`: a job's replicas) is stopped by an owner watcher
when that process dies (`podium.processes.watch_owner`).
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from sqlalchemy import insert

from podium import processes
from podium.config import get_settings
from podium.errors import PermissionDenied, PodiumError
from podium.identity import User, require
from podium.locks import file_lock
from podium.models.registry import ModelInfo, get_model
from podium.models.server_records import (  # noqa: F401 - re-exported for callers
    VLLM_MARKER,
    WATCHER_MARKER,
    ServerInfo,
    _alive,
    _forget,
    _healthy,
    _now,
    _row,
    _rows,
    log_tail,
    servers_table,
    touch,
)
from podium.models.state_rows import from_row
from podium.models.vllm_launch import free_port, has_gpu, server_command, server_env, vllm_python
from podium.reporting import Reporter
from podium.store.state.state import engine
from podium.store.state.users import acting_user

START_TIMEOUT_S = 900.0


# A server busy generating on a small CPU answers /health late: wait this long for it
# before deciding it is broken (one replaced a working server Generate was using).
REUSE_PATIENCE_S = 60.0
ServerChoice = Literal["reuse", "start", "replace"]


def _info(r: Any) -> ServerInfo:
    return from_row(
        ServerInfo,
        r,
        started_at=r.started_at.isoformat(),
        last_used=r.last_used.isoformat(),
        alive=_alive(r),
    )


def list_servers() -> list[ServerInfo]:
    """The servers Podium started on this machine."""
    return [_info(r) for r in _rows()]


def server_choice(server: ServerInfo | None, checkpoint: str | None) -> ServerChoice:
    """What serving a model takes, given its recorded server: reuse a live one for the
    same checkpoint (whoever started it: never a second server for one model), replace
    one that is dead or serves an outdated path, start one where none is recorded."""
    if server is None:
        return "start"
    if not server.alive or server.checkpoint != checkpoint:
        return "replace"
    return "reuse"


@dataclass(frozen=True)
class Served:
    url: str  # OpenAI-compatible base URL, ".../v1"
    model: str  # the served model name
    started: bool  # this call started the server (its caller may stop it afterwards)


def stop_server(model: str) -> bool:
    """Stop the server of `model` (and its watcher); False if none was recorded."""
    row = _row(model)
    if row is None:
        return False
    processes.reap(row.watcher_pid, WATCHER_MARKER, grace_s=5)
    processes.reap(row.pid, VLLM_MARKER)
    _forget(model)
    return True


def cleanup_dead() -> list[str]:
    """Forget servers whose process is gone; returns their model names."""
    gone = []
    for row in _rows():
        if not _alive(row):
            gone.append(row.model)
            stop_server(row.model)
    return gone


def _wait_ready(
    proc: subprocess.Popen[bytes],
    url: str,
    name: str,
    log: Path,
    timeout_s: float,
    reporter: Reporter,
    *,
    pooling: bool = False,
) -> None:
    def waiting(elapsed_s: float) -> None:
        reporter.check_cancelled()
        reporter.phase(f"starting vLLM for {name} ({elapsed_s:.0f}s)")

    deadline = time.monotonic() + timeout_s
    outcome = processes.wait_until(
        lambda: _healthy(url, timeout=2.0), proc, timeout_s, on_wait=waiting
    )
    if outcome == "exited":
        raise PodiumError(
            f"vLLM server for {name!r} exited with code {proc.returncode} while starting. "
            f"Log {log}:\n{log_tail(log)}"
        )
    if outcome == "timeout":
        processes.stop(proc)
        raise PodiumError(
            f"vLLM server for {name!r} was not healthy after {timeout_s:.0f} s; stopped it. "
            f"Log {log}:\n{log_tail(log)}"
        )
    # /health turns green before the engine can generate: one real completion (a pooling
    # server's: one embedding) proves it.
    try:
        resp = httpx.post(
            url + ("/embeddings" if pooling else "/completions"),
            json={"model": name, "input": ["Hello"]}
            if pooling
            else {"model": name, "prompt": "Hello", "max_tokens": 1},
            timeout=max(60.0, deadline - time.monotonic()),
        )
        resp.raise_for_status()
    except httpx.HTTPError as exc:
        processes.stop(proc)
        raise PodiumError(
            f"vLLM server for {name!r} is up but failed its warm-up request ({exc}). "
            f"Log {log}:\n{log_tail(log)}"
        ) from exc


def launch_server(
    model: ModelInfo,
    timeout_s: float,
    reporter: Reporter,
    host: str = "127.0.0.1",
    *,
    extra_args: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
    owner: processes.Recorded | None | Literal["caller"] = "caller",
    pooling: bool = False,
) -> tuple[subprocess.Popen[bytes], str, Path]:
    """Start one vLLM server for `model` on a free port and wait until it generates;
    `(process, base_url, log)`. Unrecorded: `_start` records it, a replica's owner stops it.
    `extra_args`/`extra_env` add server flags and environment (async RL's replicas).

    `owner` (by default the calling process: a job, a replica's Ray actor) is watched
    from the start: if it dies without stopping the server (SIGKILL, the out-of-memory
    killer), a watcher stops the server's whole group within seconds. None: a shared
    server that outlives whoever started it (its idle watcher stops it). `pooling`: the
    server makes embeddings (its flags in `extra_args`), so its warm-up is one."""
    if not model.path or not Path(model.path, "config.json").is_file():
        raise PodiumError(
            f"Model {model.name!r} points at {model.path}, which is not a checkpoint directory "
            "any more; re-register it with `podium models add PATH`."
        )
    gpu = has_gpu()
    port = free_port(host)
    url = f"http://{host}:{port}/v1"
    logs = get_settings().ensure_home() / "servers"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{model.name}-{port}.log"
    cmd = server_command(vllm_python(), model.path, model.name, port, gpu=gpu, host=host)
    cmd += extra_args or []
    env = {**server_env(gpu=gpu), **(extra_env or {})}
    reporter.log(f"starting vLLM for {model.name} on {url} (log {log})")
    with open(log, "ab") as fh:
        # Own group: stopping the server stops its engine processes with it.
        proc = processes.spawn(cmd, stdout=fh, env=env)
        if owner is not None:  # before the ~1 min start-up: the owner may die during it
            processes.watch_owner(
                proc.pid, processes.owner_of_this() if owner == "caller" else owner, stdout=fh
            )
    try:
        _wait_ready(proc, url, model.name, log, timeout_s, reporter, pooling=pooling)
    except BaseException:
        processes.stop(proc, grace_s=10)
        raise
    return proc, url, log


def _start(model: ModelInfo, timeout_s: float, reporter: Reporter) -> str:
    # Shared by every process on this machine, so no one process owns it.
    proc, url, log = launch_server(model, timeout_s, reporter, owner=None)
    watcher = _start_watcher(model.name)
    now = _now()
    _forget(model.name)
    with engine().begin() as conn:
        conn.execute(
            insert(servers_table).values(
                model=model.name,
                host=socket.gethostname(),
                pid=proc.pid,
                watcher_pid=watcher,
                port=httpx.URL(url).port,
                url=url,
                checkpoint=model.path,
                log_path=str(log),
                started_at=now,
                last_used=now,
            )
        )
    return url


def _start_watcher(model: str) -> int | None:
    if get_settings().server_idle_seconds <= 0:
        return None
    proc = processes.spawn(
        processes.python_module(WATCHER_MARKER, model), stdout=subprocess.DEVNULL
    )
    return proc.pid


def _first_remote_model(model: ModelInfo) -> str:
    """An endpoint registered without a model id serves whatever it lists first."""
    from podium.models.endpoint_keys import endpoint_key

    key = endpoint_key(model)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        resp = httpx.get(f"{model.url}/models", headers=headers, timeout=15.0)
        resp.raise_for_status()
        names = [m["id"] for m in resp.json().get("data", [])]
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        raise PodiumError(
            f"Endpoint {model.name!r} ({model.location}) did not list its models ({exc}); "
            "check the URL and key, or register it with `--model-id`."
        ) from exc
    if not names:
        raise PodiumError(
            f"Endpoint {model.location} lists no models; register it with --model-id."
        )
    return str(names[0])


def _healthy_within(row: Any, patience_s: float) -> bool:
    """The live server answers /health within `patience_s` (False once its process dies)."""
    deadline = time.monotonic() + patience_s
    while True:
        if _healthy(row.url):
            return True
        if time.monotonic() >= deadline or not _alive(row):
            return False
        time.sleep(1.0)


def serve(
    model_name: str,
    *,
    reporter: Reporter | None = None,
    timeout_s: float = START_TIMEOUT_S,
    patience_s: float = REUSE_PATIENCE_S,
    user: User | None = None,
) -> Served:
    """A server for `model_name`: the running one (see `server_choice`), else a new one.

    Anyone may use a running server or an endpoint; starting, replacing or stopping a
    server is `serve_model`'s (operators), checked for `user` (default: whoever is
    acting) before anything is started: asking a model one prompt (a reviewer's Vibe
    check) must not start what `podium serve` refuses them."""
    reporter = reporter or Reporter()
    model = get_model(model_name)
    if model.kind == "endpoint":
        return Served(model.url or "", model.remote_model or _first_remote_model(model), False)
    lock = get_settings().ensure_home() / "servers" / f".{model.name}.lock"
    with file_lock(lock):
        row = _row(model.name)
        choice = server_choice(None if row is None else _info(row), model.path)
        if row is not None and choice == "reuse" and _healthy_within(row, patience_s):
            touch(model.name)
            return Served(row.url, model.name, started=False)
        _may_start(model.name, user or acting_user())
        if row is not None:
            stop_server(model.name)  # dead, never healthy, or serving an outdated path
        return Served(_start(model, timeout_s, reporter), model.name, started=True)


def _may_start(model: str, user: User) -> None:
    try:
        require(user, "serve_model")
    except PermissionDenied as exc:
        raise PermissionDenied(
            f"No server is running for {model!r}, and starting one is an operator's work: "
            f"{exc} Or ask an operator to start it (`podium serve {model}`)."
        ) from None


def ensure_server(
    model_name: str,
    *,
    reporter: Reporter | None = None,
    timeout_s: float = START_TIMEOUT_S,
    user: User | None = None,
) -> tuple[str, str]:
    """`(base_url, served_model_name)` of a server for `model_name`, started if needed
    (and if `user`, default whoever is acting, may start one)."""
    served = serve(model_name, reporter=reporter, timeout_s=timeout_s, user=user)
    return served.url, served.model
