"""Review commands: tag, branch, diff, review queues and history (label, edit and
delete-rows: `podium.commands.row_changes`).

    podium tag demo.chat reviewed-2026-11
    podium branch demo.chat review            # then: podium edit ... --branch review
    podium diff demo.chat reviewed-2026-11 main --json
    podium review start demo.chat --size 500 --seed 7
    podium review next demo.chat --n 5        # claims rows; labelling marks them done

Every change names its author (the acting user) and becomes a snapshot: edits and
removals of the table, labels of `TABLE__annotations`.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from podium.commands.printing import print_json, print_rows
from podium.commands.store import JsonFlag, console, print_conversation
from podium.commands.typer_commands import add_commands

Table = Annotated[str, typer.Argument(help="NAMESPACE.TABLE")]
Ids = Annotated[list[str] | None, typer.Argument(help="Row ids.")]
Search = Annotated[str | None, typer.Option(help="Every row containing this text.")]
Where = Annotated[str | None, typer.Option(help="Every row passing this SQL condition.")]
Why = Annotated[str, typer.Option("--why", "-m", help="Why: kept in the snapshot summary.")]
Branch = Annotated[str, typer.Option(help="Branch to commit to (see `podium branch`).")]
Base = Annotated[
    str | None,
    typer.Option(help="Snapshot the edit was made on; refused if its rows changed since."),
]

review_app = typer.Typer(help="Review queues and row history.", no_args_is_help=True)


def _user() -> Any:
    """The acting user (PODIUM_USER in a shared deployment); each write checks the role."""
    from podium.store.state.users import acting_user

    return acting_user()


def _ids(
    name: str,
    ids: list[str] | None,
    search: str | None,
    where: str | None,
    label: str | None = None,
    failing: str | None = None,
) -> list[str]:
    from podium.review.selection import select_ids

    return select_ids(name, ids=ids or [], search=search, where=where, label=label, failing=failing)


def tag(
    name: Table,
    tag_name: Annotated[str, typer.Argument(help="Tag name, e.g. reviewed-2026-11.")],
    snapshot: Annotated[str | None, typer.Option(help="Snapshot (default: current).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Name a snapshot; every --snapshot option then accepts the name."""
    from podium.review.refs import create_tag

    ref = create_tag(name, tag_name, _user(), snapshot)
    print_json(ref.to_dict()) if as_json else console.print(f"tag {ref.name} -> {ref.snapshot_id}")


def branch(
    name: Table,
    branch_name: Annotated[str, typer.Argument(help="Branch name, e.g. review.")],
    snapshot: Annotated[str | None, typer.Option(help="Start at (default: current).")] = None,
    fast_forward: Annotated[
        bool, typer.Option(help="Move main to this existing branch's head instead.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Create a branch for edits (main untouched), or fast-forward main to it."""
    from podium.review.refs import create_branch
    from podium.review.refs import fast_forward as ff

    ref = (
        ff(name, branch_name, _user())
        if fast_forward
        else create_branch(name, branch_name, _user(), snapshot)
    )
    if as_json:
        print_json(ref.to_dict())
    else:
        console.print(f"{ref.kind} {ref.name} -> {ref.snapshot_id}")


def refs(name: Table, as_json: JsonFlag = False) -> None:
    """List a table's tags and branches."""
    from podium.review.refs import list_refs

    found = [r.to_dict() for r in list_refs(name)]
    print_json(found) if as_json else print_rows(found, title=f"refs of {name}")


def diff(
    name: Table,
    a: Annotated[str, typer.Argument(help="Older snapshot: id, tag or branch.")],
    b: Annotated[str | None, typer.Argument(help="Newer snapshot (default: current).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Rows added, removed and changed between two snapshots, with text diffs."""
    from podium.review.diff import diff_snapshots

    result = diff_snapshots(name, a, b)
    if as_json:
        print_json(result.to_dict())
        return
    console.print(
        f"{result.table}: {result.a} -> {result.b}: {len(result.added)} added, "
        f"{len(result.removed)} removed, {len(result.changed)} changed "
        f"({result.files_read} files read, {result.files_shared} shared)"
    )
    for row_id in result.added:
        console.print(f"+ {row_id}", style="green", markup=False)
    for row_id in result.removed:
        console.print(f"- {row_id}", style="red", markup=False)
    for row in result.changed:
        console.print(f"~ {row.id} ({', '.join(row.columns)})", style="yellow", markup=False)
        for msg in row.messages:
            console.print(
                msg.get("diff") or f"  message {msg['index']} {msg['status']}",
                markup=False,
                highlight=False,
            )


@review_app.command("start")
def review_start(
    name: Table,
    size: Annotated[int, typer.Option(help="Rows in the queue.")] = 100,
    seed: Annotated[
        int | None, typer.Option(help="Sample with this seed (default: in order).")
    ] = None,
    search: Search = None,
    where: Where = None,
    queue: Annotated[str, typer.Option(help="Queue name.")] = "default",
    as_json: JsonFlag = False,
) -> None:
    """Make a queue of rows nobody has annotated yet."""
    from podium.review.queues import create_queue

    made = create_queue(name, size, _user(), name=queue, seed=seed, search=search, where=where)
    print_json(made.to_dict()) if as_json else console.print(f"queue {made.name}: {made.progress}")


@review_app.command("next")
def review_next(
    name: Table,
    n: Annotated[int, typer.Option("--n", help="Rows to claim.")] = 1,
    queue: Annotated[str, typer.Option(help="Queue name.")] = "default",
    as_json: JsonFlag = False,
) -> None:
    """Claim the next rows of a queue (yours until labelled or the claim expires)."""
    from podium.review.queues import claim_next, get_queue

    rows = claim_next(name, _user(), n, name=queue)
    progress = get_queue(name, queue)
    if as_json:
        print_json({"queue": progress.to_dict(), "rows": rows})
        return
    for row in rows:
        print_conversation(row)
    console.print(progress.progress)


@review_app.command("status")
def review_status(name: Table, as_json: JsonFlag = False) -> None:
    """Every queue of a table with its progress."""
    from podium.review.queues import list_queues

    found = [q.to_dict() for q in list_queues(name)]
    print_json(found) if as_json else print_rows(found, title=f"review queues of {name}")


@review_app.command("history")
def review_history(
    name: Table,
    row_id: Annotated[str, typer.Argument(help="Row id.")],
    as_json: JsonFlag = False,
) -> None:
    """Every change and annotation of one row, with its author."""
    from podium.review.annotations import load_annotations
    from podium.review.history import row_history
    from podium.store.catalog.catalog import load_table

    events = row_history(load_table(name), load_annotations(name), row_id)
    print_json(events) if as_json else print_rows(events, title=f"history of {row_id}")


def register(app: typer.Typer) -> None:
    add_commands(
        app,
        {
            "tag": tag,
            "branch": branch,
            "refs": refs,
            "diff": diff,
        },
    )
    app.add_typer(review_app, name="review")
