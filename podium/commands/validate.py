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
from typing import Any

import click
import typer
from rich.table import Table as RichTable

from podium.commands.terminal import neutralise_json, plain_text, printable, safe_console
from podium.validate.failure_text import marked_failure, message_texts
from podium.validate.report import read_report
from podium.validate.rules import RULE_HELP

console = safe_console()
SHOWN_FAILURES = 5


def _normalise(values: dict[str, Any], extra: dict[str, Any]) -> None:
    values["rules"] = [_absolute(spec) for spec in values.get("rules", [])]
    if "roles" in values:  # --roles assistant,tool as well as repeated --roles
        values["roles"] = [r.strip() for item in values["roles"] for r in item.split(",")]
        values["roles"] = [r for r in values["roles"] if r]


def _print_result(config: Any, result: Any, deferred: bool, extra: dict[str, Any]) -> None:
    if deferred:
        return
    summary = result["outputs"]["summary"]
    failures = read_report(summary["report"]).to_pylist()
    if extra["as_json"]:
        shown = json.dumps({"summary": summary, "failures": failures}, ensure_ascii=False, indent=2)
        typer.echo(neutralise_json(shown))
        return
    _print_summary(summary)
    _print_examples(summary, failures[:SHOWN_FAILURES])


def validate_command() -> click.Command:
    """`podium validate TABLE --rule ...`: every ValidateConfig field is an option."""
    from podium.commands.options import job_command

    rule_help = "\n\nRules (--rule, repeatable): " + "; ".join(
        f"{k}: {v}" for k, v in RULE_HELP.items()
    )
    return job_command(
        "validate",
        arguments=("table.name",),
        aliases={"rules": ["-r"], "replicas": ["--nodes"]},  # --nodes: its name before
        extra=[
            click.Option(
                ["--json", "as_json"], is_flag=True, help="Print the summary and failures as JSON."
            ),
        ],
        hook=_normalise,
        done=_print_result,
        queue=False,
        help="Validate every sample of a table snapshot and write a report table. " + rule_help,
    )


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
                counts.add_row(plain_text(rule_name), plain_text(kind), str(n))
        console.print(counts)
    console.print(f"report: {summary['report']}", highlight=False)


def _print_examples(summary: dict[str, Any], failures: list[dict[str, Any]]) -> None:
    texts = message_texts(summary["table"], summary["snapshot_id"], [f["id"] for f in failures])
    for failure in failures:
        where, shown = marked_failure(failure, texts.get(failure["id"], []))
        title = f"{failure['id']} turn {failure['turn']} · {failure['rule']} · {where}"
        console.rule(plain_text(title), align="left")  # ids and rules are data, not markup
        typer.echo(printable(shown))  # plain: rich would wrap long lines and misplace the caret


def click_commands() -> dict[str, click.Command]:
    return {"validate": validate_command()}
