"""`podium validate`: check structured outputs in every row of a table snapshot.

    podium validate demo.json_sft --rule json --rule json-schema --extract fenced
    podium validate ns.calls --rule tool-call:tools.json --json
    podium validate ns.xml --rule xsd:order.xsd --roles assistant,tool --report ns.xml_check
    podium validate ns.code --rule python --card cards/validate-code.md   # write the card only

Runs as a `validate` job (recorded in the logbook), prints counts by rule and error
kind, then the first failures with a caret under the exact position. The report table
(default NS.TABLE__validation) has one row per failing turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.console import Console
from rich.table import Table as RichTable

from podium.store.catalog import full_name, load_table
from podium.store.refs import TableRef
from podium.validate.job import ValidateConfig
from podium.validate.report import read_report
from podium.validate.review import marked_failure, message_texts
from podium.validate.rules import RULE_HELP, parse_rules

console = Console()
SHOWN_FAILURES = 5


def validate(
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to validate.")],
    rule: Annotated[
        list[str],
        typer.Option(
            "--rule",
            "-r",
            help="Repeatable. " + "; ".join(f"{k}: {v}" for k, v in RULE_HELP.items()),
        ),
    ],
    extract: Annotated[
        str, typer.Option(help="whole: the whole message; fenced: its first ``` block.")
    ] = "whole",
    roles: Annotated[str, typer.Option(help="Comma-separated roles to check.")] = "assistant",
    snapshot: Annotated[int | None, typer.Option(help="Snapshot id (default: current).")] = None,
    report: Annotated[
        str | None, typer.Option(help="Report table (default NS.TABLE__validation).")
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Processes; 0 = automatic (see the card field).")
    ] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary and failures as JSON.")
    ] = False,
    card: Annotated[
        Path | None, typer.Option("--card", help="Write the run card to this path and run nothing.")
    ] = None,
) -> None:
    """Validate every sample of a table snapshot and write a report table."""
    from podium.jobs.cards import validate_config
    from podium.jobs.launch import run_or_write_card

    options = {
        "table": TableRef(name=full_name(table), snapshot_id=snapshot),
        "rules": [_absolute(spec) for spec in rule],
        "extract": extract,
        "roles": [r.strip() for r in roles.split(",") if r.strip()],
        "report": report,
        "workers": workers,
    }
    # The same checks as a run card, reported as one clear error.
    config = cast(ValidateConfig, validate_config("validate", options))
    # Unknown rules, missing or invalid schema files fail here, before a job exists.
    parse_rules(config.rules, load_table(config.table.name).properties, config.table.name)
    result = run_or_write_card("validate", config, card)
    if card is not None:
        return
    summary = result["outputs"]["summary"]  # type: ignore[index]
    failures = read_report(summary["report"]).to_pylist()
    if as_json:
        typer.echo(
            json.dumps({"summary": summary, "failures": failures}, ensure_ascii=False, indent=2)
        )
        return
    _print_summary(summary)
    _print_examples(summary, failures[:SHOWN_FAILURES])


def _absolute(spec: str) -> str:
    """File arguments become absolute so the run card works from any directory."""
    name, sep, arg = spec.partition(":")
    if sep and arg and name in ("json-schema", "xsd", "tool-call"):
        return f"{name}:{Path(arg).expanduser().resolve()}"
    return spec


def _print_summary(summary: dict[str, Any]) -> None:
    console.print(
        f"{summary['table']}@{summary['snapshot_id']}: {summary['rows']} rows, "
        f"{summary['turns']} turns checked, {summary['failures']} failing turns in "
        f"{summary['failing_rows']} rows",
        highlight=False,
    )
    if summary["failures"]:
        counts = RichTable("rule", "kind", "count")
        for rule_name, kinds in summary["by_kind"].items():
            for kind, n in kinds.items():
                counts.add_row(rule_name, kind, str(n))
        console.print(counts)
    console.print(f"report: {summary['report']}", highlight=False)


def _print_examples(summary: dict[str, Any], failures: list[dict[str, Any]]) -> None:
    texts = message_texts(summary["table"], summary["snapshot_id"], [f["id"] for f in failures])
    for failure in failures:
        where, shown = marked_failure(failure, texts.get(failure["id"], []))
        console.rule(
            f"{failure['id']} turn {failure['turn']} · {failure['rule']} · {where}", align="left"
        )
        typer.echo(shown)  # plain: rich would wrap long lines and misplace the caret


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
