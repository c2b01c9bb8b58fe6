"""Validating a whole table snapshot: the `validate` job kind.

    podium validate demo.json_sft --rule json --rule json-schema --extract fenced

Reads the snapshot in streamed batches, checks the chosen turns of every row with
every rule (over all cores when the table is large), and writes a report table with
one row per failing turn, whose properties pin the validated table and snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
from pydantic import AliasChoices, Field, field_validator

from podium.errors import InvalidInput
from podium.jobs.launchers import LaunchOptions
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name, load_table
from podium.store.catalog.table_name import ReportName
from podium.store.read.plan import plan_snapshot
from podium.store.read.read import iter_table_batches
from podium.store.read.refs import TableRef
from podium.store.read.snapshots import live_rows, resolve_snapshot
from podium.store.schema import PROP_MAPPING
from podium.validate.extract import DEFAULT_EXTRACT, Extract
from podium.validate.parallel import available_cores, map_batches, task_for
from podium.validate.report import (
    PROP_EXTRACT,
    PROP_ROLES,
    PROP_RULES,
    PROP_SUMMARY,
    PROP_VALIDATED_SNAPSHOT,
    PROP_VALIDATED_TABLE,
    failure_batch,
    report_name,
    write_report,
)
from podium.validate.rules import check_spec, parse_rules
from podium.validate.tally import Summary, Tally
from podium.validate.turns import Columns

if TYPE_CHECKING:
    from podium.validate.on_ray import RayValidation

# Worker processes pay off only for rules that cost far more than reading the rows:
# json and json-schema check 100k+ turns/s in-process, faster than the scan feeding
# them, so they stay in one process (measured: benchmarks/validate.py). Below this many
# rows, starting workers costs more than it saves.
PARALLEL_MIN_ROWS = 100_000
HEAVY_RULES = frozenset({"xml", "xsd", "python", "tool-call"})


class ValidateConfig(LaunchOptions):
    """Validate structured outputs in every row of a table snapshot."""

    table: TableRef = Field(description="The table to validate, pinned to a snapshot.")
    rules: list[str] = Field(
        min_length=1,
        description="Rules: json, json-schema[:PATH], xml, xsd:PATH, python, regex:PATTERN, "
        "tool-call[:PATH].",
    )
    extract: Extract = Field(
        DEFAULT_EXTRACT,
        description="auto: the first ``` fenced block when the message has one, else the "
        "whole message (fenced: the same); whole: every character.",
    )
    roles: list[str] = Field(["assistant"], description="Roles of the turns to check.")
    report: ReportName | None = Field(
        None, description="Report table (default NS.TABLE__validation); replaced on each run."
    )
    workers: int = Field(
        0,
        ge=0,
        description="Processes to use; 0 = one per core for tables of 100k+ rows with a "
        "costly rule (xml, xsd, python, tool-call), else one.",
    )
    batch_rows: int = Field(4096, ge=1, description="Rows per batch handed to a process.")
    replicas: int = Field(
        0,
        validation_alias=AliasChoices("replicas", "nodes"),
        ge=0,
        le=1024,
        description="Check the snapshot's data files in Ray tasks spread over up to this many "
        "nodes (0: in the job's own process(es)). The report is committed once either way.",
    )

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, rules: list[str]) -> list[str]:
        return [check_spec(spec) for spec in rules]


def _columns(properties: dict[str, str]) -> Columns:
    raw = properties.get(PROP_MAPPING)
    return Columns.from_mapping(json.loads(raw)) if raw else Columns()


def validate_table(config: ValidateConfig, reporter: Reporter | None = None) -> Summary:
    reporter = reporter or Reporter()
    name = full_name(config.table.name)
    table = load_table(name)
    rules = parse_rules(config.rules, table.properties, name)  # every problem before any work
    sid = resolve_snapshot(table, config.table.snapshot_id)
    columns = _columns(table.properties)
    stored = [f.name for f in table.schema().fields]
    if columns.messages not in stored:
        raise InvalidInput(
            f"Table {name} has no {columns.messages!r} column (columns: {', '.join(stored)}); "
            "validation needs chat messages. Map its columns (podium.mapping) or import it as SFT."
        )
    wanted = [c for c in (columns.id, columns.messages, columns.metadata) if c in stored]
    snapshot = table.snapshot_by_id(sid) if sid is not None else None
    extra = snapshot.summary.additional_properties if snapshot and snapshot.summary else {}
    total = live_rows(extra)
    heavy = any(rule.name in HEAVY_RULES for rule in rules)
    workers = config.workers or (available_cores() if heavy and total >= PARALLEL_MIN_ROWS else 1)
    summary = Summary(name, sid, full_name(config.report or report_name(name)))
    tally = Tally()
    on_ray: list[RayValidation] = []

    def counted(rows: int, turns: int, failures: Tally) -> None:
        summary.rows += rows
        summary.turns += turns
        tally.merge(failures)
        reporter.progress(summary.rows, total, f"{tally.failures} failures")

    def report_batches() -> Iterator[pa.RecordBatch]:
        """Failures straight into the report: memory holds one batch, not the run."""
        if sid is None:
            return
        task = task_for(rules, config.extract, config.roles, columns)
        if config.replicas:
            from podium.validate.on_ray import check_on_ray  # Ray and staging: only here

            reporter.log(f"validating {name}@{sid}: {total} rows, rules {config.rules}, on Ray")
            run = check_on_ray(
                plan_snapshot(table, sid),
                wanted,
                task,
                batch_rows=config.batch_rows,
                nodes=config.replicas,
                report=summary.report,
                reporter=reporter,
                done=lambda group: counted(group.rows, group.turns, group.tally),
            )
            on_ray.append(run)
            yield from run.failures()
            return
        batches = iter_table_batches(table, sid, columns=wanted, batch_size=config.batch_rows)
        reporter.log(
            f"validating {name}@{sid}: {total} rows, rules {config.rules}, {workers} process(es)"
        )
        reporter.progress(0, total, "validating")
        for result in map_batches(batches, task, workers, reporter):
            found = Tally()
            found.add(result.failures)
            counted(result.rows, result.turns, found)
            if result.failures:
                yield failure_batch(result.failures)
        reporter.check_cancelled()

    def final_properties() -> dict[str, str]:
        tally.fill(summary)
        counts = {k: v for k, v in summary.to_dict().items() if k != "report_snapshot_id"}
        return {PROP_SUMMARY: json.dumps(counts)}

    properties = {
        **reporter.lineage,
        PROP_VALIDATED_TABLE: name,
        PROP_VALIDATED_SNAPSHOT: str(sid),
        PROP_RULES: json.dumps(config.rules),
        PROP_EXTRACT: config.extract,
        PROP_ROLES: json.dumps(config.roles),
    }
    try:
        summary.report_snapshot_id = write_report(
            summary.report, report_batches(), properties, final_properties
        )
    finally:
        for run in on_ray:  # committed or not, the staged failures are not needed again
            run.discard()
    reporter.log(
        f"{summary.failures} failing turns in {summary.failing_rows} of {summary.rows} rows; "
        f"report {summary.report}"
    )
    return summary


def run_validate(config: ValidateConfig, reporter: Reporter) -> JobOutputs:
    """The `validate` job: validate, write the report, return it as the output."""
    summary = validate_table(config, reporter)
    ref = summary.report + (f"@{summary.report_snapshot_id}" if summary.report_snapshot_id else "")
    return JobOutputs(tables=[ref], summary=summary.to_dict())
