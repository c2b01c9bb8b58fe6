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
import subprocess
import time
from pathlib import Path
from types import TracebackType

from podium import processes
from podium.errors import PodiumError
from podium.processes import PidFile

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
            self.proc = processes.spawn(cmd, stdout=log)
        outcome = processes.wait_until(self._answers, self.proc, START_TIMEOUT_S, interval_s=0.2)
        if outcome == "exited":
            raise PodiumError(f"dockerd exited at start; see {self.log}")
        if outcome == "timeout":
            self.stop()
            raise PodiumError(
                f"dockerd did not answer within {START_TIMEOUT_S:.0f} s; see {self.log}"
            )
        self._prune_leftovers()

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
        processes.reap(PidFile(self.pidfile).read(), "dockerd", str(self.root))

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            processes.stop(proc, grace_s=30)


def sweep_dead_engines(base: Path) -> None:
    """Delete engine folders under `base` whose daemon is gone (left by crashed runs)."""
    if not base.is_dir():
        return
    for folder in base.iterdir():
        alive = PidFile(folder / "dockerd.pid").live("dockerd", str(folder.resolve()))
        # A folder this young may belong to an engine that has not written its pidfile.
        young = folder.is_dir() and time.time() - folder.stat().st_mtime < START_TIMEOUT_S * 2
        if alive is None and not young and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
