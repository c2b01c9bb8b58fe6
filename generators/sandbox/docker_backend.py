"""The `docker` backend: warm containers through the Docker Engine API (`DOCKER_HOST`).

Each worker is one long-lived container whose main process is the fork server (so it is
pid 1 and `kill(-1)` ends every leftover of a job), spoken to over the attach stream:
no per-job `docker exec`, so a job costs milliseconds, not ~100 ms. The container has no
network, a read-only root, tmpfs /tmp, memory and pids limits, every capability
dropped, no-new-privileges and a non-root uid (a different one per worker). The fork
server installs the local backend's seccomp filter on itself at start, on top of the
engine's default profile, so both backends refuse the same calls (Docker's profile
alone lets a job ptrace its own processes, for one). Any engine
that speaks the Docker API works (dockerd, Podman's service).

The image is a Debian rootfs with python3 built by `scripts/setup_sandbox.sh` and
imported on first use (`ensure_image`).
"""

from __future__ import annotations

import socket
import struct
import uuid
from pathlib import Path
from typing import Any

from generators.sandbox.limits import Limits, job_uid
from generators.sandbox.readable import readable
from generators.sandbox.seccomp import deny_list_bpf
from generators.sandbox.server_script import server_source
from generators.sandbox.worker import SERVER_ENV, Worker
from podium.config import get_settings
from podium.errors import PodiumError

OVERHEAD_MB = 96
LABEL = "podium.sandbox"


def default_image() -> str:
    return get_settings().sandbox_image


def default_rootfs() -> Path:
    """The tar `scripts/setup_sandbox.sh` builds (override: setting sandbox_rootfs)."""
    if override := get_settings().sandbox_rootfs:
        return Path(override).expanduser()
    return Path(__file__).resolve().parents[2] / ".cache" / "sandbox" / "rootfs.tar"


def docker_client(base_url: str | None = None) -> Any:
    import docker

    try:
        if base_url:
            return docker.DockerClient(base_url=base_url)
        return docker.from_env()
    except docker.errors.DockerException as exc:
        raise PodiumError(
            f"No Docker engine answers ({exc}). Start one and set DOCKER_HOST, "
            "or use --backend local."
        ) from None


def ensure_image(client: Any, image: str | None = None, rootfs: Path | None = None) -> str:
    """Make sure `image` exists in the engine, importing the cached rootfs if needed."""
    import docker

    image = image or default_image()
    try:
        client.images.get(image)
        return image
    except docker.errors.ImageNotFound:
        pass
    tar = rootfs or default_rootfs()
    if not tar.is_file():
        raise PodiumError(
            f"The docker sandbox image {image} is missing and no rootfs is cached at {tar}; "
            "build it with `bash scripts/setup_sandbox.sh`."
        )
    repository, _, tag = image.rpartition(":")
    client.api.import_image_from_file(str(tar), repository=repository, tag=tag)
    return image


class DockerWorker(Worker):
    backend = "docker"

    def __init__(
        self,
        index: int,
        image: str | None = None,
        base_url: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(index)
        self.image = image or default_image()
        self.base_url = base_url
        self.uid = job_uid()
        self.limits = limits or Limits()
        self.client: Any = None
        self.container_id: str | None = None
        self._sock: socket.socket | None = None
        self._response: Any = None
        self._frames = bytearray()
        self._eof = False
        self._memory_mb: int | None = None

    def _host_config(self) -> Any:
        uid = self.uid
        memory = f"{self.limits.memory_mb + OVERHEAD_MB}m"
        return self.client.api.create_host_config(
            network_mode="none",
            read_only=True,
            tmpfs={
                "/tmp": f"rw,nosuid,nodev,size=256m,uid={uid},gid={uid},mode=1777",
            },
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=self.limits.processes + 4,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            init=False,
            # With StdinOnce (below) the server sees EOF when our attach connection goes
            # away, even if this process is killed; the container then exits and is removed.
            auto_remove=True,
        )

    def _start(self) -> None:
        self.client = docker_client(self.base_url)
        ensure_image(self.client, self.image)
        command = ["python3", "-s", "-c", server_source(), "--tmp", "/tmp"]
        command += ["--wipe", "/dev/shm", "--wipe", "/dev/mqueue"]
        command += ["--seccomp", deny_list_bpf().hex()]
        created = self.client.api.create_container(
            self.image,
            command=command,
            user=f"{self.uid}:{self.uid}",
            working_dir="/tmp",
            environment=SERVER_ENV,
            stdin_open=True,  # with detach=False the SDK also sets StdinOnce
            tty=False,
            network_disabled=True,
            labels={LABEL: "1"},
            name=f"podium-sandbox-{self.index}-{uuid.uuid4().hex[:8]}",
            host_config=self._host_config(),
        )
        self.container_id = created["Id"]
        self._memory_mb = self.limits.memory_mb
        # Attach before start so that nothing the server writes is missed.
        raw = self.client.api.attach_socket(
            self.container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        self._response = raw
        self._sock = getattr(raw, "_sock", raw)
        self.client.api.start(self.container_id)

    def _before_job(self, limits: Limits) -> None:
        if limits.memory_mb != self._memory_mb and self.container_id is not None:
            memory = f"{limits.memory_mb + OVERHEAD_MB}m"
            self.client.api.update_container(
                self.container_id, mem_limit=memory, memswap_limit=memory
            )
            self._memory_mb = limits.memory_mb

    def _send(self, data: bytes) -> None:
        assert self._sock is not None
        self._sock.sendall(data)

    def _receive_some(self, timeout: float) -> bytes:
        """Stdout payload from the attach stream (8-byte frame headers removed)."""
        assert self._sock is not None
        out = bytearray()
        while not out:
            while len(self._frames) >= 8:
                kind = self._frames[0]
                (size,) = struct.unpack(">I", self._frames[4:8])
                if len(self._frames) < 8 + size:
                    break
                payload = bytes(self._frames[8 : 8 + size])
                del self._frames[: 8 + size]
                if kind == 1:
                    out.extend(payload)
            if out:
                break
            if not readable(self._sock, timeout):
                raise TimeoutError("the docker sandbox worker did not answer in time")
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                self._eof = True
                return b""
            self._frames.extend(chunk)
        return bytes(out)

    def alive(self) -> bool:
        """Idle workers write nothing, so a readable socket here means the stream ended
        (the container died) or carries stray frames, which are kept for the next read."""
        if self.container_id is None or self._eof or self.broken or self._sock is None:
            return False
        try:
            if readable(self._sock, 0):
                chunk = self._sock.recv(1 << 16)
                if not chunk:
                    self._eof = True
                    return False
                self._frames.extend(chunk)
        except OSError:
            return False
        return True

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        if self.container_id is not None and self.client is not None:
            try:
                self.client.api.remove_container(self.container_id, force=True)
            except Exception:  # noqa: S110 - already auto-removed, or the engine is gone
                pass
        self.container_id = None
        if self.client is not None:
            self.client.close()
            self.client = None
