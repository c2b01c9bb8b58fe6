"""`podium signals`: compute signals over a table snapshot, and list the stored ones.

\b
    podium signals run demo.chat --signal near-dup,exact-dup
    podium signals run demo.chat -s contamination --eval evals.gsm8k --set contamination.ngram=8
    podium signals run demo.chat --signal private-data --roles user,assistant --json
    podium signals list demo.chat [--snapshot ID] [--json]
    podium signals remove demo.chat --signal near-dup [--preview]   # keep one per cluster
    podium signals redact demo.chat --kind secret [--preview]       # [SECRET] in place
    podium signals remove demo.chat --signal near-dup --branch review  # edit on a branch
    podium signals label demo.chat --signal private-data --tag has-secrets

A run is a `signals` job (recorded in the logbook, re-runnable from its card); each
signal is written to `NS.TABLE__sig_KIND` in one commit. `list` says, per signal,
whether it is current for the snapshot (default: the table's current one) or stale.
`remove` turns a current signal into one review snapshot (rows removed, author, reason).
"""

from __future__ import annotations

import json
from typing import Any

import click
import typer
from rich.table import Table as RichTable

from podium.commands.terminal import neutralise_json, plain_text, safe_console

console = safe_console()


def _normalise(values: dict[str, Any], extra: dict[str, Any]) -> None:
    evals = [e for item in extra.pop("evals", ()) or () for e in item.split(",") if e.strip()]
    if evals:
        values.setdefault("contamination", {})
        values["contamination"]["evals"] = [e.strip() for e in evals]


def _print_run(config: Any, result: Any, deferred: bool, extra: dict[str, Any]) -> None:
    if deferred:
        return
    results = result["outputs"]["summary"]["signals"]
    if extra["as_json"]:
        typer.echo(neutralise_json(json.dumps(results, ensure_ascii=False, indent=2)))
        return
    for found in results:
        counts = ", ".join(
            f"{k} {v}" for k, v in found.items() if k not in ("signal", "table", "snapshot_id")
        )
        console.print(
            plain_text(f"{found['signal']}: {counts} -> {found['table']}@{found['snapshot_id']}")
        )


def run_command() -> click.Command:
    from podium.commands.options import job_command

    return job_command(
        "signals",
        "run",
        arguments=("table.name",),
        aliases={"signals": ["-s"]},
        extra=[
            click.Option(
                ["--eval", "evals"],
                multiple=True,
                metavar="NS.TABLE[@SNAPSHOT]",
                help="An eval table the contamination signal compares against; repeatable "
                "(sets contamination.evals).",
            ),
            click.Option(["--json", "as_json"], is_flag=True, help="Print the summaries as JSON."),
        ],
        hook=_normalise,
        done=_print_run,
        help="Compute signals over every row of a table snapshot; each is written to "
        "NS.TABLE__sig_KIND in one commit.",
    )


@click.command("list")
@click.argument("table")
@click.option("--snapshot", default=None, help="Snapshot id, tag or branch (default: current).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def list_command(table: str, snapshot: str | None, as_json: bool) -> None:
    """The signals stored for TABLE, each current or stale for the snapshot."""
    from podium.signals.listing import signals_for

    found = signals_for(table, snapshot)
    if as_json:
        typer.echo(neutralise_json(json.dumps([s.to_dict() for s in found], indent=2)))
        return
    if not found:
        console.print(plain_text(f"No signals stored for {table}; run `podium signals run`."))
        return
    shown = RichTable("signal", "table", "snapshot", "status", "summary")
    for s in found:
        status = "current" if s.current else f"stale: {s.stale}"
        summary = ", ".join(f"{k} {v}" for k, v in s.summary.items())
        shown.add_row(
            plain_text(s.signal),
            plain_text(s.table),
            str(s.described_snapshot),
            plain_text(status),
            plain_text(summary),
        )
    console.print(shown)


BRANCH = click.option(
    "--branch",
    default="main",
    show_default=True,
    help='The branch the snapshot goes to (as Browse\'s "edits go to"); refused, with '
    "nothing written, if a row it touches changed on that branch since the signal's snapshot.",
)


def _on(branch: str) -> str:
    return "" if branch == "main" else f" on branch {branch}"


@click.command("remove")
@click.argument("table")
@click.option(
    "--signal",
    "signal",
    required=True,
    help="near-dup or exact-dup: keep one row per cluster (its canonical row); "
    "contamination: the contaminated rows; private-data: rows with private data; "
    "SIGNAL=VALUE: the rows of a facet (rubric=<5: scored below 5 or unparsed).",
)
@click.option("--why", default=None, help="The reason kept in the snapshot (default: says what).")
@click.option("--preview", is_flag=True, help="Count the rows it would remove; remove nothing.")
@BRANCH
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def remove_command(
    table: str, signal: str, why: str | None, preview: bool, branch: str, as_json: bool
) -> None:
    """Remove the rows a current signal of TABLE names, as one review snapshot (author
    and reason recorded; time travel undoes it)."""
    from podium.signals.actions import remove_by_signal

    result = remove_by_signal(table, signal, why=why, preview=preview, branch=branch)
    if as_json:
        typer.echo(neutralise_json(json.dumps(result, indent=2)))
    elif preview or result["snapshot_id"] is None:
        console.print(plain_text(f"would remove {result['rows']} rows: {result['message']}"))
    else:
        console.print(
            plain_text(
                f"removed {result['rows']} rows: snapshot {result['snapshot_id']} "
                f"(parent {result['parent_id']}){_on(branch)}: {result['message']}"
            )
        )


@click.command("redact")
@click.argument("table")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    help="Only spans of this kind (email, phone, ip_address, card_number, iban, secret); "
    "repeatable. Default: every kind.",
)
@click.option("--why", default=None, help="The reason kept in the snapshot (default: says what).")
@click.option("--preview", is_flag=True, help="Count rows and spans; change nothing.")
@BRANCH
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def redact_command(
    table: str,
    kinds: tuple[str, ...],
    why: str | None,
    preview: bool,
    branch: str,
    as_json: bool,
) -> None:
    """Replace each span the current private-data signal of TABLE found with a
    placeholder ([EMAIL], [SECRET], ...): one edit snapshot (time travel keeps the text)."""
    from podium.signals.actions import redact_private_data

    result = redact_private_data(
        table, kinds=list(kinds) or None, why=why, preview=preview, branch=branch
    )
    if as_json:
        typer.echo(neutralise_json(json.dumps(result, indent=2)))
        return
    verb = "would redact" if preview or result["snapshot_id"] is None else "redacted"
    where = f": snapshot {result['snapshot_id']}{_on(branch)}" if result["snapshot_id"] else ""
    console.print(plain_text(f"{verb} {result['spans']} spans in {result['rows']} rows{where}"))


@click.command("label")
@click.argument("table")
@click.option("--signal", "signal", required=True, help="The signal whose rows to annotate.")
@click.option(
    "--value",
    default=None,
    help="Which of its rows: a facet value (duplicate, member, contaminated, any, a "
    "private-data kind, a language). Default: what `remove` would take.",
)
@click.option("--label", "label_", default=None, help="A label from the table's set.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--preview", is_flag=True, help="Count the rows; annotate nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def label_command(
    table: str,
    signal: str,
    value: str | None,
    label_: str | None,
    tags: tuple[str, ...],
    preview: bool,
    as_json: bool,
) -> None:
    """Label or tag the rows a current signal of TABLE names (one snapshot of its
    annotations table), e.g. every row with a secret."""
    from podium.signals.actions import label_by_signal

    result = label_by_signal(
        table, signal, value=value, label=label_, tags=list(tags) or None, preview=preview
    )
    if as_json:
        typer.echo(neutralise_json(json.dumps(result, indent=2)))
        return
    verb = "would annotate" if result["snapshot_id"] is None else "annotated"
    console.print(
        plain_text(f"{verb} {result['rows']} rows ({result['signal']}={result['value']})")
    )


def click_commands() -> dict[str, click.Command]:
    group = click.Group("signals", help=__doc__, no_args_is_help=True)
    group.add_command(run_command(), "run")
    group.add_command(list_command, "list")
    group.add_command(remove_command, "remove")
    group.add_command(redact_command, "redact")
    group.add_command(label_command, "label")
    from podium.commands.signal_map import coverage_command, similar_command, topics_command

    group.add_command(similar_command, "similar")
    group.add_command(topics_command, "topics")
    group.add_command(coverage_command, "coverage")
    return {"signals": group}
