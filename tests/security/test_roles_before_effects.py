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
from podium.errors import InvalidInput, PermissionDenied
from podium.identity import User
from podium.models import add_endpoint
from podium.store.catalog.catalog import list_tables, table_exists
from podium.store.state.users import grant, resolve, use_session_user

ADMIN = User(name="boss@example.org", role="admin", source="config")
VIEWER = "viewer@example.org"


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
    with pytest.raises(InvalidInput, match="ends in '__annotations'"):
        build_eval_set("vibes.prompts__annotations", tags=["json"])
    with pytest.raises(InvalidInput, match="ends in '__validation'"):
        build_eval_set("evals.x__Validation", tags=["json"])
    assert list_tables() == before


def test_validate_stores_no_pasted_schema_before_the_role_check(shared: Path) -> None:
    as_viewer()
    with pytest.raises(PermissionDenied, match="run job needs 'operator'"):
        build_specs(["json-schema", "xsd"], schema_text='{"type": "object"}', xsd_text="<x/>")
    assert not (shared / "schemas").exists()
