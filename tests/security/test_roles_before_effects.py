"""A viewer's request is refused before it has any effect: no model asked (nor its
server started), no table created, no file written under the home. A recording HTTP
server stands in for the model endpoint, so a request that got through would show."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest
from recording_server import Recorder

from generators.vibes import answer_stream, build_eval_set, submit_vibe
from podium.app.views.validate.model import build_specs
from podium.config import reset_settings
from podium.errors import InvalidInput, PermissionDenied, PodiumError
from podium.identity import User
from podium.models import add_endpoint
from podium.models.registry import register_model
from podium.store.catalog.catalog import list_tables, table_exists
from podium.store.state.users import grant, resolve, use_session_user

ADMIN = User(name="boss@example.org", role="admin", source="config")
VIEWER = "viewer@example.org"
REVIEWER = "reviewer@example.org"


@pytest.fixture
def shared(
    podium_home: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A shared home with a viewer, an endpoint `ep` at the recorder and one vibe."""
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    monkeypatch.setenv("PODIUM_USER", ADMIN.name)
    monkeypatch.setenv("PODIUM_DEFAULT_ROLE", "none")
    reset_settings()
    grant(ADMIN, VIEWER, "viewer")
    add_endpoint(recorder.url, "ep", remote_model="m")
    submit_vibe("a prompt", tags=["json"], submitter=ADMIN)
    yield podium_home
    use_session_user(None)


def as_viewer() -> None:
    viewer = resolve(VIEWER, "oidc")
    use_session_user(lambda: viewer)  # as the app's login does


def podium_as(user: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        env={**os.environ, "PODIUM_USER": user},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_asking_a_model_checks_the_role_first(shared: Path, recorder: Recorder) -> None:
    """Generate's "Try a prompt" and the Vibe check's answer both call answer_stream."""
    as_viewer()
    with pytest.raises(PermissionDenied, match="ask model needs 'reviewer'"):
        list(answer_stream("ep", "hi"))
    assert recorder.seen == []


def test_vibes_submit_checks_the_role_before_asking(shared: Path, recorder: Recorder) -> None:
    proc = podium_as(VIEWER, "vibes", "submit", "a prompt", "--model", "ep")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "vibe needs 'reviewer'" in " ".join(proc.stderr.split())
    assert recorder.seen == []


def test_an_eval_set_checks_the_role_before_any_table(shared: Path) -> None:
    before = list_tables()
    proc = podium_as(VIEWER, "vibes", "evalset", "--tag", "json", "--out", "evals.mine")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "vibe needs 'reviewer'" in " ".join(proc.stderr.split())
    assert list_tables() == before and not table_exists("evals.mine")


def test_an_eval_set_may_not_take_a_reserved_name(shared: Path) -> None:
    before = list_tables()
    with pytest.raises(InvalidInput, match="keeps for a table's labels, ratings and notes"):
        build_eval_set("vibes.prompts__annotations", tags=["json"])
    with pytest.raises(InvalidInput, match="keeps for a table's validation report"):
        build_eval_set("evals.x__Validation", tags=["json"])
    assert list_tables() == before


def test_validate_stores_no_pasted_schema_before_the_role_check(shared: Path) -> None:
    as_viewer()
    with pytest.raises(PermissionDenied, match="run job needs 'operator'"):
        build_specs(["json-schema", "xsd"], schema_text='{"type": "object"}', xsd_text="<x/>")
    assert not (shared / "schemas").exists()


@pytest.fixture
def fake_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A registered checkpoint `ck` whose vLLM Python only logs how it was called (it
    "has" vLLM, and a server start exits at once): a start shows in the log."""
    log = tmp_path / "vllm-calls.log"
    python = tmp_path / "vllm-python"
    python.write_text(f'#!/bin/sh\necho "$@" >> {log}\n[ "$1" = "-c" ] && exit 0\nexit 1\n')
    python.chmod(0o755)
    monkeypatch.setenv("PODIUM_VLLM_PYTHON", str(python))
    reset_settings()
    checkpoint = tmp_path / "ck"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text('{"max_position_embeddings": 512}')
    (checkpoint / "model.safetensors").write_bytes(b"")
    register_model("ck", kind="trained", path=str(checkpoint))
    return log


def test_a_reviewer_may_not_start_a_model_server_by_asking_it(
    shared: Path, recorder: Recorder, fake_vllm: Path
) -> None:
    """Issue 44, point 16: `podium serve` refuses a reviewer, yet `vibes submit --model`
    (and the app's Vibe check) started the model's vLLM server for them."""
    grant(ADMIN, REVIEWER, "reviewer")
    proc = podium_as(REVIEWER, "vibes", "submit", "a prompt", "--model", "ck")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    message = " ".join(proc.stderr.split())
    assert "No server is running for 'ck'" in message and "needs 'operator'" in message
    assert not fake_vllm.exists()  # vLLM's Python was never even asked
    as_reviewer = resolve(REVIEWER, "oidc")
    with pytest.raises(PermissionDenied, match="No server is running for 'ck'"):
        list(answer_stream("ck", "hi", user=as_reviewer))
    assert not fake_vllm.exists()
    # An endpoint (no server to start) is still asked for a reviewer.
    with pytest.raises(PodiumError, match="recording only"):
        list(answer_stream("ep", "hi", user=as_reviewer))
    assert recorder.seen


def test_an_operator_asking_a_model_may_start_its_server(shared: Path, fake_vllm: Path) -> None:
    grant(ADMIN, "op@example.org", "operator")
    proc = podium_as("op@example.org", "vibes", "submit", "a prompt", "--model", "ck")
    assert proc.returncode != 0 and "exited with code 1 while starting" in proc.stderr
    assert "vllm.entrypoints" in fake_vllm.read_text()  # the start was tried
