"""A shared Podium deployment for tests: PostgreSQL (catalog + state) and an S3 warehouse.

Every process of the deployment (CLI users, workers, the test itself) gets the same
settings and its own PODIUM_HOME, as on separate machines; only the URLs are shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import cli_fork
from postgres import postgres_server  # type: ignore[import-not-found]
from s3_store import S3Server, s3_server  # type: ignore[import-not-found]

WAREHOUSE_PREFIX = "warehouse"


@dataclass(frozen=True)
class SharedStack:
    catalog_uri: str
    s3: S3Server
    root: Path  # homes of the stack's processes live under here
    admin: str

    @property
    def files(self) -> Path:
        """The team's file share: uploads, cards and exports every process may use."""
        return self.root / "files"

    @property
    def warehouse(self) -> str:
        return f"s3://{self.s3.bucket}/{WAREHOUSE_PREFIX}"

    def env(self, home: str, user: str) -> dict[str, str]:
        """The environment of one process of the deployment, acting as `user`."""
        path = self.root / home
        path.mkdir(parents=True, exist_ok=True)
        return {
            "PODIUM_HOME": str(path),
            "PODIUM_CATALOG_URI": self.catalog_uri,
            "PODIUM_WAREHOUSE": self.warehouse,
            "PODIUM_CATALOG_PROPERTIES": json.dumps(self.s3.catalog_properties),
            "PODIUM_ADMINS": self.admin,
            "PODIUM_DEFAULT_ROLE": "none",  # only people an admin granted a role get in
            "PODIUM_USER": user,
            "PODIUM_FILE_ROOTS": str(self.files),
        }

    def podium(
        self, user: str, *args: str, home: str | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """Run the real CLI as `user` (in that user's own home unless `home` is given)."""
        env = {**os.environ, **self.env(home or user.split("@")[0], user)}
        return cli_fork.run(
            [sys.executable, "-m", "podium.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )

    def ok(self, user: str, *args: str, timeout: float = 600) -> str:
        proc = self.podium(user, *args, timeout=timeout)
        assert proc.returncode == 0, f"podium {' '.join(args)} as {user}:\n{proc.stderr[-3000:]}"
        return proc.stdout

    def object_keys(self) -> list[str]:
        """Every object in the warehouse bucket (what a second engine would read)."""
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=self.s3.endpoint,
            aws_access_key_id=self.s3.catalog_properties["s3.access-key-id"],
            aws_secret_access_key=self.s3.catalog_properties["s3.secret-access-key"],
            region_name=self.s3.catalog_properties["s3.region"],
        )
        keys: list[str] = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.s3.bucket):
            keys.extend(obj["Key"] for obj in page.get("Contents", []))
        return keys


@contextmanager
def shared_stack(root: Path, admin: str = "admin@team.example") -> Iterator[SharedStack]:
    """Start PostgreSQL and the S3 server; stop both (and lose their data) on exit."""
    with postgres_server() as url, s3_server() as s3:
        yield SharedStack(url, s3, root, admin)


@dataclass
class WorkerProcess:
    proc: subprocess.Popen[str]
    log: Path

    @property
    def output(self) -> str:
        return self.log.read_text()


@contextmanager
def workers(stack: SharedStack, count: int, user: str) -> Iterator[list[WorkerProcess]]:
    """`count` real `podium worker` processes, each in its own home, polling one queue.

    Yields once every worker has said it started, so jobs queued afterwards can go to
    any of them; stops them (SIGTERM, as `podium up` does) on exit.
    """
    started: list[WorkerProcess] = []
    try:
        for i in range(count):
            log = stack.root / f"worker-{i}.log"
            env = {**os.environ, **stack.env(f"worker-{i}", user)}
            handle = log.open("w")
            proc = subprocess.Popen(
                [sys.executable, "-m", "podium.cli", "worker", "--poll", "0.3"],
                stdout=handle,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
            )
            handle.close()
            started.append(WorkerProcess(proc, log))
        for w in started:
            wait_until(lambda w=w: "started" in w.output, 120, f"worker {w.proc.pid} to start")
        yield started
    finally:
        for w in started:
            w.proc.terminate()
        for w in started:
            try:
                w.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
