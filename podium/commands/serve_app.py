"""Serving the UI: `podium app` (the web UI) and `podium up` (UI + worker together).

podium app [--host 127.0.0.1 --port 8501]   # streamlit, headless, no usage stats
podium up  [--host 127.0.0.1 --port 8501]   # the app and a job worker; Ctrl-C stops both
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from podium import processes

APP_MAIN = Path(__file__).resolve().parent.parent / "app" / "main.py"
STOP_GRACE_SECONDS = 15.0

console = Console(stderr=True, highlight=False)
Host = Annotated[str, typer.Option(help="Address to listen on.")]
Port = Annotated[int, typer.Option(help="Port to listen on.")]


def streamlit_command(host: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(APP_MAIN),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",
        "--server.address", host,
        "--server.port", str(port),
    ]  # fmt: skip


def worker_command(concurrency: int) -> list[str]:
    return [sys.executable, "-m", "podium.cli", "worker", "--concurrency", str(concurrency)]


def app(host: Host = "127.0.0.1", port: Port = 8501) -> None:
    """Serve the web UI (jobs it starts wait for a worker: use `podium up` for both)."""
    console.print(f"Podium on http://{host}:{port}")
    raise typer.Exit(_supervise({"app": streamlit_command(host, port)}))


def up(
    host: Host = "127.0.0.1",
    port: Port = 8501,
    concurrency: Annotated[int, typer.Option(help="Jobs the worker runs at once.")] = 1,
) -> None:
    """Serve the web UI and run a job worker beside it; Ctrl-C stops both."""
    console.print(f"Podium on http://{host}:{port} with a job worker")
    raise typer.Exit(
        _supervise({"worker": worker_command(concurrency), "app": streamlit_command(host, port)})
    )


def _supervise(commands: dict[str, list[str]]) -> int:
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
            procs[name] = subprocess.Popen(command)
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
        processes.stop(proc, STOP_GRACE_SECONDS)
        console.print(f"stopped {name} (pid {proc.pid})")


def register(app_: typer.Typer) -> None:
    app_.command("app")(app)
    app_.command("up")(up)
