"""An endpoint's API key is a secret Podium holds for it, or an environment variable the
deployment allows; Podium's own settings never leave through a model endpoint, and a
key goes only to the URL it was given for. A tiny HTTP server records what arrives."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import cli_fork
import pytest
from click.testing import CliRunner
from recording_server import Recorder
from sqlalchemy import update

from generators.client import endpoint_for
from podium.cli import app
from podium.config import reset_settings
from podium.errors import PermissionDenied
from podium.models import add_endpoint
from podium.models.registry import models_table
from podium.store.state.state import engine

COOKIE = "cookie-secret-that-signs-logins"


@pytest.fixture
def secrets_set(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PODIUM_COOKIE_SECRET", COOKIE)
    monkeypatch.setenv("PODIUM_OIDC_CLIENT_SECRET", "oidc-client-secret")
    reset_settings()
    return podium_home


def _edit_row(name: str, **values: str) -> None:
    with engine().begin() as conn:
        conn.execute(update(models_table).where(models_table.c.name == name).values(**values))


def _ask(name: str) -> None:
    """What every model use does: build the endpoint, then call it with its client."""
    endpoint_for(name).sync_client().models.list()


def test_podium_settings_cannot_be_an_endpoint_key(secrets_set: Path, recorder: Recorder) -> None:
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "models", "add-endpoint", recorder.url,
         "--name", "x", "--api-key-env", "PODIUM_COOKIE_SECRET"],
        env=os.environ, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "cannot come from $PODIUM_COOKIE_SECRET" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr
    # Not on the allow-list (empty by default): refused as well.
    with pytest.raises(PermissionDenied, match="not an allowed endpoint-key variable"):
        add_endpoint(recorder.url, "y", api_key_env="AWS_SECRET_ACCESS_KEY")
    assert recorder.seen == []


def test_a_row_edited_to_name_a_secret_is_refused_at_use(
    secrets_set: Path, recorder: Recorder
) -> None:
    add_endpoint(recorder.url, "leak", remote_model="m")
    _edit_row("leak", api_key_env="PODIUM_COOKIE_SECRET")
    with pytest.raises(PermissionDenied, match="PODIUM_"):
        _ask("leak")
    _edit_row("leak", api_key_env="PODIUM_OIDC_CLIENT_SECRET", remote_model="")
    with pytest.raises(PermissionDenied, match="PODIUM_"):
        _ask("leak")  # nor when the model id is discovered from the endpoint
    assert recorder.seen == []


def test_an_allowed_variable_is_sent_and_only_to_its_url(
    secrets_set: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EP_KEY", "sk-allowed")
    monkeypatch.setenv("BOUND_KEY", "sk-bound")
    monkeypatch.setenv("PODIUM_ENDPOINT_KEY_ENVS", "EP_KEY,BOUND_KEY=https://api.example.org")
    reset_settings()
    add_endpoint(recorder.url, "ok", api_key_env="EP_KEY", remote_model="m")
    _ask("ok")
    add_endpoint(recorder.url, "discover", api_key_env="EP_KEY")
    _ask("discover")  # /v1/models to find the model id, then the client's own call
    assert recorder.seen == ["Bearer sk-allowed"] * 3
    with pytest.raises(PermissionDenied, match="only be sent to https://api.example.org/v1"):
        add_endpoint(recorder.url, "bound", api_key_env="BOUND_KEY")
    add_endpoint(recorder.url, "bound", remote_model="m")
    _edit_row("bound", api_key_env="BOUND_KEY")
    with pytest.raises(PermissionDenied, match="only be sent to"):
        _ask("bound")
    assert len(recorder.seen) == 3


def test_a_stored_key_is_private_and_goes_only_to_its_url(
    secrets_set: Path, recorder: Recorder
) -> None:
    add_endpoint(recorder.url, "held", remote_model="m")
    result = CliRunner().invoke(app, ["models", "set-key", "held"], input="sk-held\n")
    assert result.exit_code == 0, result.output
    assert "sk-held" not in result.output
    (stored,) = (secrets_set / "secrets" / "endpoints").iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    _ask("held")
    assert recorder.seen == ["Bearer sk-held"]
    with Recorder() as other:
        _edit_row("held", url=other.url)  # the row now points elsewhere: the key stays home
        with pytest.raises(PermissionDenied, match="was set for"):
            _ask("held")
        assert other.seen == []


def test_a_password_in_an_endpoint_url_is_not_shown(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44, point 22: `user:pass@` in an endpoint's URL was shown to viewers by
    `podium models list` (and its --json)."""
    from generators.vibes import answer_stream
    from podium.errors import PodiumError
    from podium.models.endpoint_keys import shown_url
    from podium.models.registry import checkpoint_pin

    info = add_endpoint("http://alice:s3cret@127.0.0.1:9/v1", "basic", remote_model="m")
    assert info.url == "http://alice:s3cret@127.0.0.1:9/v1"  # the client still needs it
    assert info.location == "http://***@127.0.0.1:9/v1"
    assert checkpoint_pin("basic") == "endpoint:http://***@127.0.0.1:9/v1#m"  # in run cards
    with pytest.raises(PodiumError, match="unreachable") as unreachable:
        list(answer_stream("basic", "hi"))  # nothing listens on port 9
    assert "s3cret" not in str(unreachable.value) and "***@127.0.0.1:9" in str(unreachable.value)
    monkeypatch.setenv("PODIUM_USER", "vera")  # a viewer (the default role)
    monkeypatch.setenv("PODIUM_DEFAULT_ROLE", "viewer")
    reset_settings()
    for args in (["models", "list"], ["models", "list", "--json"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "basic" in result.output and "s3cret" not in result.output
        assert "alice" not in result.output
    assert shown_url("https://token@host/v1") == "https://***@host/v1"
    assert shown_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
