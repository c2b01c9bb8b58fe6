"""A throwaway S3-compatible server for tests: moto in server mode on a loopback port.

moto keeps objects in the server process's memory, so every process that talks to it
(the test, workers, the CLI) sees one bucket, as with MinIO or SeaweedFS in production.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from postgres import free_port  # type: ignore[import-not-found]

# moto accepts any credentials; these only have to be the same everywhere.
ACCESS_KEY = "podium-test"
SECRET_KEY = "podium-test-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    endpoint: str  # http://127.0.0.1:PORT
    bucket: str

    @property
    def catalog_properties(self) -> dict[str, str]:
        """pyiceberg FileIO properties that point a catalog at this server."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.force-virtual-addressing": "false",  # path-style: bucket in the path
        }


def _wait_for(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"moto server exited with code {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"moto server did not listen on port {port} within {timeout:.0f} s")


@contextmanager
def s3_server(bucket: str = "podium") -> Iterator[S3Server]:
    """Start moto's S3 server with one empty bucket; stops it (and its data) on exit."""
    import boto3

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port, proc)
        endpoint = f"http://127.0.0.1:{port}"
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        ).create_bucket(Bucket=bucket)
        yield S3Server(endpoint, bucket)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
