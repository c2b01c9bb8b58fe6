"""Model commands: the checkpoint registry and vLLM servers.

podium models bootstrap                 # convert + register SmolLM2-135M-Instruct (once)
podium models list [--json]
podium models add PATH [--name N] [--parent base]     # any HF checkpoint directory
podium models add-endpoint URL --name N [--api-key-env VAR] [--model-id ID]
podium models set-key NAME              # the endpoint's API key, from stdin (kept private)
podium models remove NAME               # forget it (files stay)
podium models servers [--json]          # vLLM servers Podium started
podium models stop NAME
podium serve NAME [--detach]            # print the URL; serve until Ctrl-C
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Column, Table

from podium import processes
from podium.commands.terminal import neutralise_json, safe_console
from podium.errors import PodiumError

console = safe_console(highlight=False, soft_wrap=True)
err = safe_console(stderr=True, highlight=False, soft_wrap=True)
models_app = typer.Typer(help="The checkpoint registry and model servers.", no_args_is_help=True)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _print_json(value: Any) -> None:
    typer.echo(neutralise_json(json.dumps(value, ensure_ascii=False, default=str, indent=2)))


@models_app.command("list")
def list_cmd(as_json: JsonFlag = False) -> None:
    """Registered models; the default base is marked with *, a checkpoint of a run that
    did not finish with "(partial: cancelled at step N of M)"."""
    from podium.models import list_models

    models = list_models()
    if as_json:
        _print_json([m.to_dict() for m in models])
        return
    if not models:
        console.print("No models yet. Run `podium models bootstrap` for the default base.")
        return
    table = Table("kind", "location", "parent", "job", "step")
    table.columns.insert(0, Column("name", no_wrap=True))
    for m in models:
        table.add_row(
            m.label + (" *" if m.is_default else ""),
            m.kind,
            m.location,
            m.parent or "",
            m.job_id or "",
            "" if m.step is None else str(m.step),
        )
    console.print(table)


def _may_serve() -> None:
    """Registering, removing, starting and stopping models is operators' work."""
    from podium.identity import require
    from podium.store.state.users import acting_user

    require(acting_user(), "serve_model")


@models_app.command("add")
def add(
    path: Annotated[Path, typer.Argument(help="Hugging Face checkpoint directory.")],
    name: Annotated[str | None, typer.Option(help="Registry name (default: folder name).")] = None,
    parent: Annotated[str | None, typer.Option(help="Model it was trained from.")] = None,
    base: Annotated[bool, typer.Option("--base", help="Register as a base model.")] = False,
) -> None:
    """Register a checkpoint directory."""
    _may_serve()
    from podium.models import register_checkpoint

    info = register_checkpoint(
        name or path.expanduser().resolve().name.lower(),
        path,
        parent=parent,
        job_id=None,
        lineage={"added_from": str(path.expanduser().resolve())},
        kind="base" if base else "trained",
    )
    console.print(f"registered {info.name} ({info.kind}) -> {info.path}")


@models_app.command("add-endpoint")
def add_endpoint_cmd(
    url: Annotated[str, typer.Argument(help="OpenAI-compatible base URL (…/v1).")],
    name: Annotated[str, typer.Option(help="Registry name.")],
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="Environment variable holding the API key (not the key); only one the "
            "deployment allows in endpoint_key_envs. Or store the key: `podium models set-key`."
        ),
    ] = None,
    model_id: Annotated[
        str | None, typer.Option(help="Model id to request (default: the first it lists).")
    ] = None,
) -> None:
    """Register an external OpenAI-compatible endpoint, used as is."""
    _may_serve()
    from podium.models import add_endpoint

    info = add_endpoint(url, name, api_key_env=api_key_env, remote_model=model_id)
    console.print(f"registered endpoint {info.name} -> {info.location}")


@models_app.command("set-key")
def set_key(
    name: Annotated[str, typer.Argument(help="Registered endpoint name.")],
) -> None:
    """Store an endpoint's API key (read from stdin, or a hidden prompt; never shown).

    The key is kept in a private file under the home, bound to the endpoint's URL: it is
    sent to that URL only."""
    _may_serve()
    import sys

    from podium.models import get_model
    from podium.models.endpoint_keys import store_key

    model = get_model(name)
    if sys.stdin.isatty():
        key = typer.prompt(f"API key for {model.name} ({model.location})", hide_input=True)
    else:
        key = sys.stdin.readline()
    store_key(model, key)
    console.print(f"stored the API key of {model.name}; it is sent only to {model.location}")


@models_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="Registered model name.")]) -> None:
    """Forget a model; its files are not touched."""
    _may_serve()
    from podium.models import remove_model, stop_server

    stop_server(name)
    remove_model(name)
    console.print(f"removed {name}")


@models_app.command("bootstrap")
def bootstrap_cmd(as_json: JsonFlag = False) -> None:
    """Convert the shipped SmolLM2-135M-Instruct once and register it as the default base."""
    _may_serve()
    from podium.models.bootstrap import bootstrap

    info = bootstrap()
    if as_json:
        _print_json(info.to_dict())
        return
    console.print(f"default base: {info.name} -> {info.path}")


@models_app.command("servers")
def servers(as_json: JsonFlag = False) -> None:
    """vLLM servers started by Podium (dead ones are cleaned up first)."""
    from podium.models.serving import cleanup_dead, list_servers

    cleanup_dead()
    rows = list_servers()
    if as_json:
        _print_json([s.to_dict() for s in rows])
        return
    if not rows:
        console.print("No servers running.")
    for s in rows:
        console.print(f"{s.model}  {s.url}  pid {s.pid}  last used {s.last_used}  log {s.log_path}")


@models_app.command("stop")
def stop(name: Annotated[str, typer.Argument(help="Model whose server to stop.")]) -> None:
    """Stop a model's vLLM server."""
    _may_serve()
    from podium.models import stop_server

    console.print(f"stopped {name}" if stop_server(name) else f"no server for {name}")


def serve(
    name: Annotated[str, typer.Argument(help="Registered model ('base' = default base).")],
    detach: Annotated[
        bool, typer.Option("--detach", help="Leave it running (idle shutdown still applies).")
    ] = False,
) -> None:
    """Start (or reuse) the model's vLLM server and print its OpenAI-compatible URL."""
    _may_serve()
    from podium.models import ensure_server, get_model
    from podium.models.server_records import _alive, _row, log_tail, touch
    from podium.models.serving import stop_server

    model = get_model(name)
    err.print(f"starting or reusing a server for {model.name} (first start takes ~1 min)")
    url, served = ensure_server(model.name)
    console.print(url)
    err.print(f"model id: {served}")
    if detach or model.kind == "endpoint":
        return
    row = _row(model.name)
    if row is not None:  # as Ctrl-C would, a SIGKILL of this command stops the server too
        processes.watch_owner(row.pid, processes.owner_of_this())
    err.print("serving; Ctrl-C stops it")
    try:
        while True:
            time.sleep(5)
            row = _row(model.name)
            if row is None:
                raise PodiumError(f"the server for {model.name} was stopped elsewhere")
            if not _alive(row):
                raise PodiumError(
                    f"the server for {model.name} died. Log:\n{log_tail(row.log_path)}"
                )
            touch(model.name)  # an attached `serve` is never idle
    except KeyboardInterrupt:
        stop_server(model.name)
        err.print(f"stopped {model.name}")


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
    app.command("serve")(serve)
