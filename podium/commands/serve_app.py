"""Serving the UI: `podium app` (the web UI) and `podium up` (UI + worker together).

podium app [--host 127.0.0.1 --port 8501]   # streamlit, headless, no usage stats
podium up  [--host 127.0.0.1 --port 8501]   # the app and a job worker; Ctrl-C stops both
podium up --app-processes 2                 # two app processes behind the one URL

With more than one app process (`--app-processes`, PODIUM_APP_PROCESSES), each listens
on a loopback port of its own and `sticky_proxy.py` serves the one URL, every browser
kept on one process (its sessions live in that process's memory).

On 127.0.0.1 (the default) Podium is single-user: the OS user, with every role. Any
other address needs login, so people are known and roles apply: set
PODIUM_OIDC_ISSUER, PODIUM_OIDC_CLIENT_ID, PODIUM_OIDC_CLIENT_SECRET (and PODIUM_ADMINS
for the first admin, PODIUM_PUBLIC_URL if browsers reach the app under another URL).
Podium writes them into Streamlit's `[auth]` secrets under $PODIUM_HOME/.streamlit.
`--insecure-no-auth` serves without login anyway, and every page says so.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path
from typing import Annotated

import typer

from podium import processes
from podium.commands.terminal import safe_console
from podium.config import SERVED_ADDRESS_ENV, Settings, get_settings
from podium.errors import InvalidInput
from podium.jobs.lanes import LIGHT_SLOTS_HELP
from podium.models.vllm_launch import free_port
from podium.processes import python_module
from podium.reporting import QUIET_ENV
from podium.store.private_tmp import write_private_file

# Streamlit serves the `app` in server.py (Podium's Host/Origin check, CSP and error ids
# around Streamlit), which runs the pages in main.py.
APP_SERVER = Path(__file__).resolve().parent.parent / "app" / "server.py"
STOP_GRACE_SECONDS = 15.0
# The worker stops its jobs first; a training run saves its current step before it goes
# (kinds.py `stop_grace_s`), so the worker gets that long before it is killed.
WORKER_STOP_GRACE_SECONDS = 135.0

console = safe_console(stderr=True, highlight=False)
Host = Annotated[str, typer.Option(help="Address to listen on.")]
Port = Annotated[int, typer.Option(help="Port to listen on.")]
InsecureNoAuth = Annotated[
    bool,
    typer.Option(
        "--insecure-no-auth",
        help="Serve beyond 127.0.0.1 without login: anyone who reaches the port is admin.",
    ),
]
AppProcesses = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=64,
        help="Streamlit processes behind the one URL, each browser kept on one (default: "
        "PODIUM_APP_PROCESSES, 1). One process runs one session's script at a time; give "
        "a team about one per core.",
    ),
]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a hostname may resolve anywhere


def check_binding(host: str, settings: Settings, insecure_no_auth: bool) -> None:
    """Refuse to serve beyond loopback without login, unless told to in so many words."""
    if is_loopback(host) or settings.login_configured or insecure_no_auth:
        return
    raise InvalidInput(
        f"Refusing to serve on {host} without login: anyone who reaches the port could "
        "read, edit and run jobs as admin. Configure OpenID Connect (PODIUM_OIDC_ISSUER, "
        "PODIUM_OIDC_CLIENT_ID, PODIUM_OIDC_CLIENT_SECRET; see `podium app --help`), serve "
        "on 127.0.0.1, or pass --insecure-no-auth to accept the risk."
    )


def write_auth_secrets(settings: Settings, host: str, port: int) -> Path:
    """Streamlit's `[auth]` section (st.login) from Podium's settings; returns the file."""
    folder = settings.ensure_home() / ".streamlit"
    folder.mkdir(exist_ok=True)
    public = settings.public_url or f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{port}"
    auth = {
        "redirect_uri": public.rstrip("/") + "/oauth2callback",
        "cookie_secret": settings.cookie_secret or _cookie_secret(folder),
        "client_id": settings.oidc_client_id,
        "client_secret": settings.oidc_client_secret,
        "server_metadata_url": settings.oidc_issuer.rstrip("/")
        + "/.well-known/openid-configuration",
    }
    path = folder / "secrets.toml"
    write_private_file(
        path, "[auth]\n" + "".join(f"{k} = {_toml_string(v)}\n" for k, v in auth.items())
    )
    return path


def _cookie_secret(folder: Path) -> str:
    """One random secret per home, so logins survive restarts."""
    path = folder / "cookie_secret"
    if not path.exists():
        write_private_file(path, secrets.token_urlsafe(32))
    os.chmod(path, 0o600)  # one made before Podium kept it private, or copied in at 0644
    return path.read_text().strip()


def _toml_string(value: str) -> str:
    import json  # a JSON string is a valid TOML basic string

    return json.dumps(value)


def app_environment(settings: Settings, insecure_no_auth: bool, host: str) -> dict[str, str]:
    env = {**QUIET_ENV, **os.environ}  # no tqdm bars in `podium up`'s output (unless asked)
    env[SERVED_ADDRESS_ENV] = host
    if insecure_no_auth and not settings.login_configured:
        env["PODIUM_INSECURE_NO_AUTH"] = "1"  # every page shows the warning banner
    return env


def streamlit_command(host: str, port: int, secrets_file: Path | None = None) -> list[str]:
    extra = ["--secrets.files", str(secrets_file)] if secrets_file else []
    return [
        *python_module("streamlit"), "run", str(APP_SERVER),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",
        # Tracebacks go to the server log with an error id (script_errors.py), not to
        # whoever is looking at the page.
        "--client.showErrorDetails", "none",
        # A served app's sources do not change under it. Watching them walked every
        # imported module's path after each rerun of each session, and the forced full
        # gc.collect(2) after each rerun held the GIL every other session waits on: with
        # ten sessions the two were a third of the server's samples (docs/faults.md).
        "--server.fileWatcherType", "none",
        "--runner.postScriptGC", "false",
        "--server.address", host,
        "--server.port", str(port),
        *extra,
    ]  # fmt: skip


def worker_command(concurrency: int, light_slots: int = 1) -> list[str]:
    return [
        *python_module("podium.cli", "worker"),
        *["--concurrency", str(concurrency), "--light-slots", str(light_slots)],
    ]


def app_commands(
    host: str, port: int, processes: int, secrets_file: Path | None = None
) -> dict[str, list[str]]:
    """The app's processes by name: one Streamlit process on `host:port`, or `processes`
    of them on loopback ports of their own with the sticky proxy on `host:port`."""
    if processes == 1:
        return {"app": streamlit_command(host, port, secrets_file)}
    ports = [free_port() for _ in range(processes)]
    while len(set(ports)) < processes or port in ports:  # the kernel may hand one out twice
        ports = [free_port() for _ in range(processes)]
    commands = {
        f"app-{i}": streamlit_command("127.0.0.1", p, secrets_file) for i, p in enumerate(ports, 1)
    }
    backends = [arg for p in ports for arg in ("--backend", f"127.0.0.1:{p}")]
    listen = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    commands["proxy"] = python_module("podium.commands.sticky_proxy", "--listen", listen, *backends)
    return commands


def prepare_app(
    host: str, port: int, insecure_no_auth: bool, processes: int | None = None
) -> dict[str, list[str]]:
    """The checked app commands; with login configured, Streamlit's secrets written first."""
    settings = get_settings()
    check_binding(host, settings, insecure_no_auth)
    secrets_file = write_auth_secrets(settings, host, port) if settings.login_configured else None
    if settings.login_configured:
        console.print(f"login through {settings.oidc_issuer}")
    elif not is_loopback(host):
        console.print(f"[bold red]WARNING[/]: serving on {host} with no login (--insecure-no-auth)")
    return app_commands(host, port, processes or settings.app_processes, secrets_file)


def app(
    host: Host = "127.0.0.1",
    port: Port = 8501,
    insecure_no_auth: InsecureNoAuth = False,
    app_processes: AppProcesses = None,
) -> None:
    """Serve the web UI (jobs it starts wait for a worker: use `podium up` for both)."""
    commands = prepare_app(host, port, insecure_no_auth, app_processes)
    console.print(f"Podium on http://{host}:{port}{_processes_note(commands)}")
    env = app_environment(get_settings(), insecure_no_auth, host)
    raise typer.Exit(_supervise(commands, env))


def up(
    host: Host = "127.0.0.1",
    port: Port = 8501,
    concurrency: Annotated[int, typer.Option(help="Jobs of any kind the worker runs at once.")] = 1,
    light_slots: Annotated[int, typer.Option(help=LIGHT_SLOTS_HELP)] = 1,
    insecure_no_auth: InsecureNoAuth = False,
    app_processes: AppProcesses = None,
) -> None:
    """Serve the web UI and run a job worker beside it; Ctrl-C stops both."""
    commands = prepare_app(host, port, insecure_no_auth, app_processes)
    console.print(f"Podium on http://{host}:{port}{_processes_note(commands)} with a job worker")
    env = app_environment(get_settings(), insecure_no_auth, host)
    worker = worker_command(concurrency, light_slots)
    raise typer.Exit(_supervise({"worker": worker, **commands}, env))


def _processes_note(commands: dict[str, list[str]]) -> str:
    apps = sum(name.startswith("app") for name in commands)
    return f" ({apps} app processes)" if apps > 1 else ""


def _supervise(commands: dict[str, list[str]], env: dict[str, str] | None = None) -> int:
    """Run the commands until one exits or we are told to stop; then stop them all."""
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    code = 0
    try:
        for name, command in commands.items():
            # Streamlit reads `.streamlit/` (config and secrets) from its working folder:
            # the app's own package folder, never wherever `podium app` was typed.
            cwd = APP_SERVER.parent if name.startswith("app") else None
            procs[name] = subprocess.Popen(command, env=env, cwd=cwd)
            console.print(f"started {name} (pid {procs[name].pid})")
        while not stopping:
            ended = [(name, p.returncode) for name, p in procs.items() if p.poll() is not None]
            if ended:
                name, code = ended[0]
                console.print(f"{name} exited with code {code}; stopping the rest")
                break
            time.sleep(0.5)
    finally:
        _stop_all(procs)
        for sig, handler in old.items():
            signal.signal(sig, handler)
    return code


def _stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for name, proc in procs.items():
        # The worker fails or requeues its jobs on SIGTERM. These share our process group
        # (so Ctrl-C reaches them), and are signalled one by one.
        grace = WORKER_STOP_GRACE_SECONDS if name == "worker" else STOP_GRACE_SECONDS
        processes.stop(proc, grace)
        console.print(f"stopped {name} (pid {proc.pid})")


def register(app_: typer.Typer) -> None:
    app_.command("app")(app)
    app_.command("up")(up)
