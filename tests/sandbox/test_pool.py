"""The pool heals itself: a dead worker is replaced, by the watchdog or on the next job."""

from __future__ import annotations

import os
import signal
import time

import pytest

from generators.sandbox import Limits, Sandbox, run
from generators.sandbox.local import LocalWorker

pytestmark = pytest.mark.sandbox


def test_dead_worker_is_replaced_by_the_watchdog() -> None:
    with Sandbox("local", workers=1) as box:
        worker = box._idle.queue[0]
        assert isinstance(worker, LocalWorker) and worker.proc is not None
        os.killpg(worker.proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while box.replacements == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert box.replacements == 1
        assert box.run("print('alive')").stdout == "alive\n"


def test_worker_killed_mid_job_gives_sandbox_error_then_recovers() -> None:
    with Sandbox("local", workers=1, limits=Limits(wall_s=20)) as box:
        worker = box._idle.queue[0]
        assert worker.proc is not None
        killer = worker.proc.pid
        # The job asks for its own worker's death from outside, via a host-side timer.
        import threading

        threading.Timer(0.5, os.killpg, (killer, signal.SIGKILL)).start()
        result = box.run("import time\ntime.sleep(10)\n")
        assert result.status == "sandbox_error"
        assert box.run("print(6 * 7)").stdout == "42\n"
        assert box.replacements >= 1


def test_module_level_run_uses_the_configured_backend() -> None:
    result = run("print('hi')", backend="local")
    assert result.status == "ok" and result.stdout == "hi\n"


@pytest.mark.docker
def test_removed_container_is_replaced_before_the_next_job(docker_host: str) -> None:
    import docker

    from generators.sandbox.docker_backend import DockerWorker

    with Sandbox("docker", workers=1, base_url=docker_host) as box:
        worker = box._idle.queue[0]
        assert isinstance(worker, DockerWorker) and worker.container_id is not None
        client = docker.DockerClient(base_url=docker_host)
        client.api.remove_container(worker.container_id, force=True)
        client.close()
        result = box.run("print('fresh container')")
        assert result.status == "ok", result
        assert result.stdout == "fresh container\n"
        assert box.replacements == 1


@pytest.mark.docker
def test_containers_of_a_killed_process_go_away(docker_host: str) -> None:
    """A job process killed with SIGKILL cannot close its pool: the containers still end."""
    import subprocess
    import sys

    import docker

    script = (
        "import os, sys\n"
        "from generators.sandbox import Sandbox\n"
        "box = Sandbox('docker', workers=2, base_url=sys.argv[1]).start()\n"
        "assert box.run('print(1)').ok\n"
        "print(' '.join(w.container_id for w in list(box._idle.queue)), flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, docker_host], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == -9, done.stderr
    ids = done.stdout.split()
    assert len(ids) == 2
    client = docker.DockerClient(base_url=docker_host)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            # The low-level listing: the high-level one inspects each container and
            # races with the very removal this test waits for.
            remaining = [c["Id"] for c in client.api.containers(all=True) if c["Id"] in ids]
            if not remaining:
                break
            time.sleep(0.5)
    finally:
        client.close()
    assert remaining == []


@pytest.mark.docker
def test_missing_image_says_how_to_build_it(
    docker_host: str,
    tmp_path: os.PathLike[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    from podium.config import reset_settings
    from podium.errors import PodiumError

    monkeypatch.setenv("PODIUM_SANDBOX_ROOTFS", str(tmp_path) + "/missing.tar")
    reset_settings()  # settings are read once per process: read them again, and after
    request.addfinalizer(reset_settings)
    with pytest.raises(PodiumError, match="scripts/setup_sandbox.sh"):
        Sandbox("docker", workers=1, image="podium-sandbox:absent", base_url=docker_host).start()


def test_bare_baseline_leaves_host_ipc_and_processes_alone() -> None:
    """The unconfined benchmark baseline must never clean up the *host* after a job."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.shmget(0, 4096, 0o1000 | 0o600)
    assert segment >= 0
    try:
        with Sandbox("bare", workers=1) as box:
            assert box.run("print('ran')").stdout == "ran\n"
        with open("/proc/sysvipc/shm") as fh:
            ids = [int(line.split()[1]) for line in fh.read().splitlines()[1:]]
        assert segment in ids
    finally:
        libc.shmctl(segment, 0, None)
