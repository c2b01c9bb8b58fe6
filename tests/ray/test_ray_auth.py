"""Ray's token authentication and the user's Ray configuration (issue 34, build 8).

A job's private Ray leaves nothing behind: Ray 2.60 wrote ~/.ray/auth_token on a local
`ray.init()`, and every later `ray start --head` on the machine then required a token,
which failed Podium's Ray launcher on that head. A head with token authentication is
reached through `ray_auth_token_path`, by the launcher and by `ray.init` (replicas, the
learner), and without it the error names the setting."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest
from conftest import RayCluster, running_cluster

from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.launchers.ray import RayLauncher
from podium.jobs.queue import get_job
from podium.ray_auth import _refresh_ray
from podium.reporting import Reporter
from trainers.async_rl.pool import ray_for_job

pytestmark = pytest.mark.ray

RAY_AUTH = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A user's home with no Ray state, and RAY_AUTH_* unset (as a user's shell has
    them), put back afterwards in this process's Ray too."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in (*RAY_AUTH, "RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PODIUM_RAY_ADDRESS", raising=False)
    reset_settings()
    _refresh_ray()
    yield home
    monkeypatch.undo()
    _refresh_ray()
    reset_settings()


def test_a_private_ray_leaves_no_token_behind(podium_home: Path, user_home: Path) -> None:
    import ray

    with ray_for_job(1, Reporter()) as joined:
        mode = joined.get(joined.remote(lambda: os.environ.get("RAY_AUTH_MODE")).remote())
        token_path = os.environ.get("RAY_AUTH_TOKEN_PATH", "")
    assert not ray.is_initialized()
    assert not (user_home / ".ray").exists(), list((user_home / ".ray").iterdir())
    assert all(name not in os.environ for name in RAY_AUTH)
    # Token authentication all the same, with the job's own token, gone with its Ray.
    assert mode == "token" and token_path
    assert user_home not in Path(token_path).parents and not Path(token_path).parent.exists()


@pytest.fixture
def token_head(user_home: Path) -> Iterator[tuple[RayCluster, Path]]:
    """A head with token authentication (RAY_AUTH_MODE=token), its token in the head
    user's ~/.ray/auth_token, as `ray get-auth-token --generate` leaves it."""
    token = secrets.token_hex(32)
    head_home = user_home.parent / "head-user"
    (head_home / ".ray").mkdir(parents=True)
    token_file = head_home / ".ray" / "auth_token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    venv_bin = str(Path(sys.executable).parent)
    env = {"HOME": str(head_home), "RAY_AUTH_MODE": "token"}
    with running_cluster(f"{venv_bin}:{os.environ.get('PATH', '')}", env, token) as cluster:
        yield cluster, token_file


def test_a_token_head_takes_jobs_and_clients_with_the_configured_token(
    podium_home: Path, token_head: tuple[RayCluster, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    from podium.ray_join import ray_module

    cluster, token_file = token_head
    jobs_tests = Path(__file__).resolve().parent.parent / "jobs"
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", "kinds_for_tests")
    monkeypatch.syspath_prepend(str(jobs_tests))
    monkeypatch.setenv("PYTHONPATH", str(jobs_tests))
    monkeypatch.setenv("PODIUM_LAUNCHER", "ray")
    monkeypatch.setenv("PODIUM_RAY_ADDRESS", cluster.address)
    reset_settings()

    # Without the token: Podium's errors name the setting.
    with pytest.raises(InvalidInput, match="ray_auth_token_path"):
        RayLauncher()
    with monkeypatch.context() as joining:  # as a job on the cluster's node would
        joining.setenv("RAY_ADDRESS", cluster.gcs_address)
        with pytest.raises(InvalidInput, match="ray_auth_token_path"):
            ray_module()
    assert not ray.is_initialized()

    # With it: a job submitted through the launcher runs, and ray.init joins.
    monkeypatch.setenv("PODIUM_RAY_AUTH_TOKEN_PATH", str(token_file))
    reset_settings()
    job_id = submit(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"))
    result = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert f"job {job_id}: succeeded" in result.stdout, result.stdout + result.stderr
    assert get_job(job_id)["launcher"] == "ray"
    with monkeypatch.context() as joining:
        joining.setenv("RAY_ADDRESS", cluster.gcs_address)
        try:
            joined = ray_module()  # as replicas and the learner join a configured cluster
            assert joined.get(joined.remote(lambda: 1 + 1).remote()) == 2
        finally:
            ray.shutdown()

    # A wrong token is refused with the setting named too.
    wrong = token_file.parent / "wrong"
    wrong.write_text(secrets.token_hex(32))
    monkeypatch.setenv("PODIUM_RAY_AUTH_TOKEN_PATH", str(wrong))
    reset_settings()
    with pytest.raises(InvalidInput, match="refused the token in ray_auth_token_path"):
        RayLauncher()
