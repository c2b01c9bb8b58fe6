"""User commands: who may do what in a shared deployment (admins only).

podium users list [--json]
podium users grant alice@example.org reviewer [--name "Alice"] [--json]
podium users revoke alice@example.org        # back to the default role, if allowed in
podium users whoami [--json]                 # who this shell acts as (PODIUM_USER)

Roles, each including the ones before it: viewer (read, search, SQL), reviewer (+
labels, edits, vibe prompts, votes), operator (+ jobs, model servers), admin (+ roles,
dropping tables). In local single-user mode the OS user is admin; in a shared
deployment CLI commands act as PODIUM_USER, and `podium_admins` bootstraps the first admin.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from podium.commands.terminal import neutralise_json, safe_console
from podium.identity import ROLES

console = safe_console(highlight=False, soft_wrap=True)
users_app = typer.Typer(help="Users and their roles (admins only).", no_args_is_help=True)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _print_json(value: Any) -> None:
    typer.echo(neutralise_json(json.dumps(value, ensure_ascii=False, indent=2)))


@users_app.command("list")
def list_cmd(as_json: JsonFlag = False) -> None:
    """Everyone granted a role, with who granted it and when."""
    from podium.identity import require
    from podium.store.state.users import acting_user, list_users

    require(acting_user(), "manage_users")
    users = list_users()
    if as_json:
        _print_json(users)
        return
    if not users:
        console.print("No users yet. Add one with `podium users grant NAME ROLE`.")
        return
    table = Table("name", "role", "display name", "added by", "updated")
    for user in users:
        table.add_row(
            user["name"], user["role"], user["display_name"], user["added_by"], user["updated_at"]
        )
    console.print(table)


@users_app.command("grant")
def grant_cmd(
    name: Annotated[str, typer.Argument(help="E-mail (as the login provider gives it) or name.")],
    role: Annotated[str, typer.Argument(help=f"One of: {', '.join(ROLES)}.")],
    display_name: Annotated[str, typer.Option("--name", help="Name shown in the app.")] = "",
    as_json: JsonFlag = False,
) -> None:
    """Give NAME a role (adds them if new)."""
    from podium.store.state.users import acting_user, grant

    record = grant(acting_user(), name, role, display_name)
    if as_json:
        _print_json(record)
    else:
        console.print(f"{record['name']} is now {record['role']}.")


@users_app.command("revoke")
def revoke_cmd(
    name: Annotated[str, typer.Argument(help="The user to remove from the table.")],
    as_json: JsonFlag = False,
) -> None:
    """Remove NAME's role; they fall back to the default role if still allowed in."""
    from podium.store.state.users import acting_user, normalise, revoke

    revoke(acting_user(), name)
    if as_json:
        _print_json({"name": normalise(name), "revoked": True})
    else:
        console.print(f"{normalise(name)} removed from the users table.")


@users_app.command("whoami")
def whoami_cmd(as_json: JsonFlag = False) -> None:
    """Who this shell acts as, and with which role."""
    from podium.store.state.users import acting_user

    user = acting_user()
    if as_json:
        _print_json({"name": user.name, "role": user.role, "source": user.source})
    else:
        console.print(f"{user.label}: {user.role}")


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")
