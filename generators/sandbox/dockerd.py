"""A private Docker engine for tests and single-machine setups without one.

    with PrivateDockerd(Path(".cache/dockerd")) as engine:
        os.environ["DOCKER_HOST"] = engine.host
        ensure_image(docker.DockerClient(base_url=engine.host), ".cache/sandbox/rootfs.tar")

Everything the daemon owns (socket, data-root, exec-root, pidfile, log) lives under the
given folder; it needs root, touches no firewall (`--iptables=false`) and runs no
bridge (sandbox containers use `network_mode=none` anyway). A daemon left behind by a
crashed run is found by its pidfile and stopped before a new one starts.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

from podium.errors import PodiumError

START_TIMEOUT_S = 60.0


class PrivateDockerd:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.socket = self.root / "docker.sock"
        self.pidfile = self.root / "dockerd.pid"
        self.log = self.root / "dockerd.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"

    def __enter__(self) -> PrivateDockerd:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        dockerd = shutil.which("dockerd")
        if dockerd is None:
            raise PodiumError("dockerd is not installed: `apt-get install docker.io`.")
        if os.geteuid() != 0:
            raise PodiumError("A private dockerd needs root; set DOCKER_HOST to a running engine.")
        self.root.mkdir(parents=True, exist_ok=True)
        self._stop_leftover()
        cmd = [
            dockerd,
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
            "--host",
            self.host,
            "--data-root",
            str(self.root / "data"),
            "--exec-root",
            str(self.root / "exec"),
            "--pidfile",
            str(self.pidfile),
        ]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PodiumError(f"dockerd exited at start; see {self.log}")
            if self._answers():
                self._prune_leftovers()
                return
            time.sleep(0.2)
        self.stop()
        raise PodiumError(f"dockerd did not answer within {START_TIMEOUT_S:.0f} s; see {self.log}")

    def _answers(self) -> bool:
        import docker

        if not self.socket.exists():
            return False
        try:
            client = docker.DockerClient(base_url=self.host, timeout=5)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:  # not up yet: any connection error means "try again"
            return False

    def _prune_leftovers(self) -> None:
        """Stopped sandbox containers of a crashed run stay in the data-root: remove them."""
        import docker

        from generators.sandbox.docker_backend import LABEL

        client = docker.DockerClient(base_url=self.host)
        try:
            client.containers.prune(filters={"label": LABEL})
        finally:
            client.close()

    def _stop_leftover(self) -> None:
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return
        if b"dockerd" in cmdline and str(self.root).encode() in cmdline:
            _terminate(pid)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def sweep_dead_engines(base: Path) -> None:
    """Delete engine folders under `base` whose daemon is gone (left by crashed runs)."""
    if not base.is_dir():
        return
    for folder in base.iterdir():
        pidfile = folder / "dockerd.pid"
        try:
            pid = int(pidfile.read_text().strip())
            alive = Path(f"/proc/{pid}").exists()
        except (OSError, ValueError):
            alive = False
        # A folder this young may belong to an engine that has not written its pidfile.
        young = folder.is_dir() and time.time() - folder.stat().st_mtime < START_TIMEOUT_S * 2
        if not alive and not young and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(150):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.2)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
