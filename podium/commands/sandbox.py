"""Sandbox and code-execution build commands.

    podium sandbox run script.py [--backend local|docker] [--stdin TEXT] [--timeout 10] [--json]
    podium sandbox info [--json]               # what confinement this machine gives
    podium sandbox dockerd [--dir PATH]        # a private Docker engine (root), until Ctrl-C
    podium build code-exec --table demo.functions --model base --out cx.demo \\
        [--inputs-per-function 4] [--backend local|docker] [--limit N] [--card CARD.md]
    podium build code-exec --mode verify --table cx.demo --out cx.demo_verify

The docker backend talks to the engine in DOCKER_HOST; its image is built once by
`bash scripts/setup_sandbox.sh`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import click
import typer

from podium.commands.terminal import printable
from podium.errors import InvalidInput

sandbox_app = typer.Typer(help="Run code in the sandbox.", no_args_is_help=True)

Backend = Literal["local", "docker"]


def _may_run_code() -> None:
    """Running code (or the engine that runs it) is a job's work: an operator's, checked
    before anything is read or started."""
    from podium.identity import require
    from podium.store.state.users import acting_user

    require(acting_user(), "run_job")


@sandbox_app.command("run")
def run_cmd(
    file: Annotated[Path, typer.Argument(help="Python script to run ('-' reads stdin).")],
    backend: Annotated[
        str | None, typer.Option(help="local or docker (default: the sandbox_backend setting).")
    ] = None,
    stdin: Annotated[str | None, typer.Option(help="Text given to the script on stdin.")] = None,
    args: Annotated[list[str] | None, typer.Option("--arg", help="Argument (repeatable).")] = None,
    timeout: Annotated[float, typer.Option(help="Wall-clock limit in seconds.")] = 10.0,
    memory_mb: Annotated[int, typer.Option(help="Memory limit in MiB.")] = 512,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Run one Python script in a sandbox and print what happened."""
    from generators.sandbox import Limits, Sandbox

    _may_run_code()

    if str(file) == "-":
        code = sys.stdin.read()
    else:
        try:
            code = file.expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"Cannot read {file}: {exc}.") from None
    if backend not in (None, "local", "docker"):
        raise InvalidInput(f"Unknown backend {backend!r}; use local or docker.")
    if timeout <= 0 or memory_mb <= 0:
        raise InvalidInput("--timeout and --memory-mb must be positive.")
    limits = Limits(wall_s=timeout, cpu_s=timeout, memory_mb=memory_mb)
    with Sandbox(backend, workers=1, limits=limits) as box:
        result = box.run(code, stdin=stdin, args=tuple(args or ()))
    if as_json:
        typer.echo(json.dumps({"backend": box.backend, **result.to_dict()}))  # ASCII: inert
    else:
        code_text = "-" if result.exit_code is None else str(result.exit_code)
        typer.echo(
            f"status: {result.status}  exit code: {code_text}  wall: {result.wall_s:.3f} s  "
            f"cpu: {result.cpu_s:.3f} s  backend: {box.backend}"
            + (f"  ({result.detail})" if result.detail else "")
        )
        typer.echo("--- stdout ---" + (" (truncated)" if result.truncated else ""))
        # The code is untrusted: its output is shown, never obeyed by the terminal.
        stdout = printable(result.stdout)
        typer.echo(stdout, nl=not stdout.endswith("\n") and bool(stdout))
        typer.echo("--- stderr ---")
        typer.echo(printable(result.stderr), nl=False)
    # SystemExit, not typer.Exit: with standalone_mode=False click would swallow the code.
    raise SystemExit(0 if result.ok else 1)


@sandbox_app.command("info")
def info_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Show what the local sandbox can use on this machine."""
    from generators.sandbox.local import describe

    info = describe()
    if as_json:
        typer.echo(json.dumps(info))
    else:
        for key, value in info.items():
            typer.echo(f"{key}: {value}")


@sandbox_app.command("dockerd")
def dockerd_cmd(
    folder: Annotated[
        Path | None, typer.Option("--dir", help="Daemon state (default: PODIUM_HOME/dockerd).")
    ] = None,
) -> None:
    """Run a private Docker engine (root) until Ctrl-C, with the sandbox image imported."""
    import signal

    _may_run_code()

    from generators.sandbox.docker_backend import docker_client, ensure_image
    from generators.sandbox.dockerd import PrivateDockerd
    from podium.config import get_settings

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # so that `with engine` stops dockerd on TERM as on Ctrl-C

    signal.signal(signal.SIGTERM, stop)
    engine = PrivateDockerd(folder or get_settings().ensure_home() / "dockerd")
    with engine:
        client = docker_client(engine.host)
        image = ensure_image(client)
        client.close()
        typer.echo(f"private dockerd ready with {image}; in another shell:")
        typer.echo(f"export DOCKER_HOST={engine.host}")
        try:
            signal.pause()
        except KeyboardInterrupt:
            typer.echo("stopping dockerd")


def build_group() -> click.Group:
    """`podium build code-exec`: every CodeExecConfig field is an option."""
    from podium.commands.options import job_command

    group = click.Group("build", help="Build datasets by running code.", no_args_is_help=True)
    group.add_command(
        job_command(
            "code-exec-build",
            "code-exec",
            # The names these settings had before every kind called them table and replicas.
            aliases={"table.name": ["--functions"], "replicas": ["--sandbox-nodes"]},
            help="Build a code-execution dataset: a model proposes inputs, the sandbox runs them.",
        )
    )
    return group


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")


def click_commands() -> dict[str, click.Command]:
    return {"build": build_group()}
