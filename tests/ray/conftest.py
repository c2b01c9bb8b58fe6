"""A real local Ray cluster for the session: `ray start --head --block` from PyPI's ray.

The head runs in its own process group with its own temp dir (so its processes are
recognisable), the dashboard's job server on a free loopback port, and `python` on
its PATH being this venv's (Ray jobs run `python -m podium.jobs.execute`). At the end
it is stopped through `podium.processes` and the test asserts that no raylet, GCS or
worker process of it is left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
from train_fixtures import (  # noqa: F401  (fixtures are found by name)
    make_table,
    memo_pairs,
    tiny_base,
    tiny_checkpoint,
)

from podium import processes
from podium.config import reset_settings

pytest.importorskip("ray", reason="the Ray tests need `pip install .[cluster]`")

START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class RayCluster:
    address: str  # the job server, http://127.0.0.1:PORT
    gcs_address: str  # 127.0.0.1:PORT, for ray.init
    temp_dir: Path


MARKER = "PODIUM_TEST_RAY_CLUSTER"

# The ports a head is told to listen on come from below the kernel's ephemeral range
# (32768-60999 here): a port picked there and released can be taken by any outgoing
# connection before Ray binds it, and with browsers and vLLM servers busy on the other
# worker, a head's job agent twice never came up ("No available agent to submit job"
# for 3 minutes). Each xdist worker draws from its own band; Ray's workers use
# 10002-19999.
_PORT_BANDS = {"gw0": (20000, 26000), "gw1": (26000, 32000)}
_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on, outside the ephemeral range, not handed out
    before in this process."""
    import random
    import socket

    low, high = _PORT_BANDS.get(os.environ.get("PYTEST_XDIST_WORKER", ""), (20000, 32000))
    for _ in range(1000):
        port = random.randrange(low, high)
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port in {low}-{high}")


AGENT_PORT_FLAGS = (
    "dashboard-agent-listen-port",
    "dashboard-agent-grpc-port",
    "metrics-export-port",
    "runtime-env-agent-port",
    "ray-client-server-port",
)


def cluster_processes(temp_dir: Path) -> list[psutil.Process]:
    """Live processes of the cluster rooted at `temp_dir`: its temp dir on their command
    line or the marker in their environment (Ray workers rename themselves `ray::...`)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            mine = str(temp_dir) in " ".join(proc.info["cmdline"] or ())
            if mine or proc.environ().get(MARKER) == str(temp_dir):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@contextlib.contextmanager
def running_cluster(
    path: str,
    env: dict[str, str] | None = None,
    token: str | None = None,
    *,
    node_ip: str = "127.0.0.1",
    extra_args: Sequence[str] = (),
) -> Iterator[RayCluster]:
    """`.venv/bin/ray start --head --block` with `path` as the head's PATH (and so its
    jobs'), stopped and checked at the end. `env`: more of the head's environment;
    `token`: the head requires this token (its dashboard answers 401 without it);
    `node_ip`: the node's address; `extra_args`: more `ray start` flags (`--num-gpus=3`)."""
    # A short path: Ray's socket names must fit in 107 bytes.
    temp_dir = Path(tempfile.mkdtemp(prefix="podray-", dir="/tmp"))
    gcs_port, dash_port = free_port(), free_port()
    venv_bin = str(Path(sys.executable).parent)
    head_env = {
        **os.environ,
        "PATH": path,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_NODE_IP_ADDRESS": node_ip,
        MARKER: str(temp_dir),
        # Ray jobs import the test job kinds (tests/jobs/kinds_for_tests.py).
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(JOBS_TESTS), os.environ.get("PYTHONPATH")])
        ),
        **(env or {}),
    }
    log = (temp_dir / "head.log").open("ab")
    head = processes.spawn(
        [
            f"{venv_bin}/ray",
            "start",
            "--head",
            "--block",
            "--num-cpus=2",
            f"--node-ip-address={node_ip}",
            f"--port={gcs_port}",
            "--include-dashboard=true",
            "--dashboard-host=127.0.0.1",
            f"--dashboard-port={dash_port}",
            # Two clusters live at once (the session's and a test's own): Ray's fixed
            # default agent ports would collide, and the second head's job agent never
            # comes up ("No available agent to submit job", seen in CI).
            *(f"--{flag}={free_port()}" for flag in AGENT_PORT_FLAGS),
            f"--temp-dir={temp_dir}",
            "--disable-usage-stats",
            *extra_args,
        ],
        env=head_env,
        stdout=log,
    )
    address = f"http://127.0.0.1:{dash_port}"

    def ready() -> bool:
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else None
            answer = httpx.get(f"{address}/api/version", headers=headers, timeout=2.0)
            return answer.status_code == 200
        except httpx.HTTPError:
            return False

    outcome = processes.wait_until(ready, head, START_TIMEOUT_S)
    if outcome != "ready":
        processes.stop(head, grace_s=10)
        pytest.fail(f"Ray head {outcome}: {(temp_dir / 'head.log').read_text()[-3000:]}")
    try:
        yield RayCluster(address, f"{node_ip}:{gcs_port}", temp_dir)
    finally:
        stop_cluster(head, temp_dir)
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    """The session's cluster, with this venv's `python` first on its PATH."""
    venv_bin = str(Path(sys.executable).parent)
    with running_cluster(f"{venv_bin}:{os.environ.get('PATH', '')}") as cluster:
        yield cluster


def agent_logs(cluster: RayCluster, tail: int = 3000) -> str:
    """The ends of the head's agent and raylet logs, for a failure message (the temp dir
    goes with the cluster)."""
    logs = cluster.temp_dir / "session_latest" / "logs"
    parts = []
    for name in ("dashboard_agent.log", "dashboard_agent.err", "raylet.out", "raylet.err"):
        with contextlib.suppress(OSError):
            parts.append(f"--- {name}\n" + (logs / name).read_text(errors="replace")[-tail:])
    return "\n".join(parts) or f"(no logs under {logs})"


# Seconds a test cluster's group has after SIGTERM before SIGKILL. `ray start --block`
# and its raylet outlived the SIGTERM by 17 s on idle cores and the whole 30 s grace at
# load (the GCS already gone); nothing of a test cluster needs a graceful end, and what
# is left is still looked for below.
STOP_GRACE_S = 5.0


def stop_cluster(head: subprocess.Popen[bytes], temp_dir: Path) -> None:
    """SIGTERM `ray start --block` and its group, SIGKILL after STOP_GRACE_S, then check
    nothing is left."""
    processes.stop(head, grace_s=STOP_GRACE_S)
    deadline = time.monotonic() + 30
    while cluster_processes(temp_dir) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = cluster_processes(temp_dir)
    for proc in left:  # never leave them running, but still fail the session
        processes.kill(proc.pid)
    assert not left, f"Ray processes left after stop: {[p.info['cmdline'] for p in left]}"


JOBS_TESTS = Path(__file__).resolve().parent.parent / "jobs"  # the small test job kinds


@pytest.fixture
def ray_home(
    podium_home: Path, ray_cluster: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A fresh home whose jobs go to the session's Ray cluster, with the test kinds."""
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", "kinds_for_tests")
    monkeypatch.syspath_prepend(str(JOBS_TESTS))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(JOBS_TESTS), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv("PODIUM_LAUNCHER", "ray")
    monkeypatch.setenv("PODIUM_RAY_ADDRESS", ray_cluster.address)
    monkeypatch.setenv("PODIUM_HEARTBEAT_SECONDS", "0.5")
    reset_settings()
    podium_home.mkdir(parents=True, exist_ok=True)
    yield podium_home
    reset_settings()
