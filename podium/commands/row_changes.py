"""`podium label`, `podium edit`, `podium delete-rows`: the changes a reviewer makes a row
at a time, so many times a day.

    podium label demo.chat ID1 ID2 --label bad --note "hallucinated API"
    podium label demo.chat --search "as an AI" --label needs-fix      # every hit
    podium edit demo.chat ID --turn 1 --content "fixed answer" --why "typo"
    podium delete-rows demo.chat --failing demo.chat__report --why "invalid JSON"

Every change names its author (the acting user) and becomes a snapshot: edits and
removals of the table (merge-on-read: a small data file and a position-delete file),
labels of `TABLE__annotations`. Written in click, like `podium show`: typer builds a
pydantic adapter for every option as it parses, a noticeable part of a cold command
whose own work is a few footers and one commit. Its one line of output is plain text
(ids and table names are data: never read as rich markup).

For the same reason each command first `_lean()`s: pyarrow's dataset module is imported
without its pandas probe (`store.catalog.lean_imports`) and an SQLite catalog is opened without
SQLAlchemy (`store.catalog.sqlite_catalog`), together ~0.6 s of CPU a cold edit never used.
"""

from __future__ import annotations

from typing import Any

import click

from podium.commands.printing import print_json
from podium.commands.terminal import printable
from podium.store.catalog.lean_imports import ONE_SHOT

_table = click.argument("name", metavar="NAMESPACE.TABLE")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
_search = click.option("--search", default=None, help="Every row containing this text.")
_where = click.option("--where", default=None, help="Every row passing this SQL condition.")
_why = click.option("--why", "-m", "why", required=True, help="Why: kept in the snapshot summary.")
_branch = click.option(
    "--branch", default="main", show_default=True, help="Branch to commit to (see `podium branch`)."
)
_base = click.option(
    "--base", default=None, help="Snapshot the edit was made on; refused if its rows changed since."
)


def _lean() -> None:
    """Skip the imports a one-row change does not use (see the module docstring), when
    the command owns its process (`podium ...` from a shell; not a test's CliRunner,
    whose process goes on to other work)."""
    root = click.get_current_context().find_root()
    if not isinstance(root.obj, dict) or not root.obj.get(ONE_SHOT):
        return
    from podium.store.catalog.catalog import prefer_lean_catalog
    from podium.store.catalog.lean_imports import import_pyarrow_dataset_without_pandas

    import_pyarrow_dataset_without_pandas()
    prefer_lean_catalog()


def _user() -> Any:
    """The acting user (PODIUM_USER in a shared deployment); each write checks the role."""
    from podium.store.state.users import acting_user

    return acting_user()


def _ids(
    name: str, ids: tuple[str, ...], search: str | None, where: str | None, **more: Any
) -> list[str]:
    from podium.review.selection import select_ids

    return select_ids(name, ids=list(ids), search=search, where=where, **more)


def _report(result: dict[str, Any], as_json: bool, what: str) -> None:
    if as_json:
        print_json(result)
    else:
        click.echo(
            printable(f"{what}: snapshot {result['snapshot_id']} (parent {result['parent_id']})")
        )


@click.command("label", help="Label, tag, rate or note rows (appended to TABLE__annotations).")
@_table
@click.argument("ids", nargs=-1, metavar="[IDS]...")
@click.option("--label", "label_", default=None, help="A label from the set.")
@click.option("--tag", multiple=True, help="Free tag (repeatable).")
@click.option("--rating", type=int, default=None, help="1-5.")
@click.option("--note", default=None, help="A note.")
@_search
@_where
@_json
def label(
    name: str,
    ids: tuple[str, ...],
    label_: str | None,
    tag: tuple[str, ...],
    rating: int | None,
    note: str | None,
    search: str | None,
    where: str | None,
    as_json: bool,
) -> None:
    _lean()
    from podium.review.annotations import annotate, annotations_table
    from podium.store.catalog.catalog import load_table

    chosen = _ids(name, ids, search, where)
    table = load_table(name)
    sid = annotate(
        table, chosen, _user(), label=label_, tags=list(tag) or None, rating=rating, note=note
    )
    out = {"table": annotations_table(name), "snapshot_id": sid, "rows": chosen}
    if as_json:
        print_json(out)
    else:
        click.echo(printable(f"annotated {len(chosen)} rows of {name} (snapshot {sid})"))


@click.command(
    "edit", help="Edit one row's messages: one new snapshot naming you, the row and --why."
)
@_table
@click.argument("row_id", metavar="ID")
@_why
@click.option("--turn", type=int, default=None, help="Message index to change.")
@click.option("--content", default=None, help="New content of --turn.")
@click.option("--role", default=None, help="New role of --turn.")
@click.option("--add-turn", default=None, help="Append a turn, as ROLE:TEXT.")
@click.option("--remove-turn", type=int, default=None, help="Remove this message index.")
@_branch
@_base
@_json
def edit(
    name: str,
    row_id: str,
    why: str,
    turn: int | None,
    content: str | None,
    role: str | None,
    add_turn: str | None,
    remove_turn: int | None,
    branch: str,
    base: str | None,
    as_json: bool,
) -> None:
    _lean()
    from podium.errors import InvalidInput, NotFound
    from podium.review import changes
    from podium.store.catalog.catalog import load_table
    from podium.store.write.row_locations import rows_by_id

    table = load_table(name)
    base_id, found = rows_by_id(table, [row_id], base, branch)
    if row_id not in found:
        raise NotFound(f"{name} has no row with id {row_id!r}.")
    messages = found[row_id].get("messages") or []
    if turn is not None:
        if content is None and role is None:
            raise InvalidInput("--turn needs --content and/or --role.")
        messages = changes.set_message(messages, turn, content=content, role=role)
    if remove_turn is not None:
        messages = changes.remove_turn(messages, remove_turn)
    if add_turn is not None:
        new_role, sep, text = add_turn.partition(":")
        if not sep:
            raise InvalidInput("--add-turn takes ROLE:TEXT, e.g. 'assistant:Sure.'.")
        messages = changes.add_turn(messages, new_role.strip(), text)
    if turn is None and remove_turn is None and add_turn is None:
        raise InvalidInput("Nothing to edit: give --turn, --add-turn or --remove-turn.")
    result = changes.commit_change(
        table,
        changes.Change(updates={row_id: {"messages": messages}}, message=why),
        _user(),
        base=base_id,
        branch=branch,
    )
    _report(result.to_dict(), as_json, f"edited {row_id}")


@click.command("delete-rows", help="Remove rows (named, or every match): one new snapshot.")
@_table
@click.argument("ids", nargs=-1, metavar="[IDS]...")
@_why
@_search
@_where
@click.option("--label", "label_", default=None, help="Rows whose latest label is this.")
@click.option("--failing", default=None, help="Rows with errors in this validation report table.")
@_branch
@_base
@_json
def delete_rows(
    name: str,
    ids: tuple[str, ...],
    why: str,
    search: str | None,
    where: str | None,
    label_: str | None,
    failing: str | None,
    branch: str,
    base: str | None,
    as_json: bool,
) -> None:
    _lean()
    from podium.review.changes import Change, commit_change
    from podium.store.catalog.catalog import load_table

    chosen = _ids(name, ids, search, where, label=label_, failing=failing)
    result = commit_change(
        load_table(name),
        Change(deletes=frozenset(chosen), message=why),
        _user(),
        base=base,
        branch=branch,
    )
    _report(result.to_dict(), as_json, f"removed {len(chosen)} rows")


def click_commands() -> dict[str, click.Command]:
    return {"label": label, "edit": edit, "delete-rows": delete_rows}
