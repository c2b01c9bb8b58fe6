"""`podium maintain TABLE`: compaction, snapshot expiry and orphan removal, as a job.

    podium maintain team.sft                                  # keep 7 days, grace 1 day
    podium maintain team.sft --retention-days 0 --grace-hours 1 --json
    podium maintain --all                       # every table, then the warehouse's orphans
    podium maintain team.sft --job-pin-days 30  # jobs ended 30+ days ago keep nothing

Prints each table's files and bytes before and after, what each step did, and which
snapshots past the retention jobs or lineage keep (and what they hold on disk).
"""

from __future__ import annotations

import json
from typing import Any

import click
import typer


def _print_result(config: Any, result: Any, deferred: bool, extra: dict[str, Any]) -> None:
    if deferred:
        return
    summary = result["outputs"]["summary"]
    if extra["as_json"]:
        typer.echo(json.dumps(summary, indent=2))
        return
    if "tables" in summary:  # --all
        for name, one in summary["tables"].items():
            typer.echo(f"{name}:")
            _print_table(one)
        for name, why in summary.get("skipped", {}).items():
            typer.echo(f"{name}: skipped, {why}")
        if "warehouse_skipped" in summary:
            typer.echo(f"warehouse: {summary['warehouse_skipped']}")
            return
        o = summary["warehouse_orphans_removed"]
        typer.echo(
            f"warehouse: removed {o['files']} files of no known table ({o['bytes']:,} bytes)"
        )
        return
    _print_table(summary)


def _print_table(summary: dict[str, Any]) -> None:
    before, after = summary["before"], summary["after"]
    for label, key in (
        ("data files", "data_files"),
        ("delete files", "delete_files"),
        ("snapshots", "snapshots"),
        ("files on disk", "files_on_disk"),
        ("bytes on disk", "bytes_on_disk"),
    ):
        typer.echo(f"{label:>14}: {before[key]:>12,} -> {after[key]:>12,}")
    if "compaction" in summary:
        c = summary["compaction"]
        typer.echo(f"compacted {c['files_in']} files into {c['files_out']} ({c['rows']:,} rows)")
    if "expired_snapshots" in summary:
        typer.echo(f"expired {summary['expired_snapshots']} snapshots")
    _print_pinned(summary.get("pinned"))
    if "orphans_removed" in summary:
        o = summary["orphans_removed"]
        typer.echo(f"removed {o['files']} orphan files ({o['bytes']:,} bytes)")


def _print_pinned(pinned: dict[str, Any] | None) -> None:
    """What jobs and lineage keep past the retention, and what it costs on disk."""
    if not pinned or not pinned["snapshots"]:
        return
    typer.echo(
        f"kept {len(pinned['snapshots'])} snapshots past the retention because jobs or "
        f"lineage name them; they hold {pinned['files']} files ({pinned['bytes']:,} bytes) "
        "the head does not, which compaction cannot free:"
    )
    for one in pinned["snapshots"]:
        typer.echo(f"  {one['snapshot_id']}: {', '.join(one['kept_by'])}")
    typer.echo(
        "  (--job-pin-days N: jobs that ended over N days ago stop pinning; "
        "`podium tag` keeps a snapshot for good)"
    )


def maintain_command() -> click.Command:
    from podium.commands.options import job_command

    return job_command(
        "maintain",
        arguments=("table",),
        extra=[
            click.Option(["--json", "as_json"], is_flag=True, help="Print the report as JSON."),
        ],
        done=_print_result,
        queue=False,
        help="Compact a table, expire its old snapshots and remove orphan files (a job).",
    )


def click_commands() -> dict[str, click.Command]:
    return {"maintain": maintain_command()}
