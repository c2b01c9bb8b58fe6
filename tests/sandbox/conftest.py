"""Real sandboxes for the tests: a local bwrap pool and a docker pool on a private dockerd.

`sandbox` is parametrized over both backends so every hostile test runs against each.
The docker engine is started by the `docker_host` fixture (root needed; an engine in
DOCKER_HOST is used instead when set) and the cached rootfs image is imported into it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_probes import write_table

from generators.sandbox import Limits, Sandbox
from generators.sandbox.dockerd import PrivateDockerd, sweep_dead_engines

REPO = Path(__file__).resolve().parents[2]
TABLE_PATH = REPO / "test-artifacts" / "hostile_table.md"
# Small limits keep the hostile tests quick; the pool's defaults are larger.
TEST_LIMITS = Limits(wall_s=5, cpu_s=3, memory_mb=256, processes=16, output_bytes=200_000)


@pytest.fixture(scope="session")
def docker_host() -> Iterator[str]:
    external = os.environ.get("DOCKER_HOST")
    if external:
        yield external
        return
    if os.geteuid() != 0:
        pytest.skip("a private dockerd needs root (or set DOCKER_HOST to a running engine)")
    # One engine per test session (parallel sessions must not share a data-root). Not
    # under the checkout: containers see their data-root's paths in /proc/self/mountinfo,
    # and the hostile suite checks that no path of the checkout shows inside a sandbox.
    base = Path(tempfile.gettempdir()) / "podium-dockerd"
    sweep_dead_engines(base)
    engine = PrivateDockerd(base / f"s{os.getpid()}")
    engine.start()
    try:
        yield engine.host
    finally:
        engine.stop()
        shutil.rmtree(engine.root, ignore_errors=True)


@pytest.fixture(scope="session")
def local_box() -> Iterator[Sandbox]:
    with Sandbox("local", workers=2, limits=TEST_LIMITS) as box:
        yield box


@pytest.fixture(scope="session")
def docker_box(docker_host: str) -> Iterator[Sandbox]:
    with Sandbox("docker", workers=2, limits=TEST_LIMITS, base_url=docker_host) as box:
        yield box


@pytest.fixture(
    params=[
        pytest.param("local", marks=pytest.mark.sandbox),
        pytest.param("docker", marks=[pytest.mark.sandbox, pytest.mark.docker]),
    ]
)
def box(request: pytest.FixtureRequest) -> Sandbox:
    return request.getfixturevalue(f"{request.param}_box")


@pytest.fixture(scope="session", autouse=True)
def hostile_table() -> Iterator[None]:
    """Write the "probe x backend -> outcome" table of the probes that ran."""
    yield
    write_table(TABLE_PATH)
