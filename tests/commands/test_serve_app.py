"""Serving beyond loopback needs login: refused without it, explicit flag otherwise."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import cli_fork
import pytest

from podium.commands.serve_app import check_binding, is_loopback, write_auth_secrets
from podium.config import Settings
from podium.errors import InvalidInput


@pytest.mark.parametrize("command", ["up", "app"])
def test_serving_on_all_addresses_without_login_refuses_and_says_why(
    podium_home: Path, command: str
) -> None:
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", command, "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Refusing to serve on 0.0.0.0 without login" in proc.stderr
    assert "--insecure-no-auth" in proc.stderr and "PODIUM_OIDC_ISSUER" in proc.stderr
    assert "started app" not in proc.stderr + proc.stdout


def test_loopback_is_local_mode_and_login_or_the_flag_allow_other_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("podium.example.org")
    check_binding("127.0.0.1", Settings(), insecure_no_auth=False)
    check_binding("0.0.0.0", Settings(), insecure_no_auth=True)
    check_binding("0.0.0.0", Settings(oidc_issuer="http://i", oidc_client_id="c"), False)
    with pytest.raises(InvalidInput, match="Refusing to serve on 10.0.0.5"):
        check_binding("10.0.0.5", Settings(), insecure_no_auth=False)


def test_login_settings_become_streamlits_auth_secrets(podium_home: Path) -> None:
    settings = Settings(
        oidc_issuer="http://127.0.0.1:9400/",
        oidc_client_id="podium",
        oidc_client_secret='se"cret',
        public_url="https://podium.example.org",
    )
    path = write_auth_secrets(settings, "0.0.0.0", 8501)
    auth = tomllib.loads(path.read_text())["auth"]
    assert auth["redirect_uri"] == "https://podium.example.org/oauth2callback"
    assert auth["server_metadata_url"] == ("http://127.0.0.1:9400/.well-known/openid-configuration")
    assert (auth["client_id"], auth["client_secret"]) == ("podium", 'se"cret')
    assert len(auth["cookie_secret"]) >= 32
    assert path.stat().st_mode & 0o077 == 0  # secrets readable by their owner only
    # The generated cookie secret stays the same across restarts (logins survive).
    again = tomllib.loads(write_auth_secrets(settings, "0.0.0.0", 8501).read_text())["auth"]
    assert again["cookie_secret"] == auth["cookie_secret"]


def test_existing_secret_files_become_private(podium_home: Path) -> None:
    """Issue 44, point 22: an existing secrets.toml (or cookie secret) kept mode 0644."""
    settings = Settings(oidc_issuer="http://127.0.0.1:9400", oidc_client_id="podium")
    folder = settings.ensure_home() / ".streamlit"
    folder.mkdir()
    for name in ("secrets.toml", "cookie_secret"):
        (folder / name).write_text("old\n")
        (folder / name).chmod(0o644)
    path = write_auth_secrets(settings, "0.0.0.0", 8501)
    for name in ("secrets.toml", "cookie_secret"):
        assert (folder / name).stat().st_mode & 0o777 == 0o600, name
    assert tomllib.loads(path.read_text())["auth"]["cookie_secret"] == "old"


def test_the_served_app_neither_watches_its_sources_nor_forces_a_full_gc_per_rerun() -> None:
    # py-spy on `podium up` with ten sessions (docs/faults.md): the forced gc.collect(2)
    # after every rerun and the source watcher's walk of every module were a third of the
    # server's samples, holding the GIL the other sessions' reruns wait on.
    from streamlit import config

    from podium.commands.serve_app import streamlit_command

    command = streamlit_command("127.0.0.1", 8501)
    args = command[command.index("run") + 2 :]
    options = dict(zip(args[::2], args[1::2], strict=True))
    assert options["--server.fileWatcherType"] == "none"
    assert options["--runner.postScriptGC"] == "false"
    for flag in options:  # each is an option this Streamlit knows (else it raises)
        config.get_option(flag.removeprefix("--"))


def test_more_app_processes_listen_on_loopback_behind_the_proxy_on_the_served_address() -> None:
    from podium.commands.serve_app import app_commands

    assert list(app_commands("127.0.0.1", 8501, 1)) == ["app"]
    commands = app_commands("0.0.0.0", 8501, 3)
    assert list(commands) == ["app-1", "app-2", "app-3", "proxy"]
    ports = []
    for name in ("app-1", "app-2", "app-3"):
        args = commands[name][commands[name].index("run") + 2 :]
        options = dict(zip(args[::2], args[1::2], strict=True))
        assert options["--server.address"] == "127.0.0.1"  # only the proxy faces the network
        ports.append(int(options["--server.port"]))
    assert len(set(ports)) == 3 and 8501 not in ports
    proxy = commands["proxy"]
    assert proxy[proxy.index("--listen") + 1] == "0.0.0.0:8501"
    backends = [proxy[i + 1] for i, arg in enumerate(proxy) if arg == "--backend"]
    assert backends == [f"127.0.0.1:{port}" for port in ports]
    assert app_commands("::", 8501, 2)["proxy"][-5:-4] == ["[::]:8501"]


def test_an_app_process_behind_the_proxy_checks_hosts_by_the_served_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Behind the proxy a process listens on 127.0.0.1; a team served on 0.0.0.0 with
    login reaches it under the server's own name, which loopback rules would refuse."""
    from streamlit import config

    from podium.app.server import configured_hosts
    from podium.config import SERVED_ADDRESS_ENV

    real = config.get_option
    monkeypatch.setattr(
        config, "get_option", lambda key: "127.0.0.1" if key == "server.address" else real(key)
    )
    monkeypatch.delenv(SERVED_ADDRESS_ENV, raising=False)
    assert configured_hosts() is not None  # loopback: local names only
    monkeypatch.setenv(SERVED_ADDRESS_ENV, "0.0.0.0")
    assert configured_hosts() is None  # served beyond loopback: login decides
